/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dma-buf revocation suite (p2pdma-dmabuf-revoke): what the provider's
 * unbind does to its dma-bufs (dmabuf.c) and what it waits for before the
 * memory goes back to the pool: importers told to unmap and unmapping,
 * pinned importers revoked, unrevocable ones refused, fences, CPU
 * mappings and their page references, an export racing the unbind, a
 * release during the revocation, and another provider that must not wait
 * meanwhile. It shares the fixture and the
 * importers of the exporter suite (dmabuf-fixture.h). Included at the end
 * of dmabuf-revoke.c.
 */

#include "dmabuf-fixture.h"

/*
 * A pinned importer that is revocable: told, it unmaps and unpins at once
 * (RDMA's ib_umem_dmabuf_get_pinned_revocable_and_lock()).
 */
static void db_invalidate_unpin(struct dma_buf_attachment *attach)
{
	struct kunit *test = attach->importer_priv;
	struct db_case *c = test->priv;

	db_invalidate(attach);
	if (c->pinned) {
		dma_buf_unpin(attach);
		c->pinned = false;
	}
}

static const struct dma_buf_attach_ops db_importer_pinned = {
	.allow_peer2peer = true,
	.invalidate_mappings = db_invalidate_unpin,
};

/* A pinned importer with no invalidate_mappings (RDMA's plain pinned MR). */
static const struct dma_buf_attach_ops db_importer_unrevocable = {
	.allow_peer2peer = true,
};

/*
 * The dma-buf core's revocation contract (dma_buf_attach_revocable()): an
 * importer without invalidate_mappings cannot be revoked and is refused
 * at attach with -EOPNOTSUPP and the reason in the log, so it never holds
 * a mapping that an unbind would wait for forever; a revocable importer
 * may pin, and the provider's close tells it once, after which it has
 * unmapped and unpinned and the memory is back in the pool. The case
 * waits out any earlier burst of the refusals' ratelimit first.
 */
static void db_revocable_pin_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	u64 mark;
	int ret;

	db_export(test);
	msleep(5100);
	mark = kunit_kmsg_mark();
	attach = db_attach(test, db_q, &db_importer_unrevocable);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EOPNOTSUPP);
	if (!IS_ERR(attach))
		dma_buf_detach(c->dmabuf, attach);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "refused",
					       pci_name(db_q->pdev),
					       "cannot be revoked"), 1);

	c->attach = db_attach(test, db_q, &db_importer_pinned);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->attach);
	dma_resv_lock(c->dmabuf->resv, NULL);
	ret = dma_buf_pin(c->attach);
	if (!ret) {
		c->pinned = true;
		sgt = dma_buf_map_attachment(c->attach, DMA_BIDIRECTIONAL);
		if (!IS_ERR(sgt))
			c->sgt = sgt;
	}
	dma_resv_unlock(c->dmabuf->resv);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_NOT_NULL(test, c->sgt);

	p2p_provider_close(db_p->pdev);
	KUNIT_EXPECT_EQ(test, c->moves, 1);
	KUNIT_EXPECT_NULL(test, c->sgt);
	KUNIT_EXPECT_FALSE(test, c->pinned);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * The provider closes (the first step of its unbind) while a dynamic
 * importer holds a mapping: move_notify is called once, the importer
 * unmaps, the memory is back in the pool before the dma-buf is released,
 * and every later map, attach and export fails with -ENODEV.
 */
static void db_revoke_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;

	db_export(test);
	db_attach_map(test, db_q);
	KUNIT_EXPECT_EQ(test, c->moves, 0);

	p2p_provider_close(db_p->pdev);
	KUNIT_EXPECT_EQ(test, c->moves, 1);
	KUNIT_EXPECT_NULL(test, c->sgt);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);

	sgt = dma_buf_map_attachment_unlocked(c->attach, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sgt), -ENODEV);
	if (!IS_ERR(sgt))
		dma_buf_unmap_attachment_unlocked(c->attach, sgt,
						  DMA_BIDIRECTIONAL);
	attach = db_attach(test, db_r, &db_importer);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -ENODEV);
	if (!IS_ERR(attach))
		dma_buf_detach(c->dmabuf, attach);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev,
							PAGE_SIZE, 0)),
			-ENODEV);

	/* The release after the revocation frees nothing twice. */
	dma_buf_detach(c->dmabuf, c->attach);
	c->attach = NULL;
	db_put(c->dmabuf);
	c->dmabuf = NULL;
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	KUNIT_EXPECT_EQ(test, c->moves, 1);
}

