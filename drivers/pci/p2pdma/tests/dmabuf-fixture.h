/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the two dma-buf suites, the exporter's (dmabuf-kunit.h,
 * at the end of dmabuf.c) and the revocation's (dmabuf-revoke-kunit.h, at
 * the end of dmabuf-revoke.c): the providers and clients of the bus
 * address hierarchy, the stand-in for the clearing, the importers of the
 * suites and their helpers. Each of the two files has its own copy.
 */
#ifndef _P2PDMA_DMABUF_FIXTURE_H
#define _P2PDMA_DMABUF_FIXTURE_H

#include "p2pdma-kunit.h"

#include <linux/dma-buf.h>
#include <linux/dma-direct.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/iosys-map.h>
#include <linux/p2pmem.h>

/* What P registers (its whole BAR): four clearing batches. */
#define DB_SIZE		(4 * P2P_MAP_BATCH * PAGE_SIZE)
#define DB_BUF		(256 * 1024)	/* bytes a case exports */

/*
 * P's BAR 0, aligned to its size as a BAR must be (7.3's PCI core moves a
 * BAR that is not), at the start of the window.
 */
#define DB_BAR_AT	0

static __maybe_unused const struct fake_line db_bars[] = {
	FAKE_BAR64_LINE(XL_P, DB_BAR_AT, DB_SIZE),
	/* Just above P's. */
	FAKE_BAR64_LINE(XL_Q, DB_BAR_AT + DB_SIZE, XL_BAR_SIZE),
};

static __maybe_unused struct fake_pci *db_fp;
static __maybe_unused struct fake_fn *db_fn[XL_FNS];
static __maybe_unused struct fake_fn *db_p, *db_q, *db_r;

/* One case's state: its registration, dma-buf and importer. */
struct db_case {
	void *grp;
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;		/* the importer's live mapping */
	int moves;			/* move_notify calls */
	bool pinned;			/* the importer holds a pin */
	/* What the p2p_clean() stand-in was asked to clear, and returns. */
	unsigned long clean_first, clean_pages;
	int clean_calls, clean_ret;
	bool close_in_clean;	/* the stand-in starts an unbind */
	/* p2p_provider_close() run by a thread, for the cases that wait. */
	struct completion closed;
	struct dma_fence *fence;	/* unsignalled on the buffer, or NULL */
};

static __maybe_unused struct db_case *db_cur;	/* the case the stand-in reports to */

static __maybe_unused struct pci_p2pdma *db_p2p(void)
{
	return rcu_dereference_protected(db_p->pdev->p2pdma, 1);
}

/*
 * The stand-in for p2p_clean(): records the pages asked for and marks
 * them clean as the real one does once the zeros reached the device
 * (this suite's BAR is never written), or fails as it would (clean_ret).
 */
static __maybe_unused int
db_clean_stub(struct p2p_region *region, unsigned long first,
	      unsigned long n)
{
	struct db_case *c = db_cur;

	if (!c->clean_calls)
		c->clean_first = first;
	c->clean_calls++;
	c->clean_pages += n;
	/* An unbind's first step, between the export's checks. */
	if (c->close_in_clean)
		WRITE_ONCE(db_p2p()->closing, true);
	if (c->clean_ret)
		return c->clean_ret;
	bitmap_clear(region->dirty, first, n);
	return 0;
}

static __maybe_unused void db_suite_exit(struct kunit_suite *suite)
{
	fake_pci_destroy(db_fp);
	db_fp = NULL;
}

static __maybe_unused int db_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = xl_build(&db_fp, db_fn, db_bars, ARRAY_SIZE(db_bars));
	if (ret)
		return ret;
	db_p = db_fn[XL_P];
	db_q = db_fn[XL_Q];
	db_r = db_fn[XL_R];
	/* The BAR is above 4 GiB: a client through the host bridge maps it. */
	ret = dma_set_mask_and_coherent(&db_q->pdev->dev, DMA_BIT_MASK(64));
	if (!ret)
		ret = dma_set_mask_and_coherent(&db_r->pdev->dev,
						DMA_BIT_MASK(64));
	if (ret)
		db_suite_exit(suite);
	return ret;
}

static __maybe_unused int db_init(struct kunit *test)
{
	struct db_case *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int ret;

	if (!c)
		return -ENOMEM;
	test->priv = c;
	db_cur = c;
	kunit_activate_static_stub(test, p2p_clean, db_clean_stub);
	set_cpu_rule(test, false);
	set_policy(test, "");
	c->grp = devres_open_group(&db_p->pdev->dev, NULL, GFP_KERNEL);
	if (!c->grp)
		return -ENOMEM;
	ret = pci_p2pdma_add_resource(db_p->pdev, 0, DB_SIZE, 0);
	if (ret)
		return ret;
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	return 0;
}

