/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Route suite (p2pdma-route): the map type and distance of every pair of
 * one rich fake hierarchy (route.c, host-bridge.c; the hierarchy is
 * route-hierarchy.h's). Included at the end of route.c.
 */

#include "route-hierarchy.h"

/* ------------------------------------------------------------------ */
/* Routes: map type and distance on one rich fake hierarchy             */
/* ------------------------------------------------------------------ */

#define MAX_ACS 3

struct route_case {
	const char *name;
	enum rt_node provider, client;
	enum rt_node acs[MAX_ACS];	/* bridges with ACS control @ctrl */
	u16 ctrl;
	int cpu_rule;			/* CPU routes P2P everywhere: 0 or 1 */
	enum pci_p2pdma_map_type map;
	unsigned int distance;		/* ignored when refused */
};

#define ACS1(b)		{ b, NONE, NONE }
#define ACS3(a, b, c)	{ a, b, c }
#define NOACS		ACS1(NONE)
#define RDR		(PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC)
#define NORDR		(PCI_ACS_SV | PCI_ACS_TB | PCI_ACS_UF | PCI_ACS_DT)

/* Depths: EPA/EPB 3, EPC/EPD 5, EPM*, EPE, PF, VF and the others 1. */
static const struct route_case route_cases[] = {
	/* Topology alone. */
	{ "same-function", EPA, EPA, NOACS, 0, 0, BUS, 0 },
	{ "same-function-thru-acs", EPA, EPA, ACS1(DSP0A), RDR, 0, BUS, 0 },
	{ "mfd-fn0-fn1", EPM0, EPM1, NOACS, 0, 0, BUS, 2 },
	{ "mfd-fn2-fn0", EPM2, EPM0, NOACS, 0, 0, BUS, 2 },
	{ "switch-siblings", EPA, EPB, NOACS, 0, 0, BUS, 4 },
	{ "sibling-switches-one-rp", EPC, EPD, NOACS, 0, 0, BUS, 8 },
	{ "switch-and-nested-switch", EPA, EPC, NOACS, 0, 0, BUS, 6 },
	{ "root-ports-known-hb", EPA, EPE, NOACS, 0, 0, THRU, 3 + 1 + 2 + HB },
	{ "root-ports-known-hb-mfd", EPM1, EPE, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "root-ports-known-hb-cpu", EPA, EPE, NOACS, 0, 1, THRU, 3 + 1 + 2 + HB },
	{ "root-ports-same-only-hb", EPS1, EPS2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "root-ports-unknown-hb", EPU1, EPU2, NOACS, 0, 0, REFUSED, 0 },
	{ "root-ports-unknown-hb-cpu", EPU1, EPU2, NOACS, 0, 1, THRU, 1 + 3 + 2 + HB },
	{ "root-ports-no-devfn0", EPN1, EPN2, NOACS, 0, 0, REFUSED, 0 },
	{ "root-ports-no-devfn0-cpu", EPN1, EPN2, NOACS, 0, 1, THRU, 1 + 1 + 2 + HB },
	/* No class check: the vendor and device ID of 00.0 decide. */
	{ "root-ports-devfn0-not-host-class", EPC1, EPC2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	/* Which device identifies the host bridge (the root bus's first). */
	{ "root-ports-first-is-root-port", EPSK1, EPSK2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "host-bridges-first-is-root-port", EPSK2, EPK2, NOACS, 0, 0, THRU, 1 + 1 + 2 + 2 * HB },
	{ "root-ports-icelake-class-0880", EPI1, EPI2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "host-bridges-icelake-skylake", EPI2, EPA, NOACS, 0, 0, THRU, 1 + 3 + 2 + 2 * HB },
	{ "host-bridges-icelake-first-rp", EPI1, EPSK1, NOACS, 0, 0, THRU, 1 + 1 + 2 + 2 * HB },
	{ "root-ports-3c01-same-hb", EPSB1, EPSB2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "root-ports-2f01-same-hb", EPHW1, EPHW2, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "host-bridges-3c01-2f01", EPSB1, EPHW1, NOACS, 0, 0, REFUSED, 0 },
	{ "host-bridges-3c01-skylake", EPSB2, EPE, NOACS, 0, 0, REFUSED, 0 },
	{ "host-bridges-2f01-icelake", EPHW2, EPI1, NOACS, 0, 0, REFUSED, 0 },
	{ "root-ports-first-is-rciep", EPX1, EPX2, NOACS, 0, 0, REFUSED, 0 },
	{ "root-ports-first-is-rciep-cpu", EPX1, EPX2, NOACS, 0, 1, THRU, 1 + 1 + 2 + HB },
	{ "switch-below-unknown-hb", EPU2, EPU3, NOACS, 0, 0, BUS, 4 },
	{ "host-bridges-both-any", EPA, EPK2, NOACS, 0, 0, THRU, 3 + 1 + 2 + 2 * HB },
	{ "host-bridges-both-any-rev", EPK2, EPE, NOACS, 0, 0, THRU, 1 + 1 + 2 + 2 * HB },
	{ "host-bridges-any-and-same-only", EPE, EPS1, NOACS, 0, 0, REFUSED, 0 },
	{ "host-bridges-same-only-pair", EPS1, EPS3, NOACS, 0, 0, REFUSED, 0 },
	{ "host-bridges-same-only-pair-cpu", EPS1, EPS3, NOACS, 0, 1, THRU, 1 + 1 + 2 + 2 * HB },
	{ "host-bridges-known-and-unknown", EPE, EPU1, NOACS, 0, 0, REFUSED, 0 },
	{ "host-bridges-known-and-unknown-cpu", EPE, EPU1, NOACS, 0, 1, THRU, 1 + 1 + 2 + 2 * HB },
	{ "pf-vf", PF, VF, NOACS, 0, 0, BUS, 2 },
	{ "vf-pf", VF, PF, NOACS, 0, 0, BUS, 2 },
	{ "pf-vf-below-switch", PF5, VF5, NOACS, 0, 0, BUS, 2 },
	{ "vf-other-root-port", VF, EPE, NOACS, 0, 0, THRU, 1 + 1 + 2 + HB },
	{ "vf-switch-endpoint", VF5, EPA, NOACS, 0, 0, THRU, 3 + 3 + 2 + HB },

	/* ACS on each bridge between two endpoints below one switch. */
	{ "acs-rr-client-dsp", EPA, EPB, ACS1(DSP0B), PCI_ACS_RR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-cr-client-dsp", EPA, EPB, ACS1(DSP0B), PCI_ACS_CR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-ec-client-dsp", EPA, EPB, ACS1(DSP0B), PCI_ACS_EC, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-rr-provider-dsp", EPA, EPB, ACS1(DSP0A), PCI_ACS_RR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-cr-provider-dsp", EPA, EPB, ACS1(DSP0A), PCI_ACS_CR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-ec-provider-dsp", EPA, EPB, ACS1(DSP0A), PCI_ACS_EC, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-rr-common-usp", EPA, EPB, ACS1(USP0), PCI_ACS_RR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-cr-common-usp", EPA, EPB, ACS1(USP0), PCI_ACS_CR, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-ec-common-usp", EPA, EPB, ACS1(USP0), PCI_ACS_EC, 0, THRU, 3 + 3 + 2 + HB },
	{ "acs-redirect-above-common", EPA, EPB, ACS1(RP1), RDR, 0, BUS, 4 },
	{ "acs-no-redirect-bits", EPA, EPB, ACS3(DSP0A, DSP0B, USP0), NORDR, 0, BUS, 4 },
	/* ... between two endpoints below sibling switches. */
	{ "acs-rr-lower-dsp", EPC, EPD, ACS1(DSP1A), PCI_ACS_RR, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-cr-lower-usp", EPC, EPD, ACS1(USP1), PCI_ACS_CR, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-ec-lower-usp", EPC, EPD, ACS1(USP2), PCI_ACS_EC, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-rr-upper-dsp", EPC, EPD, ACS1(DSP0D), PCI_ACS_RR, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-ec-upper-dsp", EPC, EPD, ACS1(DSP0C), PCI_ACS_EC, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-cr-common-upper-usp", EPC, EPD, ACS1(USP0), PCI_ACS_CR, 0, THRU, 5 + 5 + 2 + HB },
	{ "acs-no-redirect-bits-nested", EPC, EPD, ACS3(DSP1A, USP1, USP0), NORDR, 0, BUS, 8 },
	/* ... between functions below one root port (the common bridge). */
	{ "acs-rr-common-root-port", EPM0, EPM1, ACS1(RP2), PCI_ACS_RR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-cr-common-root-port", EPM0, EPM1, ACS1(RP2), PCI_ACS_CR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-ec-common-root-port", EPM0, EPM1, ACS1(RP2), PCI_ACS_EC, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-no-redirect-root-port", EPM0, EPM1, ACS1(RP2), NORDR, 0, BUS, 2 },
	{ "acs-rr-root-port-pf-vf", PF, VF, ACS1(RP4), PCI_ACS_RR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-ec-dsp-pf-vf", VF5, PF5, ACS1(DSP5A), PCI_ACS_EC, 0, THRU, 3 + 3 + 2 + HB },
	/* Redirected traffic still needs a host bridge that routes it. */
	{ "acs-rr-unknown-hb", EPU2, EPU3, ACS1(UDSP2), PCI_ACS_RR, 0, REFUSED, 0 },
	{ "acs-ec-unknown-hb-cpu", EPU2, EPU3, ACS1(UUSP), PCI_ACS_EC, 1, THRU, 3 + 3 + 2 + HB },
	/*
	 * ACS on the endpoint functions themselves: within a multi-function
	 * device (or between a PF and its VF) redirect sends requests to the
	 * root complex even though no bridge is crossed (PCIe r6.0 sec
	 * 6.12.1.2).
	 */
	{ "acs-rr-mfd-client-fn", EPM0, EPM1, ACS1(EPM1), PCI_ACS_RR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-cr-mfd-client-fn", EPM0, EPM1, ACS1(EPM1), PCI_ACS_CR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-ec-mfd-client-fn", EPM0, EPM1, ACS1(EPM1), PCI_ACS_EC, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-rr-mfd-provider-fn", EPM1, EPM2, ACS1(EPM1), PCI_ACS_RR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-cr-mfd-fn2-fn0", EPM2, EPM0, ACS1(EPM2), PCI_ACS_CR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-no-redirect-mfd-fns", EPM0, EPM1, ACS3(EPM0, EPM1, EPM2), NORDR, 0, BUS, 2 },
	{ "acs-rr-vf-fn", PF, VF, ACS1(VF), PCI_ACS_RR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-cr-pf-fn", VF, PF, ACS1(PF), PCI_ACS_CR, 0, THRU, 1 + 1 + 2 + HB },
	{ "acs-no-redirect-pf-vf-fns", PF, VF, ACS3(PF, VF, NONE), NORDR, 0, BUS, 2 },
	{ "acs-rr-endpoint-unknown-hb", EPU2, EPU3, ACS1(EPU3), PCI_ACS_RR, 0, REFUSED, 0 },
	{ "acs-ec-ep-unknown-hb-cpu", EPU2, EPU3, ACS1(EPU2), PCI_ACS_EC, 1, THRU, 3 + 3 + 2 + HB },
	/*
	 * A function's own ACS does not touch its requests to its own BAR,
	 * which never leave it (PCIe r6.0 sec 6.12): distance 0 by bus
	 * address, even below a host bridge that refuses P2P. 6.12 refuses
	 * these (a difference from Linux 6.12).
	 */
	{ "self-acs-rr-mfd-fn", EPM1, EPM1, ACS1(EPM1), PCI_ACS_RR, 0, BUS, 0 },
	{ "self-acs-cr-pf", PF, PF, ACS1(PF), PCI_ACS_CR, 0, BUS, 0 },
	{ "self-acs-ec-vf", VF, VF, ACS1(VF), PCI_ACS_EC, 0, BUS, 0 },
	{ "self-acs-rdr-unknown-hb", EPU2, EPU2, ACS1(EPU2), RDR, 0, BUS, 0 },
};

static void route_case_desc(const struct route_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(route, route_cases, route_case_desc);

static void route_apply(struct kunit *test, const struct route_case *c)
{
	int i;

	for (i = 0; i < MAX_ACS; i++)
		if (c->acs[i] != NONE)
			fake_set_acs_ctrl(rt[c->acs[i]], c->ctrl);
	set_cpu_rule(test, c->cpu_rule);
}

/* Map type and distance, both ways, by every entry point. */
static void route_test(struct kunit *test)
{
	const struct route_case *c = test->param_value;
	struct pci_dev *p = rt_dev(test, c->provider);
	struct pci_dev *q = rt_dev(test, c->client);
	struct device *client = &q->dev;
	struct p2p_route r;
	int want = c->map == REFUSED ? -1 : c->distance;

	route_apply(test, c);

	p2p_route_compute(p, q, &r);
	KUNIT_EXPECT_EQ(test, r.map, c->map);
	if (c->map != REFUSED)
		KUNIT_EXPECT_EQ(test, r.distance, c->distance);

	p2p_route_compute(q, p, &r);
	KUNIT_EXPECT_EQ_MSG(test, r.map, c->map, "reverse direction");
	if (c->map != REFUSED)
		KUNIT_EXPECT_EQ_MSG(test, r.distance, c->distance,
				    "reverse direction");

	p2p_route_lookup(p, client, &r);
	KUNIT_EXPECT_EQ(test, r.map, c->map);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &client, 1, false),
			want);
}

/* The reason names the redirecting bridge or the refusing host bridge. */
static void route_reason_test(struct kunit *test)
{
	struct pci_dev *a = rt_dev(test, EPU2), *b = rt_dev(test, EPU3);
	char buf[256];

	fake_set_acs_ctrl(rt[UDSP2], PCI_ACS_RR);
	p2p_route_reason(a, &b->dev, buf, sizeof(buf));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, pci_name(rt[UDSP2]->pdev)));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "ACS"));
	KUNIT_EXPECT_NOT_NULL(test,
			      strstr(buf, dev_name(&rt[EPU1]->host->bridge->dev)));

	p2p_route_reason(rt_dev(test, EPE), &rt_dev(test, EPS1)->dev, buf,
			 sizeof(buf));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "only within itself"));
	KUNIT_EXPECT_NOT_NULL(test,
			      strstr(buf, dev_name(&rt[EPS1]->host->bridge->dev)));
}

