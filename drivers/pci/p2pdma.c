// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA (P2PDMA)
 *
 * A provider hands part of a memory BAR to the kernel as P2P memory: the
 * range gets ZONE_DEVICE struct pages of type MEMORY_DEVICE_PCI_P2PDMA and
 * goes into a genalloc pool from which orchestrators and userspace allocate.
 * Clients map that memory with the ordinary DMA API; dma-direct and
 * dma-iommu ask pci_p2pdma_map_segment() how each client reaches it.
 *
 * How a client reaches a provider (the "route") follows the PCIe Base
 * Specification r6.0:
 *  - Below a common upstream bridge, a switch or root port forwards a
 *    peer request by address without involving the host (sec 1.3.3), so
 *    the client is programmed with the PCI bus address of the BAR.
 *  - ACS P2P Request Redirect, Completion Redirect or Egress Control on a
 *    bridge on that path (sec 6.12.1.1, ACS Control register sec 7.7.8.3),
 *    or on the provider or client function itself (a function of a
 *    multi-function device or an SR-IOV VF, sec 6.12.1.2), sends the
 *    traffic up to the root complex instead.
 *  - Forwarding between root ports, or between host bridges, is optional
 *    for a root complex (sec 1.3.1), so a path through the host bridge is
 *    used only where the host bridge is known to do it, with a normal DMA
 *    mapping (CPU physical address or IOVA).
 *
 * Lifetime: everything a provider registers is device-managed. Each
 * allocation, and each page mapped to userspace, holds a reference on the
 * dev_pagemap of its range, so unbinding the provider first revokes the
 * userspace mappings and then waits until every user has let go.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/dma-map-ops.h>
#include <linux/file.h>
#include <linux/genalloc.h>
#include <linux/kstrtox.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/pci-p2pdma.h>
#include <linux/percpu.h>
#include <linux/percpu-refcount.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/seqlock.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "pci.h"

/*
 * Sizes of the per-CPU allocation cache: 1, 2, 4, 8 and 16 pages (4 KiB to
 * 64 KiB), up to P2P_CACHE_DEPTH of each on every CPU.
 */
#define P2P_CACHE_CLASSES	5
#define P2P_CACHE_DEPTH		8
/* Pages back from userspace that a CPU gathers before the pool sees them. */
#define P2P_RUN_PAGES		512

/*
 * Memory recently freed by kernel users on one CPU, handed to the next
 * allocation of the same size on that CPU without touching the pool. It
 * counts as available. The lock is only ever contended by a drain.
 */
struct p2p_cpu_cache {
	spinlock_t lock;		/* this CPU, and a drain */
	unsigned long bytes;		/* held here, counted as available */
	unsigned int count[P2P_CACHE_CLASSES];
	unsigned long addr[P2P_CACHE_CLASSES][P2P_CACHE_DEPTH];
	/* Pages back from userspace, not yet in the pool: p2p_run_add(). */
	unsigned long run_start;
	unsigned long run_pages;
	bool run_dirty;
};

/* Per-provider state, reached through pdev->p2pdma under RCU. */
struct pci_p2pdma {
	struct gen_pool *pool;	/* free P2P memory; chunk owner = p2p_region */
	struct list_head regions;	/* p2p_region; only ever added to */
	struct p2p_cpu_cache __percpu *cache;
	struct delayed_work clear_work;	/* clears dirty free memory */
	seqlock_t clear_lock;	/* pool + clearing, as "available" reads it */
	unsigned long clearing;	/* bytes the clearing work holds */
	atomic_t clear_waiters;	/* mmaps waiting for the clearing to pause */
	struct xarray routes;	/* client key -> packed route verdict */
	bool published;		/* offered to orchestrators and nvmet */
	bool closing;		/* unbind started: hand out nothing more */
	bool sysfs_added;	/* the p2pmem attribute group exists */
};

/*
 * One range of a BAR registered with pci_p2pdma_add_resource(). A set bit
 * in @dirty says the page may hold someone's data; a page that is free in
 * the pool with its bit clear reads as zero. Bits change only for pages
 * their changer holds (allocated, or being freed), one word at a time
 * with an atomic operation, since a word covers pages of other owners.
 */
struct p2p_region {
	struct dev_pagemap pgmap;
	struct pci_dev *provider;
	u64 bus_offset;		/* PCI bus address minus CPU physical address */
	struct list_head node;	/* in pci_p2pdma.regions */
	unsigned long kaddr;	/* kernel address of the first page */
	unsigned long npages;
	unsigned long *dirty;
};

static inline struct p2p_region *to_p2p_region(struct dev_pagemap *pgmap)
{
	return container_of(pgmap, struct p2p_region, pgmap);
}

/* Why a client cannot use a provider's memory; P2P_REACHABLE if it can. */
enum p2p_refusal {
	P2P_REACHABLE,
	P2P_NOT_PCI,			/* no PCI function at or above the client */
	P2P_HOST_BRIDGE_UNKNOWN,	/* host bridge not known to route P2P */
	P2P_HOST_BRIDGES_DIFFER,	/* host bridge routes P2P only within itself */
	P2P_HOST_BRIDGE_DENIED,		/* a pci_p2pdma.host_bridges rule denies it */
};

struct p2p_route {
	enum pci_p2pdma_map_type map;
	unsigned int distance;
	enum p2p_refusal why;
	bool unsure;		/* a config read gave all ones: do not cache */
	bool override;		/* a pci_p2pdma.host_bridges rule decided */
	struct pci_dev *acs_dev;	/* redirecting function; not referenced */
	struct pci_host_bridge *host_bridge;	/* the one refusing, if any */
};

/* A route verdict packed into an xarray value entry. */
#define P2P_PACK_MAP		GENMASK(1, 0)
#define P2P_PACK_WHY		GENMASK(4, 2)
#define P2P_PACK_OVERRIDE	BIT(5)
#define P2P_PACK_DIST_SHIFT	6

/*
 * Extra distance for each host bridge a route goes through, so that every
 * direct route is preferred over every route through the root complex.
 */
#define P2P_HOST_BRIDGE_COST	1024

/* ------------------------------------------------------------------ */
/* Route: how a client reaches a provider, and how far it is           */
/* ------------------------------------------------------------------ */

/*
 * Intel root complexes known to forward peer-to-peer requests between
 * their root ports, by the device ID of the function that identifies them
 * (see p2p_host_bridge_id_dev()): a host bridge, a root port, or on Ice
 * Lake-SP a system peripheral (class 0880). P2P_HB_WITHIN_ITSELF marks the
 * ones that do so only between root ports of the same host bridge.
 */
#define P2P_HB_WITHIN_ITSELF	BIT(16)
#define P2P_HB_DEVICE		GENMASK(15, 0)
static const u32 p2p_routing_host_bridges[] = {
	/* Xeon E5 v1/v2, Core i7: Sandy Bridge-EP */
	0x3c00 | P2P_HB_WITHIN_ITSELF, 0x3c01 | P2P_HB_WITHIN_ITSELF,
	/* Xeon E5/E7 v3: Haswell-EP */
	0x2f00 | P2P_HB_WITHIN_ITSELF, 0x2f01 | P2P_HB_WITHIN_ITSELF,
	0x2020, 0x2030, 0x2031, 0x2032, 0x2033,	/* Xeon Scalable: Skylake-SP */
	0x09a2,				/* Xeon Scalable: Ice Lake-SP */
};

/*
 * AMD Zen (family 17h) and later route P2P between all their root ports
 * and host bridges, whatever the host bridge device IDs say. KUnit tests
 * replace this (a static stub) to test both rules on any CPU.
 */
static bool p2p_cpu_routes_p2p(void)
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
/* Serialises the updates, so that the last one for a root bus wins. */
static DEFINE_MUTEX(p2p_host_bridges_lock);

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
static int p2p_host_bridge_index(struct pci_dev *dev)
{
	int i;

	if (!dev || dev->vendor != PCI_VENDOR_ID_INTEL)
		return -1;
	for (i = 0; i < ARRAY_SIZE(p2p_routing_host_bridges); i++)
		if (dev->device == FIELD_GET(P2P_HB_DEVICE,
					     p2p_routing_host_bridges[i]))
			return i;
	return -1;
}

/*
 * Record what @root's host bridge does with P2P, as if @leaving were
 * already gone. Process context.
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
 * The index in p2p_routing_host_bridges[] of @hb, or -1 if it is not
 * known to route P2P. Any context: an RCU lookup.
 */
static int p2p_known_host_bridge(struct pci_host_bridge *hb)
{
	return (int)FIELD_GET(P2P_HBE_INDEX, p2p_host_bridge_entry(hb)) - 1;
}

/* ------------------------------------------------------------------ */
/* Host bridge policy override: pci_p2pdma.host_bridges=               */
/* ------------------------------------------------------------------ */

/*
 * The administrator's rules, first match wins: "allow:SEL" or "deny:SEL",
 * comma-separated, where SEL is "all", DDDD:BB (PCI domain and root bus
 * number of the host bridge) or VVVV:DDDD (vendor and device ID of the
 * function that identifies it). A host bridge no rule matches gets the
 * built-in policy. Parsed into fixed storage: the command line is parsed
 * before the slab allocator exists. Read in any context under the
 * seqlock; every write also bumps its sequence, which the route caches
 * use to drop verdicts worked out under an older policy.
 */
#define P2P_POLICY_MAX_RULES	16

enum p2p_rule_sel {
	P2P_SEL_ALL,
	P2P_SEL_ROOT_BUS,	/* a = domain, b = bus */
	P2P_SEL_ID,		/* a = vendor, b = device */
};

struct p2p_hb_rule {
	bool allow;
	u8 sel;
	u32 a, b;
};

struct p2p_hb_policy {
	unsigned int n;
	struct p2p_hb_rule rule[P2P_POLICY_MAX_RULES];
};

static struct p2p_hb_policy p2p_policy;
static DEFINE_SEQLOCK(p2p_policy_lock);
/* Set once the boot policy has been logged; later changes log themselves. */
static bool p2p_policy_booted;

/* Parse exactly @digits (or 1 to -@digits) hex digits of @s, up to @end. */
static int p2p_parse_hex(const char *s, const char *end, int digits, u32 *val)
{
	int len = end - s;
	char tmp[9];

	if (digits > 0 ? len != digits : len < 1 || len > -digits)
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (!isxdigit(tmp[0]))
		return -EINVAL;
	return kstrtou32(tmp, 16, val);
}

/* Parse one rule, @s of length @len; NULL or the reason it is malformed. */
static const char *p2p_parse_rule(const char *s, size_t len,
				  struct p2p_hb_rule *rule)
{
	const char *end = s + len, *colon;

	if (len > 6 && !strncmp(s, "allow:", 6)) {
		rule->allow = true;
		s += 6;
	} else if (len > 5 && !strncmp(s, "deny:", 5)) {
		rule->allow = false;
		s += 5;
	} else {
		return "a rule is allow:SEL or deny:SEL";
	}
	if (end - s == 3 && !strncmp(s, "all", 3)) {
		rule->sel = P2P_SEL_ALL;
		rule->a = 0;
		rule->b = 0;
		return NULL;
	}
	colon = memchr(s, ':', end - s);
	if (!colon)
		goto bad_sel;
	if (end - colon - 1 == 2) {
		rule->sel = P2P_SEL_ROOT_BUS;
		if (p2p_parse_hex(s, colon, -8, &rule->a) ||
		    p2p_parse_hex(colon + 1, end, 2, &rule->b))
			goto bad_sel;
		return NULL;
	}
	rule->sel = P2P_SEL_ID;
	if (!p2p_parse_hex(s, colon, 4, &rule->a) &&
	    !p2p_parse_hex(colon + 1, end, 4, &rule->b))
		return NULL;
bad_sel:
	return "SEL is all, DDDD:BB (PCI domain:root bus, hex) or VVVV:DDDD (vendor:device, hex)";
}

