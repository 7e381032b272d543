// SPDX-License-Identifier: GPL-2.0
/*
 * P2PDMA test importer: a dma-buf importer for the guest tests of the
 * dma-buf exporter (dmabuf.c), built only into test kernels
 * (CONFIG_PCI_P2PDMA_TEST_IMPORTER).
 *
 * Owns /sys/kernel/debug/p2pdma-importer/ctl and its ioctls
 * (p2pdma_importer.h, a test-only interface): attach to a dma-buf (one
 * from /dev/p2pmem, or vfio-pci's of a BAR) for a named PCI function as
 * a dynamic importer, map
 * and report each DMA segment, count invalidations, have a block
 * device read into the buffer, read the buffer's bytes with the CPU,
 * have a QEMU edu device DMA with the mapping's own DMA addresses,
 * detach. It is a well-behaved importer: invalidate_mappings unmaps at
 * once, under the reservation lock it is called with;
 * P2PIMP_ATTACH_BUGGY makes one that ignores it, P2PIMP_ATTACH_NO_P2P one
 * that does not accept peer-to-peer memory, and P2PIMP_ATTACH_PINNED one
 * that has no invalidate_mappings and pins as it attaches (RDMA's
 * ib_umem_dmabuf_get_pinned()), which cannot be revoked.
 *
 * Test-only shortcuts: the block I/O and the CPU reads use the struct pages
 * behind the importer's sg_table (a real importer only uses its DMA
 * addresses), and they are refused once move_notify was called, since the
 * memory may then be gone, and where there are no pages (-EINVAL).
 */

#define pr_fmt(fmt) "p2pdma-importer: " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/iommu.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "edu.h"
#include "p2pdma_importer.h"

MODULE_IMPORT_NS("DMA_BUF");

#define IMP_MAX		8		/* attachments per open file */
#define IMP_READ_MAX	SZ_1M

struct imp {
	struct dma_buf *dmabuf;		/* referenced until detach */
	struct pci_dev *pdev;		/* the importer's device, referenced */
	struct dma_buf_attachment *attach;
	enum dma_data_direction dir;	/* of the mapping */
	void __iomem *edu;		/* BAR 0 of an edu device, or NULL */
	/* Under the dma-buf's reservation lock: */
	struct sg_table *sgt;		/* the importer's mapping, or NULL */
	unsigned int moves;		/* move_notify calls */
	u64 moved_ns;			/* ktime_get_ns() of the first one */
	bool buggy;			/* ignores move_notify */
	bool pinned;			/* dma_buf_pin() succeeded */
};

struct imp_file {
	struct mutex lock;		/* serialises the ioctls */
	struct imp *imps[IMP_MAX];
};

/* Called by dma_buf_invalidate_mappings() with the reservation lock held. */
static void imp_invalidate(struct dma_buf_attachment *attach)
{
	struct imp *imp = attach->importer_priv;

	if (!imp->moves++)
		imp->moved_ns = ktime_get_ns();
	if (imp->buggy || !imp->sgt)
		return;
	dma_buf_unmap_attachment(attach, imp->sgt, imp->dir);
	imp->sgt = NULL;
}

static const struct dma_buf_attach_ops imp_ops = {
	.allow_peer2peer = true,
	.invalidate_mappings = imp_invalidate,
};

static const struct dma_buf_attach_ops imp_ops_no_p2p = {
	.allow_peer2peer = false,
	.invalidate_mappings = imp_invalidate,
};

/* Not revocable (dma_buf_attach_revocable() is false). */
static const struct dma_buf_attach_ops imp_ops_pinned = {
	.allow_peer2peer = true,
};

/* The page of @sg: dma-buf scrambles it with CONFIG_DMABUF_DEBUG. */
static struct page *imp_sg_page(struct scatterlist *sg)
{
	struct scatterlist s = *sg;

