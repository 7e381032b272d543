// SPDX-License-Identifier: GPL-2.0
/*
 * Black-box KUnit suite of the PCI P2PDMA API: a differential oracle.
 *
 * Unlike the other suites in this directory, which the core includes to
 * reach its static functions, this one is an object of its own and calls
 * only what include/linux/pci-p2pdma.h and include/linux/dma-map-ops.h
 * export. The same object therefore builds and runs against any
 * implementation of that API: "make test-upstream" runs it against ours
 * and against the kernel's own (6.12's or 7.3's), and prints both results
 * side by side.
 *
 * The expected values come from the contract (the kernel-doc of the
 * exported calls, enum pci_p2pdma_map_type, the PCIe specification), not
 * from either implementation. Where the contract leaves a value open, the
 * case logs what it observed ("observed: ...") and checks only what must
 * hold anyway.
 *
 * Every case builds the same fake hierarchy (fake-pci.h) from scratch, so
 * that no route one case computed can be remembered by the next:
 *
 *   7e57:00, a host bridge of no known vendor
 *     root port 1 - switch: DSP0 - A
 *                           DSP1 - B
 *                           DSP2 - F0, F1 (one multi-function device)
 *                           DSP3 - C
 *     root port 2 - D
 *   7e57:80, an Intel host bridge (8086:2020)
 *     root port - K1
 *     root port - K2
 *
 * The downstream ports and F0 have an ACS capability, all controls off. Every
 * endpoint has a 2 MiB 64-bit BAR 0 in a range of physical address space
 * that the suite reserves above 4 GiB, so that pci_p2pdma_add_resource()
 * can create ZONE_DEVICE pages for it. Nothing ever reads or writes that
 * memory: the suite only allocates it and computes addresses.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/ioport.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>

#include "fake-pci.h"
#include "map-page.h"

#ifdef CONFIG_X86
#include <linux/processor.h>

/* AMD Zen (family 17h and later) routes P2P through any host bridge. */
static bool bb_cpu_routes_p2p(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_AMD &&
	       boot_cpu_data.x86 >= 0x17;
}
#else
static bool bb_cpu_routes_p2p(void)
{
	return false;
}
#endif

#define BB_BAR_SIZE	SZ_2M
#define BB_WINDOW	SZ_128M

/* The endpoints first, then the ports above them. */
enum bb_node {
	A, B, F0, F1, C, D, K1, K2, BB_EPS,
	RP0 = BB_EPS, USP, DSP0, DSP1, DSP2, DSP3, RP1, RP2, RP3, BB_FNS
};

static const char * const bb_names[BB_EPS] = {
	"A", "B", "F0", "F1", "C", "D", "K1", "K2",
};

static struct fake_pci *bb_fp;
static struct fake_fn *bb_ep[BB_FNS];
static void *bb_grp[BB_EPS];

static struct pci_dev *bb_dev(enum bb_node n)
{
	return bb_ep[n]->pdev;
}

static struct device *bb_client(enum bb_node n)
{
	return &bb_ep[n]->pdev->dev;
}