/*
 * Parse @val (one trailing newline allowed) into @pol. On a malformed
 * value, log which rule and why, and return -EINVAL.
 */
static int p2p_policy_parse(const char *val, struct p2p_hb_policy *pol)
{
	size_t len = val ? strlen(val) : 0, vlen;
	const char *s = val, *end = val, *why;

	memset(pol, 0, sizeof(*pol));
	if (!val) {
		pr_err("pci_p2pdma.host_bridges needs a value (rules, or empty for none)\n");
		return -EINVAL;
	}
	if (len && val[len - 1] == '\n')
		len--;
	vlen = len;
	while (len) {
		end = memchr(s, ',', len) ?: s + len;
		if (pol->n == P2P_POLICY_MAX_RULES) {
			why = "more than " __stringify(P2P_POLICY_MAX_RULES) " rules";
			goto bad;
		}
		why = p2p_parse_rule(s, end - s, &pol->rule[pol->n]);
		if (why)
			goto bad;
		pol->n++;
		len -= end - s;
		s = end;
		if (len) {	/* skip the comma; it must be followed by a rule */
			s++;
			if (!--len) {
				end = s;
				why = "empty rule after ','";
				goto bad;
			}
		}
	}
	return 0;
bad:
	pr_err("pci_p2pdma.host_bridges: '%.*s' rejected at '%.*s': %s; policy unchanged\n",
	       (int)min_t(size_t, vlen, 200), val,
	       (int)min_t(size_t, end - s, 40), s, why);
	return -EINVAL;
}

/* Print @pol as it would be written, without a newline. */
static int p2p_policy_print(const struct p2p_hb_policy *pol, char *buf,
			    size_t size)
{
	const struct p2p_hb_rule *r;
	int i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < pol->n; i++) {
		r = &pol->rule[i];
		n += scnprintf(buf + n, size - n, "%s%s:", i ? "," : "",
			       r->allow ? "allow" : "deny");
		if (r->sel == P2P_SEL_ALL)
			n += scnprintf(buf + n, size - n, "all");
		else if (r->sel == P2P_SEL_ROOT_BUS)
			n += scnprintf(buf + n, size - n, "%04x:%02x", r->a, r->b);
		else
			n += scnprintf(buf + n, size - n, "%04x:%04x", r->a, r->b);
	}
	return n;
}

static void p2p_policy_snapshot(struct p2p_hb_policy *pol)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&p2p_policy_lock);
		*pol = p2p_policy;
	} while (read_seqretry(&p2p_policy_lock, seq));
}

static void p2p_routes_forget_all(void);

static int p2p_policy_set(const char *val, const struct kernel_param *kp)
{
	struct p2p_hb_policy pol, old;
	char was[256], now[256];
	unsigned long flags;
	int ret;

	ret = p2p_policy_parse(val, &pol);
	if (ret)
		return ret;
	write_seqlock_irqsave(&p2p_policy_lock, flags);
	old = p2p_policy;
	p2p_policy = pol;
	write_sequnlock_irqrestore(&p2p_policy_lock, flags);
	if (!READ_ONCE(p2p_policy_booted))
		return 0;	/* the command line: logged at arch_initcall */
	p2p_routes_forget_all();
	p2p_policy_print(&old, was, sizeof(was));
	p2p_policy_print(&pol, now, sizeof(now));
	if (strcmp(now, was))
		pr_info("host bridge policy changed to '%s' (was '%s')\n",
			now, was);
	return 0;
}

static int p2p_policy_get(char *buf, const struct kernel_param *kp)
{
	struct p2p_hb_policy pol;
	int n;

	p2p_policy_snapshot(&pol);
	n = p2p_policy_print(&pol, buf, PAGE_SIZE - 1);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

static const struct kernel_param_ops p2p_policy_ops = {
	.set = p2p_policy_set,
	.get = p2p_policy_get,
};

#ifdef MODULE_PARAM_PREFIX
#undef MODULE_PARAM_PREFIX
#endif
#define MODULE_PARAM_PREFIX "pci_p2pdma."
module_param_cb(host_bridges, &p2p_policy_ops, NULL, 0644);
MODULE_PARM_DESC(host_bridges,
		 "allow or deny P2P through host bridges: allow:SEL or deny:SEL, comma-separated, first match wins; SEL is all, DDDD:BB or VVVV:DDDD");

/*
 * The rule that decides for @hb, copied to @rule; false if none matches.
 * Any context.
 */
static bool p2p_policy_match(struct pci_host_bridge *hb,
			     struct p2p_hb_rule *rule)
{
	u32 id = FIELD_GET(P2P_HBE_ID, p2p_host_bridge_entry(hb));
	u32 domain = pci_domain_nr(hb->bus), bus = hb->bus->number;
	const struct p2p_hb_rule *r;
	unsigned int seq, i;
	bool found;

	do {
		seq = read_seqbegin(&p2p_policy_lock);
		found = false;
		for (i = 0; i < p2p_policy.n && !found; i++) {
			r = &p2p_policy.rule[i];
			found = r->sel == P2P_SEL_ALL ||
				(r->sel == P2P_SEL_ROOT_BUS && r->a == domain &&
				 r->b == bus) ||
				(r->sel == P2P_SEL_ID && id &&
				 r->a == id >> 16 && r->b == (id & 0xffff));
			if (found)
				*rule = *r;
		}
	} while (read_seqretry(&p2p_policy_lock, seq));
	return found;
}

/* After pci_bus_type exists (postcore), before the buses are scanned. */
static int __init p2p_host_bridges_init(void)
{
	struct p2p_hb_policy pol;
	struct pci_bus *root = NULL;
	char buf[256];
	int ret;

	p2p_policy_snapshot(&pol);
	if (pol.n) {
		p2p_policy_print(&pol, buf, sizeof(buf));
		pr_info("host bridge policy from the command line: %s\n", buf);
	}
	WRITE_ONCE(p2p_policy_booted, true);

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
static enum p2p_refusal p2p_host_bridge_verdict(struct pci_host_bridge *a,
						struct pci_host_bridge *b,
						struct p2p_route *r)
{
	struct pci_host_bridge *hb[2] = { a, b };
	int i, n = a == b ? 1 : 2, idx[2];
	bool allowed[2] = { false, false };
	struct p2p_hb_rule rule;

	for (i = 0; i < n; i++) {
		if (!p2p_policy_match(hb[i], &rule))
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
		    (p2p_routing_host_bridges[idx[i]] & P2P_HB_WITHIN_ITSELF)) {
			r->host_bridge = hb[i];
			return P2P_HOST_BRIDGES_DIFFER;
		}
	}
	r->override = allowed[0] || allowed[1];
	return P2P_REACHABLE;
}

/*
 * Does @pdev redirect or block peer requests (ACS, PCIe r6.0 6.12)? On a
 * bridge this governs what its downstream ports forward; on a function of
 * a multi-function device or a VF, what goes to its sibling functions.
 */
static bool p2p_acs_redirects(struct pci_dev *pdev, bool *unsure)
{
	u16 ctrl;

	if (!pdev->acs_cap)
		return false;
	/*
	 * All ones: the function is gone or powered off (D3cold). Assume the
	 * worst, and tell the caller that the verdict may not last.
	 */
	if (pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CTRL, &ctrl) ||
	    PCI_POSSIBLE_ERROR(ctrl)) {
		*unsure = true;
		return true;
	}
	return ctrl & (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC);
}

/*
 * Walk from @dev itself up to @common (both inclusive) and return the
 * first function that redirects peer traffic, or NULL. Sets *@unsure if
 * an ACS Control register read all ones.
 */
static struct pci_dev *p2p_redirect_on_path(struct pci_dev *dev,
					    struct pci_dev *common,
					    bool *unsure)
{
	while (dev) {
		if (p2p_acs_redirects(dev, unsure))
			return dev;
		if (dev == common)
			break;
		dev = pci_upstream_bridge(dev);
	}
	return NULL;
}

/* Number of bridges between @dev and its root bus. */
static unsigned int p2p_depth(struct pci_dev *dev)
{
	unsigned int depth = 0;

	while ((dev = pci_upstream_bridge(dev)))
		depth++;
	return depth;
}

/*
 * Work out the route between two PCI functions from scratch.
 *
 * Distance counts links crossed: up from the provider to the lowest common
 * upstream bridge and down to the client. A function reaches its own BAR
 * without using any link, whatever its ACS settings. A route through the
 * root complex climbs all the way from both ends (one more link each, into
 * the host bridge) and adds P2P_HOST_BRIDGE_COST for each host bridge it
 * uses.
 */
static void p2p_route_compute(struct pci_dev *provider, struct pci_dev *client,
			      struct p2p_route *r)
{
	unsigned int depth_p = p2p_depth(provider), depth_c = p2p_depth(client);
	unsigned int up_p = 0, up_c = 0, dp = depth_p, dc = depth_c;
	struct pci_host_bridge *hb_p, *hb_c;
	struct pci_dev *a = provider, *b = client;

	memset(r, 0, sizeof(*r));
	if (provider == client) {
		r->map = PCI_P2PDMA_MAP_BUS_ADDR;
		return;
	}

	/* Lowest common ancestor: level the two walks, then climb together. */
	for (; dp > dc; dp--, up_p++)
		a = pci_upstream_bridge(a);
	for (; dc > dp; dc--, up_c++)
		b = pci_upstream_bridge(b);
	while (a != b) {
		a = pci_upstream_bridge(a);
		b = pci_upstream_bridge(b);
		up_p++;
		up_c++;
	}

	if (a) {
		r->acs_dev = p2p_redirect_on_path(provider, a, &r->unsure);
		if (!r->acs_dev)
			r->acs_dev = p2p_redirect_on_path(client, a,
							  &r->unsure);
		if (!r->acs_dev) {
			r->map = PCI_P2PDMA_MAP_BUS_ADDR;
			r->distance = up_p + up_c;
			return;
		}
	}

	hb_p = pci_find_host_bridge(provider->bus);
	hb_c = pci_find_host_bridge(client->bus);
	r->distance = depth_p + depth_c + 2 +
		      (hb_p == hb_c ? 1 : 2) * P2P_HOST_BRIDGE_COST;
	r->why = p2p_host_bridge_verdict(hb_p, hb_c, r);
	r->map = r->why == P2P_REACHABLE ? PCI_P2PDMA_MAP_THRU_HOST_BRIDGE :
					   PCI_P2PDMA_MAP_NOT_SUPPORTED;
}

static unsigned long p2p_client_key(struct pci_dev *client)
{
	return ((unsigned long)pci_domain_nr(client->bus) << 16) |
	       pci_dev_id(client);
}

/*
 * The PCI function that does a client's DMA: the client itself or its
 * closest PCI ancestor (nvmet passes a namespace's gendisk, RDMA an
 * ib_device). NULL if there is none.
 */
