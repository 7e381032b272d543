/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pool model suite: random operations on a provider's pool, from fixed
 * seeds, each checked against a shadow model of what the test holds.
 *
 * The provider gets one region of PM_PAGES ordinary pages, set up the way
 * the allocator suite sets up its small one (alloc-kunit.h), large enough
 * for the pool to fragment. The operations are those of the pool's users:
 * kernel allocations of every per-CPU cache class and of other sizes and
 * their frees, scatterlists, writes into held memory, mmap() of "allocate"
 * (p2p_alloc(), p2p_clean(), its reference dropped the way the mmap check
 * drops it) and munmap() of whole mappings or of their ends (each page
 * back through p2p_run_add() and its reference put, as p2p_page_free()
 * does), p2p_runs_flush() and p2p_cache_drain().
 *
 * After every step: no two live allocations overlap and each lies inside
 * the region; the pgmap's count is 1 + the references the model holds;
 * "available" is exactly the pool's size minus what the model holds (one
 * thread: nothing moves behind its back), and it is never above the size,
 * not even at the moment memory reaches the pool (a stub of p2p_pool_put()
 * looks then); what the pool holds the model does not; no page that is
 * free in the pool and marked clean holds a byte the model wrote; an
 * allocation fails only if the model has no free run long enough; mmap()
 * takes the first run that is free and clean if there is one; its pages
 * read zero after p2p_clean(); and the last byte written into an
 * allocation is still there when it is freed. After a drain, the pool's
 * bitmap is the complement of the model's, and every so often every free
 * page marked clean is read to be zero.
 *
 * The SMP case runs a thread on every online CPU at once, each with a
 * model of its own allocations and no check that needs the pool to
 * itself; no page is held twice (a shared bitmap of held pages, set with
 * test_and_set_bit()), "available" never exceeds the size, and mappings
 * read zero. Once the threads are done, the references, "available" and
 * the pool's bitmap are checked against all the models together.
 *
 * A failure names the seed and the step; the same seed replays the same
 * operations (the one-thread cases run pinned to one CPU, so the per-CPU
 * cache sees them in the same order). Included at the end of pool.c.
 */

#include "p2pdma-kunit.h"

#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/prandom.h>

#define PM_ORDER	8
#define PM_PAGES	BIT(PM_ORDER)
#define PM_POOL		(PAGE_SIZE << PM_ORDER)
/* Operations of each one-thread case, and of each thread of the SMP one. */
#define PM_OPS		25000
#define PM_SMP_OPS	20000
/* Allocations stop above this many pages held (shared by the threads). */
#define PM_HELD_MAX	(PM_PAGES * 3 / 4)
/* Read every free clean page at every this many drains. */
#define PM_SCAN_EVERY	64

enum { PM_RP, PM_PROV, PM_FNS };

static const struct fake_line pm_topology[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_RP_LINE(PM_RP),
	FAKE_EP_LINE(PM_PROV, PM_RP, 1),
};

static struct fake_pci *pm_fp;
static struct fake_fn *pm_fn[PM_FNS];
static struct fake_fn *pm_prov;
static struct page *pm_pages;
static struct p2p_region pm_region;
static bool pm_ref_live, pm_region_added;

enum pm_kind { PM_KERNEL, PM_SGL, PM_USER };

/* One live allocation of the model: pages [first, first + npages). */
struct pm_alloc {
	enum pm_kind kind;
	unsigned long first, npages;
	size_t size;			/* bytes asked for (PM_KERNEL) */
	struct scatterlist *sg;		/* PM_SGL */
	unsigned long mark;		/* region offset of the last byte written + 1 */
	u8 mark_byte;
};

struct pm_model {
	u64 seed;
	int cpu;			/* the SMP case's thread; -1 */
	bool shared;			/* other threads use the pool too */
	struct rnd_state rnd;
	unsigned long step, ops;
	const char *op;
	struct pm_alloc live[PM_PAGES];
	unsigned int nlive;
	unsigned long held;		/* pages this model holds */
	unsigned long refs;		/* pgmap references it holds */
	unsigned long drains;
	unsigned long maps, refused, fragmented;	/* for the log */
	unsigned long *held_map;	/* pages held, by every model */
	unsigned long *nonzero;		/* pages holding a byte written */
	DECLARE_BITMAP(own_held, PM_PAGES);
	DECLARE_BITMAP(own_nonzero, PM_PAGES);
	struct completion done;
	bool failed, releasing;
	unsigned long fail_step;	/* where the first failure was */
	const char *fail_op;
	char why[200];
};

