/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocator suite: the provider's pool gets one small region, as
 * pci_p2pdma_add_resource() would add it, but backed by ordinary pages
 * instead of ZONE_DEVICE pages of a BAR, with a percpu_ref of the test's
 * own in place of the pgmap's. Its bus address is that of the fake BAR 0
 * plus ALLOC_BAR_OFFSET. Included at the end of pool.c.
 */

#include "p2pdma-kunit.h"

#define ALLOC_ORDER		4
#define ALLOC_POOL		(PAGE_SIZE << ALLOC_ORDER)
#define ALLOC_BAR_OFFSET	0x10000

enum { AL_RP1, AL_PROV, AL_RP2, AL_PLAIN, AL_FNS };

static const struct fake_line al_topology[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_RP_LINE(AL_RP1),
	FAKE_EP_LINE(AL_PROV, AL_RP1, 1),
	FAKE_RP_LINE(AL_RP2),
	FAKE_EP_LINE(AL_PLAIN, AL_RP2, 1),
};

static struct fake_pci *al_fp;
static struct fake_fn *al_fn[AL_FNS];
static struct fake_fn *al_prov, *al_plain;
static struct page *al_pages;
static struct p2p_region al_region;
static bool al_ref_live;

static void al_ref_release(struct percpu_ref *ref)
{
}

static struct pci_p2pdma *al_p2p(void)
{
	return rcu_dereference_protected(al_prov->pdev->p2pdma, 1);
}

static struct gen_pool *al_pool(void)
{
	return al_p2p()->pool;
}

/* What p2pmem/available shows: the pool and the per-CPU caches. */
static size_t al_avail(void)
{
	return p2p_available(al_p2p());
}

static pci_bus_addr_t al_bus_base(void)
{
	return pci_bus_address(al_prov->pdev, 0) + ALLOC_BAR_OFFSET;
}

static long al_refs(void)
{
	return atomic_long_read(&al_region.pgmap.ref.data->count);
}

static void al_suite_exit(struct kunit_suite *suite)
{
	/* Removing the devices destroys the pool (device-managed). */
	fake_pci_destroy(al_fp);
	al_fp = NULL;
	if (al_ref_live)
		percpu_ref_exit(&al_region.pgmap.ref);
	al_ref_live = false;
	if (al_pages)
		__free_pages(al_pages, ALLOC_ORDER);
	al_pages = NULL;
}

static int al_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = fake_pci_table(&al_fp, al_topology, ARRAY_SIZE(al_topology),
			     al_fn, 0, 0);
	if (ret)
		return ret;
	al_prov = al_fn[AL_PROV];
	al_plain = al_fn[AL_PLAIN];
	ret = pv_setup_provider(al_prov->pdev, NULL);
	if (ret)
		goto fail;
	/* Decoding memory, as a bound provider is: p2p_clean() checks. */
	pci_write_config_word(al_prov->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY);

	ret = -ENOMEM;
	al_pages = alloc_pages(GFP_KERNEL, ALLOC_ORDER);
	if (!al_pages)
		goto fail;
	/* Atomic mode, so that the tests can read the count. */
	memset(&al_region, 0, sizeof(al_region));
	ret = percpu_ref_init(&al_region.pgmap.ref, al_ref_release,
			      PERCPU_REF_INIT_ATOMIC, GFP_KERNEL);
	if (ret)
		goto fail;
	al_ref_live = true;
	al_region.provider = al_prov->pdev;
	ret = p2p_region_bitmap(&al_prov->pdev->dev, &al_region, ALLOC_POOL);
	if (ret)
		goto fail;
	mutex_lock(&p2p_setup_lock);
	ret = p2p_region_add(al_p2p(), &al_region, page_address(al_pages),
			     al_bus_base(), NUMA_NO_NODE);
	mutex_unlock(&p2p_setup_lock);
	if (ret)
		goto fail;
	return 0;

fail:
	al_suite_exit(suite);
	return ret;
}

/* Each case must leave the pool whole and the references balanced. */
static void al_exit(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, al_refs(), 1);
}

static void alloc_pool_size_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, gen_pool_size(al_pool()), ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(al_prov->pdev));
}

