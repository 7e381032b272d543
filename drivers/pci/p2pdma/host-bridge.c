// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: host bridges.
 *
 * Owns what is known of each host bridge and whether traffic between two
 * root ports may go up through it. Forwarding peer-to-peer requests between
 * root ports is optional for a root complex (PCIe r6.0 sec 1.3.1), so the
 * built-in policy allows it only for AMD Zen CPUs and for the root
 * complexes in p2p_routing_host_bridges[], identified by a bus notifier
 * that keeps a table per root bus. The administrator's rules
 * (pci_p2pdma.host_bridges=, host-bridge-policy.c) override it per host
 * bridge; this file applies them in p2p_host_bridge_verdict() and warns
 * when one opens a host bridge that the built-in policy does not vouch for.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitfield.h>
#include <linux/notifier.h>
#include <linux/xarray.h>

#include "../pci.h"
#include "p2pdma.h"

/*
 * Root complexes known to forward peer-to-peer requests between their root
 * ports, by the vendor and device ID of the function that identifies them
 * (see p2p_host_bridge_id_dev()): a host bridge, a root port, a system
 * peripheral (Ice Lake-SP and every Xeon since show 8086:09a2 first) or an
 * accelerator that is alone on its root bus. P2P_HB_WITHIN_ITSELF marks
 * the ones that do so only between root ports of the same host bridge,
 * P2P_HB_ANY_DEVICE a vendor all of whose root complexes do.
 *
 * The first block is what Linux 6.12 knows. The entries after it were
 * added upstream later; each names its commit. They are differences from
 * 6.12: 6.12 refuses routes through them that we allow.
 */
VISIBLE_IF_KUNIT const struct p2p_known_host_bridge p2p_routing_host_bridges[] = {
	/* Xeon E5 v1/v2, Core i7: Sandy Bridge-EP */
	{ PCI_VENDOR_ID_INTEL, 0x3c00, P2P_HB_WITHIN_ITSELF },
	{ PCI_VENDOR_ID_INTEL, 0x3c01, P2P_HB_WITHIN_ITSELF },
	/* Xeon E5/E7 v3: Haswell-EP */
	{ PCI_VENDOR_ID_INTEL, 0x2f00, P2P_HB_WITHIN_ITSELF },
	{ PCI_VENDOR_ID_INTEL, 0x2f01, P2P_HB_WITHIN_ITSELF },
	/* Xeon Scalable: Skylake-SP */
	{ PCI_VENDOR_ID_INTEL, 0x2020 }, { PCI_VENDOR_ID_INTEL, 0x2030 },
	{ PCI_VENDOR_ID_INTEL, 0x2031 }, { PCI_VENDOR_ID_INTEL, 0x2032 },
	{ PCI_VENDOR_ID_INTEL, 0x2033 },
	/* Xeon Scalable: Ice Lake-SP and later */
	{ PCI_VENDOR_ID_INTEL, 0x09a2 },

	/*
	 * Google SoCs, every device ID: upstream 70cf146a674c "PCI/P2PDMA:
	 * Add Google SoCs to the P2P DMA host bridge list" (Linux 7.1).
	 */
	{ 0x1ae0, 0, P2P_HB_ANY_DEVICE | P2P_HB_AFTER_612 },
	/*
	 * Intel accelerators first on a root bus of their own: DSA and IAA
	 * of Sapphire Rapids (0b25, 0cfe), DSA of Granite Rapids-D (11fb),
	 * DSA and IAA of Diamond Rapids (1212, 1216), QAT (4940-4948).
	 * Upstream 0ba76b19fd4c "PCI/P2PDMA: Add Intel QAT, DSA, IAA devices
	 * to whitelist" (Linux 7.2; 7.1.3 stable).
	 */
	{ PCI_VENDOR_ID_INTEL, 0x0b25, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x0cfe, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x11fb, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x1212, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x1216, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x4940, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x4942, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x4944, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x4946, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_INTEL, 0x4948, P2P_HB_AFTER_612 },
	/*
	 * Zhaoxin KX-6000, KH-40000, KX-6000G, KX-7000 (within themselves)
	 * and KH-50000: upstream f7c220404700 "PCI/P2PDMA: Add Zhaoxin host
	 * bridges to allowlist" (PCI tree, queued for Linux 7.4).
	 */
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1003, P2P_HB_WITHIN_ITSELF | P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1005, P2P_HB_WITHIN_ITSELF | P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1006, P2P_HB_WITHIN_ITSELF | P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1007, P2P_HB_WITHIN_ITSELF | P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_ZHAOXIN, 0x1008, P2P_HB_AFTER_612 },
	/*
	 * NVIDIA Vera Rubin CPUs: upstream 894a78088fc3 (Linux 7.3-rc1),
	 * device IDs 2f95 to 2f98 as reported to us (issue 35).
	 */
	{ PCI_VENDOR_ID_NVIDIA, 0x2f95, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_NVIDIA, 0x2f96, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_NVIDIA, 0x2f97, P2P_HB_AFTER_612 },
	{ PCI_VENDOR_ID_NVIDIA, 0x2f98, P2P_HB_AFTER_612 },
};