/*
 * The whole unbind (devres of the registration released) while the
 * dma-buf is still held: it returns, since the revocation gave the pages
 * back; a wait for the dma-buf would hang here.
 */
static void db_unbind_does_not_wait_test(struct kunit *test)
{
	struct db_case *c = test->priv;

	db_export(test);
	db_attach_map(test, db_r);
	devres_release_group(&db_p->pdev->dev, c->grp);
	c->grp = NULL;
	KUNIT_EXPECT_EQ(test, c->moves, 1);
	KUNIT_EXPECT_NULL(test, c->sgt);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(db_p->pdev->p2pdma));
}

/*
 * An unbind that starts while an export clears its memory, after the
 * export's first check and before it puts the buffer on the list the
 * revocation walks: the export sees it under the lock and fails with
 * -ENODEV, giving the memory back; a buffer that slipped past would never
 * be revoked (and keep the unbind waiting for its pages). The case stands
 * in for the unbind by setting closing alone, and clears it again.
 */
static void db_export_racing_unbind_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf *dmabuf;

	c->close_in_clean = true;
	dmabuf = pci_p2pmem_export(db_p->pdev, DB_BUF, 0);
	KUNIT_EXPECT_GT(test, c->clean_calls, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(dmabuf), -ENODEV);
	if (!IS_ERR(dmabuf))
		c->dmabuf = dmabuf;
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	WRITE_ONCE(db_p2p()->closing, false);
}

static int db_close_fn(void *data)
{
	struct db_case *c = data;

	p2p_provider_close(db_p->pdev);
	/* For every wait of the case, however many timed out before. */
	complete_all(&c->closed);
	return 0;
}

/* Start the unbind's first step on a thread of its own: it may wait. */
static void db_close_async(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct task_struct *t;

	init_completion(&c->closed);
	t = kthread_run(db_close_fn, c, "p2pdma-db-close");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
}

/* Unmap the buggy importer's mapping, as it would do in the end. */
static void db_unmap(struct kunit *test)
{
	struct db_case *c = test->priv;

	dma_buf_unmap_attachment_unlocked(c->attach, c->sgt,
					  DMA_BIDIRECTIONAL);
	c->sgt = NULL;
}

/*
 * An importer that ignores move_notify keeps its mapping, so the memory
 * stays out of the pool for as long as it does: for longer than any
 * timer (here 12 s, more than the 10 s bound this exporter once had),
 * with the importer named in the log. The unbind ends as soon as it
 * unmaps.
 */
static void db_revoke_waits_for_unmap_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	u64 mark = kunit_kmsg_mark();

	db_export(test);
	db_attach_map_ops(test, db_q, &db_importer_ignores);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, 12 * HZ),
			0);
	KUNIT_EXPECT_EQ(test, c->moves, 1);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "unbind waits",
					       pci_name(db_q->pdev),
					       "1 mapping(s)"), 1);
	db_unmap(test);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

static const char *db_fence_name(struct dma_fence *fence)
{
	return "p2pdma-kunit";
}

static const struct dma_fence_ops db_fence_ops = {
	.get_driver_name = db_fence_name,
	.get_timeline_name = db_fence_name,
};

static DEFINE_SPINLOCK(db_fence_lock);

