/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rich fake hierarchy of the route suite (route-kunit.h) and the host
 * bridge policy suite (host-bridge-policy-kunit.h): host bridges known and
 * unknown to route P2P, switches, multi-function devices, SR-IOV, ACS on
 * every bridge; built once per suite, with the per-case reset of ACS,
 * the CPU rule and the policy. Each of the two files that include a
 * suite of those (route.c, host-bridge-policy.c) has its own copy.
 */
#ifndef _P2PDMA_ROUTE_HIERARCHY_H
#define _P2PDMA_ROUTE_HIERARCHY_H

#include "p2pdma-kunit.h"

/* Named functions of the route hierarchy. */
enum rt_node {
	/* host bridge 7e57:00, Intel 0x2020 (routes between root ports) */
	RP1, USP0, DSP0A, DSP0B, DSP0C, DSP0D, EPA, EPB,
	USP1, DSP1A, EPC, USP2, DSP2A, EPD,
	RP2, EPM0, EPM1, EPM2,
	RP3, EPE,
	RP4, PF, VF,
	RP5, USP5, DSP5A, PF5, VF5,
	/* 7e57:40, Intel 0x2020 */
	K2RP, EPK2,
	/* 7e57:80, Intel 0x3c00 (same host bridge only) */
	S1RP1, EPS1, S1RP2, EPS2,
	/* 7e57:90, Intel 0x2f00 (same host bridge only) */
	S2RP, EPS3,
	/* 7e57:a0, host bridge not in the table */
	URP1, EPU1, URP2, UUSP, UDSP1, UDSP2, EPU2, EPU3,
	/* 7e57:c0, nothing at devfn 0 */
	NRP1, EPN1, NRP2, EPN2,
	/* 7e57:e0, Intel 0x2020 at devfn 0 but not of host bridge class */
	CRP1, EPC1, CRP2, EPC2,
	/* 7e57:20, nothing at devfn 0; first an Intel 0x2030 root port */
	SKRP1, EPSK1, SKRP2, EPSK2,
	/* 7e57:30, Intel 0x09a2 of class 0880 (system peripheral) at 00.0 */
	ICRP1, EPI1, ICRP2, EPI2,
	/* 7e57:50, an Intel 0x3c01 root port at 00.0 */
	SBRP1, EPSB1, SBRP2, EPSB2,
	/* 7e57:60, Intel 0x2f01 at 00.0 */
	HWRP1, EPHW1, HWRP2, EPHW2,
	/* 7e57:70, first an Intel 0x2030 integrated endpoint at 01.0 */
	RCIEP, XRP1, EPX1, XRP2, EPX2,
	/* Added upstream after 6.12. 7e57:b0, an Intel DSA (0x0b25) at 00.0 */
	LDRP1, EPL1, LDRP2, EPL2,
	/* 7e57:d0, a Google SoC (1ae0, any device ID) at 00.0 */
	GRP, EPG,
	/* 7e57:f0, a Zhaoxin KX-6000 (1d17:1003, within itself) at 00.0 */
	ZRP1, EPZ1, ZRP2, EPZ2,
	RT_NODES,
	NONE = RT_NODES,
};

static __maybe_unused struct fake_pci *rt_fp;
static __maybe_unused struct fake_fn *rt[RT_NODES];

#define RT_HOST(bus, v, d, c)	FAKE_HOST_LINE(bus, v, d, c)
#define RT_RP(i)		FAKE_RP_LINE(i)
#define RT_SW(i, up, n)		FAKE_SWITCH_LINE(i, up, n)
#define RT_EP(i, up)		FAKE_EP_LINE(i, up, 1)