static struct pci_dev *p2p_client_pci_dev(struct device *client)
{
	for (; client; client = client->parent)
		if (dev_is_pci(client))
			return to_pci_dev(client);
	return NULL;
}

/*
 * The route from @provider to the PCI function @cdev, from the provider's
 * cache when it has one, unless @fresh: then it is computed again and the
 * cache entry refreshed. A verdict based on a config read of all ones is
 * never cached. Safe in any context: nothing here sleeps.
 */
static void p2p_route_get_pci(struct pci_dev *provider, struct pci_dev *cdev,
			      struct p2p_route *r, bool fresh)
{
	unsigned long key = p2p_client_key(cdev), flags;
	struct pci_p2pdma *p2p;
	void *entry = NULL;
	unsigned int policy_seq;

	rcu_read_lock();
	p2p = rcu_dereference(provider->p2pdma);
	if (p2p && !fresh)
		entry = xa_load(&p2p->routes, key);
	if (xa_is_value(entry)) {
		unsigned long v = xa_to_value(entry);

		memset(r, 0, sizeof(*r));
		r->map = FIELD_GET(P2P_PACK_MAP, v);
		r->why = FIELD_GET(P2P_PACK_WHY, v);
		r->override = v & P2P_PACK_OVERRIDE;
		r->distance = v >> P2P_PACK_DIST_SHIFT;
		rcu_read_unlock();
		return;
	}

	/*
	 * A policy change while we work makes this verdict uncacheable. A
	 * cache hit needs no such check: the change drops every entry.
	 */
	policy_seq = read_seqbegin(&p2p_policy_lock);
	p2p_route_compute(provider, cdev, r);
	if (p2p) {
		unsigned long v = FIELD_PREP(P2P_PACK_MAP, r->map) |
				  FIELD_PREP(P2P_PACK_WHY, r->why) |
				  (r->override ? P2P_PACK_OVERRIDE : 0) |
				  ((unsigned long)r->distance << P2P_PACK_DIST_SHIFT);

		/*
		 * Best effort: a verdict that fails to cache is recomputed.
		 * Checked under the lock p2p_routes_forget_all() takes after
		 * a policy change, so no verdict of the old policy survives.
		 */
		xa_lock_irqsave(&p2p->routes, flags);
		if (r->unsure || read_seqretry(&p2p_policy_lock, policy_seq))
			__xa_erase(&p2p->routes, key);
		else
			__xa_store(&p2p->routes, key, xa_mk_value(v),
				   GFP_ATOMIC | __GFP_NOWARN);
		xa_unlock_irqrestore(&p2p->routes, flags);
	}
	rcu_read_unlock();
}

/*
 * Drop every cached verdict of every provider, after the host bridge
 * policy changed. Process context.
 */
static void p2p_routes_forget_all(void)
{
	struct pci_dev *pdev = NULL;
	struct pci_p2pdma *p2p;
	unsigned long key, flags;
	void *entry;

	for_each_pci_dev(pdev) {
		rcu_read_lock();
		p2p = rcu_dereference(pdev->p2pdma);
		if (p2p) {
			xa_lock_irqsave(&p2p->routes, flags);
			xa_for_each(&p2p->routes, key, entry)
				__xa_erase(&p2p->routes, key);
			xa_unlock_irqrestore(&p2p->routes, flags);
		}
		rcu_read_unlock();
	}
}

/*
 * The route from @provider to @client, or to the closest PCI ancestor of
 * a client that is not a PCI function (an orchestrator's view).
 */
static void p2p_route_get(struct pci_dev *provider, struct device *client,
			  struct p2p_route *r, bool fresh)
{
	struct pci_dev *cdev = p2p_client_pci_dev(client);

	if (cdev) {
		p2p_route_get_pci(provider, cdev, r, fresh);
		return;
	}
	memset(r, 0, sizeof(*r));
	r->map = PCI_P2PDMA_MAP_NOT_SUPPORTED;
	r->why = P2P_NOT_PCI;
}

/* The same, from the cache when there is an entry (KUnit). */
static void __maybe_unused p2p_route_lookup(struct pci_dev *provider,
					    struct device *client,
					    struct p2p_route *r)
{
	p2p_route_get(provider, client, r, false);
}

static __maybe_unused const char *p2p_map_type_name(enum pci_p2pdma_map_type map)
{
	switch (map) {
	case PCI_P2PDMA_MAP_BUS_ADDR:
		return "bus-address";
	case PCI_P2PDMA_MAP_THRU_HOST_BRIDGE:
		return "through-host-bridge";
	case PCI_P2PDMA_MAP_NOT_SUPPORTED:
		return "refused";
	default:
		return "unknown";
	}
}

/*
 * Explain the verdict @r (computed by p2p_route_compute(), not a cached
 * one) in @buf: for a refusal, the bridge with ACS redirect and the host
 * bridge that refuses, with the rule that would allow it; for a route a
 * pci_p2pdma.host_bridges rule allowed, that; otherwise "-".
 */
static void p2p_route_explain(const struct p2p_route *r, char *buf,
			      size_t len)
{
	struct pci_host_bridge *hb = r->host_bridge;
	struct p2p_hb_policy pol;
	struct p2p_hb_rule rule;
	int n = 0;

	if (r->map != PCI_P2PDMA_MAP_NOT_SUPPORTED) {
		scnprintf(buf, len, "%s", r->override ?
			  "allowed by pci_p2pdma.host_bridges" : "-");
		return;
	}
	if (r->acs_dev)
		n = scnprintf(buf, len, "ACS redirect on %s forces the host bridge path; ",
			      pci_name(r->acs_dev));
	switch (r->why) {
	case P2P_HOST_BRIDGE_UNKNOWN:
		scnprintf(buf + n, len - n,
			  "host bridge %s is not known to route P2P (allow with pci_p2pdma.host_bridges=allow:%04x:%02x)",
			  dev_name(&hb->dev), pci_domain_nr(hb->bus),
			  hb->bus->number);
		break;
	case P2P_HOST_BRIDGES_DIFFER:
		scnprintf(buf + n, len - n,
			  "host bridge %s routes P2P only within itself (allow with pci_p2pdma.host_bridges=allow:%04x:%02x)",
			  dev_name(&hb->dev), pci_domain_nr(hb->bus),
			  hb->bus->number);
		break;
	case P2P_HOST_BRIDGE_DENIED:
		/* Name the rule; the policy may have changed since. */
		n += scnprintf(buf + n, len - n,
			       "host bridge %s is denied by pci_p2pdma.host_bridges rule ",
			       dev_name(&hb->dev));
		if (p2p_policy_match(hb, &rule) && !rule.allow) {
			pol.n = 1;
			pol.rule[0] = rule;
			p2p_policy_print(&pol, buf + n, len - n);
		} else {
			scnprintf(buf + n, len - n, "(since changed)");
		}
		break;
	default:
		scnprintf(buf + n, len - n, "no route");
		break;
	}
}

/* Describe the route to a client, working it out again to name bridges. */
static void p2p_route_reason(struct pci_dev *provider, struct device *client,
			     char *buf, size_t len)
{
	struct pci_dev *cdev = p2p_client_pci_dev(client);
	struct p2p_route r;

	if (!client) {
		scnprintf(buf, len, "no client device (NULL)");
		return;
	}
	if (!cdev) {
		scnprintf(buf, len, "%s is not a PCI device nor below one",
			  dev_name(client));
		return;
	}
	p2p_route_compute(provider, cdev, &r);
	p2p_route_explain(&r, buf, len);
}

static void p2p_log_refusal(struct pci_dev *provider, struct device *client)
{
	char why[256];

	p2p_route_reason(provider, client, why, sizeof(why));
	pci_warn(provider, "P2PDMA to/from client %s refused: %s\n",
		 client ? dev_name(client) : "(null)", why);
}

/**
 * pci_p2pdma_distance_many() - how far a set of clients is from a provider
 * @provider: PCI device whose BAR memory would be used; it need not have
 *	registered any P2P memory
 * @clients: devices that would DMA to or from that memory; a client that
 *	is not itself a PCI function (a gendisk, an ib_device) stands for
 *	its closest PCI ancestor; a NULL entry reaches nothing
 * @num_clients: number of entries in @clients; there must be at least one
 * @verbose: log one line per refused client, naming both devices and the
 *	reason (the ACS-redirecting bridge or the host bridge that refuses)
 *
 * A client reaches the provider directly, using PCI bus addresses, when
 * both sit below a common upstream bridge and neither a bridge on the
 * path nor the provider or client function itself has ACS P2P Request
 * Redirect, Completion Redirect or Egress Control enabled (PCIe r6.0
 * sec 6.12). Otherwise the traffic has to go through the root
 * complex, which is allowed only where the host bridge is known to route
 * peer-to-peer requests (PCIe r6.0 sec 1.3.1 makes it optional) or the
 * administrator's pci_p2pdma.host_bridges rules allow it; a deny rule
 * refuses it even where it would be known to work. Every
 * call reads the ACS settings again, so it reflects the current ones, and
 * refreshes the verdict cached for each provider/client pair, which the
 * DMA mapping path uses for as long as the provider has P2P state (until
 * its driver unbinds). A verdict that rests on a config read of all ones
 * (a bridge that is gone or in D3cold) is not cached.
 *
 * Context: any, including atomic; does not sleep. Takes the provider's
 * route cache lock (an IRQ-safe spinlock) briefly and the RCU read lock.
 *
 * Return: the sum over all clients of the number of links between the
 * provider and the client (0 when the client is the provider itself; a
 * route through the root complex adds 1024 per host bridge it uses), or
 * -1 if any client cannot reach the provider (including a NULL client and
 * a client with no PCI function at or above it), or if @num_clients is 0
 * or less.
 */
int pci_p2pdma_distance_many(struct pci_dev *provider, struct device **clients,
			     int num_clients, bool verbose)
{
	struct p2p_route r;
	bool refused = false;
	int i, total = 0;

	if (num_clients <= 0)
		return -1;
	for (i = 0; i < num_clients; i++) {
		p2p_route_get(provider, clients[i], &r, true);
		if (r.map == PCI_P2PDMA_MAP_NOT_SUPPORTED) {
			refused = true;
			if (!verbose)
				break;
			p2p_log_refusal(provider, clients[i]);
			continue;
		}
		total += r.distance;
	}
	return refused ? -1 : total;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_distance_many);

/* ------------------------------------------------------------------ */
/* The pool: clean and dirty memory, the per-CPU cache                  */
/* ------------------------------------------------------------------ */

/*
 * Regions are added under p2p_setup_lock and removed only after the last
 * user of the provider is gone, so a walk needs no lock of its own.
 */
#define for_each_p2p_region(region, p2p) \
	list_for_each_entry_rcu(region, &(p2p)->regions, node, true)

static struct p2p_region *p2p_region_of(struct pci_p2pdma *p2p,
					unsigned long addr)
{
	struct p2p_region *region;

	for_each_p2p_region(region, p2p)
		if (addr - region->kaddr < region->npages << PAGE_SHIFT)
			return region;
	return NULL;
}

static unsigned long p2p_page_index(struct p2p_region *region,
				    unsigned long addr)
{
	return (addr - region->kaddr) >> PAGE_SHIFT;
}

/*
 * Mark pages [@first, @first + @n) of @region dirty or clean. The caller
 * holds them; neighbours in the same word may change at the same time.
 */