static const size_t alloc_sizes[] = {
	1, 2, 512, PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, 3 * PAGE_SIZE,
	5 * PAGE_SIZE + 7, ALLOC_POOL / 2, ALLOC_POOL - PAGE_SIZE,
	ALLOC_POOL - 1, ALLOC_POOL,
};

static void alloc_size_desc(const size_t *size, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%zu-bytes", *size);
}

KUNIT_ARRAY_PARAM(alloc_size, alloc_sizes, alloc_size_desc);

/* Whole pages, page aligned, inside the pool, at the right bus address. */
static void alloc_size_test(struct kunit *test)
{
	size_t size = *(const size_t *)test->param_value;
	unsigned long base = (unsigned long)page_address(al_pages);
	void *addr = pci_alloc_p2pmem(al_prov->pdev, size);

	KUNIT_ASSERT_NOT_NULL(test, addr);
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)addr, PAGE_SIZE));
	KUNIT_EXPECT_GE(test, (unsigned long)addr, base);
	KUNIT_EXPECT_LE(test, (unsigned long)addr + size, base + ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, al_avail(),
			ALLOC_POOL - PAGE_ALIGN(size));
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, addr),
			al_bus_base() + ((unsigned long)addr - base));
	KUNIT_EXPECT_EQ(test, al_refs(), 2);
	pci_free_p2pmem(al_prov->pdev, addr, size);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
}

/* Zero bytes, or more than the pool: NULL, nothing taken. */
static void alloc_too_much_test(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 0));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev,
						 ALLOC_POOL + 1));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, SZ_1G));
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, al_refs(), 1);
}

/* Exhaustion returns NULL and leaves "available" alone; free refills. */
static void alloc_exhaust_test(struct kunit *test)
{
	void *page[1 << ALLOC_ORDER];
	int i, j;

	for (i = 0; i < ARRAY_SIZE(page); i++) {
		page[i] = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, page[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_PTR_NE(test, page[i], page[j]);
	}
	KUNIT_EXPECT_EQ(test, al_avail(), 0);
	KUNIT_EXPECT_EQ(test, al_refs(), 1 + ARRAY_SIZE(page));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 1));
	KUNIT_EXPECT_EQ(test, al_avail(), 0);
	KUNIT_EXPECT_EQ(test, al_refs(), 1 + ARRAY_SIZE(page));

	pci_free_p2pmem(al_prov->pdev, page[3], PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, al_avail(), PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, pci_alloc_p2pmem(al_prov->pdev, 100),
			    page[3]);
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 1));
	for (i = 0; i < ARRAY_SIZE(page); i++)
		pci_free_p2pmem(al_prov->pdev, page[i], PAGE_SIZE);
}

/* The whole pool in one piece blocks every further allocation. */
static void alloc_whole_pool_test(struct kunit *test)
{
	void *all = pci_alloc_p2pmem(al_prov->pdev, ALLOC_POOL);

	KUNIT_ASSERT_NOT_NULL(test, all);
	KUNIT_EXPECT_PTR_EQ(test, all, page_address(al_pages));
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, all),
			al_bus_base());
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 1));
	pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
	all = pci_alloc_p2pmem(al_prov->pdev, ALLOC_POOL);
	KUNIT_EXPECT_NOT_NULL(test, all);
	if (all)
		pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
}

/* Bus addresses of every byte offset kind, and of foreign addresses. */
static void alloc_virt_to_bus_test(struct kunit *test)
{
	char *a = pci_alloc_p2pmem(al_prov->pdev, 3 * PAGE_SIZE);
	unsigned long off = (unsigned long)a -
			    (unsigned long)page_address(al_pages);
	char *other = kunit_kmalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, pci_bus_address(al_prov->pdev, 0),
			get_unaligned_le32(&al_prov->cfg[PCI_BASE_ADDRESS_0]));
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, a + 1),
			al_bus_base() + off + 1);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev,
						     a + 2 * PAGE_SIZE + 17),
			al_bus_base() + off + 2 * PAGE_SIZE + 17);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, NULL), 0);
	/* Outside the pool: all ones, like gen_pool_virt_to_phys(). */
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, other),
			(pci_bus_addr_t)-1);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_plain->pdev, a), 0);
	pci_free_p2pmem(al_prov->pdev, a, 3 * PAGE_SIZE);
}

