// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: the pool.
 *
 * Owns a provider's free P2P memory: the genalloc pool of its registered
 * ranges, the per-CPU cache of kernel allocations up to 1 MiB, the runs
 * of pages coming back from userspace, and the allocation API
 * (pci_alloc_p2pmem() and friends). Every allocation holds a reference on
 * its range's dev_pagemap. Which pages may hold someone's data (dirty)
 * and their clearing are clear.c's: a kernel user's memory comes back
 * marked dirty, and an mmap() prefers clean memory.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitmap.h>
#include <linux/genalloc.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/percpu-refcount.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "../pci.h"
#include "p2pdma.h"

/*
 * Give [@addr, @addr + @size) to the pool. A function of its own, so that
 * KUnit can read "available" at the moment memory arrives in the pool.
 */
static void p2p_pool_put(struct pci_p2pdma *p2p, unsigned long addr,
			 size_t size)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_pool_put, p2p, addr, size);
	gen_pool_free(p2p->pool, addr, size);
}

/* Give memory back to the pool, marked dirty: a kernel user had it. */
static void p2p_pool_free_dirty(struct pci_p2pdma *p2p,
				struct p2p_region *region, unsigned long addr,
				size_t size)
{
	p2p_mark(region, p2p_page_index(region, addr),
		 DIV_ROUND_UP(size, PAGE_SIZE), true);
	p2p_pool_put(p2p, addr, size);
}

/*
 * Put this CPU's run of pages back from userspace into the pool; the
 * cache lock is held.
 */
static void p2p_run_flush(struct pci_p2pdma *p2p, struct p2p_cpu_cache *c)
{
	if (!c->run_pages)
		return;
	/* Out of the count before into the pool: see p2p_available(). */
	WRITE_ONCE(c->bytes, c->bytes - (c->run_pages << PAGE_SHIFT));
	smp_wmb();	/* pairs with smp_rmb() in p2p_available() */
	p2p_pool_put(p2p, c->run_start, c->run_pages << PAGE_SHIFT);
	/* Read without the lock by p2p_runs_flush(). */
	WRITE_ONCE(c->run_pages, 0);
}

/*
 * A page of @region at @addr came back from userspace, written (@dirty)
 * or not. An munmap() returns its pages one at a time, in address order:
 * they are gathered into one run per CPU and given to the pool together,
 * up to P2P_RUN_PAGES at a time, instead of one bitmap update each. The
 * next mmap(), a short pool and an unbind put a run
 * that is still open into the pool. Called in an RCU read section.
 */
void p2p_run_add(struct pci_p2pdma *p2p, struct p2p_region *region,
		 unsigned long addr, bool dirty)
{
	struct p2p_cpu_cache *c;
	unsigned long flags;

	/* KUnit's map suite runs an unbind beside the page_free callback. */
	KUNIT_STATIC_STUB_REDIRECT(p2p_run_add, p2p, region, addr, dirty);
	if (dirty)
		p2p_mark(region, p2p_page_index(region, addr), 1, true);
	/* After an unbind's grace period nothing is held back. */
	if (READ_ONCE(p2p->closing)) {
		p2p_pool_put(p2p, addr, PAGE_SIZE);
		return;
	}
	c = raw_cpu_ptr(p2p->cache);
	spin_lock_irqsave(&c->lock, flags);
	/*
	 * The first page of a region never extends a run: the run would end
	 * in the region before it, and genalloc frees within one range only.
	 */
	if (c->run_pages &&
	    (addr != c->run_start + (c->run_pages << PAGE_SHIFT) ||
	     addr == region->kaddr || c->run_pages == P2P_RUN_PAGES))
		p2p_run_flush(p2p, c);
	if (!c->run_pages)
		c->run_start = addr;
	WRITE_ONCE(c->run_pages, c->run_pages + 1);
	WRITE_ONCE(c->bytes, c->bytes + PAGE_SIZE);
	spin_unlock_irqrestore(&c->lock, flags);
}

/* Put every CPU's open run into the pool. */
void p2p_runs_flush(struct pci_p2pdma *p2p)
{
	struct p2p_cpu_cache *c;
	unsigned long flags;
	int cpu;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(p2p->cache, cpu);
		if (!READ_ONCE(c->run_pages))
			continue;
		spin_lock_irqsave(&c->lock, flags);
		p2p_run_flush(p2p, c);
		spin_unlock_irqrestore(&c->lock, flags);
	}
}