static void p2p_mark(struct p2p_region *region, unsigned long first,
		     unsigned long n, bool dirty)
{
	unsigned long end = first + n, lo, hi, mask;

	while (first < end) {
		lo = first % BITS_PER_LONG;
		hi = min_t(unsigned long, BITS_PER_LONG, lo + end - first);
		mask = GENMASK(hi - 1, lo);
		set_mask_bits(&region->dirty[BIT_WORD(first)], mask,
			      dirty ? mask : 0);
		first += hi - lo;
	}
}

/*
 * Zero the dirty pages among [@first, @first + @n) of @region, which the
 * caller holds, and mark them clean. The kernel maps BAR memory uncached,
 * where a store of 8 bytes is the most one instruction writes (memset64()).
 * Returns whether any page was dirty.
 */
static bool p2p_clean(struct p2p_region *region, unsigned long first,
		      unsigned long n)
{
	unsigned long end = first + n, i = first, j;
	bool any = false;

	while ((i = find_next_bit(region->dirty, end, i)) < end) {
		j = find_next_zero_bit(region->dirty, end, i);
		memset64((u64 *)(region->kaddr + (i << PAGE_SHIFT)), 0,
			 ((j - i) << PAGE_SHIFT) / sizeof(u64));
		p2p_mark(region, i, j - i, false);
		i = j;
		any = true;
	}
	return any;
}

/* Give memory back to the pool, marked dirty: a kernel user had it. */
static void p2p_pool_free_dirty(struct pci_p2pdma *p2p,
				struct p2p_region *region, unsigned long addr,
				size_t size)
{
	p2p_mark(region, p2p_page_index(region, addr),
		 DIV_ROUND_UP(size, PAGE_SIZE), true);
	gen_pool_free(p2p->pool, addr, size);
}

/*
 * Run the clearing work after @delay jiffies (or sooner, if it was already
 * due sooner), unless the provider is closing: the unbind cancels the work
 * after a grace period, and a caller inside an RCU read section that saw
 * closing clear is done queueing by then.
 */
static void p2p_clear_kick_after(struct pci_p2pdma *p2p, unsigned long delay)
{
	guard(rcu)();
	if (READ_ONCE(p2p->closing))
		return;
	if (delay)
		queue_delayed_work(system_unbound_wq, &p2p->clear_work, delay);
	else
		mod_delayed_work(system_unbound_wq, &p2p->clear_work, 0);
}

static void p2p_clear_kick(struct pci_p2pdma *p2p)
{
	p2p_clear_kick_after(p2p, 0);
}

/*
 * Put this CPU's run of pages back from userspace into the pool; the
 * cache lock is held.
 */
static void p2p_run_flush(struct pci_p2pdma *p2p, struct p2p_cpu_cache *c)
{
	if (!c->run_pages)
		return;
	gen_pool_free(p2p->pool, c->run_start, c->run_pages << PAGE_SHIFT);
	WRITE_ONCE(c->bytes, c->bytes - (c->run_pages << PAGE_SHIFT));
	c->run_pages = 0;
	if (c->run_dirty)
		p2p_clear_kick(p2p);
	c->run_dirty = false;
}

/*
 * A page of @region at @addr came back from userspace, written (@dirty)
 * or not. An munmap() returns its pages one at a time, in address order:
 * they are gathered into one run per CPU and given to the pool together,
 * up to P2P_RUN_PAGES at a time, instead of one bitmap update each. The
 * next mmap(), the clearing work, a short pool and an unbind put a run
 * that is still open into the pool. Called in an RCU read section.
 */
static void p2p_run_add(struct pci_p2pdma *p2p, struct p2p_region *region,
			unsigned long addr, bool dirty)
{
	struct p2p_cpu_cache *c;
	unsigned long flags;

	if (dirty)
		p2p_mark(region, p2p_page_index(region, addr), 1, true);
	/* After an unbind's grace period nothing is held back. */
	if (READ_ONCE(p2p->closing)) {
		gen_pool_free(p2p->pool, addr, PAGE_SIZE);
		return;
	}
	c = raw_cpu_ptr(p2p->cache);
	spin_lock_irqsave(&c->lock, flags);
	/*
	 * The first page of a region never extends a run: the run would end
	 * in the region before it, and genalloc frees within one range only.
	 */
	if (c->run_pages &&
	    (addr != c->run_start + (c->run_pages << PAGE_SHIFT) ||
	     addr == region->kaddr || c->run_pages == P2P_RUN_PAGES))
		p2p_run_flush(p2p, c);
	if (!c->run_pages)
		c->run_start = addr;
	c->run_pages++;
	c->run_dirty |= dirty;
	WRITE_ONCE(c->bytes, c->bytes + PAGE_SIZE);
	spin_unlock_irqrestore(&c->lock, flags);
}

/* Put every CPU's open run into the pool. */
static void p2p_runs_flush(struct pci_p2pdma *p2p)
{
	struct p2p_cpu_cache *c;
	unsigned long flags;
	int cpu;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(p2p->cache, cpu);
		if (!READ_ONCE(c->run_pages))
			continue;
		spin_lock_irqsave(&c->lock, flags);
		p2p_run_flush(p2p, c);
		spin_unlock_irqrestore(&c->lock, flags);
	}
}

/* The per-CPU cache class of an allocation of @size bytes, or -1. */
static int p2p_cache_class(size_t size)
{
	unsigned long pages = DIV_ROUND_UP(size, PAGE_SIZE);

	if (!is_power_of_2(pages) || pages > BIT(P2P_CACHE_CLASSES - 1))
		return -1;
	return ilog2(pages);
}

/*
 * This CPU's cache (or, after a migration, another CPU's: the lock makes
 * either correct). Interrupts are off because allocation and freeing are
 * allowed in interrupt context.
 */
static unsigned long p2p_cache_get(struct pci_p2pdma *p2p, int class)
{
	struct p2p_cpu_cache *c = raw_cpu_ptr(p2p->cache);
	unsigned long flags, addr = 0;

	spin_lock_irqsave(&c->lock, flags);
	if (c->count[class]) {
		addr = c->addr[class][--c->count[class]];
		WRITE_ONCE(c->bytes, c->bytes - (PAGE_SIZE << class));
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return addr;
}

static bool p2p_cache_put(struct pci_p2pdma *p2p, int class,
			  unsigned long addr)
{
	struct p2p_cpu_cache *c = raw_cpu_ptr(p2p->cache);
	unsigned long flags;
	bool kept = false;

	spin_lock_irqsave(&c->lock, flags);
	if (c->count[class] < P2P_CACHE_DEPTH) {
		c->addr[class][c->count[class]++] = addr;
		WRITE_ONCE(c->bytes, c->bytes + (PAGE_SIZE << class));
		kept = true;
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return kept;
}

/*
 * Return every CPU's cached memory and open run to the pool: when an
 * allocation finds the pool short, and at unbind. Returns whether there
 * was any.
 */
static bool p2p_cache_drain(struct pci_p2pdma *p2p)
{
	struct p2p_cpu_cache *c;
	unsigned long flags, addr;
	bool any = false;
	int cpu, class;

	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(p2p->cache, cpu);
		if (!READ_ONCE(c->bytes))
			continue;
		spin_lock_irqsave(&c->lock, flags);
		if (c->run_pages)
			any = true;
		p2p_run_flush(p2p, c);
		for (class = 0; class < P2P_CACHE_CLASSES; class++) {
			while (c->count[class]) {
				addr = c->addr[class][--c->count[class]];
				p2p_pool_free_dirty(p2p, p2p_region_of(p2p, addr),
						    addr, PAGE_SIZE << class);
				WRITE_ONCE(c->bytes,
					   c->bytes - (PAGE_SIZE << class));
				any = true;
			}
		}
		spin_unlock_irqrestore(&c->lock, flags);
	}
	return any;
}

/*
 * "available": free in the pool, held by the clearing work (a moment
 * away from the pool, read consistently with it), and cached per CPU.
 */
static size_t p2p_available(struct pci_p2pdma *p2p)
{
	unsigned int seq;
	size_t avail;
	int cpu;

	do {
		seq = read_seqbegin(&p2p->clear_lock);
		avail = gen_pool_avail(p2p->pool) + READ_ONCE(p2p->clearing);
	} while (read_seqretry(&p2p->clear_lock, seq));
	for_each_possible_cpu(cpu)
		avail += READ_ONCE(per_cpu_ptr(p2p->cache, cpu)->bytes);
	return avail;
}

/* genalloc algorithm: exactly the range at *@data, if all of it is free. */
static unsigned long p2p_algo_exact(unsigned long *map, unsigned long size,
				    unsigned long start, unsigned int nr,
				    void *data, struct gen_pool *pool,
				    unsigned long start_addr)
{
	unsigned long want = *(unsigned long *)data, bit;

	if (want < start_addr)
		return size;
	bit = (want - start_addr) >> pool->min_alloc_order;
	if (bit >= size || nr > size - bit ||
	    find_next_bit(map, bit + nr, bit) < bit + nr)
		return size;
	return bit;
}

/*
 * genalloc algorithm for mmap(): the first free run of @nr pages that are
 * all clean (@data is the provider). Only a preference: p2p_clean() looks
 * at the bits again once the pages are held.
 */
static unsigned long p2p_algo_clean(unsigned long *map, unsigned long size,
				    unsigned long start, unsigned int nr,
				    void *data, struct gen_pool *pool,
				    unsigned long start_addr)
{
	struct p2p_region *region = p2p_region_of(data, start_addr);
	unsigned long i = start, d;

	if (!region || region->kaddr != start_addr)
		return size;
	for (;;) {
		i = bitmap_find_next_zero_area(map, size, i, nr, 0);
		if (i >= size)
			return size;
		d = find_next_bit(region->dirty, i + nr, i);
		if (d >= i + nr)
			return i;
		i = find_next_zero_bit(region->dirty, size, d);
	}
}

/*
 * Take the free pages [@first, @first + *@n) of @region from the pool (or
 * just the first if another user holds some of the others, setting *@n
 * to 1), zero them and put them back clean. False if even the first page
 * is in use: its user marks it again when it frees it.
 */
static bool p2p_clear_piece(struct pci_p2pdma *p2p, struct p2p_region *region,
			    unsigned long first, unsigned long *n)
{
	unsigned long addr = region->kaddr + (first << PAGE_SHIFT), got;
	size_t len = *n << PAGE_SHIFT;

	write_seqlock(&p2p->clear_lock);
	got = gen_pool_alloc_algo(p2p->pool, len, p2p_algo_exact, &addr);
	if (!got && *n > 1) {
		*n = 1;
		len = PAGE_SIZE;
		got = gen_pool_alloc_algo(p2p->pool, len, p2p_algo_exact, &addr);
	}
	if (got)
		WRITE_ONCE(p2p->clearing, p2p->clearing + len);
	write_sequnlock(&p2p->clear_lock);
	if (!got)
		return false;

	p2p_clean(region, first, *n);

	write_seqlock(&p2p->clear_lock);
	gen_pool_free(p2p->pool, addr, len);
	WRITE_ONCE(p2p->clearing, p2p->clearing - len);
	write_sequnlock(&p2p->clear_lock);
	return true;
}

/* How long after a registration the clearing work starts: 1 s. */
#define P2P_CLEAR_DELAY	HZ

/* Pages the clearing work takes from the pool at a time: 256 KiB. */
#define P2P_CLEAR_PIECE	64

/*
 * Clear dirty free memory in the background, so that the next mmap() of
 * "allocate" finds clean memory and only inserts it. Stops early for an
 * unbind and for an mmap() that found the pool short (it may want the
 * piece held here), which queues the work again when it is done.
 */
static void p2p_clear_work_fn(struct work_struct *work)
{
	struct pci_p2pdma *p2p = container_of(to_delayed_work(work),
					      struct pci_p2pdma, clear_work);
	struct p2p_region *region;
	unsigned long i, n;

	p2p_runs_flush(p2p);
	for_each_p2p_region(region, p2p) {
		for (i = 0;;) {
			i = find_next_bit(region->dirty, region->npages, i);
			if (i >= region->npages)
				break;
			if (READ_ONCE(p2p->closing) ||
			    atomic_read(&p2p->clear_waiters))
				return;
			n = find_next_zero_bit(region->dirty,
					       min(region->npages,
						   i + P2P_CLEAR_PIECE), i) - i;
			/*
			 * Look from the start again after each piece: memory
			 * freed meanwhile at a lower address is what first-fit
			 * hands out next. A page in use is passed over.
			 */
			if (p2p_clear_piece(p2p, region, i, &n))
				i = 0;
			else
				i++;
			cond_resched();
		}
	}
}

/* ------------------------------------------------------------------ */
/* Provider registration and lifetime                                   */
/* ------------------------------------------------------------------ */

static const struct attribute_group p2pmem_group;

/* Start of an unbind: nothing more is handed out or published. */
static void p2p_close_start(struct pci_p2pdma *p2p)
{
	WRITE_ONCE(p2p->published, false);
	WRITE_ONCE(p2p->closing, true);
}

/* Once no reader that saw closing == false is left (after a grace period). */
static void p2p_close_finish(struct pci_dev *pdev, struct pci_p2pdma *p2p)
{
	/*
	 * A pci_p2pmem_publish() that checked closing before it was set may
	 * have stored true since: clear that again, for good.
	 */
	WRITE_ONCE(p2p->published, false);
	if (p2p->sysfs_added) {
		sysfs_remove_group(&pdev->dev.kobj, &p2pmem_group);
		p2p->sysfs_added = false;
	}
}

/*
 * First devres action of an unbind (registered after each range, so it
 * runs before any range is unmapped): stop handing out memory, and revoke
 * userspace mappings by removing the sysfs group, which makes kernfs unmap
 * every mmap of "allocate". In-kernel users are then waited for by
 * memunmap_pages() through the pgmap references they hold.
 */
static void p2p_provider_close(void *data)
{
	struct pci_dev *pdev = data;
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	if (p2p->closing)
		return;
	p2p_close_start(p2p);
	/*
	 * Allocators and publishers that saw closing == false have left their
	 * RCU section; later ones see it set.
	 */
	synchronize_rcu();
	p2p_close_finish(pdev, p2p);
	/*
	 * Nothing queues the clearing work any more; what is cached per CPU
	 * goes back to the pool, which outlives this.
	 */
	cancel_delayed_work_sync(&p2p->clear_work);
	p2p_cache_drain(p2p);
}

/* Last devres action of a provider: nothing refers to its state now. */
static void p2p_provider_release(void *data)
{
	struct pci_dev *pdev = data;
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);

	p2p_provider_close(pdev);	/* in case no range was ever added */
	cancel_delayed_work_sync(&p2p->clear_work);
	RCU_INIT_POINTER(pdev->p2pdma, NULL);
	synchronize_rcu();
	xa_destroy(&p2p->routes);
	/* The pool and p2p itself are device-managed and go next. */
}

