// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: providers.
 *
 * Owns a provider's P2P state and its lifetime: registering a BAR range
 * (ZONE_DEVICE pages of type MEMORY_DEVICE_PCI_P2PDMA, added to the pool),
 * publishing it, choosing a published provider for a set of clients, and
 * the unbind. Everything a provider registers is device-managed. Each
 * allocation, and each page mapped to userspace, holds a reference on the
 * dev_pagemap of its range, so unbinding the provider first revokes the
 * userspace mappings and then waits until every user has let go. BARs
 * are numbered as in PCIe r6.0 sec 7.5.1.2.1.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/genalloc.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/percpu-refcount.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>

#include "../pci.h"
#include "p2pdma.h"

/*
 * The providers whose memory is published, which pci_p2pmem_find_many()
 * chooses from, so that it need not look at every PCI device. A provider's
 * state is on the list iff its published flag is set; both change
 * together under the lock, which is a raw spinlock because
 * pci_p2pmem_publish() may be called in any context. Readers walk the
 * list under RCU. The state leaves the list at the latest in
 * p2p_close_finish(), and is freed only after the grace period of
 * p2p_provider_release().
 *
 * A node that left the list may go back on it (publish, unpublish,
 * publish) while a reader still stands on it; that reader would follow it
 * to the end of the list and miss the entries after its old place. So
 * each addition is a write section of the sequence count, and a walk that
 * overlapped one starts again.
 */
static LIST_HEAD(p2p_published_list);
static DEFINE_RAW_SPINLOCK(p2p_published_lock);
static seqcount_raw_spinlock_t p2p_published_seq =
	SEQCNT_RAW_SPINLOCK_ZERO(p2p_published_seq, &p2p_published_lock);

/*
 * Set or clear the published flag, and put the state on the published
 * list or take it off, as one step. Any context.
 */
static void p2p_publish_update(struct pci_p2pdma *p2p, bool publish)
{
	unsigned long flags;

	KUNIT_STATIC_STUB_REDIRECT(p2p_publish_update, p2p, publish);
	raw_spin_lock_irqsave(&p2p_published_lock, flags);
	if (publish && !p2p->published) {
		/* A reader that finds the node sees the flag set. */
		WRITE_ONCE(p2p->published, true);
		write_seqcount_begin(&p2p_published_seq);
		list_add_tail_rcu(&p2p->published_node, &p2p_published_list);
		write_seqcount_end(&p2p_published_seq);
	} else if (!publish && p2p->published) {
		WRITE_ONCE(p2p->published, false);
		list_del_rcu(&p2p->published_node);
	}
	raw_spin_unlock_irqrestore(&p2p_published_lock, flags);
}

/*
 * Start of an unbind: nothing more is handed out or published. Closing
 * comes first: whoever sees the memory withdrawn by the unbind also sees
 * it closing (an export gets -ENODEV then, never -EACCES).
 */
VISIBLE_IF_KUNIT void p2p_close_start(struct pci_p2pdma *p2p)
{
	WRITE_ONCE(p2p->closing, true);
	smp_wmb();	/* pairs with smp_rmb() in p2pmem_exportable() */
	p2p_publish_update(p2p, false);
}

/* Once no reader that saw closing == false is left (after a grace period). */
static void p2p_close_finish(struct pci_dev *pdev, struct pci_p2pdma *p2p)
{
	/*
	 * A pci_p2pmem_publish() that checked closing before it was set may
	 * have stored true since: clear that again, and take the state off
	 * the published list, for good.
	 */
	p2p_publish_update(p2p, false);
	if (p2p->sysfs_added) {
		sysfs_remove_group(&pdev->dev.kobj, &p2pmem_group);
		p2p->sysfs_added = false;
	}
}

/*
 * First devres action of an unbind (registered after each range, so it
 * runs before any range is unmapped): stop handing out memory, remove the
 * sysfs group (kernfs waits for an mmap() of "allocate" in progress), and
 * revoke every mapping of "allocate" and every exported dma-buf. In-kernel users
 * are then waited for by memunmap_pages() through the pgmap references
 * they hold.
 */
