// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: P2P memory exported as a dma-buf.
 *
 * Owns the exporter: pci_p2pmem_export() takes memory from a provider's
 * pool with pci_alloc_p2pmem() (so each buffer holds a reference on the
 * dev_pagemap of its range, as every allocation does) and wraps it in a
 * dma-buf that importers attach to and map for their device through the
 * ordinary DMA API, which asks pci_p2pdma_map_segment() how each segment
 * is reached. It also owns the revocation of those buffers when their
 * provider unbinds (p2p_dmabuf_revoke(), called by p2p_provider_close()).
 *
 * Every importer is revocable. The exporter is dynamic (it has pin and
 * unpin) and refuses to pin, so a static importer, which dma-buf pins at
 * attach, cannot attach, and neither can a dynamic one that asks for a
 * pin. Only importers that accept peer-to-peer memory (allow_peer2peer)
 * and whose device reaches the provider (the route of route.c) attach.
 * On revocation they are told with dma_buf_move_notify() under the
 * buffer's reservation lock; every later map fails, the memory goes back
 * to the pool after the importers unmapped (bounded wait), and the unbind
 * does not wait for the dma-buf itself to be released.
 *
 * Every buffer is handed out cleared to zero, by the pool's own clearing of
 * dirty memory (p2p_clean(), as for an mmap() of p2pmem/allocate).
 *
 * CPU access: mmap() of the dma-buf maps the same memory into userspace,
 * PFN-mapped and uncached like p2pmem/allocate, a page at a time as it
 * faults, and only while the buffer is not revoked; the revocation zaps
 * every such mapping and a later access gets SIGBUS. vmap gives kernel
 * users the memory's kernel address (I/O memory); a revocation waits for
 * it to be unmapped, as for the importers' mappings.
 *
 * Locking: the reservation lock orders a fault against a revocation. A
 * fault takes it (under mmap_lock, the order dma_resv_lockdep() primes)
 * and inserts a page only if the buffer is not revoked; the revocation
 * sets revoked under it and zaps the user mappings after dropping it, so
 * every page inserted before is zapped, and none is inserted after.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/iosys-map.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "../pci.h"
#include "p2pdma.h"

MODULE_IMPORT_NS(DMA_BUF);

/*
 * How long an unbind waits, for all of a provider's buffers together, for
 * importers to finish the DMA they queued (their fences) and to unmap.
 */
#define P2P_DMABUF_REVOKE_WAIT	(10 * HZ)

/* Longest segment of a mapping: also bounded by the device's limit. */
#define P2P_DMABUF_MAX_SEG	SZ_1G

struct p2p_dmabuf {
	struct dma_buf *dmabuf;
	struct pci_dev *provider;	/* referenced until release */
	void *kaddr;		/* NULL once the memory went back to the pool */
	size_t size;
	struct list_head node;	/* in p2p_dmabufs while it holds memory */
	bool revoked;		/* set under the reservation lock */
	atomic_t mapped;	/* sg_tables given out and not yet unmapped */
	atomic_t vmapped;	/* live vmaps of the dma-buf core (0 or 1) */
};

/* Buffers holding memory, and their kaddr: an export, a revoke, a release. */
static DEFINE_MUTEX(p2p_dmabuf_lock);
static LIST_HEAD(p2p_dmabufs);
static DECLARE_WAIT_QUEUE_HEAD(p2p_dmabuf_unmapped);

static int p2p_dmabuf_attach(struct dma_buf *dmabuf,
			     struct dma_buf_attachment *attach)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	if (!attach->peer2peer)
		return -EOPNOTSUPP;
	/* Rechecked under the lock by map: this only fails early. */
	if (READ_ONCE(buf->revoked))
		return -ENODEV;
	/* The DMA API maps P2P segments for PCI functions only. */
	if (!dev_is_pci(attach->dev)) {
		pci_info(buf->provider, "P2PDMA: dma-buf importer %s refused: not a PCI function\n",
			 dev_name(attach->dev));
		return -EREMOTEIO;
	}
	/* Logs the reason (ACS redirect, host bridge) of a refusal. */
	if (pci_p2pdma_distance(buf->provider, attach->dev, true) < 0)
		return -EREMOTEIO;
	return 0;
}