static DEFINE_MUTEX(p2p_setup_lock);

static struct pci_p2pdma *p2p_provider_setup(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;
	int cpu, ret;

	lockdep_assert_held(&p2p_setup_lock);

	p2p = rcu_dereference_protected(pdev->p2pdma,
					lockdep_is_held(&p2p_setup_lock));
	if (p2p)
		return p2p;

	p2p = devm_kzalloc(&pdev->dev, sizeof(*p2p), GFP_KERNEL);
	if (!p2p)
		return ERR_PTR(-ENOMEM);
	xa_init_flags(&p2p->routes, XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&p2p->regions);
	INIT_DELAYED_WORK(&p2p->clear_work, p2p_clear_work_fn);
	seqlock_init(&p2p->clear_lock);
	p2p->pool = devm_gen_pool_create(&pdev->dev, PAGE_SHIFT,
					 dev_to_node(&pdev->dev), NULL);
	if (IS_ERR(p2p->pool))
		return ERR_CAST(p2p->pool);
	p2p->cache = devm_alloc_percpu(&pdev->dev, struct p2p_cpu_cache);
	if (!p2p->cache)
		return ERR_PTR(-ENOMEM);
	for_each_possible_cpu(cpu)
		spin_lock_init(&per_cpu_ptr(p2p->cache, cpu)->lock);

	rcu_assign_pointer(pdev->p2pdma, p2p);
	ret = devm_add_action_or_reset(&pdev->dev, p2p_provider_release, pdev);
	if (ret)
		return ERR_PTR(ret);

	ret = sysfs_create_group(&pdev->dev.kobj, &p2pmem_group);
	if (ret)
		pci_warn(pdev, "P2PDMA: no p2pmem sysfs files (%d)\n", ret);
	else
		p2p->sysfs_added = true;
	return p2p;
}

/*
 * pgmap callback: the last reference to a page mapped to userspace went.
 * The page is dirty only if someone wrote it: the unmap found its PTE
 * dirty, or a writer that pinned it (O_DIRECT, RDMA) marked it dirty when
 * it let go; both set PG_dirty. Otherwise it still reads as zero, as it
 * did when it was mapped, and goes back clean.
 */
static void p2p_page_free(struct page *page)
{
	struct p2p_region *region = to_p2p_region(page->pgmap);
	unsigned long addr = (unsigned long)page_to_virt(page);
	bool dirty = folio_test_clear_dirty(page_folio(page));
	struct pci_p2pdma *p2p;

	/* The provider state outlives every page: see p2p_provider_close(). */
	p2p = rcu_dereference_protected(region->provider->p2pdma, 1);
	scoped_guard(rcu)
		p2p_run_add(p2p, region, addr, dirty);
	percpu_ref_put(&region->pgmap.ref);
}

static const struct dev_pagemap_ops p2p_pgmap_ops = {
	.page_free = p2p_page_free,
};

static void p2p_bitmap_free(void *bitmap)
{
	kvfree(bitmap);
}

/*
 * The dirty bitmap of a region of @size bytes, device-managed. Allocated
 * before the pages are, so that it is freed after they are gone.
 */
static int p2p_region_bitmap(struct device *dev, struct p2p_region *region,
			     size_t size)
{
	region->npages = size >> PAGE_SHIFT;
	region->dirty = kvmalloc_array(BITS_TO_LONGS(region->npages),
				       sizeof(long), GFP_KERNEL);
	if (!region->dirty)
		return -ENOMEM;
	return devm_add_action_or_reset(dev, p2p_bitmap_free, region->dirty);
}

/*
 * Put @region's memory at @kaddr (bus address @bus) into @p2p's pool, all
 * of it dirty: the BAR holds whatever it held before.
 */
static int p2p_region_add(struct pci_p2pdma *p2p, struct p2p_region *region,
			  void *kaddr, u64 bus, int nid)
{
	int ret;

	lockdep_assert_held(&p2p_setup_lock);
	region->kaddr = (unsigned long)kaddr;
	bitmap_fill(region->dirty, region->npages);
	ret = gen_pool_add_owner(p2p->pool, region->kaddr, bus,
				 region->npages << PAGE_SHIFT, nid, region);
	if (ret)
		return ret;
	list_add_tail_rcu(&region->node, &p2p->regions);
	return 0;
}

struct p2p_span {
	u64 first, last;
	bool overlaps;
};

static void p2p_chunk_overlaps(struct gen_pool *pool,
			       struct gen_pool_chunk *chunk, void *data)
{
	struct p2p_span *s = data;
	u64 last = chunk->phys_addr + (chunk->end_addr - chunk->start_addr);

	if (chunk->phys_addr <= s->last && s->first <= last)
		s->overlaps = true;
}

/**
 * pci_p2pdma_add_resource() - register part of a BAR as P2P memory
 * @pdev: the provider
 * @bar: index of a memory BAR (0 to 5, PCIe r6.0 sec 7.5.1.2.1)
 * @size: bytes to register, or 0 for everything from @offset to the end
 *	of the BAR
 * @offset: byte offset of the range within the BAR
 *
 * Creates ZONE_DEVICE pages (MEMORY_DEVICE_PCI_P2PDMA) for the range and
 * adds it to the provider's pool, where pci_alloc_p2pmem() and the sysfs
 * "allocate" file find it. The first call also creates the p2pmem sysfs
 * group (Documentation/ABI/testing/sysfs-bus-pci). A device may register
 * several ranges. The memory is not offered to other drivers until the
 * provider calls pci_p2pmem_publish().
 *
 * Start and size must be multiples of memremap_compat_align() (2 MiB on
 * x86_64), the granularity of ZONE_DEVICE memory.
 *
 * Everything is device-managed: when the driver unbinds, userspace
 * mappings are revoked (later accesses get SIGBUS), the unbind waits for
 * in-kernel allocations to be freed, and the pages are removed.
 *
 * Context: process context, may sleep; call from the provider's probe
 * (the device must be bound to a driver, for the device-managed resources).
 * Takes a global mutex that serialises registrations.
 *
 * Return: 0 on success; -EINVAL if @bar is out of range or not a memory
 * BAR, the range does not fit in the BAR, or it is misaligned (each with a
 * dmesg line); -EBUSY if the range overlaps one already registered;
 * -ENOMEM if memory for the bookkeeping or the pool runs out; or the error
 * devm_memremap_pages() returned (for example -EBUSY or -ENOMEM when the
 * physical range cannot be given struct pages). Nothing stays registered
 * after a failure, but the p2pmem sysfs group created by a first call
 * remains.
 */
