/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap() suite: the mapping of p2pmem/allocate (mmap.c), run on the
 * ZONE_DEVICE pages that pci_p2pdma_add_resource() gives a fake
 * provider's BAR, through vm_mmap() of a file of the suite's own whose
 * mmap is allocate's (p2p_mapping_mmap()). The BAR's CPU range is address
 * space above 4 GiB that the suite reserves and that nothing backs: a
 * static stub stands in for the clearing (p2p_clean()), so nothing reads
 * or writes it; pages are faulted in (fixup_user_fault()), pinned and
 * unmapped, never touched. Last, P's unbind beside the page_free callback
 * of a page userspace let go. Included at the end of mmap.c.
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

/* The suite's stand-in for p2pmem/allocate: its mmap is allocate's. */
static int mp_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	return p2p_mapping_mmap(mp_p->pdev, vma);
}

static const struct file_operations mp_fops = {
	.owner = THIS_MODULE,
	.mmap = mp_file_mmap,
};

static void mp_fput(void *file)
{
	fput(file);
}

static struct file *mp_file(struct kunit *test)
{
	struct file *file;

	file = anon_inode_getfile("p2pdma-kunit", &mp_fops, NULL, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mp_fput, file), 0);
	return file;
}

/*
 * An mmap() of allocate, @len bytes long, in the case's own mm: the user
 * address, and the mapping in *@map.
 */
static unsigned long mp_mmap(struct kunit *test, size_t len,
			     struct p2p_mapping **map)
{
	struct vm_area_struct *vma;
	unsigned long uaddr;

	uaddr = kunit_vm_mmap(test, mp_file(test), 0, len,
			      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE_MSG(test, !uaddr || IS_ERR_VALUE(uaddr),
			       "kunit_vm_mmap: %ld", (long)uaddr);
	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, uaddr);
	*map = vma ? vma->vm_private_data : NULL;
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_NOT_NULL(test, *map);
	return uaddr;
}

/* Fault the page at @uaddr in as a user access would: 0 or -EFAULT. */
static int mp_fault(unsigned long uaddr, unsigned int flags)
{
	int ret;

	mmap_read_lock(current->mm);
	ret = fixup_user_fault(current->mm, uaddr, flags, NULL);
	mmap_read_unlock(current->mm);
	return ret;
}

/* How many page tables map page @i of @map: 1 once faulted in. */
static int mp_mapped(struct p2p_mapping *map, unsigned long i)
{
	return folio_mapcount(page_folio(p2p_mapping_page(map, i)));
}

/* Pages @first to @first + @n - 1 of @map that are mapped. */
static unsigned long mp_mapped_in(struct p2p_mapping *map, unsigned long first,
				  unsigned long n)
{
	unsigned long i, mapped = 0;

	for (i = first; i < first + n; i++)
		mapped += mp_mapped(map, i);
	return mapped;
}

static void mp_kill_self(void)
{
	if (mp_cleans == 1)
		force_sig(SIGKILL);
}

/*
 * A fatal signal stops the clearing of a long mapping between batches
 * (defect 5 of the pool's redesign: mmap() of gigabytes of dirty memory,
 * with mmap_lock held for write, could not be killed). The signal arrives
 * while the first batch is cleared: nothing after it is cleared, mmap()
 * fails with -EINTR, and every page comes back.
 */
static void mp_fatal_signal_stops_clearing_test(struct kunit *test)
{
	struct file *file = mp_file(test);
	unsigned long uaddr;

	/* An mm for the case: vm_mmap() below reports the errno itself. */
	KUNIT_ASSERT_NE(test, kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ,
					    MAP_PRIVATE | MAP_ANONYMOUS, 0), 0);
	/* A kthread ignores signals unless it allows them. */
	allow_signal(SIGKILL);
	mp_on_clean = mp_kill_self;
	uaddr = vm_mmap(file, 0, MP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_EXPECT_TRUE(test, fatal_signal_pending(current));
	flush_signals(current);
	disallow_signal(SIGKILL);

	KUNIT_EXPECT_EQ(test, (long)uaddr, -EINTR);
	KUNIT_EXPECT_EQ(test, mp_cleans, 1);
	if (!IS_ERR_VALUE(uaddr))
		vm_munmap(uaddr, MP_LEN);
}

/*
 * mmap() maps nothing; a fault maps the 2 MiB batch of the mapping around
 * the address (P2P_MAP_BATCH pages), each page with a reference of ours
 * (p2p_pages_hand_out(): vm_insert_pages() refuses a page without one,
 * and the pool's free pages have none on 7.3) and the mapping's. A fault
 * in a batch that is partly mapped maps the rest (vm_insert_pages() stops
 * at a mapped page: -EBUSY, skipped). An munmap() of one page gives that
 * page back; the last munmap() all of them, with no reference left.
 */