static void pm_ref_release(struct percpu_ref *ref)
{
}

static struct pci_p2pdma *pm_p2p(void)
{
	return rcu_dereference_protected(pm_prov->pdev->p2pdma, 1);
}

static unsigned long pm_base(void)
{
	return (unsigned long)page_address(pm_pages);
}

static void *pm_addr(unsigned long page)
{
	return (void *)(pm_base() + (page << PAGE_SHIFT));
}

static long pm_refcount(void)
{
	return atomic_long_read(&pm_region.pgmap.ref.data->count);
}

/* The pool's own bitmap of the region: a set bit is a page given out. */
static unsigned long *pm_pool_bits(void)
{
	return list_first_entry(&pm_p2p()->pool->chunks,
				struct gen_pool_chunk, next_chunk)->bits;
}

static __printf(2, 3) void pm_fail(struct pm_model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return;
	m->failed = true;
	m->fail_step = m->step;
	m->fail_op = m->releasing ? "giving everything back" : m->op;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

static void pm_report(struct kunit *test, struct pm_model *m)
{
	if (!m->failed)
		return;
	if (m->cpu >= 0)
		KUNIT_FAIL(test, "seed %llu, thread of CPU %d, step %lu (%s): %s",
			   m->seed, m->cpu, m->fail_step, m->fail_op, m->why);
	else
		KUNIT_FAIL(test, "seed %llu, step %lu (%s): %s", m->seed,
			   m->fail_step, m->fail_op, m->why);
}

static u32 pm_rand(struct pm_model *m, u32 n)
{
	return prandom_u32_state(&m->rnd) % n;
}

static void pm_model_init(struct pm_model *m, u64 seed, int cpu,
			  unsigned long *held_map, unsigned long *nonzero)
{
	m->seed = seed;
	m->cpu = cpu;
	m->shared = cpu >= 0;
	prandom_seed_state(&m->rnd, seed + (cpu >= 0 ? cpu + 1 : 0));
	m->op = "setup";
	m->held_map = held_map ?: m->own_held;
	m->nonzero = nonzero ?: m->own_nonzero;
	init_completion(&m->done);
}

/*
 * Start of a case: the pool whole and drained, every page holding a
 * nonzero byte and marked dirty, like a BAR full of someone's data.
 */
static void pm_reset(struct kunit *test, unsigned long *nonzero)
{
	p2p_cache_drain(pm_p2p());
	KUNIT_ASSERT_EQ(test, gen_pool_avail(pm_p2p()->pool), PM_POOL);
	KUNIT_ASSERT_EQ(test, pm_refcount(), 1);
	memset(pm_addr(0), 0xa5, PM_POOL);
	bitmap_fill(pm_region.dirty, PM_PAGES);
	bitmap_fill(nonzero, PM_PAGES);
}

/*
 * The model only gets memory that nobody else holds, inside the region.
 * Returns false (having failed) otherwise; the memory is then left alone.
 */
static bool pm_take(struct pm_model *m, enum pm_kind kind, void *addr,
		    unsigned long npages, size_t size, struct scatterlist *sg)
{
	unsigned long a = (unsigned long)addr, first, i;
	struct pm_alloc *l;

	if (a < pm_base() || a - pm_base() > PM_POOL - (npages << PAGE_SHIFT) ||
	    !PAGE_ALIGNED(a)) {
		pm_fail(m,
			"%lu pages at offset %#lx of the region (%#lx bytes) are not page-aligned inside it",
			npages, a - pm_base(), PM_POOL);
		return false;
	}
	first = (a - pm_base()) >> PAGE_SHIFT;
	for (i = first; i < first + npages; i++) {
		if (test_and_set_bit(i, m->held_map)) {
			pm_fail(m, "pages [%lu, %lu) handed out, but page %lu is held already",
				first, first + npages, i);
			while (i-- > first)
				clear_bit(i, m->held_map);
			return false;
		}
	}
	l = &m->live[m->nlive++];
	*l = (struct pm_alloc){ .kind = kind, .first = first, .npages = npages,
				.size = size, .sg = sg };
	m->held += npages;
	return true;
}

/*
 * An allocation of @npages failed. With the pool to itself, the model
 * expects that only if it has no free run of @npages pages: the pool
 * empties the per-CPU caches into itself before it gives up.
 */
static void pm_short(struct pm_model *m, unsigned long npages)
{
	unsigned long at;

	m->refused++;
	if (npages <= PM_PAGES - m->held)
		m->fragmented++;
	if (m->shared)
		return;
	at = bitmap_find_next_zero_area(m->held_map, PM_PAGES, 0, npages, 0);
	if (at < PM_PAGES)
		pm_fail(m, "an allocation of %lu pages failed, but pages [%lu, %lu) are free",
			npages, at, at + npages);
}

/* The byte last written into pages [@first, @first + @n) is still there. */
static void pm_check_mark(struct pm_model *m, struct pm_alloc *l,
			  unsigned long first, unsigned long n)
{
	unsigned long off = l->mark - 1;
	u8 now;

	if (!l->mark || off < first << PAGE_SHIFT ||
	    off >= (first + n) << PAGE_SHIFT)
		return;
	now = *(u8 *)(pm_base() + off);
	if (now != l->mark_byte)
		pm_fail(m, "byte %#lx of page %lu changed from %#x to %#x while held",
			off % PAGE_SIZE, off >> PAGE_SHIFT, l->mark_byte, now);
}

static void pm_kalloc(struct pm_model *m, bool sgl)
{
	static const u8 other[] = { 3, 5, 6, 7, 9, 12, 24, 32 };
	struct scatterlist *sg = NULL;
	unsigned long npages;
	unsigned int nents = 0;
	size_t size;
	void *addr;

	if (pm_rand(m, 4))
		npages = 1 << pm_rand(m, P2P_CACHE_CLASSES);
	else
		npages = other[pm_rand(m, ARRAY_SIZE(other))];
	size = ((npages - 1) << PAGE_SHIFT) + 1 + pm_rand(m, PAGE_SIZE);
	if (sgl) {
		m->op = "pci_p2pmem_alloc_sgl";
		sg = pci_p2pmem_alloc_sgl(pm_prov->pdev, &nents, size);
		addr = sg ? sg_virt(sg) : NULL;
		if (sg && (nents != 1 || sg->length != size || !sg_is_last(sg)))
			pm_fail(m, "a list of %u entries, the first of %u bytes, for %zu bytes",
				nents, sg->length, size);
	} else {
		m->op = "pci_alloc_p2pmem";
		addr = pci_alloc_p2pmem(pm_prov->pdev, size);
	}
	if (!addr) {
		pm_short(m, npages);
		return;
	}
	m->refs++;
	if (!pm_take(m, sgl ? PM_SGL : PM_KERNEL, addr, npages, size, sg))
		m->refs--;	/* left alone, with its reference */
}

/* Forget live allocation @i of the model, before it goes back. */
static struct pm_alloc pm_drop(struct pm_model *m, unsigned int i)
{
	struct pm_alloc l = m->live[i];
	unsigned long p;

	m->live[i] = m->live[--m->nlive];
	for (p = l.first; p < l.first + l.npages; p++)
		clear_bit(p, m->held_map);
	m->held -= l.npages;
	return l;
}

static void pm_kfree(struct pm_model *m, unsigned int i)
{
	struct pm_alloc l;

	pm_check_mark(m, &m->live[i], m->live[i].first, m->live[i].npages);
	/* The model lets go first: see pm_pool_put_watch(). */
	l = pm_drop(m, i);
	m->refs--;
	if (l.kind == PM_SGL) {
		m->op = "pci_p2pmem_free_sgl";
		pci_p2pmem_free_sgl(pm_prov->pdev, l.sg);
	} else {
		m->op = "pci_free_p2pmem";
		pci_free_p2pmem(pm_prov->pdev, pm_addr(l.first), l.size);
	}
}

/*
 * mmap() of "allocate": memory and a reference for each page and one for
 * the check on the way back to userspace, the dirty pages cleared, the
 * check's reference dropped.
 */
static void pm_mmap(struct pm_model *m)
{
	unsigned long npages = 1 + pm_rand(m, 16), expect = PM_PAGES, first, bad;
	DECLARE_BITMAP(taken, PM_PAGES);
	void *addr, *nz;
	int ret;

	m->op = "mmap";
	if (!pm_rand(m, 8))
		npages = 32 << pm_rand(m, 2);
	/* Most like p2p_alloc_mapping(); else a short pool drains the runs. */
	if (pm_rand(m, 4))
		p2p_runs_flush(pm_p2p());
	if (!m->shared) {
		/* The first run that is free in the pool and clean. */
		bitmap_or(taken, pm_pool_bits(), pm_region.dirty, PM_PAGES);
		expect = bitmap_find_next_zero_area(taken, PM_PAGES, 0, npages, 0);
	}
	addr = p2p_alloc(pm_prov->pdev, npages << PAGE_SHIFT, npages + 1, false);
	if (!addr) {
		pm_short(m, npages);
		return;
	}
	m->refs += npages + 1;
	m->maps++;
	if (!pm_take(m, PM_USER, addr, npages, 0, NULL))
		return;
	first = m->live[m->nlive - 1].first;
	if (expect < PM_PAGES && first != expect)
		pm_fail(m,
			"a mapping of %lu pages got page %lu, not the first clean run at page %lu",
			npages, first, expect);
	ret = p2p_clean(&pm_region, first, npages);
	if (ret)
		pm_fail(m, "p2p_clean() of pages [%lu, %lu) returned %d", first,
			first + npages, ret);
	/*
	 * The bits of the pages held are stable; other CPUs' threads mark
	 * their neighbours in the same words (as in p2p_clean()).
	 */
	bad = data_race(find_next_bit(pm_region.dirty, first + npages, first));
	if (bad < first + npages)
		pm_fail(m, "page %lu of a new mapping is still marked dirty after p2p_clean()",
			bad);
	nz = memchr_inv(addr, 0, npages << PAGE_SHIFT);
	if (nz)
		pm_fail(m,
			"byte %#lx of page %lu of a new mapping [%lu, %lu) reads %#x after p2p_clean()",
			(unsigned long)(nz - addr) % PAGE_SIZE,
			first + (nz - addr) / PAGE_SIZE, first, first + npages,
			*(u8 *)nz);
	for (bad = first; bad < first + npages; bad++)
		clear_bit(bad, m->nonzero);
	percpu_ref_put(&pm_region.pgmap.ref);
	m->refs--;
}

/*
 * munmap() of pages [@first, @first + @n) of the mapping at live[@i],
 * which must be all of it or one end: each page goes back in address
 * order as p2p_page_free() sends it, dirty if the model wrote it (and now
 * and then when it did not: a pinned writer may mark a page it left as it
 * was).
 */
static void pm_unmap(struct pm_model *m, unsigned int i, unsigned long first,
		     unsigned long n)
{
	struct pm_alloc *l = &m->live[i];
	unsigned long p;
	bool dirty;

	m->op = "munmap";
	pm_check_mark(m, l, first, n);
	if (n == l->npages) {
		pm_drop(m, i);
	} else {
		if (first == l->first)
			l->first += n;
		l->npages -= n;
		m->held -= n;
		for (p = first; p < first + n; p++)
			clear_bit(p, m->held_map);
	}
	for (p = first; p < first + n; p++) {
		dirty = test_bit(p, m->nonzero) || !pm_rand(m, 8);
		rcu_read_lock();
		p2p_run_add(pm_p2p(), &pm_region, (unsigned long)pm_addr(p),
			    dirty);
		rcu_read_unlock();
		percpu_ref_put(&pm_region.pgmap.ref);
		m->refs--;
	}
}

static void pm_free(struct pm_model *m, unsigned int i)
{
	struct pm_alloc *l = &m->live[i];
	unsigned long n;

	if (l->kind != PM_USER) {
		pm_kfree(m, i);
		return;
	}
	n = l->npages;
	/* Half the time all of it, else one end. */
	if (n > 1 && pm_rand(m, 2))
		n = 1 + pm_rand(m, n - 1);
	pm_unmap(m, i, pm_rand(m, 2) ? l->first : l->first + l->npages - n, n);
}

/* Write a nonzero byte over part of live allocation @i. */
static void pm_write(struct pm_model *m, unsigned int i)
{
	struct pm_alloc *l = &m->live[i];
	unsigned long len = l->npages << PAGE_SHIFT, off, n, p;
	u8 byte = 1 + pm_rand(m, 255);

	m->op = "write";
	if (l->kind != PM_USER)
		len = l->size;
	off = pm_rand(m, len);
	n = pm_rand(m, 2) ? 1 : 1 + pm_rand(m, len - off);
	off += l->first << PAGE_SHIFT;
	memset((void *)(pm_base() + off), byte, n);
	/* Atomic: the SMP case's threads share the bitmap. */
	for (p = off >> PAGE_SHIFT; p <= (off + n - 1) >> PAGE_SHIFT; p++)
		set_bit(p, m->nonzero);
	l->mark = off + n;
	l->mark_byte = byte;
}

/* Every free page marked clean reads zero (the model holds the rest). */
static void pm_scan_clean(struct pm_model *m)
{
	unsigned long p;
	void *nz;

	for (p = 0; p < PM_PAGES; p++) {
		if (test_bit(p, m->held_map) || test_bit(p, pm_region.dirty))
			continue;
		nz = memchr_inv(pm_addr(p), 0, PAGE_SIZE);
		if (nz) {
			pm_fail(m, "free page %lu is marked clean but byte %#lx reads %#x",
				p, (unsigned long)(nz - pm_addr(p)), *(u8 *)nz);
			return;
		}
	}
}

/*
 * After a drain, with the pool to itself: the pool is exactly what the
 * model does not hold.
 */
static void pm_check_quiet(struct pm_model *m, bool scan)
{
	size_t free = PM_POOL - (m->held << PAGE_SHIFT);
	unsigned long p;

	if (gen_pool_avail(pm_p2p()->pool) != free)
		pm_fail(m, "after a drain the pool has %zu bytes free, the model %zu",
			gen_pool_avail(pm_p2p()->pool), free);
	if (!bitmap_equal(pm_pool_bits(), m->held_map, PM_PAGES)) {
		for (p = 0; p < PM_PAGES; p++)
			if (test_bit(p, pm_pool_bits()) != test_bit(p, m->held_map))
				break;
		pm_fail(m, "after a drain page %lu is %s in the pool but %s in the model",
			p, test_bit(p, pm_pool_bits()) ? "given out" : "free",
			test_bit(p, m->held_map) ? "held" : "free");
	}
	if (scan)
		pm_scan_clean(m);
}

/* What is true after every step of a thread that has the pool to itself. */
static void pm_check_step(struct pm_model *m)
{
	size_t avail = p2p_available(pm_p2p());
	size_t free = PM_POOL - (m->held << PAGE_SHIFT);
	DECLARE_BITMAP(bad, PM_PAGES);
	unsigned long p;
	long refs = pm_refcount();

	if (refs != 1 + m->refs)
		pm_fail(m, "the pgmap count is %ld, but the model holds %lu references",
			refs, m->refs);
	if (avail != free)
		pm_fail(m, "p2p_available() is %zu, but the model leaves %zu of %lu bytes",
			avail, free, PM_POOL);
	if (!bitmap_subset(m->held_map, pm_pool_bits(), PM_PAGES)) {
		bitmap_andnot(bad, m->held_map, pm_pool_bits(), PM_PAGES);
		pm_fail(m, "page %lu is held but free in the pool",
			find_first_bit(bad, PM_PAGES));
	}
	/* Free in the pool, marked clean, written: never. */
	bitmap_andnot(bad, m->nonzero, pm_pool_bits(), PM_PAGES);
	bitmap_andnot(bad, bad, pm_region.dirty, PM_PAGES);
	p = find_first_bit(bad, PM_PAGES);
	if (p < PM_PAGES)
		pm_fail(m, "page %lu is free in the pool and marked clean, but holds data (%s)",
			p, memchr_inv(pm_addr(p), 0, PAGE_SIZE) ?
			"and is not zero" : "though it reads zero now");
}

/* Available at any moment never exceeds the pool's size. */
static void pm_check_available(struct pm_model *m)
{
	size_t avail = p2p_available(pm_p2p());

	if (avail > PM_POOL)
		pm_fail(m, "p2p_available() is %zu, above the pool's %lu bytes",
			avail, PM_POOL);
}

/* The model of the one-thread case running, for pm_pool_put_watch(). */
static struct pm_model *pm_watched;

/*
 * Memory reaching the pool: at that moment "available" may not count it
 * twice (nor anything the model holds), and none of it is the model's.
 */
static void pm_pool_put_watch(struct pci_p2pdma *p2p, unsigned long addr,
			      size_t size)
{
	struct pm_model *m = pm_watched;
	unsigned long first = (addr - pm_base()) >> PAGE_SHIFT;
	unsigned long n = size >> PAGE_SHIFT, held;
	size_t avail;

	gen_pool_free(p2p->pool, addr, size);
	avail = p2p_available(p2p);
	if (!m)
		return;
	if (avail > PM_POOL - (m->held << PAGE_SHIFT))
		pm_fail(m,
			"p2p_available() was %zu as pages [%lu, %lu) reached the pool, above the %lu bytes the model leaves",
			avail, first, first + n,
			PM_POOL - (m->held << PAGE_SHIFT));
	held = find_next_bit(m->held_map, first + n, first);
	if (held < first + n)
		pm_fail(m, "page %lu went back to the pool while the model holds it",
			held);
}

/* One random operation. */
static void pm_step(struct pm_model *m)
{
	unsigned int r = pm_rand(m, 100), i;
	bool full;

	full = m->shared ? m->held >= PM_HELD_MAX / num_online_cpus() :
			   m->held >= PM_HELD_MAX;
	/* An allocation when full, or a free with nothing held: the other. */
	if (r < 44 && full && m->nlive)
		r = 44;
	if (r >= 44 && r < 85 && !m->nlive)
		r = 0;
	i = m->nlive ? pm_rand(m, m->nlive) : 0;
	if (r < 30) {
		pm_kalloc(m, false);
	} else if (r < 36) {
		pm_kalloc(m, true);
	} else if (r < 44) {
		pm_mmap(m);
	} else if (r < 70) {
		pm_free(m, i);
	} else if (r < 85) {
		pm_write(m, i);
	} else if (r < 92) {
		m->op = "p2p_runs_flush";
		p2p_runs_flush(pm_p2p());
	} else {
		m->op = "p2p_cache_drain";
		p2p_cache_drain(pm_p2p());
		if (!m->shared)
			pm_check_quiet(m, !(++m->drains % PM_SCAN_EVERY));
	}
}

/* Give back everything the model holds. */
static void pm_release(struct pm_model *m)
{
	m->releasing = true;
	while (m->nlive) {
		if (m->live[m->nlive - 1].kind == PM_USER)
			pm_unmap(m, m->nlive - 1, m->live[m->nlive - 1].first,
				 m->live[m->nlive - 1].npages);
		else
			pm_kfree(m, m->nlive - 1);
	}
}

static const u64 pm_seeds[] = { 1, 20240917, 0x9e3779b97f4a7c15ULL, 2, 65537,
				 0xdeadbeefULL };

static void pm_seed_desc(const u64 *seed, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "seed-%llu", *seed);
}

