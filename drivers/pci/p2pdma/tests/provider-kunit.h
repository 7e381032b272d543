/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Provider suite (p2pdma-provider): the per-client route cache and when
 * it is refreshed, pci_p2pmem_find_many() (closest, spread, published
 * only, never a closing provider), an export racing an unbind, and
 * publishing and releasing a provider against concurrent readers. Included at the end of
 * provider.c.
 */

#include "p2pdma-kunit.h"

#include <linux/dma-buf.h>
#include <linux/p2pmem.h>

/* ------------------------------------------------------------------ */
/* Providers: route cache and pci_p2pmem_find_many()                    */
/* ------------------------------------------------------------------ */

/*
 * 7e57:00 (Intel 0x2020): a switch below root port 1 with endpoints N0-N3
 * (N0 is the client in most cases), a second switch level below the
 * fourth downstream port with endpoint FAR1, root port 2 with FAR2.
 * 7e57:a0 (unknown host bridge): root port with endpoint X.
 * 7e58:00 (unknown host bridge): the same root port and switch as 7e57:00,
 * with endpoint TWIN at N2's bus and devfn, in another PCI domain.
 */
enum pv_node {
	N0, N1, N2, N3, FAR1, FAR2, PX, PV_NODES,
	/* The bridges, after the endpoints that the cases loop over. */
	PV_RP1 = PV_NODES, PV_USP, PV_DSP0, PV_DSP1, PV_DSP2, PV_DSP3, PV_DSP4,
	PV_USP2, PV_D2, PV_RP2, PV_RPX,
	PV_RPT, PV_USPT, PV_DSPT0, PV_DSPT1, PV_DSPT2, PV_DSPT3, PV_DSPT4,
	PV_TWIN, PV_ALL
};

static struct fake_pci *pv_fp;
static struct fake_fn *pv[PV_ALL];

static const struct fake_line pv_topology[] = {
	FAKE_HOST_LINE(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	FAKE_RP_LINE(PV_RP1), FAKE_SWITCH_LINE(PV_USP, PV_RP1, 5),
	FAKE_ACS_LINE(PV_DSP0), FAKE_EP_LINE(N0, PV_DSP0, 1),
	FAKE_ACS_LINE(PV_DSP1), FAKE_EP_LINE(N1, PV_DSP1, 1),
	FAKE_ACS_LINE(PV_DSP2), FAKE_EP_LINE(N2, PV_DSP2, 1),
	FAKE_ACS_LINE(PV_DSP3), FAKE_EP_LINE(N3, PV_DSP3, 1),
	FAKE_SWITCH_LINE(PV_USP2, PV_DSP4, 1), FAKE_ACS_LINE(PV_D2),
	FAKE_EP_LINE(FAR1, PV_D2, 1),
	FAKE_RP_LINE(PV_RP2), FAKE_EP_LINE(FAR2, PV_RP2, 1),

	FAKE_HOST_LINE(0xa0, FAKE_VENDOR, 0x0001, HB_CLASS),
	FAKE_RP_LINE(PV_RPX), FAKE_EP_LINE(PX, PV_RPX, 1),

	FAKE_HOST2_LINE(0x00, FAKE_VENDOR, 0x0001, HB_CLASS),
	FAKE_RP_LINE(PV_RPT), FAKE_SWITCH_LINE(PV_USPT, PV_RPT, 5),
	FAKE_EP_LINE(PV_TWIN, PV_DSPT2, 1),
};

/*
 * What makes each provider of this suite pool-backed (pci_has_p2pmem()):
 * a range on its list. The cases choose providers and never allocate, so
 * the range is empty and its pool too. The state goes with the fake
 * device; nothing walks the list after that, nor frees these.
 */
static struct p2p_region pv_ranges[PV_NODES];

static void pv_suite_exit(struct kunit_suite *suite)
{
	fake_pci_destroy(pv_fp);
	pv_fp = NULL;
	memset(pv, 0, sizeof(pv));
}

static int pv_suite_init(struct kunit_suite *suite)
{
	int i, ret;

	pv_fp = fake_pci_create();
	if (!pv_fp)
		return -ENOMEM;
	ret = fake_build(pv_fp, pv_topology, ARRAY_SIZE(pv_topology), pv);
	for (i = 0; !ret && i < PV_NODES; i++)
		if (!pv[i])
			ret = -ENOMEM;
	if (!ret)
		ret = fake_pci_scan(pv_fp);
	/* Every endpoint registers (an empty range of) P2P memory. */
	memset(pv_ranges, 0, sizeof(pv_ranges));
	for (i = 0; !ret && i < PV_NODES; i++)
		ret = pv_setup_provider(pv[i]->pdev, &pv_ranges[i]);
	if (ret)
		pv_suite_exit(suite);
	return ret;
}

/*
 * The CPU rule stays off so that real providers elsewhere in the machine
 * (behind a host bridge we do not know) never qualify.
 */
static int pv_init(struct kunit *test)
{
	set_cpu_rule(test, false);
	set_policy(test, "");
	return 0;
}

static void pv_exit(struct kunit *test)
{
	int i;

	for (i = 0; i < PV_NODES; i++)
		pci_p2pmem_publish(pv[i]->pdev, false);
	pci_p2pmem_publish(pv[PV_DSP0]->pdev, false);
}

static struct pci_p2pdma *pv_p2p(struct fake_fn *fn)
{
	return rcu_dereference_protected(fn->pdev->p2pdma, 1);
}

/* Reopen @pdev after a case closed it, for the other cases. */
static void pv_reopen(struct kunit *test, struct pci_dev *pdev, bool had_sysfs)
{
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	WRITE_ONCE(p2p->closing, false);
	if (had_sysfs) {
		KUNIT_EXPECT_EQ(test, sysfs_create_group(&pdev->dev.kobj,
							 &p2pmem_group), 0);
		p2p->sysfs_added = true;
	}
}

/* A second lookup answers from the cache without any config read. */
static void cache_no_second_walk_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev;
	struct device *c = &pv[N2]->pdev->dev;
	struct p2p_route r1, r2;
	int reads;

	xa_destroy(&pv_p2p(pv[N1])->routes);
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r1);
	reads = atomic_read(&pv_fp->reads);
	KUNIT_EXPECT_GT(test, reads, 0);	/* the ACS control registers */
	KUNIT_EXPECT_EQ(test, r1.map, BUS);
	KUNIT_EXPECT_EQ(test, r1.distance, 4);

	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r2);
	KUNIT_EXPECT_EQ(test, atomic_read(&pv_fp->reads), 0);
	KUNIT_EXPECT_EQ(test, r2.map, r1.map);
	KUNIT_EXPECT_EQ(test, r2.distance, r1.distance);
	/* The orchestrator call always looks at the hardware again. */
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
	KUNIT_EXPECT_GT(test, atomic_read(&pv_fp->reads), 0);
}