static const struct fake_line bb_topology[] = {
	FAKE_HOST_LINE(0x00, FAKE_VENDOR, 0x0001, PCI_CLASS_BRIDGE_HOST << 8),
	FAKE_RP_LINE(RP0),
	FAKE_SWITCH_LINE(USP, RP0, 4),
	FAKE_ACS_LINE(DSP0),
	FAKE_ACS_LINE(DSP1),
	FAKE_ACS_LINE(DSP2),
	FAKE_ACS_LINE(DSP3),
	FAKE_EP_LINE(A, DSP0, 1),
	FAKE_EP_LINE(B, DSP1, 1),
	FAKE_EP_LINE(F0, DSP2, 2),
	/* Controls off: bb_route_self_acs_redirect() turns one on. */
	FAKE_ACS_LINE(F0),
	FAKE_EP_LINE(C, DSP3, 1),
	FAKE_RP_LINE(RP1),
	FAKE_EP_LINE(D, RP1, 1),
	FAKE_HOST_LINE(0x80, PCI_VENDOR_ID_INTEL, 0x2020,
		       PCI_CLASS_BRIDGE_HOST << 8),
	FAKE_RP_LINE(RP2),
	FAKE_EP_LINE(K1, RP2, 1),
	FAKE_RP_LINE(RP3),
	FAKE_EP_LINE(K2, RP3, 1),
	/* Each endpoint's BAR 0, in the order of enum bb_node. */
	FAKE_BAR64_LINE(A, 0 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(B, 1 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(F0, 2 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(F1, 3 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(C, 4 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(D, 5 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(K1, 6 * BB_BAR_SIZE, BB_BAR_SIZE),
	FAKE_BAR64_LINE(K2, 7 * BB_BAR_SIZE, BB_BAR_SIZE),
};

static void bb_exit(struct kunit *test)
{
	int i;

	/*
	 * No driver is bound to the fake functions, so what
	 * pci_p2pdma_add_resource() registered with devres would otherwise
	 * be released only when the last reference is dropped, after the
	 * device is gone from sysfs. Release it while the device is live,
	 * as an unbind would.
	 */
	for (i = BB_EPS - 1; i >= 0; i--) {
		if (bb_grp[i])
			devres_release_group(bb_client(i), bb_grp[i]);
		bb_grp[i] = NULL;
	}
	fake_pci_destroy(bb_fp);
	bb_fp = NULL;
	memset(bb_ep, 0, sizeof(bb_ep));
}

static int bb_init(struct kunit *test)
{
	int i, ret;

	ret = fake_pci_table(&bb_fp, bb_topology, ARRAY_SIZE(bb_topology),
			     bb_ep, BB_WINDOW, FAKE_BUS_IS_CPU);
	for (i = 0; !ret && i < BB_EPS; i++) {
		bb_grp[i] = devres_open_group(bb_client(i), NULL, GFP_KERNEL);
		if (!bb_grp[i])
			ret = -ENOMEM;
	}
	if (ret)
		bb_exit(test);
	return ret;
}

/* Register all of @n's BAR 0 as P2P memory, and publish it if @publish. */
static void bb_provide(struct kunit *test, enum bb_node n, bool publish)
{
	KUNIT_ASSERT_EQ_MSG(test, pci_p2pdma_add_resource(bb_dev(n), 0, 0, 0),
			    0, "add_resource(%s)", bb_names[n]);
	if (publish)
		pci_p2pmem_publish(bb_dev(n), true);
}

static int bb_dist(enum bb_node provider, enum bb_node client)
{
	return pci_p2pdma_distance(bb_dev(provider), bb_client(client), false);
}

/*
 * Map one page of @provider's P2P memory for @client as the DMA mapping
 * code does (map-page.h). When the route is a bus address, check the
 * address @client is given.
 */
static enum pci_p2pdma_map_type bb_map(struct kunit *test,
				       enum bb_node provider,
				       struct device *client)
{
	struct pci_dev *p = bb_dev(provider);
	enum pci_p2pdma_map_type type;
	dma_addr_t dma = DMA_MAPPING_ERROR;
	void *addr;

	addr = pci_alloc_p2pmem(p, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, addr);
	type = p2pt_map_page(client, virt_to_page(addr), offset_in_page(addr),
			     PAGE_SIZE, &dma);
	if (type == PCI_P2PDMA_MAP_BUS_ADDR)
		KUNIT_EXPECT_EQ(test, dma,
				(dma_addr_t)pci_p2pmem_virt_to_bus(p, addr));
	else
		KUNIT_EXPECT_EQ(test, dma, DMA_MAPPING_ERROR);
	pci_free_p2pmem(p, addr, PAGE_SIZE);
	return type;
}

/* ------------------------------------------------------------------ */
/* Providers                                                           */
/* ------------------------------------------------------------------ */

/*
 * Is @provider's memory what an orchestrator finds for A, a client below
 * the same switch? That is what publishing it means (pci_p2pmem_publish()),
 * asked through the orchestrator's call: 7.3's API has no pci_has_p2pmem().
 */
static bool bb_found_for_a(struct pci_dev *provider)
{
	struct pci_dev *found = pci_p2pmem_find(bb_client(A));

	pci_dev_put(found);
	return found && found == provider;
}

static void bb_add_resource_publish(struct kunit *test)
{
	struct pci_dev *b = bb_dev(B);

	KUNIT_EXPECT_FALSE(test, bb_found_for_a(b));
	KUNIT_EXPECT_EQ(test, pci_p2pdma_add_resource(b, 0, 0, 0), 0);
	/* Registered, but not published yet. */
	KUNIT_EXPECT_FALSE(test, bb_found_for_a(b));
	pci_p2pmem_publish(b, true);
	KUNIT_EXPECT_TRUE(test, bb_found_for_a(b));
	pci_p2pmem_publish(b, false);
	KUNIT_EXPECT_FALSE(test, bb_found_for_a(b));
	/* Publishing what is not a provider changes nothing. */
	pci_p2pmem_publish(bb_dev(C), true);
	KUNIT_EXPECT_FALSE(test, bb_found_for_a(bb_dev(C)));
}

/* Invalid BAR numbers and ranges: refused; the exact errno is logged. */
static void bb_add_resource_invalid(struct kunit *test)
{
	struct pci_dev *c = bb_dev(C);
	int no_bar, too_big, offset_end;

	no_bar = pci_p2pdma_add_resource(c, 2, 0, 0);
	too_big = pci_p2pdma_add_resource(c, 0, 2 * BB_BAR_SIZE, 0);
	offset_end = pci_p2pdma_add_resource(c, 0, 0, BB_BAR_SIZE);
	kunit_info(test, "observed: BAR without memory %d, size > BAR %d, offset = BAR size %d\n",
		   no_bar, too_big, offset_end);
	KUNIT_EXPECT_LT(test, no_bar, 0);
	KUNIT_EXPECT_LT(test, too_big, 0);
	KUNIT_EXPECT_LT(test, offset_end, 0);
	pci_p2pmem_publish(c, true);
	KUNIT_EXPECT_FALSE(test, bb_found_for_a(c));
}

/* ------------------------------------------------------------------ */
/* Routes and distances                                                 */
/* ------------------------------------------------------------------ */

/* A provider to itself: bus address, distance 0. */
static void bb_route_self(struct kunit *test)
{
	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, bb_dist(A, A), 0);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(A)),
			PCI_P2PDMA_MAP_BUS_ADDR);
}

/*
 * A function whose own ACS Control redirects peer requests, reaching its
 * own memory: that request never leaves the function (PCIe r6.0 sec
 * 6.12). The contract leaves the answer open: 6.12 refuses the route,
 * ours gives distance 0 and bus addresses (p2pdma.rst, "Differences from
 * Linux 6.12"; found by the route fuzzing). Either way the distance and
 * the map type agree with each other.
 */
static void bb_route_self_acs_redirect(struct kunit *test)
{
	enum pci_p2pdma_map_type map;
	bool consistent;
	int dist;

	bb_provide(test, F0, false);
	fake_set_acs_ctrl(bb_ep[F0], PCI_ACS_RR);
	dist = bb_dist(F0, F0);
	map = bb_map(test, F0, bb_client(F0));
	kunit_info(test, "observed: own memory, own ACS P2P Request Redirect on: distance %d, map type %d\n",
		   dist, map);
	consistent = (dist == 0 && map == PCI_P2PDMA_MAP_BUS_ADDR) ||
		     (dist < 0 && map == PCI_P2PDMA_MAP_NOT_SUPPORTED);
	KUNIT_EXPECT_TRUE(test, consistent);
	/* Its sibling is redirected all the same. */
	KUNIT_EXPECT_NE(test, bb_map(test, F0, bb_client(F1)),
			PCI_P2PDMA_MAP_BUS_ADDR);
}

/* Two functions of one device (no ACS): bus address, distance 2. */
static void bb_route_multifunction(struct kunit *test)
{
	bb_provide(test, F0, false);
	KUNIT_EXPECT_EQ(test, bb_dist(F0, F1), 2);
	KUNIT_EXPECT_EQ(test, bb_map(test, F0, bb_client(F1)),
			PCI_P2PDMA_MAP_BUS_ADDR);
}

/* Endpoints below sibling downstream ports of one switch: distance 4. */
static void bb_route_switch(struct kunit *test)
{
	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, bb_dist(A, B), 4);
	KUNIT_EXPECT_EQ(test, bb_dist(A, C), 4);
	KUNIT_EXPECT_EQ(test, bb_dist(A, F1), 4);
}

/*
 * Below two root ports of a host bridge that is not known to route P2P,
 * on a CPU that is not AMD Zen: refused, in both directions.
 */
static void bb_route_unknown_host_bridge(struct kunit *test)
{
	if (bb_cpu_routes_p2p())
		kunit_skip(test, "AMD Zen CPU: routes through any host bridge");
	bb_provide(test, A, false);
	bb_provide(test, D, false);
	KUNIT_EXPECT_EQ(test, bb_dist(A, D), -1);
	KUNIT_EXPECT_EQ(test, bb_dist(D, A), -1);
	KUNIT_EXPECT_EQ(test, bb_dist(D, B), -1);
}

/*
 * ACS P2P Request Redirect on the client's downstream port sends its
 * requests up to the (unknown) host bridge: refused. Paths that do not
 * cross that port keep their bus address route.
 */
static void bb_route_acs_rr_client_port(struct kunit *test)
{
	bb_provide(test, A, false);
	fake_set_acs_ctrl(bb_ep[DSP1], PCI_ACS_RR);
	KUNIT_EXPECT_EQ(test, bb_dist(A, B), -1);
	KUNIT_EXPECT_EQ(test, bb_dist(A, C), 4);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(B)),
			PCI_P2PDMA_MAP_NOT_SUPPORTED);
}