KUNIT_ARRAY_PARAM(pm_seed, pm_seeds, pm_seed_desc);

/*
 * PM_OPS random operations on one CPU, the model checked after each; at
 * the end everything goes back and the pool is whole, every free page
 * marked clean reading zero.
 */
static void pool_model_test(struct kunit *test)
{
	u64 seed = *(const u64 *)test->param_value;
	struct pm_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	pm_model_init(m, seed, -1, NULL, NULL);
	pm_reset(test, m->nonzero);
	pm_watched = m;
	kunit_activate_static_stub(test, p2p_pool_put, pm_pool_put_watch);
	migrate_disable();
	for (m->step = 0; m->step < PM_OPS && !m->failed; m->step++) {
		pm_step(m);
		pm_check_step(m);
		cond_resched();
	}
	m->ops = m->step;
	pm_release(m);
	p2p_cache_drain(pm_p2p());
	pm_check_step(m);
	pm_check_quiet(m, true);
	migrate_enable();
	kunit_deactivate_static_stub(test, p2p_pool_put);
	pm_watched = NULL;
	pm_report(test, m);
	kunit_info(test, "seed %llu: %lu operations, %lu mappings, %lu drains, %lu allocations refused (%lu with enough pages free, not together)\n",
		   seed, m->ops, m->maps, m->drains, m->refused, m->fragmented);
}

