// SPDX-License-Identifier: GPL-2.0
/*
 * HMM P2P test owner: the GPU's side of device-private memory, on an
 * ivshmem device. Built into the test kernels only
 * (CONFIG_PCI_P2PDMA_TEST_HMM); bound by driver_override, never by ID.
 *
 * At probe it registers HMMP2P_OWNER_SIZE bytes of BAR 2 as P2P memory
 * (not published), takes all of it from its own pool, and creates a
 * MEMORY_DEVICE_PRIVATE pagemap of the same size: device-private page i
 * is backed by P2P page i. hmm_p2p_owner_migrate() migrates a process
 * range into device-private pages (the data copied into the BAR);
 * migrate_to_ram() copies a page back on a CPU fault; p2p_page() names the
 * backing P2P page, so that a mirror asking with HMM_PFN_REQ_P2P can DMA
 * the BAR directly.
 *
 * The unbind migrates every device-private page back to RAM (the
 * mirrors' notifiers fire first), waits for the pagemap's pages to go,
 * and only then gives the P2P memory back: nothing is freed while a
 * mirror or a process can still reach it.
 */

#define pr_fmt(fmt) "hmm-p2p-owner: " fmt

#include <linux/highmem.h>
#include <linux/memremap.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include "hmm-p2p.h"
#include "hmm_p2p_test.h"

#define HMMP2P_OWNER_BAR	2
#define HMMP2P_OWNER_SIZE	SZ_2M
#define HMMP2P_OWNER_PAGES	(HMMP2P_OWNER_SIZE >> PAGE_SHIFT)

struct hmm_p2p_owner {
	struct pci_dev *pdev;
	void *p2p;			/* all of the registered P2P memory */
	struct resource *res;		/* the device-private range */
	struct dev_pagemap pgmap;
	DECLARE_BITMAP(used, HMMP2P_OWNER_PAGES);	/* owner_used_lock */
};

/* Since the last probe: they outlive the unbind, which the tests read. */
static atomic_t owner_to_ram, owner_evicted;

/* The bound owner, one at a time, under owner_lock. */
static DEFINE_MUTEX(owner_lock);
static struct hmm_p2p_owner *owner;
/* Device-private pages in use: page_free() runs in any context. */
static DEFINE_SPINLOCK(owner_used_lock);

static struct hmm_p2p_owner *page_owner(struct page *page)
{
	return container_of(page_pgmap(page), struct hmm_p2p_owner, pgmap);
}

static unsigned long page_index(struct page *page)
{
	return page_to_pfn(page) - PHYS_PFN(page_owner(page)->pgmap.range.start);
}

static void *backing(struct hmm_p2p_owner *o, unsigned long i)
{
	return o->p2p + i * PAGE_SIZE;
}

static void owner_page_free(struct page *page)
{
	struct hmm_p2p_owner *o = page_owner(page);

	spin_lock(&owner_used_lock);
	clear_bit(page_index(page), o->used);
	spin_unlock(&owner_used_lock);
}

static struct page *owner_p2p_page(struct page *page)
{
	return virt_to_page(backing(page_owner(page), page_index(page)));
}

/* Fill the RAM page @dst from the BAR page backing @src's index. */
static void copy_from_bar(struct page *dst, struct hmm_p2p_owner *o,
			  unsigned long i)
{
	void *to = kmap_local_page(dst);

	memcpy(to, backing(o, i), PAGE_SIZE);
	kunmap_local(to);
}

static vm_fault_t owner_migrate_to_ram(struct vm_fault *vmf)
{
	struct hmm_p2p_owner *o = page_owner(vmf->page);
	unsigned long src = 0, dst = 0;
	struct migrate_vma args = {
		.vma = vmf->vma,
		.start = vmf->address,
		.end = vmf->address + PAGE_SIZE,
		.src = &src,
		.dst = &dst,
		.pgmap_owner = o,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE,
		.fault_page = vmf->page,
	};
	struct page *spage, *dpage;

	atomic_inc(&owner_to_ram);
	if (migrate_vma_setup(&args))
		return VM_FAULT_SIGBUS;
	spage = migrate_pfn_to_page(src);
	if (spage && (src & MIGRATE_PFN_MIGRATE)) {
		dpage = alloc_page_vma(GFP_HIGHUSER_MOVABLE, vmf->vma,
				       vmf->address);
		if (!dpage) {
			migrate_vma_finalize(&args);
			return VM_FAULT_OOM;
		}
		lock_page(dpage);
		copy_from_bar(dpage, o, page_index(spage));
		dst = migrate_pfn(page_to_pfn(dpage)) |
		      (src & MIGRATE_PFN_WRITE);
	}
	migrate_vma_pages(&args);
	migrate_vma_finalize(&args);
	return 0;
}

