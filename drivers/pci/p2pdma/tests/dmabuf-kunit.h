/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dma-buf exporter suite (p2pdma-dmabuf): pci_p2pmem_export() on a provider that
 * registers its BAR with pci_p2pdma_add_resource() (ZONE_DEVICE pages on
 * physical address space above 4 GiB that the suite reserves and nothing
 * backs, as in the bus address suite; nothing reads or writes it: a
 * static stub stands in for the clearing of an export, p2p_clean(), and
 * marks the pages clean without writing them), and
 * importers of the suite's own that attach for the fake clients and map
 * through the DMA API (dma-direct: the fake devices have no IOMMU). Each
 * case registers the range afresh and releases it at the end, as an
 * unbind would, since revocation closes the provider. This file has the
 * export, the attach and map with their refusals, the clearing and the
 * release; the revocation suite (dmabuf-revoke-kunit.h) shares its
 * fixture. Included at the end of dmabuf.c.
 *
 * The hierarchy is the bus address suite's (xl_build()), with a BAR on
 * Q too (a second provider, which only db_other_provider_not_stalled_test
 * registers):
 *   7e57:00 (Intel 0x2020), window CPU db_fp->window -> bus XL_BUS_BASE
 *     root port 1 - switch: DSP0 - P (BAR 0: 64-bit, DB_SIZE)
 *                           DSP1 - Q (BAR 0: 64-bit, XL_BAR_SIZE)
 *     root port 2 - R
 */

#include "dmabuf-fixture.h"

/* The export's arguments and its refusals, each with its errno. */
static void db_export_test(struct kunit *test)
{
	struct dma_buf *dmabuf;

	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev, 0, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev,
							PAGE_SIZE + 1, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev,
							PAGE_SIZE, 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev,
							DB_SIZE + PAGE_SIZE,
							0)),
			-ENOMEM);
	/* Q registered no memory. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_q->pdev,
							PAGE_SIZE, 0)),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);

	dmabuf = db_export(test);
	KUNIT_EXPECT_STREQ(test, dmabuf->exp_name, "pci-p2pdma");
	KUNIT_EXPECT_EQ(test, dmabuf->size, DB_BUF);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
}

/*
 * Q is below the same switch: every segment is the BAR's bus address
 * (not its CPU address), flagged as such, contiguous over the buffer.
 */
static void db_map_bus_address_test(struct kunit *test)
{
	struct sg_table *sgt;
	struct scatterlist *sg;
	dma_addr_t next;
	size_t total = 0;
	unsigned int i;
	void *kaddr;

	db_export(test);
	sgt = db_attach_map(test, db_q);
	KUNIT_EXPECT_EQ(test, db_len(sgt), DB_BUF);
	kaddr = sg_virt(sgt->sgl);
	next = pci_p2pmem_virt_to_bus(db_p->pdev, kaddr);
	KUNIT_EXPECT_GE(test, next, XL_BUS_BASE + DB_BAR_AT);
	KUNIT_EXPECT_NE(test, next, (dma_addr_t)virt_to_phys(kaddr));
	for_each_sgtable_dma_sg(sgt, sg, i) {
		KUNIT_EXPECT_TRUE(test, sg_dma_is_bus_address(sg));
		KUNIT_EXPECT_EQ(test, sg_dma_address(sg), next);
		KUNIT_EXPECT_LE(test, sg_dma_len(sg),
				dma_get_max_seg_size(&db_q->pdev->dev));
		next += sg_dma_len(sg);
		total += sg_dma_len(sg);
	}
	KUNIT_EXPECT_EQ(test, total, DB_BUF);
}

/*
 * R is on another root port of a host bridge known to route P2P: the
 * DMA API maps the CPU address as for any memory (dma-direct: no IOMMU),
 * not marked as a bus address.
 */
static void db_map_thru_host_bridge_test(struct kunit *test)
{
	struct sg_table *sgt;
	struct scatterlist *sg;
	phys_addr_t next;
	size_t total = 0;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, pci_p2pdma_distance(db_p->pdev,
						  &db_r->pdev->dev, false),
			3 + 1 + 2 + HB);
	db_export(test);
	sgt = db_attach_map(test, db_r);
	KUNIT_EXPECT_EQ(test, db_len(sgt), DB_BUF);
	next = virt_to_phys(sg_virt(sgt->sgl));
	for_each_sgtable_dma_sg(sgt, sg, i) {
		KUNIT_EXPECT_FALSE(test, sg_dma_is_bus_address(sg));
		KUNIT_EXPECT_EQ(test, sg_dma_address(sg),
				phys_to_dma(&db_r->pdev->dev, next));
		next += sg_dma_len(sg);
		total += sg_dma_len(sg);
	}
	KUNIT_EXPECT_EQ(test, total, DB_BUF);
}