VISIBLE_IF_KUNIT void p2p_provider_close(void *data)
{
	struct pci_dev *pdev = data;
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	if (p2p->closing)
		return;
	p2p_close_start(p2p);
	/*
	 * Allocators and publishers that saw closing == false have left their
	 * RCU section; later ones see it set.
	 */
	synchronize_rcu();
	p2p_close_finish(pdev, p2p);
	/* No mmap() of allocate runs now: revoke those that were made. */
	p2p_mappings_revoke(pdev);
	/*
	 * Exported dma-bufs: importers are told to unmap and the memory goes
	 * back to the pool, without waiting for the dma-bufs' release.
	 */
	p2p_dmabuf_revoke(pdev);
	/* What is cached per CPU goes back to the pool, which outlives this. */
	p2p_cache_drain(p2p);
}

/*
 * Last devres action of a provider: take the state off the device, and
 * wait for the RCU readers that may still see it before devres frees it.
 */
static void p2p_provider_release(void *data)
{
	struct pci_dev *pdev = data;
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	p2p_provider_close(pdev);	/* in case no range was ever added */
	RCU_INIT_POINTER(pdev->p2pdma, NULL);
	synchronize_rcu();
	xa_destroy(&p2p->routes);
	/* The pool and p2p itself are device-managed and go next. */
}

/* Serialises registrations: provider setup, region list, sysfs group. */
DEFINE_MUTEX(p2p_setup_lock);

VISIBLE_IF_KUNIT struct pci_p2pdma *p2p_provider_setup(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;
	int bar, cpu, ret;

	lockdep_assert_held(&p2p_setup_lock);

	p2p = rcu_dereference_protected(pdev->p2pdma,
					lockdep_is_held(&p2p_setup_lock));
	if (p2p)
		return p2p;

	p2p = devm_kzalloc(&pdev->dev, sizeof(*p2p), GFP_KERNEL);
	if (!p2p)
		return ERR_PTR(-ENOMEM);
	xa_init_flags(&p2p->routes, XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&p2p->regions);
	INIT_LIST_HEAD(&p2p->published_node);
	p2p->pdev = pdev;
	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
		if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
		    !pci_resource_len(pdev, bar))
			continue;
		p2p->mem[bar].owner = &pdev->dev;
		p2p->mem[bar].bus_offset = pci_bus_address(pdev, bar) -
					   pci_resource_start(pdev, bar);
	}
	p2p->pool = devm_gen_pool_create(&pdev->dev, PAGE_SHIFT,
					 dev_to_node(&pdev->dev), NULL);
	if (IS_ERR(p2p->pool))
		return ERR_CAST(p2p->pool);
	p2p->cache = devm_alloc_percpu(&pdev->dev, struct p2p_cpu_cache);
	if (!p2p->cache)
		return ERR_PTR(-ENOMEM);
	for_each_possible_cpu(cpu)
		spin_lock_init(&per_cpu_ptr(p2p->cache, cpu)->lock);

	rcu_assign_pointer(pdev->p2pdma, p2p);
	ret = devm_add_action_or_reset(&pdev->dev, p2p_provider_release, pdev);
	if (ret)
		return ERR_PTR(ret);
	return p2p;
}

/**
 * pcim_p2pdma_init() - give a PCI function the P2P state of its BARs
 * @pdev: the function, bound to the calling driver
 *
 * Makes a provider of each memory BAR of @pdev, which
 * pcim_p2pdma_provider() returns, so that a driver can hand out P2P
 * access to BAR ranges that have no struct pages (a dma-buf of MMIO, as
 * vfio-pci and RDMA drivers export). No page is created, nothing is
 * added to a pool, and no p2pmem sysfs file appears:
 * pci_p2pdma_add_resource() does those. Calling it again, or after
 * pci_p2pdma_add_resource(), does nothing more.
 *
 * The state is device-managed: it goes when the driver unbinds, and with
 * it every provider of @pdev.
 *
 * Context: process context, may sleep (takes the mutex that serialises
 * registrations); from the driver's probe or later while it is bound.
 *
 * Return: 0 on success, -ENOMEM if the state cannot be allocated, or the
 * error of adding its device-managed release.
 */