/* Never pinned: every importer must stay revocable. */
static int p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	return -EOPNOTSUPP;
}

static void p2p_dmabuf_unpin(struct dma_buf_attachment *attach)
{
}

/* Bytes per scatterlist entry for @dev: whole pages, within its limit. */
static unsigned int p2p_dmabuf_seg(struct device *dev)
{
	unsigned int seg = min_t(unsigned int, dma_get_max_seg_size(dev),
				 P2P_DMABUF_MAX_SEG);

	return max_t(unsigned int, round_down(seg, PAGE_SIZE), PAGE_SIZE);
}

static struct sg_table *p2p_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct p2p_dmabuf *buf = attach->dmabuf->priv;
	unsigned int seg = p2p_dmabuf_seg(attach->dev), len, i;
	struct scatterlist *sg;
	struct sg_table *sgt;
	size_t off = 0;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (buf->revoked)
		return ERR_PTR(-ENODEV);

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, DIV_ROUND_UP(buf->size, seg), GFP_KERNEL);
	if (ret)
		goto out_free;
	for_each_sgtable_sg(sgt, sg, i) {
		len = min_t(size_t, seg, buf->size - off);
		sg_set_page(sg, virt_to_page(buf->kaddr + off), len, 0);
		off += len;
	}
	/*
	 * dma-direct and dma-iommu ask pci_p2pdma_map_segment() about each
	 * segment: the bus address below a common switch, a normal mapping
	 * through the host bridge, -EREMOTEIO for a route refused since the
	 * attach. BAR memory is not in the CPU caches: nothing to sync.
	 */
	ret = dma_map_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto out_table;
	atomic_inc(&buf->mapped);
	return sgt;

out_table:
	sg_free_table(sgt);
out_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void p2p_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt,
			     enum dma_data_direction dir)
{
	struct p2p_dmabuf *buf = attach->dmabuf->priv;

	dma_unmap_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
	if (atomic_dec_and_test(&buf->mapped))
		wake_up_all(&p2p_dmabuf_unmapped);
}

/*
 * A user mapping's page, inserted when first touched. The reservation lock
 * orders it against p2p_dmabuf_revoke_one(): see the top of the file.
 * kaddr is stable here: a mapping holds the file, so no release runs, and
 * a revocation gives the memory back only after it set revoked.
 */
static vm_fault_t p2p_dmabuf_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct p2p_dmabuf *buf = vma->vm_private_data;
	struct dma_resv *resv = buf->dmabuf->resv;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	dma_resv_lock(resv, NULL);
	if (!buf->revoked && vmf->pgoff < buf->size >> PAGE_SHIFT)
		ret = vmf_insert_pfn(vma, vmf->address,
				     PHYS_PFN(virt_to_phys(buf->kaddr)) +
				     vmf->pgoff);
	dma_resv_unlock(resv);
	return ret;
}

static const struct vm_operations_struct p2p_dmabuf_vm_ops = {
	.fault = p2p_dmabuf_fault,
};

/*
 * mmap() of the dma-buf (the core checked that the range is inside it).
 * Shared mappings only: a private one would copy BAR memory into
 * anonymous pages on a write, which no device sees.
 */
static int p2p_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	if (!(vma->vm_flags & VM_MAYSHARE)) {
		pr_debug("%s: a P2P dma-buf must be mapped MAP_SHARED\n",
			 current->comm);
		return -EINVAL;
	}
	/* Only fails early: the fault checks under the lock. */
	if (READ_ONCE(buf->revoked))
		return -ENODEV;
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	/* As p2pmem/allocate and the kernel's mapping of the BAR: uncached. */
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &p2p_dmabuf_vm_ops;
	vma->vm_private_data = buf;
	return 0;
}

/* The core calls this for its first vmap only, under the reservation lock. */
static int p2p_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	dma_resv_assert_held(dmabuf->resv);
	if (buf->revoked)
		return -ENODEV;
	atomic_inc(&buf->vmapped);
	iosys_map_set_vaddr_iomem(map, (void __iomem __force *)buf->kaddr);
	return 0;
}