/*
 * ACS set after a route was cached: the next orchestrator call sees it,
 * and refreshes the entry that the DMA mapping path then uses.
 */
static void cache_refresh_acs_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev;
	struct device *c = &pv[N2]->pdev->dev;
	struct p2p_route r;

	xa_destroy(&pv_p2p(pv[N1])->routes);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, BUS);

	fake_set_acs_ctrl(pv[PV_DSP2], PCI_ACS_RR);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false),
			3 + 3 + 2 + HB);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 3 + 3 + 2 + HB);

	fake_set_acs_ctrl(pv[PV_DSP2], 0);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, BUS);
}

/*
 * An orchestrator's call computes the route afresh and refreshes a cached
 * entry, but adds none: only a mapping's look-up caches a new route. So
 * pci_p2pmem_find_many() and distance_many() over pairs that are never
 * mapped leave the cache as it was.
 */
static void cache_orchestrator_adds_none_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev;
	struct device *c = &pv[N2]->pdev->dev;
	unsigned long key = p2p_client_key(pv[N2]->pdev);
	struct xarray *routes = &pv_p2p(pv[N1])->routes;
	struct p2p_route r;

	xa_destroy(routes);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
	KUNIT_EXPECT_NULL(test, xa_load(routes, key));
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(p, c, false), 4);
	KUNIT_EXPECT_NULL(test, xa_load(routes, key));

	/* The mapping's look-up caches it; the next call refreshes it. */
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_TRUE(test, xa_is_value(xa_load(routes, key)));
	fake_set_acs_ctrl(pv[PV_DSP2], PCI_ACS_RR);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false),
			3 + 3 + 2 + HB);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	fake_set_acs_ctrl(pv[PV_DSP2], 0);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
}

/*
 * The cache tells clients apart by PCI domain too: TWIN has N2's bus and
 * devfn in another domain, behind a host bridge this suite does not know.
 * Whichever of the two is looked up first, each gets its own verdict.
 */
static void cache_key_has_domain_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev, *n2 = pv[N2]->pdev;
	struct pci_dev *twin = pv[PV_TWIN]->pdev;
	struct p2p_route r;
	int order;

	KUNIT_ASSERT_EQ(test, twin->bus->number, n2->bus->number);
	KUNIT_ASSERT_EQ(test, twin->devfn, n2->devfn);
	KUNIT_ASSERT_NE(test, pci_domain_nr(twin->bus), pci_domain_nr(n2->bus));
	for (order = 0; order < 2; order++) {
		xa_destroy(&pv_p2p(pv[N1])->routes);
		p2p_route_lookup(p, order ? &twin->dev : &n2->dev, &r);
		KUNIT_EXPECT_EQ(test, r.map, order ? REFUSED : BUS);
		p2p_route_lookup(p, order ? &n2->dev : &twin->dev, &r);
		KUNIT_EXPECT_EQ(test, r.map, order ? BUS : REFUSED);
	}
}

/*
 * A bridge that reads all ones (removed, or in D3cold) gives a verdict
 * that must not outlive the condition: it is not cached.
 */