int pcim_p2pdma_init(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;

	mutex_lock(&p2p_setup_lock);
	p2p = p2p_provider_setup(pdev);
	mutex_unlock(&p2p_setup_lock);
	return PTR_ERR_OR_ZERO(p2p);
}
EXPORT_SYMBOL_GPL(pcim_p2pdma_init);

/**
 * pcim_p2pdma_provider() - the P2P provider of one BAR
 * @pdev: a function whose driver called pcim_p2pdma_init() or
 *	pci_p2pdma_add_resource()
 * @bar: index of a memory BAR (0 to 5, PCIe r6.0 sec 7.5.1.2.1)
 *
 * The provider names the owner (&@pdev->dev) and the offset of the BAR's
 * PCI bus addresses from its CPU physical addresses, for
 * pci_p2pdma_map_type() and pci_p2pdma_bus_addr_map().
 *
 * Context: any; does not sleep. The provider stays valid until the
 * driver of @pdev unbinds.
 *
 * Return: the provider, or NULL if @pdev has no P2P state, @bar is out of
 * range, or it is not a memory BAR of non-zero size.
 */
struct p2pdma_provider *pcim_p2pdma_provider(struct pci_dev *pdev, int bar)
{
	struct pci_p2pdma *p2p;

	if (bar < 0 || bar >= PCI_STD_NUM_BARS)
		return NULL;
	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || !p2p->mem[bar].owner)
		return NULL;
	return &p2p->mem[bar];
}
EXPORT_SYMBOL_GPL(pcim_p2pdma_provider);

/*
 * pgmap callback: the last reference to a page mapped to userspace went.
 * The page is dirty only if someone wrote it: the unmap found its PTE
 * dirty, or a writer that pinned it (O_DIRECT, RDMA) marked it dirty when
 * it let go; both set PG_dirty. Otherwise it still reads as zero, as it
 * did when it was mapped, and goes back clean.
 */
void p2p_page_free(struct page *page)
{
	struct p2p_region *region = p2p_page_region(page);
	unsigned long addr = (unsigned long)page_to_virt(page);
	bool dirty = folio_test_clear_dirty(page_folio(page));
	struct pci_p2pdma *p2p;

	/* The provider state outlives every page: see p2p_provider_close(). */
	p2p = rcu_dereference_protected(region->provider->p2pdma, 1);
	scoped_guard(rcu)
		p2p_run_add(p2p, region, addr, dirty);
	percpu_ref_put(&region->pgmap.ref);
}

/* A range's pages are order 0: each folio is one page. */
static void p2p_folio_free(struct folio *folio)
{
	p2p_page_free(&folio->page);
}

static const struct dev_pagemap_ops p2p_pgmap_ops = {
	.folio_free = p2p_folio_free,
};

static void p2p_bitmap_free(void *bitmap)
{
	kvfree(bitmap);
}

/*
 * The dirty bitmap of a region of @size bytes, device-managed. Allocated
 * before the pages are, so that it is freed after they are gone.
 */
VISIBLE_IF_KUNIT int p2p_region_bitmap(struct device *dev, struct p2p_region *region,
				       size_t size)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_region_bitmap, dev, region, size);
	region->npages = size >> PAGE_SHIFT;
	region->dirty = kvmalloc_array(BITS_TO_LONGS(region->npages),
				       sizeof(long), GFP_KERNEL);
	if (!region->dirty)
		return -ENOMEM;
	return devm_add_action_or_reset(dev, p2p_bitmap_free, region->dirty);
}

/*
 * Put @region's memory at @kaddr (bus address @bus) into @p2p's pool, all
 * of it dirty: the BAR holds whatever it held before.
 */