static int pm_thread(void *data)
{
	struct pm_model *m = data;

	for (m->step = 0; m->step < PM_SMP_OPS && !m->failed; m->step++) {
		pm_step(m);
		pm_check_available(m);
		cond_resched();
	}
	complete(&m->done);
	return 0;
}

/*
 * A thread on every online CPU at once, each with its model of its own
 * allocations; the pages held, of every thread, in one bitmap that a
 * thread sets a bit of only if it was clear. Once they are done, with the
 * pool quiet: the references, "available" and the pool's bitmap against
 * all the models together, and every free page marked clean reads zero.
 */
static void pool_model_smp_test(struct kunit *test)
{
	u64 seed = *(const u64 *)test->param_value;
	unsigned long *held, *nonzero, pages = 0, refs = 0, ops = 0;
	struct task_struct *t;
	struct pm_model **m, *all;
	unsigned int n = 0, i;
	int cpu;

	m = kunit_kcalloc(test, nr_cpu_ids, sizeof(*m), GFP_KERNEL);
	all = kunit_kzalloc(test, sizeof(*all), GFP_KERNEL);
	held = kunit_kzalloc(test, BITS_TO_LONGS(PM_PAGES) * sizeof(long),
			     GFP_KERNEL);
	nonzero = kunit_kzalloc(test, BITS_TO_LONGS(PM_PAGES) * sizeof(long),
				GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, all);
	KUNIT_ASSERT_NOT_NULL(test, held);
	KUNIT_ASSERT_NOT_NULL(test, nonzero);
	pm_reset(test, nonzero);

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		m[n] = kunit_kzalloc(test, sizeof(*m[n]), GFP_KERNEL);
		if (!m[n])
			break;
		pm_model_init(m[n], seed, cpu, held, nonzero);
		t = kthread_create_on_cpu(pm_thread, m[n], cpu, "p2pdma-model/%u");
		if (IS_ERR(t))
			break;
		wake_up_process(t);
		n++;
	}
	cpus_read_unlock();
	/* Not in D state all along: the hung-task watchdog is 45 s. */
	for (i = 0; i < n; i++)
		while (!wait_for_completion_timeout(&m[i]->done, HZ))
			;
	KUNIT_EXPECT_EQ(test, n, num_online_cpus());

	pm_model_init(all, seed, -1, held, nonzero);
	for (i = 0; i < n; i++) {
		pm_report(test, m[i]);
		pages += m[i]->held;
		refs += m[i]->refs;
		ops += m[i]->step;
	}
	all->held = pages;
	all->refs = refs;
	all->step = ops;
	all->op = "all threads joined";
	KUNIT_EXPECT_EQ(test, pm_refcount(), 1 + refs);
	KUNIT_EXPECT_LE(test, p2p_available(pm_p2p()), PM_POOL);
	p2p_cache_drain(pm_p2p());
	KUNIT_EXPECT_EQ(test, p2p_available(pm_p2p()),
			PM_POOL - (pages << PAGE_SHIFT));
	pm_check_quiet(all, true);
	pm_report(test, all);

	for (i = 0; i < n; i++)
		pm_release(m[i]);
	p2p_cache_drain(pm_p2p());
	KUNIT_EXPECT_TRUE(test, bitmap_empty(held, PM_PAGES));
	kunit_info(test, "seed %llu: %lu operations on %u CPUs\n", seed, ops, n);
}

