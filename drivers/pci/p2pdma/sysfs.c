// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: sysfs.
 *
 * Owns /sys/bus/pci/devices/.../p2pmem/ (Documentation/ABI/testing/
 * sysfs-bus-pci): size, available and published, and the "allocate"
 * file, whose mmap() hands userspace fresh P2P memory, cleared, for
 * O_DIRECT I/O (mmap.c).
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/sysfs.h>

#include "../pci.h"
#include "p2pdma.h"

static size_t p2p_size(struct pci_p2pdma *p2p)
{
	return gen_pool_size(p2p->pool);
}

static ssize_t p2p_pool_show(struct device *dev, char *buf,
			     size_t (*measure)(struct pci_p2pdma *))
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(to_pci_dev(dev)->p2pdma);
	return sysfs_emit(buf, "%zu\n", p2p ? measure(p2p) : 0);
}

static ssize_t size_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return p2p_pool_show(dev, buf, p2p_size);
}
static DEVICE_ATTR_RO(size);

static ssize_t available_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return p2p_pool_show(dev, buf, p2p_available);
}
static DEVICE_ATTR_RO(available);

static ssize_t published_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", pci_has_p2pmem(to_pci_dev(dev)));
}
static DEVICE_ATTR_RO(published);

/* An mmap() of "allocate" gets fresh P2P memory: see mmap.c. */
static int p2pmem_allocate_mmap(struct file *filp,
				struct kobject *kobj,
				const struct bin_attribute *attr,
				struct vm_area_struct *vma)
{
	return p2p_mapping_mmap(to_pci_dev(kobj_to_dev(kobj)), vma);
}

/*
 * Mode 0660, owner root, 1 TiB long: the 6.12 ABI of p2pmem/allocate. The
 * size means nothing (there is no read or write), but stat() reports it,
 * and some mmap() wrappers refuse a length beyond it (Python's mmap).
 */
static const struct bin_attribute p2pmem_allocate_attr = {
	.attr = { .name = "allocate", .mode = 0660 },
	.size = SZ_1T,
	.mmap = p2pmem_allocate_mmap,
};

const struct attribute_group p2pmem_group = {
	.name = "p2pmem",
	.attrs = (struct attribute *[]) {
		&dev_attr_size.attr, &dev_attr_available.attr,
		&dev_attr_published.attr, NULL
	},
	.bin_attrs = (const struct bin_attribute *const []) {
		&p2pmem_allocate_attr, NULL
	},
};