/* Device-private folios here are order 0: each is one page. */
static void owner_folio_free(struct folio *folio)
{
	owner_page_free(&folio->page);
}

static const struct dev_pagemap_ops owner_ops = {
	.folio_free = owner_folio_free,
	.migrate_to_ram = owner_migrate_to_ram,
	.p2p_page = owner_p2p_page,
};

/* A free device-private page, marked used, or NULL. */
static struct page *owner_alloc(struct hmm_p2p_owner *o)
{
	unsigned long i;

	spin_lock(&owner_used_lock);
	i = find_first_zero_bit(o->used, HMMP2P_OWNER_PAGES);
	if (i < HMMP2P_OWNER_PAGES)
		set_bit(i, o->used);
	spin_unlock(&owner_used_lock);
	if (i >= HMMP2P_OWNER_PAGES)
		return NULL;
	return pfn_to_page(PHYS_PFN(o->pgmap.range.start) + i);
}

/**
 * hmm_p2p_owner_migrate() - migrate a range of @mm into device memory
 * @mm: the process, whose mmap lock the caller does not hold
 * @addr: page-aligned start of an anonymous range
 * @npages: pages, at most HMMP2P_MAX_PAGES
 *
 * Return: pages migrated, -ENODEV without a bound owner, -EINVAL for a
 * range that is not one anonymous mapping.
 */