int pci_p2pdma_add_resource(struct pci_dev *pdev, int bar, size_t size,
			    u64 offset)
{
	resource_size_t bar_len, start;
	unsigned long align = memremap_compat_align();
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	struct p2p_span span;
	void *addr;
	int ret;

	if (bar < 0 || bar >= PCI_STD_NUM_BARS ||
	    !(pci_resource_flags(pdev, bar) & IORESOURCE_MEM)) {
		pci_info(pdev, "P2PDMA: BAR %d is not a memory BAR\n", bar);
		return -EINVAL;
	}
	bar_len = pci_resource_len(pdev, bar);
	if (offset >= bar_len || size > bar_len - offset) {
		pci_info(pdev, "P2PDMA: %#zx bytes at offset %#llx do not fit in BAR %d (%pa bytes)\n",
			 size, offset, bar, &bar_len);
		return -EINVAL;
	}
	if (!size)
		size = bar_len - offset;
	start = pci_resource_start(pdev, bar) + offset;
	if (!IS_ALIGNED(start, align) || !IS_ALIGNED(size, align)) {
		pci_info(pdev, "P2PDMA: BAR %d range %pa+%#zx is not aligned to %#lx\n",
			 bar, &start, size, align);
		return -EINVAL;
	}

	mutex_lock(&p2p_setup_lock);
	p2p = p2p_provider_setup(pdev);
	if (IS_ERR(p2p)) {
		ret = PTR_ERR(p2p);
		goto out_unlock;
	}

	span.first = pci_bus_address(pdev, bar) + offset;
	span.last = span.first + size - 1;
	span.overlaps = false;
	gen_pool_for_each_chunk(p2p->pool, p2p_chunk_overlaps, &span);
	if (span.overlaps) {
		pci_info(pdev, "P2PDMA: BAR %d range %pa+%#zx is already registered\n",
			 bar, &start, size);
		ret = -EBUSY;
		goto out_unlock;
	}

	region = devm_kzalloc(&pdev->dev, sizeof(*region), GFP_KERNEL);
	if (!region) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	region->provider = pdev;
	region->bus_offset = pci_bus_address(pdev, bar) -
			     pci_resource_start(pdev, bar);
	region->pgmap.range.start = start;
	region->pgmap.range.end = start + size - 1;
	region->pgmap.nr_range = 1;
	region->pgmap.type = MEMORY_DEVICE_PCI_P2PDMA;
	region->pgmap.ops = &p2p_pgmap_ops;
	ret = p2p_region_bitmap(&pdev->dev, region, size);
	if (ret)
		goto out_free_region;

	addr = devm_memremap_pages(&pdev->dev, &region->pgmap);
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		goto out_free_bitmap;
	}

	ret = devm_add_action(&pdev->dev, p2p_provider_close, pdev);
	if (ret)
		goto out_unmap;

	ret = p2p_region_add(p2p, region, addr, span.first,
			     dev_to_node(&pdev->dev));
	if (ret)
		goto out_unmap;
	/*
	 * Clear what the BAR holds in the background, once the provider's
	 * probe (which may allocate from the pool) has had time to finish.
	 */
	p2p_clear_kick_after(p2p, P2P_CLEAR_DELAY);

	mutex_unlock(&p2p_setup_lock);
	pci_info(pdev, "P2PDMA: %zu MiB of BAR %d at offset %#llx registered\n",
		 size >> 20, bar, offset);
	return 0;

out_unmap:
	devm_memunmap_pages(&pdev->dev, &region->pgmap);
out_free_bitmap:
	devm_release_action(&pdev->dev, p2p_bitmap_free, region->dirty);
out_free_region:
	devm_kfree(&pdev->dev, region);
out_unlock:
	mutex_unlock(&p2p_setup_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_add_resource);

/*
 * Set the published flag. A function of its own so that a KUnit test can
 * run an unbind between pci_p2pmem_publish()'s check and this store.
 */
static void p2p_set_published(struct pci_p2pdma *p2p, bool publish)
{
	KUNIT_STATIC_STUB_REDIRECT(p2p_set_published, p2p, publish);
	WRITE_ONCE(p2p->published, publish);
}

/**
 * pci_p2pmem_publish() - offer a provider's P2P memory to other drivers
 * @pdev: a provider that registered memory with pci_p2pdma_add_resource()
 * @publish: true to offer the memory, false to withdraw the offer
 *
 * Published memory is what pci_p2pmem_find_many() chooses from and what
 * pci_has_p2pmem() reports; the sysfs file p2pmem/published shows the
 * state. Withdrawing does not affect memory already allocated.
 * Does nothing on a device that registered no memory, and publishing is
 * ignored once the provider's driver has started to unbind.
 *
 * Context: any; does not sleep (RCU read side only).
 */
void pci_p2pmem_publish(struct pci_dev *pdev, bool publish)
{
	struct pci_p2pdma *p2p;

	/*
	 * The check and the store are one RCU read section, which
	 * p2p_provider_close() waits for before it clears published a last
	 * time: a store that raced with the start of an unbind is undone.
	 */
	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || READ_ONCE(p2p->closing))
		return;
	p2p_set_published(p2p, publish);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_publish);

/**
 * pci_has_p2pmem() - does a device offer published P2P memory
 * @pdev: the PCI device to check
 *
 * Context: any; does not sleep.
 *
 * Return: true if @pdev registered P2P memory and published it.
 */
bool pci_has_p2pmem(struct pci_dev *pdev)
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	return p2p && READ_ONCE(p2p->published);
}
EXPORT_SYMBOL_GPL(pci_has_p2pmem);

/**
 * pci_p2pmem_find_many() - pick published P2P memory close to all clients
 * @clients: devices that will DMA to or from the memory
 * @num_clients: number of entries in @clients; with none (0 or less)
 *	nothing is chosen
 *
 * Considers every provider that published its memory and that all
 * @clients can reach (see pci_p2pdma_distance_many()), and returns the
 * closest. When several are equally close, each is equally likely to be
 * chosen, which spreads the load over them.
 *
 * Context: process context, may sleep (walks the PCI device list taking
 * and dropping a reference on each device). Holds no lock on return.
 *
 * Return: the provider with a reference held (drop it with pci_dev_put()),
 * or NULL if no published provider suits every client or there is no
 * client.
 */
struct pci_dev *pci_p2pmem_find_many(struct device **clients, int num_clients)
{
	struct pci_dev *pdev = NULL, *best = NULL;
	int dist, best_dist = INT_MAX;
	u32 ties = 0;

	if (num_clients <= 0)
		return NULL;
	for_each_pci_dev(pdev) {
		if (!pci_has_p2pmem(pdev))
			continue;
		dist = pci_p2pdma_distance_many(pdev, clients, num_clients,
						false);
		if (dist < 0 || dist > best_dist)
			continue;
		if (dist < best_dist) {
			best_dist = dist;
			ties = 0;
		}
		/* Reservoir sampling: the k-th equal candidate wins with 1/k. */
		if (get_random_u32_below(++ties) == 0) {
			pci_dev_put(best);
			best = pci_dev_get(pdev);
		}
	}
	return best;
}
EXPORT_SYMBOL_GPL(pci_p2pmem_find_many);

/*
 * Allocate @size bytes and one pgmap reference for each of @refs users.
 * Kernel users (@cached) are served first from this CPU's cache; mmap()
 * takes memory from the pool, clean memory first if a run is long enough.
 */
static void *p2p_alloc(struct pci_dev *pdev, size_t size, unsigned long refs,
		       bool cached)
{
	int class = cached ? p2p_cache_class(size) : -1;
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	unsigned long addr = 0;

	if (!size)
		return NULL;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || READ_ONCE(p2p->closing))
		return NULL;
	if (class >= 0) {
		addr = p2p_cache_get(p2p, class);
		if (addr)
			region = p2p_region_of(p2p, addr);
	} else if (!cached) {
		addr = gen_pool_alloc_algo_owner(p2p->pool, size, p2p_algo_clean,
						 p2p, (void **)&region);
	}
	if (!addr) {
		addr = gen_pool_alloc_owner(p2p->pool, size, (void **)&region);
		if (!addr && p2p_cache_drain(p2p))
			addr = gen_pool_alloc_owner(p2p->pool, size,
						    (void **)&region);
		if (!addr)
			return NULL;
		/* Held now: the bits matter again once it is freed. */
		if (cached)
			p2p_mark(region, p2p_page_index(region, addr),
				 DIV_ROUND_UP(size, PAGE_SIZE), false);
	}
	/* A range whose pgmap is dying hands out nothing. */
	if (unlikely(!percpu_ref_tryget_live_rcu(&region->pgmap.ref))) {
		p2p_pool_free_dirty(p2p, region, addr, size);
		return NULL;
	}
	if (refs > 1)
		percpu_ref_get_many(&region->pgmap.ref, refs - 1);
	return (void *)addr;
}

/**
 * pci_alloc_p2pmem() - allocate P2P memory from a provider
 * @pdev: the provider
 * @size: bytes to allocate; the pool hands out whole pages, so the
 *	allocation is rounded up to a multiple of PAGE_SIZE
 *
 * The memory is aligned to PAGE_SIZE and physically contiguous within one
 * registered range. Its kernel
 * virtual address is returned; pci_p2pmem_virt_to_bus() gives the PCI bus
 * address, and the pages can be put in a scatterlist for dma_map_sg().
 * The provider's unbind waits until the memory is freed. The memory is
 * not cleared: it holds what its last user left. An allocation of 1, 2,
 * 4, 8 or 16 pages is served first from this CPU's cache of memory freed
 * by pci_free_p2pmem(); the pool is searched otherwise, and the caches
 * are emptied into it before an allocation fails.
 *
 * Context: any, including atomic and interrupt context; does not sleep
 * (RCU read side, a per-CPU spinlock, the lockless genalloc bitmap).
 *
 * Return: the virtual address, or NULL if @pdev has no P2P memory, not
 * enough contiguous memory is free, @size is 0, or the provider is being
 * unbound. In a nearly full pool, NULL also if the only piece that would
 * do is being cleared in the background at that moment (256 KiB at most;
 * see Documentation/driver-api/pci/p2pdma.rst).
 */
void *pci_alloc_p2pmem(struct pci_dev *pdev, size_t size)
{
	return p2p_alloc(pdev, size, 1, true);
}
EXPORT_SYMBOL_GPL(pci_alloc_p2pmem);

/**
 * pci_free_p2pmem() - free memory from pci_alloc_p2pmem()
 * @pdev: the provider it came from
 * @addr: the address pci_alloc_p2pmem() returned
 * @size: the size in bytes passed to pci_alloc_p2pmem(); freeing a
 *	different size corrupts the pool
 *
 * Drops the reference the allocation held on the provider's pages, which
 * may let a pending unbind of the provider finish. An allocation of 1, 2,
 * 4, 8 or 16 pages is kept in this CPU's cache for the next allocation of
 * its size (it counts as available); the rest goes back to the pool,
 * marked as holding data, so that an mmap() of p2pmem/allocate clears it
 * before userspace sees it. Warns once if @pdev has no P2P memory or
 * @addr is not in its P2P memory.
 *
 * Context: any, including atomic and interrupt context; does not sleep.
 */
void pci_free_p2pmem(struct pci_dev *pdev, void *addr, size_t size)
{
	struct p2p_region *region;
	struct pci_p2pdma *p2p;
	int class;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (WARN_ON_ONCE(!p2p))
		return;
	region = p2p_region_of(p2p, (unsigned long)addr);
	if (WARN_ON_ONCE(!region))
		return;
	/* After an unbind's grace period nothing goes into the caches. */
	class = p2p_cache_class(size);
	if (class < 0 || READ_ONCE(p2p->closing) ||
	    !p2p_cache_put(p2p, class, (unsigned long)addr))
		p2p_pool_free_dirty(p2p, region, (unsigned long)addr, size);
	percpu_ref_put(&region->pgmap.ref);
}
EXPORT_SYMBOL_GPL(pci_free_p2pmem);

/**
 * pci_p2pmem_virt_to_bus() - PCI bus address of P2P memory
 * @pdev: the provider the memory came from
 * @addr: a kernel virtual address inside memory from pci_alloc_p2pmem()
 *
 * The bus address is what a device below the same upstream bridge puts on
 * the wire to reach the memory; a device that goes through the host bridge
 * needs a DMA mapping instead (dma_map_sg()).
 *
 * Context: any; does not sleep.
 *
 * Return: the bus address; 0 if @addr is NULL or @pdev has no P2P memory;
 * all ones ((pci_bus_addr_t)-1) if @addr is not in @pdev's P2P memory.
 */