/* A client that is not a PCI function cannot be reached. */
static void route_non_pci_client_test(struct kunit *test)
{
	struct device *dev = kunit_device_register(test, "p2pdma-non-pci");
	struct pci_dev *p = rt_dev(test, EPA);
	struct p2p_route r;
	char buf[256];

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	p2p_route_lookup(p, dev, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);
	KUNIT_EXPECT_EQ(test, r.why, P2P_NOT_PCI);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &dev, 1, false), -1);
	p2p_route_reason(p, dev, buf, sizeof(buf));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "not a PCI device"));
}

static void route_child_release(struct device *dev)
{
}

/* A device below a PCI function (a gendisk, an ib_device) stands for it. */
static void route_child_client_test(struct kunit *test)
{
	struct device *child = kunit_kzalloc(test, sizeof(*child), GFP_KERNEL);
	struct pci_dev *p = rt_dev(test, EPA);
	struct p2p_route r;
	char buf[256];

	KUNIT_ASSERT_NOT_NULL(test, child);
	device_initialize(child);
	child->release = route_child_release;
	child->parent = &rt_dev(test, EPB)->dev;
	KUNIT_ASSERT_EQ(test, dev_set_name(child, "p2pdma-child"), 0);

	p2p_route_lookup(p, child, &r);
	KUNIT_EXPECT_EQ(test, r.map, BUS);
	KUNIT_EXPECT_EQ(test, r.distance, 4);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &child, 1, false), 4);

	child->parent = &rt_dev(test, EPU1)->dev;
	p2p_route_lookup(p, child, &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);
	KUNIT_EXPECT_EQ(test, r.why, P2P_HOST_BRIDGE_UNKNOWN);
	p2p_route_reason(p, child, buf, sizeof(buf));
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, "not known to route P2P"));
	put_device(child);
}

