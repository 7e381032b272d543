/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap() suite: the loop of an mmap() of p2pmem/allocate that clears P2P
 * memory and inserts it into the mapping (p2p_map_pages()), run on the
 * ZONE_DEVICE pages that pci_p2pdma_add_resource() gives a fake
 * provider's BAR and on a shared mapping of the test's own
 * (kunit_vm_mmap()). The BAR's CPU range is address space above 4 GiB
 * that the suite reserves and that nothing backs: a static stub stands in
 * for the clearing (p2p_clean()), so nothing reads or writes it; pages
 * are inserted and unmapped, never touched. Then the check that revokes
 * a mapping an unbind could not see (p2p_mmap_check_fn()), on a shared
 * mapping of a shmem file. Last, P's unbind beside the page_free callback
 * of a page userspace let go. Included at the end of sysfs.c.
 *
 *   7e57:00 (Intel 0x2020), window CPU = bus mp_fp->window
 *     root port - P (BAR 0: 64-bit, MP_BAR_SIZE, all of it registered)
 */

#include "p2pdma-kunit.h"

#define MP_BAR_SIZE	SZ_8M
#define MP_BATCH	P2P_MAP_BATCH			/* pages */
#define MP_LEN		(3 * MP_BATCH * PAGE_SIZE)	/* three batches */

enum { MP_RP, MP_P, MP_FNS };

static const struct fake_line mp_topology[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_WINDOW_LINE,
	FAKE_RP_LINE(MP_RP),
	FAKE_EP_LINE(MP_P, MP_RP, 1),
	FAKE_BAR64_LINE(MP_P, 0, MP_BAR_SIZE),
};

static struct fake_pci *mp_fp;
static struct fake_fn *mp_fn[MP_FNS];
static struct fake_fn *mp_p;
static void *mp_grp;

static struct pci_p2pdma *mp_p2p(void)
{
	return rcu_dereference_protected(mp_p->pdev->p2pdma, 1);
}

static void mp_suite_exit(struct kunit_suite *suite)
{
	if (mp_grp)
		devres_release_group(&mp_p->pdev->dev, mp_grp);
	mp_grp = NULL;
	fake_pci_destroy(mp_fp);
	mp_fp = NULL;
}

static int mp_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = fake_pci_table(&mp_fp, mp_topology, ARRAY_SIZE(mp_topology),
			     mp_fn, MP_BAR_SIZE, FAKE_BUS_IS_CPU);
	if (ret)
		return ret;
	mp_p = mp_fn[MP_P];
	ret = -ENOMEM;
	mp_grp = devres_open_group(&mp_p->pdev->dev, NULL, GFP_KERNEL);
	if (mp_grp)
		ret = pci_p2pdma_add_resource(mp_p->pdev, 0, 0, 0);
	if (ret)
		mp_suite_exit(suite);
	return ret;
}

/* The stand-in for p2p_clean(): counts batches, writes nothing. */
static int mp_cleans;
static void (*mp_on_clean)(void);

static int mp_clean_stub(struct p2p_region *region, unsigned long first,
			 unsigned long n)
{
	mp_cleans++;
	if (mp_on_clean)
		mp_on_clean();
	return 0;
}

static int mp_init(struct kunit *test)
{
	mp_cleans = 0;
	mp_on_clean = NULL;
	kunit_activate_static_stub(test, p2p_clean, mp_clean_stub);
	return 0;
}

/* Each case must leave all of P's memory in the pool (while P has it). */
static void mp_exit(struct kunit *test)
{
	if (mp_grp)
		KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE);
}

/*
 * A fresh shared mapping of @len bytes in the test's own mm, P2P memory
 * for it (one pgmap reference per page, as mmap() takes them) and the
 * mapping's VMA; the caller holds mmap_lock for write when it inserts.
 */
static struct vm_area_struct *mp_setup(struct kunit *test, size_t len,
				       unsigned long *uaddr, void **kaddr)
{
	struct vm_area_struct *vma;

	*uaddr = kunit_vm_mmap(test, NULL, 0, len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE_MSG(test, !*uaddr || IS_ERR_VALUE(*uaddr),
			       "kunit_vm_mmap: %ld", (long)*uaddr);
	/* As mmap() allocates: what earlier cases unmapped is in the pool. */
	p2p_runs_flush(mp_p2p());
	*kaddr = p2p_alloc(mp_p->pdev, len, len >> PAGE_SHIFT, false);
	KUNIT_ASSERT_NOT_NULL(test, *kaddr);
	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, *uaddr);
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	return vma;
}

/*
 * Run p2p_map_pages() as mmap() does, with mmap_lock held for write; the
 * pages it did not insert go back to the pool the way mmap()'s error path
 * returns them.
 */
