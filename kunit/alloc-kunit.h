/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocator suite: the provider's pool gets one small chunk, as
 * pci_p2pdma_add_resource() would add it, but backed by ordinary pages
 * instead of ZONE_DEVICE pages of a BAR, and owned by a percpu_ref of the
 * test's own. Its bus address is that of the fake BAR 0 plus
 * ALLOC_BAR_OFFSET. Included by p2pdma-kunit.h.
 */

#define ALLOC_ORDER		4
#define ALLOC_POOL		(PAGE_SIZE << ALLOC_ORDER)
#define ALLOC_BAR_OFFSET	0x10000

static struct fake_pci *al_fp;
static struct fake_fn *al_prov, *al_plain;
static struct page *al_pages;
static struct percpu_ref al_ref;
static bool al_ref_live;

static void al_ref_release(struct percpu_ref *ref)
{
}

static struct gen_pool *al_pool(void)
{
	return rcu_dereference_protected(al_prov->pdev->p2pdma, 1)->pool;
}

static pci_bus_addr_t al_bus_base(void)
{
	return pci_bus_address(al_prov->pdev, 0) + ALLOC_BAR_OFFSET;
}

static long al_refs(void)
{
	return atomic_long_read(&al_ref.data->count);
}

static void al_suite_exit(struct kunit_suite *suite)
{
	/* Removing the devices destroys the pool (device-managed). */
	fake_pci_destroy(al_fp);
	al_fp = NULL;
	if (al_ref_live)
		percpu_ref_exit(&al_ref);
	al_ref_live = false;
	if (al_pages)
		__free_pages(al_pages, ALLOC_ORDER);
	al_pages = NULL;
}

static int al_suite_init(struct kunit_suite *suite)
{
	struct fake_host *h;
	struct fake_fn *rp;
	int ret = -ENOMEM;

	al_fp = fake_pci_create();
	if (!al_fp)
		return -ENOMEM;
	h = fake_host_add(al_fp, 0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT,
			  HB_CLASS);
	if (!h)
		goto fail;
	rp = fake_root_port(h);
	if (!rp)
		goto fail;
	al_prov = fake_endpoint(rp, 1, NULL);
	rp = fake_root_port(h);
	if (!rp || !al_prov)
		goto fail;
	al_plain = fake_endpoint(rp, 1, NULL);
	if (!al_plain)
		goto fail;
	ret = fake_pci_scan(al_fp);
	if (ret)
		goto fail;
	ret = pv_setup_provider(al_prov->pdev);
	if (ret)
		goto fail;

	ret = -ENOMEM;
	al_pages = alloc_pages(GFP_KERNEL, ALLOC_ORDER);
	if (!al_pages)
		goto fail;
	/* Atomic mode, so that the tests can read the count. */
	ret = percpu_ref_init(&al_ref, al_ref_release, PERCPU_REF_INIT_ATOMIC,
			      GFP_KERNEL);
	if (ret)
		goto fail;
	al_ref_live = true;
	ret = gen_pool_add_owner(al_pool(),
				 (unsigned long)page_address(al_pages),
				 al_bus_base(), ALLOC_POOL, NUMA_NO_NODE,
				 &al_ref);
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
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, al_refs(), 1);
}

static void alloc_pool_size_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, gen_pool_size(al_pool()), ALLOC_POOL);
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
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
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()),
			ALLOC_POOL - PAGE_ALIGN(size));
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(al_prov->pdev, addr),
			al_bus_base() + ((unsigned long)addr - base));
	KUNIT_EXPECT_EQ(test, al_refs(), 2);
	pci_free_p2pmem(al_prov->pdev, addr, size);
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
}

/* Zero bytes, or more than the pool: NULL, nothing taken. */
static void alloc_too_much_test(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 0));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev,
						 ALLOC_POOL + 1));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, SZ_1G));
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
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
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), 0);
	KUNIT_EXPECT_EQ(test, al_refs(), 1 + ARRAY_SIZE(page));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(al_prov->pdev, 1));
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), 0);
	KUNIT_EXPECT_EQ(test, al_refs(), 1 + ARRAY_SIZE(page));

	pci_free_p2pmem(al_prov->pdev, page[3], PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), PAGE_SIZE);
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
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()), ALLOC_POOL);
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
	KUNIT_EXPECT_EQ(test, gen_pool_avail(al_pool()),
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
	{}
};

static struct kunit_suite p2pdma_alloc_suite = {
	.name = "p2pdma-alloc",
	.suite_init = al_suite_init,
	.suite_exit = al_suite_exit,
	.exit = al_exit,
	.test_cases = p2pdma_alloc_cases,
};