/* An unsignalled fence of the case's, added to the buffer as @usage. */
static void db_add_fence(struct kunit *test, enum dma_resv_usage usage)
{
	struct db_case *c = test->priv;
	struct dma_resv *resv = c->dmabuf->resv;
	int ret;

	c->fence = kzalloc_obj(*c->fence, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->fence);
	dma_fence_init(c->fence, &db_fence_ops, &db_fence_lock,
		       dma_fence_context_alloc(1), 1);
	dma_resv_lock(resv, NULL);
	ret = dma_resv_reserve_fences(resv, 1);
	if (!ret)
		dma_resv_add_fence(resv, c->fence, usage);
	dma_resv_unlock(resv);
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/*
 * DMA an importer queued before it was told (an unsignalled fence in the
 * reservation object) keeps the memory out of the pool until the fence
 * signals, though the importer unmapped at once.
 */
static void db_revoke_waits_for_fence_test(struct kunit *test)
{
	struct db_case *c = test->priv;

	db_export(test);
	db_attach_map(test, db_q);
	db_add_fence(test, DMA_RESV_USAGE_WRITE);

	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	KUNIT_EXPECT_EQ(test, c->moves, 1);
	KUNIT_EXPECT_NULL(test, c->sgt);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	dma_fence_signal(c->fence);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * The last reference of buffer B is dropped while the revocation waits
 * for buffer A's importer, and before the revocation reached B. B's
 * release claims it, and since nothing can reach its memory (no fence,
 * no pin), gives it back at once; the revocation, which still holds B
 * and zaps its user mappings through B's inode, must not touch freed
 * memory (KASAN) nor give B's memory back twice. The memory of both is
 * back at the end.
 */
static void db_release_during_revoke_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf *b;

	db_export(test);
	db_attach_map_ops(test, db_q, &db_importer_ignores);
	b = pci_p2pmem_export(db_p->pdev, DB_BUF, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	db_close_async(test);
	/* Long enough for the revocation to reach A's wait. */
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	db_put(b);
	/* Long enough for an inode freed by B's release to be reused. */
	msleep(200);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	db_unmap(test);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

struct db_export_other {
	struct kunit *test;
	struct completion done;
	int ret;
};

/* Export from Q and release it again, on a thread: it must not wait. */
static int db_export_other_fn(void *data)
{
	struct db_export_other *o = data;
	struct dma_buf *dmabuf;

	/* The case's stand-in for p2p_clean() applies on this thread too. */
	current->kunit_test = o->test;
	dmabuf = pci_p2pmem_export(db_q->pdev, DB_BUF, 0);
	o->ret = PTR_ERR_OR_ZERO(dmabuf);
	if (!IS_ERR(dmabuf))
		db_put(dmabuf);
	complete_all(&o->done);
	return 0;
}

/*
 * A revocation that waits for P's importer stalls nobody else: another
 * provider (Q) exports and releases meanwhile, at once.
 */
static void db_other_provider_not_stalled_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct db_export_other *o;
	struct task_struct *t;
	void *grp;

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	o->test = test;
	init_completion(&o->done);
	grp = devres_open_group(&db_q->pdev->dev, NULL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, grp);
	KUNIT_ASSERT_EQ(test, pci_p2pdma_add_resource(db_q->pdev, 0, SZ_2M, 0),
			0);
	db_export(test);
	db_attach_map_ops(test, db_r, &db_importer_ignores);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);

	t = kthread_run(db_export_other_fn, o, "p2pdma-db-export");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&o->done, 5 * HZ), 0);
	db_unmap(test);
	/* Never leave with a thread running. */
	wait_for_completion(&o->done);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, o->ret, 0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	devres_release_group(&db_q->pdev->dev, grp);
}

/*
 * Map pages 1 and 2 of the buffer (a non-zero offset) into the case's
 * own mm and fault page 1 in without touching it (the BAR is not backed).
 * Returns the user address of page 1; *@page is the buffer's page 1.
 */
static unsigned long db_mmap_fault(struct kunit *test, struct page **page)
{
	struct db_case *c = test->priv;
	struct vm_area_struct *vma;
	unsigned long uaddr;
	vm_flags_t flags;
	int ret;

	*page = virt_to_page(db_kaddr(test, c->dmabuf) + PAGE_SIZE);
	uaddr = kunit_vm_mmap(test, c->dmabuf->file, 0, 2 * PAGE_SIZE,
			      PROT_READ | PROT_WRITE, MAP_SHARED, PAGE_SIZE);
	KUNIT_ASSERT_FALSE_MSG(test, !uaddr || IS_ERR_VALUE(uaddr),
			       "kunit_vm_mmap: %ld", (long)uaddr);
	mmap_read_lock(current->mm);
	ret = fixup_user_fault(current->mm, uaddr, FAULT_FLAG_WRITE, NULL);
	vma = vma_lookup(current->mm, uaddr);
	flags = vma ? vma->vm_flags : 0;
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_EQ(test, ret, 0);
	/* Pages with references, not bare PFNs: VFIO cannot take those. */
	KUNIT_EXPECT_FALSE(test, flags & (VM_PFNMAP | VM_IO));
	return uaddr;
}

/*
 * A fault inserts the page at its offset in the buffer, holding a page
 * reference. GUP pins it only with FOLL_PCI_P2PDMA (block O_DIRECT), by
 * GUP-fast and through the VMA alike, whatever CONFIG_SECRETMEM says; a
 * long-term pin without the flag (RDMA, io_uring, VFIO) gets -EREMOTEIO.
 * The revocation zaps the mapping and gives the memory back to the pool,
 * and a later fault fails.
 */