/* Distances add up over clients; one unreachable client refuses all. */
static void route_many_clients_test(struct kunit *test)
{
	struct pci_dev *p = rt_dev(test, EPA);
	struct device *c[4] = {
		&rt_dev(test, EPB)->dev,	/* 4 */
		&rt_dev(test, EPC)->dev,	/* 6 */
		&rt_dev(test, EPA)->dev,	/* 0 */
		&rt_dev(test, EPE)->dev,	/* 3 + 1 + 2 + HB */
	};

	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 3, false), 10);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 4, false),
			10 + 6 + HB);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 0, false), -1);

	c[1] = &rt_dev(test, EPU1)->dev;	/* other, unknown host bridge */
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 4, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 1, false), 4);
	set_cpu_rule(test, true);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 4, false),
			4 + (3 + 1 + 2 + 2 * HB) + 0 + (6 + HB));
}

/* @verbose logs exactly one line per refused client, naming both. */
static void route_verbose_test(struct kunit *test)
{
	struct device *np = kunit_device_register(test, "p2pdma-verbose-np");
	struct pci_dev *p = rt_dev(test, EPE);
	const char *pn = pci_name(p), *what = "P2PDMA to/from client";
	struct device *c[5];
	u64 mark;
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, np);
	c[0] = &rt_dev(test, EPA)->dev;		/* through host bridge */
	c[1] = &rt_dev(test, EPS1)->dev;	/* refused: same-only */
	c[2] = &rt_dev(test, EPM0)->dev;	/* through host bridge */
	c[3] = &rt_dev(test, EPU2)->dev;	/* refused: unknown */
	c[4] = np;				/* refused: not PCI */

	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 5, true), -1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, what, pn, NULL), 3);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ_MSG(test, kunit_kmsg_count(test, mark, what, pn,
							   dev_name(c[i])),
				    i == 1 || i >= 3 ? 1 : 0, "client %d", i);

	/* Nothing for reachable clients, nothing when not verbose. */
	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 1, true),
			3 + 1 + 2 + HB);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 5, false), -1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, what, NULL, NULL), 0);
}

