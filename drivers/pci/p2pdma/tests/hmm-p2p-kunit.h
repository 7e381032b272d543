/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HMM P2P suite: hmm_range_fault() on DEVICE_PRIVATE pages whose owner
 * names a P2PDMA page for each (dev_pagemap_ops.p2p_page() and
 * HMM_PFN_REQ_P2P, the mm patch of the series: mm/$KERNEL/hmm-p2p.diff), and the
 * DMA mapping of such a page for a peer. Included at the end of route.c
 * (pci_p2pdma_map_segment()) when the kernel has HMM mirroring and
 * DEVICE_PRIVATE memory.
 *
 * The owner is the suite: a DEVICE_PRIVATE pagemap (free physical address
 * space; no struct page of it is ever read or written through) whose page
 * i stands for page i of HP_PAGES of P2P memory taken from fake provider
 * P. P's BAR is address space that nothing backs, so the cases compare
 * page frame numbers and flags, never bytes of P2P memory; the data of a
 * device-private page lives in a RAM shadow page, which migrate_to_ram()
 * copies back. A case maps HP_PAGES anonymous pages of its own
 * (kunit_vm_mmap()), writes a pattern, migrates them into the pagemap with
 * migrate_vma_*() and mirrors them with hmm_range_fault() under an
 * interval notifier, as a driver would.
 *
 *   7e57:00 (Intel 0x2020), window CPU = bus hp_fp->window
 *     root port - switch: DSP0 - P (BAR 0: 64-bit, HP_BAR_SIZE)
 *                         DSP1 - Q (a client: bus address)
 */

#include "p2pdma-kunit.h"

#include <linux/hmm.h>
#include <linux/highmem.h>
#include <linux/memremap.h>
#include <linux/migrate.h>
#include <linux/mmu_notifier.h>

#define HP_PAGES	8
#define HP_LEN		(HP_PAGES * PAGE_SIZE)
#define HP_BAR_SIZE	SZ_2M
#define HP_PRIVATE	SZ_2M	/* the DEVICE_PRIVATE range: a subsection */

enum { HP_RP, HP_USP, HP_DSP0, HP_DSP1, HP_P, HP_Q, HP_FNS };

static const struct fake_line hp_topology[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_WINDOW_LINE,
	FAKE_RP_LINE(HP_RP),
	FAKE_SWITCH_LINE(HP_USP, HP_RP, 2),
	FAKE_EP_LINE(HP_P, HP_DSP0, 1),
	FAKE_EP_LINE(HP_Q, HP_DSP1, 1),
	FAKE_BAR64_LINE(HP_P, 0, HP_BAR_SIZE),
};

static struct fake_pci *hp_fp;
static struct fake_fn *hp_fn[HP_FNS];
static void *hp_grp;
static struct dev_pagemap hp_pgmap;
static struct resource *hp_private;
static int hp_owner;		/* the owner token of hp_pgmap */

/* One case's owner state. */
struct hp_case {
	void *p2p;		/* HP_LEN bytes of P's P2P memory */
	struct page *shadow;	/* HP_PAGES RAM pages: the private data */
	unsigned long uaddr;	/* the case's anonymous mapping */
	int to_ram;		/* migrate_to_ram() calls */
	int p2p_err;		/* what p2p_page() fails with, or 0 */
	int invalidations;	/* of the mirror's interval notifier */
};

static struct hp_case *hp_cur;
/*
 * Device-private pages handed out: page_free() may run after the case,
 * when its mm goes.
 */
static DECLARE_BITMAP(hp_used, HP_PAGES);

static unsigned long hp_index(struct page *page)
{
	return page_to_pfn(page) - PHYS_PFN(hp_pgmap.range.start);
}

static struct page *hp_shadow(unsigned long i)
{
	return hp_cur->shadow + i;
}

static struct page *hp_p2p_page_of(unsigned long i)
{
	return virt_to_page(hp_cur->p2p + i * PAGE_SIZE);
}

static void hp_page_free(struct page *page)
{
	clear_bit(hp_index(page), hp_used);
}

static struct page *hp_p2p_page(struct page *page)
{
	if (hp_cur->p2p_err)
		return ERR_PTR(hp_cur->p2p_err);
	return hp_p2p_page_of(hp_index(page));
}

