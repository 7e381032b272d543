/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bus address suite: a provider behind a host bridge whose memory window
 * has an offset (CPU address = bus address + offset, as a platform
 * describes it with pci_add_resource_offset()). On x86 the bus address of
 * a real BAR is its CPU address, so only such a window tells the two
 * apart. The provider registers its BAR with pci_p2pdma_add_resource(),
 * which gives the range ZONE_DEVICE pages: the BAR's CPU range is physical
 * address space above 4 GiB that the suite reserves and that nothing
 * backs. The cases only allocate it and compute addresses; nothing reads
 * or writes it. Included at the end of provider.c.
 *
 *   7e57:00 (Intel 0x2020), window CPU xl_fp->window -> bus XL_BUS_BASE
 *     root port 1 - switch: DSP0 - P (BAR 0: 64-bit, XL_BAR_SIZE)
 *                           DSP1 - Q
 *     root port 2 - R (BAR 0: 64-bit, XL_BAR_SIZE)
 */

#include "map-page.h"
#include "p2pdma-kunit.h"

static const struct fake_line xl_bars[] = {
	FAKE_BAR64_LINE(XL_P, XL_BAR_AT, XL_BAR_SIZE),
	/* Just above P's: a BAR that only gets a provider, never pages. */
	FAKE_BAR64_LINE(XL_R, XL_BAR_AT + XL_BAR_SIZE, XL_BAR_SIZE),
};

static struct fake_pci *xl_fp;
static struct fake_fn *xl_fn[XL_FNS];
static struct fake_fn *xl_p, *xl_q, *xl_r;
static void *xl_grp;

/* The bus and CPU addresses of the first byte P registered. */
static pci_bus_addr_t xl_bus_base(void)
{
	return XL_BUS_BASE + XL_BAR_AT + XL_OFFSET;
}

static phys_addr_t xl_cpu_base(void)
{
	return xl_fp->window.start + XL_BAR_AT + XL_OFFSET;
}

static void xl_suite_exit(struct kunit_suite *suite)
{
	/*
	 * No driver is bound to P: release what pci_p2pdma_add_resource()
	 * registered while the device is live, as an unbind would.
	 */
	if (xl_grp)
		devres_release_group(&xl_p->pdev->dev, xl_grp);
	xl_grp = NULL;
	fake_pci_destroy(xl_fp);
	xl_fp = NULL;
}

static int xl_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = xl_build(&xl_fp, xl_fn, xl_bars, ARRAY_SIZE(xl_bars));
	if (ret)
		return ret;
	xl_p = xl_fn[XL_P];
	xl_q = xl_fn[XL_Q];
	xl_r = xl_fn[XL_R];
	ret = -ENOMEM;
	xl_grp = devres_open_group(&xl_p->pdev->dev, NULL, GFP_KERNEL);
	if (xl_grp)
		ret = pci_p2pdma_add_resource(xl_p->pdev, 0, XL_SIZE,
					      XL_OFFSET);
	if (ret)
		xl_suite_exit(suite);
	return ret;
}

static int xl_init(struct kunit *test)
{
	set_cpu_rule(test, false);
	set_policy(test, "");
	return 0;
}

/*
 * The PCI core translated P's BAR through the window, and
 * pci_p2pmem_virt_to_bus() gives the bus address of P2P memory, not its
 * CPU address.
 */
static void xl_virt_to_bus_test(struct kunit *test)
{
	struct pci_dev *p = xl_p->pdev;
	void *addr;

	KUNIT_ASSERT_EQ(test, pci_resource_start(p, 0),
			xl_fp->window.start + XL_BAR_AT);
	KUNIT_ASSERT_EQ(test, pci_bus_address(p, 0), XL_BUS_BASE + XL_BAR_AT);

	addr = pci_alloc_p2pmem(p, XL_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, addr);
	KUNIT_EXPECT_EQ(test, page_to_phys(virt_to_page(addr)), xl_cpu_base());
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(p, addr), xl_bus_base());
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(p, addr + 5 * PAGE_SIZE + 7),
			xl_bus_base() + 5 * PAGE_SIZE + 7);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(p, addr + XL_SIZE - 1),
			xl_bus_base() + XL_SIZE - 1);
	pci_free_p2pmem(p, addr, XL_SIZE);
}