static void cache_all_ones_test(struct kunit *test)
{
	struct pci_dev *p = pv[N3]->pdev;
	struct device *c = &pv[N0]->pdev->dev;
	struct p2p_route r;

	xa_destroy(&pv_p2p(pv[N3])->routes);
	WRITE_ONCE(pv[PV_DSP0]->gone, true);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_NE(test, r.map, BUS);
	KUNIT_EXPECT_NE(test, pci_p2pdma_distance_many(p, &c, 1, false), 4);
	WRITE_ONCE(pv[PV_DSP0]->gone, false);

	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, BUS);
	KUNIT_EXPECT_EQ(test, r.distance, 4);
	/* That verdict is good, and is cached. */
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, atomic_read(&pv_fp->reads), 0);
	KUNIT_EXPECT_EQ(test, r.map, BUS);
}

/*
 * A change of the host bridge policy reaches the DMA mapping path at once:
 * the cached verdicts of every provider are dropped.
 */
static void cache_policy_change_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev, *q = pv[FAR2]->pdev;
	struct device *c = &pv[PX]->pdev->dev, *d = &pv[N0]->pdev->dev;
	struct p2p_route r;

	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);	/* 7e57:a0 is not known */
	p2p_route_lookup(q, d, &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);

	set_policy(test, "allow:7e57:a0,deny:7e57:00");
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);	/* 7e57:00 denied now */
	KUNIT_EXPECT_EQ(test, r.why, P2P_HOST_BRIDGE_DENIED);
	p2p_route_lookup(q, d, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);
	KUNIT_EXPECT_TRUE(test, r.override);

	set_policy(test, "allow:7e57:a0");
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_TRUE(test, r.override);
	KUNIT_EXPECT_EQ(test, r.distance, 3 + 1 + 2 + 2 * HB);
	/* ... and that verdict is cached in turn. */
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, atomic_read(&pv_fp->reads), 0);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_TRUE(test, r.override);
}

static int pv_policy_changes;

/*
 * Stands in for the CPU rule, which a route computation consults after
 * the policy's rules: the administrator denies 7e57:00 right then, once.
 * The computation holds the RCU read lock, so this installs the rules
 * without the parameter's check of what they risk, which sleeps.
 */
static bool pv_policy_changes_midway(void)
{
	if (!pv_policy_changes++)
		KUNIT_EXPECT_EQ(kunit_get_current_test(),
				p2p_policy_install("deny:7e57:00"), 0);
	return false;
}

/*
 * A verdict worked out while the host bridge policy changed is the old
 * policy's: the caller gets it, but it is not cached, since dropping the
 * cached verdicts of every provider may have happened before it was
 * stored. The next lookup computes the new policy's.
 */
static void cache_policy_change_midway_test(struct kunit *test)
{
	struct pci_dev *p = pv[N1]->pdev;
	struct device *c = &pv[FAR2]->pdev->dev;
	char *saved = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct p2p_route r;

	KUNIT_ASSERT_NOT_NULL(test, saved);
	policy_now(saved);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, policy_restore, saved),
			0);
	xa_destroy(&pv_p2p(pv[N1])->routes);
	pv_policy_changes = 0;
	kunit_activate_static_stub(test, p2p_cpu_routes_p2p,
				   pv_policy_changes_midway);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, pv_policy_changes, 1);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_NULL(test, xa_load(&pv_p2p(pv[N1])->routes,
					p2p_client_key(pv[FAR2]->pdev)));
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);
	KUNIT_EXPECT_EQ(test, r.why, P2P_HOST_BRIDGE_DENIED);
}

/* Every kind of verdict survives the trip through the cache. */
static void cache_same_answer_test(struct kunit *test)
{
	static const enum pv_node clients[] = { N2, N1, FAR1, FAR2, PX };
	struct pci_dev *p = pv[N1]->pdev;
	struct p2p_route fresh, cached;
	int i;

	xa_destroy(&pv_p2p(pv[N1])->routes);
	for (i = 0; i < ARRAY_SIZE(clients); i++) {
		struct device *c = &pv[clients[i]]->pdev->dev;

		p2p_route_compute(p, pv[clients[i]]->pdev, &fresh);
		p2p_route_lookup(p, c, &cached);	/* fills */
		atomic_set(&pv_fp->reads, 0);
		p2p_route_lookup(p, c, &cached);	/* from the cache */
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&pv_fp->reads), 0,
				    "client %d", i);
		KUNIT_EXPECT_EQ_MSG(test, cached.map, fresh.map, "client %d", i);
		KUNIT_EXPECT_EQ_MSG(test, cached.distance, fresh.distance,
				    "client %d", i);
		KUNIT_EXPECT_EQ_MSG(test, cached.why, fresh.why, "client %d", i);
	}
	KUNIT_EXPECT_EQ(test, fresh.map, REFUSED);	/* PX */
}

/* Without provider state there is no cache: every lookup walks. */
static void cache_none_without_state_test(struct kunit *test)
{
	struct pci_dev *p = pv[PV_DSP3]->pdev;	/* a bridge: no provider */
	struct device *c = &pv[N0]->pdev->dev;
	struct p2p_route r;

	KUNIT_ASSERT_NULL(test, rcu_access_pointer(p->p2pdma));
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_GT(test, atomic_read(&pv_fp->reads), 0);
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, c, &r);
	KUNIT_EXPECT_GT(test, atomic_read(&pv_fp->reads), 0);
}