/*
 * A route the policy refuses: R cannot attach (-EREMOTEIO), while Q,
 * which needs no host bridge, still can.
 */
static void db_refused_route_test(struct kunit *test)
{
	struct dma_buf_attachment *attach;

	set_policy(test, "deny:all");
	db_export(test);
	attach = db_attach(test, db_r, &db_importer);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EREMOTEIO);
	if (!IS_ERR(attach))
		dma_buf_detach(attach->dmabuf, attach);
	db_attach_map(test, db_q);
}

/*
 * A loop of refused attaches (an RDMA user retrying ibv_reg_dmabuf_mr())
 * logs the reason at most 10 times in 5 s, the limit of the refusals'
 * ratelimit, and at least once: the case first waits out any earlier
 * burst, then 30 attaches run well inside one interval.
 */
static void db_refusals_ratelimited_test(struct kunit *test)
{
	struct dma_buf_attachment *attach;
	int i, refused = 0, n;
	u64 mark;

	set_policy(test, "deny:all");
	db_export(test);
	msleep(5100);
	mark = kunit_kmsg_mark();
	for (i = 0; i < 30; i++) {
		attach = db_attach(test, db_r, &db_importer);
		refused += PTR_ERR_OR_ZERO(attach) == -EREMOTEIO;
		if (!IS_ERR(attach))
			dma_buf_detach(attach->dmabuf, attach);
	}
	KUNIT_EXPECT_EQ(test, refused, 30);
	n = kunit_kmsg_count(test, mark, "P2PDMA to/from client",
			     pci_name(db_r->pdev), "refused");
	KUNIT_EXPECT_GE(test, n, 1);
	KUNIT_EXPECT_LE(test, n, 10);
}

/*
 * Importers that do not accept peer-to-peer memory are refused with
 * -EOPNOTSUPP: a dynamic one without allow_peer2peer, and every static
 * one (dma_buf_attach()).
 */
static void db_no_peer2peer_test(struct kunit *test)
{
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf = db_export(test);

	attach = db_attach(test, db_q, &db_importer_no_p2p);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EOPNOTSUPP);
	if (!IS_ERR(attach))
		dma_buf_detach(dmabuf, attach);
	attach = dma_buf_attach(dmabuf, &db_q->pdev->dev);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EOPNOTSUPP);
	if (!IS_ERR(attach))
		dma_buf_detach(dmabuf, attach);
}

static void db_dev_release(struct device *dev)
{
	kfree(dev);
}

static void db_dev_unregister(void *dev)
{
	device_unregister(dev);
}

/*
 * An importer whose device is not a PCI function: -EREMOTEIO at attach,
 * with no PCI ancestor, and also as a child of Q, which reaches P by bus
 * address (the route would stand Q in for it, but the DMA API maps P2P
 * segments only for the PCI function itself).
 */
static void db_non_pci_importer_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf_attachment *attach;
	struct device *dev, *child;

	dev = kunit_device_register(test, "p2pdma-db-not-pci");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	child = kzalloc_obj(*child, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, child);
	device_initialize(child);
	child->parent = &db_q->pdev->dev;
	child->release = db_dev_release;
	if (dev_set_name(child, "p2pdma-db-child") || device_add(child)) {
		put_device(child);
		KUNIT_FAIL(test, "no child device of Q");
		return;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, db_dev_unregister,
							child), 0);
	db_export(test);
	attach = dma_buf_dynamic_attach(c->dmabuf, dev, &db_importer, test);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EREMOTEIO);
	if (!IS_ERR(attach))
		dma_buf_detach(c->dmabuf, attach);
	attach = dma_buf_dynamic_attach(c->dmabuf, child, &db_importer, test);
	KUNIT_EXPECT_EQ(test, PTR_ERR(attach), -EREMOTEIO);
	if (!IS_ERR(attach))
		dma_buf_detach(c->dmabuf, attach);
}

/*
 * A route refused after the attach (the policy changed): the next map
 * fails with -EREMOTEIO, and one after the route is allowed again works.
 */