/* The same with Request Redirect on the provider's downstream port. */
static void bb_route_acs_rr_provider_port(struct kunit *test)
{
	bb_provide(test, A, false);
	fake_set_acs_ctrl(bb_ep[DSP0], PCI_ACS_RR);
	KUNIT_EXPECT_EQ(test, bb_dist(A, B), -1);
	KUNIT_EXPECT_EQ(test, bb_dist(A, C), -1);
}

/*
 * Two root ports of a real host bridge's ID: whether it forwards P2P is
 * the implementation's list, so only what must hold either way is
 * checked: never a bus address, and a distance exactly when the map type
 * is "through the host bridge".
 */
static void bb_route_known_host_bridge(struct kunit *test)
{
	enum pci_p2pdma_map_type type;
	int dist;

	bb_provide(test, K1, false);
	dist = bb_dist(K1, K2);
	type = bb_map(test, K1, bb_client(K2));
	kunit_info(test, "observed: 8086:2020 root port to root port: distance %d, map type %d\n",
		   dist, type);
	KUNIT_EXPECT_NE(test, type, PCI_P2PDMA_MAP_BUS_ADDR);
	KUNIT_EXPECT_NE(test, type, PCI_P2PDMA_MAP_UNKNOWN);
	KUNIT_EXPECT_EQ(test, dist >= 0,
			type == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE);
}