static void mp_fault_maps_its_batch_test(struct kunit *test)
{
	struct p2p_mapping *map;
	unsigned long uaddr;
	struct page *page;

	uaddr = mp_mmap(test, MP_LEN, &map);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, 0, 3 * MP_BATCH), 0);
	KUNIT_EXPECT_EQ(test, mp_cleans, 3);
	page = p2p_mapping_page(map, MP_BATCH + 7);

	KUNIT_ASSERT_EQ(test, mp_fault(uaddr + (MP_BATCH + 7) * PAGE_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, 0, MP_BATCH), 0);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, MP_BATCH, MP_BATCH), MP_BATCH);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, 2 * MP_BATCH, MP_BATCH), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(map->handed, 3 * MP_BATCH), MP_BATCH);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 2);

	/* A hole in the batch: the fault maps around it. */
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr + (MP_BATCH + 3) * PAGE_SIZE,
					PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE - MP_LEN + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, MP_BATCH, MP_BATCH), MP_BATCH - 1);
	/* A page zapped, its VMA still there: it faults back in alone. */
	unmap_mapping_range(map->file->f_mapping,
			    (loff_t)(MP_BATCH + 5) << PAGE_SHIFT, PAGE_SIZE, 1);
	KUNIT_EXPECT_EQ(test, mp_mapped(map, MP_BATCH + 5), 0);
	KUNIT_EXPECT_EQ(test, mp_fault(uaddr + (MP_BATCH + 5) * PAGE_SIZE,
				       FAULT_FLAG_WRITE), 0);
	KUNIT_EXPECT_EQ(test, mp_mapped(map, MP_BATCH + 5), 1);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, MP_BATCH, MP_BATCH), MP_BATCH - 1);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 2);

	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, MP_LEN), 0);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 0);
}

/*
 * Pages that were never faulted in go back as they came, clean; a page
 * written through a pin (O_DIRECT into it) comes back dirty, and the
 * others that were mapped come back clean: no write reached them.
 */
static void mp_untouched_pages_go_back_clean_test(struct kunit *test)
{
	struct p2p_region *region;
	struct p2p_mapping *map;
	unsigned long uaddr, first;
	struct page *pinned;
	int ret;

	region = list_first_entry(&mp_p2p()->regions, struct p2p_region, node);
	p2p_mark(region, 0, region->npages, false);
	uaddr = mp_mmap(test, 2 * MP_BATCH * PAGE_SIZE, &map);
	first = p2p_page_index(region, (unsigned long)map->kaddr);
	ret = pin_user_pages_fast(uaddr + 5 * PAGE_SIZE, 1,
				  FOLL_WRITE | FOLL_PCI_P2PDMA, &pinned);
	KUNIT_ASSERT_EQ(test, ret, 1);
	unpin_user_pages_dirty_lock(&pinned, 1, true);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, 0, MP_BATCH), MP_BATCH);

	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, 2 * MP_BATCH * PAGE_SIZE), 0);
	p2p_runs_flush(mp_p2p());
	KUNIT_EXPECT_EQ(test, bitmap_weight(region->dirty, region->npages), 1);
	KUNIT_EXPECT_TRUE(test, test_bit(first + 5, region->dirty));
	p2p_mark(region, 0, region->npages, false);
}

/*
 * The unbind revokes a mapping (p2p_mappings_revoke()): every page is
 * unmapped, a fault fails (SIGBUS), and the memory goes back at once,
 * except a pinned page, which goes back when the pin does. The munmap()
 * after it gives back nothing more.
 */
static void mp_revoke_unmaps_and_gives_back_test(struct kunit *test)
{
	struct p2p_mapping *map;
	unsigned long uaddr;
	struct page *pinned;
	int ret;

	uaddr = mp_mmap(test, MP_LEN, &map);
	KUNIT_ASSERT_EQ(test, mp_fault(uaddr, 0), 0);
	ret = pin_user_pages_fast(uaddr + 3 * PAGE_SIZE, 1, FOLL_PCI_P2PDMA,
				  &pinned);
	KUNIT_ASSERT_EQ(test, ret, 1);

	p2p_mappings_revoke(mp_p->pdev);
	KUNIT_EXPECT_TRUE(test, map->revoked);
	KUNIT_EXPECT_EQ(test, mp_mapped_in(map, 0, MP_BATCH), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE - PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, mp_fault(uaddr + MP_BATCH * PAGE_SIZE, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, mp_fault(uaddr, 0), -EFAULT);

	unpin_user_pages(&pinned, 1);
	KUNIT_EXPECT_EQ(test, p2p_available(mp_p2p()), MP_BAR_SIZE);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, MP_LEN), 0);
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
	KUNIT_CASE(mp_fatal_signal_stops_clearing_test),
	KUNIT_CASE(mp_fault_maps_its_batch_test),
	KUNIT_CASE(mp_untouched_pages_go_back_clean_test),
	KUNIT_CASE(mp_revoke_unmaps_and_gives_back_test),
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