/*
 * Map 512 bytes at byte PAGE_SIZE + 64 of a fresh two-page allocation of
 * P for @client, as the DMA mapping code does (map-page.h). Returns the
 * map type; *@cpu is the bytes' CPU physical address, *@bus their bus
 * address, *@dma the address @client is given (XL_UNSET but for a bus
 * address).
 */
static enum pci_p2pdma_map_type xl_map(struct kunit *test,
				       struct device *client, dma_addr_t *dma,
				       phys_addr_t *cpu, pci_bus_addr_t *bus)
{
	const unsigned int off = PAGE_SIZE + 64, len = 512;
	struct pci_dev *p = xl_p->pdev;
	enum pci_p2pdma_map_type map;
	struct page *page;
	void *addr;

	addr = pci_alloc_p2pmem(p, 2 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, addr);
	page = virt_to_page(addr + off);
	*dma = XL_UNSET;
	map = p2pt_map_page(client, page, offset_in_page(off), len, dma);
	*cpu = page_to_phys(page) + offset_in_page(off);
	*bus = pci_p2pmem_virt_to_bus(p, addr + off);
	pci_free_p2pmem(p, addr, 2 * PAGE_SIZE);
	return map;
}

static void xl_child_release(struct device *dev)
{
}

/*
 * The DMA mapping path takes only a PCI function as the DMA device: not a
 * device below one (a gendisk, which the orchestrator calls accept for
 * its function), not a device outside PCI.
 */
static void xl_map_pci_functions_only_test(struct kunit *test)
{
	struct device *plain = kunit_device_register(test, "p2pdma-map-np");
	struct device *child = kunit_kzalloc(test, sizeof(*child), GFP_KERNEL);
	pci_bus_addr_t bus;
	phys_addr_t cpu;
	dma_addr_t dma;

	KUNIT_ASSERT_FALSE(test, IS_ERR(plain));
	KUNIT_ASSERT_NOT_NULL(test, child);
	device_initialize(child);
	child->release = xl_child_release;
	child->parent = &xl_q->pdev->dev;
	KUNIT_ASSERT_EQ(test, dev_set_name(child, "p2pdma-map-child"), 0);

	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(xl_p->pdev, child, false), 4);
	KUNIT_EXPECT_EQ(test, xl_map(test, child, &dma, &cpu, &bus), REFUSED);
	KUNIT_EXPECT_EQ(test, dma, XL_UNSET);
	KUNIT_EXPECT_EQ(test, xl_map(test, plain, &dma, &cpu, &bus), REFUSED);
	KUNIT_EXPECT_EQ(test, dma, XL_UNSET);
	put_device(child);
}

/*
 * A client below the same switch gets the bus address: the switch routes
 * the request by bus address, and nothing translates it on the way.
 */
static void xl_map_bus_address_test(struct kunit *test)
{
	struct device *q = &xl_q->pdev->dev;
	pci_bus_addr_t bus;
	phys_addr_t cpu;
	dma_addr_t dma;

	KUNIT_ASSERT_EQ(test, pci_p2pdma_distance(xl_p->pdev, q, false), 4);
	KUNIT_ASSERT_EQ(test, xl_map(test, &xl_q->pdev->dev, &dma, &cpu, &bus), BUS);
	KUNIT_EXPECT_GE(test, cpu, xl_cpu_base());
	KUNIT_EXPECT_LT(test, cpu, xl_cpu_base() + XL_SIZE);
	KUNIT_EXPECT_EQ(test, dma,
			(dma_addr_t)(xl_bus_base() + (cpu - xl_cpu_base())));
	KUNIT_EXPECT_EQ(test, dma, (dma_addr_t)bus);
	KUNIT_EXPECT_NE(test, dma, (dma_addr_t)cpu);
}

