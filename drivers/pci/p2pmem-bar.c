// SPDX-License-Identifier: GPL-2.0
/*
 * p2pmem-bar: offer a memory BAR of any PCI device as P2P memory.
 *
 * The driver has no device ID table: an administrator binds it to a device
 * whose BAR is plain memory (a RAM-backed BAR, a memory card, an emulated
 * ivshmem device) with
 *
 *   echo p2pmem-bar > /sys/bus/pci/devices/<bdf>/driver_override
 *   echo <bdf> > /sys/bus/pci/drivers_probe
 *
 * or with the driver's new_id file. Probe registers the BAR (or a range of
 * it) with pci_p2pdma_add_resource() and publishes it, so that it shows up
 * in /sys/bus/pci/devices/<bdf>/p2pmem/ and orchestrators can choose it.
 * Which BAR and range is read from the module parameters at each probe
 * (p2pmem_bar.bar=, .offset=, .size=, .publish= on the kernel command line,
 * or /sys/module/p2pmem_bar/parameters/ at run time).
 *
 * Everything is device-managed: on unbind the P2PDMA core revokes the
 * userspace mappings, waits for in-kernel users and removes the pages, and
 * the BAR region and the device are released.
 *
 * Not "p2pmem_pci": that is the name of Eideticom's long-standing
 * out-of-tree module (a character device per provider, its own device ID
 * table and parameters), which users still load; one kernel cannot have
 * two modules of one name, and this driver is not a superset of that one.
 */
#include <linux/kernel.h>
#include <linux/memremap.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/sysfs.h>

#define DRV_NAME	"p2pmem-bar"

static int param_bar = -1;
module_param_named(bar, param_bar, int, 0644);
MODULE_PARM_DESC(bar, "BAR to register (0-5); -1 (default): the largest 64-bit prefetchable memory BAR");

static unsigned long long param_offset;
module_param_named(offset, param_offset, ullong, 0644);
MODULE_PARM_DESC(offset, "byte offset of the range within the BAR (default 0)");

static unsigned long long param_size;
module_param_named(size, param_size, ullong, 0644);
MODULE_PARM_DESC(size, "bytes to register; 0 (default): from offset to the end of the BAR");

static bool param_publish = true;
module_param_named(publish, param_publish, bool, 0644);
MODULE_PARM_DESC(publish, "offer the memory to other drivers (default Y)");

/* What one bound device registered. */
struct p2pmem_bar {
	struct pci_dev *pdev;
	int bar;
	u64 offset;
	u64 size;
	bool published;
};

/* The largest BAR that is memory, 64-bit and prefetchable, or -1. */
static int p2pmem_bar_auto_bar(struct pci_dev *pdev)
{
	const unsigned long want = IORESOURCE_MEM | IORESOURCE_MEM_64 | IORESOURCE_PREFETCH;
	int i, best = -1;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		if ((pci_resource_flags(pdev, i) & want) != want ||
		    !pci_resource_len(pdev, i))
			continue;
		if (best < 0 || pci_resource_len(pdev, i) > pci_resource_len(pdev, best))
			best = i;
	}
	return best;
}

/*
 * Check the BAR and range the parameters ask for, so that a refusal names
 * the parameter to change; fills @p on success.
 */
static int p2pmem_bar_choose(struct pci_dev *pdev, struct p2pmem_bar *p,
			     int bar, u64 offset, u64 size)
{
	unsigned long align = memremap_compat_align();
	resource_size_t len, start;
	unsigned long flags;

	if (bar == -1) {
		bar = p2pmem_bar_auto_bar(pdev);
		if (bar < 0) {
			pci_info(pdev, "no 64-bit prefetchable memory BAR; choose one with p2pmem_bar.bar=\n");
			return -ENODEV;
		}
	} else if (bar < 0 || bar >= PCI_STD_NUM_BARS) {
		pci_err(pdev, "p2pmem_bar.bar=%d is not a BAR index (0-%d, or -1 for the largest 64-bit prefetchable one)\n",
			bar, PCI_STD_NUM_BARS - 1);
		return -EINVAL;
	}

	flags = pci_resource_flags(pdev, bar);
	len = pci_resource_len(pdev, bar);
	if (!len) {
		pci_err(pdev, "BAR %d is not implemented (p2pmem_bar.bar=)\n", bar);
		return -EINVAL;
	}
	if (!(flags & IORESOURCE_MEM)) {
		pci_err(pdev, "BAR %d is not a memory BAR (p2pmem_bar.bar=)\n", bar);
		return -EINVAL;
	}
	if (flags & IORESOURCE_UNSET) {
		pci_err(pdev, "BAR %d has no address assigned\n", bar);
		return -EINVAL;
	}
	if (len < align) {
		pci_err(pdev, "BAR %d is %llu bytes, smaller than the %lu bytes P2P memory needs (p2pmem_bar.bar=)\n",
			bar, (u64)len, align);
		return -EINVAL;
	}
	if (offset >= len) {
		pci_err(pdev, "p2pmem_bar.offset=%#llx is outside BAR %d (%#llx bytes)\n",
			offset, bar, (u64)len);
		return -EINVAL;
	}
	if (!size)
		size = len - offset;
	if (size > len - offset) {
		pci_err(pdev, "p2pmem_bar.size=%#llx at offset %#llx does not fit in BAR %d (%#llx bytes)\n",
			size, offset, bar, (u64)len);
		return -EINVAL;
	}
	start = pci_resource_start(pdev, bar) + offset;
	if (!IS_ALIGNED(start, align)) {
		pci_err(pdev, "BAR %d at p2pmem_bar.offset=%#llx starts at %pa, not aligned to %#lx\n",
			bar, offset, &start, align);
		return -EINVAL;
	}
	if (!IS_ALIGNED(size, align)) {
		pci_err(pdev, "%#llx bytes of BAR %d is not a multiple of %#lx (p2pmem_bar.size=)\n",
			size, bar, align);
		return -EINVAL;
	}

	p->bar = bar;
	p->offset = offset;
	p->size = size;
	return 0;
}