/*
 * AMD Zen (family 17h) and later route P2P between all their root ports
 * and host bridges, whatever the host bridge device IDs say. KUnit tests
 * replace this (a static stub) to test both rules on any CPU.
 */
VISIBLE_IF_KUNIT bool p2p_cpu_routes_p2p(void)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_cpu_routes_p2p);
#ifdef CONFIG_X86
	return boot_cpu_data.x86_vendor == X86_VENDOR_AMD &&
	       boot_cpu_data.x86 >= 0x17;
#else
	return false;
#endif
}

/*
 * What is known of each host bridge, keyed by root bus (p2p_root_bus_key()):
 * the vendor and device ID of the function that identifies it (see
 * p2p_host_bridge_id_dev()) and, if that ID is in p2p_routing_host_bridges[],
 * its index there (P2P_HBE_*). A root bus with no identifying function has
 * no entry. A bus notifier keeps it current from process context, whenever
 * a device appears on or leaves a root bus, so that a route computation,
 * which dma_map_sg() may run in any context, only has to look it up:
 * it takes no sleeping lock, walks no device list and drops no reference.
 */
static DEFINE_XARRAY(p2p_host_bridges);
/*
 * Serialises the updates, so that the last one for a root bus wins, and
 * the checks of p2p_risky_host_bridges.
 */
static DEFINE_MUTEX(p2p_host_bridges_lock);

/*
 * Root buses (p2p_root_bus_key()) whose host bridge an allow rule of
 * pci_p2pdma.host_bridges opens to P2P although the built-in policy would
 * not, and which have been warned about: one warning per host bridge for
 * as long as rules keep allowing it. Under p2p_host_bridges_lock.
 */
static DEFINE_XARRAY(p2p_risky_host_bridges);

#define P2P_HBE_ID		GENMASK(31, 0)	/* vendor << 16 | device */
#define P2P_HBE_INDEX		GENMASK(39, 32)	/* table index + 1, 0 if none */

static unsigned long p2p_root_bus_key(struct pci_bus *root)
{
	return ((unsigned long)(u32)pci_domain_nr(root) << 8) | root->number;
}

/*
 * The function that identifies the root complex of @root's host bridge,
 * ignoring @leaving (a device being removed), or NULL: the first device of
 * the root bus, if it is at 00.0 (a host bridge or, on Ice Lake-SP, a
 * system peripheral) or is a root port (Skylake-SP has nothing at 00.0).
 * Its class does not matter. Caller holds pci_bus_sem.
 */
static struct pci_dev *p2p_host_bridge_id_dev(struct pci_bus *root,
					      struct pci_dev *leaving)
{
	struct pci_dev *dev;

	list_for_each_entry(dev, &root->devices, bus_list) {
		if (dev == leaving)
			continue;
		if (dev->devfn == PCI_DEVFN(0, 0) ||
		    (pci_is_pcie(dev) &&
		     pci_pcie_type(dev) == PCI_EXP_TYPE_ROOT_PORT))
			return dev;
		return NULL;
	}
	return NULL;
}

/* Index of @dev in p2p_routing_host_bridges[], or -1. */
VISIBLE_IF_KUNIT int p2p_host_bridge_index(struct pci_dev *dev)
{
	const struct p2p_known_host_bridge *k;
	int i;

	for (i = 0; dev && i < ARRAY_SIZE(p2p_routing_host_bridges); i++) {
		k = &p2p_routing_host_bridges[i];
		if (dev->vendor == k->vendor &&
		    (dev->device == k->device || (k->flags & P2P_HB_ANY_DEVICE)))
			return i;
	}
	return -1;
}

