// SPDX-License-Identifier: GPL-2.0
/*
 * HMM P2P test mirror client: the shape of an RDMA NIC with on-demand
 * paging, with QEMU's edu DMA engine as its hardware. Built into the test
 * kernels only (CONFIG_PCI_P2PDMA_TEST_HMM); owns
 * /sys/kernel/debug/hmm-p2p/ctl (hmm_p2p_test.h).
 *
 * HMMP2P_IOC_MIRROR mirrors a range of the caller with hmm_range_fault()
 * under an interval notifier, asking for P2P pages (HMM_PFN_REQ_P2P) if
 * told to, and maps every page for edu with dma_map_sgtable(): a P2P page
 * goes through the P2PDMA route and pci_p2pdma_map_segment() like any P2P
 * memory. Where the route refuses it (-EREMOTEIO), the client faults the
 * range again without the flag, which migrates it to RAM as 6.12 does, and
 * maps that: the process sees no error. It maps only under its lock and
 * after mmu_interval_read_retry() said no invalidation came since the
 * fault. HMMP2P_IOC_DMA has edu copy
 * through exactly the DMA addresses the mapping gave, under the mirror's
 * lock; the notifier takes that lock and drops the mapping before any
 * page of the range moves or goes, after which HMMP2P_IOC_DMA fails with
 * -EAGAIN until the range is mirrored again.
 */

#define pr_fmt(fmt) "hmm-p2p-mirror: " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/hmm.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "edu.h"
#include "hmm-p2p.h"
#include "hmm_p2p_test.h"

/* Bytes per transfer: a page is two. */
#define EDU_CHUNK	2048

struct mirror {
	struct mutex lock;		/* the mapping against the notifier */
	struct mmu_interval_notifier mni;
	bool inserted;
	unsigned long start, npages;
	struct sg_table sgt;		/* one entry per page */
	bool mapped;			/* sgt is mapped for edu */
	unsigned int invalidations;	/* that dropped a mapping */
	struct pci_dev *edu;		/* referenced, enabled */
	void __iomem *regs;
	void *bounce;			/* edu's RAM side, EDU_CHUNK bytes */
	dma_addr_t bounce_dma;
};

static bool mirror_invalidate(struct mmu_interval_notifier *mni,
			      const struct mmu_notifier_range *range,
			      unsigned long cur_seq)
{
	struct mirror *m = container_of(mni, struct mirror, mni);

	if (mmu_notifier_range_blockable(range))
		mutex_lock(&m->lock);
	else if (!mutex_trylock(&m->lock))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	if (m->mapped) {
		dma_unmap_sgtable(&m->edu->dev, &m->sgt, DMA_BIDIRECTIONAL, 0);
		m->mapped = false;
		m->invalidations++;
	}
	mutex_unlock(&m->lock);
	return true;
}

static const struct mmu_interval_notifier_ops mirror_mni_ops = {
	.invalidate = mirror_invalidate,
};

static int edu_enable(struct mirror *m)
{
	struct pci_dev *pdev;
	int ret;

	if (m->edu)
		return 0;
	pdev = pci_get_device(EDU_VENDOR, EDU_DEVICE, NULL);
	if (!pdev)
		return -ENODEV;
	ret = pci_enable_device(pdev);
	if (ret)
		goto out_put;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto out_disable;
	ret = -ENOMEM;
	m->regs = pci_iomap(pdev, 0, 0);
	if (!m->regs)
		goto out_disable;
	m->bounce = dma_alloc_coherent(&pdev->dev, EDU_CHUNK, &m->bounce_dma,
				       GFP_KERNEL);
	if (!m->bounce)
		goto out_unmap;
	pci_set_master(pdev);
	m->edu = pdev;
	return 0;

out_unmap:
	pci_iounmap(pdev, m->regs);
out_disable:
	pci_disable_device(pdev);
out_put:
	pci_dev_put(pdev);
	return ret;
}

static void edu_disable(struct mirror *m)
{
	if (!m->edu)
		return;
	pci_clear_master(m->edu);
	dma_free_coherent(&m->edu->dev, EDU_CHUNK, m->bounce, m->bounce_dma);
	pci_iounmap(m->edu, m->regs);
	pci_disable_device(m->edu);
	pci_dev_put(m->edu);
	m->edu = NULL;
}