/* Entries are per client: a new client walks, an old one does not. */
static void cache_per_client_test(struct kunit *test)
{
	struct pci_dev *p = pv[N2]->pdev;
	struct device *a = &pv[N0]->pdev->dev, *b = &pv[N3]->pdev->dev;
	struct p2p_route r;
	void *entry;

	xa_destroy(&pv_p2p(pv[N2])->routes);
	p2p_route_lookup(p, a, &r);
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, b, &r);
	KUNIT_EXPECT_GT(test, atomic_read(&pv_fp->reads), 0);
	atomic_set(&pv_fp->reads, 0);
	p2p_route_lookup(p, a, &r);
	p2p_route_lookup(p, b, &r);
	KUNIT_EXPECT_EQ(test, atomic_read(&pv_fp->reads), 0);
	entry = xa_load(&pv_p2p(pv[N2])->routes, p2p_client_key(pv[N3]->pdev));
	KUNIT_ASSERT_TRUE(test, xa_is_value(entry));
	KUNIT_EXPECT_EQ(test, xa_to_value(entry) >> P2P_PACK_DIST_SHIFT, 4);
}

static struct pci_dev *find1(struct device *client)
{
	return pci_p2pmem_find_many(&client, 1);
}

/* No published provider: NULL. */
static void find_none_test(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, find1(&pv[N0]->pdev->dev));
	KUNIT_EXPECT_NULL(test, find1(&pv[PX]->pdev->dev));
}

/* Registered but unpublished providers are never chosen. */
static void find_unpublished_ignored_test(struct kunit *test)
{
	struct pci_dev *got;
	int i;

	pci_p2pmem_publish(pv[FAR2]->pdev, true);
	for (i = 0; i < 20; i++) {
		got = find1(&pv[N0]->pdev->dev);
		KUNIT_EXPECT_PTR_EQ(test, got, pv[FAR2]->pdev);
		pci_dev_put(got);
	}
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(pv[N1]->pdev));
	KUNIT_EXPECT_TRUE(test, pci_has_p2pmem(pv[FAR2]->pdev));
}

/* The closest provider always wins over farther ones. */
static void find_closest_test(struct kunit *test)
{
	static const enum pv_node pub[] = { N2, FAR1, FAR2 };
	struct pci_dev *got;
	int i;

	for (i = 0; i < ARRAY_SIZE(pub); i++)
		pci_p2pmem_publish(pv[pub[i]]->pdev, true);
	for (i = 0; i < 50; i++) {
		got = find1(&pv[N0]->pdev->dev);
		KUNIT_EXPECT_PTR_EQ(test, got, pv[N2]->pdev);
		pci_dev_put(got);
	}
	/* Without it, the next closest: FAR1 (6) before FAR2 (3+1+2+HB). */
	pci_p2pmem_publish(pv[N2]->pdev, false);
	got = find1(&pv[N0]->pdev->dev);
	KUNIT_EXPECT_PTR_EQ(test, got, pv[FAR1]->pdev);
	pci_dev_put(got);
}

/* A client that is itself a provider is its own closest provider. */
static void find_self_test(struct kunit *test)
{
	struct pci_dev *got;

	pci_p2pmem_publish(pv[N0]->pdev, true);
	pci_p2pmem_publish(pv[N1]->pdev, true);
	got = find1(&pv[N0]->pdev->dev);
	KUNIT_EXPECT_PTR_EQ(test, got, pv[N0]->pdev);
	pci_dev_put(got);
}

/*
 * Among equally close providers the choice is uniform (the orchestrator
 * spreads load). A chi-square goodness-of-fit test over SPREAD_DRAWS draws
 * among three tied providers: with 2 degrees of freedom, chi2 > 27.63 has
 * probability 1e-6 for a uniform choice, while a choice as skewed as
 * 1/2, 1/4, 1/4 gives chi2 = 75. With e = SPREAD_DRAWS / 3 expected hits
 * each, chi2 * e = sum of (hits - e)^2. (600 draws keep the case short
 * enough for the debug kernel's hung-task bound under a busy emulator.)
 */
