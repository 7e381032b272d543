// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: P2P memory exported as a dma-buf.
 *
 * Owns the exporter: pci_p2pmem_export() takes memory from a provider's
 * pool with pci_alloc_p2pmem() (so each buffer holds a reference on the
 * dev_pagemap of its range, as every allocation does) and wraps it in a
 * dma-buf that importers attach to and map for their device through the
 * ordinary DMA API, which asks the route (pci_p2pdma_state()) how each
 * segment is reached. A buffer is handed out only once dmabuf-revoke.c,
 * which owns every buffer's life after that, has it on its list.
 *
 * Every importer is revocable. Only importers that the dma-buf core calls
 * revocable (dma_buf_attach_revocable(): an invalidate_mappings callback,
 * after which they unmap in bounded time), accept peer-to-peer memory
 * (allow_peer2peer) and whose device reaches the provider (the route of
 * route.c) attach; a static importer, or a pinned one without the
 * callback (RDMA's plain pinned memory regions), cannot. An importer that
 * attached may pin: its invalidate_mappings unmaps and unpins.
 *
 * A buffer lives by its own reference count (see p2pdma.h), not by the
 * dma-buf's file: the dma-buf's dentry, which runs the release, can
 * outlive the file. Its memory goes back to the pool only once nothing
 * can reach it, from the release or from a revocation, whichever claims
 * it first (dmabuf-revoke.c).
 *
 * Every buffer is handed out cleared to zero, by the pool's own clearing of
 * dirty memory (p2p_clean(), as for an mmap() of p2pmem/allocate).
 *
 * CPU access: mmap() of the dma-buf maps the same memory into userspace,
 * uncached like p2pmem/allocate, a page, or 2 MiB where the mapping and
 * the buffer are both aligned to it, at a time as it faults (with a folio
 * reference), and only while the buffer is not revoked; the
 * revocation zaps every such mapping, waits for any pin of its pages to
 * go, and a later access gets SIGBUS. There is no vmap:
 * the dma-buf core hands a live vmap's address to later callers without
 * asking the exporter, so a vmap could not be revoked.
 *
 * Locking: the reservation lock orders a fault against a revocation. A
 * fault takes it (under mmap_lock, the order dma_resv_lockdep() primes)
 * and inserts a page or a folio only if the buffer is not revoked; the
 * revocation sets revoked under it and zaps the user mappings after
 * dropping it, so every page inserted before is zapped, and none is
 * inserted after.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>

#include "../pci.h"
#include "p2pdma.h"

/* Longest segment of a mapping: also bounded by the device's limit. */
#define P2P_DMABUF_MAX_SEG	SZ_1G

/* Refusals at attach are logged with their reason: not a flood of them. */
static DEFINE_RATELIMIT_STATE(p2p_dmabuf_refusals, 5 * HZ, 10);

static int p2p_dmabuf_attach(struct dma_buf *dmabuf,
			     struct dma_buf_attachment *attach)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	if (!attach->peer2peer)
		return -EOPNOTSUPP;
	/* What cannot be revoked would hold the provider's unbind forever. */
	if (!dma_buf_attach_revocable(attach)) {
		if (__ratelimit(&p2p_dmabuf_refusals))
			pci_info(buf->provider, "P2PDMA: dma-buf importer %s refused: it cannot be revoked (no invalidate_mappings)\n",
				 dev_name(attach->dev));
		return -EOPNOTSUPP;
	}
	/* Rechecked under the lock by map: this only fails early. */
	if (READ_ONCE(buf->revoked))
		return -ENODEV;
	/* The DMA API maps P2P segments for PCI functions only. */
	if (!dev_is_pci(attach->dev)) {
		if (__ratelimit(&p2p_dmabuf_refusals))
			pci_info(buf->provider, "P2PDMA: dma-buf importer %s refused: not a PCI function\n",
				 dev_name(attach->dev));
		return -EREMOTEIO;
	}
	/* Logs the reason (ACS redirect, host bridge) of a refusal. */
	if (pci_p2pdma_distance(buf->provider, attach->dev, false) < 0) {
		if (__ratelimit(&p2p_dmabuf_refusals))
			pci_p2pdma_distance(buf->provider, attach->dev, true);
		return -EREMOTEIO;
	}
	return 0;
}

/*
 * A pin is taken as it comes: only revocable importers attach, and a
 * revoked pinned importer unmaps and unpins in its invalidate_mappings
 * (the revocation then waits for the unmap like any other). Nothing is
 * moved, so a pin holds nothing here. The callbacks make the core treat
 * this exporter as dynamic: it maps and unmaps under the reservation lock.
 */