/*
 * verbose=false means no log line at all, not only none of the refusal
 * kind (upstream "Gate the host bridge whitelist warning on verbose"):
 * a provider below a host bridge not known to route P2P, asked about a
 * client below that host bridge, one across host bridges and one behind
 * ACS redirect, by every orchestrator entry point. No line may name the
 * provider or a client, nor carry the core's prefix. The same calls with
 * verbose=true log exactly one line per refused client, which shows the
 * count sees what the core logs.
 */
static void route_quiet_test(struct kunit *test)
{
	struct pci_dev *p = rt_dev(test, EPU2);
	const char *pn = pci_name(p);
	struct device *c[3];
	struct pci_dev *got;
	u64 mark;
	int i;

	c[0] = &rt_dev(test, EPU3)->dev;	/* ACS redirect on UDSP2 */
	c[1] = &rt_dev(test, EPU1)->dev;	/* other root port, same hb */
	c[2] = &rt_dev(test, EPA)->dev;		/* other host bridge */
	fake_set_acs_ctrl(rt[UDSP2], PCI_ACS_RR | PCI_ACS_CR);

	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 3, false), -1);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(p, c[i], false), -1);
	pci_p2pmem_publish(p, true);	/* no state: does nothing */
	got = pci_p2pmem_find_many(c, 3);
	KUNIT_EXPECT_NULL(test, got);
	pci_dev_put(got);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, pn, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "pci-p2pdma",
					       NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "P2PDMA", NULL,
					       NULL), 0);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ_MSG(test, kunit_kmsg_count(test, mark,
							   dev_name(c[i]),
							   NULL, NULL),
				    0, "client %d", i);

	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 3, true), -1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, pn, NULL, NULL), 3);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, pn,
					       "ACS redirect on",
					       pci_name(rt[UDSP2]->pdev)), 1);
}