static void bb_child_release(struct device *dev)
{
}

/*
 * A client is a PCI function or a device below one (what it maps for is
 * that function); anything else is not a PCI client at all.
 */
static void bb_route_non_pci_clients(struct kunit *test)
{
	struct device *np = kunit_device_register(test, "p2pdma-bb-np");
	struct device *child;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, np);
	child = kunit_kzalloc(test, sizeof(*child), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, child);
	device_initialize(child);
	child->release = bb_child_release;
	child->parent = bb_client(B);
	KUNIT_ASSERT_EQ(test, dev_set_name(child, "p2pdma-bb-child"), 0);

	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(bb_dev(A), np, false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance(bb_dev(A), child, false), 4);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, np),
			PCI_P2PDMA_MAP_NOT_SUPPORTED);
	put_device(child);
}

/* Several clients: the sum of distances, -1 if any one is unreachable. */
static void bb_distance_many(struct kunit *test)
{
	struct device *two[] = { bb_client(B), bb_client(C) };
	struct device *mixed[] = { bb_client(B), bb_client(D), bb_client(C) };
	struct device *with_self[] = { bb_client(A), bb_client(B) };
	struct device *none[] = { bb_client(B) };
	int zero;

	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(bb_dev(A), two, 2,
						       false), 8);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(bb_dev(A), mixed, 3,
						       false), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(bb_dev(A), mixed, 3,
						       true), -1);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_distance_many(bb_dev(A), with_self,
						       2, false), 4);
	zero = pci_p2pdma_distance_many(bb_dev(A), none, 0, false);
	kunit_info(test, "observed: no clients: %d\n", zero);
}

/* ------------------------------------------------------------------ */
/* Finding a provider                                                  */
/* ------------------------------------------------------------------ */

static void bb_expect_found(struct kunit *test, struct device **clients,
			    int n, enum bb_node want)
{
	struct pci_dev *got = pci_p2pmem_find_many(clients, n);

	if (want == BB_EPS)
		KUNIT_EXPECT_NULL(test, got);
	else
		KUNIT_EXPECT_PTR_EQ(test, got, bb_dev(want));
	pci_dev_put(got);
}

/* The closest published provider wins. */
static void bb_find_closest(struct kunit *test)
{
	struct device *f0[] = { bb_client(F0) };

	bb_provide(test, A, true);	/* distance 4 */
	bb_provide(test, F1, true);	/* distance 2 */
	bb_expect_found(test, f0, 1, F1);
}

/* A provider that has not published its memory is never chosen. */
static void bb_find_unpublished_ignored(struct kunit *test)
{
	struct device *f0[] = { bb_client(F0) };

	bb_provide(test, A, true);
	bb_provide(test, F1, false);
	bb_expect_found(test, f0, 1, A);
}

/* No provider every client reaches: NULL. */
static void bb_find_none(struct kunit *test)
{
	struct device *d[] = { bb_client(D) };
	struct device *bd[] = { bb_client(B), bb_client(D) };
	struct device *b[] = { bb_client(B) };

	bb_expect_found(test, b, 1, BB_EPS);	/* no provider at all */
	bb_provide(test, A, true);
	bb_expect_found(test, d, 1, BB_EPS);
	bb_expect_found(test, bd, 2, BB_EPS);
	bb_expect_found(test, b, 1, A);
}

/* ------------------------------------------------------------------ */
/* configfs helpers                                                    */
/* ------------------------------------------------------------------ */

