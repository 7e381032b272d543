// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: configfs helpers.
 *
 * Owns the parsing and formatting of the "use P2P memory" setting that
 * nvmet's configfs namespace attribute "p2pmem" stores: a PCI device name
 * or a boolean.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/ctype.h>
#include <linux/kstrtox.h>
#include <linux/string.h>

#include "../pci.h"
#include "p2pdma.h"

/**
 * pci_p2pdma_enable_store() - parse a configfs "use P2P memory" setting
 * @page: the text written, NUL-terminated (configfs passes the user's write
 *	as is, usually with a trailing newline). First it is looked up as
 *	the name of a PCI device that published P2P memory ("0000:01:00.0";
 *	one trailing newline is ignored, nothing else is). Otherwise it is
 *	read as a boolean by the rules of kstrtobool(), which looks only at
 *	the first byte, or the first two for "on"/"of": "1", "y", "Y", "t",
 *	"T", "on" in any case are true; "0", "n", "N", "f", "F", "of(f)" in
 *	any case are false; whatever follows is ignored ("yess", "nope",
 *	"f00", and a string of any length). The exception is a leading
 *	digit: "0" or "1" counts only if the next byte is a control
 *	character (the end of the string, "\n", "\t", "\r", ...), so "10",
 *	"01", "1 " and "0000:ff:1f.7" (no such device) are refused.
 * @p2p_dev: set to the named device, with a reference the caller drops
 *	with pci_dev_put(); left as it is for a boolean or on error
 * @use_p2pdma: set to whether P2P memory is to be used (true for a device
 *	name); left as it is on error
 *
 * The device name is tried first, so a device name is never read as a
 * boolean. A boolean true means "any suitable provider" (the caller then
 * uses pci_p2pmem_find()); the caller initialises @p2p_dev to NULL to get
 * NULL in that case.
 *
 * Context: process context; may sleep.
 *
 * Return: 0 on success, or -ENODEV, logging one line that says why, when
 * @page:
 *
 * * names a PCI device that has not published P2P memory (none
 *   registered, or not published with pci_p2pmem_publish()), or
 * * starts with a digit followed by a byte that is not a control
 *   character (a longer number, or the name of a PCI device that does not
 *   exist), or
 * * is neither a PCI device name nor a boolean (including an empty string,
 *   a lone newline, and leading blanks).
 */
int pci_p2pdma_enable_store(const char *page, struct pci_dev **p2p_dev,
			    bool *use_p2pdma)
{
	int shown = min_t(size_t, strcspn(page, "\n"), 64);
	struct device *dev;
	bool val;

	dev = bus_find_device_by_name(&pci_bus_type, NULL, page);
	if (dev) {
		struct pci_dev *pdev = to_pci_dev(dev);

		if (!pci_has_p2pmem(pdev)) {
			pr_err("p2pmem: PCI device %s has no published peer-to-peer memory\n",
			       pci_name(pdev));
			pci_dev_put(pdev);
			return -ENODEV;
		}
		*p2p_dev = pdev;
		*use_p2pdma = true;
		return 0;
	}

	/*
	 * kstrtobool() would read "10", "1 " or "0000:ff:1f.7" (a device that
	 * does not exist) by their first byte. A digit must stand alone: the
	 * next byte (readable, @page is NUL-terminated) must be a control
	 * character such as the NUL or a newline.
	 */
	if (isdigit(page[0]) && !iscntrl(page[1])) {
		pr_err("p2pmem: '%.*s' is no PCI device, and a 0 or 1 must stand alone\n",
		       shown, page);
		return -ENODEV;
	}
	if (kstrtobool(page, &val)) {
		pr_err("p2pmem: '%.*s' is neither a PCI device nor a boolean\n",
		       shown, page);
		return -ENODEV;
	}
	*use_p2pdma = val;
	return 0;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_enable_store);

/**
 * pci_p2pdma_enable_show() - format a configfs "use P2P memory" setting
 * @page: the configfs page buffer (PAGE_SIZE bytes)
 * @p2p_dev: the chosen provider, or NULL for "any suitable provider"
 * @use_p2pdma: whether P2P memory is used at all
 *
 * Context: any; does not sleep.
 *
 * Return: the number of bytes written (never more than PAGE_SIZE): "0\n"
 * when P2P memory is not used, the provider's PCI name and a newline when
 * one was chosen, "1\n" otherwise.
 */
ssize_t pci_p2pdma_enable_show(char *page, struct pci_dev *p2p_dev,
			       bool use_p2pdma)
{
	const char *val = "0";

	if (use_p2pdma)
		val = p2p_dev ? pci_name(p2p_dev) : "1";
	return scnprintf(page, PAGE_SIZE, "%s\n", val);
}
EXPORT_SYMBOL_GPL(pci_p2pdma_enable_show);

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/configfs-kunit.h"
#endif