/* The per-CPU cache class of an allocation of @size bytes, or -1. */
static int p2p_cache_class(size_t size)
{
	unsigned long pages = DIV_ROUND_UP(size, PAGE_SIZE);

	if (!is_power_of_2(pages) || pages > BIT(P2P_CACHE_CLASSES - 1))
		return -1;
	return ilog2(pages);
}

/*
 * This CPU's cache (or, after a migration, another CPU's: the lock makes
 * either correct). Interrupts are off because allocation and freeing are
 * allowed in interrupt context.
 */
static unsigned long p2p_cache_get(struct pci_p2pdma *p2p, int class)
{
	struct p2p_cpu_cache *c = raw_cpu_ptr(p2p->cache);
	unsigned long flags, addr = 0;

	/*
	 * Nothing of this size cached: no lock (a free on another CPU never
	 * fills this one). A stale count only sends us to the pool or to
	 * the check under the lock.
	 */
	if (!data_race(c->count[class]))
		return 0;
	spin_lock_irqsave(&c->lock, flags);
	if (c->count[class]) {
		addr = c->addr[class][--c->count[class]];
		WRITE_ONCE(c->bytes, c->bytes - (PAGE_SIZE << class));
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return addr;
}

static bool p2p_cache_put(struct pci_p2pdma *p2p, int class,
			  unsigned long addr)
{
	struct p2p_cpu_cache *c = raw_cpu_ptr(p2p->cache);
	unsigned int depth = class < P2P_CACHE_SMALL ? P2P_CACHE_DEPTH : 1;
	unsigned long flags;
	bool kept = false;

	/* Full (frees on this CPU of what others allocate): no lock. */
	if (data_race(c->count[class]) >= depth)
		return false;
	spin_lock_irqsave(&c->lock, flags);
	if (c->count[class] < depth) {
		c->addr[class][c->count[class]++] = addr;
		WRITE_ONCE(c->bytes, c->bytes + (PAGE_SIZE << class));
		kept = true;
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return kept;
}

/*
 * Return every CPU's cached memory and open run to the pool: when an
 * allocation finds the pool short, and at unbind. Returns whether there
 * was any.
 */
bool p2p_cache_drain(struct pci_p2pdma *p2p)
{
	struct p2p_cpu_cache *c;
	unsigned long flags, addr;
	bool any = false;
	int cpu, class;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(p2p->cache, cpu);
		if (!READ_ONCE(c->bytes))
			continue;
		spin_lock_irqsave(&c->lock, flags);
		if (c->run_pages)
			any = true;
		p2p_run_flush(p2p, c);
		for (class = 0; class < P2P_CACHE_CLASSES; class++) {
			while (c->count[class]) {
				addr = c->addr[class][--c->count[class]];
				WRITE_ONCE(c->bytes,
					   c->bytes - (PAGE_SIZE << class));
				smp_wmb();	/* pairs with p2p_available() */
				p2p_pool_free_dirty(p2p, p2p_region_of(p2p, addr),
						    addr, PAGE_SIZE << class);
				any = true;
			}
		}
		spin_unlock_irqrestore(&c->lock, flags);
	}
	return any;
}

/*
 * Bytes free in the pool. A function of its own, so that KUnit can move
 * memory between this read and the reads of the per-CPU counts.
 */
static size_t p2p_pool_avail(struct pci_p2pdma *p2p)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_pool_avail, p2p);
	return gen_pool_avail(p2p->pool);
}

/*
 * "available": free in the pool and held per CPU (cached allocations,
 * runs of returning pages). Memory that goes from a CPU's count into the
 * pool leaves the count first (with a write barrier): a reader that sees
 * it in the pool, read first, sees it gone from the count. Memory can
 * also go the other way, through a kernel user: taken from the pool after
 * the reader read it and freed into a cache before the reader reads that
 * CPU's count, it is counted twice. The sum is therefore capped at the
 * pool's size: while memory moves it may be off by what moves, never
 * above the size, and it is exact whenever nothing is moving.
 */
size_t p2p_available(struct pci_p2pdma *p2p)
{
	size_t avail;
	int cpu;

	avail = p2p_pool_avail(p2p);
	smp_rmb();	/* pairs with smp_wmb() where memory enters the pool */
	for_each_possible_cpu(cpu)
		avail += READ_ONCE(per_cpu_ptr(p2p->cache, cpu)->bytes);
	return min(avail, gen_pool_size(p2p->pool));
}