static void p2p_host_bridge_check_risk(struct pci_bus *root);

/*
 * Record what @root's host bridge does with P2P, as if @leaving were
 * already gone, and warn if an allow rule now lets P2P through it
 * unvouched for. Process context.
 */
static void p2p_host_bridge_update(struct pci_bus *root,
				   struct pci_dev *leaving)
{
	unsigned long key = p2p_root_bus_key(root), v = 0;
	struct pci_dev *id;

	mutex_lock(&p2p_host_bridges_lock);
	down_read(&pci_bus_sem);
	id = p2p_host_bridge_id_dev(root, leaving);
	if (id)
		v = FIELD_PREP(P2P_HBE_ID, (u32)id->vendor << 16 | id->device) |
		    FIELD_PREP(P2P_HBE_INDEX, p2p_host_bridge_index(id) + 1);
	up_read(&pci_bus_sem);
	if (!id)
		xa_erase(&p2p_host_bridges, key);
	else if (xa_err(xa_store(&p2p_host_bridges, key, xa_mk_value(v),
				 GFP_KERNEL)))
		pr_warn("no memory to record host bridge %04x:%02x; P2P through it is refused\n",
			pci_domain_nr(root), root->number);
	if (p2p_policy_booted())
		p2p_host_bridge_check_risk(root);
	mutex_unlock(&p2p_host_bridges_lock);
}

static int p2p_pci_notify(struct notifier_block *nb, unsigned long action,
			  void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	if (!pci_is_root_bus(pdev->bus))
		return NOTIFY_DONE;
	if (action == BUS_NOTIFY_ADD_DEVICE)
		p2p_host_bridge_update(pdev->bus, NULL);
	else if (action == BUS_NOTIFY_DEL_DEVICE)
		p2p_host_bridge_update(pdev->bus, pdev);
	return NOTIFY_DONE;
}

static struct notifier_block p2p_pci_nb = {
	.notifier_call = p2p_pci_notify,
};

/* The P2P_HBE_* entry of @hb, or 0 if it has none. Any context. */
static unsigned long p2p_host_bridge_entry(struct pci_host_bridge *hb)
{
	void *entry = xa_load(&p2p_host_bridges, p2p_root_bus_key(hb->bus));

	return xa_is_value(entry) ? xa_to_value(entry) : 0;
}

/*
 * The vendor and device ID of the function that identifies @hb, as
 * vendor << 16 | device, or 0 if it has none. Any context: an RCU lookup.
 */
u32 p2p_host_bridge_id(struct pci_host_bridge *hb)
{
	return FIELD_GET(P2P_HBE_ID, p2p_host_bridge_entry(hb));
}

/*
 * The index in p2p_routing_host_bridges[] of @hb, or -1 if it is not
 * known to route P2P. Any context: an RCU lookup.
 */
VISIBLE_IF_KUNIT int p2p_known_host_bridge(struct pci_host_bridge *hb)
{
	return (int)FIELD_GET(P2P_HBE_INDEX, p2p_host_bridge_entry(hb)) - 1;
}

/*
 * An allow rule vouches for a host bridge that the built-in policy does
 * not: neither the CPU rule nor p2p_routing_host_bridges[] covers it. If
 * its root complex does not forward peer-to-peer requests (optional,
 * PCIe r6.0 sec 1.3.1), DMA through it fails or, as users of hand-made
 * allow lists have seen, corrupts data silently: say so once, naming the
 * rule, when a rule starts allowing it (a policy change, or a host bridge
 * that appears under one). A host bridge of the list that routes P2P only
 * within itself is not warned about. Process context, under
 * p2p_host_bridges_lock.
 */