static int p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	return 0;
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

/*
 * @size bytes of pages from @first in @sgt, @seg bytes an entry (whole
 * pages; the last entry takes the rest). An entry's length is 32 bits, so
 * a buffer of 4 GiB or more takes several: @seg is at most 1 GiB.
 */
static int p2p_dmabuf_fill_sg(struct sg_table *sgt,
			      struct page *first, size_t size,
			      unsigned int seg)
{
	struct scatterlist *sg;
	unsigned int len, i;
	size_t off = 0;
	int ret;

	ret = sg_alloc_table(sgt, DIV_ROUND_UP(size, seg), GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(sgt, sg, i) {
		len = min_t(size_t, seg, size - off);
		sg_set_page(sg, pfn_to_page(page_to_pfn(first) + (off >> PAGE_SHIFT)),
			    len, 0);
		off += len;
	}
	return 0;
}

static struct sg_table *p2p_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct p2p_dmabuf *buf = attach->dmabuf->priv;
	struct sg_table *sgt;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (buf->revoked)
		return ERR_PTR(-ENODEV);

	sgt = kzalloc_obj(*sgt, GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = p2p_dmabuf_fill_sg(sgt, virt_to_page(buf->kaddr), buf->size,
				 p2p_dmabuf_seg(attach->dev));
	if (ret)
		goto out_free;
	/*
	 * dma-direct and dma-iommu ask the route (pci_p2pdma_state())
	 * about each segment: the bus address below a common switch, a
	 * normal mapping through the host bridge, -EREMOTEIO for a route
	 * refused since the attach. BAR memory is not in the CPU caches:
	 * nothing to sync.
	 */
	ret = dma_map_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto out_table;
	atomic_inc(&buf->mapped);
	/* This attachment's live mappings, for the revocation's report. */
	attach->priv = (void *)((unsigned long)attach->priv + 1);
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

	dma_resv_assert_held(attach->dmabuf->resv);
	dma_unmap_sgtable(attach->dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
	attach->priv = (void *)((unsigned long)attach->priv - 1);
	p2p_dmabuf_unmapped_one(buf);
}

/*
 * A user mapping's page, inserted when first touched, or the folio of
 * 2 MiB around it (P2P_FOLD_ORDER) when the mm asks for one (@order) and
 * both the mapping and the buffer have it whole there; otherwise the mm
 * falls back to a page. The reservation lock orders it against the
 * revocation (dmabuf-revoke.c): see the top of this file. kaddr and the
 * folios are stable here: a mapping holds the file, so no release runs,
 * and a revocation gives the memory back only after it set revoked.
 * The mapping takes a reference of the folio.
 */
static vm_fault_t p2p_dmabuf_insert(struct vm_fault *vmf, unsigned int order)
{
	struct vm_area_struct *vma = vmf->vma;
	struct p2p_dmabuf *buf = vma->vm_private_data;
	unsigned long len = PAGE_SIZE << order;
	unsigned long start = ALIGN_DOWN(vmf->address, len);
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct folio *folio;
	struct page *page;
	pgoff_t pgoff;

	/* The mm asks for a folio wherever the mapping may hold one. */
	if (order && (order != P2P_FOLD_ORDER || start < vma->vm_start ||
		      start + len > vma->vm_end))
		return VM_FAULT_FALLBACK;
	pgoff = vma->vm_pgoff + ((start - vma->vm_start) >> PAGE_SHIFT);
	dma_resv_lock(buf->dmabuf->resv, NULL);
	if (buf->revoked || pgoff + BIT(order) > buf->size >> PAGE_SHIFT)
		goto out;
	page = virt_to_page(buf->kaddr + (pgoff << PAGE_SHIFT));
	folio = page_folio(page);
	if (!order)
		ret = vmf_insert_page_mkwrite(vmf, page, write);
	else if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) &&
		 folio_order(folio) == order && &folio->page == page)
		ret = vmf_insert_folio_pmd(vmf, folio, write);
	else
		ret = VM_FAULT_FALLBACK;
out:
	dma_resv_unlock(buf->dmabuf->resv);
	return ret;
}

static vm_fault_t p2p_dmabuf_fault(struct vm_fault *vmf)
{
	return p2p_dmabuf_insert(vmf, 0);
}

/* Only with transparent huge pages: the insert's call is compiled out. */
static vm_fault_t p2p_dmabuf_huge_fault(struct vm_fault *vmf,
					unsigned int order)
{
	return p2p_dmabuf_insert(vmf, order);
}