/* What p2p_algo_fit() looks for in a provider's pool. */
struct p2p_fit {
	struct pci_p2pdma *p2p;
	unsigned int order;	/* the run starts on a PFN aligned to this */
	bool clean;		/* every page of the run is clean */
};

/*
 * genalloc algorithm for mmap() and exports: the first free run of @nr
 * pages that starts on a PFN aligned to 2^@data->order pages and, if
 * @data->clean, has only clean pages. Only a preference: p2p_clean() looks
 * at the dirty bits again once the pages are held.
 *
 * Both bitmaps change under it, and reading them racily is the design:
 * genalloc's @map is lockless (gen_pool_alloc_algo_owner() claims the run
 * found with cmpxchg and searches again if another CPU took a bit of it,
 * as for its own first-fit), and other CPUs mark their pages dirty or
 * clean while we look. A stale word costs at most a worse choice, hence
 * data_race().
 */
static unsigned long p2p_algo_fit(unsigned long *map, unsigned long size,
				  unsigned long start, unsigned int nr,
				  void *data, struct gen_pool *pool,
				  unsigned long start_addr)
{
	const struct p2p_fit *fit = data;
	struct p2p_region *region = p2p_region_of(fit->p2p, start_addr);
	unsigned long mask = BIT(fit->order) - 1, i = start, d;
	/* Bit 0 of the range is its first page, at any PFN. */
	unsigned long off = page_to_pfn(virt_to_page((void *)start_addr)) & mask;

	if (!region || region->kaddr != start_addr)
		return size;
	for (;;) {
		/* Racy by design: genalloc claims the run with cmpxchg. */
		i = data_race(bitmap_find_next_zero_area_off(map, size, i, nr,
							     mask, off));
		if (i >= size || !fit->clean)
			return i >= size ? size : i;
		/* Racy by design: the dirty bits only steer the choice. */
		d = data_race(find_next_bit(region->dirty, i + nr, i));
		if (d >= i + nr)
			return i;
		/* As above. */
		i = data_race(find_next_zero_bit(region->dirty, size, d));
	}
}

/* Take @size bytes of the pool as @fit says, or 0; *@region: its range. */
static unsigned long p2p_pool_fit(struct pci_p2pdma *p2p, size_t size,
				  unsigned int order, bool clean,
				  struct p2p_region **region)
{
	struct p2p_fit fit = { .p2p = p2p, .order = order, .clean = clean };

	return gen_pool_alloc_algo_owner(p2p->pool, size, p2p_algo_fit, &fit,
					 (void **)region);
}

/*
 * Allocate @size bytes and one pgmap reference for each of @refs users.
 * Kernel users (@cached) are served first from this CPU's cache; mmap()
 * takes memory from the pool, clean memory first if a run is long enough;
 * an export that folds its memory (@order > 0) first looks for a run
 * aligned to 2^@order pages, clean then any.
 */
static void *__p2p_alloc(struct pci_dev *pdev, size_t size, unsigned long refs,
			 bool cached, unsigned int order)
{
	int class = cached ? p2p_cache_class(size) : -1;
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	unsigned long addr = 0;

	if (!size)
		return NULL;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || READ_ONCE(p2p->closing))
		return NULL;
	if (class >= 0) {
		addr = p2p_cache_get(p2p, class);
		if (addr)
			region = p2p_region_of(p2p, addr);
	} else if (!cached) {
		if (order)
			addr = p2p_pool_fit(p2p, size, order, true, &region) ?:
			       p2p_pool_fit(p2p, size, order, false, &region);
		if (!addr)
			addr = p2p_pool_fit(p2p, size, 0, true, &region);
	}
	if (!addr) {
		addr = gen_pool_alloc_owner(p2p->pool, size, (void **)&region);
		if (!addr && p2p_cache_drain(p2p))
			addr = gen_pool_alloc_owner(p2p->pool, size,
						    (void **)&region);
		if (!addr)
			return NULL;
		/*
		 * The dirty bits of a kernel user's pages are left as they
		 * are: they mean nothing while the pages are held, and every
		 * way back to the pool marks them dirty.
		 */
	}
	/* A range whose pgmap is dying hands out nothing. */
	if (unlikely(!percpu_ref_tryget_live_rcu(&region->pgmap.ref))) {
		p2p_pool_free_dirty(p2p, region, addr, size);
		return NULL;
	}
	if (refs > 1)
		percpu_ref_get_many(&region->pgmap.ref, refs - 1);
	return (void *)addr;
}