static void p2p_host_bridge_check_risk(struct pci_bus *root)
{
	struct pci_host_bridge *hb = pci_find_host_bridge(root);
	unsigned long key = p2p_root_bus_key(root);
	struct p2p_hb_policy one = { .n = 1 };
	char rule[32], id[16] = "no ID";
	u32 v;

	lockdep_assert_held(&p2p_host_bridges_lock);
	if (!hb || !p2p_policy_match(hb, p2p_host_bridge_id(hb), &one.rule[0]) ||
	    !one.rule[0].allow || p2p_cpu_routes_p2p() ||
	    p2p_known_host_bridge(hb) >= 0) {
		xa_erase(&p2p_risky_host_bridges, key);
		return;
	}
	if (xa_load(&p2p_risky_host_bridges, key))
		return;
	/* Without memory to remember it, it is warned about again later. */
	xa_store(&p2p_risky_host_bridges, key, xa_mk_value(1), GFP_KERNEL);
	v = p2p_host_bridge_id(hb);
	if (v)
		snprintf(id, sizeof(id), "%04x:%04x", v >> 16, v & 0xffff);
	p2p_policy_print(&one, rule, sizeof(rule));
	pr_warn("host bridge %s (%s) is not known to forward P2P requests, but rule %s allows P2P DMA through it: if it does not forward them, data can be lost or silently corrupted (verify it first: Documentation/admin-guide/p2pdma/host-bridges.rst)\n",
		dev_name(&hb->dev), id, rule);
}

/* Check every root bus after a policy change. Process context. */
void p2p_check_risks(void)
{
	struct pci_bus *root = NULL;
	unsigned long key;
	void *entry;

	mutex_lock(&p2p_host_bridges_lock);
	/* Forget root buses that are gone; a new one is warned about anew. */
	xa_for_each(&p2p_risky_host_bridges, key, entry) {
		root = pci_find_bus(key >> 8, key & 0xff);
		if (!root || !pci_is_root_bus(root))
			xa_erase(&p2p_risky_host_bridges, key);
	}
	root = NULL;
	while ((root = pci_find_next_bus(root)))
		p2p_host_bridge_check_risk(root);
	mutex_unlock(&p2p_host_bridges_lock);
}

/* After pci_bus_type exists (postcore), before the buses are scanned. */
static int __init p2p_host_bridges_init(void)
{
	struct pci_bus *root = NULL;
	int ret;

	p2p_policy_boot();

	ret = bus_register_notifier(&pci_bus_type, &p2p_pci_nb);
	if (ret)
		return ret;
	/* Root buses that were scanned earlier, if any. */
	while ((root = pci_find_next_bus(root)))
		p2p_host_bridge_update(root, NULL);
	return 0;
}
arch_initcall(p2p_host_bridges_init);

/*
 * Decide whether traffic may go up through host bridges @a and @b (the
 * same one, or two). A rule of the administrator's for a host bridge
 * overrides the built-in policy for it: a deny refuses the route, even on
 * AMD Zen; an allow lets it through that host bridge, even when the
 * built-in table says it routes P2P only within itself. Sets
 * @r->host_bridge to the one refusing and @r->override when a rule
 * decided.
 */
enum p2p_refusal p2p_host_bridge_verdict(struct pci_host_bridge *a,
					 struct pci_host_bridge *b,
					 struct p2p_route *r)
{
	struct pci_host_bridge *hb[2] = { a, b };
	int i, n = a == b ? 1 : 2, idx[2];
	bool allowed[2] = { false, false };
	struct p2p_hb_rule rule;

	for (i = 0; i < n; i++) {
		if (!p2p_policy_match(hb[i], p2p_host_bridge_id(hb[i]), &rule))
			continue;
		if (!rule.allow) {
			r->host_bridge = hb[i];
			r->override = true;
			return P2P_HOST_BRIDGE_DENIED;
		}
		allowed[i] = true;
	}
	if (allowed[0] && (n == 1 || allowed[1])) {
		r->override = true;
		return P2P_REACHABLE;
	}
	if (p2p_cpu_routes_p2p())
		return P2P_REACHABLE;

	for (i = 0; i < n; i++) {
		idx[i] = allowed[i] ? -1 : p2p_known_host_bridge(hb[i]);
		if (!allowed[i] && idx[i] < 0) {
			r->host_bridge = hb[i];
			return P2P_HOST_BRIDGE_UNKNOWN;
		}
	}
	for (i = 0; n == 2 && i < n; i++) {
		if (!allowed[i] &&
		    (p2p_routing_host_bridges[idx[i]].flags &
		     P2P_HB_WITHIN_ITSELF)) {
			r->host_bridge = hb[i];
			return P2P_HOST_BRIDGES_DIFFER;
		}
	}
	r->override = allowed[0] || allowed[1];
	return P2P_REACHABLE;
}