pci_bus_addr_t pci_p2pmem_virt_to_bus(struct pci_dev *pdev, void *addr)
{
	struct pci_p2pdma *p2p;
	phys_addr_t bus;

	guard(rcu)();
	p2p = rcu_dereference(pdev->p2pdma);
	if (!p2p || !addr)
		return 0;
	/* The pool's "physical" addresses are the BAR's bus addresses. */
	bus = gen_pool_virt_to_phys(p2p->pool, (unsigned long)addr);
	return bus == (phys_addr_t)-1 ? (pci_bus_addr_t)-1 : bus;
}
EXPORT_SYMBOL_GPL(pci_p2pmem_virt_to_bus);

/**
 * pci_p2pmem_alloc_sgl() - allocate P2P memory as a scatterlist
 * @pdev: the provider
 * @nents: set to the number of scatterlist entries on success (always 1);
 *	left alone on failure
 * @length: bytes to allocate, up to 4 GiB - 1; the pool rounds the
 *	allocation up to whole pages
 *
 * The memory is contiguous and aligned to PAGE_SIZE, so the list has a
 * single entry of @length bytes. Free it with pci_p2pmem_free_sgl().
 *
 * Context: process context; may sleep (allocates the list with GFP_KERNEL).
 *
 * Return: the scatterlist, or NULL if @length is 0, memory is short (for
 * the list or the P2P memory), @pdev has no P2P memory, or the provider
 * is being unbound.
 */
struct scatterlist *pci_p2pmem_alloc_sgl(struct pci_dev *pdev,
					 unsigned int *nents, u32 length)
{
	void *addr = pci_alloc_p2pmem(pdev, length);
	struct scatterlist *sg = NULL;

	if (addr)
		sg = kmalloc(sizeof(*sg), GFP_KERNEL);
	if (!sg) {
		if (addr)
			pci_free_p2pmem(pdev, addr, length);
		return NULL;
	}
	sg_init_one(sg, addr, length);
	*nents = 1;
	return sg;
}
EXPORT_SYMBOL_GPL(pci_p2pmem_alloc_sgl);

/**
 * pci_p2pmem_free_sgl() - free a scatterlist from pci_p2pmem_alloc_sgl()
 * @pdev: the provider it came from
 * @sgl: the list; its memory and the list itself are freed
 *
 * Context: any; does not sleep.
 */
void pci_p2pmem_free_sgl(struct pci_dev *pdev, struct scatterlist *sgl)
{
	struct scatterlist *sg;

	/* Lists from pci_p2pmem_alloc_sgl() have one entry; walk any length. */
	for (sg = sgl; sg; sg = sg_next(sg))
		pci_free_p2pmem(pdev, sg_virt(sg), sg->length);
	kfree(sgl);
}
EXPORT_SYMBOL_GPL(pci_p2pmem_free_sgl);

/* ------------------------------------------------------------------ */
/* DMA mapping                                                          */
/* ------------------------------------------------------------------ */

/**
 * pci_p2pdma_map_segment() - choose how a client maps one P2P segment
 * @state: per-scatterlist cache, zeroed by the caller before the first
 *	segment; it remembers the last pgmap and its route
 * @dev: the device doing the DMA; it must be a PCI function (unlike the
 *	orchestrator calls, this does not look for a PCI ancestor)
 * @sg: a segment whose page is P2P memory (is_pci_p2pdma_page())
 *
 * Called by the DMA mapping code (dma-direct, dma-iommu) for each P2P
 * segment of a scatterlist. For %PCI_P2PDMA_MAP_BUS_ADDR (the provider
 * and @dev share an upstream bridge that routes the request by address,
 * PCIe r6.0 sec 1.3.3) it fills in the segment's DMA address (the PCI bus
 * address) and length and marks it as a bus address so unmapping skips
 * it. For
 * %PCI_P2PDMA_MAP_THRU_HOST_BRIDGE the caller maps the segment normally.
 *
 * Context: any, including atomic; does not sleep.
 *
 * Return: the map type; %PCI_P2PDMA_MAP_NOT_SUPPORTED means the client
 * cannot reach the memory, or @dev is not a PCI function, and the caller
 * fails with -EREMOTEIO.
 */
enum pci_p2pdma_map_type
pci_p2pdma_map_segment(struct pci_p2pdma_map_state *state, struct device *dev,
		       struct scatterlist *sg)
{
	struct dev_pagemap *pgmap = sg_page(sg)->pgmap;

	if (state->pgmap != pgmap) {
		struct p2p_region *region = to_p2p_region(pgmap);
		struct p2p_route r;

		state->pgmap = pgmap;
		state->map = PCI_P2PDMA_MAP_NOT_SUPPORTED;
		state->bus_off = region->bus_offset;
		if (dev_is_pci(dev)) {
			p2p_route_get_pci(region->provider, to_pci_dev(dev),
					  &r, false);
			state->map = r.map;
		}
	}

	if (state->map != PCI_P2PDMA_MAP_BUS_ADDR)
		return state->map;

	/* Program the client with the BAR's bus address; unmap skips it. */
	sg_dma_mark_bus_address(sg);
	sg_dma_len(sg) = sg->length;
	sg->dma_address = state->bus_off + sg_phys(sg);
	return PCI_P2PDMA_MAP_BUS_ADDR;
}

/* ------------------------------------------------------------------ */
/* sysfs: /sys/bus/pci/devices/.../p2pmem/                              */
/* ------------------------------------------------------------------ */

static size_t p2p_size(struct pci_p2pdma *p2p)
{
	return gen_pool_size(p2p->pool);
}

static ssize_t p2p_pool_show(struct device *dev, char *buf,
			     size_t (*measure)(struct pci_p2pdma *))
{
	struct pci_p2pdma *p2p;

	guard(rcu)();
	p2p = rcu_dereference(to_pci_dev(dev)->p2pdma);
	return sysfs_emit(buf, "%zu\n", p2p ? measure(p2p) : 0);
}

static ssize_t size_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return p2p_pool_show(dev, buf, p2p_size);
}
static DEVICE_ATTR_RO(size);

static ssize_t available_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return p2p_pool_show(dev, buf, p2p_available);
}
static DEVICE_ATTR_RO(available);

static ssize_t published_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", pci_has_p2pmem(to_pci_dev(dev)));
}
static DEVICE_ATTR_RO(published);

/*
 * mmap of "allocate": each call gets fresh P2P memory for the whole
 * mapping, cleared to zero first (p2p_map_pages()). Every page is inserted
 * with the mapping as its only reference, so the page returns to the pool
 * (p2p_page_free()) once it is unmapped and no I/O pins it any more;
 * partial munmap frees just those pages. fork() shares the mapping with
 * the child: copying the page table takes a page reference and a mapcount
 * for each page, so a page returns only once every process has unmapped
 * it. The mapping cannot grow (VM_DONTEXPAND).
 */
/*
 * Every page is inserted at mmap time, so a fault means the mapping was
 * revoked by an unbind (or never filled): never hand out other memory.
 */
static vm_fault_t p2pmem_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

/*
 * A write to a present page whose PTE is read-only: the mapping was made
 * writable by mprotect() after the page was mapped without write access
 * (PROT_NONE or PROT_READ; kernfs's page_mkwrite asks for write notify).
 * BAR memory has nothing to write back, so the write may go ahead. The
 * fault path wants the folio locked; left unlocked, it would look for a
 * page cache mapping that P2P pages never have and retry the fault forever.
 */
static vm_fault_t p2pmem_page_mkwrite(struct vm_fault *vmf)
{
	folio_lock(page_folio(vmf->page));
	return VM_FAULT_LOCKED;
}

static const struct vm_operations_struct p2pmem_vm_ops = {
	.fault = p2pmem_fault,
	.page_mkwrite = p2pmem_page_mkwrite,
};

/* Pages that mmap() of "allocate" clears and inserts at a time: 2 MiB. */
#define P2P_MAP_BATCH	(SZ_2M / PAGE_SIZE)

/*
 * Zero what is dirty of @npages pages of fresh P2P memory at @kaddr and
 * insert them into @vma from its start, P2P_MAP_BATCH at a time:
 * vm_insert_pages() takes the page table lock once for a run of pages,
 * and the caller, who holds mmap_lock for write, may reschedule between
 * batches of a mapping that can be gigabytes long.
 *
 * Dirty memory holds what its last user left: another process, nvmet's
 * data buffers, NVMe queue entries or a previous boot. Most of it has
 * been cleared in the background by the time it is mapped again
 * (p2p_clear_work_fn()); what has not is cleared here.
 *
 * Each inserted page holds a reference of the mapping's; the idle
 * reference it had in the pool is dropped, so unmapping it returns it
 * (p2p_page_free()). Returns 0 or a negative errno, and sets *@done to
 * the number of pages inserted; the caller returns the others.
 */