	if (IS_ENABLED(CONFIG_DMABUF_DEBUG))
		s.page_link ^= ~0xffUL;
	return sg_page(&s);
}

static struct pci_dev *imp_pci_get(u32 domain, u32 bus, u32 devfn)
{
	if (bus > 0xff || devfn > 0xff)
		return NULL;
	return pci_get_domain_bus_and_slot(domain, bus, devfn);
}

/*
 * An edu device DMAs as the importer's device: enable it with a 64-bit
 * DMA mask before anything is mapped for it (its registers in BAR 0).
 */
static int imp_edu_enable(struct imp *imp)
{
	struct pci_dev *pdev = imp->pdev;
	int ret;

	if (pdev->vendor != EDU_VENDOR || pdev->device != EDU_DEVICE)
		return 0;
	ret = pci_enable_device(pdev);
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (!ret) {
		imp->edu = pci_iomap(pdev, 0, 0);
		if (!imp->edu)
			ret = -ENOMEM;
	}
	if (ret) {
		pci_disable_device(pdev);
		return ret;
	}
	pci_set_master(pdev);
	return 0;
}

static void imp_edu_disable(struct imp *imp)
{
	if (!imp->edu)
		return;
	pci_clear_master(imp->pdev);
	pci_iounmap(imp->pdev, imp->edu);
	pci_disable_device(imp->pdev);
}

static long imp_attach(struct imp_file *f, void __user *uarg)
{
	const struct dma_buf_attach_ops *ops = &imp_ops;
	struct p2pimp_attach arg;
	struct imp *imp;
	int slot, ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~(P2PIMP_ATTACH_NO_P2P | P2PIMP_ATTACH_BUGGY |
			  P2PIMP_ATTACH_TO_DEVICE | P2PIMP_ATTACH_PINNED))
		return -EINVAL;
	if (arg.flags & P2PIMP_ATTACH_NO_P2P)
		ops = &imp_ops_no_p2p;
	else if (arg.flags & P2PIMP_ATTACH_PINNED)
		ops = &imp_ops_pinned;
	for (slot = 0; slot < IMP_MAX && f->imps[slot]; slot++)
		;
	if (slot == IMP_MAX)
		return -ENOSPC;
	imp = kzalloc_obj(*imp, GFP_KERNEL);
	if (!imp)
		return -ENOMEM;
	imp->buggy = arg.flags & (P2PIMP_ATTACH_BUGGY | P2PIMP_ATTACH_PINNED);
	imp->dir = arg.flags & P2PIMP_ATTACH_TO_DEVICE ? DMA_TO_DEVICE :
		   DMA_BIDIRECTIONAL;
	imp->dmabuf = dma_buf_get(arg.fd);
	if (IS_ERR(imp->dmabuf)) {
		ret = PTR_ERR(imp->dmabuf);
		goto out_free;
	}
	imp->pdev = imp_pci_get(arg.domain, arg.bus, arg.devfn);
	ret = -ENODEV;
	if (!imp->pdev)
		goto out_put;
	ret = imp_edu_enable(imp);
	if (ret)
		goto out_pdev;
	imp->attach = dma_buf_dynamic_attach(imp->dmabuf, &imp->pdev->dev,
					     ops, imp);
	if (IS_ERR(imp->attach)) {
		ret = PTR_ERR(imp->attach);
		goto out_edu;
	}
	if (arg.flags & P2PIMP_ATTACH_PINNED) {
		dma_resv_lock(imp->dmabuf->resv, NULL);
		ret = dma_buf_pin(imp->attach);
		dma_resv_unlock(imp->dmabuf->resv);
		if (ret)
			goto out_detach;
		imp->pinned = true;
	}
	arg.handle = slot;
	if (copy_to_user(uarg, &arg, sizeof(arg))) {
		ret = -EFAULT;
		goto out_detach;
	}
	f->imps[slot] = imp;
	return 0;