static int mp_map(struct vm_area_struct *vma, void *kaddr, size_t len,
		  unsigned long *done)
{
	unsigned long i;
	int ret;

	mmap_write_lock(current->mm);
	ret = p2p_map_pages(vma, kaddr, len >> PAGE_SHIFT, done);
	mmap_write_unlock(current->mm);
	for (i = *done; i < len >> PAGE_SHIFT; i++)
		p2p_page_free(virt_to_page(kaddr + (i << PAGE_SHIFT)));
	return ret;
}

/* How many page tables map the page at @kaddr: 1 once inserted. */
static int mp_mapped(void *kaddr)
{
	return folio_mapcount(page_folio(virt_to_page(kaddr)));
}

static void mp_kill_self(void)
{
	if (mp_cleans == 1)
		force_sig(SIGKILL);
}

/*
 * A fatal signal stops a long mapping between batches (defect 5 of the
 * pool's redesign: mmap() of gigabytes of dirty memory, with mmap_lock
 * held for write, could not be killed). The signal arrives while the
 * first batch is cleared: that batch is inserted, nothing after it is
 * cleared or inserted, -EINTR is returned, and every page comes back.
 */
static void mp_fatal_signal_stops_mapping_test(struct kunit *test)
{
	unsigned long uaddr, done = ~0UL;
	struct vm_area_struct *vma;
	void *kaddr;
	int ret;

	vma = mp_setup(test, MP_LEN, &uaddr, &kaddr);
	/* A kthread ignores signals unless it allows them. */
	allow_signal(SIGKILL);
	mp_on_clean = mp_kill_self;
	ret = mp_map(vma, kaddr, MP_LEN, &done);
	KUNIT_EXPECT_TRUE(test, fatal_signal_pending(current));
	flush_signals(current);
	disallow_signal(SIGKILL);

	KUNIT_EXPECT_EQ(test, ret, -EINTR);
	KUNIT_EXPECT_EQ(test, done, MP_BATCH);
	KUNIT_EXPECT_EQ(test, mp_cleans, 1);
	KUNIT_EXPECT_EQ(test, mp_mapped(kaddr + (MP_BATCH - 1) * PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, mp_mapped(kaddr + MP_BATCH * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, MP_LEN), 0);
}

/*
 * A free page of the pool has no reference: 7.3's mm calls folio_free
 * when the last one goes and leaves the count at zero. An mmap() gives
 * each page one of its own before vm_insert_pages(), which refuses a page
 * without one (-EINVAL), and drops it once the page is inserted: the
 * mapping's is then the only one, and the unmap leaves none again.
 */
static void mp_hands_out_a_reference_test(struct kunit *test)
{
	const size_t len = MP_BATCH * PAGE_SIZE;
	unsigned long uaddr, done = ~0UL;
	struct vm_area_struct *vma;
	struct page *page;
	void *kaddr;
	int ret;

	vma = mp_setup(test, len, &uaddr, &kaddr);
	page = virt_to_page(kaddr + 7 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, page_ref_count(page), 0);
	ret = mp_map(vma, kaddr, len, &done);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, done, MP_BATCH);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	KUNIT_EXPECT_EQ(test, mp_mapped(kaddr + 7 * PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, len), 0);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 0);
}

static void mp_fput(void *file)
{
	fput(file);
}

/*
 * A MAP_SHARED mapping of @len bytes of a shmem file of the test's own,
 * as allocate's is once mmap() has linked it into the file; the file in
 * *@file, released at the end of the test. Returns the user address.
 */
static unsigned long mp_shmem_map(struct kunit *test, size_t len,
				  struct file **file)
{
	unsigned long uaddr;

