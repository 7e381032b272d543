/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host bridge policy suite (p2pdma-host-bridge-policy): the override
 * pci_p2pdma.host_bridges= (host-bridge-policy.c): parsing and reading
 * back rules, their limits, the routes they allow or deny on the route
 * suite's hierarchy (route-kunit.h, whose fixture this suite shares), the
 * reasons and log lines they give. Included at the end of
 * host-bridge-policy.c.
 */

#include "route-hierarchy.h"

struct policy_parse_case {
	const char *in;
	const char *out;	/* as read back; NULL: rejected (-EINVAL) */
};

static const struct policy_parse_case policy_parse_cases[] = {
	{ "", "" },
	{ "\n", "" },
	{ "allow:all", "allow:all" },
	{ "deny:all\n", "deny:all" },
	{ "allow:0000:80", "allow:0000:80" },
	{ "allow:7E57:A0", "allow:7e57:a0" },
	{ "deny:0:00", "deny:0000:00" },
	{ "allow:10000:3f", "allow:10000:3f" },
	{ "allow:8086:29C0", "allow:8086:29c0" },
	{ "allow:0000:80,allow:1b36:000c,deny:all", "allow:0000:80,allow:1b36:000c,deny:all" },
	{ "allow", NULL },
	{ "allow:", NULL },
	{ "permit:all", NULL },
	{ "Allow:all", NULL },
	{ "allow:any", NULL },
	{ "allow:0000:8", NULL },
	{ "allow:0000:800", NULL },
	{ "allow:8086:29c00", NULL },
	{ "allow:123456789:00", NULL },
	{ ":00", NULL },
	{ "allow::00", NULL },
	{ "allow:zz:00", NULL },
	{ "allow:+1:00", NULL },
	{ "allow:0000:0x", NULL },
	{ "allow:all,", NULL },
	{ ",allow:all", NULL },
	{ "allow:all,,deny:all", NULL },
	{ "allow:all deny:all", NULL },
	{ " allow:all", NULL },
	{ "allow:all\n\n", NULL },
	{ "allow:0000:80:00", NULL },
};

static void policy_parse_desc(const struct policy_parse_case *c, char *desc)
{
	int i;

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "'%s'", c->in);
	for (i = 0; desc[i]; i++)
		if (desc[i] == '\n')
			desc[i] = '~';
}

KUNIT_ARRAY_PARAM(policy_parse, policy_parse_cases, policy_parse_desc);

/*
 * What the parameter accepts and prints back. A rejected value returns
 * -EINVAL, logs one line naming the parameter, and changes nothing.
 */
static void policy_parse_test(struct kunit *test)
{
	const struct policy_parse_case *c = test->param_value;
	const char *before = "allow:0123:45";
	char *now = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u64 mark;

	KUNIT_ASSERT_NOT_NULL(test, now);
	set_policy(test, before);
	mark = kunit_kmsg_mark();
	if (!c->out) {
		KUNIT_EXPECT_EQ(test, p2p_policy_set(c->in, NULL), -EINVAL);
		policy_now(now);
		KUNIT_EXPECT_STREQ(test, now, before);
		KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark,
						       "pci_p2pdma.host_bridges:",
						       "rejected", "unchanged"), 1);
		return;
	}
	KUNIT_EXPECT_EQ(test, p2p_policy_set(c->in, NULL), 0);
	policy_now(now);
	KUNIT_EXPECT_STREQ(test, now, c->out);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "host bridge policy changed to",
					       NULL, NULL), 1);
	/* What it prints is accepted again, unchanged. */
	KUNIT_EXPECT_EQ(test, p2p_policy_set(now, NULL), 0);
	policy_now(now);
	KUNIT_EXPECT_STREQ(test, now, c->out);
}

/*
 * A value-less pci_p2pdma.host_bridges on the command line is rejected;
 * 16 rules are accepted, 17 are not.
 */
static void policy_limits_test(struct kunit *test)
{
	char *in = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	char *now = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	int i, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, now);
	set_policy(test, "deny:0001:01");
	KUNIT_EXPECT_EQ(test, p2p_policy_set(NULL, NULL), -EINVAL);

	for (i = 0; i < P2P_POLICY_MAX_RULES; i++)
		n += scnprintf(in + n, PAGE_SIZE - n, "%sallow:%04x:%02x",
			       i ? "," : "", i + 2, i);
	KUNIT_EXPECT_EQ(test, p2p_policy_set(in, NULL), 0);
	policy_now(now);
	KUNIT_EXPECT_STREQ(test, now, in);

	scnprintf(in + n, PAGE_SIZE - n, ",deny:all");
	KUNIT_EXPECT_EQ(test, p2p_policy_set(in, NULL), -EINVAL);
	policy_now(now);
	in[n] = '\0';
	KUNIT_EXPECT_STREQ(test, now, in);
}