void *p2p_alloc(struct pci_dev *pdev, size_t size, unsigned long refs,
		bool cached)
{
	return __p2p_alloc(pdev, size, refs, cached, 0);
}

/*
 * Memory for a holder that keeps its pages until it frees them and folds
 * them with p2p_folios_hand_out() (a dma-buf): from the pool, aligned to
 * P2P_FOLD_ORDER where a run of that size is free, with one pgmap
 * reference.
 */
void *p2p_alloc_folded(struct pci_dev *pdev, size_t size)
{
	unsigned int order = size >> PAGE_SHIFT >= BIT(P2P_FOLD_ORDER) ?
			     P2P_FOLD_ORDER : 0;

	return __p2p_alloc(pdev, size, 1, false, order);
}

/*
 * A page free in the pool has no reference: the mm calls folio_free
 * (p2p_page_free()) when the last one goes and leaves the count at zero.
 * Whoever gives pages of the pool to the mm (an mmap() of allocate in
 * mmap.c, a dma-buf in dmabuf.c) first gives each one a reference of its
 * own: vm_insert_pages() refuses a page without one (-EINVAL, a spurious
 * SIGBUS). Dropped with put_page() once the page is mapped, it leaves the
 * mapping's as the last, and the page comes back through folio_free;
 * a holder that keeps its pages to the end and frees them as kernel
 * memory ends its own with p2p_pages_take_back() first.
 */
void p2p_pages_hand_out(void *kaddr, unsigned long npages)
{
	struct page *page;
	unsigned long i;

	for (i = 0; i < npages; i++) {
		page = virt_to_page(kaddr + (i << PAGE_SHIFT));
		VM_WARN_ON_ONCE_PAGE(page_ref_count(page), page);
		set_page_count(page, 1);
	}
}

/* The holder's reference of each page is the last: the pages are free. */
void p2p_pages_take_back(void *kaddr, unsigned long npages)
{
	struct page *page;
	unsigned long i;

	for (i = 0; i < npages; i++) {
		page = virt_to_page(kaddr + (i << PAGE_SHIFT));
		VM_WARN_ON_ONCE_PAGE(page_ref_count(page) != 1, page);
		set_page_count(page, 0);
	}
}

/*
 * Give back @npages pages at @kaddr, of one allocation, that nobody but
 * their holder reached since p2p_alloc() (an mmap()'s pages that were
 * never faulted in): their dirty bits are still right, so they go to the
 * pool as they are, and the pgmap reference each held is dropped.
 */
void p2p_free_untouched(void *kaddr, unsigned long npages)
{
	struct p2p_region *region = p2p_page_region(virt_to_page(kaddr));
	struct pci_p2pdma *p2p;

	/* The provider state outlives every allocation: see p2p_page_free(). */
	p2p = rcu_dereference_protected(region->provider->p2pdma, 1);
	p2p_pool_put(p2p, (unsigned long)kaddr, npages << PAGE_SHIFT);
	percpu_ref_put_many(&region->pgmap.ref, npages);
}

/*
 * Hand out @npages pages at @kaddr to a holder that keeps them until it
 * frees them (a dma-buf: nothing but the holder's p2p_folios_take_back()
 * returns them). Each run of 2^P2P_FOLD_ORDER pages whose first PFN is
 * aligned to it becomes one folio of that order (zone_device_folio_init(),
 * as drivers of device-private memory make their large folios), which a
 * user mapping maps with one PMD; the other pages stay order-0 folios.
 * Each folio gets one reference, the holder's, as p2p_pages_hand_out()
 * gives each page. The init takes a pgmap reference per page, given back
 * at once: the holder has its own (p2p_alloc_folded()).
 */