VISIBLE_IF_KUNIT int p2p_region_add(struct pci_p2pdma *p2p, struct p2p_region *region,
				    void *kaddr, u64 bus, int nid)
{
	int ret;

	KUNIT_STATIC_STUB_REDIRECT(p2p_region_add, p2p, region, kaddr, bus, nid);
	lockdep_assert_held(&p2p_setup_lock);
	region->kaddr = (unsigned long)kaddr;
	bitmap_fill(region->dirty, region->npages);
	ret = gen_pool_add_owner(p2p->pool, region->kaddr, bus,
				 region->npages << PAGE_SHIFT, nid, region);
	if (ret)
		return ret;
	list_add_tail_rcu(&region->node, &p2p->regions);
	return 0;
}

/*
 * ZONE_DEVICE pages for @region, device-managed. A function of its own, so
 * that KUnit can make this step of a registration fail.
 */
static void *p2p_region_map(struct device *dev,
			    struct p2p_region *region)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_region_map, dev, region);
	return devm_memremap_pages(dev, &region->pgmap);
}

struct p2p_span {
	u64 first, last;
	bool overlaps;
};

static void p2p_chunk_overlaps(struct gen_pool *pool,
			       struct gen_pool_chunk *chunk, void *data)
{
	struct p2p_span *s = data;
	u64 last = chunk->phys_addr + (chunk->end_addr - chunk->start_addr);

	if (chunk->phys_addr <= s->last && s->first <= last)
		s->overlaps = true;
}

/**
 * pci_p2pdma_add_resource() - register part of a BAR as P2P memory
 * @pdev: the provider
 * @bar: index of a memory BAR (0 to 5, PCIe r6.0 sec 7.5.1.2.1)
 * @size: bytes to register, or 0 for everything from @offset to the end
 *	of the BAR
 * @offset: byte offset of the range within the BAR
 *
 * Creates ZONE_DEVICE pages (MEMORY_DEVICE_PCI_P2PDMA) for the range and
 * adds it to the provider's pool, where pci_alloc_p2pmem() and the sysfs
 * "allocate" file find it. The first call also creates the p2pmem sysfs
 * group (Documentation/ABI/testing/sysfs-bus-pci). A device may register
 * several ranges. The memory is not offered to other drivers until the
 * provider calls pci_p2pmem_publish().
 *
 * Start and size must be multiples of memremap_compat_align() (2 MiB on
 * x86_64), the granularity of ZONE_DEVICE memory.
 *
 * Everything is device-managed: when the driver unbinds, userspace
 * mappings are revoked (later accesses get SIGBUS), the unbind waits for
 * in-kernel allocations to be freed, and the pages are removed.
 *
 * Context: process context, may sleep; call from the provider's probe
 * (the device must be bound to a driver, for the device-managed resources).
 * Takes a global mutex that serialises registrations.
 *
 * Return: 0 on success; -EINVAL if @bar is out of range or not a memory
 * BAR, the range does not fit in the BAR, or it is misaligned (each with a
 * dmesg line); -EBUSY if the range overlaps one already registered;
 * -ENOMEM if memory for the bookkeeping or the pool runs out; or the error
 * devm_memremap_pages() returned (for example -EBUSY or -ENOMEM when the
 * physical range cannot be given struct pages). Nothing stays registered
 * after a failure, but the p2pmem sysfs group created by a first call
 * remains.
 */