struct policy_case {
	const char *name;
	const char *rules;
	enum rt_node provider, client;
	int cpu_rule;
	enum pci_p2pdma_map_type map;
	unsigned int distance;		/* ignored when refused */
	bool override;			/* a rule decided */
	enum p2p_refusal why;
	enum rt_node refuser;		/* a function below the refusing HB */
};

/*
 * Host bridges of the route hierarchy: 7e57:00 and 7e57:40 Intel 0x2020
 * (route P2P), 7e57:80 0x3c00 and 7e57:90 0x2f00 (only within
 * themselves), 7e57:a0 1de5:0001 (not known).
 */
static const struct policy_case policy_cases[] = {
	{ "unknown-default", "", EPU1, EPU2, 0, REFUSED, 0, false,
	  P2P_HOST_BRIDGE_UNKNOWN, EPU1 },
	{ "unknown-allow-bus", "allow:7e57:a0", EPU1, EPU2, 0, THRU,
	  1 + 3 + 2 + HB, true },
	{ "unknown-allow-id", "allow:1de5:0001", EPU1, EPU2, 0, THRU,
	  1 + 3 + 2 + HB, true },
	{ "unknown-allow-all", "allow:all", EPU1, EPU2, 0, THRU,
	  1 + 3 + 2 + HB, true },
	{ "unknown-other-rule", "allow:7e57:a1,deny:7e57:00,allow:1de5:0002",
	  EPU1, EPU2, 0, REFUSED, 0, false, P2P_HOST_BRIDGE_UNKNOWN, EPU1 },
	{ "first-match-deny", "deny:7e57:a0,allow:all", EPU1, EPU2, 0,
	  REFUSED, 0, true, P2P_HOST_BRIDGE_DENIED, EPU1 },
	{ "first-match-allow", "allow:7e57:a0,deny:all", EPU1, EPU2, 0, THRU,
	  1 + 3 + 2 + HB, true },
	{ "deny-all-known", "deny:all", EPA, EPE, 0, REFUSED, 0, true,
	  P2P_HOST_BRIDGE_DENIED, EPA },
	{ "deny-all-beats-cpu-rule", "deny:all", EPA, EPE, 1, REFUSED, 0,
	  true, P2P_HOST_BRIDGE_DENIED, EPA },
	{ "deny-id-beats-cpu-rule", "deny:1de5:0001", EPU1, EPU2, 1,
	  REFUSED, 0, true, P2P_HOST_BRIDGE_DENIED, EPU1 },
	{ "deny-all-not-below-switch", "deny:all", EPA, EPB, 0, BUS, 4,
	  false },
	{ "deny-all-not-mfd", "deny:all", EPM0, EPM1, 0, BUS, 2, false },
	{ "deny-all-not-itself", "deny:all", EPE, EPE, 0, BUS, 0, false },
	{ "deny-other-hb", "deny:7e57:40", EPA, EPE, 0, THRU,
	  3 + 1 + 2 + HB, false },
	{ "deny-one-of-two", "deny:7e57:40", EPA, EPK2, 0, REFUSED, 0, true,
	  P2P_HOST_BRIDGE_DENIED, EPK2 },
	{ "known-and-unknown-allowed", "allow:7e57:a0", EPE, EPU1, 0, THRU,
	  1 + 1 + 2 + 2 * HB, true },
	{ "known-and-unknown-other", "allow:7e57:00", EPE, EPU1, 0, REFUSED,
	  0, false, P2P_HOST_BRIDGE_UNKNOWN, EPU1 },
	{ "same-only-pair-default", "", EPS1, EPS3, 0, REFUSED, 0, false,
	  P2P_HOST_BRIDGES_DIFFER, EPS1 },
	{ "same-only-pair-one-allowed", "allow:7e57:80", EPS1, EPS3, 0,
	  REFUSED, 0, false, P2P_HOST_BRIDGES_DIFFER, EPS3 },
	{ "same-only-pair-allowed", "allow:7e57:80,allow:7e57:90", EPS1,
	  EPS3, 0, THRU, 1 + 1 + 2 + 2 * HB, true },
	{ "same-only-pair-allowed-by-id", "allow:8086:3c00,allow:8086:2f00",
	  EPS1, EPS3, 0, THRU, 1 + 1 + 2 + 2 * HB, true },
	{ "acs-redirect-allowed", "allow:7e57:a0", EPU2, EPU3, 0, THRU,
	  3 + 3 + 2 + HB, true },
	{ "no-devfn0-allow-bus", "allow:7e57:c0", EPN1, EPN2, 0, THRU,
	  1 + 1 + 2 + HB, true },
	{ "no-devfn0-id-never-matches", "allow:0000:0000", EPN1, EPN2, 0,
	  REFUSED, 0, false, P2P_HOST_BRIDGE_UNKNOWN, EPN1 },
};