#define SPREAD_DRAWS	600
static void find_spread_test(struct kunit *test)
{
	static const enum pv_node pub[] = { N1, N2, N3, FAR2 };
	static const enum pv_node tied[] = { N1, N2, N3 };
	const long e = SPREAD_DRAWS / ARRAY_SIZE(tied);
	int hits[PV_NODES] = {}, i, j;
	struct pci_dev *got;
	long chi2_e = 0;

	for (i = 0; i < ARRAY_SIZE(pub); i++)
		pci_p2pmem_publish(pv[pub[i]]->pdev, true);
	for (i = 0; i < SPREAD_DRAWS; i++) {
		got = find1(&pv[N0]->pdev->dev);
		for (j = 0; j < PV_NODES; j++)
			if (got == pv[j]->pdev)
				hits[j]++;
		pci_dev_put(got);
	}
	KUNIT_EXPECT_EQ(test, hits[FAR2], 0);
	KUNIT_EXPECT_EQ(test, hits[N1] + hits[N2] + hits[N3], SPREAD_DRAWS);
	for (i = 0; i < ARRAY_SIZE(tied); i++)
		chi2_e += (hits[tied[i]] - e) * (hits[tied[i]] - e);
	/* chi2 < 27.63, i.e. chi2 * e < 27.63 * e */
	KUNIT_EXPECT_LT_MSG(test, chi2_e * 100, 2763 * e,
			    "hits %d/%d/%d of %d are not uniform",
			    hits[N1], hits[N2], hits[N3], SPREAD_DRAWS);
}

/* Providers that some client cannot reach are skipped; all: NULL. */
static void find_unreachable_test(struct kunit *test)
{
	struct device *c[2] = { &pv[N0]->pdev->dev, &pv[PX]->pdev->dev };
	struct pci_dev *got;

	pci_p2pmem_publish(pv[N1]->pdev, true);
	pci_p2pmem_publish(pv[FAR2]->pdev, true);
	KUNIT_EXPECT_NULL(test, got = pci_p2pmem_find_many(c, 2));
	pci_dev_put(got);
	pci_p2pmem_publish(pv[PX]->pdev, true);
	got = find1(c[1]);
	KUNIT_EXPECT_PTR_EQ(test, got, pv[PX]->pdev);
	pci_dev_put(got);
	KUNIT_EXPECT_NULL(test, got = pci_p2pmem_find_many(c, 2));
	pci_dev_put(got);
}

/* No client, nothing to choose for. */
static void find_no_client_test(struct kunit *test)
{
	struct device *c = &pv[N0]->pdev->dev;
	struct pci_dev *got;

	pci_p2pmem_publish(pv[N1]->pdev, true);
	KUNIT_EXPECT_NULL(test, got = pci_p2pmem_find_many(&c, 0));
	pci_dev_put(got);
	got = find1(c);
	KUNIT_EXPECT_PTR_EQ(test, got, pv[N1]->pdev);
	pci_dev_put(got);
}

/*
 * A device with P2P state but no range, as a provider whose registrations
 * all failed has, is never chosen, even published and closest (upstream
 * "Restrict the p2pmem search to pool-backed providers"). DSP 0, right
 * above the client N0 (one link), gets such state and is published
 * beside N1 (four links): N1 is chosen every time.
 */
static void find_skips_provider_without_memory_test(struct kunit *test)
{
	struct pci_dev *bare = pv[PV_DSP0]->pdev;
	struct device *c = &pv[N0]->pdev->dev;
	struct pci_dev *got;
	int i;

	KUNIT_ASSERT_EQ(test, pv_setup_provider(bare, NULL), 0);
	KUNIT_ASSERT_TRUE(test, list_empty(&pv_p2p(pv[PV_DSP0])->regions));
	KUNIT_ASSERT_EQ(test, pci_p2pdma_distance(bare, c, false), 1);
	pci_p2pmem_publish(bare, true);
	pci_p2pmem_publish(pv[N1]->pdev, true);
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(bare));
	KUNIT_EXPECT_TRUE(test, pci_has_p2pmem(pv[N1]->pdev));
	for (i = 0; i < 20; i++) {
		got = find1(c);
		KUNIT_EXPECT_PTR_EQ(test, got, pv[N1]->pdev);
		pci_dev_put(got);
	}
}

/*
 * How often @fn's state is on the list of published providers that
 * pci_p2pmem_find_many() walks; a list that does not end within 1000
 * entries counts as -1.
 */
static int pv_on_list(struct fake_fn *fn)
{
	struct pci_p2pdma *p2p, *want = pv_p2p(fn);
	int n = 0, seen = 0;

	guard(rcu)();
	list_for_each_entry_rcu(p2p, &p2p_published_list, published_node) {
		if (++seen > 1000)
			return -1;
		if (p2p == want)
			n++;
	}
	return n;
}

/* @n choices for client @c all give @want (NULL: nothing). */
static void pv_expect_find(struct kunit *test, struct device *c,
			   struct fake_fn *want, int n)
{
	struct pci_dev *got;
	int i;

	for (i = 0; i < n; i++) {
		got = find1(c);
		KUNIT_EXPECT_PTR_EQ(test, got, want ? want->pdev : NULL);
		pci_dev_put(got);
	}
}

/*
 * pci_p2pmem_find_many() chooses from a list of published providers, not
 * from all PCI devices: a provider is on that list exactly once while
 * published and not at all otherwise, whatever the order and repetition
 * of the calls, and only what is on it is chosen. N1 (four links from
 * the client N0) beats FAR2 (through the root port) whenever it is there.
 */