/* A device that registered no memory hands out nothing. */
static void alloc_no_pool_test(struct kunit *test)
{
	unsigned int nents = 42;

	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_plain->pdev, PAGE_SIZE));
	KUNIT_EXPECT_NULL(test, pci_p2pmem_alloc_sgl(al_plain->pdev, &nents,
						     PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, nents, 42);
}

/* An unbinding provider hands out nothing more. */
static void alloc_closing_test(struct kunit *test)
{
	struct pci_p2pdma *p2p = rcu_dereference_protected(al_prov->pdev->p2pdma,
							   1);

	WRITE_ONCE(p2p->closing, true);
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE));
	WRITE_ONCE(p2p->closing, false);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
}

static const u32 sgl_lengths[] = {
	1, 100, PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, 2 * PAGE_SIZE,
	3 * PAGE_SIZE + 5, ALLOC_POOL,
};

static void sgl_len_desc(const u32 *len, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u-bytes%s", *len,
		 *len % PAGE_SIZE ? "" : "-page-multiple");
}

KUNIT_ARRAY_PARAM(sgl_len, sgl_lengths, sgl_len_desc);

/* One entry of exactly the length asked for; freeing gives it back. */
static void alloc_sgl_test(struct kunit *test)
{
	u32 len = *(const u32 *)test->param_value;
	struct scatterlist *sg;
	unsigned int nents = 0;

	sg = pci_p2pmem_alloc_sgl(al_prov->pdev, &nents, len);
	KUNIT_ASSERT_NOT_NULL(test, sg);
	KUNIT_EXPECT_EQ(test, nents, 1);
	KUNIT_EXPECT_EQ(test, sg->length, len);
	KUNIT_EXPECT_EQ(test, sg->offset, 0);
	KUNIT_EXPECT_TRUE(test, sg_is_last(sg));
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)sg_virt(sg),
					   PAGE_SIZE));
	KUNIT_EXPECT_NE(test, pci_p2pmem_virt_to_bus(al_prov->pdev,
						     sg_virt(sg)), 0);
	KUNIT_EXPECT_EQ(test, al_avail(),
			ALLOC_POOL - PAGE_ALIGN(len));
	KUNIT_EXPECT_EQ(test, al_refs(), 2);
	pci_p2pmem_free_sgl(al_prov->pdev, sg);
}

/* Zero length or more than the pool: NULL and no list leaked. */
static void alloc_sgl_fail_test(struct kunit *test)
{
	unsigned int nents = 7;

	KUNIT_EXPECT_NULL(test, pci_p2pmem_alloc_sgl(al_prov->pdev, &nents, 0));
	KUNIT_EXPECT_NULL(test, pci_p2pmem_alloc_sgl(al_prov->pdev, &nents,
						     ALLOC_POOL + 1));
	KUNIT_EXPECT_EQ(test, nents, 7);
}

/* Whether every page of [@first, @first + @n) of the pool is dirty. */
static bool al_all_dirty(unsigned long first, unsigned long n)
{
	return find_next_zero_bit(al_region.dirty, first + n, first) ==
	       first + n;
}

static bool al_all_clean(unsigned long first, unsigned long n)
{
	return find_next_bit(al_region.dirty, first + n, first) == first + n;
}

static unsigned long al_index(void *addr)
{
	return ((unsigned long)addr -
		(unsigned long)page_address(al_pages)) >> PAGE_SHIFT;
}

/*
 * A freed 4 KiB allocation stays on this CPU, still counted as available,
 * and the next one of that size on this CPU gets it back.
 */