int pci_p2pdma_add_resource(struct pci_dev *pdev, int bar, size_t size,
			    u64 offset)
{
	resource_size_t bar_len, start;
	unsigned long align = memremap_compat_align();
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	struct p2p_span span;
	void *addr;
	int ret;

	if (bar < 0 || bar >= PCI_STD_NUM_BARS ||
	    !(pci_resource_flags(pdev, bar) & IORESOURCE_MEM)) {
		pci_info(pdev, "P2PDMA: BAR %d is not a memory BAR\n", bar);
		return -EINVAL;
	}
	bar_len = pci_resource_len(pdev, bar);
	if (offset >= bar_len || size > bar_len - offset) {
		pci_info(pdev, "P2PDMA: %#zx bytes at offset %#llx do not fit in BAR %d (%pa bytes)\n",
			 size, offset, bar, &bar_len);
		return -EINVAL;
	}
	if (!size)
		size = bar_len - offset;
	start = pci_resource_start(pdev, bar) + offset;
	if (!IS_ALIGNED(start, align) || !IS_ALIGNED(size, align)) {
		pci_info(pdev, "P2PDMA: BAR %d range %pa+%#zx is not aligned to %#lx\n",
			 bar, &start, size, align);
		return -EINVAL;
	}

	mutex_lock(&p2p_setup_lock);
	p2p = p2p_provider_setup(pdev);
	if (IS_ERR(p2p)) {
		ret = PTR_ERR(p2p);
		goto out_unlock;
	}
	if (!p2p->sysfs_added) {
		ret = sysfs_create_group(&pdev->dev.kobj, &p2pmem_group);
		if (ret)
			pci_warn(pdev, "P2PDMA: no p2pmem sysfs files (%d)\n",
				 ret);
		else
			p2p->sysfs_added = true;
	}

	span.first = pci_bus_address(pdev, bar) + offset;
	span.last = span.first + size - 1;
	span.overlaps = false;
	gen_pool_for_each_chunk(p2p->pool, p2p_chunk_overlaps, &span);
	if (span.overlaps) {
		pci_info(pdev, "P2PDMA: BAR %d range %pa+%#zx is already registered\n",
			 bar, &start, size);
		ret = -EBUSY;
		goto out_unlock;
	}

	region = devm_kzalloc(&pdev->dev, sizeof(*region), GFP_KERNEL);
	if (!region) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	region->provider = pdev;
	region->mem = &p2p->mem[bar];
	region->bus_offset = region->mem->bus_offset;
	region->pgmap.range.start = start;
	region->pgmap.range.end = start + size - 1;
	region->pgmap.nr_range = 1;
	region->pgmap.type = MEMORY_DEVICE_PCI_P2PDMA;
	region->pgmap.ops = &p2p_pgmap_ops;
	ret = p2p_region_bitmap(&pdev->dev, region, size);
	if (ret)
		goto out_free_region;

	addr = p2p_region_map(&pdev->dev, region);
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		goto out_free_bitmap;
	}

	ret = devm_add_action(&pdev->dev, p2p_provider_close, pdev);
	if (ret)
		goto out_unmap;

	ret = p2p_region_add(p2p, region, addr, span.first,
			     dev_to_node(&pdev->dev));
	if (ret)
		goto out_close;

	mutex_unlock(&p2p_setup_lock);
	pci_info(pdev, "P2PDMA: %zu MiB of BAR %d at offset %#llx registered\n",
		 size >> 20, bar, offset);
	return 0;

out_close:
	/* The most recent match: the action just added, not a range's before. */
	devm_remove_action(&pdev->dev, p2p_provider_close, pdev);
out_unmap:
	devm_memunmap_pages(&pdev->dev, &region->pgmap);
out_free_bitmap:
	devm_release_action(&pdev->dev, p2p_bitmap_free, region->dirty);
out_free_region:
	devm_kfree(&pdev->dev, region);
out_unlock:
	mutex_unlock(&p2p_setup_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_add_resource);

/*
 * Publish or withdraw for pci_p2pmem_publish(). A function of its own so
 * that a KUnit test can run an unbind between pci_p2pmem_publish()'s
 * check and this store.
 */
static void p2p_set_published(struct pci_p2pdma *p2p, bool publish)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_set_published, p2p, publish);
	p2p_publish_update(p2p, publish);
}

/**
 * pci_p2pmem_publish() - offer a provider's P2P memory to other drivers
 * @pdev: a provider that registered memory with pci_p2pdma_add_resource()
 * @publish: true to offer the memory, false to withdraw the offer
 *
 * Published memory is what pci_p2pmem_find_many() chooses from and what
 * pci_has_p2pmem() reports; the sysfs file p2pmem/published shows the
 * state. Withdrawing does not affect memory already allocated.
 * Does nothing on a device that never tried to register memory;
 * publishing a device none of whose registrations succeeded offers
 * nothing until one does. Publishing is ignored once the provider's
 * driver has started to unbind.
 *
 * Context: any; does not sleep (an RCU read side, and a raw spinlock with
 * interrupts off for the list of published providers).
 */