static int p2p_map_pages(struct vm_area_struct *vma, void *kaddr,
			 unsigned long npages, unsigned long *done)
{
	struct p2p_region *region = to_p2p_region(virt_to_page(kaddr)->pgmap);
	unsigned long n, left, i;
	bool dirt = false;
	struct page **pages;
	void *chunk;
	int ret = 0;

	*done = 0;
	pages = kmalloc_array(min(npages, P2P_MAP_BATCH), sizeof(*pages),
			      GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (; *done < npages; *done += n) {
		chunk = kaddr + (*done << PAGE_SHIFT);
		n = min(npages - *done, P2P_MAP_BATCH);
		dirt |= p2p_clean(region,
				  p2p_page_index(region, (unsigned long)chunk), n);
		for (i = 0; i < n; i++)
			pages[i] = virt_to_page(chunk + (i << PAGE_SHIFT));
		left = n;
		ret = vm_insert_pages(vma, vma->vm_start + (*done << PAGE_SHIFT),
				      pages, &left);
		for (i = 0; i < n - left; i++)
			put_page(pages[i]);
		if (ret) {
			*done += n - left;
			break;
		}
		cond_resched();
	}
	kfree(pages);
	/* Where there was dirt to clear here, there may be more: clear it now. */
	if (dirt)
		p2p_clear_kick(rcu_dereference_protected(region->provider->p2pdma, 1));
	return ret;
}

/*
 * kernfs revokes every mapping of "allocate" when the unbind removes the
 * p2pmem group, but it finds them through the file's address_space, and
 * mmap() links a new mapping there only after p2pmem_allocate_mmap() has
 * returned and kernfs has let go of the file. An unbind can revoke in
 * between, miss the new mapping and then wait forever for its pages. So
 * each mmap() looks again on its way back to userspace, once the mapping
 * is linked (or was torn down), and revokes it if the unbind has started.
 */
struct p2p_mmap_check {
	struct callback_head work;
	struct pci_dev *pdev;
	struct file *file;
	struct percpu_ref *ref;	/* holds off the unbind until the check */
};

static void p2p_mmap_check_fn(struct callback_head *work)
{
	struct p2p_mmap_check *mc = container_of(work, struct p2p_mmap_check,
						 work);
	struct pci_p2pdma *p2p;
	bool closing;

	/*
	 * Seeing closing clear means this RCU section started before the end
	 * of the grace period in p2p_provider_close(), so the mapping, linked
	 * before it, is one that the revocation after that grace period finds.
	 */
	rcu_read_lock();
	p2p = rcu_dereference(mc->pdev->p2pdma);
	closing = !p2p || READ_ONCE(p2p->closing);
	rcu_read_unlock();
	if (closing)
		unmap_mapping_range(file_inode(mc->file)->i_mapping, 0, 0, 1);
	percpu_ref_put(mc->ref);
	fput(mc->file);
	kfree(mc);
}

/*
 * Memory for an mmap() of "allocate". If the pool is short, the clearing
 * work may hold part of the range that would do: pause it and try again.
 * The open sysfs file keeps the provider's state alive across the sleep.
 */
static void *p2p_alloc_mapping(struct pci_dev *pdev, size_t len,
			       unsigned long refs)
{
	struct pci_p2pdma *p2p = rcu_dereference_protected(pdev->p2pdma, 1);
	void *kaddr;

	if (!p2p)
		return NULL;
	/* What earlier munmap()s returned is in the pool for first-fit. */
	p2p_runs_flush(p2p);
	kaddr = p2p_alloc(pdev, len, refs, false);
	if (kaddr)
		return kaddr;
	atomic_inc(&p2p->clear_waiters);
	flush_delayed_work(&p2p->clear_work);
	kaddr = p2p_alloc(pdev, len, refs, false);
	if (atomic_dec_and_test(&p2p->clear_waiters))
		p2p_clear_kick(p2p);
	return kaddr;
}

static int p2pmem_allocate_mmap(struct file *filp, struct kobject *kobj,
				struct bin_attribute *attr,
				struct vm_area_struct *vma)
{
	struct pci_dev *pdev = to_pci_dev(kobj_to_dev(kobj));
	size_t len = vma->vm_end - vma->vm_start;
	unsigned long npages = len >> PAGE_SHIFT, i;
	struct p2p_mmap_check *mc;
	void *kaddr;
	int ret;

	/*
	 * VM_MAYSHARE, not VM_SHARED: a MAP_SHARED mapping of a file opened
	 * read-only lacks VM_SHARED but is shared all the same.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE)) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: allocate must be mapped MAP_SHARED\n",
				     current->comm);
		return -EINVAL;
	}
	if (vma->vm_pgoff) {
		pci_info_ratelimited(pdev, "P2PDMA: %s: allocate must be mapped at offset 0\n",
				     current->comm);
		return -EINVAL;
	}

	mc = kmalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return -ENOMEM;
	/* One reference for each page, and one for the check. */
	kaddr = p2p_alloc_mapping(pdev, len, npages + 1);
	if (!kaddr) {
		kfree(mc);
		pci_info_ratelimited(pdev, "P2PDMA: %s: no %zu bytes of P2P memory free\n",
				     current->comm, len);
		return -ENOMEM;
	}
	mc->pdev = pdev;
	mc->file = get_file(filp);
	mc->ref = &virt_to_page(kaddr)->pgmap->ref;
	init_task_work(&mc->work, p2p_mmap_check_fn);
	if (task_work_add(current, &mc->work, TWA_RESUME)) {
		/* Only an exiting task refuses: it maps nothing any more. */
		fput(mc->file);
		kfree(mc);
		for (i = 0; i < npages; i++)
			p2p_page_free(virt_to_page(kaddr + (i << PAGE_SHIFT)));
		percpu_ref_put(&virt_to_page(kaddr)->pgmap->ref);
		return -EINTR;
	}

	vma->vm_ops = &p2pmem_vm_ops;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/* Same memory type as the kernel's mapping of the BAR (uncached). */
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	ret = p2p_map_pages(vma, kaddr, npages, &i);
	if (!ret)
		return 0;
	/*
	 * Pages already inserted go back through p2p_page_free() when the
	 * failed mapping is torn down; return the rest directly.
	 */
	for (; i < npages; i++) {
		struct page *page = virt_to_page(kaddr + (i << PAGE_SHIFT));

		p2p_page_free(page);
	}
	return ret;
}

/*
 * Mode 0660, owner root, 1 TiB long: the 6.12 ABI of p2pmem/allocate. The
 * size means nothing (there is no read or write), but stat() reports it,
 * and some mmap() wrappers refuse a length beyond it (Python's mmap).
 */
static struct bin_attribute p2pmem_allocate_attr = {
	.attr = { .name = "allocate", .mode = 0660 },
	.size = SZ_1T,
	.mmap = p2pmem_allocate_mmap,
};

static const struct attribute_group p2pmem_group = {
	.name = "p2pmem",
	.attrs = (struct attribute *[]) {
		&dev_attr_size.attr, &dev_attr_available.attr,
		&dev_attr_published.attr, NULL
	},
	.bin_attrs = (struct bin_attribute *[]) { &p2pmem_allocate_attr, NULL },
};

/* ------------------------------------------------------------------ */
/* configfs helpers for the nvmet namespace "p2pmem" attribute          */
/* ------------------------------------------------------------------ */

/**
 * pci_p2pdma_enable_store() - parse a configfs "use P2P memory" setting
 * @page: the text written, NUL-terminated (configfs passes the user's write
 *	as is, usually with a trailing newline). First it is looked up as
 *	the name of a PCI device that published P2P memory ("0000:01:00.0";
 *	one trailing newline is ignored, nothing else is). Otherwise it is
 *	read as a boolean by the rules of kstrtobool(), which looks only at
 *	the first byte, or the first two for "on"/"of": "1", "y", "Y", "t",
 *	"T", "on" in any case are true; "0", "n", "N", "f", "F", "of(f)" in
 *	any case are false; whatever follows is ignored ("yess", "nope",
 *	"f00", and a string of any length). The exception is a leading
 *	digit: "0" or "1" counts only if the next byte is a control
 *	character (the end of the string, "\n", "\t", "\r", ...), so "10",
 *	"01", "1 " and "0000:ff:1f.7" (no such device) are refused.
 * @p2p_dev: set to the named device, with a reference the caller drops
 *	with pci_dev_put(); left as it is for a boolean or on error
 * @use_p2pdma: set to whether P2P memory is to be used (true for a device
 *	name); left as it is on error
 *
 * The device name is tried first, so a device name is never read as a
 * boolean. A boolean true means "any suitable provider" (the caller then
 * uses pci_p2pmem_find()); the caller initialises @p2p_dev to NULL to get
 * NULL in that case.
 *
 * Context: process context; may sleep.
 *
 * Return: 0 on success, or -ENODEV, logging one line that says why, when
 * @page:
 *
 * * names a PCI device that has not published P2P memory (none
 *   registered, or not published with pci_p2pmem_publish()), or
 * * starts with a digit followed by a byte that is not a control
 *   character (a longer number, or the name of a PCI device that does not
 *   exist), or
 * * is neither a PCI device name nor a boolean (including an empty string,
 *   a lone newline, and leading blanks).
 */
int pci_p2pdma_enable_store(const char *page, struct pci_dev **p2p_dev,
			    bool *use_p2pdma)
{
	int shown = min_t(size_t, strcspn(page, "\n"), 64);
	struct device *dev;
	bool val;

	dev = bus_find_device_by_name(&pci_bus_type, NULL, page);
	if (dev) {
		struct pci_dev *pdev = to_pci_dev(dev);

		if (!pci_has_p2pmem(pdev)) {
			pr_err("p2pmem: PCI device %s has no published peer-to-peer memory\n",
			       pci_name(pdev));
			pci_dev_put(pdev);
			return -ENODEV;
		}
		*p2p_dev = pdev;
		*use_p2pdma = true;
		return 0;
	}

	/*
	 * kstrtobool() would read "10", "1 " or "0000:ff:1f.7" (a device that
	 * does not exist) by their first byte. A digit must stand alone: the
	 * next byte (readable, @page is NUL-terminated) must be a control
	 * character such as the NUL or a newline.
	 */
	if (isdigit(page[0]) && !iscntrl(page[1])) {
		pr_err("p2pmem: '%.*s' is no PCI device, and a 0 or 1 must stand alone\n",
		       shown, page);
		return -ENODEV;
	}
	if (kstrtobool(page, &val)) {
		pr_err("p2pmem: '%.*s' is neither a PCI device nor a boolean\n",
		       shown, page);
		return -ENODEV;
	}
	*use_p2pdma = val;
	return 0;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_enable_store);

/**
 * pci_p2pdma_enable_show() - format a configfs "use P2P memory" setting
 * @page: the configfs page buffer (PAGE_SIZE bytes)
 * @p2p_dev: the chosen provider, or NULL for "any suitable provider"
 * @use_p2pdma: whether P2P memory is used at all
 *
 * Context: any; does not sleep.
 *
 * Return: the number of bytes written (never more than PAGE_SIZE): "0\n"
 * when P2P memory is not used, the provider's PCI name and a newline when
 * one was chosen, "1\n" otherwise.
 */
ssize_t pci_p2pdma_enable_show(char *page, struct pci_dev *p2p_dev,
			       bool use_p2pdma)
{
	const char *val = "0";

	if (use_p2pdma)
		val = p2p_dev ? pci_name(p2p_dev) : "1";
	return scnprintf(page, PAGE_SIZE, "%s\n", val);
}
EXPORT_SYMBOL_GPL(pci_p2pdma_enable_show);

/* ------------------------------------------------------------------ */
/* debugfs: /sys/kernel/debug/p2pdma/routes                             */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_DEBUG_FS
/*
 * One line per provider and PCI endpoint: the map type and distance a
 * driver would get, what decided it, and for a refusal, why. The format
 * is versioned (see p2pdma.rst): fields are only ever added before the
 * reason, with a new version number. Reading works every route out again
 * and refreshes the caches.
 */
static int p2p_routes_show(struct seq_file *m, void *unused)
{
	struct pci_dev *provider = NULL, *client;
	struct p2p_route r;
	char why[256];

	seq_puts(m, "# p2pdma routes v2\n"
		 "# provider client map_type distance policy acs host_bridge reason\n");
	for_each_pci_dev(provider) {
		if (!rcu_access_pointer(provider->p2pdma))
			continue;
		client = NULL;
		for_each_pci_dev(client) {
			if (client->hdr_type != PCI_HEADER_TYPE_NORMAL)
				continue;
			p2p_route_get_pci(provider, client, &r, true);
			p2p_route_explain(&r, why, sizeof(why));
			seq_printf(m, "%s %s %s ", pci_name(provider),
				   pci_name(client), p2p_map_type_name(r.map));
			if (r.map == PCI_P2PDMA_MAP_NOT_SUPPORTED)
				seq_puts(m, "- ");
			else
				seq_printf(m, "%u ", r.distance);
			if (r.map == PCI_P2PDMA_MAP_BUS_ADDR)
				seq_puts(m, "- ");
			else
				seq_printf(m, "%s ", r.override ? "override" : "builtin");
			seq_printf(m, "%s ", r.acs_dev ? pci_name(r.acs_dev) : "-");
			if (r.map == PCI_P2PDMA_MAP_NOT_SUPPORTED && r.host_bridge)
				seq_printf(m, "%04x:%02x ",
					   pci_domain_nr(r.host_bridge->bus),
					   r.host_bridge->bus->number);
			else
				seq_puts(m, "- ");
			seq_printf(m, "%s\n", why);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(p2p_routes);

static int __init p2p_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("p2pdma", NULL);

	debugfs_create_file("routes", 0444, dir, NULL, &p2p_routes_fops);
	return 0;
}
late_initcall(p2p_debugfs_init);
#endif /* CONFIG_DEBUG_FS */

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
/* drivers/pci/p2pdma-kunit is a link to the project's kunit/ directory. */
#include "p2pdma-kunit/p2pdma-kunit.h"
#endif