static void db_mmap_page_refs_test(struct kunit *test)
{
	unsigned long uaddr;
	struct page *page, *pinned;
	int ret;

	db_export(test);
	uaddr = db_mmap_fault(test, &page);
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 2);
	KUNIT_EXPECT_EQ(test, folio_mapcount(page_folio(page)), 1);
	/* The pages around it are not mapped. */
	KUNIT_EXPECT_EQ(test, page_ref_count(page - 1), 1);
	KUNIT_EXPECT_EQ(test, page_ref_count(page + 1), 1);

	ret = pin_user_pages_fast(uaddr, 1, FOLL_WRITE | FOLL_LONGTERM,
				  &pinned);
	if (ret > 0)
		unpin_user_pages(&pinned, ret);
	KUNIT_EXPECT_EQ(test, ret, -EREMOTEIO);
	ret = pin_user_pages_fast(uaddr, 1, FOLL_WRITE | FOLL_PCI_P2PDMA,
				  &pinned);
	KUNIT_EXPECT_EQ(test, ret, 1);
	if (ret > 0) {
		KUNIT_EXPECT_PTR_EQ(test, pinned, page);
		unpin_user_pages(&pinned, ret);
	}
	mmap_read_lock(current->mm);
	ret = get_user_pages(uaddr, 1, FOLL_WRITE | FOLL_PCI_P2PDMA, &pinned);
	mmap_read_unlock(current->mm);
	KUNIT_EXPECT_EQ(test, ret, 1);
	if (ret > 0) {
		KUNIT_EXPECT_PTR_EQ(test, pinned, page);
		KUNIT_EXPECT_EQ(test, page_ref_count(page), 3);
		put_page(pinned);
	}
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 2);

	p2p_provider_close(db_p->pdev);
	/* Back in the pool: a free page has no reference. */
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 0);
	KUNIT_EXPECT_EQ(test, folio_mapcount(page_folio(page)), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	mmap_read_lock(current->mm);
	ret = fixup_user_fault(current->mm, uaddr, 0, NULL);
	mmap_read_unlock(current->mm);
	KUNIT_EXPECT_EQ(test, ret, -EFAULT);
}

/* A fault at @uaddr of the case's own mm, without touching the page. */
static int db_fault(unsigned long uaddr, unsigned int flags)
{
	int ret;

	mmap_read_lock(current->mm);
	ret = fixup_user_fault(current->mm, uaddr, flags, NULL);
	mmap_read_unlock(current->mm);
	return ret;
}

/* A user address of the case's own mm aligned to 2 MiB, free in a new mm. */
#define DB_PMD_UADDR	SZ_1G

/*
 * A buffer of 2 MiB or more is allocated aligned to P2P_FOLD_ORDER and
 * handed out in folios of that order; a fault of a mapping aligned to
 * them maps a whole folio with one PMD (one folio reference, one entire
 * mapping), which GUP pins with FOLL_PCI_P2PDMA only; at an offset in the
 * buffer that is not aligned, a page at a time. Unmapping one page
 * of it splits the mapping: the PMD goes with its reference (the mm
 * drops it for a folio's PMD, not for a VM_MIXEDMAP one), and the pages
 * fault in one at a time. The revocation gives the memory back as
 * order-0 pages without references, as the pool hands them out.
 */