static void find_follows_publish_test(struct kunit *test)
{
	struct device *c = &pv[N0]->pdev->dev;

	KUNIT_ASSERT_EQ(test, pv_on_list(pv[N1]), 0);
	pci_p2pmem_publish(pv[FAR2]->pdev, true);
	pv_expect_find(test, c, pv[FAR2], 5);
	pci_p2pmem_publish(pv[N1]->pdev, true);
	pci_p2pmem_publish(pv[N1]->pdev, true);
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N1]), 1, "published twice");
	pv_expect_find(test, c, pv[N1], 5);

	/* Withdrawn: off the list, FAR2 again; twice changes nothing. */
	pci_p2pmem_publish(pv[N1]->pdev, false);
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N1]), 0, "withdrawn");
	pv_expect_find(test, c, pv[FAR2], 20);
	pci_p2pmem_publish(pv[N1]->pdev, false);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[N1]), 0);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[FAR2]), 1);

	/* Published again, and back and forth: there once, and chosen. */
	pci_p2pmem_publish(pv[N1]->pdev, true);
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N1]), 1, "republished");
	pv_expect_find(test, c, pv[N1], 5);
	pci_p2pmem_publish(pv[FAR2]->pdev, false);
	pci_p2pmem_publish(pv[FAR2]->pdev, true);
	pci_p2pmem_publish(pv[N1]->pdev, false);
	pci_p2pmem_publish(pv[N1]->pdev, true);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[N1]), 1);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[FAR2]), 1);
	pv_expect_find(test, c, pv[N1], 5);
	pci_p2pmem_publish(pv[N1]->pdev, false);
	pci_p2pmem_publish(pv[FAR2]->pdev, false);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[N1]), 0);
	KUNIT_EXPECT_EQ(test, pv_on_list(pv[FAR2]), 0);
	pv_expect_find(test, c, NULL, 5);
}

/*
 * A provider whose unbind started while it was published leaves the list
 * and is never chosen, not even after a pci_p2pmem_publish(true). N2 is
 * the closest (four links from N0) and published beside FAR2 when
 * p2p_provider_close() runs on it; the case then reopens it.
 */
static void find_never_closed_test(struct kunit *test)
{
	struct pci_dev *pdev = pv[N2]->pdev;
	struct pci_p2pdma *p2p = pv_p2p(pv[N2]);
	struct device *c = &pv[N0]->pdev->dev;
	bool had_sysfs = p2p->sysfs_added;

	KUNIT_ASSERT_FALSE(test, READ_ONCE(p2p->closing));
	pci_p2pmem_publish(pv[FAR2]->pdev, true);
	pci_p2pmem_publish(pdev, true);
	pv_expect_find(test, c, pv[N2], 5);
	p2p_provider_close(pdev);
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N2]), 0, "closed");
	pv_expect_find(test, c, pv[FAR2], 20);
	pci_p2pmem_publish(pdev, true);
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N2]), 0,
			    "published after the close");
	pv_expect_find(test, c, pv[FAR2], 20);

	pv_reopen(test, pdev, had_sysfs);
}

#if IS_ENABLED(CONFIG_PCI_P2PDMA_DMABUF)
/* The errno of the export that pv_export_after_withdraw() tried. */
static int pv_between;
static struct pci_dev *pv_between_pdev;

/*
 * p2p_publish_update() of an unbind: the memory is withdrawn, then
 * userspace asks to export from it, before anything else of the unbind.
 */
static void pv_export_after_withdraw(struct pci_p2pdma *p2p, bool publish)
{
	struct kunit *test = kunit_get_current_test();
	struct pci_dev *pdev = pv_between_pdev;
	struct p2pmem_export req = {
		.domain = pci_domain_nr(pdev->bus),
		.bus = pdev->bus->number,
		.devfn = pdev->devfn,
		.size = PAGE_SIZE,
	};
	struct dma_buf *dmabuf;

	kunit_deactivate_static_stub(test, p2p_publish_update);
	p2p_publish_update(p2p, publish);
	dmabuf = p2pmem_export_req(&req);
	pv_between = PTR_ERR_OR_ZERO(dmabuf);
	if (!IS_ERR(dmabuf))
		dma_buf_put(dmabuf);
}

/*
 * An export that races an unbind gets -ENODEV ("unbinding"), never
 * -EACCES ("not published"): the unbind marks the provider closing before
 * it withdraws the memory. N1 is published; its unbind tries an export
 * right after the withdrawal. The case then reopens N1.
 */
static void export_between_close_stores_test(struct kunit *test)
{
	struct pci_dev *pdev = pv[N1]->pdev;
	struct pci_p2pdma *p2p = pv_p2p(pv[N1]);
	bool had_sysfs = p2p->sysfs_added;

	KUNIT_ASSERT_FALSE(test, READ_ONCE(p2p->closing));
	pci_p2pmem_publish(pdev, true);
	pv_between = 1;
	pv_between_pdev = pdev;
	kunit_activate_static_stub(test, p2p_publish_update,
				   pv_export_after_withdraw);
	p2p_provider_close(pdev);
	KUNIT_EXPECT_EQ_MSG(test, pv_between, -ENODEV,
			    "an export between the withdrawal and the end of the unbind");
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(pdev));

	pv_reopen(test, pdev, had_sysfs);
}
#endif