/*
 * The reason of a refusal stays in its buffer however many functions
 * redirect (upstream "Safely terminate ACS redirect lists"). Every bridge
 * of two nested switch levels between EPC and EPD, the root port above
 * them too, redirects, and a deny rule refuses the host bridge path. The
 * reason names the first redirecting function on the provider's side
 * (DSP1A), never a list, and the verbose line says exactly that. Given
 * any buffer from 1 byte up to one more than the whole reason, it writes
 * the reason cut to fit and NUL-terminated, and no byte past the buffer.
 */
static void route_reason_bounded_test(struct kunit *test)
{
	static const enum rt_node rdr[] = {
		DSP1A, USP1, DSP0C, USP0, DSP0D, USP2, DSP2A, RP1,
	};
	struct pci_dev *p = rt_dev(test, EPC), *q = rt_dev(test, EPD);
	struct device *client = &q->dev;
	const size_t canary = 64;
	char *want, *buf, *exact;
	size_t full, len, i;
	u64 mark;

	want = kunit_kzalloc(test, 512, GFP_KERNEL);
	exact = kunit_kzalloc(test, 256, GFP_KERNEL);
	buf = kunit_kzalloc(test, 512 + canary, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, exact);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(rdr); i++)
		fake_set_acs_ctrl(rt[rdr[i]], RDR);
	set_policy(test, "deny:all");

	snprintf(exact, 256,
		 "ACS redirect on %s forces the host bridge path; host bridge pci7e57:00 is denied by pci_p2pdma.host_bridges rule deny:all",
		 pci_name(rt[DSP1A]->pdev));
	p2p_route_reason(p, client, want, 512);
	full = strlen(want);
	KUNIT_ASSERT_LT(test, full, 256);
	KUNIT_EXPECT_STREQ(test, want, exact);
	for (i = 1; i < ARRAY_SIZE(rdr); i++)
		KUNIT_EXPECT_NULL_MSG(test, strstr(want, pci_name(rt[rdr[i]]->pdev)),
				      "%s", want);

	for (len = 1; len <= full + 1; len++) {
		memset(buf, 0xa5, len + canary);
		p2p_route_reason(p, client, buf, len);
		KUNIT_EXPECT_EQ_MSG(test, strnlen(buf, len), len - 1,
				    "len %zu", len);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(buf, want, len - 1), 0,
				    "len %zu", len);
		for (i = len; i < len + canary; i++)
			if (buf[i] != (char)0xa5)
				break;
		KUNIT_EXPECT_EQ_MSG(test, i, len + canary,
				    "len %zu: wrote past the buffer", len);
	}

	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &client, 1, true), -1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, pci_name(p), NULL,
					       NULL), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, pci_name(p), want,
					       NULL), 1);
}

/*
 * Only a function with an ACS capability can redirect. With the capability
 * hidden (acs_cap 0) on every function of a path, no ACS Control is read
 * and the route is direct, whatever the registers hold; a capability on
 * any one function of the path, the common bridge included, is found
 * again. Both ways round: the provider deeper than the client and the
 * client deeper than the provider take different loops to the common
 * bridge.
 */
static void route_acs_cap_path_test(struct kunit *test)
{
	static const enum rt_node path[] = {
		EPA, DSP0A, USP0, DSP0C, USP1, DSP1A, EPC,
	};
	const int last = ARRAY_SIZE(path) - 1;
	struct pci_dev *dev[ARRAY_SIZE(path)], *from, *to;
	u16 saved[ARRAY_SIZE(path)];
	struct p2p_route r;
	int i, way;

	for (i = 0; i < ARRAY_SIZE(path); i++)
		dev[i] = rt_dev(test, path[i]);
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		saved[i] = dev[i]->acs_cap;
		fake_set_acs_ctrl(rt[path[i]], PCI_ACS_RR);
		dev[i]->acs_cap = 0;
	}
	for (way = 0; way < 2; way++) {
		from = way ? dev[last] : dev[0];
		to = way ? dev[0] : dev[last];
		atomic_set(&rt_fp->reads, 0);
		p2p_route_compute(from, to, &r);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rt_fp->reads), 0,
				    "way %d", way);
		KUNIT_EXPECT_EQ_MSG(test, r.map, BUS, "way %d", way);
		KUNIT_EXPECT_EQ_MSG(test, r.distance, 6, "way %d", way);
		KUNIT_EXPECT_NULL_MSG(test, r.acs_dev, "way %d", way);

		for (i = 0; i < ARRAY_SIZE(path); i++) {
			if (!saved[i])
				continue;
			dev[i]->acs_cap = saved[i];
			p2p_route_compute(from, to, &r);
			KUNIT_EXPECT_PTR_EQ_MSG(test, r.acs_dev, dev[i],
						"way %d node %d", way, i);
			KUNIT_EXPECT_NE_MSG(test, r.map, BUS,
					    "way %d node %d", way, i);
			dev[i]->acs_cap = 0;
		}
	}

	for (i = 0; i < ARRAY_SIZE(path); i++) {
		dev[i]->acs_cap = saved[i];
		fake_set_acs_ctrl(rt[path[i]], 0);
	}
}