/* The hierarchy of enum rt_node, host bridge by host bridge. */
static __maybe_unused const struct fake_line rt_topology[] = {
	/* 7e57:00: the main host bridge. */
	RT_HOST(0x00, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	RT_RP(RP1), RT_SW(USP0, RP1, 4), RT_EP(EPA, DSP0A), RT_EP(EPB, DSP0B),
	RT_SW(USP1, DSP0C, 1), RT_EP(EPC, DSP1A),
	RT_SW(USP2, DSP0D, 1), RT_EP(EPD, DSP2A),
	RT_RP(RP2), FAKE_EP_LINE(EPM0, RP2, 3),
	RT_RP(RP3), RT_EP(EPE, RP3),
	RT_RP(RP4), RT_EP(PF, RP4),
	RT_RP(RP5), RT_SW(USP5, RP5, 1), RT_EP(PF5, DSP5A),

	RT_HOST(0x40, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT, HB_CLASS),
	RT_RP(K2RP), RT_EP(EPK2, K2RP),

	RT_HOST(0x80, PCI_VENDOR_ID_INTEL, HB_SAME_ONLY, HB_CLASS),
	RT_RP(S1RP1), RT_EP(EPS1, S1RP1), RT_RP(S1RP2), RT_EP(EPS2, S1RP2),

	RT_HOST(0x90, PCI_VENDOR_ID_INTEL, HB_SAME_ONLY2, HB_CLASS),
	RT_RP(S2RP), RT_EP(EPS3, S2RP),

	RT_HOST(0xa0, FAKE_VENDOR, 0x0001, HB_CLASS),
	RT_RP(URP1), RT_EP(EPU1, URP1),
	RT_RP(URP2), RT_SW(UUSP, URP2, 2), RT_EP(EPU2, UDSP1), RT_EP(EPU3, UDSP2),

	RT_HOST(0xc0, 0, 0, 0),
	RT_RP(NRP1), RT_EP(EPN1, NRP1), RT_RP(NRP2), RT_EP(EPN2, NRP2),

	RT_HOST(0xe0, PCI_VENDOR_ID_INTEL, HB_ANY_ROOT_PORT,
		PCI_CLASS_MEMORY_OTHER << 8),
	RT_RP(CRP1), RT_EP(EPC1, CRP1), RT_RP(CRP2), RT_EP(EPC2, CRP2),

	/*
	 * 7e57:20: the Skylake-SP shape. No function at 00.0; the first
	 * device of the root bus is a root port that names the root complex.
	 */
	RT_HOST(0x20, 0, 0, 0),
	FAKE_RP_ID_LINE(SKRP1, PCI_VENDOR_ID_INTEL, HB_SKYLAKE_RP),
	RT_EP(EPSK1, SKRP1), RT_RP(SKRP2), RT_EP(EPSK2, SKRP2),

	/* 7e57:30: Ice Lake-SP's 00.0 is a system peripheral (0880). */
	RT_HOST(0x30, PCI_VENDOR_ID_INTEL, HB_ICELAKE, PCI_CLASS_SYSTEM_OTHER << 8),
	RT_RP(ICRP1), RT_EP(EPI1, ICRP1), RT_RP(ICRP2), RT_EP(EPI2, ICRP2),

	/* 7e57:50: the root port at 00.0 is the first device. */
	RT_HOST(0x50, 0, 0, 0),
	{ .kind = FAKE_RP00, .id = SBRP1, .vendor = PCI_VENDOR_ID_INTEL,
	  .device = HB_SAME_ONLY_RP },
	RT_EP(EPSB1, SBRP1), RT_RP(SBRP2), RT_EP(EPSB2, SBRP2),

	RT_HOST(0x60, PCI_VENDOR_ID_INTEL, HB_SAME_ONLY_RP2, HB_CLASS),
	RT_RP(HWRP1), RT_EP(EPHW1, HWRP1), RT_RP(HWRP2), RT_EP(EPHW2, HWRP2),

	/*
	 * 7e57:70: the first device is neither at 00.0 nor a root port, so
	 * it does not identify the root complex, known ID or not.
	 */
	RT_HOST(0x70, 0, 0, 0),
	{ .kind = FAKE_RCIEP, .id = RCIEP, .vendor = PCI_VENDOR_ID_INTEL,
	  .device = HB_SKYLAKE_RP, .class = PCI_CLASS_SYSTEM_OTHER << 8 },
	RT_RP(XRP1), RT_EP(EPX1, XRP1), RT_RP(XRP2), RT_EP(EPX2, XRP2),

	/* Host bridges that upstream added to its list after 6.12. */
	RT_HOST(0xb0, PCI_VENDOR_ID_INTEL, 0x0b25, PCI_CLASS_SYSTEM_OTHER << 8),
	RT_RP(LDRP1), RT_EP(EPL1, LDRP1), RT_RP(LDRP2), RT_EP(EPL2, LDRP2),

	RT_HOST(0xd0, 0x1ae0, 0x00e0, HB_CLASS),
	RT_RP(GRP), RT_EP(EPG, GRP),

	RT_HOST(0xf0, PCI_VENDOR_ID_ZHAOXIN, 0x1003, HB_CLASS),
	RT_RP(ZRP1), RT_EP(EPZ1, ZRP1), RT_RP(ZRP2), RT_EP(EPZ2, ZRP2),

	{ .kind = FAKE_VF, .id = VF, .up = PF },
	{ .kind = FAKE_VF, .id = VF5, .up = PF5 },
};

static __maybe_unused void rt_destroy(void)
{
	fake_pci_destroy(rt_fp);
	rt_fp = NULL;
	memset(rt, 0, sizeof(rt));
}

/* Endpoint functions that get an ACS capability of their own. */
static __maybe_unused const enum rt_node rt_acs_endpoints[] = {
	EPM0, EPM1, EPM2, PF, VF, EPU2, EPU3,
};

static __maybe_unused int rt_suite_init(struct kunit_suite *suite)
{
	int i, ret;

	rt_fp = fake_pci_create();
	if (!rt_fp)
		return -ENOMEM;
	ret = fake_build(rt_fp, rt_topology, ARRAY_SIZE(rt_topology), rt);
	for (i = 0; !ret && i < RT_NODES; i++) {
		if (i == VF || i == VF5)
			continue;
		if (!rt[i])
			ret = -ENOMEM;
		else if (rt[i]->bridge)
			fake_add_acs(rt[i]);
	}
	for (i = 0; !ret && i < ARRAY_SIZE(rt_acs_endpoints); i++)
		if (rt[rt_acs_endpoints[i]])
			fake_add_acs(rt[rt_acs_endpoints[i]]);
	if (!ret)
		ret = fake_pci_scan(rt_fp);
	if (ret)
		rt_destroy();
	return ret;
}

static __maybe_unused void rt_suite_exit(struct kunit_suite *suite)
{
	rt_destroy();
}

/*
 * Every case starts with ACS redirect off everywhere and the CPU rule off,
 * whatever CPU the tests run on (set_cpu_rule(), p2pdma-kunit.h).
 */
static __maybe_unused void rt_reset(void)
{
	int i;

	for (i = 0; i < RT_NODES; i++)
		if (rt[i])
			fake_set_acs_ctrl(rt[i], 0);
}

static __maybe_unused int rt_init(struct kunit *test)
{
	rt_reset();
	set_cpu_rule(test, false);
	set_policy(test, "");
	return 0;
}

static __maybe_unused void rt_exit(struct kunit *test)
{
	rt_reset();
}

static __maybe_unused struct pci_dev *rt_dev(struct kunit *test, enum rt_node n)
{
	if (n == VF || n == VF5) {
		if (!IS_ENABLED(CONFIG_PCI_IOV))
			kunit_skip(test, "needs CONFIG_PCI_IOV");
	}
	KUNIT_ASSERT_NOT_NULL(test, rt[n]);
	KUNIT_ASSERT_NOT_NULL(test, rt[n]->pdev);
	return rt[n]->pdev;
}

#endif /* _P2PDMA_ROUTE_HIERARCHY_H */