void pci_p2pmem_publish(struct pci_dev *pdev, bool publish)
{
	struct pci_p2pdma *p2p;

	/*
	 * The check and the store are one RCU read section, which
	 * p2p_provider_close() waits for before it clears published a last
	 * time: a store that raced with the start of an unbind is undone.
	 */
	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || READ_ONCE(p2p->closing))
		return;
	p2p_set_published(p2p, publish);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_publish);

/* Published, with memory to offer: what pci_has_p2pmem() asks. */
static bool p2p_offers(struct pci_p2pdma *p2p)
{
	/*
	 * State without a range (every registration failed) has an empty
	 * pool: published or not, it has nothing to offer; nor has a
	 * provider whose unbind began, which is still published until
	 * p2p_close_start() withdraws it.
	 */
	return READ_ONCE(p2p->published) && !READ_ONCE(p2p->closing) &&
	       !list_empty(&p2p->regions);
}

/*
 * Does @pdev offer published P2P memory: registered (at least one range)
 * and published? Ours alone since 7.3's API dropped it (no user outside
 * the core); the 6.12 backport exports it again. Any context.
 */
bool pci_has_p2pmem(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	return p2p && p2p_offers(p2p);
}

/**
 * pci_p2pmem_find_many() - pick published P2P memory close to all clients
 * @clients: devices that will DMA to or from the memory
 * @num_clients: number of entries in @clients; with none (0 or less)
 *	nothing is chosen
 *
 * Considers every provider that registered P2P memory and published it
 * (pci_has_p2pmem()), never one whose registrations all failed, and that
 * all @clients can reach (see pci_p2pdma_distance_many()), and returns
 * the closest. When several are equally close, each is equally likely
 * to be chosen, which spreads the load over them.
 *
 * Context: process context, may sleep (callers must allow for it; the
 * walk itself, over the published providers only, is an RCU read-side
 * section). Holds no lock on return.
 *
 * Return: the provider with a reference held (drop it with pci_dev_put()),
 * or NULL if no published provider suits every client or there is no
 * client.
 */
struct pci_dev *pci_p2pmem_find_many(struct device **clients, int num_clients)
{
	struct pci_dev *best;
	struct pci_p2pdma *p2p;
	int dist, best_dist;
	unsigned int seq;
	u32 ties;

	if (num_clients <= 0)
		return NULL;
	guard(rcu)();
	do {
		seq = read_seqcount_begin(&p2p_published_seq);
		best = NULL;
		best_dist = INT_MAX;
		ties = 0;
		list_for_each_entry_rcu(p2p, &p2p_published_list,
					published_node) {
			/* Withdrawn since, or nothing registered: as before. */
			if (!p2p_offers(p2p))
				continue;
			dist = pci_p2pdma_distance_many(p2p->pdev, clients,
							num_clients, false);
			if (dist < 0 || dist > best_dist)
				continue;
			if (dist < best_dist) {
				best_dist = dist;
				ties = 0;
			}
			/* Reservoir sampling: the k-th equal one wins with 1/k. */
			if (get_random_u32_below(++ties) == 0)
				best = p2p->pdev;
		}
	} while (read_seqcount_retry(&p2p_published_seq, seq));
	/*
	 * @best's state was on the list during this RCU read section, so
	 * @best still holds the reference of the device core: the state
	 * leaves the list in the provider's unbind (p2p_provider_close(), a
	 * devres action: at driver unbind, or in device_del() for a device
	 * without a driver), before the device's last reference can go, and
	 * p2p_provider_release() then waits for a grace period, which waits
	 * for this section. The reference is taken once, here, so that no
	 * pci_dev_put(), which may free and sleep, runs under RCU.
	 */
	return pci_dev_get(best);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_find_many);

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/provider-kunit.h"
#include "tests/translate-kunit.h"
#endif