static int p2pmem_bar_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	/* One snapshot of the parameters, which may change at any time. */
	u64 offset = READ_ONCE(param_offset), size = READ_ONCE(param_size);
	bool publish = READ_ONCE(param_publish);
	int bar = READ_ONCE(param_bar);
	struct p2pmem_bar *p;
	int ret;

	p = devm_kzalloc(&pdev->dev, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->pdev = pdev;

	ret = p2pmem_bar_choose(pdev, p, bar, offset, size);
	if (ret)
		return ret;

	ret = pcim_enable_device(pdev);
	if (ret) {
		pci_err(pdev, "cannot enable the device: %d\n", ret);
		return ret;
	}
	ret = pcim_request_region(pdev, p->bar, DRV_NAME);
	if (ret) {
		pci_err(pdev, "BAR %d is already claimed by another driver\n", p->bar);
		return -EBUSY;
	}
	ret = pci_p2pdma_add_resource(pdev, p->bar, p->size, p->offset);
	if (ret) {
		pci_err(pdev, "registering %#llx bytes of BAR %d at offset %#llx failed: %d\n",
			p->size, p->bar, p->offset, ret);
		return ret;
	}
	pci_p2pmem_publish(pdev, publish);
	p->published = publish;
	pci_set_drvdata(pdev, p);

	pci_info(pdev, "%llu MiB of BAR %d at offset %#llx registered as P2P memory, %s\n",
		 p->size >> 20, p->bar, p->offset,
		 publish ? "published" : "not published");
	return 0;
}

/* bar, offset and size: the region this device registered at probe. */
static ssize_t region_show(struct device *dev, struct device_attribute *attr,
			   char *buf);
static struct device_attribute dev_attr_bar =
	__ATTR(bar, 0444, region_show, NULL);
static struct device_attribute dev_attr_offset =
	__ATTR(offset, 0444, region_show, NULL);
static struct device_attribute dev_attr_size =
	__ATTR(size, 0444, region_show, NULL);

static ssize_t region_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct p2pmem_bar *p = dev_get_drvdata(dev);

	if (attr == &dev_attr_bar)
		return sysfs_emit(buf, "%d\n", p->bar);
	return sysfs_emit(buf, "%llu\n",
			  attr == &dev_attr_offset ? p->offset : p->size);
}

static ssize_t publish_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct p2pmem_bar *p = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(p->published));
}

static ssize_t publish_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	struct p2pmem_bar *p = dev_get_drvdata(dev);
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 10, &val);
	if (ret || val > 1)
		return -EINVAL;
	pci_p2pmem_publish(p->pdev, val);
	WRITE_ONCE(p->published, val);
	return count;
}
static DEVICE_ATTR_RW(publish);

static struct attribute *p2pmem_bar_attrs[] = {
	&dev_attr_bar.attr,
	&dev_attr_offset.attr,
	&dev_attr_size.attr,
	&dev_attr_publish.attr,
	NULL
};

static const struct attribute_group p2pmem_bar_group = {
	.name = "p2pmem_bar",
	.attrs = p2pmem_bar_attrs,
};
__ATTRIBUTE_GROUPS(p2pmem_bar);

static struct pci_driver p2pmem_bar_driver = {
	.name = DRV_NAME,
	.id_table = NULL,	/* bound by driver_override or new_id only */
	.probe = p2pmem_bar_probe,
	.dev_groups = p2pmem_bar_groups,
};
module_pci_driver(p2pmem_bar_driver);

MODULE_DESCRIPTION("Offer a memory BAR of any PCI device as P2P DMA memory");
MODULE_LICENSE("GPL");

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "p2pdma/tests/p2pmem-bar-kunit.h"
#endif