static void bb_expect_store(struct kunit *test, const char *page, int ret,
			    bool use, struct pci_dev *want)
{
	struct pci_dev *p2p_dev = NULL;
	bool use_p2pdma = false;
	int got;

	got = pci_p2pdma_enable_store(page, &p2p_dev, &use_p2pdma);
	KUNIT_EXPECT_EQ_MSG(test, got, ret, "store \"%s\"", page);
	/*
	 * Only a success hands the caller a reference (nvmet keeps it as
	 * ns->p2p_dev); after an error the caller must not use p2p_dev.
	 */
	if (!got) {
		if (!ret) {
			KUNIT_EXPECT_EQ_MSG(test, use_p2pdma, use,
					    "store \"%s\"", page);
			KUNIT_EXPECT_PTR_EQ_MSG(test, p2p_dev, want,
						"store \"%s\"", page);
		}
		pci_dev_put(p2p_dev);
	}
}

/* Booleans (kstrtobool), device names, and anything else: -ENODEV. */
static void bb_enable_store(struct kunit *test)
{
	char name[32];

	bb_provide(test, A, true);
	bb_provide(test, C, false);

	bb_expect_store(test, "0", 0, false, NULL);
	bb_expect_store(test, "1", 0, true, NULL);
	bb_expect_store(test, "1\n", 0, true, NULL);
	bb_expect_store(test, "yes", 0, true, NULL);
	bb_expect_store(test, "Y", 0, true, NULL);
	bb_expect_store(test, "no", 0, false, NULL);
	bb_expect_store(test, "on", 0, true, NULL);
	bb_expect_store(test, "off", 0, false, NULL);
	bb_expect_store(test, "off\n", 0, false, NULL);
	bb_expect_store(test, "garbage", -ENODEV, false, NULL);
	bb_expect_store(test, "", -ENODEV, false, NULL);
	bb_expect_store(test, "\n", -ENODEV, false, NULL);

	/* A device with published P2P memory. */
	bb_expect_store(test, pci_name(bb_dev(A)), 0, true, bb_dev(A));
	snprintf(name, sizeof(name), "%s\n", pci_name(bb_dev(A)));
	bb_expect_store(test, name, 0, true, bb_dev(A));
	/* Devices without published P2P memory, and one that is not. */
	bb_expect_store(test, pci_name(bb_dev(C)), -ENODEV, false, NULL);
	bb_expect_store(test, pci_name(bb_dev(B)), -ENODEV, false, NULL);
	bb_expect_store(test, "7e57:ff:1f.7", -ENODEV, false, NULL);
}

/* What pci_p2pdma_enable_store() does with one input that names no device. */
struct bb_store {
	const char *page;
	int ret;
	bool use;		/* when ret == 0 */
};

#define BB_TRUE(s)	{ s, 0, true }
#define BB_FALSE(s)	{ s, 0, false }
#define BB_REFUSED(s)	{ s, -ENODEV, false }

/*
 * Inputs that name no device, as Linux 6.12 parses them (found with make
 * test-upstream): kstrtobool() on the first byte, or two for "on"/"of",
 * except that a leading digit counts only when a control character
 * follows it; everything else is -ENODEV.
 */
static const struct bb_store bb_stores[] = {
	BB_TRUE("1"), BB_TRUE("1\n"), BB_TRUE("1\t"), BB_TRUE("1\r"),
	BB_TRUE("1\r\n"), BB_TRUE("1\x01"), BB_TRUE("1\x7f"),
	BB_TRUE("1\n0"), BB_TRUE("1\n\n"),
	BB_TRUE("y"), BB_TRUE("Y"), BB_TRUE("yes"), BB_TRUE("yes\n"),
	BB_TRUE("yess"), BB_TRUE("y:"), BB_TRUE("y\t"), BB_TRUE("t"),
	BB_TRUE("true"), BB_TRUE("t1"), BB_TRUE("on"), BB_TRUE("oN"),
	BB_TRUE("on1"),
	BB_FALSE("0"), BB_FALSE("0\n"), BB_FALSE("0\x1f"), BB_FALSE("0\n1"),
	BB_FALSE("n"), BB_FALSE("no"), BB_FALSE("nope"), BB_FALSE("n0"),
	BB_FALSE("f"), BB_FALSE("false"), BB_FALSE("f0"), BB_FALSE("ff"),
	BB_FALSE("fa"), BB_FALSE("face"), BB_FALSE("off"), BB_FALSE("of"),
	BB_FALSE("OFF"), BB_FALSE("off1"), BB_FALSE("ofx"),
	BB_FALSE("ffff:ff:1f.7"),
	BB_REFUSED("00"), BB_REFUSED("01"), BB_REFUSED("10"),
	BB_REFUSED("11"), BB_REFUSED("1 "), BB_REFUSED(" 1"),
	BB_REFUSED("2"), BB_REFUSED("9"), BB_REFUSED("0x1"),
	BB_REFUSED("0."), BB_REFUSED("1:"), BB_REFUSED("1\x81"),
	BB_REFUSED("o"), BB_REFUSED("o1"), BB_REFUSED("x"), BB_REFUSED("a"),
	BB_REFUSED(""), BB_REFUSED("\n"), BB_REFUSED("banana"),
	BB_REFUSED("\x81"), BB_REFUSED("0000:ff:1f.7"),
	BB_REFUSED("9999:ff:1f.7"), BB_REFUSED("00:00.0"),
};