static void alloc_cache_reuse_test(struct kunit *test)
{
	size_t pool_after_free, avail_after_free;
	void *a, *b;

	p2p_cache_drain(al_p2p());
	migrate_disable();
	a = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
	if (a)
		pci_free_p2pmem(al_prov->pdev, a, PAGE_SIZE);
	pool_after_free = gen_pool_avail(al_pool());
	avail_after_free = al_avail();
	b = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
	migrate_enable();

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, pool_after_free, ALLOC_POOL - PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, avail_after_free, ALLOC_POOL);
	KUNIT_EXPECT_PTR_EQ(test, b, a);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL - PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, al_refs(), 2);
	if (b)
		pci_free_p2pmem(al_prov->pdev, b, PAGE_SIZE);
}

/* An allocation the pool cannot serve takes back what the CPUs cache. */
static void alloc_cache_drained_when_short_test(struct kunit *test)
{
	void *page[4], *all;
	int i;

	p2p_cache_drain(al_p2p());
	for (i = 0; i < ARRAY_SIZE(page); i++)
		page[i] = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(page); i++) {
		KUNIT_ASSERT_NOT_NULL(test, page[i]);
		pci_free_p2pmem(al_prov->pdev, page[i], PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()),
			ALLOC_POOL - ARRAY_SIZE(page) * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);

	all = pci_alloc_p2pmem(al_prov->pdev, ALLOC_POOL);
	KUNIT_ASSERT_NOT_NULL(test, all);
	KUNIT_EXPECT_PTR_EQ(test, all, page_address(al_pages));
	KUNIT_EXPECT_EQ(test, al_avail(), 0);
	pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
	KUNIT_EXPECT_TRUE(test, p2p_cache_drain(al_p2p()));
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
}

/* Once an unbind has started, freed memory goes straight to the pool. */
static void alloc_closing_free_skips_cache_test(struct kunit *test)
{
	void *a;

	p2p_cache_drain(al_p2p());
	a = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, a);
	WRITE_ONCE(al_p2p()->closing, true);
	pci_free_p2pmem(al_prov->pdev, a, PAGE_SIZE);
	WRITE_ONCE(al_p2p()->closing, false);
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
	KUNIT_EXPECT_FALSE(test, p2p_cache_drain(al_p2p()));
}

/*
 * The dirty bits speak only for free memory: handing pages to a kernel
 * user leaves them as they are, and the free marks exactly the user's
 * pages dirty.
 */
static void alloc_kernel_free_marks_dirty_test(struct kunit *test)
{
	unsigned long i;
	void *a;

	p2p_cache_drain(al_p2p());
	bitmap_zero(al_region.dirty, al_region.npages);
	a = pci_alloc_p2pmem(al_prov->pdev, 3 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, a);
	i = al_index(a);
	KUNIT_EXPECT_TRUE(test, al_all_clean(0, al_region.npages));
	pci_free_p2pmem(al_prov->pdev, a, 3 * PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, al_all_dirty(i, 3));
	KUNIT_EXPECT_TRUE(test, al_all_clean(0, i));
	KUNIT_EXPECT_TRUE(test, al_all_clean(i + 3, al_region.npages - i - 3));
}

/* A clearing that the device dropped: every read back is all ones. */
static u64 al_read_back_dropped(const u64 *last)
{
	return ~0ULL;
}

/*
 * A clearing whose read-back is not zero (the provider is in D3hot, in
 * reset or gone) fails with -EIO and marks nothing clean, so that the
 * next mmap() never hands out what the zeros did not reach.
 */
static void alloc_clean_read_back_fails_test(struct kunit *test)
{
	unsigned char *all;

	p2p_cache_drain(al_p2p());
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, all);
	bitmap_fill(al_region.dirty, al_region.npages);
	kunit_activate_static_stub(test, p2p_read_back, al_read_back_dropped);
	KUNIT_EXPECT_EQ(test, p2p_clean(&al_region, 0, al_region.npages), -EIO);
	kunit_deactivate_static_stub(test, p2p_read_back);
	KUNIT_EXPECT_TRUE(test, al_all_dirty(0, al_region.npages));
	/* With the writes reaching memory, the same call succeeds. */
	KUNIT_EXPECT_EQ(test, p2p_clean(&al_region, 0, al_region.npages), 0);
	KUNIT_EXPECT_TRUE(test, al_all_clean(0, al_region.npages));
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(all, 0, ALLOC_POOL), NULL);
	pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
	p2p_cache_drain(al_p2p());
}