out_detach:
	if (imp->pinned) {
		dma_resv_lock(imp->dmabuf->resv, NULL);
		dma_buf_unpin(imp->attach);
		dma_resv_unlock(imp->dmabuf->resv);
	}
	dma_buf_detach(imp->dmabuf, imp->attach);
out_edu:
	imp_edu_disable(imp);
out_pdev:
	pci_dev_put(imp->pdev);
out_put:
	dma_buf_put(imp->dmabuf);
out_free:
	kfree(imp);
	return ret;
}

static struct imp *imp_get(struct imp_file *f, u32 handle)
{
	return handle < IMP_MAX ? f->imps[handle] : NULL;
}

static long imp_map(struct imp_file *f, void __user *uarg)
{
	struct p2pimp_map *arg;
	struct scatterlist *sg;
	struct sg_table *sgt;
	struct imp *imp;
	long ret = 0;
	int i;

	arg = kzalloc_obj(*arg, GFP_KERNEL);
	if (!arg)
		return -ENOMEM;
	if (copy_from_user(arg, uarg, sizeof(*arg))) {
		ret = -EFAULT;
		goto out;
	}
	imp = imp_get(f, arg->handle);
	if (!imp) {
		ret = -EINVAL;
		goto out;
	}
	dma_resv_lock(imp->dmabuf->resv, NULL);
	if (imp->sgt) {
		ret = -EBUSY;
		goto out_unlock;
	}
	sgt = dma_buf_map_attachment(imp->attach, imp->dir);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_unlock;
	}
	imp->sgt = sgt;
	arg->nents = sgt->nents;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (i == P2PIMP_MAX_SEGS)
			break;
		arg->segs[i].dma = sg_dma_address(sg);
		arg->segs[i].len = sg_dma_len(sg);
		arg->segs[i].bus = sg_dma_is_bus_address(sg);
	}
	/*
	 * CPU addresses: of the pages, which an IOMMU may merge differently;
	 * none where the table has no CPU list (vfio-pci's BAR: orig_nents 0)
	 * or no pages.
	 */
	for_each_sgtable_sg(sgt, sg, i) {
		struct page *page = imp_sg_page(sg);

		if (i == P2PIMP_MAX_SEGS)
			break;
		arg->segs[i].phys = page ? page_to_phys(page) + sg->offset : 0;
	}
out_unlock:
	dma_resv_unlock(imp->dmabuf->resv);
	/* Not under the reservation lock: a fault takes mmap_lock. */
	if (!ret && copy_to_user(uarg, arg, sizeof(*arg)))
		ret = -EFAULT;
out:
	kfree(arg);
	return ret;
}