static const u64 pm_smp_seeds[] = { 7, 1000003, 31337, 4242 };

KUNIT_ARRAY_PARAM(pm_smp_seed, pm_smp_seeds, pm_seed_desc);

/* Each case leaves the pool whole and the references balanced. */
static void pm_exit(struct kunit *test)
{
	p2p_cache_drain(pm_p2p());
	KUNIT_EXPECT_EQ(test, p2p_available(pm_p2p()), PM_POOL);
	KUNIT_EXPECT_EQ(test, gen_pool_avail(pm_p2p()->pool), PM_POOL);
	KUNIT_EXPECT_EQ(test, pm_refcount(), 1);
}

static void pm_suite_exit(struct kunit_suite *suite)
{
	unsigned long p, end;

	/*
	 * A failed case may have left memory out (gen_pool_destroy() BUGs on
	 * that): give the pool back whatever its bitmap says is out.
	 */
	if (pm_region_added) {
		p2p_cache_drain(pm_p2p());
		for (p = find_first_bit(pm_pool_bits(), PM_PAGES); p < PM_PAGES;
		     p = find_next_bit(pm_pool_bits(), PM_PAGES, end)) {
			end = find_next_zero_bit(pm_pool_bits(), PM_PAGES, p);
			gen_pool_free(pm_p2p()->pool, (unsigned long)pm_addr(p),
				      (end - p) << PAGE_SHIFT);
		}
	}
	pm_region_added = false;
	fake_pci_destroy(pm_fp);
	pm_fp = NULL;
	if (pm_ref_live)
		percpu_ref_exit(&pm_region.pgmap.ref);
	pm_ref_live = false;
	if (pm_pages)
		__free_pages(pm_pages, PM_ORDER);
	pm_pages = NULL;
	memset(&pm_region, 0, sizeof(pm_region));
}