/*
 * A client on another root port goes through the host bridge: the DMA
 * API maps the segment's CPU address as for any memory, so the segment is
 * left alone, not marked as a bus address.
 */
static void xl_map_thru_host_bridge_test(struct kunit *test)
{
	struct device *r = &xl_r->pdev->dev;
	pci_bus_addr_t bus;
	phys_addr_t cpu;
	dma_addr_t dma;

	KUNIT_ASSERT_EQ(test, pci_p2pdma_distance(xl_p->pdev, r, false),
			3 + 1 + 2 + HB);
	KUNIT_ASSERT_EQ(test, xl_map(test, &xl_r->pdev->dev, &dma, &cpu, &bus), THRU);
	KUNIT_EXPECT_EQ(test, dma, XL_UNSET);
	KUNIT_EXPECT_GE(test, cpu, xl_cpu_base());
	KUNIT_EXPECT_LT(test, cpu, xl_cpu_base() + XL_SIZE);
	KUNIT_EXPECT_EQ(test, bus, xl_bus_base() + (cpu - xl_cpu_base()));
}

static void xl_release_r(void *grp)
{
	devres_release_group(&xl_r->pdev->dev, grp);
}

/*
 * One mapping of pages of two providers: the DMA mapping code keeps one
 * map state across the pages of a request (a bio, a scatterlist, an hmm
 * range), and a page of another provider must get that provider's map
 * type and bus address, not the previous page's. R registers its BAR for
 * the case; for Q, P's page is reached below the switch (bus address) and
 * R's through the host bridge. The pages alternate P, R, P, R, P through
 * one state, and each answer is the one a fresh state gives.
 */
static void xl_map_state_follows_provider_test(struct kunit *test)
{
	struct pci_p2pdma_map_state state = {};
	struct device *q = &xl_q->pdev->dev;
	struct pci_dev *p = xl_p->pdev, *r = xl_r->pdev;
	enum pci_p2pdma_map_type map, want;
	void *grp, *pa, *ra, *addr;
	dma_addr_t dma, fresh;
	int i;

	grp = devres_open_group(&r->dev, NULL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, grp);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, xl_release_r, grp), 0);
	KUNIT_ASSERT_EQ(test, pci_p2pdma_add_resource(r, 0, XL_SIZE, 0), 0);
	pa = pci_alloc_p2pmem(p, PAGE_SIZE);
	ra = pci_alloc_p2pmem(r, PAGE_SIZE);
	KUNIT_EXPECT_NOT_NULL(test, pa);
	KUNIT_EXPECT_NOT_NULL(test, ra);
	for (i = 0; pa && ra && i < 5; i++) {
		addr = i % 2 ? ra : pa;
		want = i % 2 ? THRU : BUS;
		dma = XL_UNSET;
		fresh = XL_UNSET;
		map = p2pt_map_page_state(&state, q, virt_to_page(addr), 64,
					  512, &dma);
		KUNIT_EXPECT_EQ_MSG(test, map, want, "page %d", i);
		KUNIT_EXPECT_EQ_MSG(test, p2pt_map_page(q, virt_to_page(addr),
							64, 512, &fresh),
				    want, "page %d, fresh state", i);
		KUNIT_EXPECT_EQ_MSG(test, dma, fresh, "page %d", i);
		if (want == BUS)
			KUNIT_EXPECT_EQ_MSG(test, dma,
					    (dma_addr_t)pci_p2pmem_virt_to_bus(p, addr) + 64,
					    "page %d", i);
	}
	if (pa)
		pci_free_p2pmem(p, pa, PAGE_SIZE);
	if (ra)
		pci_free_p2pmem(r, ra, PAGE_SIZE);
}

/* Bytes in P's pool: what p2pmem/size shows. */
static size_t xl_pool_size(void)
{
	struct pci_p2pdma *p2p = rcu_dereference_protected(xl_p->pdev->p2pdma, 1);

	return gen_pool_size(p2p->pool);
}

/* Entries on @dev's devres list: what a registration leaves behind. */
static unsigned int xl_devres_count(struct device *dev)
{
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&dev->devres_lock, flags);
	n = list_count_nodes(&dev->devres_head);
	spin_unlock_irqrestore(&dev->devres_lock, flags);
	return n;
}