/* A CPU fault on a device-private page: copy its shadow back to RAM. */
static vm_fault_t hp_migrate_to_ram(struct vm_fault *vmf)
{
	unsigned long src = 0, dst = 0;
	struct migrate_vma args = {
		.vma = vmf->vma,
		.start = vmf->address,
		.end = vmf->address + PAGE_SIZE,
		.src = &src,
		.dst = &dst,
		.pgmap_owner = &hp_owner,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE,
		.fault_page = vmf->page,
	};
	struct page *dpage;

	hp_cur->to_ram++;
	if (migrate_vma_setup(&args))
		return VM_FAULT_SIGBUS;
	if (src & MIGRATE_PFN_MIGRATE) {
		dpage = alloc_page_vma(GFP_HIGHUSER_MOVABLE, vmf->vma,
				       vmf->address);
		if (dpage) {
			lock_page(dpage);
			copy_highpage(dpage,
				      hp_shadow(hp_index(migrate_pfn_to_page(src))));
			dst = migrate_pfn(page_to_pfn(dpage)) |
			      (src & MIGRATE_PFN_WRITE);
		}
	}
	migrate_vma_pages(&args);
	migrate_vma_finalize(&args);
	return dst ? 0 : VM_FAULT_OOM;
}

/* The suite's device-private folios are order 0: each is one page. */
static void hp_folio_free(struct folio *folio)
{
	hp_page_free(&folio->page);
}

static const struct dev_pagemap_ops hp_ops = {
	.folio_free = hp_folio_free,
	.migrate_to_ram = hp_migrate_to_ram,
	.p2p_page = hp_p2p_page,
};

static const struct dev_pagemap_ops hp_ops_no_p2p = {
	.folio_free = hp_folio_free,
	.migrate_to_ram = hp_migrate_to_ram,
};

static void hp_suite_exit(struct kunit_suite *suite)
{
	if (hp_pgmap.type)
		memunmap_pages(&hp_pgmap);
	memset(&hp_pgmap, 0, sizeof(hp_pgmap));
	if (hp_private)
		release_mem_region(hp_private->start, resource_size(hp_private));
	hp_private = NULL;
	if (hp_grp)
		devres_release_group(&hp_fn[HP_P]->pdev->dev, hp_grp);
	hp_grp = NULL;
	fake_pci_destroy(hp_fp);
	hp_fp = NULL;
}

static int hp_suite_init(struct kunit_suite *suite)
{
	struct pci_dev *p;
	void *addr;
	int ret;

	ret = fake_pci_table(&hp_fp, hp_topology, ARRAY_SIZE(hp_topology),
			     hp_fn, HP_BAR_SIZE, FAKE_BUS_IS_CPU);
	if (ret)
		return ret;
	p = hp_fn[HP_P]->pdev;
	ret = -ENOMEM;
	hp_grp = devres_open_group(&p->dev, NULL, GFP_KERNEL);
	if (hp_grp)
		ret = pci_p2pdma_add_resource(p, 0, 0, 0);
	if (!ret)
		ret = dma_set_mask_and_coherent(&hp_fn[HP_Q]->pdev->dev,
						DMA_BIT_MASK(64));
	if (ret)
		goto fail;

	hp_private = request_free_mem_region(&iomem_resource, HP_PRIVATE,
					     "p2pdma-kunit device private");
	if (IS_ERR(hp_private)) {
		ret = PTR_ERR(hp_private);
		hp_private = NULL;
		goto fail;
	}
	hp_pgmap.type = MEMORY_DEVICE_PRIVATE;
	hp_pgmap.range.start = hp_private->start;
	hp_pgmap.range.end = hp_private->end;
	hp_pgmap.nr_range = 1;
	hp_pgmap.ops = &hp_ops;
	hp_pgmap.owner = &hp_owner;
	addr = memremap_pages(&hp_pgmap, NUMA_NO_NODE);
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		hp_pgmap.type = 0;
		goto fail;
	}
	return 0;

fail:
	hp_suite_exit(suite);
	return ret;
}

/* P's clearing is a stand-in: nothing backs the fake BAR. */
static int hp_clean_stub(struct p2p_region *region, unsigned long first,
			 unsigned long n)
{
	return 0;
}

static int hp_init(struct kunit *test)
{
	struct hp_case *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long i;
	u8 *pattern;

	if (!c)
		return -ENOMEM;
	kunit_activate_static_stub(test, p2p_clean, hp_clean_stub);
	set_cpu_rule(test, false);
	set_policy(test, "");
	c->shadow = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(HP_LEN));
	if (!c->shadow)
		return -ENOMEM;
	c->p2p = pci_alloc_p2pmem(hp_fn[HP_P]->pdev, HP_LEN);
	if (!c->p2p)
		return -ENOMEM;
	hp_pgmap.ops = &hp_ops;
	hp_cur = c;
	test->priv = c;

	/* The process's pages, each filled with its own byte. */
	c->uaddr = kunit_vm_mmap(test, NULL, 0, HP_LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(c->uaddr))
		return c->uaddr;
	pattern = kunit_kmalloc(test, HP_LEN, GFP_KERNEL);
	if (!pattern)
		return -ENOMEM;
	for (i = 0; i < HP_PAGES; i++)
		memset(pattern + i * PAGE_SIZE, 0xa0 + i, PAGE_SIZE);
	if (copy_to_user((void __user *)c->uaddr, pattern, HP_LEN))
		return -EFAULT;
	return 0;
}