static int pm_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = fake_pci_table(&pm_fp, pm_topology, ARRAY_SIZE(pm_topology),
			     pm_fn, 0, 0);
	if (ret)
		return ret;
	pm_prov = pm_fn[PM_PROV];
	ret = pv_setup_provider(pm_prov->pdev, NULL);
	if (ret)
		goto fail;
	/* Decoding memory, as a bound provider is: p2p_clean() checks. */
	pci_write_config_word(pm_prov->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY);

	ret = -ENOMEM;
	pm_pages = alloc_pages(GFP_KERNEL, PM_ORDER);
	if (!pm_pages)
		goto fail;
	/* Atomic mode, so that the count can be read. */
	memset(&pm_region, 0, sizeof(pm_region));
	ret = percpu_ref_init(&pm_region.pgmap.ref, pm_ref_release,
			      PERCPU_REF_INIT_ATOMIC, GFP_KERNEL);
	if (ret)
		goto fail;
	pm_ref_live = true;
	pm_region.provider = pm_prov->pdev;
	ret = p2p_region_bitmap(&pm_prov->pdev->dev, &pm_region, PM_POOL);
	if (ret)
		goto fail;
	mutex_lock(&p2p_setup_lock);
	ret = p2p_region_add(pm_p2p(), &pm_region, page_address(pm_pages),
			     pci_bus_address(pm_prov->pdev, 0), NUMA_NO_NODE);
	mutex_unlock(&p2p_setup_lock);
	if (ret)
		goto fail;
	pm_region_added = true;
	return 0;