static void db_mmap_pmd_test(struct kunit *test)
{
	unsigned long uaddr, other, i, len = 2 * SZ_2M, bad = 0;
	struct db_case *c = test->priv;
	struct folio *folio, *first;
	struct page *head, *pinned;
	void *kaddr;
	int ret;

	if (!P2P_FOLD_ORDER)
		kunit_skip(test, "no folios of PMD order here");
	c->dmabuf = pci_p2pmem_export(db_p->pdev, len, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->dmabuf);
	kaddr = db_kaddr(test, c->dmabuf);
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED(page_to_pfn(virt_to_page(kaddr)),
					   BIT(P2P_FOLD_ORDER)));
	head = virt_to_page(kaddr + SZ_2M);
	folio = page_folio(head);
	KUNIT_ASSERT_EQ(test, folio_order(folio), P2P_FOLD_ORDER);
	KUNIT_EXPECT_PTR_EQ(test, &folio->page, head);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 1);

	uaddr = kunit_vm_mmap(test, c->dmabuf->file, DB_PMD_UADDR, len,
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, 0);
	KUNIT_ASSERT_EQ(test, uaddr, DB_PMD_UADDR);
	KUNIT_ASSERT_EQ(test, db_fault(uaddr + SZ_2M + PAGE_SIZE,
				       FAULT_FLAG_WRITE), 0);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 2);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 1);
	/* The first 2 MiB are not mapped. */
	KUNIT_EXPECT_EQ(test, folio_ref_count(page_folio(virt_to_page(kaddr))), 1);

	ret = pin_user_pages_fast(uaddr + SZ_2M + PAGE_SIZE, 1,
				  FOLL_WRITE | FOLL_LONGTERM, &pinned);
	if (ret > 0)
		unpin_user_pages(&pinned, ret);
	KUNIT_EXPECT_EQ(test, ret, -EREMOTEIO);
	ret = pin_user_pages_fast(uaddr + SZ_2M + PAGE_SIZE, 1,
				  FOLL_WRITE | FOLL_PCI_P2PDMA, &pinned);
	KUNIT_EXPECT_EQ(test, ret, 1);
	if (ret > 0) {
		KUNIT_EXPECT_PTR_EQ(test, pinned, head + 1);
		KUNIT_EXPECT_TRUE(test, folio_maybe_dma_pinned(folio));
		unpin_user_pages(&pinned, ret);
	}
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 2);

	/*
	 * An aligned address at an offset in the buffer that is not: no
	 * PMD fits, the page at the offset is mapped alone.
	 */
	first = page_folio(virt_to_page(kaddr));
	other = kunit_vm_mmap(test, c->dmabuf->file, DB_PMD_UADDR + 2 * len,
			      SZ_2M, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_FIXED, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, other, DB_PMD_UADDR + 2 * len);
	KUNIT_EXPECT_EQ(test, db_fault(other, FAULT_FLAG_WRITE), 0);
	KUNIT_EXPECT_EQ(test, folio_ref_count(first), 2);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(first), 0);
	KUNIT_EXPECT_EQ(test, folio_mapcount(first), 1);
	ret = pin_user_pages_fast(other, 1, FOLL_PCI_P2PDMA, &pinned);
	KUNIT_EXPECT_EQ(test, ret, 1);
	if (ret > 0) {
		KUNIT_EXPECT_PTR_EQ(test, pinned, virt_to_page(kaddr) + 1);
		unpin_user_pages(&pinned, ret);
	}
	KUNIT_EXPECT_EQ(test, vm_munmap(other, SZ_2M), 0);
	KUNIT_EXPECT_EQ(test, folio_ref_count(first), 1);

	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr + SZ_2M + 5 * PAGE_SIZE,
					PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 1);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);
	KUNIT_EXPECT_EQ(test, db_fault(uaddr + SZ_2M + PAGE_SIZE,
				       FAULT_FLAG_WRITE), 0);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), 2);
	KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 1);
	KUNIT_EXPECT_EQ(test, folio_entire_mapcount(folio), 0);

	p2p_provider_close(db_p->pdev);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	for (i = 0; i < len >> PAGE_SHIFT; i++) {
		struct page *page = virt_to_page(kaddr + (i << PAGE_SHIFT));

		bad += page_ref_count(page) || page_folio(page) != (void *)page ||
		       PageHead(page);
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ(test, db_fault(uaddr + SZ_2M + PAGE_SIZE, 0), -EFAULT);
}

/*
 * A page reference beyond the mapping's (what a pin of a mapped page
 * holds, by I/O started before the revocation) keeps the memory out of
 * the pool until it is dropped, though the mapping is gone.
 */