/*
 * The end of a case: unmapping its range frees every device-private page
 * (the owner's page_free()).
 */
static void hp_unmap(struct kunit *test)
{
	struct hp_case *c = test->priv;

	KUNIT_EXPECT_EQ(test, vm_munmap(c->uaddr, HP_LEN), 0);
	KUNIT_EXPECT_TRUE_MSG(test, bitmap_empty(hp_used, HP_PAGES),
			      "device-private pages not freed with the mapping");
}

/* Runs without the case's mm: what it mapped goes with that mm. */
static void hp_exit(struct kunit *test)
{
	struct hp_case *c = test->priv;

	if (!c)
		return;
	hp_cur = NULL;
	if (c->p2p)
		pci_free_p2pmem(hp_fn[HP_P]->pdev, c->p2p, HP_LEN);
	if (c->shadow)
		__free_pages(c->shadow, get_order(HP_LEN));
}

/*
 * Migrate the case's pages into device-private pages (page i into page i
 * of the pagemap), writable entries if @writable. Returns the number
 * migrated.
 */
static int hp_to_device(struct kunit *test, bool writable)
{
	struct hp_case *c = test->priv;
	unsigned long src[HP_PAGES] = {}, dst[HP_PAGES] = {};
	struct mm_struct *mm = current->mm;
	struct migrate_vma args = {
		.start = c->uaddr,
		.end = c->uaddr + HP_LEN,
		.src = src,
		.dst = dst,
		.pgmap_owner = &hp_owner,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	struct page *spage, *dpage;
	unsigned long i;
	int n = 0;

	mmap_read_lock(mm);
	args.vma = vma_lookup(mm, c->uaddr);
	if (!args.vma || migrate_vma_setup(&args)) {
		mmap_read_unlock(mm);
		return -EINVAL;
	}
	for (i = 0; i < HP_PAGES; i++) {
		/* No page: a hole (or the zero page) of a read-only range. */
		spage = migrate_pfn_to_page(src[i]);
		if (!(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = pfn_to_page(PHYS_PFN(hp_pgmap.range.start) + i);
		set_bit(i, hp_used);
		zone_device_page_init(dpage, &hp_pgmap, 0);
		if (spage)
			copy_highpage(hp_shadow(i), spage);
		else
			clear_highpage(hp_shadow(i));
		dst[i] = migrate_pfn(page_to_pfn(dpage));
		if (writable)
			dst[i] |= MIGRATE_PFN_WRITE;
	}
	migrate_vma_pages(&args);
	for (i = 0; i < HP_PAGES; i++)
		if (src[i] & MIGRATE_PFN_MIGRATE)
			n++;
	migrate_vma_finalize(&args);
	mmap_read_unlock(mm);
	return n;
}

static bool hp_invalidate(struct mmu_interval_notifier *mni,
			  const struct mmu_notifier_range *range,
			  unsigned long cur_seq)
{
	if (hp_cur)
		hp_cur->invalidations++;
	mmu_interval_set_seq(mni, cur_seq);
	return true;
}

static const struct mmu_interval_notifier_ops hp_mni_ops = {
	.invalidate = hp_invalidate,
};

/*
 * hmm_range_fault() over the case's pages with @flags as every page's
 * request, for @owner, as a mirroring driver calls it: retried while the
 * range changes under it. Returns its result.
 */
static int hp_mirror(struct kunit *test, unsigned long flags, void *owner,
		     unsigned long *pfns)
{
	struct hp_case *c = test->priv;
	struct mm_struct *mm = current->mm;
	struct mmu_interval_notifier mni;
	struct hmm_range range = {
		.notifier = &mni,
		.start = c->uaddr,
		.end = c->uaddr + HP_LEN,
		.hmm_pfns = pfns,
		.default_flags = flags,
		.dev_private_owner = owner,
	};
	int ret, tries = 0;

	ret = mmu_interval_notifier_insert(&mni, mm, c->uaddr, HP_LEN,
					   &hp_mni_ops);
	if (ret)
		return ret;
	do {
		range.notifier_seq = mmu_interval_read_begin(&mni);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (!ret && mmu_interval_read_retry(&mni, range.notifier_seq))
			ret = -EBUSY;
	} while (ret == -EBUSY && ++tries < 16);
	mmu_interval_notifier_remove(&mni);
	return ret;
}

static unsigned long hp_private_pfn(unsigned long i)
{
	return PHYS_PFN(hp_pgmap.range.start) + i;
}

/* Page @i of a mirror is RAM holding the case's pattern for page @i. */
static void hp_expect_ram(struct kunit *test, unsigned long pfn,
			  unsigned long i)
{
	struct page *page;
	u8 *kaddr;

	KUNIT_ASSERT_TRUE(test, pfn & HMM_PFN_VALID);
	page = hmm_pfn_to_page(pfn);
	KUNIT_EXPECT_FALSE(test, is_zone_device_page(page));
	KUNIT_EXPECT_FALSE(test, pfn & HMM_PFN_P2P);
	kaddr = kmap_local_page(page);
	KUNIT_EXPECT_EQ(test, kaddr[0], 0xa0 + i);
	KUNIT_EXPECT_EQ(test, kaddr[PAGE_SIZE - 1], 0xa0 + i);
	kunmap_local(kaddr);
}

/*
 * With HMM_PFN_REQ_P2P, each device-private page comes back as the P2P
 * page its owner names: valid, writable as the entry is, flagged P2P; and
 * it stays device-private (no migration).
 */
static void hp_flag_gives_p2p_pages_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_P2P, NULL, pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		KUNIT_EXPECT_EQ_MSG(test, pfns[i],
				    page_to_pfn(hp_p2p_page_of(i)) |
				    HMM_PFN_VALID | HMM_PFN_WRITE | HMM_PFN_P2P,
				    "page %lu", i);
	KUNIT_EXPECT_EQ(test, c->to_ram, 0);

	/* The owner still sees its own pages there, flag or not. */
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_P2P, &hp_owner,
					pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		KUNIT_EXPECT_EQ(test, pfns[i], hp_private_pfn(i) |
				HMM_PFN_VALID | HMM_PFN_WRITE);
	hp_unmap(test);
}

/* Without the flag, 6.12's behaviour: every page migrates back to RAM. */
static void hp_no_flag_migrates_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT, NULL, pfns),
			0);
	for (i = 0; i < HP_PAGES; i++) {
		hp_expect_ram(test, pfns[i], i);
		KUNIT_EXPECT_TRUE(test, pfns[i] & HMM_PFN_WRITE);
	}
	KUNIT_EXPECT_EQ(test, c->to_ram, HP_PAGES);
	hp_unmap(test);
}