static void db_route_refused_after_attach_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct sg_table *sgt;

	db_export(test);
	c->attach = db_attach(test, db_r, &db_importer);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c->attach);
	set_policy(test, "deny:all");
	sgt = dma_buf_map_attachment_unlocked(c->attach, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sgt), -EREMOTEIO);
	if (!IS_ERR(sgt))
		dma_buf_unmap_attachment_unlocked(c->attach, sgt,
						  DMA_BIDIRECTIONAL);
	set_policy(test, "");
	sgt = dma_buf_map_attachment_unlocked(c->attach, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_FALSE(test, IS_ERR(sgt));
	if (!IS_ERR(sgt))
		c->sgt = sgt;
}

/* The release gives the memory back to the pool, and the page references. */
static void db_release_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct dma_buf *dmabuf = db_export(test);

	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE - DB_BUF);
	c->dmabuf = NULL;
	db_put(dmabuf);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
}

/*
 * Every export hands out memory cleared to zero: the pool's clearing
 * (p2p_clean()) is asked for every page of the buffer, batch after batch
 * (four of them here), which is clean afterwards, the first time (a
 * registration starts all dirty) and after a previous buffer's memory
 * came back dirty. A clearing that did not
 * reach the device fails the export with -EIO and gives the memory back.
 */
static void db_export_zeroed_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct p2p_region *region = db_region();
	unsigned long first, npages = DB_SIZE / PAGE_SIZE;
	struct dma_buf *dmabuf;
	int round;

	for (round = 0; round < 2; round++) {
		KUNIT_EXPECT_EQ(test, bitmap_weight(region->dirty, npages),
				npages);
		c->clean_calls = 0;
		c->clean_pages = 0;
		/* All of P: the second round gets the first one's memory. */
		dmabuf = pci_p2pmem_export(db_p->pdev, DB_SIZE, 0);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dmabuf);
		first = p2p_page_index(region,
				       (unsigned long)db_kaddr(test, dmabuf));
		KUNIT_EXPECT_EQ(test, c->clean_first, first);
		KUNIT_EXPECT_EQ(test, c->clean_pages, npages);
		KUNIT_EXPECT_EQ(test, c->clean_calls,
				DIV_ROUND_UP(npages, P2P_MAP_BATCH));
		KUNIT_EXPECT_EQ(test, bitmap_weight(region->dirty, npages), 0);
		/* Back to the pool dirty: a user had it. */
		db_put(dmabuf);
		KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	}

	c->clean_ret = -EIO;
	KUNIT_EXPECT_EQ(test, PTR_ERR(pci_p2pmem_export(db_p->pdev, DB_SIZE,
							0)),
			-EIO);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);
	KUNIT_EXPECT_EQ(test, bitmap_weight(region->dirty, npages), npages);
}

/*
 * No vmap: the dma-buf core would hand a live vmap's address to later
 * callers after the revocation without asking the exporter.
 */
static void db_vmap_refused_test(struct kunit *test)
{
	struct db_case *c = test->priv;
	struct iosys_map map;
	int ret;

	db_export(test);
	db_attach_map(test, db_q);
	ret = dma_buf_vmap_unlocked(c->dmabuf, &map);
	if (!ret)
		dma_buf_vunmap_unlocked(c->dmabuf, &map);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
}

/*
 * A mapping's table for a buffer of 4 GiB and more (an entry's length is
 * 32 bits): 1 GiB entries, then the rest, each starting at the page its
 * offset gives; and 64 KiB entries (a device's default limit) past 4 GiB.
 * Only the table is built: no such BAR exists here, and no page in it is
 * touched.
 */