static long imp_status(struct imp_file *f, void __user *uarg)
{
	struct p2pimp_status arg;
	struct imp *imp;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	imp = imp_get(f, arg.handle);
	if (!imp)
		return -EINVAL;
	dma_resv_lock(imp->dmabuf->resv, NULL);
	arg.moves = imp->moves;
	arg.mapped = !!imp->sgt;
	arg.moved_ns = imp->moved_ns;
	dma_resv_unlock(imp->dmabuf->resv);
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/*
 * With the reservation lock held: the pages of @imp's mapping at
 * [@offset, @offset + @len) as one physically contiguous range (the
 * exporter hands out contiguous memory), or NULL, also where the
 * mapping has no pages (vfio-pci's BAR).
 */
static struct page *imp_pages(struct imp *imp, u64 offset, u64 len)
{
	struct scatterlist *sg;
	struct page *first;

	if (!imp->sgt || imp->moves)
		return NULL;
	if (!len || offset > imp->dmabuf->size ||
	    len > imp->dmabuf->size - offset)
		return NULL;
	sg = imp->sgt->sgl;
	first = imp_sg_page(sg);
	if (!first)
		return NULL;
	return pfn_to_page(page_to_pfn(first) + (offset >> PAGE_SHIFT));
}

static long imp_io(struct imp_file *f, void __user *uarg)
{
	struct file *bdev_file;
	struct p2pimp_io arg;
	struct page *page;
	struct bio *bio;
	struct imp *imp;
	u32 off, done, n;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	arg.path[sizeof(arg.path) - 1] = '\0';
	imp = imp_get(f, arg.handle);
	off = offset_in_page(arg.offset);
	if (!imp || (arg.offset | arg.len) & (SECTOR_SIZE - 1) ||
	    DIV_ROUND_UP(off + (u64)arg.len, PAGE_SIZE) > BIO_MAX_VECS)
		return -EINVAL;
	bdev_file = bdev_file_open_by_path(arg.path, BLK_OPEN_READ, NULL, NULL);
	if (IS_ERR(bdev_file))
		return PTR_ERR(bdev_file);

	/* Held through the I/O: a revocation waits for it to finish. */
	dma_resv_lock(imp->dmabuf->resv, NULL);
	page = imp_pages(imp, arg.offset, arg.len);
	ret = imp->sgt && !imp->moves ? -EINVAL : -ENODEV;
	if (!page)
		goto out_unlock;
	bio = bio_alloc(file_bdev(bdev_file), BIO_MAX_VECS, REQ_OP_READ,
			GFP_KERNEL);
	bio->bi_iter.bi_sector = arg.sector;
	for (done = 0; done < arg.len; done += n, off = 0) {
		n = min_t(u32, PAGE_SIZE - off, arg.len - done);
		if (bio_add_page(bio, page, n, off) != n) {
			ret = -EIO;
			goto out_bio;
		}
		page = pfn_to_page(page_to_pfn(page) + 1);
	}
	ret = submit_bio_wait(bio);
out_bio:
	bio_put(bio);
out_unlock:
	dma_resv_unlock(imp->dmabuf->resv);
	fput(bdev_file);
	return ret;
}

static long imp_read(struct imp_file *f, void __user *uarg)
{
	struct p2pimp_read arg;
	struct page *page;
	struct imp *imp;
	void *bounce;
	int ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	imp = imp_get(f, arg.handle);
	if (!imp || arg.len > IMP_READ_MAX)
		return -EINVAL;
	bounce = kvmalloc(arg.len, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	dma_resv_lock(imp->dmabuf->resv, NULL);
	page = imp_pages(imp, arg.offset, arg.len);
	if (page)
		memcpy(bounce, page_address(page) + offset_in_page(arg.offset),
		       arg.len);
	else
		ret = imp->sgt && !imp->moves ? -EINVAL : -ENODEV;
	dma_resv_unlock(imp->dmabuf->resv);
	if (!ret && copy_to_user(u64_to_user_ptr(arg.data), bounce, arg.len))
		ret = -EFAULT;
	kvfree(bounce);
	return ret;
}

/* The DMA address of @len bytes at @offset, in one segment of @sgt. */
static int imp_dma_addr(struct sg_table *sgt, u64 offset, u32 len,
			dma_addr_t *dma)
{
	struct scatterlist *sg;
	u64 pos = 0;
	int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (offset < pos + sg_dma_len(sg)) {
			if (offset + len > pos + sg_dma_len(sg))
				return -EINVAL;
			*dma = sg_dma_address(sg) + (offset - pos);
			return 0;
		}
		pos += sg_dma_len(sg);
	}
	return -EINVAL;
}

static long imp_edu(struct imp_file *f, void __user *uarg)
{
	struct p2pimp_edu arg;
	struct imp *imp;
	dma_addr_t dma;
	long ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	imp = imp_get(f, arg.handle);
	if (!imp || !imp->edu || !arg.len || arg.len > EDU_BUF_LEN ||
	    arg.to_buffer > 1 || arg.pad)
		return -EINVAL;
	dma_resv_lock(imp->dmabuf->resv, NULL);
	ret = -ENODEV;
	if (!imp->sgt || imp->moves)
		goto out_unlock;
	ret = imp_dma_addr(imp->sgt, arg.offset, arg.len, &dma);
	if (ret)
		goto out_unlock;
	ret = edu_dma(imp->edu, arg.to_buffer ? EDU_BUF : dma,
		      arg.to_buffer ? dma : EDU_BUF, arg.len, arg.to_buffer);
	arg.dma = dma;
out_unlock:
	dma_resv_unlock(imp->dmabuf->resv);
	if (!ret && copy_to_user(uarg, &arg, sizeof(arg)))
		ret = -EFAULT;
	return ret;
}

static void imp_detach(struct imp *imp)
{
	dma_resv_lock(imp->dmabuf->resv, NULL);
	if (imp->sgt)
		dma_buf_unmap_attachment(imp->attach, imp->sgt, imp->dir);
	imp->sgt = NULL;
	if (imp->pinned)
		dma_buf_unpin(imp->attach);
	dma_resv_unlock(imp->dmabuf->resv);
	dma_buf_detach(imp->dmabuf, imp->attach);
	imp_edu_disable(imp);
	pci_dev_put(imp->pdev);
	dma_buf_put(imp->dmabuf);
	kfree(imp);
}

/*
 * What an IOVA of a function translates to now: after an unmap, nothing
 * (the exporter's unmap_dma_buf must have undone its dma_map_sgtable()).
 */
static long imp_iova(void __user *uarg)
{
	struct iommu_domain *dom;
	struct p2pimp_iova arg;
	struct pci_dev *pdev;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.pad)
		return -EINVAL;
	pdev = imp_pci_get(arg.domain, arg.bus, arg.devfn);
	if (!pdev)
		return -ENODEV;
	dom = iommu_get_domain_for_dev(&pdev->dev);
	if (!dom || !iommu_is_dma_domain(dom)) {
		pci_dev_put(pdev);
		return -ENODEV;
	}
	arg.phys = iommu_iova_to_phys(dom, arg.dma);
	pci_dev_put(pdev);
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long imp_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct imp_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	mutex_lock(&f->lock);
	switch (cmd) {
	case P2PIMP_IOC_ATTACH:
		ret = imp_attach(f, uarg);
		break;
	case P2PIMP_IOC_MAP:
		ret = imp_map(f, uarg);
		break;
	case P2PIMP_IOC_STATUS:
		ret = imp_status(f, uarg);
		break;
	case P2PIMP_IOC_IO:
		ret = imp_io(f, uarg);
		break;
	case P2PIMP_IOC_READ:
		ret = imp_read(f, uarg);
		break;
	case P2PIMP_IOC_EDU:
		ret = imp_edu(f, uarg);
		break;
	case P2PIMP_IOC_IOVA:
		ret = imp_iova(uarg);
		break;
	case P2PIMP_IOC_DETACH:
		ret = -EINVAL;
		if (arg < IMP_MAX && f->imps[arg]) {
			imp_detach(f->imps[arg]);
			f->imps[arg] = NULL;
			ret = 0;
		}
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&f->lock);
	return ret;
}

static int imp_open(struct inode *inode, struct file *file)
{
	struct imp_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	file->private_data = f;
	return 0;
}

static int imp_release(struct inode *inode, struct file *file)
{
	struct imp_file *f = file->private_data;
	int i;

	for (i = 0; i < IMP_MAX; i++)
		if (f->imps[i])
			imp_detach(f->imps[i]);
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations imp_fops = {
	.owner = THIS_MODULE,
	.open = imp_open,
	.release = imp_release,
	.unlocked_ioctl = imp_ioctl,
};

static int __init imp_init(void)
{
	struct dentry *dir = debugfs_create_dir("p2pdma-importer", NULL);

	debugfs_create_file("ctl", 0600, dir, NULL, &imp_fops);
	return 0;
}
late_initcall(imp_init);

MODULE_DESCRIPTION("P2PDMA dma-buf test importer");
MODULE_LICENSE("GPL");