/*
 * Without a fault request a device-private page of another owner reads
 * as 0 (faultable), as in 6.12; with only HMM_PFN_REQ_P2P it is reported
 * as its P2P page, still without a migration.
 */
static void hp_snapshot_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, 0, NULL, pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		KUNIT_EXPECT_EQ(test, pfns[i], 0);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_P2P, NULL, pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		KUNIT_EXPECT_EQ(test, pfns[i],
				page_to_pfn(hp_p2p_page_of(i)) |
				HMM_PFN_VALID | HMM_PFN_WRITE | HMM_PFN_P2P);
	KUNIT_EXPECT_EQ(test, c->to_ram, 0);
	hp_unmap(test);
}

/* An owner that names no P2P page: the fault migrates, as without it. */
static void hp_callback_fails_falls_back_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	c->p2p_err = -ENOENT;
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_P2P, NULL, pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		hp_expect_ram(test, pfns[i], i);
	KUNIT_EXPECT_EQ(test, c->to_ram, HP_PAGES);
	hp_unmap(test);
}

/* A pagemap without the callback: the same fallback. */
static void hp_no_callback_falls_back_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	hp_pgmap.ops = &hp_ops_no_p2p;
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_P2P, NULL, pfns), 0);
	hp_pgmap.ops = &hp_ops;
	for (i = 0; i < HP_PAGES; i++)
		hp_expect_ram(test, pfns[i], i);
	KUNIT_EXPECT_EQ(test, c->to_ram, HP_PAGES);
	hp_unmap(test);
}

/*
 * Read-only device-private entries (a read-only mapping, never written:
 * migrated from holes): the P2P page comes back without HMM_PFN_WRITE; a
 * caller that requires write access gets 6.12's answer for the mapping,
 * -EPERM, and nothing migrates.
 */
