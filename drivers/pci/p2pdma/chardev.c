// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: /dev/p2pmem, the uAPI that exports P2P memory to
 * userspace as a dma-buf.
 *
 * Owns the misc device and its one ioctl, P2PMEM_IOC_EXPORT
 * (include/uapi/linux/p2pmem.h), and the permission model of the uAPI:
 * whoever may open /dev/p2pmem (mode 0600, owner root; udev rules may
 * grant a group) may export from any provider that published its memory
 * (pci_p2pmem_publish(): memory offered for use outside the driver that
 * owns the device). The buffer itself is dmabuf.c's pci_p2pmem_export(),
 * which does not ask for publishing: a provider's own driver may export
 * its memory in the kernel. Documentation/ABI/testing/dev-p2pmem.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/p2pmem.h>

#include "p2pdma.h"

/*
 * May userspace export from @pdev? 0, -ENODEV if it has no P2P memory or
 * its driver is unbinding, -EACCES if it did not publish its memory.
 */
static int p2pmem_exportable(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;
	bool published;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || list_empty(&p2p->regions))
		return -ENODEV;
	/*
	 * Published first: an unbind sets closing before it withdraws the
	 * memory, so an export that finds it withdrawn by the unbind also
	 * finds it closing, and gets -ENODEV like every export it races.
	 */
	published = READ_ONCE(p2p->published);
	smp_rmb();	/* pairs with smp_wmb() in p2p_close_start() */
	if (READ_ONCE(p2p->closing))
		return -ENODEV;
	if (!published)
		return -EACCES;
	return 0;
}

/*
 * The export that P2PMEM_IOC_EXPORT asks for in @req, already copied in:
 * the dma-buf, or an ERR_PTR() with the ioctl's errno. Everything of the
 * ioctl but the copies and the file descriptor, so that KUnit can call it.
 */
VISIBLE_IF_KUNIT struct dma_buf *p2pmem_export_req(const struct p2pmem_export *req)
{
	struct dma_buf *dmabuf;
	struct pci_dev *pdev;
	int ret;

	if (req->flags || req->reserved || !req->size ||
	    !PAGE_ALIGNED(req->size))
		return ERR_PTR(-EINVAL);
	if (req->domain > INT_MAX || req->bus > 0xff || req->devfn > 0xff)
		return ERR_PTR(-ENODEV);
	pdev = pci_get_domain_bus_and_slot(req->domain, req->bus, req->devfn);
	if (!pdev) {
		pr_debug("%s: export: no PCI function %04x:%02x:%02x.%u\n",
			 current->comm, req->domain, req->bus,
			 PCI_SLOT(req->devfn), PCI_FUNC(req->devfn));
		return ERR_PTR(-ENODEV);
	}
	ret = p2pmem_exportable(pdev);
	if (ret) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: export refused: %s\n",
				     current->comm, ret == -EACCES ?
				     "its P2P memory is not published" :
				     "no P2P memory, or unbinding");
		dmabuf = ERR_PTR(ret);
	} else {
		dmabuf = pci_p2pmem_export(pdev, req->size, 0);
		if (PTR_ERR_OR_ZERO(dmabuf) == -ENOMEM)
			pci_info_ratelimited(pdev, "P2PDMA: %s: export: no %llu bytes of contiguous P2P memory free\n",
					     current->comm, req->size);
	}
	pci_dev_put(pdev);
	return dmabuf;
}

static long p2pmem_export_ioctl(struct p2pmem_export __user *uarg)
{
	struct p2pmem_export req;
	struct dma_buf *dmabuf;
	int fd;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	/* First the descriptor: without one, no memory is taken or cleared. */
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	dmabuf = p2pmem_export_req(&req);
	if (IS_ERR(dmabuf)) {
		put_unused_fd(fd);
		return PTR_ERR(dmabuf);
	}
	/* The descriptor goes live only once userspace can learn it. */
	if (put_user(fd, &uarg->fd)) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	fd_install(fd, dmabuf->file);
	return 0;
}

static long p2pmem_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	switch (cmd) {
	case P2PMEM_IOC_EXPORT:
		return p2pmem_export_ioctl((struct p2pmem_export __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations p2pmem_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = p2pmem_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice p2pmem_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "p2pmem",
	.fops = &p2pmem_fops,
	.mode = 0600,
};

static int __init p2pmem_chardev_init(void)
{
	return misc_register(&p2pmem_misc);
}
device_initcall(p2pmem_chardev_init);