static void p2p_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	if (atomic_dec_and_test(&buf->vmapped))
		wake_up_all(&p2p_dmabuf_unmapped);
}

static void p2p_dmabuf_release(struct dma_buf *dmabuf)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	mutex_lock(&p2p_dmabuf_lock);
	/* Unless a revocation gave it back already. */
	if (buf->kaddr) {
		list_del(&buf->node);
		pci_free_p2pmem(buf->provider, buf->kaddr, buf->size);
		buf->kaddr = NULL;
	}
	mutex_unlock(&p2p_dmabuf_lock);
	pci_dev_put(buf->provider);
	kfree(buf);
}

static const struct dma_buf_ops p2p_dmabuf_ops = {
	.attach = p2p_dmabuf_attach,
	.pin = p2p_dmabuf_pin,
	.unpin = p2p_dmabuf_unpin,
	.map_dma_buf = p2p_dmabuf_map,
	.unmap_dma_buf = p2p_dmabuf_unmap,
	.release = p2p_dmabuf_release,
	.mmap = p2p_dmabuf_mmap,
	.vmap = p2p_dmabuf_vmap,
	.vunmap = p2p_dmabuf_vunmap,
};

/* Does @pdev have P2P memory and is its driver not unbinding? */
static bool p2p_dmabuf_provider_open(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	return p2p && !list_empty(&p2p->regions) && !READ_ONCE(p2p->closing);
}

/*
 * Memory for a buffer, taken as an mmap() of p2pmem/allocate takes it:
 * from the pool (clean memory first), not from the per-CPU caches of
 * kernel allocations, whose dirty bits mean nothing.
 */
static void *p2p_dmabuf_alloc(struct pci_dev *provider, size_t size)
{
	struct pci_p2pdma *p2p;

	scoped_guard(rcu) {
		p2p = rcu_dereference(provider->p2pdma);
		if (!p2p)
			return NULL;
		/* What earlier munmap()s returned is in the pool for first-fit. */
		p2p_runs_flush(p2p);
	}
	return p2p_alloc(provider, size, 1, false);
}

/*
 * Zero what is dirty of the @size bytes at @kaddr, a batch at a time, as
 * p2p_map_pages() does: each batch is read back before it counts as clean
 * (p2p_clean()). Returns 0, -EIO if the clearing did not reach the device,
 * or -EINTR on a fatal signal.
 */