/* ACS turned on after the scan is read through config space. */
static void route_acs_cap_test(struct kunit *test)
{
	struct pci_dev *dsp = rt_dev(test, DSP0A), *ep = rt_dev(test, EPA);
	struct pci_dev *fn1 = rt_dev(test, EPM1), *rp = rt_dev(test, RP2);
	bool unsure = false;

	KUNIT_EXPECT_EQ(test, dsp->acs_cap, rt[DSP0A]->acs);
	KUNIT_EXPECT_NE(test, dsp->acs_cap, 0);
	KUNIT_EXPECT_EQ(test, ep->acs_cap, 0);
	KUNIT_EXPECT_FALSE(test, p2p_acs_redirects(dsp, &unsure));
	fake_set_acs_ctrl(rt[DSP0A], PCI_ACS_EC);
	KUNIT_EXPECT_TRUE(test, p2p_acs_redirects(dsp, &unsure));
	KUNIT_EXPECT_PTR_EQ(test, p2p_redirect_on_path(ep, rt[USP0]->pdev,
						       &unsure), dsp);
	KUNIT_EXPECT_EQ(test, p2p_depth(ep), 3);
	KUNIT_EXPECT_EQ(test, p2p_depth(rt_dev(test, EPD)), 5);

	/* An endpoint function's own ACS counts, from the function up. */
	KUNIT_EXPECT_EQ(test, fn1->acs_cap, rt[EPM1]->acs);
	KUNIT_EXPECT_NE(test, fn1->acs_cap, 0);
	KUNIT_EXPECT_NULL(test, p2p_redirect_on_path(fn1, rp, &unsure));
	fake_set_acs_ctrl(rt[RP2], PCI_ACS_RR);
	KUNIT_EXPECT_PTR_EQ(test, p2p_redirect_on_path(fn1, rp, &unsure), rp);
	fake_set_acs_ctrl(rt[EPM1], PCI_ACS_CR);
	KUNIT_EXPECT_PTR_EQ(test, p2p_redirect_on_path(fn1, rp, &unsure), fn1);
	KUNIT_EXPECT_FALSE(test, unsure);

	/* All ones: taken as a redirect, and flagged as not to be kept. */
	WRITE_ONCE(rt[DSP0A]->gone, true);
	KUNIT_EXPECT_TRUE(test, p2p_acs_redirects(dsp, &unsure));
	WRITE_ONCE(rt[DSP0A]->gone, false);
	KUNIT_EXPECT_TRUE(test, unsure);
}

/*
 * The first device of the root bus identifies the host bridge when it is
 * at 00.0 or is a root port.
 */
static void route_known_host_bridge_test(struct kunit *test)
{
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPA]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPS1]->host->bridge), 0);
	KUNIT_EXPECT_LT(test, p2p_known_host_bridge(rt[EPU1]->host->bridge), 0);
	KUNIT_EXPECT_LT(test, p2p_known_host_bridge(rt[EPN1]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPC1]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPSK1]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPI1]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPSB1]->host->bridge), 0);
	KUNIT_EXPECT_GE(test, p2p_known_host_bridge(rt[EPHW1]->host->bridge), 0);
	KUNIT_EXPECT_LT(test, p2p_known_host_bridge(rt[EPX1]->host->bridge), 0);
}

/* The entry of the built-in list that identifies @n's host bridge, or NULL. */
static const struct p2p_known_host_bridge *rt_known(enum rt_node n)
{
	int i = p2p_known_host_bridge(rt[n]->host->bridge);

	return i < 0 ? NULL : &p2p_routing_host_bridges[i];
}

/*
 * The host bridges upstream added after 6.12 (a documented difference:
 * 6.12 refuses these routes): an Intel DSA alone on its root bus, any
 * Google SoC, a Zhaoxin root complex that routes P2P only within itself.
 */