/*
 * A provider that does not decode memory (Memory Space Enable clear, as
 * in D3hot or after a reset) gets no clearing at all: p2p_clean() fails
 * with -EIO before it writes, and nothing is marked clean.
 */
static void alloc_clean_refused_when_not_decoding_test(struct kunit *test)
{
	unsigned char *all;

	p2p_cache_drain(al_p2p());
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, all);
	memset(all, 0xaa, ALLOC_POOL);
	bitmap_fill(al_region.dirty, al_region.npages);
	pci_write_config_word(al_prov->pdev, PCI_COMMAND, 0);
	KUNIT_EXPECT_EQ(test, p2p_clean(&al_region, 0, al_region.npages), -EIO);
	pci_write_config_word(al_prov->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY);
	KUNIT_EXPECT_TRUE(test, al_all_dirty(0, al_region.npages));
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(all, 0xaa, ALLOC_POOL), NULL);
	/* Nothing dirty, nothing to check: a clean range needs no device. */
	bitmap_zero(al_region.dirty, al_region.npages);
	pci_write_config_word(al_prov->pdev, PCI_COMMAND, 0);
	KUNIT_EXPECT_EQ(test, p2p_clean(&al_region, 0, al_region.npages), 0);
	pci_write_config_word(al_prov->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY);
	pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
	p2p_cache_drain(al_p2p());
}

/* The most "available" showed at the moment memory arrived in the pool. */
static size_t al_avail_max;

static void al_pool_put_watch(struct pci_p2pdma *p2p, unsigned long addr,
			      size_t size)
{
	gen_pool_free(p2p->pool, addr, size);
	al_avail_max = max(al_avail_max, p2p_available(p2p));
}

/*
 * "available" is never above the pool's size: memory that a run or the
 * per-CPU cache gives to the pool has left their count by the time it is
 * in the pool. Counted the other way round, the moment it arrives shows
 * it twice.
 */
static void alloc_available_never_above_size_test(struct kunit *test)
{
	unsigned long base = (unsigned long)page_address(al_pages);
	unsigned char *all;
	void *small;
	int i;

	p2p_cache_drain(al_p2p());
	al_avail_max = 0;
	kunit_activate_static_stub(test, p2p_pool_put, al_pool_put_watch);
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_PTR_EQ(test, all, (unsigned char *)base);

	/* A run of 8 pages back from userspace, then into the pool. */
	migrate_disable();
	rcu_read_lock();
	for (i = 0; i < 8; i++)
		p2p_run_add(al_p2p(), &al_region, base + i * PAGE_SIZE, false);
	rcu_read_unlock();
	p2p_runs_flush(al_p2p());
	migrate_enable();
	KUNIT_EXPECT_EQ(test, al_avail(), 8 * PAGE_SIZE);

	/* A cached kernel allocation drained into the pool. */
	small = pci_alloc_p2pmem(al_prov->pdev, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, small);
	pci_free_p2pmem(al_prov->pdev, small, PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, p2p_cache_drain(al_p2p()));
	KUNIT_EXPECT_EQ(test, al_avail(), 8 * PAGE_SIZE);

	rcu_read_lock();
	for (i = 8; i < al_region.npages; i++)
		p2p_run_add(al_p2p(), &al_region, base + i * PAGE_SIZE, false);
	rcu_read_unlock();
	p2p_cache_drain(al_p2p());
	kunit_deactivate_static_stub(test, p2p_pool_put);
	KUNIT_EXPECT_GT(test, al_avail_max, 0);
	KUNIT_EXPECT_LE(test, al_avail_max, ALLOC_POOL);
	/* p2p_alloc() took one reference; the pages gave back none. */
	percpu_ref_put(&al_region.pgmap.ref);
}

/* Bytes a kernel user moved from the pool into this CPU's cache. */
static size_t al_moved;