int hmm_p2p_owner_migrate(struct mm_struct *mm, unsigned long addr,
			  unsigned long npages)
{
	unsigned long src[HMMP2P_MAX_PAGES] = {}, dst[HMMP2P_MAX_PAGES] = {};
	struct migrate_vma args = {
		.start = addr,
		.end = addr + (npages << PAGE_SHIFT),
		.src = src,
		.dst = dst,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	struct page *spage, *dpage;
	struct hmm_p2p_owner *o;
	unsigned long i;
	int n = 0, ret;

	if (npages > HMMP2P_MAX_PAGES)
		return -EINVAL;
	mutex_lock(&owner_lock);
	o = owner;
	ret = -ENODEV;
	if (!o)
		goto out;
	args.pgmap_owner = o;
	mmap_read_lock(mm);
	args.vma = vma_lookup(mm, addr);
	ret = -EINVAL;
	if (!args.vma || args.end > args.vma->vm_end ||
	    migrate_vma_setup(&args)) {
		mmap_read_unlock(mm);
		goto out;
	}
	for (i = 0; i < npages; i++) {
		spage = migrate_pfn_to_page(src[i]);
		if (!spage || !(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = owner_alloc(o);
		if (!dpage)
			continue;
		zone_device_page_init(dpage, &o->pgmap, 0);
		memcpy_from_page(backing(o, page_index(dpage)), spage, 0,
				 PAGE_SIZE);
		dst[i] = migrate_pfn(page_to_pfn(dpage)) |
			 (src[i] & MIGRATE_PFN_WRITE);
	}
	migrate_vma_pages(&args);
	for (i = 0; i < npages; i++)
		if (dst[i] && (src[i] & MIGRATE_PFN_MIGRATE))
			n++;
	migrate_vma_finalize(&args);
	mmap_read_unlock(mm);
	ret = n;
out:
	mutex_unlock(&owner_lock);
	return ret;
}

/**
 * hmm_p2p_owner_stats() - the owner's counters since its last probe
 * @stats: filled in: to_ram, evicted, in_use (0 without an owner)
 */
void hmm_p2p_owner_stats(struct hmmp2p_stats *stats)
{
	stats->to_ram = atomic_read(&owner_to_ram);
	stats->evicted = atomic_read(&owner_evicted);
	mutex_lock(&owner_lock);
	if (owner)
		stats->in_use = bitmap_weight(owner->used, HMMP2P_OWNER_PAGES);
	mutex_unlock(&owner_lock);
}

/*
 * Every device-private page back to RAM, its data copied from the BAR:
 * the migration tells the mirrors (their notifiers) before the page moves.
 */
static void owner_evict(struct hmm_p2p_owner *o)
{
	unsigned long *src, *dst, i;
	struct page *spage, *dpage;

	src = kvcalloc(HMMP2P_OWNER_PAGES, sizeof(*src), GFP_KERNEL | __GFP_NOFAIL);
	dst = kvcalloc(HMMP2P_OWNER_PAGES, sizeof(*dst), GFP_KERNEL | __GFP_NOFAIL);
	migrate_device_range(src, PHYS_PFN(o->pgmap.range.start),
			     HMMP2P_OWNER_PAGES);
	for (i = 0; i < HMMP2P_OWNER_PAGES; i++) {
		spage = migrate_pfn_to_page(src[i]);
		if (!spage || !(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = alloc_page(GFP_HIGHUSER_MOVABLE | __GFP_NOFAIL);
		lock_page(dpage);
		copy_from_bar(dpage, o, i);
		dst[i] = migrate_pfn(page_to_pfn(dpage)) |
			 (src[i] & MIGRATE_PFN_WRITE);
		atomic_inc(&owner_evicted);
	}
	migrate_device_pages(src, dst, HMMP2P_OWNER_PAGES);
	migrate_device_finalize(src, dst, HMMP2P_OWNER_PAGES);
	kvfree(src);
	kvfree(dst);
}

static int owner_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct hmm_p2p_owner *o;
	void *addr;
	int ret;

	if (pci_resource_len(pdev, HMMP2P_OWNER_BAR) < HMMP2P_OWNER_SIZE)
		return -ENODEV;
	o = devm_kzalloc(&pdev->dev, sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	o->pdev = pdev;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pci_p2pdma_add_resource(pdev, HMMP2P_OWNER_BAR,
				      HMMP2P_OWNER_SIZE, 0);
	if (ret)
		return ret;
	o->p2p = pci_alloc_p2pmem(pdev, HMMP2P_OWNER_SIZE);
	if (!o->p2p)
		return -ENOMEM;

	o->res = request_free_mem_region(&iomem_resource, HMMP2P_OWNER_SIZE,
					 "hmm-p2p-owner device private");
	if (IS_ERR(o->res)) {
		ret = PTR_ERR(o->res);
		goto out_free;
	}
	o->pgmap.type = MEMORY_DEVICE_PRIVATE;
	o->pgmap.range.start = o->res->start;
	o->pgmap.range.end = o->res->end;
	o->pgmap.nr_range = 1;
	o->pgmap.ops = &owner_ops;
	o->pgmap.owner = o;
	addr = memremap_pages(&o->pgmap, dev_to_node(&pdev->dev));
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		goto out_release;
	}

	mutex_lock(&owner_lock);
	if (owner) {
		mutex_unlock(&owner_lock);
		ret = -EBUSY;
		goto out_unmap;
	}
	owner = o;
	atomic_set(&owner_to_ram, 0);
	atomic_set(&owner_evicted, 0);
	mutex_unlock(&owner_lock);
	pci_set_drvdata(pdev, o);
	pci_info(pdev, "%u device-private pages backed by BAR %d\n",
		 (unsigned int)HMMP2P_OWNER_PAGES, HMMP2P_OWNER_BAR);
	return 0;

out_unmap:
	memunmap_pages(&o->pgmap);
out_release:
	release_mem_region(o->res->start, resource_size(o->res));
out_free:
	pci_free_p2pmem(pdev, o->p2p, HMMP2P_OWNER_SIZE);
	return ret;
}

static void owner_remove(struct pci_dev *pdev)
{
	struct hmm_p2p_owner *o = pci_get_drvdata(pdev);

	mutex_lock(&owner_lock);
	owner = NULL;
	mutex_unlock(&owner_lock);
	owner_evict(o);
	/* Waits for every page of the pagemap to be freed. */
	memunmap_pages(&o->pgmap);
	release_mem_region(o->res->start, resource_size(o->res));
	pci_free_p2pmem(pdev, o->p2p, HMMP2P_OWNER_SIZE);
	pci_info(pdev, "%d pages migrated back to RAM at unbind\n",
		 atomic_read(&owner_evicted));
}

static struct pci_driver owner_driver = {
	.name = "hmm-p2p-owner",
	.probe = owner_probe,
	.remove = owner_remove,
};
builtin_pci_driver(owner_driver);