static void policy_case_desc(const struct policy_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(policy_route, policy_cases, policy_case_desc);

/*
 * Map type, distance, refusal and whether a rule decided, both ways, and
 * for a DMA mapping (the cache) as for an orchestrator.
 */
static void policy_route_test(struct kunit *test)
{
	const struct policy_case *c = test->param_value;
	struct pci_dev *p = rt_dev(test, c->provider);
	struct pci_dev *q = rt_dev(test, c->client);
	struct device *client = &q->dev;
	int want = c->map == REFUSED ? -1 : c->distance;
	struct p2p_route r;

	set_policy(test, c->rules);
	set_cpu_rule(test, c->cpu_rule);
	/* The acs-redirect case: EPU3's own ACS sends it to the root. */
	if (c->provider == EPU2 && c->client == EPU3)
		fake_set_acs_ctrl(rt[UDSP2], PCI_ACS_RR);

	p2p_route_compute(p, q, &r);
	KUNIT_EXPECT_EQ(test, r.map, c->map);
	KUNIT_EXPECT_EQ(test, r.override, c->override);
	if (c->map != REFUSED) {
		KUNIT_EXPECT_EQ(test, r.distance, c->distance);
	} else {
		KUNIT_EXPECT_EQ(test, r.why, c->why);
		KUNIT_EXPECT_PTR_EQ(test, r.host_bridge,
				    rt[c->refuser]->host->bridge);
	}
	p2p_route_compute(q, p, &r);
	KUNIT_EXPECT_EQ_MSG(test, r.map, c->map, "reverse direction");
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, &client, 1, false),
			want);
	p2p_route_lookup(p, client, &r);
	KUNIT_EXPECT_EQ(test, r.map, c->map);
	KUNIT_EXPECT_EQ(test, r.override, c->override);
}

/*
 * A refusal names the rule that would allow it, or the rule that denies
 * it; a route a rule allowed says so.
 */
static void policy_reason_test(struct kunit *test)
{
	struct pci_dev *u1 = rt_dev(test, EPU1), *u2 = rt_dev(test, EPU2);
	struct pci_dev *a = rt_dev(test, EPA), *e = rt_dev(test, EPE);
	struct p2p_route r;
	char buf[256];

	p2p_route_reason(u1, &u2->dev, buf, sizeof(buf));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "pci_p2pdma.host_bridges=allow:7e57:a0"),
				  "%s", buf);
	p2p_route_reason(rt_dev(test, EPS1), &rt_dev(test, EPS3)->dev, buf,
			 sizeof(buf));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "pci_p2pdma.host_bridges=allow:7e57:80"),
				  "%s", buf);

	/* The longest reason, ACS and an unknown host bridge, fits whole. */
	fake_set_acs_ctrl(rt[UDSP2], PCI_ACS_RR);
	p2p_route_reason(u2, &rt_dev(test, EPU3)->dev, buf, sizeof(buf));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "ACS redirect on"), "%s", buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(buf, "allow:7e57:a0)"), "%s", buf);

	set_policy(test, "allow:0001:00,deny:8086:2020");
	p2p_route_reason(a, &e->dev, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf,
			   "host bridge pci7e57:00 is denied by pci_p2pdma.host_bridges rule deny:8086:2020");

	set_policy(test, "allow:7e57:a0");
	p2p_route_compute(u1, u2, &r);
	p2p_route_explain(&r, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "allowed by pci_p2pdma.host_bridges");
	p2p_route_compute(a, e, &r);
	p2p_route_explain(&r, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, "-");
}