void p2p_folios_hand_out(void *kaddr, unsigned long npages)
{
	unsigned long n = BIT(P2P_FOLD_ORDER), i = 0;
	struct dev_pagemap *pgmap;
	struct page *page;

	while (i < npages) {
		page = virt_to_page(kaddr + (i << PAGE_SHIFT));
		if (!P2P_FOLD_ORDER || npages - i < n ||
		    !IS_ALIGNED(page_to_pfn(page), n)) {
			p2p_pages_hand_out(page_to_virt(page), 1);
			i++;
			continue;
		}
		pgmap = &p2p_page_region(page)->pgmap;
		zone_device_folio_init(page_folio(page), pgmap, P2P_FOLD_ORDER);
		/* The init locks it, for device-private migration. */
		folio_unlock(page_folio(page));
		percpu_ref_put_many(&pgmap->ref, n);
		i += n;
	}
}

/*
 * The holder's reference of each folio of @npages pages at @kaddr is the
 * last: they go back to the pool, as order-0 pages without a reference
 * (what every other user of the pool expects). A folio of a higher order
 * is taken apart page by page the way the mm resets a device page of an
 * earlier large folio (zone_device_page_init() at order 0, which clears
 * the head and order bits and the compound head), and each page's
 * reference and pgmap reference that the reset takes are dropped.
 */
void p2p_folios_take_back(void *kaddr, unsigned long npages)
{
	unsigned long i = 0, j, n;
	struct dev_pagemap *pgmap;
	struct folio *folio;
	struct page *page;

	while (i < npages) {
		page = virt_to_page(kaddr + (i << PAGE_SHIFT));
		folio = page_folio(page);
		n = folio_nr_pages(folio);
		if (n == 1) {
			p2p_pages_take_back(page_to_virt(page), 1);
			i++;
			continue;
		}
		VM_WARN_ON_ONCE_FOLIO(folio_ref_count(folio) != 1, folio);
		VM_WARN_ON_ONCE_FOLIO(folio_mapped(folio), folio);
		pgmap = &p2p_page_region(page)->pgmap;
		folio_set_count(folio, 0);
		for (j = 0; j < n; j++) {
			zone_device_page_init(page + j, pgmap, 0);
			unlock_page(page + j);
			set_page_count(page + j, 0);
		}
		percpu_ref_put_many(&pgmap->ref, n);
		i += n;
	}
}

/**
 * pci_alloc_p2pmem() - allocate P2P memory from a provider
 * @pdev: the provider
 * @size: bytes to allocate; the pool hands out whole pages, so the
 *	allocation is rounded up to a multiple of PAGE_SIZE
 *
 * The memory is aligned to PAGE_SIZE and physically contiguous within one
 * registered range. Its kernel
 * virtual address is returned; pci_p2pmem_virt_to_bus() gives the PCI bus
 * address, and the pages can be put in a scatterlist for dma_map_sg().
 * The provider's unbind waits until the memory is freed. The memory is
 * not cleared: it holds what its last user left. An allocation of a
 * power of two pages up to 256 (1 MiB with 4 KiB pages) is served first
 * from this CPU's cache of memory freed by pci_free_p2pmem(); the pool is
 * searched otherwise (first fit), and the caches are emptied into it
 * before an allocation fails. Nothing is cleared or written in the
 * background.
 *
 * Context: any, including atomic and interrupt context; does not sleep
 * (RCU read side, a per-CPU spinlock, the lockless genalloc bitmap).
 *
 * Return: the virtual address, or NULL if @pdev has no P2P memory, not
 * enough contiguous memory is free, @size is 0, or the provider is being
 * unbound.
 */
void *pci_alloc_p2pmem(struct pci_dev *pdev, size_t size)
{
	return p2p_alloc(pdev, size, 1, true);
}
EXPORT_SYMBOL_GPL(pci_alloc_p2pmem);

/**
 * pci_free_p2pmem() - free memory from pci_alloc_p2pmem()
 * @pdev: the provider it came from
 * @addr: the address pci_alloc_p2pmem() returned
 * @size: the size in bytes passed to pci_alloc_p2pmem(); freeing a
 *	different size corrupts the pool
 *
 * Drops the reference the allocation held on the provider's pages, which
 * may let a pending unbind of the provider finish. An allocation of a
 * power of two pages up to 256 is kept in this CPU's cache for the next
 * allocation of its size (it counts as available) while the cache has
 * room: up to 8 of each size up to 16 pages, one of each larger size. The
 * rest goes back to the pool,
 * marked as holding data, so that an mmap() of p2pmem/allocate clears it
 * before userspace sees it. Warns once if @pdev has no P2P memory or
 * @addr is not in its P2P memory.
 *
 * Context: any, including atomic and interrupt context; does not sleep.
 */