/*
 * Let the dma-buf go; if this was its last reference, its release has run
 * when this returns. A kernel thread's fput() is deferred to a work item,
 * which flush_delayed_fput() does not wait for once that item has taken
 * the file: the file is put here, on the test's thread.
 */
static __maybe_unused void db_put(struct dma_buf *dmabuf)
{
	__fput_sync(dmabuf->file);
}

static __maybe_unused void db_exit(struct kunit *test)
{
	struct db_case *c = test->priv;

	if (c->fence) {
		dma_fence_signal(c->fence);
		dma_fence_put(c->fence);
	}
	if (c->sgt)
		dma_buf_unmap_attachment_unlocked(c->attach, c->sgt,
						  DMA_BIDIRECTIONAL);
	if (c->pinned) {
		dma_resv_lock(c->dmabuf->resv, NULL);
		dma_buf_unpin(c->attach);
		dma_resv_unlock(c->dmabuf->resv);
	}
	if (c->attach)
		dma_buf_detach(c->dmabuf, c->attach);
	if (c->dmabuf)
		db_put(c->dmabuf);
	/* The unbind: nothing may still hold the pages. */
	if (c->grp)
		devres_release_group(&db_p->pdev->dev, c->grp);
}

/* The importer: it unmaps at once when told, as a dynamic importer must. */
static __maybe_unused void db_invalidate(struct dma_buf_attachment *attach)
{
	struct kunit *test = attach->importer_priv;
	struct db_case *c = test->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	c->moves++;
	if (c->sgt) {
		dma_buf_unmap_attachment(attach, c->sgt, DMA_BIDIRECTIONAL);
		c->sgt = NULL;
	}
}

static __maybe_unused const struct dma_buf_attach_ops db_importer = {
	.allow_peer2peer = true,
	.invalidate_mappings = db_invalidate,
};

/*
 * A buggy importer: it counts move_notify and keeps its mapping, until
 * the case unmaps it (db_unmap()).
 */
static __maybe_unused void
db_invalidate_ignored(struct dma_buf_attachment *attach)
{
	struct kunit *test = attach->importer_priv;
	struct db_case *c = test->priv;

	c->moves++;
}

static __maybe_unused const struct dma_buf_attach_ops db_importer_ignores = {
	.allow_peer2peer = true,
	.invalidate_mappings = db_invalidate_ignored,
};

/* A dynamic importer that does not accept peer-to-peer memory. */
static __maybe_unused const struct dma_buf_attach_ops db_importer_no_p2p = {
	.allow_peer2peer = false,
	.invalidate_mappings = db_invalidate,
};

static __maybe_unused struct dma_buf *db_export(struct kunit *test)
{
	struct db_case *c = test->priv;

	c->dmabuf = pci_p2pmem_export(db_p->pdev, DB_BUF, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->dmabuf);
	return c->dmabuf;
}

static __maybe_unused struct dma_buf_attachment *db_attach(struct kunit *test,
							   struct fake_fn *client,
							   const struct dma_buf_attach_ops *ops)
{
	struct db_case *c = test->priv;

	return dma_buf_dynamic_attach(c->dmabuf, &client->pdev->dev, ops, test);
}

/* Attach @client with importer @ops and map, keeping both. */
static __maybe_unused struct sg_table *db_attach_map_ops(struct kunit *test,
							 struct fake_fn *client,
							 const struct dma_buf_attach_ops *ops)
{
	struct db_case *c = test->priv;
	struct sg_table *sgt;

	c->attach = db_attach(test, client, ops);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->attach);
	sgt = dma_buf_map_attachment_unlocked(c->attach, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sgt);
	c->sgt = sgt;
	return sgt;
}

/* Attach @client with the suite's importer and map, keeping both. */
static __maybe_unused struct sg_table *db_attach_map(struct kunit *test,
						     struct fake_fn *client)
{
	return db_attach_map_ops(test, client, &db_importer);
}

/* The bytes a mapping's pages cover. */
static __maybe_unused size_t db_len(struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;
	size_t len = 0;

	for_each_sgtable_sg(sgt, sg, i)
		len += sg->length;
	return len;
}

/* P's only region. */
static __maybe_unused struct p2p_region *db_region(void)
{
	return list_first_entry(&db_p2p()->regions, struct p2p_region, node);
}

/* The kernel address of a buffer's memory, from an importer's mapping. */
static __maybe_unused void *db_kaddr(struct kunit *test, struct dma_buf *dmabuf)
{
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	void *kaddr;

	attach = dma_buf_dynamic_attach(dmabuf, &db_q->pdev->dev, &db_importer,
					test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, attach);
	sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sgt);
	kaddr = sg_virt(sgt->sgl);
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
	dma_buf_detach(dmabuf, attach);
	return kaddr;
}

#endif /* _P2PDMA_DMABUF_FIXTURE_H */