static const struct vm_operations_struct p2p_dmabuf_vm_ops = {
	.fault = p2p_dmabuf_fault,
	.huge_fault = p2p_dmabuf_huge_fault,
};

/*
 * mmap() of the dma-buf (the core checked that the range is inside it).
 * Shared mappings only: a private one would copy BAR memory into
 * anonymous pages on a write, which no device sees.
 *
 * The memory is mapped as pages and folios, not as bare PFNs (neither
 * VM_PFNMAP nor VM_MIXEDMAP): each PTE or PMD holds a folio reference,
 * and the revocation waits for every reference to go. VFIO type1, which
 * pins a VM_PFNMAP mapping's PFNs without a reference, cannot take them.
 * Without VM_MIXEDMAP the mm treats a PMD as a folio's (it splits and
 * zaps it with the folio's reference and rmap), and a forked child faults
 * its pages in from the buffer as the parent did. VM_HUGEPAGE: 2 MiB at a
 * time under THP "madvise" too, as device-dax does. A page may be
 * pinned by GUP with FOLL_PCI_P2PDMA only (block O_DIRECT: short-term),
 * by GUP-fast and through the VMA alike, so that what a user gets does
 * not depend on CONFIG_SECRETMEM (which makes GUP-fast leave these pages
 * to the slow path); the revocation and the release wait for such a pin.
 * Every other GUP (long-term pins of RDMA, io_uring, VFIO) gets
 * -EREMOTEIO.
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
	vm_flags_set(vma, VM_HUGEPAGE | VM_DONTEXPAND | VM_DONTDUMP);
	/* As p2pmem/allocate and the kernel's mapping of the BAR: uncached. */
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &p2p_dmabuf_vm_ops;
	vma->vm_private_data = buf;
	return 0;
}

/*
 * The dma-buf's last reference is gone: its dentry's, which may have
 * outlived its file. No importer is attached and no user mapping is left,
 * but DMA queued in the reservation object, and pins of the pages, may
 * still reach the memory. The reservation object goes with the dma-buf:
 * take its fences with a reference of the buffer's own, and clear
 * @dmabuf, under the buffer's lock, which a revocation holds whenever it
 * uses the dma-buf. Whoever claimed the buffer gives the memory back
 * (dmabuf-revoke.c); the release does not wait for it.
 */
static void p2p_dmabuf_release(struct dma_buf *dmabuf)
{
	struct p2p_dmabuf *buf = dmabuf->priv;

	mutex_lock(&buf->lock);
	buf->fence = p2p_dmabuf_resv_fences(dmabuf->resv);
	buf->dmabuf = NULL;
	mutex_unlock(&buf->lock);
	p2p_dmabuf_retire(buf);
}

static const struct dma_buf_ops p2p_dmabuf_ops = {
	.attach = p2p_dmabuf_attach,
	.pin = p2p_dmabuf_pin,
	.unpin = p2p_dmabuf_unpin,
	.map_dma_buf = p2p_dmabuf_map,
	.unmap_dma_buf = p2p_dmabuf_unmap,
	.release = p2p_dmabuf_release,
	.mmap = p2p_dmabuf_mmap,
};

/*
 * Memory for a buffer, taken as an mmap() of p2pmem/allocate takes it:
 * from the pool (clean memory first), not from the per-CPU caches of
 * kernel allocations, whose dirty bits mean nothing.
 */
static void *p2p_dmabuf_alloc(struct pci_dev *provider, size_t size)
{
	struct pci_p2pdma *p2p;
	void *kaddr;

	scoped_guard(rcu) {
		p2p = rcu_dereference(provider->p2pdma);
		if (!p2p)
			return NULL;
		/* What earlier munmap()s returned is in the pool for first-fit. */
		p2p_runs_flush(p2p);
	}
	kaddr = p2p_alloc_folded(provider, size);
	/* The buffer's own reference of each folio, until it frees them. */
	if (kaddr)
		p2p_folios_hand_out(kaddr, size >> PAGE_SHIFT);
	return kaddr;
}

/*
 * Zero what is dirty of the @size bytes at @kaddr, a batch at a time
 * (p2p_clean_batch()): each batch is read back before it counts as clean.
 * Returns 0, -EIO if the clearing did not reach the device, or -EINTR on
 * a fatal signal.
 */