fail:
	pm_suite_exit(suite);
	return ret;
}

/*
 * The per-CPU cache keeps one allocation of each size from 32 to 256
 * pages (up to 8 of the smaller sizes): of two 32-page allocations freed
 * on one CPU, the first stays in the cache, still available, and the
 * next allocation of that size on the CPU gets it back; the second goes
 * to the pool. A size that is not a power of two goes to the pool.
 */
static void pool_cache_large_test(struct kunit *test)
{
	const size_t big = 32 * PAGE_SIZE, odd = 48 * PAGE_SIZE;
	unsigned long nonzero[BITS_TO_LONGS(PM_PAGES)];
	size_t pool_after, avail_after, pool_odd;
	void *a, *b, *c, *d;

	pm_reset(test, nonzero);
	migrate_disable();
	a = pci_alloc_p2pmem(pm_prov->pdev, big);
	b = pci_alloc_p2pmem(pm_prov->pdev, big);
	if (a)
		pci_free_p2pmem(pm_prov->pdev, a, big);
	if (b)
		pci_free_p2pmem(pm_prov->pdev, b, big);
	pool_after = gen_pool_avail(pm_p2p()->pool);
	avail_after = p2p_available(pm_p2p());
	c = pci_alloc_p2pmem(pm_prov->pdev, big);
	d = pci_alloc_p2pmem(pm_prov->pdev, odd);
	if (d)
		pci_free_p2pmem(pm_prov->pdev, d, odd);
	pool_odd = gen_pool_avail(pm_p2p()->pool);
	migrate_enable();

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, pool_after, PM_POOL - big);
	KUNIT_EXPECT_EQ(test, avail_after, PM_POOL);
	KUNIT_EXPECT_PTR_EQ(test, c, a);
	KUNIT_EXPECT_NOT_NULL(test, d);
	KUNIT_EXPECT_EQ(test, pool_odd, PM_POOL - big);
	if (c)
		pci_free_p2pmem(pm_prov->pdev, c, big);
	KUNIT_EXPECT_TRUE(test, p2p_cache_drain(pm_p2p()));
	KUNIT_EXPECT_EQ(test, gen_pool_avail(pm_p2p()->pool), PM_POOL);
	KUNIT_EXPECT_EQ(test, pm_refcount(), 1);
}

static struct kunit_case p2pdma_pool_model_cases[] = {
	KUNIT_CASE_PARAM(pool_model_test, pm_seed_gen_params),
	KUNIT_CASE_PARAM(pool_model_smp_test, pm_smp_seed_gen_params),
	KUNIT_CASE(pool_cache_large_test),
	{}
};

static struct kunit_suite p2pdma_pool_model_suite = {
	.name = "p2pdma-pool-model",
	.suite_init = pm_suite_init,
	.suite_exit = pm_suite_exit,
	.exit = pm_exit,
	.test_cases = p2pdma_pool_model_cases,
};

kunit_test_suite(p2pdma_pool_model_suite);