static void db_revoke_waits_for_page_ref_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct page *page;

	db_export(test);
	db_mmap_fault(test, &page);
	get_page(page);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	KUNIT_EXPECT_EQ(test, folio_mapcount(page_folio(page)), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	put_page(page);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * Hold the dma-buf by its dentry alone, as an O_PATH open of
 * /proc/self/fd/N does once N is closed: the file is freed, the release
 * has not run. The @n files opened next (shmem, each mapped into the
 * case's mm with its page faulted in) may take the freed file's slot.
 * Returns the dentry; dput() of it runs the release.
 */
static struct dentry *db_hold_dentry_only(struct kunit *test,
					  struct file **others, int n)
{
	struct db_case *c = test->priv;
	struct dentry *dentry = dget(c->dmabuf->file->f_path.dentry);
	unsigned long uaddr;
	int i, ret;

	db_put(c->dmabuf);
	c->dmabuf = NULL;
	for (i = 0; i < n; i++) {
		others[i] = shmem_file_setup("p2pdma-kunit", PAGE_SIZE, EMPTY_VMA_FLAGS);
		if (IS_ERR(others[i]))
			continue;
		uaddr = kunit_vm_mmap(test, others[i], 0, PAGE_SIZE,
				      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
		KUNIT_EXPECT_FALSE(test, !uaddr || IS_ERR_VALUE(uaddr));
		mmap_read_lock(current->mm);
		ret = fixup_user_fault(current->mm, uaddr, FAULT_FLAG_WRITE,
				       NULL);
		mmap_read_unlock(current->mm);
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	return dentry;
}

/* Is the page of @file still mapped (by the case's mm)? */
static bool db_other_mapped(struct file *file)
{
	struct folio *folio = shmem_read_folio(file->f_mapping, 0);
	bool mapped;

	if (IS_ERR(folio))
		return false;
	mapped = folio_mapped(folio);
	folio_put(folio);
	return mapped;
}

static void db_put_others(struct file **others, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!IS_ERR(others[i]))
			__fput_sync(others[i]);
}

#define DB_OTHERS	8

/*
 * The dma-buf's file is gone and its dentry still holds it (no release
 * yet), with files opened since, one of which may sit where the dma-buf's
 * file was: the unbind revokes the buffer all the same and gives its
 * memory back, touching none of the other files (their mappings stay,
 * their counts too); the release that follows frees nothing twice.
 */
static void db_revoke_dentry_only_test(struct kunit *test)
{
	struct file *others[DB_OTHERS];
	struct dentry *dentry;
	int i;

	db_export(test);
	dentry = db_hold_dentry_only(test, others, DB_OTHERS);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	p2p_provider_close(db_p->pdev);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	for (i = 0; i < DB_OTHERS; i++) {
		if (IS_ERR(others[i]))
			continue;
		KUNIT_EXPECT_TRUE_MSG(test, db_other_mapped(others[i]),
				      "file %d's mapping zapped", i);
		/* The case's own and the mapping's. */
		KUNIT_EXPECT_EQ(test, file_count(others[i]), 2);
	}
	db_put_others(others, DB_OTHERS);
	dput(dentry);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * The sequence: a fence on the buffer, the dentry held alone,
 * files opened, the unbind waiting for the fence; then the dentry goes
 * (the release runs during the wait: it must not free the buffer or its
 * memory under the revocation), then the fence signals: the unbind ends
 * at once, with the memory back.
 */
static void db_release_during_fence_wait_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct file *others[DB_OTHERS];
	struct dentry *dentry;

	db_export(test);
	db_add_fence(test, DMA_RESV_USAGE_WRITE);
	dentry = db_hold_dentry_only(test, others, DB_OTHERS);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	dput(dentry);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ / 2),
			0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	dma_fence_signal(c->fence);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	db_put_others(others, DB_OTHERS);
}

/* Until P's pool has @avail bytes, at most 5 s: a release's work item. */
static size_t db_wait_available(size_t avail)
{
	int i;

	for (i = 0; i < 250 && p2p_available(db_p2p()) != avail; i++)
		msleep(20);
	return p2p_available(db_p2p());
}

/*
 * The release of a buffer whose fence (a reader's) has not signalled:
 * the release returns, the memory stays out of the pool until the fence
 * signals. An unbind meanwhile waits for it too.
 */
static void db_release_waits_for_fence_test(struct kunit *test)
{
	struct db_case *c = test->priv;

	db_export(test);
	db_add_fence(test, DMA_RESV_USAGE_READ);
	db_put(c->dmabuf);
	c->dmabuf = NULL;
	msleep(200);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	dma_fence_signal(c->fence);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * A page pinned through the user mapping (pin_user_pages() with
 * FOLL_PCI_P2PDMA, as block O_DIRECT pins it), then the mapping and the
 * dma-buf gone: the memory stays out of the
 * pool until the pin is dropped, so the next export cannot be written by
 * the old I/O.
 */
static void db_release_waits_for_pin_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct page *page, *pinned;
	unsigned long uaddr;
	int ret;

	db_export(test);
	uaddr = db_mmap_fault(test, &page);
	/* As block O_DIRECT pins it, here through the VMA. */
	mmap_read_lock(current->mm);
	ret = pin_user_pages(uaddr, 1, FOLL_WRITE | FOLL_PCI_P2PDMA, &pinned);
	mmap_read_unlock(current->mm);
	KUNIT_ASSERT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, 2 * PAGE_SIZE), 0);
	db_put(c->dmabuf);
	c->dmabuf = NULL;
	msleep(200);
	KUNIT_EXPECT_GT(test, page_ref_count(page), 1);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	unpin_user_page(pinned);
	KUNIT_EXPECT_EQ(test, db_wait_available(DB_SIZE), DB_SIZE);
}