/* The pool's free bytes, read before a kernel user takes and frees 16 KiB. */
static size_t al_pool_avail_move(struct pci_p2pdma *p2p)
{
	size_t avail = gen_pool_avail(p2p->pool);
	void *p = pci_alloc_p2pmem(al_prov->pdev, 4 * PAGE_SIZE);

	if (p) {
		pci_free_p2pmem(al_prov->pdev, p, 4 * PAGE_SIZE);
		al_moved = 4 * PAGE_SIZE;
	}
	return avail;
}

/*
 * The other direction: memory taken from the pool after "available" read
 * the pool and freed into a CPU's cache before that CPU's count is read
 * is seen in both places. The sum is capped at the pool's size (the pool
 * model's two-CPU case found it above, seed 1000003), and exact again
 * once nothing moves.
 */
static void alloc_available_capped_test(struct kunit *test)
{
	p2p_cache_drain(al_p2p());
	KUNIT_ASSERT_EQ(test, al_avail(), ALLOC_POOL);
	al_moved = 0;
	kunit_activate_static_stub(test, p2p_pool_avail, al_pool_avail_move);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	kunit_deactivate_static_stub(test, p2p_pool_avail);
	/* The move happened, and into a cache: counted there now. */
	KUNIT_ASSERT_EQ(test, al_moved, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	KUNIT_EXPECT_LT(test, gen_pool_avail(al_p2p()->pool), ALLOC_POOL);
	KUNIT_EXPECT_TRUE(test, p2p_cache_drain(al_p2p()));
}

/* p2p_clean() zeroes the dirty pages of a range and only those. */
static void alloc_clean_only_dirty_pages_test(struct kunit *test)
{
	unsigned char *all;
	unsigned long i;

	p2p_cache_drain(al_p2p());
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, all);
	memset(all, 0xaa, ALLOC_POOL);
	bitmap_zero(al_region.dirty, al_region.npages);
	set_bit(1, al_region.dirty);
	bitmap_set(al_region.dirty, 5, 3);
	KUNIT_EXPECT_EQ(test, p2p_clean(&al_region, 0, al_region.npages), 0);
	for (i = 0; i < al_region.npages; i++) {
		bool was_dirty = i == 1 || (i >= 5 && i <= 7);

		KUNIT_EXPECT_PTR_EQ_MSG(test,
					memchr_inv(all + i * PAGE_SIZE,
						   was_dirty ? 0 : 0xaa, PAGE_SIZE),
					NULL, "page %lu", i);
	}
	KUNIT_EXPECT_TRUE(test, al_all_clean(0, al_region.npages));
	pci_free_p2pmem(al_prov->pdev, all, ALLOC_POOL);
	p2p_cache_drain(al_p2p());
}

/*
 * mmap() takes the first clean run that is long enough, and first-fit
 * memory (to be cleared) when there is none.
 */
static void alloc_mapping_prefers_clean_test(struct kunit *test)
{
	void *a, *b;
	unsigned long i;

	p2p_cache_drain(al_p2p());
	bitmap_zero(al_region.dirty, al_region.npages);
	bitmap_set(al_region.dirty, 0, 4);
	a = p2p_alloc(al_prov->pdev, 2 * PAGE_SIZE, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, al_index(a), 4);

	/* Every other page dirty: no clean run of two pages. */
	for (i = 0; i < al_region.npages; i += 2)
		set_bit(i, al_region.dirty);
	b = p2p_alloc(al_prov->pdev, 2 * PAGE_SIZE, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, al_index(b), 0);
	pci_free_p2pmem(al_prov->pdev, a, 2 * PAGE_SIZE);
	pci_free_p2pmem(al_prov->pdev, b, 2 * PAGE_SIZE);
	p2p_cache_drain(al_p2p());
}

/*
 * Pages back from userspace gather in a run per CPU, counted as available,
 * until a page that does not extend the run, a full run or a flush puts
 * them into the pool; a written page leaves its mark at once.
 */
