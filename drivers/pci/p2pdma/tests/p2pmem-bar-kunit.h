/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit suite of the p2pmem-bar driver, included at the end of
 * p2pmem-bar.c under CONFIG_PCI_P2PDMA_KUNIT_TEST.
 *
 * The one refusal userspace cannot provoke is a BAR whose address range
 * somebody else already claimed: here the test claims it, on a real
 * ivshmem-plain device (1af4:1110) that no driver has bound, and binds
 * the driver the way the bind file does. Without such a device (kunit.py,
 * a machine without one) the case is skipped.
 */
#ifndef _P2PMEM_BAR_KUNIT_H
#define _P2PMEM_BAR_KUNIT_H

#include <kunit/test.h>
#include <linux/ioport.h>
#include <linux/kmsg_dump.h>

#define P2PMEM_KUNIT_VENDOR	PCI_VENDOR_ID_REDHAT_QUMRANET
#define P2PMEM_KUNIT_DEVICE	0x1110		/* ivshmem */

/*
 * Is @pdev's memory published, asked as an orchestrator asks: the closest
 * published memory to the device itself is its own. This file builds
 * with the driver, against any core; 7.3's API has no pci_has_p2pmem().
 */
static bool p2pmem_kunit_published(struct pci_dev *pdev)
{
	struct pci_dev *found = pci_p2pmem_find(&pdev->dev);

	pci_dev_put(found);
	return found && found == pdev;
}

/* Does a record logged since @mark contain @what? */
static bool p2pmem_kunit_logged(u64 mark, const char *what)
{
	struct kmsg_dump_iter iter;
	static char line[512];
	bool found = false;
	size_t len;

	kmsg_dump_rewind(&iter);
	iter.cur_seq = max(iter.cur_seq, mark);
	while (!found && kmsg_dump_get_line(&iter, false, line,
					    sizeof(line) - 1, &len)) {
		line[len] = '\0';
		found = !!strstr(line, what);
	}
	return found;
}

static void p2pmem_kunit_put(void *pdev)
{
	pci_dev_put(pdev);
}

struct p2pmem_kunit_claim {
	resource_size_t start, len;
};

static void p2pmem_kunit_release(void *data)
{
	struct p2pmem_kunit_claim *c = data;

	release_mem_region(c->start, c->len);
}

static void p2pmem_kunit_unbind(void *pdev)
{
	struct pci_dev *p = pdev;

	device_release_driver(&p->dev);
	device_set_driver_override(&p->dev, "");
}

/*
 * A BAR somebody else claimed: the probe fails with -EBUSY, says so in one
 * line and leaves nothing registered. Once the claim is gone, the same
 * bind succeeds: the claim was the only thing in the way.
 */
static void p2pmem_bar_claimed_bar_test(struct kunit *test)
{
	struct pci_dev *pdev = NULL;
	struct p2pmem_kunit_claim *claim;
	struct kmsg_dump_iter iter;
	int bar, ret;
	u64 mark;

	while ((pdev = pci_get_device(P2PMEM_KUNIT_VENDOR, P2PMEM_KUNIT_DEVICE,
				      pdev)))
		if (!pdev->dev.driver)
			break;
	if (!pdev)
		kunit_skip(test, "no unbound ivshmem device (1af4:1110)");
	ret = kunit_add_action_or_reset(test, p2pmem_kunit_put, pdev);
	KUNIT_ASSERT_EQ(test, ret, 0);
	bar = p2pmem_bar_auto_bar(pdev);
	KUNIT_ASSERT_GE(test, bar, 0);
	claim = kunit_kzalloc(test, sizeof(*claim), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, claim);
	claim->start = pci_resource_start(pdev, bar);
	claim->len = pci_resource_len(pdev, bar);
	KUNIT_ASSERT_NOT_NULL(test, request_mem_region(claim->start, claim->len,
						       "p2pmem-bar-kunit"));
	ret = kunit_add_action_or_reset(test, p2pmem_kunit_release, claim);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, device_set_driver_override(&pdev->dev, DRV_NAME), 0);
	ret = kunit_add_action_or_reset(test, p2pmem_kunit_unbind, pdev);
	KUNIT_ASSERT_EQ(test, ret, 0);

	kmsg_dump_rewind(&iter);
	mark = iter.next_seq;
	ret = device_driver_attach(&p2pmem_bar_driver.driver, &pdev->dev);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	KUNIT_EXPECT_NULL(test, pdev->dev.driver);
	KUNIT_EXPECT_FALSE(test, p2pmem_kunit_published(pdev));
	KUNIT_EXPECT_TRUE(test, p2pmem_kunit_logged(mark, "is already claimed by another driver"));

	kunit_release_action(test, p2pmem_kunit_release, claim);
	ret = device_driver_attach(&p2pmem_bar_driver.driver, &pdev->dev);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, p2pmem_kunit_published(pdev));
}

static struct kunit_case p2pmem_bar_cases[] = {
	KUNIT_CASE(p2pmem_bar_claimed_bar_test),
	{}
};

static struct kunit_suite p2pmem_bar_suite = {
	.name = "p2pdma-p2pmem-bar",
	.test_cases = p2pmem_bar_cases,
};

kunit_test_suite(p2pmem_bar_suite);

#endif /* _P2PMEM_BAR_KUNIT_H */