static int p2p_dmabuf_clear(void *kaddr, size_t size)
{
	struct p2p_region *region = to_p2p_region(virt_to_page(kaddr)->pgmap);
	unsigned long first = p2p_page_index(region, (unsigned long)kaddr);
	unsigned long npages = size >> PAGE_SHIFT, done, n;
	int ret;

	for (done = 0; done < npages; done += n) {
		n = min(npages - done, P2P_MAP_BATCH);
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = p2p_clean(region, first + done, n);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/**
 * pci_p2pmem_export() - export P2P memory of a provider as a dma-buf
 * @provider: a provider that registered memory with
 *	pci_p2pdma_add_resource(); it need not have published it
 * @size: bytes to export, a non-zero multiple of PAGE_SIZE
 * @flags: must be 0 (reserved)
 *
 * Allocates @size bytes of @provider's P2P memory, physically contiguous
 * and aligned to PAGE_SIZE (as pci_alloc_p2pmem() does), and returns it as
 * a dma-buf whose exporter name is "pci-p2pdma". It reads as zero: what
 * may hold an earlier user's data is cleared, and the clearing read back,
 * before the buffer is returned (as an mmap() of p2pmem/allocate does).
 * The memory goes back to the pool when the dma-buf is released
 * (its last reference is dropped, dma_buf_put()), or when @provider's
 * driver unbinds, whichever comes first.
 *
 * Importers must be dynamic (dma_buf_dynamic_attach() with a
 * move_notify callback) and accept peer-to-peer memory (allow_peer2peer
 * in their dma_buf_attach_ops); their device must be a PCI function that
 * reaches @provider (pci_p2pdma_distance() >= 0). dma_buf_attach() fails
 * with -EOPNOTSUPP for an importer that does not accept peer-to-peer
 * memory (every static importer), with -EREMOTEIO for a device that is
 * not a PCI function or cannot reach the provider (the reason is logged),
 * and with -ENODEV once the buffer is revoked. dma_buf_pin() fails with
 * -EOPNOTSUPP: every importer can be revoked. dma_buf_map_attachment()
 * maps the memory for the importer's device with dma_map_sgtable() (PCI
 * bus addresses below a common switch, a normal DMA mapping through the
 * host bridge, an IOVA under an IOMMU); it fails with -ENODEV once the
 * buffer is revoked, and with the DMA API's error otherwise (-EREMOTEIO
 * if the route was refused since the attach).
 *
 * CPU access: mmap() of the dma-buf (MAP_SHARED only, else -EINVAL) maps
 * the memory uncached, PFN-mapped (VM_PFNMAP | VM_IO: no struct page for
 * GUP, so it cannot be the target of O_DIRECT or be pinned), a page at a
 * time as it faults; after the revocation every user mapping is zapped,
 * a later access gets SIGBUS and a new mmap() fails with -ENODEV.
 * dma_buf_vmap() gives the memory's kernel address as I/O memory
 * (iosys_map with is_iomem set: use the iosys_map accessors); it fails
 * with -ENODEV once the buffer is revoked (and the 6.12 dma-buf core
 * warns once on any exporter error there). DMA_BUF_IOCTL_SYNC has nothing
 * to do: the CPU maps BAR memory uncached.
 *
 * When @provider's driver unbinds, each of its buffers is revoked: under
 * the buffer's reservation lock it is marked revoked and
 * dma_buf_move_notify() tells every importer to unmap; the unbind then
 * waits for the fences in the buffer's reservation object and for the
 * importers to unmap and for the vmap to be unmapped (dma_buf_vunmap()),
 * up to 10 seconds for all buffers together (a mapping or vmap still live
 * after that is logged), zaps the user mappings, and gives the memory
 * back to the pool, without waiting for the dma-buf to be released.
 *
 * Context: process context, may sleep (the clearing of a large buffer
 * takes a while; a fatal signal stops it). Takes a global mutex that
 * serialises exports, revocations and releases.
 *
 * Return: the dma-buf (drop it with dma_buf_put(), or install it in a file
 * descriptor with dma_buf_fd()); ERR_PTR(-EINVAL) if @size is 0 or not a
 * multiple of PAGE_SIZE or @flags is not 0; ERR_PTR(-ENODEV) if @provider
 * has no P2P memory or its driver is unbinding; ERR_PTR(-ENOMEM) if not
 * enough contiguous P2P memory is free, or memory for the bookkeeping
 * runs out; ERR_PTR(-EIO) if the clearing did not reach the device (not
 * in D0, not decoding memory, or a read-back not zero); ERR_PTR(-EINTR)
 * on a fatal signal during the clearing; or the error of dma_buf_export().
 */
struct dma_buf *pci_p2pmem_export(struct pci_dev *provider, size_t size,
				  int flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct p2p_dmabuf *buf;
	struct dma_buf *dmabuf;
	int ret;

	if (flags || !size || !PAGE_ALIGNED(size))
		return ERR_PTR(-EINVAL);
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->provider = pci_dev_get(provider);
	buf->size = size;
	atomic_set(&buf->mapped, 0);
	atomic_set(&buf->vmapped, 0);

	/* Cleared outside the lock: a large buffer takes a while. */
	ret = -ENODEV;
	if (!p2p_dmabuf_provider_open(provider))
		goto out_put;
	buf->kaddr = p2p_dmabuf_alloc(provider, size);
	if (!buf->kaddr) {
		ret = p2p_dmabuf_provider_open(provider) ? -ENOMEM : -ENODEV;
		goto out_put;
	}
	ret = p2p_dmabuf_clear(buf->kaddr, size);
	if (ret)
		goto out_free;

	/*
	 * An unbind sets closing before it takes the lock to revoke: a
	 * buffer is either refused here or on the list it walks. Until then
	 * the allocation's pgmap reference holds the unbind off.
	 */
	mutex_lock(&p2p_dmabuf_lock);
	ret = -ENODEV;
	if (!p2p_dmabuf_provider_open(provider))
		goto out_unlock;

	exp_info.exp_name = "pci-p2pdma";
	exp_info.ops = &p2p_dmabuf_ops;
	exp_info.size = size;
	exp_info.flags = O_RDWR | O_CLOEXEC;
	exp_info.priv = buf;
	dmabuf = dma_buf_export(&exp_info);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto out_unlock;
	}
	buf->dmabuf = dmabuf;
	list_add_tail(&buf->node, &p2p_dmabufs);
	mutex_unlock(&p2p_dmabuf_lock);
	return dmabuf;

out_unlock:
	mutex_unlock(&p2p_dmabuf_lock);
out_free:
	pci_free_p2pmem(provider, buf->kaddr, size);
out_put:
	pci_dev_put(buf->provider);
	kfree(buf);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_export);

/* What is left of the wait that ends at @deadline, at least one jiffy. */
static long p2p_dmabuf_left(unsigned long deadline)
{
	return time_before(jiffies, deadline) ? deadline - jiffies : 1;
}

/* Revoke @buf: tell its importers, wait (until @deadline) for them. */
static void p2p_dmabuf_revoke_one(struct p2p_dmabuf *buf,
				  unsigned long deadline)
{
	struct dma_resv *resv = buf->dmabuf->resv;

	dma_resv_lock(resv, NULL);
	WRITE_ONCE(buf->revoked, true);
	dma_buf_move_notify(buf->dmabuf);
	dma_resv_unlock(resv);

	/* DMA the importers queued before they were told. */
	if (dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP, false,
				  p2p_dmabuf_left(deadline)) <= 0)
		pci_warn(buf->provider, "P2PDMA: dma-buf of %zu bytes revoked with DMA still pending\n",
			 buf->size);
	/*
	 * Userspace: every page inserted before revoked was set goes, and
	 * the fault inserts no more. After the unlock: the fault takes the
	 * reservation lock under mmap_lock, the zap takes i_mmap_rwsem.
	 */
	unmap_mapping_range(buf->dmabuf->file->f_mapping, 0, 0, 1);

	/* Importers that unmap after move_notify returned, and vmap users. */
	if (!wait_event_timeout(p2p_dmabuf_unmapped,
				!atomic_read(&buf->mapped),
				p2p_dmabuf_left(deadline)))
		pci_warn(buf->provider, "P2PDMA: dma-buf of %zu bytes revoked with %d mappings left: an importer ignored move_notify\n",
			 buf->size, atomic_read(&buf->mapped));
	if (!wait_event_timeout(p2p_dmabuf_unmapped,
				!atomic_read(&buf->vmapped),
				p2p_dmabuf_left(deadline)))
		pci_warn(buf->provider, "P2PDMA: dma-buf of %zu bytes revoked with a vmap left\n",
			 buf->size);
}

/*
 * Revoke every dma-buf exported from @pdev and give its memory back to the
 * pool, so that the unbind does not wait for the dma-bufs to be released.
 * Called by p2p_provider_close() once nothing more is handed out.
 */
void p2p_dmabuf_revoke(struct pci_dev *pdev)
{
	unsigned long deadline = jiffies + P2P_DMABUF_REVOKE_WAIT;
	struct p2p_dmabuf *buf, *tmp;

	mutex_lock(&p2p_dmabuf_lock);
	list_for_each_entry_safe(buf, tmp, &p2p_dmabufs, node) {
		if (buf->provider != pdev)
			continue;
		p2p_dmabuf_revoke_one(buf, deadline);
		list_del(&buf->node);
		pci_free_p2pmem(pdev, buf->kaddr, buf->size);
		buf->kaddr = NULL;
	}
	mutex_unlock(&p2p_dmabuf_lock);
}