static void alloc_user_pages_gather_test(struct kunit *test)
{
	unsigned long base = (unsigned long)page_address(al_pages);
	size_t pool_mid, avail_mid, pool_jump;
	unsigned char *all;
	int i;

	p2p_cache_drain(al_p2p());
	bitmap_zero(al_region.dirty, al_region.npages);
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_PTR_EQ(test, all, (unsigned char *)base);

	memset(all + 2 * PAGE_SIZE, 0x5a, PAGE_SIZE);
	migrate_disable();
	rcu_read_lock();
	for (i = 0; i < 4; i++)
		p2p_run_add(al_p2p(), &al_region, base + i * PAGE_SIZE, i == 2);
	pool_mid = gen_pool_avail(al_pool());
	avail_mid = al_avail();
	/* Page 8 does not follow page 3: pages 0-3 go to the pool. */
	p2p_run_add(al_p2p(), &al_region, base + 8 * PAGE_SIZE, false);
	pool_jump = gen_pool_avail(al_pool());
	rcu_read_unlock();
	migrate_enable();

	KUNIT_EXPECT_EQ(test, pool_mid, 0);
	KUNIT_EXPECT_EQ(test, avail_mid, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, pool_jump, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, al_avail(), 5 * PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, al_all_dirty(2, 1));
	KUNIT_EXPECT_TRUE(test, al_all_clean(0, 2));
	KUNIT_EXPECT_TRUE(test, al_all_clean(3, al_region.npages - 3));

	p2p_runs_flush(al_p2p());
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), 5 * PAGE_SIZE);
	/*
	 * Nothing clears free memory behind anyone's back: the written page
	 * keeps its bytes and its mark until an mmap() hands it out.
	 */
	msleep(20);
	KUNIT_EXPECT_TRUE(test, al_all_dirty(2, 1));
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(all + 2 * PAGE_SIZE, 0x5a, PAGE_SIZE),
			    NULL);

	rcu_read_lock();
	for (i = 0; i < al_region.npages; i++)
		if (i < 4 || i == 8)
			continue;
		else
			p2p_run_add(al_p2p(), &al_region, base + i * PAGE_SIZE,
				    false);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	KUNIT_EXPECT_TRUE(test, p2p_cache_drain(al_p2p()));
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
	/* p2p_alloc() took one reference; the pages gave back none. */
	percpu_ref_put(&al_region.pgmap.ref);
}

/*
 * A run never crosses into the next region, even where the two are
 * adjacent in the kernel's address space: genalloc frees a range within
 * one chunk only. (Here a stand-in region starts at page 8 of the pool.)
 */
static void alloc_user_run_stops_at_region_start_test(struct kunit *test)
{
	unsigned long base = (unsigned long)page_address(al_pages);
	struct p2p_region next = { .kaddr = base + 8 * PAGE_SIZE, .npages = 8,
				   .dirty = al_region.dirty };
	size_t pool_before, pool_after;
	unsigned char *all;
	unsigned long i;

	p2p_cache_drain(al_p2p());
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	KUNIT_ASSERT_PTR_EQ(test, all, (unsigned char *)base);

	migrate_disable();
	rcu_read_lock();
	p2p_run_add(al_p2p(), &al_region, base + 7 * PAGE_SIZE, false);
	pool_before = gen_pool_avail(al_pool());
	p2p_run_add(al_p2p(), &next, base + 8 * PAGE_SIZE, false);
	pool_after = gen_pool_avail(al_pool());
	rcu_read_unlock();
	migrate_enable();

	KUNIT_EXPECT_EQ(test, pool_before, 0);
	KUNIT_EXPECT_EQ(test, pool_after, PAGE_SIZE);
	p2p_cache_drain(al_p2p());
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), 2 * PAGE_SIZE);
	/* The rest back: pages 0-6 with the one reference, then 9-15. */
	pci_free_p2pmem(al_prov->pdev, all, 7 * PAGE_SIZE);
	rcu_read_lock();
	for (i = 9; i < al_region.npages; i++)
		p2p_run_add(al_p2p(), &al_region, base + i * PAGE_SIZE, false);
	rcu_read_unlock();
	p2p_cache_drain(al_p2p());
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
}

struct al_far_run {
	unsigned long base;
	struct completion done;
};

/* On another CPU: every page of the pool back from userspace, unwritten. */
static int al_far_run_fn(void *data)
{
	struct al_far_run *r = data;
	unsigned long i;

	rcu_read_lock();
	for (i = 0; i < al_region.npages; i++)
		p2p_run_add(al_p2p(), &al_region, r->base + i * PAGE_SIZE, false);
	rcu_read_unlock();
	complete(&r->done);
	return 0;
}