	*file = shmem_file_setup("p2pdma-kunit", len, EMPTY_VMA_FLAGS);
	KUNIT_ASSERT_FALSE(test, IS_ERR(*file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mp_fput, *file), 0);
	uaddr = kunit_vm_mmap(test, *file, 0, len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE_MSG(test, !uaddr || IS_ERR_VALUE(uaddr),
			       "kunit_vm_mmap: %ld", (long)uaddr);
	return uaddr;
}

/*
 * The check that an mmap() of allocate queues for its way back to
 * userspace (p2p_mmap_check_fn()), run with the provider's state as an
 * unbind's p2p_close_start() leaves it (@closing) or as a bound one has
 * it. The mapping is one of a shmem file of the test's own, linked into
 * the file's address_space as allocate's is once mmap() returns; it holds
 * four pages of P. Returns how many of them are still mapped after the
 * check; every page is back in the pool at the end.
 */
static int mp_check_after(struct kunit *test, bool closing)
{
	const size_t len = 4 * PAGE_SIZE;
	unsigned long uaddr, done, i;
	struct p2p_mmap_check *mc;
	struct vm_area_struct *vma;
	struct file *file;
	int mapped = 0;
	void *kaddr;

	uaddr = mp_shmem_map(test, len, &file);
	mc = kzalloc_obj(*mc, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mc);
	/* One reference for each page and one for the check, as mmap(). */
	kaddr = p2p_alloc(mp_p->pdev, len, (len >> PAGE_SHIFT) + 1, false);
	KUNIT_ASSERT_NOT_NULL(test, kaddr);
	mmap_write_lock(current->mm);
	vma = vma_lookup(current->mm, uaddr);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_ASSERT_EQ(test, p2p_map_pages(vma, kaddr, len >> PAGE_SHIFT, &done), 0);
	mmap_write_unlock(current->mm);

	mc->pdev = mp_p->pdev;
	mc->file = get_file(file);
	mc->ref = &p2p_page_region(virt_to_page(kaddr))->pgmap.ref;
	WRITE_ONCE(mp_p2p()->closing, closing);
	p2p_mmap_check_fn(&mc->work);
	WRITE_ONCE(mp_p2p()->closing, false);

	for (i = 0; i < len >> PAGE_SHIFT; i++)
		mapped += mp_mapped(kaddr + i * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, len), 0);
	return mapped;
}

/*
 * An unbind that started before the new mapping was linked revoked the
 * file's mappings without it: the check revokes it. (The guest's
 * mmap-versus-unbind race reaches this only when it lands in a window of
 * microseconds.)
 */
static void mp_check_revokes_when_unbind_started_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mp_check_after(test, true), 0);
}

/* With no unbind started, the check leaves the mapping alone. */
static void mp_check_keeps_mapping_of_bound_provider_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mp_check_after(test, false), 4);
}

/*
 * The count of a dev_pagemap's percpu_ref while nothing else touches it:
 * the atomic part less the per-CPU bias, plus every CPU's counter. (A
 * switch to atomic mode would read it too, but a pgmap's ref is not made
 * with PERCPU_REF_ALLOW_REINIT: the switch frees its per-CPU counters for
 * good, and switching back warns.)
 */
static long mp_ref_count(struct percpu_ref *ref)
{
	unsigned long ptr = READ_ONCE(ref->percpu_count_ptr);
	unsigned long __percpu *pcpu;
	long n = atomic_long_read(&ref->data->count);
	int cpu;

	if (ptr & __PERCPU_REF_ATOMIC_DEAD)
		return n;
	n -= 1L << (BITS_PER_LONG - 1);		/* PERCPU_COUNT_BIAS */
	pcpu = (unsigned long __percpu *)ptr;
	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(pcpu, cpu);
	return n;
}

/*
 * An mmap() of allocate whose vm_insert_pages() fails midway gives back
 * every page it did not insert and every pgmap reference it took for
 * them (upstream 7.0 "Fix ... percpu ref leak on vm_insert_page
 * failure"). p2pmem_allocate_mmap() itself runs on a MAP_SHARED mapping
 * of a shmem file of the test's own, with mmap_lock held for write as
 * mmap() holds it; page 5 of the 8 is already populated (a put_user()
 * faulted a shmem page in), so vm_insert_pages() inserts pages 0-4 and
 * fails with -EBUSY. The check mmap() queued runs as task work, the
 * mapping is unmapped as mmap()'s failure unmaps it, and then the
 * pgmap's count is what it was and all of P is available again.
 */
static void mp_mmap_insert_fails_midway_test(struct kunit *test)
{
	const unsigned long npages = 8, busy = 5;
	const size_t len = npages * PAGE_SIZE;
	struct p2p_region *region;
	struct vm_area_struct *vma;
	struct percpu_ref *ref;
	unsigned long uaddr, i, held = 0;
	struct file *file;
	int ret = 0;
	long refs;

	region = list_first_entry(&mp_p2p()->regions, struct p2p_region, node);
	ref = &region->pgmap.ref;
	uaddr = mp_shmem_map(test, len, &file);
	KUNIT_ASSERT_EQ(test, put_user(1, (int __user *)(uaddr + busy * PAGE_SIZE)),
			0);
	p2p_runs_flush(mp_p2p());
	KUNIT_ASSERT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE);
	refs = mp_ref_count(ref);

	mmap_write_lock(current->mm);
	vma = vma_lookup(current->mm, uaddr);
	if (vma)
		ret = p2pmem_allocate_mmap(file, &mp_p->pdev->dev.kobj, NULL,
					   vma);
	mmap_write_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	/* Pages 0-4 and the check hold references until the unmap. */
	KUNIT_EXPECT_EQ(test, mp_ref_count(ref), refs + busy + 1);
	KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()),
			MP_BAR_SIZE - busy * PAGE_SIZE);
	task_work_run();
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, len), 0);

	KUNIT_EXPECT_EQ(test, mp_ref_count(ref), refs);
	KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE);
	/* No page of P has a reference left. */
	for (i = 0; i < region->npages; i++)
		if (page_ref_count(virt_to_page(region->kaddr + i * PAGE_SIZE)))
			held++;
	KUNIT_EXPECT_EQ(test, held, 0);
}