/*
 * A fence added while the unbind waits for an importer to unmap (after
 * any wait for fences could have started): the unbind waits for it too,
 * whatever its usage (here the weakest, BOOKKEEP).
 */
static void db_fence_added_before_unmap_test(struct kunit *test)
{
	struct db_case *c = test->priv;

	db_export(test);
	db_attach_map_ops(test, db_q, &db_importer_ignores);
	db_close_async(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	db_add_fence(test, DMA_RESV_USAGE_BOOKKEEP);
	db_unmap(test);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&c->closed, HZ), 0);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	dma_fence_signal(c->fence);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&c->closed, 5 * HZ),
			0);
	wait_for_completion(&c->closed);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * A free page of the pool has no reference (7.3's mm leaves the count at
 * zero after folio_free). An export gives each page of the buffer one of
 * its own, so that a fault of the dma-buf's mapping can insert it
 * (vm_insert_page() refuses a page without one, a spurious SIGBUS); the
 * release takes it back before the memory returns to the pool.
 */
static void db_export_hands_out_references_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct p2p_region *region = db_region();
	struct page *first = pfn_to_page(PHYS_PFN(region->pgmap.range.start));
	unsigned long i, uaddr, held = 0;
	struct dma_buf *dmabuf;
	struct page *page;

	for (i = 0; i < DB_SIZE >> PAGE_SHIFT; i++)
		held += page_ref_count(first + i) != 0;
	KUNIT_ASSERT_EQ(test, held, 0);
	dmabuf = db_export(test);
	uaddr = db_mmap_fault(test, &page);
	/* The buffer's own and the user mapping's. */
	KUNIT_EXPECT_EQ(test, page_ref_count(page), 2);
	KUNIT_EXPECT_EQ(test, page_ref_count(page - 1), 1);
	KUNIT_EXPECT_EQ(test, vm_munmap(uaddr, 2 * PAGE_SIZE), 0);
	c->dmabuf = NULL;
	db_put(dmabuf);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	for (i = 0; i < DB_SIZE >> PAGE_SHIFT; i++)
		held += page_ref_count(first + i) != 0;
	KUNIT_EXPECT_EQ(test, held, 0);
}

static struct kunit_case p2pdma_dmabuf_revoke_cases[] = {
	KUNIT_CASE(db_revocable_pin_test),
	KUNIT_CASE(db_revoke_test),
	KUNIT_CASE(db_unbind_does_not_wait_test),
	KUNIT_CASE(db_export_racing_unbind_test),
	KUNIT_CASE(db_revoke_waits_for_unmap_test),
	KUNIT_CASE(db_revoke_waits_for_fence_test),
	KUNIT_CASE(db_release_during_revoke_test),
	KUNIT_CASE(db_other_provider_not_stalled_test),
	KUNIT_CASE(db_mmap_page_refs_test),
	KUNIT_CASE(db_mmap_pmd_test),
	KUNIT_CASE(db_revoke_waits_for_page_ref_test),
	KUNIT_CASE(db_revoke_dentry_only_test),
	KUNIT_CASE(db_release_during_fence_wait_test),
	KUNIT_CASE(db_release_waits_for_fence_test),
	KUNIT_CASE(db_release_waits_for_pin_test),
	KUNIT_CASE(db_fence_added_before_unmap_test),
	KUNIT_CASE(db_export_hands_out_references_test),
	{}
};

static struct kunit_suite p2pdma_dmabuf_revoke_suite = {
	.name = "p2pdma-dmabuf-revoke",
	.suite_init = db_suite_init,
	.suite_exit = db_suite_exit,
	.init = db_init,
	.exit = db_exit,
	.test_cases = p2pdma_dmabuf_revoke_cases,
};

kunit_test_suite(p2pdma_dmabuf_revoke_suite);