static void route_later_host_bridges_test(struct kunit *test)
{
	static const enum rt_node later[] = { EPL1, EPG, EPZ1 };
	struct p2p_route r;
	int i;

	for (i = 0; i < ARRAY_SIZE(later); i++) {
		KUNIT_ASSERT_NOT_NULL_MSG(test, rt_known(later[i]), "node %d", later[i]);
		KUNIT_EXPECT_TRUE(test, rt_known(later[i])->flags & P2P_HB_AFTER_612);
	}
	KUNIT_EXPECT_EQ(test, rt_known(EPL1)->device, 0x0b25);
	KUNIT_EXPECT_TRUE(test, rt_known(EPG)->flags & P2P_HB_ANY_DEVICE);
	KUNIT_EXPECT_TRUE(test, rt_known(EPZ1)->flags & P2P_HB_WITHIN_ITSELF);
	KUNIT_EXPECT_FALSE(test, rt_known(EPA)->flags & P2P_HB_AFTER_612);
	/*
	 * NVIDIA Vera Rubin, 10de:2f95 to 2f98 (upstream 894a78088fc3): on
	 * the list after 6.12, across host bridges; 2f94 and 2f99 are not.
	 */
	for (i = -1; i <= 4; i++) {
		struct pci_dev *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
		int k;

		KUNIT_ASSERT_NOT_NULL(test, d);
		d->vendor = PCI_VENDOR_ID_NVIDIA;
		d->device = 0x2f95 + i;
		k = p2p_host_bridge_index(d);
		if (i < 0 || i == 4) {
			KUNIT_EXPECT_LT_MSG(test, k, 0, "10de:%x", d->device);
			continue;
		}
		KUNIT_ASSERT_GE_MSG(test, k, 0, "10de:%x", d->device);
		KUNIT_EXPECT_EQ(test, p2p_routing_host_bridges[k].flags,
				P2P_HB_AFTER_612);
	}

	p2p_route_compute(rt_dev(test, EPL1), rt_dev(test, EPL2), &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 1 + 1 + 2 + HB);
	p2p_route_compute(rt_dev(test, EPL1), rt_dev(test, EPG), &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 1 + 1 + 2 + 2 * HB);
	p2p_route_compute(rt_dev(test, EPG), rt_dev(test, EPE), &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 1 + 1 + 2 + 2 * HB);
	p2p_route_compute(rt_dev(test, EPZ1), rt_dev(test, EPZ2), &r);
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 1 + 1 + 2 + HB);
	KUNIT_EXPECT_FALSE(test, r.override);

	/* Only within itself: not to another host bridge. */
	p2p_route_compute(rt_dev(test, EPZ1), rt_dev(test, EPL1), &r);
	KUNIT_EXPECT_EQ(test, r.map, REFUSED);
	KUNIT_EXPECT_EQ(test, r.why, P2P_HOST_BRIDGES_DIFFER);
	KUNIT_EXPECT_PTR_EQ(test, r.host_bridge, rt[EPZ1]->host->bridge);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(rt_dev(test, EPL1),
						  &rt_dev(test, EPZ2)->dev, false), -1);
}

struct irq_route {
	struct hrtimer timer;
	struct completion done;
	struct pci_dev *provider;
	struct device *client;
	struct p2p_route r;
	bool in_hardirq;
};

/*
 * Run @fn(@arg) as outside any test: KUnit's static stub lookup takes the
 * test's spinlock_t, which a hard IRQ must not take (lockdep's raw lock
 * nesting check reports it), so the IRQ's lookup runs with the real
 * functions. The interrupted thread is the test's own, which waits on
 * this CPU with preemption off: nothing sees its test missing.
 */
static void without_stubs(void (*fn)(void *arg), void *arg)
{
	struct kunit *test = current->kunit_test;

	current->kunit_test = NULL;
	fn(arg);
	current->kunit_test = test;
}

static void irq_route_lookup(void *arg)
{
	struct irq_route *ir = arg;

	p2p_route_lookup(ir->provider, ir->client, &ir->r);
}

static enum hrtimer_restart irq_route_fn(struct hrtimer *timer)
{
	struct irq_route *ir = container_of(timer, struct irq_route, timer);

	ir->in_hardirq = in_hardirq();
	without_stubs(irq_route_lookup, ir);
	complete(&ir->done);
	return HRTIMER_NORESTART;
}

static void real_cpu_rule(void *arg)
{
	*(bool *)arg = p2p_cpu_routes_p2p();
}

/*
 * Work out @client's route to @provider in a hard-IRQ hrtimer callback.
 * The timer is pinned to this CPU, which spins with preemption off until
 * it has run: the interrupt lands on the test's own thread. The case's
 * static stubs do not apply inside it (without_stubs()).
 */
static void irq_route(struct kunit *test, enum rt_node provider,
		      enum rt_node client, struct p2p_route *r)
{
	struct irq_route *ir = kunit_kzalloc(test, sizeof(*ir), GFP_KERNEL);
	u64 deadline = ktime_get_ns() + 10 * NSEC_PER_SEC;
	bool ran;