void pci_free_p2pmem(struct pci_dev *pdev, void *addr, size_t size)
{
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	int class;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (WARN_ON_ONCE(!p2p))
		return;
	region = p2p_region_of(p2p, (unsigned long)addr);
	if (WARN_ON_ONCE(!region))
		return;
	/* After an unbind's grace period nothing goes into the caches. */
	class = p2p_cache_class(size);
	if (class < 0 || READ_ONCE(p2p->closing) ||
	    !p2p_cache_put(p2p, class, (unsigned long)addr))
		p2p_pool_free_dirty(p2p, region, (unsigned long)addr, size);
	percpu_ref_put(&region->pgmap.ref);
}
EXPORT_SYMBOL_GPL(pci_free_p2pmem);

/**
 * pci_p2pmem_virt_to_bus() - PCI bus address of P2P memory
 * @pdev: the provider the memory came from
 * @addr: a kernel virtual address inside memory from pci_alloc_p2pmem()
 *
 * The bus address is what a device below the same upstream bridge puts on
 * the wire to reach the memory; a device that goes through the host bridge
 * needs a DMA mapping instead (dma_map_sg()).
 *
 * Context: any; does not sleep.
 *
 * Return: the bus address; 0 if @addr is NULL or @pdev has no P2P memory;
 * all ones ((pci_bus_addr_t)-1) if @addr is not in @pdev's P2P memory.
 */
pci_bus_addr_t pci_p2pmem_virt_to_bus(struct pci_dev *pdev, void *addr)
{
	struct pci_p2pdma *p2p;
	phys_addr_t bus;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || !addr)
		return 0;
	/* The pool's "physical" addresses are the BAR's bus addresses. */
	bus = gen_pool_virt_to_phys(p2p->pool, (unsigned long)addr);
	return bus == (phys_addr_t)-1 ? (pci_bus_addr_t)-1 : bus;
}
EXPORT_SYMBOL_GPL(pci_p2pmem_virt_to_bus);

/**
 * pci_p2pmem_alloc_sgl() - allocate P2P memory as a scatterlist
 * @pdev: the provider
 * @nents: set to the number of scatterlist entries on success (always 1);
 *	left alone on failure
 * @length: bytes to allocate, up to 4 GiB - 1; the pool rounds the
 *	allocation up to whole pages
 *
 * The memory is contiguous and aligned to PAGE_SIZE, so the list has a
 * single entry of @length bytes. Free it with pci_p2pmem_free_sgl().
 *
 * Context: process context; may sleep (allocates the list with GFP_KERNEL).
 *
 * Return: the scatterlist, or NULL if @length is 0, memory is short (for
 * the list or the P2P memory), @pdev has no P2P memory, or the provider
 * is being unbound.
 */
struct scatterlist *pci_p2pmem_alloc_sgl(struct pci_dev *pdev,
					 unsigned int *nents, u32 length)
{
	void *addr = pci_alloc_p2pmem(pdev, length);
	struct scatterlist *sg = NULL;

	if (addr)
		sg = kmalloc(sizeof(*sg), GFP_KERNEL);
	if (!sg) {
		if (addr)
			pci_free_p2pmem(pdev, addr, length);
		return NULL;
	}
	sg_init_one(sg, addr, length);
	*nents = 1;
	return sg;
}
EXPORT_SYMBOL_GPL(pci_p2pmem_alloc_sgl);

/**
 * pci_p2pmem_free_sgl() - free a scatterlist from pci_p2pmem_alloc_sgl()
 * @pdev: the provider it came from
 * @sgl: the list; its memory and the list itself are freed
 *
 * Context: any; does not sleep.
 */
void pci_p2pmem_free_sgl(struct pci_dev *pdev, struct scatterlist *sgl)
{
	struct scatterlist *sg;

	/* Lists from pci_p2pmem_alloc_sgl() have one entry; walk any length. */
	for (sg = sgl; sg; sg = sg_next(sg))
		pci_free_p2pmem(pdev, sg_virt(sg), sg->length);
	kfree(sgl);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_free_sgl);

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/alloc-kunit.h"
#include "tests/pool-model-kunit.h"
#endif