/* The provider returned carries exactly one new reference. */
static void find_reference_test(struct kunit *test)
{
	struct kobject *kobj = &pv[N3]->pdev->dev.kobj;
	unsigned int before = kref_read(&kobj->kref);
	struct pci_dev *got;

	pci_p2pmem_publish(pv[N3]->pdev, true);
	got = find1(&pv[N0]->pdev->dev);
	KUNIT_EXPECT_PTR_EQ(test, got, pv[N3]->pdev);
	KUNIT_EXPECT_EQ(test, kref_read(&kobj->kref), before + 1);
	pci_dev_put(got);
	KUNIT_EXPECT_EQ(test, kref_read(&kobj->kref), before);
}

/*
 * pci_p2pmem_publish(true) racing with an unbind: the publisher found the
 * provider open and is about to store, inside its RCU read-side section,
 * when another thread runs p2p_provider_close(). The store is held back
 * until the closer cannot be ahead of it any more: until the closer sleeps
 * (in the synchronize_rcu() that waits for this very reader) or has
 * finished. A close that did not wait for the reader has by then cleared
 * "published" for the last time, and the store leaves it set for good.
 */
struct pv_race {
	struct pci_dev *pdev;
	struct pci_p2pdma *p2p;
	struct task_struct *closer;
	struct completion go, done;
	bool closed;		/* p2p_provider_close() returned */
	bool parked;		/* the publisher reached its store */
	bool timed_out;
};

static struct pv_race *pv_race;

static int pv_closer(void *data)
{
	struct pv_race *race = data;

	wait_for_completion(&race->go);
	p2p_provider_close(race->pdev);
	/* Pairs with pv_publish_parks(): all of the close happened. */
	smp_store_release(&race->closed, true);
	complete(&race->done);
	return 0;
}

/* p2p_set_published() of the publisher: in an RCU reader, so it spins. */
static void pv_publish_parks(struct pci_p2pdma *p2p, bool publish)
{
	struct pv_race *race = pv_race;
	unsigned long deadline = jiffies + 5 * HZ;

	if (race && p2p == race->p2p && !race->parked) {
		race->parked = true;
		complete(&race->go);
		for (;;) {
			/* Pairs with pv_closer(). */
			if (smp_load_acquire(&race->closed))
				break;
			/* Its state is read after the closer ran. */
			if (smp_load_acquire(&p2p->closing) &&
			    !task_is_running(race->closer))
				break;
			if (time_after(jiffies, deadline)) {
				race->timed_out = true;
				break;
			}
			cpu_relax();
		}
		/* The store lands after whatever of the close was seen. */
		smp_mb();
	}
	p2p_publish_update(p2p, publish);
}

static void publish_races_close_test(struct kunit *test)
{
	struct pci_dev *pdev = pv[N3]->pdev;
	struct pci_p2pdma *p2p = pv_p2p(pv[N3]);
	bool had_sysfs = p2p->sysfs_added;
	struct pv_race *race;
	unsigned int other;

	/* The reader spins until the closer ran: on another CPU, or after it. */
	if (num_online_cpus() < 2 && !IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "needs two CPUs or CONFIG_PREEMPT_RCU");
	KUNIT_ASSERT_FALSE(test, READ_ONCE(p2p->closing));
	race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, race);
	race->pdev = pdev;
	race->p2p = p2p;
	init_completion(&race->go);
	init_completion(&race->done);
	race->closer = kthread_create(pv_closer, race, "p2pdma-closer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(race->closer));
	get_task_struct(race->closer);

	migrate_disable();
	other = cpumask_any_but(cpu_online_mask, smp_processor_id());
	if (other < nr_cpu_ids)
		kthread_bind(race->closer, other);
	wake_up_process(race->closer);
	pv_race = race;
	kunit_activate_static_stub(test, p2p_set_published, pv_publish_parks);
	pci_p2pmem_publish(pdev, true);
	kunit_deactivate_static_stub(test, p2p_set_published);
	migrate_enable();
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&race->done, 10 * HZ),
			0);
	kthread_stop_put(race->closer);
	pv_race = NULL;

	KUNIT_EXPECT_TRUE(test, race->parked);
	KUNIT_EXPECT_FALSE_MSG(test, race->timed_out,
			       "the closer neither slept nor finished");
	KUNIT_EXPECT_TRUE(test, READ_ONCE(p2p->closing));
	KUNIT_EXPECT_FALSE_MSG(test, pci_has_p2pmem(pdev),
			       "published after the close: it did not wait for the publisher");
	KUNIT_EXPECT_EQ_MSG(test, pv_on_list(pv[N3]), 0,
			    "on the published list after the close");
	pci_p2pmem_publish(pdev, true);
	KUNIT_EXPECT_FALSE(test, pci_has_p2pmem(pdev));

	pv_reopen(test, pdev, had_sysfs);
}

struct pv_release {
	struct pci_dev *pdev;
	struct completion go, done;
};