/* The last case's unbind of P, on a thread of its own. */
static DECLARE_COMPLETION(mp_unbound);

static int mp_unbinder(void *data)
{
	devres_release_group(&mp_p->pdev->dev, data);
	complete(&mp_unbound);
	return 0;
}

static int mp_run_adds;
static bool mp_pgmap_released;

/* p2p_run_add() as it starts: has the pgmap's last reference gone? */
static void mp_run_add_watch(struct pci_p2pdma *p2p, struct p2p_region *region,
			     unsigned long addr, bool dirty)
{
	mp_run_adds++;
	mp_pgmap_released = completion_done(&region->pgmap.done);
	kunit_deactivate_static_stub(kunit_get_current_test(), p2p_run_add);
	p2p_run_add(p2p, region, addr, dirty);
}

/*
 * Last (P is gone after it): the unbind of P runs while the page_free
 * callback of a page that userspace let go gives the page back
 * (p2p_page_free()). The unbind has killed the pgmap's reference and
 * waits in memunmap_pages() for the references pages hold; the callback
 * drops the page's only after the page is in the pool, so the pool, the
 * region and the provider's state that p2p_run_add() uses are all still
 * there when it runs. Were the reference dropped first, the pgmap would
 * be released (its completion done) when p2p_run_add() starts, and the
 * unbind would free the pool under it.
 */
static void mp_page_free_holds_pgmap_test(struct kunit *test)
{
	struct p2p_region *region;
	struct task_struct *t;
	void *grp = mp_grp;
	void *kaddr;
	int i;

	p2p_runs_flush(mp_p2p());
	/* A mapped page: one pgmap reference, as mmap() takes it. */
	kaddr = p2p_alloc(mp_p->pdev, PAGE_SIZE, 1, false);
	KUNIT_ASSERT_NOT_NULL(test, kaddr);
	region = p2p_page_region(virt_to_page(kaddr));
	reinit_completion(&mp_unbound);
	mp_run_adds = 0;
	mp_pgmap_released = false;
	mp_grp = NULL;
	t = kthread_run(mp_unbinder, grp, "p2pdma-unbind");
	if (IS_ERR(t)) {
		mp_grp = grp;
		p2p_page_free(virt_to_page(kaddr));
		KUNIT_FAIL(test, "no unbind thread: %ld", PTR_ERR(t));
		return;
	}
	for (i = 0; i < 10000 && !percpu_ref_is_dying(&region->pgmap.ref); i++)
		usleep_range(500, 1000);
	KUNIT_EXPECT_TRUE_MSG(test, percpu_ref_is_dying(&region->pgmap.ref),
			      "the unbind did not reach memunmap_pages()");
	/*
	 * The kill switches the reference to atomic mode in an RCU callback:
	 * from then on, a put of the last reference releases the pgmap.
	 */
	rcu_barrier();
	KUNIT_EXPECT_FALSE(test, completion_done(&mp_unbound));

	kunit_activate_static_stub(test, p2p_run_add, mp_run_add_watch);
	p2p_page_free(virt_to_page(kaddr));
	KUNIT_EXPECT_EQ(test, mp_run_adds, 1);
	KUNIT_EXPECT_FALSE_MSG(test, mp_pgmap_released,
			       "the page's pgmap reference went before the page was back in the pool");
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&mp_unbound, 30 * HZ),
			0);
}

static struct kunit_case p2pdma_map_cases[] = {
	KUNIT_CASE(mp_fatal_signal_stops_mapping_test),
	KUNIT_CASE(mp_hands_out_a_reference_test),
	KUNIT_CASE(mp_check_revokes_when_unbind_started_test),
	KUNIT_CASE(mp_check_keeps_mapping_of_bound_provider_test),
	KUNIT_CASE(mp_mmap_insert_fails_midway_test),
	/* Last: it unbinds P. */
	KUNIT_CASE(mp_page_free_holds_pgmap_test),
	{}
};

static struct kunit_suite p2pdma_map_suite = {
	.name = "p2pdma-map",
	.suite_init = mp_suite_init,
	.suite_exit = mp_suite_exit,
	.init = mp_init,
	.exit = mp_exit,
	.test_cases = p2pdma_map_cases,
};

kunit_test_suite(p2pdma_map_suite);