/*
 * Store @page once with *use_p2pdma false and once with it true, *p2p_dev
 * at a sentinel: expect @ret, and on success @use with *p2p_dev @want
 * (the sentinel: untouched); on error both outputs untouched.
 */
static void bb_expect_rule(struct kunit *test, const char *page, int ret,
			   bool use, struct pci_dev *want)
{
	struct pci_dev *sentinel = ERR_PTR(-EFAULT), *p2p_dev;
	bool use_p2pdma;
	int i, got;

	for (i = 0; i < 2; i++) {
		p2p_dev = sentinel;
		use_p2pdma = i;
		got = pci_p2pdma_enable_store(page, &p2p_dev, &use_p2pdma);
		KUNIT_EXPECT_EQ_MSG(test, got, ret, "store \"%.16s\"", page);
		KUNIT_EXPECT_EQ_MSG(test, use_p2pdma, ret ? (bool)i : use,
				    "store \"%.16s\", use %d before", page, i);
		KUNIT_EXPECT_PTR_EQ_MSG(test, p2p_dev, ret ? sentinel : want,
					"store \"%.16s\"", page);
		if (!got && !IS_ERR_OR_NULL(p2p_dev))
			pci_dev_put(p2p_dev);
	}
}

/* Which strings are booleans, and what a device name may carry. */
static void bb_enable_store_rule(struct kunit *test)
{
	static const char * const bad_names[] = {
		"%s ", "%s\t", "%s\n\n", " %s", "%s\r\n",
	};
	struct pci_dev *sentinel = ERR_PTR(-EFAULT);
	char name[32], *page;
	int i;

	for (i = 0; i < ARRAY_SIZE(bb_stores); i++)
		bb_expect_rule(test, bb_stores[i].page, bb_stores[i].ret,
			       bb_stores[i].use, sentinel);

	/* Any length: the first byte decides. */
	page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	memset(page, 'y', 300);
	bb_expect_rule(test, page, 0, true, sentinel);
	memset(page, '1', 300);
	bb_expect_rule(test, page, -ENODEV, false, sentinel);

	/* A published provider's name, with one trailing newline at most. */
	bb_provide(test, A, true);
	bb_expect_rule(test, pci_name(bb_dev(A)), 0, true, bb_dev(A));
	snprintf(name, sizeof(name), "%s\n", pci_name(bb_dev(A)));
	bb_expect_rule(test, name, 0, true, bb_dev(A));
	for (i = 0; i < ARRAY_SIZE(bad_names); i++) {
		snprintf(name, sizeof(name), bad_names[i], pci_name(bb_dev(A)));
		bb_expect_rule(test, name, -ENODEV, false, sentinel);
	}
}

/*
 * A device without published memory: -ENODEV. What the error leaves in
 * *p2p_dev and *use_p2pdma differs on purpose (see the guide), so it is
 * logged, not checked.
 */
static void bb_enable_store_unpublished(struct kunit *test)
{
	struct pci_dev *p2p_dev = NULL;
	bool use_p2pdma = false;
	int ret;

	bb_provide(test, C, false);
	ret = pci_p2pdma_enable_store(pci_name(bb_dev(C)), &p2p_dev,
				      &use_p2pdma);
	KUNIT_EXPECT_EQ(test, ret, -ENODEV);
	kunit_info(test, "observed: a device without published memory: p2p_dev %s, use %d after the error\n",
		   p2p_dev ? "set" : "NULL", use_p2pdma);
	/* A PCI device that has no P2P memory, or no device at all. */
	KUNIT_EXPECT_EQ(test, pci_p2pdma_enable_store("0000:00:00.0",
						      &p2p_dev, &use_p2pdma),
			-ENODEV);
}

static void bb_enable_show(struct kunit *test)
{
	char *page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	char want[32];
	ssize_t len;

	KUNIT_ASSERT_NOT_NULL(test, page);
	len = pci_p2pdma_enable_show(page, NULL, false);
	KUNIT_EXPECT_STREQ(test, page, "0\n");
	KUNIT_EXPECT_EQ(test, len, 2);
	len = pci_p2pdma_enable_show(page, NULL, true);
	KUNIT_EXPECT_STREQ(test, page, "1\n");
	KUNIT_EXPECT_EQ(test, len, 2);
	len = pci_p2pdma_enable_show(page, bb_dev(A), true);
	snprintf(want, sizeof(want), "%s\n", pci_name(bb_dev(A)));
	KUNIT_EXPECT_STREQ(test, page, want);
	KUNIT_EXPECT_EQ(test, len, strlen(want));
	len = pci_p2pdma_enable_show(page, bb_dev(A), false);
	KUNIT_EXPECT_STREQ(test, page, "0\n");
}