static int pv_releaser(void *data)
{
	struct pv_release *rel = data;

	wait_for_completion(&rel->go);
	devm_release_action(&rel->pdev->dev, p2p_provider_release, rel->pdev);
	complete(&rel->done);
	return 0;
}

/*
 * The end of an unbind (p2p_provider_release()) waits for the RCU readers
 * that still see the provider's state, as pci_p2pmem_find_many() and
 * pci_p2pdma_distance() do, before devres frees that state (upstream
 * "Wait for RCU readers before freeing state"). DSP 1 gets state and a
 * cached route, and its close runs first, as a range's devres action runs
 * it. The case then finds the state in an RCU read section and lets the
 * release run on another CPU: for 200 ms it must not return, and the
 * cached route must still be there; once the reader leaves, it returns
 * and the device has no state.
 */
static void release_waits_for_readers_test(struct kunit *test)
{
	struct pci_dev *pdev = pv[PV_DSP1]->pdev;
	unsigned long key = p2p_client_key(pv[N1]->pdev);
	struct pci_p2pdma *p2p;
	struct pv_release *rel;
	struct task_struct *t;
	struct p2p_route route;
	void *entry = NULL;
	bool early = false;
	unsigned int other;
	int i;

	/* The reader spins while the release runs: on another CPU, or after. */
	if (num_online_cpus() < 2 && !IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "needs two CPUs or CONFIG_PREEMPT_RCU");
	KUNIT_ASSERT_EQ(test, pv_setup_provider(pdev, NULL), 0);
	/* A mapping's look-up caches the route (an orchestrator's does not). */
	p2p_route_lookup(pdev, &pv[N1]->pdev->dev, &route);
	KUNIT_ASSERT_EQ(test, route.distance, 1);
	entry = xa_load(&pv_p2p(pv[PV_DSP1])->routes, key);
	KUNIT_ASSERT_TRUE(test, xa_is_value(entry));
	entry = NULL;
	p2p_provider_close(pdev);

	rel = kunit_kzalloc(test, sizeof(*rel), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rel);
	rel->pdev = pdev;
	init_completion(&rel->go);
	init_completion(&rel->done);
	t = kthread_create(pv_releaser, rel, "p2pdma-release");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);

	migrate_disable();
	other = cpumask_any_but(cpu_online_mask, smp_processor_id());
	if (other < nr_cpu_ids)
		kthread_bind(t, other);
	wake_up_process(t);
	rcu_read_lock();
	p2p = rcu_dereference(pdev->p2pdma);
	complete(&rel->go);
	for (i = 0; p2p && i < 200; i++) {
		mdelay(1);
		if (completion_done(&rel->done)) {
			early = true;
			break;
		}
	}
	if (p2p)
		entry = xa_load(&p2p->routes, key);
	rcu_read_unlock();
	migrate_enable();
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&rel->done, 10 * HZ),
			0);
	kthread_stop_put(t);

	KUNIT_ASSERT_NOT_NULL(test, p2p);
	KUNIT_EXPECT_FALSE_MSG(test, early,
			       "the release returned while a reader saw the state");
	KUNIT_EXPECT_TRUE(test, xa_is_value(entry));
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(pdev->p2pdma));
}

static struct kunit_case p2pdma_provider_cases[] = {
	KUNIT_CASE(cache_no_second_walk_test),
	KUNIT_CASE(cache_same_answer_test),
	KUNIT_CASE(cache_none_without_state_test),
	KUNIT_CASE(cache_per_client_test),
	KUNIT_CASE(cache_refresh_acs_test),
	KUNIT_CASE(cache_orchestrator_adds_none_test),
	KUNIT_CASE(cache_key_has_domain_test),
	KUNIT_CASE(cache_all_ones_test),
	KUNIT_CASE(cache_policy_change_test),
	KUNIT_CASE(cache_policy_change_midway_test),
	KUNIT_CASE(find_none_test),
	KUNIT_CASE(find_unpublished_ignored_test),
	KUNIT_CASE(find_closest_test),
	KUNIT_CASE(find_self_test),
	KUNIT_CASE(find_spread_test),
	KUNIT_CASE(find_unreachable_test),
	KUNIT_CASE(find_reference_test),
	KUNIT_CASE(find_no_client_test),
	KUNIT_CASE(find_skips_provider_without_memory_test),
	KUNIT_CASE(find_follows_publish_test),
	KUNIT_CASE(find_never_closed_test),
#if IS_ENABLED(CONFIG_PCI_P2PDMA_DMABUF)
	KUNIT_CASE(export_between_close_stores_test),
#endif
	KUNIT_CASE(publish_races_close_test),
	KUNIT_CASE(release_waits_for_readers_test),
	{}
};

static struct kunit_suite p2pdma_provider_suite = {
	.name = "p2pdma-provider",
	.suite_init = pv_suite_init,
	.suite_exit = pv_suite_exit,
	.init = pv_init,
	.exit = pv_exit,
	.test_cases = p2pdma_provider_cases,
};

kunit_test_suite(p2pdma_provider_suite);