/* Is P's p2pmem/allocate file in sysfs? */
static bool xl_has_allocate(void)
{
	struct kernfs_node *grp, *kn;

	if (!xl_p->pdev->dev.kobj.sd)
		return false;
	grp = kernfs_find_and_get(xl_p->pdev->dev.kobj.sd, "p2pmem");
	if (!grp)
		return false;
	kn = kernfs_find_and_get(grp, "allocate");
	kernfs_put(kn);
	kernfs_put(grp);
	return kn;
}

/* What a failed registration must leave as it found it. */
struct xl_state {
	size_t pool;
	unsigned int devres;
};

static void xl_snapshot(struct kunit *test, struct xl_state *st)
{
	KUNIT_ASSERT_TRUE(test, xl_has_allocate());
	st->pool = xl_pool_size();
	st->devres = xl_devres_count(&xl_p->pdev->dev);
}

/*
 * After a registration of the range at @start failed: the pool is the
 * same size, P's devres list is as long as before (nothing allocated,
 * added or left registered), no dev_pagemap covers the range, and
 * p2pmem/allocate of the range registered earlier is still there.
 */
static void xl_expect_unchanged(struct kunit *test,
				const struct xl_state *before,
				phys_addr_t start, const char *what)
{
	struct dev_pagemap *pgmap;

	KUNIT_EXPECT_EQ_MSG(test, xl_pool_size(), before->pool, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, xl_devres_count(&xl_p->pdev->dev),
			    before->devres, "%s: devres left behind", what);
	KUNIT_EXPECT_TRUE_MSG(test, xl_has_allocate(),
			      "%s: p2pmem/allocate is gone", what);
	pgmap = get_dev_pagemap(PHYS_PFN(start));
	KUNIT_EXPECT_NULL_MSG(test, pgmap, "%s: pages left", what);
	if (pgmap)
		put_dev_pagemap(pgmap);
}

/* Each step of a registration that can fail, and the errno it gives. */
enum xl_step { XL_BITMAP, XL_MAP, XL_POOL_ADD };

struct xl_fault {
	const char *name;
	enum xl_step step;
	int err;
};

static const struct xl_fault xl_faults[] = {
	{ "bitmap", XL_BITMAP, -ENOMEM },
	{ "memremap", XL_MAP, -ENXIO },
	{ "pool-add", XL_POOL_ADD, -ENOMEM },
};

static void xl_fault_desc(const struct xl_fault *f, char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xl_fault, xl_faults, xl_fault_desc);

static int xl_fail_err;

static int xl_fail_bitmap(struct device *dev, struct p2p_region *region,
			  size_t size)
{
	return xl_fail_err;
}

static void *xl_fail_map(struct device *dev, struct p2p_region *region)
{
	return ERR_PTR(xl_fail_err);
}

/* After the real bitmap and pages: the genalloc add runs out of memory. */
static int xl_fail_pool_add(struct pci_p2pdma *p2p, struct p2p_region *region,
			    void *kaddr, u64 bus, int nid)
{
	return xl_fail_err;
}

/*
 * Fault injection on the registration path (upstream "Fix incorrect
 * pointer usage in devm_kfree() call": an error path freed the wrong
 * pointer). A second range of P, the start of BAR 0, fails at one step
 * (a static stub of ours): the dirty bitmap, the ZONE_DEVICE pages, or
 * the pool add after the pages exist. The call returns that step's errno
 * and undoes everything it did (xl_expect_unchanged()); the debug
 * kernel's KASAN and kmemleak see what a wrong free would do.
 */