/* ------------------------------------------------------------------ */
/* DMA mapping                                                         */
/* ------------------------------------------------------------------ */

/* A bus address route: the segment gets the PCI bus address. */
static void bb_map_segment_bus_addr(struct kunit *test)
{
	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, bb_dist(A, B), 4);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(B)),
			PCI_P2PDMA_MAP_BUS_ADDR);
}

/* The same for a client no orchestrator asked about before. */
static void bb_map_segment_first_use(struct kunit *test)
{
	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(C)),
			PCI_P2PDMA_MAP_BUS_ADDR);
}

/* Through a host bridge known or not: see bb_route_known_host_bridge. */
static void bb_map_segment_host_bridge(struct kunit *test)
{
	enum pci_p2pdma_map_type type;

	bb_provide(test, K2, false);
	type = bb_map(test, K2, bb_client(K1));
	kunit_info(test, "observed: map type %d\n", type);
	KUNIT_EXPECT_TRUE(test, type == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE ||
			  type == PCI_P2PDMA_MAP_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, type == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE,
			bb_dist(K2, K1) >= 0);
}

/* Through a host bridge not known to route P2P: not supported. */
static void bb_map_segment_not_supported(struct kunit *test)
{
	if (bb_cpu_routes_p2p())
		kunit_skip(test, "AMD Zen CPU: routes through any host bridge");
	bb_provide(test, A, false);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(D)),
			PCI_P2PDMA_MAP_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, bb_dist(A, D), -1);
	KUNIT_EXPECT_EQ(test, bb_map(test, A, bb_client(D)),
			PCI_P2PDMA_MAP_NOT_SUPPORTED);
}

/* ------------------------------------------------------------------ */
/* The pool                                                            */
/* ------------------------------------------------------------------ */

/* The bus address of an allocation: BAR 0's plus its offset in the BAR. */
static void bb_virt_to_bus(struct kunit *test)
{
	struct pci_dev *a = bb_dev(A);
	pci_bus_addr_t bus;
	phys_addr_t phys;
	void *one, *two;

	bb_provide(test, A, false);
	one = pci_alloc_p2pmem(a, PAGE_SIZE);
	two = pci_alloc_p2pmem(a, 4 * PAGE_SIZE);
	KUNIT_EXPECT_NOT_NULL(test, one);
	KUNIT_EXPECT_NOT_NULL(test, two);
	if (one && two) {
		KUNIT_EXPECT_PTR_NE(test, one, two);
		phys = page_to_phys(virt_to_page(two)) + offset_in_page(two);
		KUNIT_EXPECT_GE(test, phys, pci_resource_start(a, 0));
		KUNIT_EXPECT_LT(test, phys, pci_resource_end(a, 0));
		bus = pci_p2pmem_virt_to_bus(a, two);
		KUNIT_EXPECT_EQ(test, bus, pci_bus_address(a, 0) +
				(phys - pci_resource_start(a, 0)));
		KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(a, two + 100),
				bus + 100);
	}
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(a, NULL), 0);
	/* Not a provider. */
	KUNIT_EXPECT_EQ(test, pci_p2pmem_virt_to_bus(bb_dev(B), one), 0);
	if (one)
		pci_free_p2pmem(a, one, PAGE_SIZE);
	if (two)
		pci_free_p2pmem(a, two, 4 * PAGE_SIZE);
}

static void bb_alloc(struct kunit *test)
{
	struct pci_dev *a = bb_dev(A);
	struct scatterlist *sgl;
	unsigned int nents = 0;
	pci_bus_addr_t bus;

	bb_provide(test, A, false);
	/* More than the pool, and from what is not a provider: nothing. */
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(a, 2 * BB_BAR_SIZE));
	KUNIT_EXPECT_NULL(test, pci_alloc_p2pmem(bb_dev(B), PAGE_SIZE));

	sgl = pci_p2pmem_alloc_sgl(a, &nents, SZ_64K);
	KUNIT_ASSERT_NOT_NULL(test, sgl);
	KUNIT_EXPECT_EQ(test, nents, 1);
	KUNIT_EXPECT_EQ(test, sgl->length, SZ_64K);
	KUNIT_EXPECT_TRUE(test, sg_is_last(sgl));
	bus = pci_p2pmem_virt_to_bus(a, sg_virt(sgl));
	KUNIT_EXPECT_GE(test, bus, pci_bus_address(a, 0));
	KUNIT_EXPECT_LE(test, bus + SZ_64K, pci_bus_address(a, 0) +
			BB_BAR_SIZE);
	pci_p2pmem_free_sgl(a, sgl);

	/* The whole pool, once it is free again. */
	sgl = pci_p2pmem_alloc_sgl(a, &nents, BB_BAR_SIZE);
	KUNIT_EXPECT_NOT_NULL(test, sgl);
	if (sgl)
		pci_p2pmem_free_sgl(a, sgl);
}