	KUNIT_ASSERT_NOT_NULL(test, ir);
	ir->provider = rt_dev(test, provider);
	ir->client = &rt_dev(test, client)->dev;
	init_completion(&ir->done);
	hrtimer_setup(&ir->timer, irq_route_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	preempt_disable();
	hrtimer_start(&ir->timer, ns_to_ktime(100 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	while (!(ran = completion_done(&ir->done)) &&
	       ktime_get_ns() < deadline)
		cpu_relax();
	preempt_enable();
	if (!ran)
		hrtimer_cancel(&ir->timer);
	KUNIT_ASSERT_TRUE_MSG(test, ran, "the hrtimer never ran");
	KUNIT_EXPECT_TRUE(test, ir->in_hardirq);
	*r = ir->r;
}

/*
 * The DMA API may map P2P memory in any context, and the first mapping
 * for a pair computes its route: it must take no sleeping or IRQ-unsafe
 * lock and drop no device reference. Lockdep (CONFIG_PROVE_LOCKING) and
 * might_sleep() (CONFIG_DEBUG_ATOMIC_SLEEP) report any; either report
 * turns debug_locks off or taints the kernel.
 */
static void route_hardirq_test(struct kunit *test)
{
	bool tainted = test_taint(TAINT_WARN);
	struct p2p_route r;
	bool cpu_rule;

	if (IS_ENABLED(CONFIG_LOCKDEP))
		KUNIT_ASSERT_TRUE_MSG(test, debug_locks,
				      "lockdep was already off");
	/* The route suite's endpoints have no P2P state: nothing cached. */
	KUNIT_ASSERT_NULL(test, rcu_access_pointer(rt_dev(test, EPA)->p2pdma));

	irq_route(test, EPA, EPE, &r);		/* host bridge 0x2020 */
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 3 + 1 + 2 + HB);
	irq_route(test, EPA, EPK2, &r);		/* two host bridges */
	KUNIT_EXPECT_EQ(test, r.map, THRU);
	KUNIT_EXPECT_EQ(test, r.distance, 3 + 1 + 2 + 2 * HB);
	/* Unknown host bridge: the CPU rule of the CPU the case runs on. */
	without_stubs(real_cpu_rule, &cpu_rule);
	irq_route(test, EPU1, EPU2, &r);
	KUNIT_EXPECT_EQ(test, r.map, cpu_rule ? THRU : REFUSED);
	irq_route(test, EPA, EPB, &r);		/* below one switch */
	KUNIT_EXPECT_EQ(test, r.map, BUS);
	KUNIT_EXPECT_EQ(test, r.distance, 4);

	if (IS_ENABLED(CONFIG_LOCKDEP))
		KUNIT_EXPECT_TRUE_MSG(test, debug_locks,
				      "lockdep reported a locking problem");
	if (!tainted)
		KUNIT_EXPECT_FALSE_MSG(test, test_taint(TAINT_WARN),
				       "a warning (might_sleep?) was logged");
}

/*
 * The orchestrator calls need at least one client, and a NULL client
 * cannot reach anything; neither may crash with @verbose.
 */
static void route_no_client_test(struct kunit *test)
{
	struct pci_dev *p = rt_dev(test, EPA);
	struct device *c[2] = { &rt_dev(test, EPB)->dev, NULL };

	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 0, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 0, true), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, -1, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 1, true), 4);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 2, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 2, true), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(p, NULL, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(p, NULL, true), -1);
}

/* The map type names of debugfs "routes". */
static void route_map_type_name_test(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, p2p_map_type_name(BUS), "bus-address");
	KUNIT_EXPECT_STREQ(test, p2p_map_type_name(THRU),
			   "through-host-bridge");
	KUNIT_EXPECT_STREQ(test, p2p_map_type_name(REFUSED), "refused");
	KUNIT_EXPECT_STREQ(test, p2p_map_type_name(PCI_P2PDMA_MAP_UNKNOWN),
			   "unknown");
}

static struct kunit_case p2pdma_route_cases[] = {
	KUNIT_CASE_PARAM(route_test, route_gen_params),
	KUNIT_CASE(route_hardirq_test),
	KUNIT_CASE(route_reason_test),
	KUNIT_CASE(route_non_pci_client_test),
	KUNIT_CASE(route_child_client_test),
	KUNIT_CASE(route_many_clients_test),
	KUNIT_CASE(route_verbose_test),
	KUNIT_CASE(route_quiet_test),
	KUNIT_CASE(route_reason_bounded_test),
	KUNIT_CASE(route_acs_cap_test),
	KUNIT_CASE(route_acs_cap_path_test),
	KUNIT_CASE(route_known_host_bridge_test),
	KUNIT_CASE(route_later_host_bridges_test),
	KUNIT_CASE(route_map_type_name_test),
	KUNIT_CASE(route_no_client_test),
	{}
};

static struct kunit_suite p2pdma_route_suite = {
	.name = "p2pdma-route",
	.suite_init = rt_suite_init,
	.suite_exit = rt_suite_exit,
	.init = rt_init,
	.exit = rt_exit,
	.test_cases = p2pdma_route_cases,
};

kunit_test_suite(p2pdma_route_suite);