static void xl_registration_fault_test(struct kunit *test)
{
	const struct xl_fault *f = test->param_value;
	phys_addr_t start = xl_fp->window.start + XL_BAR_AT;
	struct pci_dev *p = xl_p->pdev;
	struct xl_state before;

	xl_snapshot(test, &before);
	xl_fail_err = f->err;
	switch (f->step) {
	case XL_BITMAP:
		kunit_activate_static_stub(test, p2p_region_bitmap,
					   xl_fail_bitmap);
		break;
	case XL_MAP:
		kunit_activate_static_stub(test, p2p_region_map, xl_fail_map);
		break;
	case XL_POOL_ADD:
		kunit_activate_static_stub(test, p2p_region_add,
					   xl_fail_pool_add);
		break;
	}
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, XL_SIZE, 0),
			f->err);
	xl_expect_unchanged(test, &before, start, f->name);
}

/*
 * What pci_p2pdma_add_resource() refuses, each with the errno its
 * kernel-doc gives and nothing registered: a range that overlaps one
 * already registered (-EBUSY), a start or size not aligned to
 * memremap_compat_align() (-EINVAL), a range beyond the BAR, a BAR that
 * is not a memory BAR, a BAR index out of range (-EINVAL). A second range
 * of the same BAR that overlaps nothing is accepted: a provider may
 * register several, and each translates the same way.
 */
static void xl_registration_test(struct kunit *test)
{
	struct pci_dev *p = xl_p->pdev;
	struct xl_state before;
	void *a, *b;

	xl_snapshot(test, &before);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, XL_SIZE, XL_OFFSET),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, 0, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, SZ_1M, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, XL_SIZE, SZ_1M),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 0, XL_BAR_SIZE, SZ_2M),
			-EINVAL);
	/* BAR 1 is the upper half of the 64-bit BAR 0: no resource. */
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, 1, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(p, PCI_STD_NUM_BARS, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, xl_pool_size(), XL_SIZE);
	/*
	 * Refused second registrations keep the first one's p2pmem files
	 * (upstream "Do not tear down the allocate attribute on
	 * registration failure").
	 */
	xl_expect_unchanged(test, &before, xl_fp->window.start + XL_BAR_AT,
			    "refused");

	/* The range that every fault and refusal left alone registers. */
	KUNIT_ASSERT_EQ(test, pci_p2pdma_add_resource(p, 0, XL_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, xl_pool_size(), 2 * XL_SIZE);
	KUNIT_EXPECT_TRUE(test, xl_has_allocate());
	a = pci_alloc_p2pmem(p, XL_SIZE);
	b = pci_alloc_p2pmem(p, XL_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	if (page_to_phys(virt_to_page(a)) == xl_cpu_base())
		swap(a, b);
	/* a is in the new range, at the start of the BAR. */
	KUNIT_EXPECT_EQ(test, page_to_phys(virt_to_page(a)),
			xl_fp->window.start + XL_BAR_AT);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(p, a), XL_BUS_BASE + XL_BAR_AT);
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(p, b), xl_bus_base());
	pci_free_p2pmem(p, a, XL_SIZE);
	pci_free_p2pmem(p, b, XL_SIZE);
}

/*
 * P's BAR 0 has a provider of its own, made with the P2P state by the
 * registration: owned by P, with the window's offset, as the pages'
 * translation has. Every other index has none (BAR 1 is the upper half of
 * the 64-bit BAR 0). pcim_p2pdma_init() after a registration changes
 * nothing.
 */
static void xl_provider_test(struct kunit *test)
{
	struct pci_dev *p = xl_p->pdev;
	struct p2pdma_provider *mem;
	int bar;

	mem = pcim_p2pdma_provider(p, 0);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_EXPECT_PTR_EQ(test, mem->owner, &p->dev);
	KUNIT_EXPECT_EQ(test, mem->bus_offset,
			(u64)XL_BUS_BASE - xl_fp->window.start);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_bus_addr_map(mem, xl_cpu_base()),
			(dma_addr_t)xl_bus_base());
	KUNIT_EXPECT_EQ(test, pcim_p2pdma_init(p), 0);
	KUNIT_EXPECT_PTR_EQ(test, pcim_p2pdma_provider(p, 0), mem);
	for (bar = 1; bar < PCI_STD_NUM_BARS; bar++)
		KUNIT_EXPECT_NULL_MSG(test, pcim_p2pdma_provider(p, bar),
				      "BAR %d", bar);
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(p, -1));
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(p, PCI_STD_NUM_BARS));
	/* Q has no P2P state at all. */
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(xl_q->pdev, 0));
}