/*
 * A memory BAR as a provider without pages (pcim_p2pdma_init(),
 * pcim_p2pdma_provider(): what vfio-pci exports as an MMIO dma-buf): owned
 * by its function, the bus offset of its window (none here), a provider
 * for BAR 0 only (BAR 1 is the upper half of the 64-bit BAR 0);
 * pci_p2pdma_map_type() gives the routes' map types: a bus address below
 * the switch, to the function itself, refused through a host bridge of no
 * known vendor. What the
 * Intel host bridge's two root ports get is the implementation's list:
 * logged, and never a bus address.
 */
static void bb_provider_per_bar(struct kunit *test)
{
	struct pci_dev *b = bb_dev(B), *k1 = bb_dev(K1);
	enum pci_p2pdma_map_type across;
	struct p2pdma_provider *mem;

	/*
	 * Only after pcim_p2pdma_init(): 7.3 warns when asked for the
	 * provider of a function that was not initialised.
	 */
	KUNIT_ASSERT_EQ(test, pcim_p2pdma_init(b), 0);
	mem = pcim_p2pdma_provider(b, 0);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_EXPECT_PTR_EQ(test, mem->owner, &b->dev);
	KUNIT_EXPECT_EQ(test, mem->bus_offset, (u64)0);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_bus_addr_map(mem, pci_resource_start(b, 0)),
			(dma_addr_t)pci_bus_address(b, 0));
	KUNIT_EXPECT_NULL(test, pcim_p2pdma_provider(b, 1));
	/* A second call changes nothing. */
	KUNIT_EXPECT_EQ(test, pcim_p2pdma_init(b), 0);
	KUNIT_EXPECT_PTR_EQ(test, pcim_p2pdma_provider(b, 0), mem);

	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, bb_client(A)),
			PCI_P2PDMA_MAP_BUS_ADDR);
	KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, bb_client(B)),
			PCI_P2PDMA_MAP_BUS_ADDR);
	if (!bb_cpu_routes_p2p())
		KUNIT_EXPECT_EQ(test, pci_p2pdma_map_type(mem, bb_client(D)),
				PCI_P2PDMA_MAP_NOT_SUPPORTED);

	KUNIT_ASSERT_EQ(test, pcim_p2pdma_init(k1), 0);
	mem = pcim_p2pdma_provider(k1, 0);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	across = pci_p2pdma_map_type(mem, bb_client(K2));
	kunit_info(test, "observed: provider of a BAR, 8086:2020 root port to root port: map type %d\n",
		   across);
	KUNIT_EXPECT_NE(test, across, PCI_P2PDMA_MAP_BUS_ADDR);
	KUNIT_EXPECT_NE(test, across, PCI_P2PDMA_MAP_UNKNOWN);
}

static struct kunit_case bb_cases[] = {
	KUNIT_CASE(bb_add_resource_publish),
	KUNIT_CASE(bb_add_resource_invalid),
	KUNIT_CASE(bb_route_self),
	KUNIT_CASE(bb_route_multifunction),
	KUNIT_CASE(bb_route_self_acs_redirect),
	KUNIT_CASE(bb_route_switch),
	KUNIT_CASE(bb_route_unknown_host_bridge),
	KUNIT_CASE(bb_route_acs_rr_client_port),
	KUNIT_CASE(bb_route_acs_rr_provider_port),
	KUNIT_CASE(bb_route_known_host_bridge),
	KUNIT_CASE(bb_route_non_pci_clients),
	KUNIT_CASE(bb_distance_many),
	KUNIT_CASE(bb_find_closest),
	KUNIT_CASE(bb_find_unpublished_ignored),
	KUNIT_CASE(bb_find_none),
	KUNIT_CASE(bb_enable_store),
	KUNIT_CASE(bb_enable_store_rule),
	KUNIT_CASE(bb_enable_store_unpublished),
	KUNIT_CASE(bb_enable_show),
	KUNIT_CASE(bb_map_segment_bus_addr),
	KUNIT_CASE(bb_map_segment_first_use),
	KUNIT_CASE(bb_map_segment_host_bridge),
	KUNIT_CASE(bb_map_segment_not_supported),
	KUNIT_CASE(bb_virt_to_bus),
	KUNIT_CASE(bb_alloc),
	KUNIT_CASE(bb_provider_per_bar),
	{}
};

static struct kunit_suite bb_suite = {
	.name = "p2pdma_blackbox",
	.init = bb_init,
	.exit = bb_exit,
	.test_cases = bb_cases,
};

kunit_test_suite(bb_suite);