static int p2p_dmabuf_clear(void *kaddr, size_t size)
{
	unsigned long npages = size >> PAGE_SHIFT, done;
	long n;

	for (done = 0; done < npages; done += n) {
		n = p2p_clean_batch(kaddr, npages, done);
		if (n < 0)
			return n;
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
 * The memory goes back to the pool after the dma-buf is released (its
 * last reference is dropped, dma_buf_put(), or its last O_PATH holder
 * closed), or when @provider's driver unbinds, whichever comes first, and
 * never while a fence queued on it (of any usage) is unsignalled or a
 * page of it is pinned: a release with such a fence or pin leaves the
 * wait to a work item and returns.
 *
 * Importers must be revocable (dma_buf_attach_revocable(): an
 * invalidate_mappings callback in their dma_buf_attach_ops, after which they
 * unmap in bounded time) and accept peer-to-peer memory (allow_peer2peer);
 * their device must be a PCI function that reaches @provider
 * (pci_p2pdma_distance() >= 0). dma_buf_attach() fails with -EOPNOTSUPP for an
 * importer that does not accept peer-to-peer memory (every static importer) or
 * is not revocable (logged, rate-limited), with -EREMOTEIO for a device that is
 * not a PCI function or cannot reach the provider (the reason is logged,
 * rate-limited), and with -ENODEV once the buffer is revoked. An importer that
 * attached may pin (dma_buf_pin() succeeds); its invalidate_mappings must then
 * unmap and unpin. dma_buf_map_attachment() maps the memory for the importer's
 * device with dma_map_sgtable() (PCI bus addresses below a common switch, a
 * normal DMA mapping through the host bridge, an IOVA under an IOMMU), in
 * segments of whole pages of at most the device's dma_get_max_seg_size() and
 * 1 GiB; it fails with -ENODEV once the buffer is revoked, and with the DMA
 * API's error otherwise (-EREMOTEIO if the route was refused since the attach).
 *
 * CPU access: mmap() of the dma-buf (MAP_SHARED only, else -EINVAL) maps
 * the memory uncached (each PTE or PMD holds a folio reference; GUP pins
 * a page only with FOLL_PCI_P2PDMA, as block O_DIRECT asks, otherwise
 * -EREMOTEIO), a page at a time as it faults, or 2 MiB at a time (one
 * PMD) where the user address and the buffer's memory are both 2 MiB
 * aligned and transparent huge pages are not disabled: a buffer of 2 MiB
 * or more is allocated aligned where the pool has such a run free;
 * after the revocation every user mapping is zapped (a forked child's
 * too), a later access gets SIGBUS and a new mmap() fails with -ENODEV.
 * dma_buf_vmap() fails with -EINVAL: a kernel mapping handed out by the
 * dma-buf core could not be revoked. DMA_BUF_IOCTL_SYNC has nothing to
 * do: the CPU maps BAR memory uncached.
 *
 * When @provider's driver unbinds, each of its buffers is revoked: under the
 * buffer's reservation lock it is marked revoked and
 * dma_buf_invalidate_mappings() tells every importer. A pinned importer unmaps
 * when its invalidate_mappings is called; any other unmaps then or later, after
 * the DMA it fenced in the reservation object. The unbind zaps the user
 * mappings, waits for every mapping to be unmapped, then for every fence in the
 * reservation object (of every usage, as it is after the last unmap), then for
 * every pin of the pages, with no time limit (what it waits for is logged after
 * 5 seconds and every 30 seconds after that), and only then gives the memory
 * back to the pool. It does not wait for the dma-buf itself to be released.
 *
 * Context: process context, may sleep (the clearing of a large buffer
 * takes a while; a fatal signal stops it).
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
	buf = kzalloc_obj(*buf, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	kref_init(&buf->ref);
	mutex_init(&buf->lock);
	init_completion(&buf->gone);
	buf->provider = pci_dev_get(provider);
	buf->size = size;
	atomic_set(&buf->mapped, 0);

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

	exp_info.exp_name = "pci-p2pdma";
	exp_info.ops = &p2p_dmabuf_ops;
	exp_info.size = size;
	exp_info.flags = O_RDWR | O_CLOEXEC;
	exp_info.priv = buf;
	dmabuf = p2p_dmabuf_publish(buf, &exp_info);
	if (!IS_ERR(dmabuf))
		return dmabuf;
	ret = PTR_ERR(dmabuf);
out_free:
	p2p_folios_take_back(buf->kaddr, size >> PAGE_SHIFT);
	pci_free_p2pmem(provider, buf->kaddr, size);
	buf->kaddr = NULL;
out_put:
	p2p_dmabuf_put(buf);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_export);

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/dmabuf-kunit.h"
#endif