/*
 * pci_p2pdma_map_type() gives a client the verdict the DMA mapping path
 * uses for P's pages: bus address below the switch, through the host
 * bridge from another root port, refused for a device that is not a PCI
 * function.
 */
static void xl_provider_map_type_test(struct kunit *test)
{
	struct p2pdma_provider *mem = pcim_p2pdma_provider(xl_p->pdev, 0);
	struct device *plain = kunit_device_register(test, "p2pdma-not-pci");
	pci_bus_addr_t bus;
	phys_addr_t cpu;
	dma_addr_t dma;

	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_ASSERT_FALSE(test, IS_ERR(plain));
	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, &xl_q->pdev->dev), BUS);
	KUNIT_EXPECT_EQ(test, xl_map(test, &xl_q->pdev->dev, &dma, &cpu, &bus), BUS);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_bus_addr_map(mem, cpu), dma);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, &xl_r->pdev->dev), THRU);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, plain), REFUSED);
}

/*
 * pcim_p2pdma_init() alone: R's memory BAR gets a provider, with no pages,
 * no pool memory and no p2pmem sysfs directory; a second call changes
 * nothing; the unbind (the release of the device's resources) takes the
 * state, and the provider, away.
 */
static void xl_provider_without_pages_test(struct kunit *test)
{
	struct pci_dev *r = xl_r->pdev;
	struct p2pdma_provider *mem;
	struct kernfs_node *grp;
	void *devres_grp;

	KUNIT_ASSERT_NULL(test, rcu_access_pointer(r->p2pdma));
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(r, 0));
	devres_grp = devres_open_group(&r->dev, NULL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, devres_grp);
	KUNIT_ASSERT_EQ(test, pcim_p2pdma_init(r), 0);
	mem = pcim_p2pdma_provider(r, 0);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_EXPECT_EQ(test, pcim_p2pdma_init(r), 0);
	KUNIT_EXPECT_PTR_EQ(test, pcim_p2pdma_provider(r, 0), mem);
	KUNIT_EXPECT_PTR_EQ(test, mem->owner, &r->dev);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_bus_addr_map(mem, pci_resource_start(r, 0)),
			(dma_addr_t)(XL_BUS_BASE + XL_BAR_AT + XL_BAR_SIZE));
	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, &xl_p->pdev->dev), THRU);
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(r, 1));
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(r));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(r, PAGE_SIZE));
	grp = r->dev.kobj.sd ? kernfs_find_and_get(r->dev.kobj.sd, "p2pmem") :
			       NULL;
	KUNIT_EXPECT_NULL_MSG(test, grp, "p2pmem/ without registered memory");
	kernfs_put(grp);

	devres_release_group(&r->dev, devres_grp);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(r->p2pdma));
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(r, 0));
}

static struct kunit_case p2pdma_translate_cases[] = {
	KUNIT_CASE(xl_virt_to_bus_test),
	KUNIT_CASE(xl_map_bus_address_test),
	KUNIT_CASE(xl_map_thru_host_bridge_test),
	KUNIT_CASE(xl_map_pci_functions_only_test),
	KUNIT_CASE(xl_map_state_follows_provider_test),
	KUNIT_CASE(xl_provider_test),
	KUNIT_CASE(xl_provider_map_type_test),
	KUNIT_CASE(xl_provider_without_pages_test),
	KUNIT_CASE_PARAM(xl_registration_fault_test, xl_fault_gen_params),
	/* Last: it leaves a second range registered, first in the pool. */
	KUNIT_CASE(xl_registration_test),
	{}
};

static struct kunit_suite p2pdma_translate_suite = {
	.name = "p2pdma-translate",
	.suite_init = xl_suite_init,
	.suite_exit = xl_suite_exit,
	.init = xl_init,
	.test_cases = p2pdma_translate_cases,
};

kunit_test_suite(p2pdma_translate_suite);