/* Warnings about host bridge @name logged since @mark. */
static int risk_warnings(struct kunit *test, u64 mark, const char *name)
{
	return kunit_kmsg_count(test, mark, name,
				"is not known to forward P2P requests",
				"silently corrupted");
}

/*
 * An allow rule for a host bridge the built-in policy does not vouch for
 * warns once, naming the risk and the rule, for as long as rules keep
 * allowing it; never for a host bridge of the list (even one that routes
 * P2P only within itself), under the CPU rule, or for a deny rule.
 */
static void policy_allow_warns_once_test(struct kunit *test)
{
	struct pci_dev *u1 = rt_dev(test, EPU1), *u2 = rt_dev(test, EPU2);
	static const char * const listed[] = {
		"pci7e57:00", "pci7e57:40", "pci7e57:80", "pci7e57:90",
		"pci7e57:20", "pci7e57:30", "pci7e57:50", "pci7e57:60",
		"pci7e57:e0", "pci7e57:b0", "pci7e57:d0", "pci7e57:f0",
	};
	u64 mark;
	int i;

	mark = kunit_kmsg_mark();
	set_policy(test, "allow:7e57:a0");
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:a0"), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "pci7e57:a0",
					       "(1de5:0001)", "rule allow:7e57:a0"), 1);

	/* Routes through it, and a policy that still allows it: no more. */
	mark = kunit_kmsg_mark();
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(u1, &u2->dev, true),
				1 + 3 + 2 + HB);
	KUNIT_EXPECT_EQ(test, p2p_policy_set("allow:1de5:0001,allow:7e57:00", NULL), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:a0"), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:00"), 0);

	/* allow:all: each host bridge the list lacks, once; those on it never. */
	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, p2p_policy_set("allow:all", NULL), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:a0"), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:c0"), 1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "pci7e57:c0",
					       "(1de5:1004)", "rule allow:all"), 1);
	/* Its first device is neither at 00.0 nor a root port: no ID. */
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "pci7e57:70",
					       "(no ID)", "rule allow:all"), 1);
	for (i = 0; i < ARRAY_SIZE(listed); i++)
		KUNIT_EXPECT_EQ_MSG(test, risk_warnings(test, mark, listed[i]),
				    0, "%s is on the built-in list", listed[i]);

	/* No longer allowed, then allowed again: warned again. */
	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, p2p_policy_set("deny:7e57:a0", NULL), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:a0"), 0);
	KUNIT_EXPECT_EQ(test, p2p_policy_set("allow:7e57:a0", NULL), 0);
	KUNIT_EXPECT_EQ(test, risk_warnings(test, mark, "pci7e57:a0"), 1);

	/* The CPU rule already routes P2P everywhere: nothing to warn about. */
	KUNIT_EXPECT_EQ(test, p2p_policy_set("", NULL), 0);
	set_cpu_rule(test, true);
	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, p2p_policy_set("allow:all", NULL), 0);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark,
					       "is not known to forward P2P requests",
					       NULL, NULL), 0);
}

/* A verbose refusal by a deny rule says so, once per client. */
static void policy_verbose_test(struct kunit *test)
{
	struct pci_dev *p = rt_dev(test, EPE);
	struct device *c[2] = { &rt_dev(test, EPA)->dev, &rt_dev(test, EPB)->dev };
	u64 mark;

	set_policy(test, "deny:all");
	mark = kunit_kmsg_mark();
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(p, c, 2, true), -1);
	KUNIT_EXPECT_EQ(test, kunit_kmsg_count(test, mark, "refused",
					       "denied by pci_p2pdma.host_bridges rule deny:all",
					       pci_name(p)), 2);
}

static struct kunit_case p2pdma_host_bridge_policy_cases[] = {
	KUNIT_CASE_PARAM(policy_parse_test, policy_parse_gen_params),
	KUNIT_CASE(policy_limits_test),
	KUNIT_CASE_PARAM(policy_route_test, policy_route_gen_params),
	KUNIT_CASE(policy_reason_test),
	KUNIT_CASE(policy_verbose_test),
	KUNIT_CASE(policy_allow_warns_once_test),
	{}
};

static struct kunit_suite p2pdma_host_bridge_policy_suite = {
	.name = "p2pdma-host-bridge-policy",
	.suite_init = rt_suite_init,
	.suite_exit = rt_suite_exit,
	.init = rt_init,
	.exit = rt_exit,
	.test_cases = p2pdma_host_bridge_policy_cases,
};

kunit_test_suite(p2pdma_host_bridge_policy_suite);