static void mirror_drop(struct mirror *m)
{
	if (m->inserted)
		mmu_interval_notifier_remove(&m->mni);
	m->inserted = false;
	mutex_lock(&m->lock);
	if (m->mapped)
		dma_unmap_sgtable(&m->edu->dev, &m->sgt, DMA_BIDIRECTIONAL, 0);
	m->mapped = false;
	mutex_unlock(&m->lock);
	sg_free_table(&m->sgt);
	memset(&m->sgt, 0, sizeof(m->sgt));
}

/* Fault the range with @flags; the pages go into m->sgt. */
static int mirror_fault(struct mirror *m, unsigned long flags,
			unsigned long *pfns, unsigned long *seq)
{
	struct mm_struct *mm = m->mni.mm;
	struct hmm_range range = {
		.notifier = &m->mni,
		.start = m->start,
		.end = m->start + (m->npages << PAGE_SHIFT),
		.hmm_pfns = pfns,
		.default_flags = flags,
	};
	struct scatterlist *sg;
	unsigned long i;
	int ret;

	do {
		range.notifier_seq = mmu_interval_read_begin(&m->mni);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
	} while (ret == -EBUSY);
	if (ret)
		return ret;
	for_each_sgtable_sg(&m->sgt, sg, i)
		sg_set_page(sg, hmm_pfn_to_page(pfns[i]), PAGE_SIZE, 0);
	*seq = range.notifier_seq;
	return 0;
}

static long mirror_range(struct mirror *m, void __user *uarg)
{
	unsigned long flags = HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE;
	unsigned long pfns[HMMP2P_MAX_PAGES], seq, i;
	struct hmmp2p_range arg;
	struct scatterlist *sg;
	bool window;
	int ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (!arg.len || arg.len > HMMP2P_MAX_PAGES * PAGE_SIZE ||
	    !PAGE_ALIGNED(arg.addr) || !PAGE_ALIGNED(arg.len) ||
	    arg.flags & ~(HMMP2P_MIRROR_P2P | HMMP2P_MIRROR_WINDOW))
		return -EINVAL;
	window = arg.flags & HMMP2P_MIRROR_WINDOW;
	ret = edu_enable(m);
	if (ret)
		return ret;
	mirror_drop(m);
	m->start = arg.addr;
	m->npages = arg.len >> PAGE_SHIFT;
	ret = sg_alloc_table(&m->sgt, m->npages, GFP_KERNEL);
	if (ret)
		return ret;
	ret = mmu_interval_notifier_insert(&m->mni, current->mm, arg.addr,
					   arg.len, &mirror_mni_ops);
	if (ret)
		goto out_drop;
	m->inserted = true;
	if (arg.flags & HMMP2P_MIRROR_P2P)
		flags |= HMM_PFN_REQ_P2P;
	arg.fallback = 0;
again:
	ret = mirror_fault(m, flags, pfns, &seq);
	if (ret)
		goto out_drop;
	if (window) {
		/* The test's window for an invalidation (an owner unbind). */
		msleep(HMMP2P_WINDOW_MS);
		window = false;
	}
	/*
	 * Fault, lock, check, then map (as RDMA ODP does): the pages are the
	 * mirror's to use only under its lock, and only if no invalidation
	 * came since the fault. Until then an owner's unbind may migrate
	 * them back and free them, with the struct pages of its P2P memory
	 * (hmm.h, HMM_PFN_P2P); mapping them first would use freed memory.
	 */
	mutex_lock(&m->lock);
	if (mmu_interval_read_retry(&m->mni, seq)) {
		mutex_unlock(&m->lock);
		goto again;
	}
	ret = dma_map_sgtable(&m->edu->dev, &m->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret == -EREMOTEIO && (flags & HMM_PFN_REQ_P2P)) {
		mutex_unlock(&m->lock);
		/* The route refuses the owner's BAR: 6.12's way instead. */
		for (i = 0; i < m->npages; i++)
			if (pfns[i] & HMM_PFN_P2P)
				arg.fallback++;
		flags &= ~HMM_PFN_REQ_P2P;
		goto again;
	}
	if (ret) {
		mutex_unlock(&m->lock);
		goto out_drop;
	}
	m->mapped = true;
	mutex_unlock(&m->lock);

	arg.pages = m->npages;
	arg.p2p = 0;
	for (i = 0; i < m->npages; i++)
		if (pfns[i] & HMM_PFN_P2P)
			arg.p2p++;
	arg.bus = 0;
	for_each_sgtable_dma_sg(&m->sgt, sg, i)
		if (sg_dma_is_bus_address(sg))
			arg.bus += sg_dma_len(sg) >> PAGE_SHIFT;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;

out_drop:
	mirror_drop(m);
	return ret;
}