/*
 * Pages left in another CPU's run (a CPU that then goes idle or offline
 * never adds to it again) are not stranded: they count as available, and
 * an allocation on this CPU that finds the pool short takes them from
 * there. With a drain that looked at this CPU only, it would fail.
 */
static void alloc_run_on_other_cpu_not_stranded_test(struct kunit *test)
{
	struct al_far_run r;
	struct task_struct *t;
	int cpu, other;
	void *all, *again;

	/* kunit.py's QEMU has one CPU; the intel guest of make test two. */
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs a second online CPU");
	p2p_cache_drain(al_p2p());
	init_completion(&r.done);
	/*
	 * Nothing may abort between taking the whole pool and handing it
	 * back: the thread exists before the allocation, and a failed
	 * allocation stops it unstarted.
	 */
	t = kthread_create(al_far_run_fn, &r, "p2pdma-far-run");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	all = p2p_alloc(al_prov->pdev, ALLOC_POOL, 1, false);
	if (!all) {
		kthread_stop(t);
		KUNIT_FAIL_AND_ABORT(test, "the whole pool could not be taken");
	}
	KUNIT_EXPECT_PTR_EQ(test, all, page_address(al_pages));
	r.base = (unsigned long)all;
	migrate_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, cpu);
	kthread_bind(t, other);
	wake_up_process(t);
	wait_for_completion(&r.done);

	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), 0);
	KUNIT_EXPECT_EQ(test, al_avail(), ALLOC_POOL);
	again = pci_alloc_p2pmem(al_prov->pdev, ALLOC_POOL);
	migrate_enable();
	KUNIT_EXPECT_PTR_EQ(test, again, all);
	if (again)
		pci_free_p2pmem(al_prov->pdev, again, ALLOC_POOL);
	p2p_cache_drain(al_p2p());
	/* p2p_alloc() took one reference; the pages gave back none. */
	percpu_ref_put(&al_region.pgmap.ref);
}

static struct kunit_case p2pdma_alloc_cases[] = {
	KUNIT_CASE(alloc_pool_size_test),
	KUNIT_CASE_PARAM(alloc_size_test, alloc_size_gen_params),
	KUNIT_CASE(alloc_too_much_test),
	KUNIT_CASE(alloc_exhaust_test),
	KUNIT_CASE(alloc_whole_pool_test),
	KUNIT_CASE(alloc_virt_to_bus_test),
	KUNIT_CASE(alloc_no_pool_test),
	KUNIT_CASE(alloc_closing_test),
	KUNIT_CASE_PARAM(alloc_sgl_test, sgl_len_gen_params),
	KUNIT_CASE(alloc_sgl_fail_test),
	KUNIT_CASE(alloc_cache_reuse_test),
	KUNIT_CASE(alloc_cache_drained_when_short_test),
	KUNIT_CASE(alloc_closing_free_skips_cache_test),
	KUNIT_CASE(alloc_kernel_free_marks_dirty_test),
	KUNIT_CASE(alloc_clean_read_back_fails_test),
	KUNIT_CASE(alloc_clean_refused_when_not_decoding_test),
	KUNIT_CASE(alloc_available_never_above_size_test),
	KUNIT_CASE(alloc_available_capped_test),
	KUNIT_CASE(alloc_run_on_other_cpu_not_stranded_test),
	KUNIT_CASE(alloc_clean_only_dirty_pages_test),
	KUNIT_CASE(alloc_mapping_prefers_clean_test),
	KUNIT_CASE(alloc_user_pages_gather_test),
	KUNIT_CASE(alloc_user_run_stops_at_region_start_test),
	{}
};

static struct kunit_suite p2pdma_alloc_suite = {
	.name = "p2pdma-alloc",
	.suite_init = al_suite_init,
	.suite_exit = al_suite_exit,
	.exit = al_exit,
	.test_cases = p2pdma_alloc_cases,
};

kunit_test_suite(p2pdma_alloc_suite);