static void hp_read_only_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	unsigned long pfns[HP_PAGES], i;

	KUNIT_ASSERT_EQ(test, vm_munmap(c->uaddr, HP_LEN), 0);
	c->uaddr = kunit_vm_mmap(test, NULL, 0, HP_LEN, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(c->uaddr));
	KUNIT_ASSERT_EQ(test, hp_to_device(test, false), HP_PAGES);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_P2P, NULL, pfns), 0);
	for (i = 0; i < HP_PAGES; i++)
		KUNIT_EXPECT_EQ(test, pfns[i],
				page_to_pfn(hp_p2p_page_of(i)) |
				HMM_PFN_VALID | HMM_PFN_P2P);
	KUNIT_EXPECT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_WRITE | HMM_PFN_REQ_P2P,
					NULL, pfns), -EPERM);
	KUNIT_EXPECT_EQ(test, c->to_ram, 0);
	hp_unmap(test);
}

/*
 * The P2P page goes through the DMA API like any P2P memory: for Q,
 * below the same switch as P, a bus address (PCI_P2PDMA_MAP_BUS_ADDR).
 */
static void hp_dma_map_bus_address_test(struct kunit *test)
{
	struct device *q = &hp_fn[HP_Q]->pdev->dev;
	unsigned long pfns[HP_PAGES];
	struct scatterlist sg;
	struct page *page;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	KUNIT_ASSERT_EQ(test, hp_mirror(test, HMM_PFN_REQ_FAULT |
					HMM_PFN_REQ_P2P, NULL, pfns), 0);
	KUNIT_ASSERT_TRUE(test, pfns[3] & HMM_PFN_P2P);
	page = hmm_pfn_to_page(pfns[3]);
	sg_init_table(&sg, 1);
	sg_set_page(&sg, page, PAGE_SIZE, 0);
	KUNIT_ASSERT_EQ(test, dma_map_sg(q, &sg, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_EXPECT_TRUE(test, sg_dma_is_bus_address(&sg));
	/* The BAR's bus address (the PCI core's) plus the page's offset. */
	KUNIT_EXPECT_EQ(test, sg_dma_address(&sg),
			pci_bus_address(hp_fn[HP_P]->pdev, 0) +
			page_to_phys(page) -
			pci_resource_start(hp_fn[HP_P]->pdev, 0));
	dma_unmap_sg(q, &sg, 1, DMA_BIDIRECTIONAL);
	hp_unmap(test);
}

/*
 * A CPU touch of a mirrored page migrates it back to RAM: the mirror's
 * notifier fires before, and the process reads its own bytes.
 */
static void hp_cpu_touch_invalidates_test(struct kunit *test)
{
	struct hp_case *c = test->priv;
	struct mm_struct *mm = current->mm;
	struct mmu_interval_notifier mni;
	u8 byte = 0;

	KUNIT_ASSERT_EQ(test, hp_to_device(test, true), HP_PAGES);
	KUNIT_ASSERT_EQ(test, mmu_interval_notifier_insert(&mni, mm, c->uaddr,
							   HP_LEN, &hp_mni_ops),
			0);
	c->invalidations = 0;
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)
					     (c->uaddr + 5 * PAGE_SIZE + 7), 1),
			0);
	mmu_interval_notifier_remove(&mni);
	KUNIT_EXPECT_EQ(test, byte, 0xa5);
	KUNIT_EXPECT_EQ(test, c->to_ram, 1);
	KUNIT_EXPECT_GE(test, c->invalidations, 1);
	KUNIT_EXPECT_FALSE(test, test_bit(5, hp_used));
	hp_unmap(test);
}

static struct kunit_case p2pdma_hmm_p2p_cases[] = {
	KUNIT_CASE(hp_flag_gives_p2p_pages_test),
	KUNIT_CASE(hp_no_flag_migrates_test),
	KUNIT_CASE(hp_snapshot_test),
	KUNIT_CASE(hp_callback_fails_falls_back_test),
	KUNIT_CASE(hp_no_callback_falls_back_test),
	KUNIT_CASE(hp_read_only_test),
	KUNIT_CASE(hp_dma_map_bus_address_test),
	KUNIT_CASE(hp_cpu_touch_invalidates_test),
	{}
};

static struct kunit_suite p2pdma_hmm_p2p_suite = {
	.name = "p2pdma-hmm-p2p",
	.suite_init = hp_suite_init,
	.suite_exit = hp_suite_exit,
	.init = hp_init,
	.exit = hp_exit,
	.test_cases = p2pdma_hmm_p2p_cases,
};

kunit_test_suite(p2pdma_hmm_p2p_suite);