static void db_sg_over_4g_test(struct kunit *test)
{
	struct page *first;
	const size_t size = 5ULL * SZ_1G + 3 * PAGE_SIZE;
	struct scatterlist *sg, *last = NULL;
	struct sg_table sgt;
	unsigned int i;
	size_t off = 0;

	first = pfn_to_page(PHYS_PFN(pci_resource_start(db_p->pdev, 0)));
	KUNIT_ASSERT_EQ(test, p2p_dmabuf_fill_sg(&sgt, first, size, SZ_1G), 0);
	KUNIT_EXPECT_EQ(test, sgt.orig_nents, 6);
	for_each_sgtable_sg(&sgt, sg, i) {
		KUNIT_EXPECT_EQ(test, sg->length, i < 5 ? SZ_1G : 3 * PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, sg->offset, 0);
		KUNIT_EXPECT_PTR_EQ(test, sg_page(sg),
				    pfn_to_page(page_to_pfn(first) +
						(off >> PAGE_SHIFT)));
		off += sg->length;
	}
	KUNIT_EXPECT_EQ(test, off, size);
	sg_free_table(&sgt);

	KUNIT_ASSERT_EQ(test, p2p_dmabuf_fill_sg(&sgt, first, SZ_4G + PAGE_SIZE,
						 SZ_64K), 0);
	KUNIT_EXPECT_EQ(test, sgt.orig_nents, SZ_4G / SZ_64K + 1);
	for_each_sgtable_sg(&sgt, sg, i)
		last = sg;
	KUNIT_ASSERT_NOT_NULL(test, last);
	KUNIT_EXPECT_EQ(test, last->length, PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, sg_page(last),
			    pfn_to_page(page_to_pfn(first) +
					(SZ_4G >> PAGE_SHIFT)));
	sg_free_table(&sgt);
}

/*
 * What P2PMEM_IOC_EXPORT does once its argument is copied in: every
 * refusal with its errno, and the export itself once P is published.
 */
static void db_export_req_test(struct kunit *test)
{
	struct pci_dev *p = db_p->pdev;
	struct p2pmem_export req = {
		.domain = pci_domain_nr(p->bus),
		.bus = p->bus->number,
		.devfn = p->devfn,
		.size = DB_BUF,
	};
	struct p2pmem_export bad;
	struct dma_buf *dmabuf;

	/* Registered but not published: not for use outside its driver. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&req)), -EACCES);
	pci_p2pmem_publish(p, true);

	bad = req;
	bad.flags = 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -EINVAL);
	bad = req;
	bad.reserved = 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -EINVAL);
	bad = req;
	bad.size = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -EINVAL);
	bad.size = PAGE_SIZE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -EINVAL);
	bad.size = DB_SIZE + PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -ENOMEM);
	/* No such function (P is function 0 of its slot). */
	bad = req;
	bad.devfn = p->devfn | 7;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -ENODEV);
	bad = req;
	bad.bus = 0x100 | p->bus->number;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -ENODEV);
	bad = req;
	bad.domain = U32_MAX;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -ENODEV);
	/* Q has no P2P memory. */
	bad = req;
	bad.bus = db_q->pdev->bus->number;
	bad.devfn = db_q->pdev->devfn;
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&bad)), -ENODEV);
	KUNIT_EXPECT_EQ(test, p2p_available(db_p2p()), DB_SIZE);

	dmabuf = p2pmem_export_req(&req);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dmabuf);
	KUNIT_EXPECT_STREQ(test, dmabuf->exp_name, "pci-p2pdma");
	KUNIT_EXPECT_EQ(test, dmabuf->size, DB_BUF);
	KUNIT_EXPECT_EQ(test, dmabuf->file->f_flags & O_ACCMODE, O_RDWR);
	db_put(dmabuf);

	/* Unbinding: -ENODEV, not -EACCES, though no longer published. */
	p2p_provider_close(p);
	KUNIT_EXPECT_EQ(test, PTR_ERR(p2pmem_export_req(&req)), -ENODEV);
}

static struct kunit_case p2pdma_dmabuf_cases[] = {
	KUNIT_CASE(db_export_test),
	KUNIT_CASE(db_map_bus_address_test),
	KUNIT_CASE(db_map_thru_host_bridge_test),
	KUNIT_CASE(db_refused_route_test),
	KUNIT_CASE(db_refusals_ratelimited_test),
	KUNIT_CASE(db_no_peer2peer_test),
	KUNIT_CASE(db_non_pci_importer_test),
	KUNIT_CASE(db_route_refused_after_attach_test),
	KUNIT_CASE(db_release_test),
	KUNIT_CASE(db_export_zeroed_test),
	KUNIT_CASE(db_vmap_refused_test),
	KUNIT_CASE(db_sg_over_4g_test),
	KUNIT_CASE(db_export_req_test),
	{}
};

static struct kunit_suite p2pdma_dmabuf_suite = {
	.name = "p2pdma-dmabuf",
	.suite_init = db_suite_init,
	.suite_exit = db_suite_exit,
	.init = db_init,
	.exit = db_exit,
	.test_cases = p2pdma_dmabuf_cases,
};

kunit_test_suite(p2pdma_dmabuf_suite);