/* The DMA address of byte @offset of the mapped range, or 0. */
static dma_addr_t mirror_dma_addr(struct mirror *m, u64 offset)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(&m->sgt, sg, i) {
		if (offset < sg_dma_len(sg))
			return sg_dma_address(sg) + offset;
		offset -= sg_dma_len(sg);
	}
	return 0;
}

static long mirror_dma(struct mirror *m, void __user *uarg)
{
	void __user *buf;
	struct hmmp2p_dma arg;
	dma_addr_t dma = 0;
	long ret;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (!arg.len || arg.len > EDU_CHUNK || arg.to_mem > 1 ||
	    (arg.offset & ~PAGE_MASK) + arg.len > PAGE_SIZE)
		return -EINVAL;
	buf = u64_to_user_ptr(arg.buf);
	if (!m->edu)
		return -EAGAIN;
	/* The bounce buffer is the caller's: no user page under the lock. */
	if (arg.to_mem && copy_from_user(m->bounce, buf, arg.len))
		return -EFAULT;
	mutex_lock(&m->lock);
	ret = -EAGAIN;
	if (m->mapped && arg.offset < m->npages << PAGE_SHIFT)
		dma = mirror_dma_addr(m, arg.offset);
	/* Through edu's buffer: from the source, then to the destination. */
	if (dma && arg.to_mem)
		ret = edu_dma(m->regs, m->bounce_dma, EDU_BUF, arg.len, false) ?:
		      edu_dma(m->regs, EDU_BUF, dma, arg.len, true);
	else if (dma)
		ret = edu_dma(m->regs, dma, EDU_BUF, arg.len, false) ?:
		      edu_dma(m->regs, EDU_BUF, m->bounce_dma, arg.len, true);
	mutex_unlock(&m->lock);
	if (ret)
		return ret;
	if (!arg.to_mem && copy_to_user(buf, m->bounce, arg.len))
		return -EFAULT;
	arg.dma = dma;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long mirror_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct mirror *m = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct hmmp2p_stats stats = {};
	struct hmmp2p_range range;
	int ret;

	switch (cmd) {
	case HMMP2P_IOC_MIGRATE:
		if (copy_from_user(&range, uarg, sizeof(range)))
			return -EFAULT;
		if (!PAGE_ALIGNED(range.addr) || !PAGE_ALIGNED(range.len) ||
		    !range.len)
			return -EINVAL;
		ret = hmm_p2p_owner_migrate(current->mm, range.addr,
					    range.len >> PAGE_SHIFT);
		if (ret < 0)
			return ret;
		range.pages = ret;
		return copy_to_user(uarg, &range, sizeof(range)) ? -EFAULT : 0;
	case HMMP2P_IOC_MIRROR:
		return mirror_range(m, uarg);
	case HMMP2P_IOC_DMA:
		return mirror_dma(m, uarg);
	case HMMP2P_IOC_STATS:
		hmm_p2p_owner_stats(&stats);
		mutex_lock(&m->lock);
		stats.invalidations = m->invalidations;
		stats.mapped = m->mapped ? m->npages : 0;
		mutex_unlock(&m->lock);
		return copy_to_user(uarg, &stats, sizeof(stats)) ? -EFAULT : 0;
	case HMMP2P_IOC_UNMIRROR:
		mirror_drop(m);
		return 0;
	}
	return -ENOTTY;
}

static int mirror_open(struct inode *inode, struct file *file)
{
	struct mirror *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (!m)
		return -ENOMEM;
	mutex_init(&m->lock);
	file->private_data = m;
	return 0;
}

static int mirror_release(struct inode *inode, struct file *file)
{
	struct mirror *m = file->private_data;

	mirror_drop(m);
	edu_disable(m);
	mutex_destroy(&m->lock);
	kfree(m);
	return 0;
}

static const struct file_operations mirror_fops = {
	.owner = THIS_MODULE,
	.open = mirror_open,
	.release = mirror_release,
	.unlocked_ioctl = mirror_ioctl,
};

static int __init mirror_init(void)
{
	struct dentry *dir = debugfs_create_dir("hmm-p2p", NULL);

	debugfs_create_file("ctl", 0600, dir, NULL, &mirror_fops);
	return 0;
}
late_initcall(mirror_init);
