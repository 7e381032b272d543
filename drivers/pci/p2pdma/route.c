// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: routes.
 *
 * Owns how a client reaches a provider (PCIe Base Specification r6.0):
 *  - Below a common upstream bridge, a switch or root port forwards a
 *    peer request by address without involving the host (sec 1.3.3), so
 *    the client is programmed with the PCI bus address of the BAR.
 *  - ACS P2P Request Redirect, Completion Redirect or Egress Control on a
 *    bridge on that path (sec 6.12.1.1, ACS Control register sec 7.7.8.3),
 *    or on the provider or client function itself (a function of a
 *    multi-function device or an SR-IOV VF, sec 6.12.1.2), sends the
 *    traffic up to the root complex instead, where host-bridge.c decides.
 * It also owns each provider's cache of route verdicts, the distance the
 * orchestrators compare, and the map type the DMA API asks for.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <kunit/static_stub.h>
#include <linux/bitfield.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "../pci.h"
#include "p2pdma.h"

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
VISIBLE_IF_KUNIT void p2p_route_compute(struct pci_dev *provider, struct pci_dev *client,
					struct p2p_route *r)
{
	unsigned int depth_p = p2p_depth(provider), depth_c = p2p_depth(client);
	unsigned int up_p = 0, up_c = 0, dp = depth_p, dc = depth_c;
	struct pci_host_bridge *hb_p, *hb_c;
	struct pci_dev *a = provider, *b = client;
	bool acs = false;

	memset(r, 0, sizeof(*r));
	if (provider == client) {
		r->map = PCI_P2PDMA_MAP_BUS_ADDR;
		return;
	}

	/*
	 * Lowest common ancestor: level the two walks, then climb together.
	 * On the way, note whether any function below it has an ACS
	 * capability: only those can redirect.
	 */
	for (; dp > dc; dp--, up_p++) {
		acs |= a->acs_cap;
		a = pci_upstream_bridge(a);
	}
	for (; dc > dp; dc--, up_c++) {
		acs |= b->acs_cap;
		b = pci_upstream_bridge(b);
	}
	while (a != b) {
		acs |= a->acs_cap || b->acs_cap;
		a = pci_upstream_bridge(a);
		b = pci_upstream_bridge(b);
		up_p++;
		up_c++;
	}

	if (a) {
		/*
		 * Walk the paths again, reading ACS Control, only if a
		 * function on them (the common bridge included) has the
		 * capability; without one nothing on the path redirects.
		 */
		if (acs || a->acs_cap) {
			r->acs_dev = p2p_redirect_on_path(provider, a,
							  &r->unsure);
			if (!r->acs_dev)
				r->acs_dev = p2p_redirect_on_path(client, a,
								  &r->unsure);
		}
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

VISIBLE_IF_KUNIT unsigned long p2p_client_key(struct pci_dev *client)
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
void p2p_route_get_pci(struct pci_dev *provider, struct pci_dev *cdev,
		       struct p2p_route *r, bool fresh)
{
	unsigned long key = p2p_client_key(cdev), flags, v;
	struct pci_p2pdma *p2p;
	void *entry = NULL;
	unsigned int policy_seq;

	rcu_read_lock();
	p2p = rcu_dereference(provider->p2pdma);
	if (p2p && !fresh)
		entry = xa_load(&p2p->routes, key);
	if (xa_is_value(entry)) {
		v = xa_to_value(entry);
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
	policy_seq = p2p_policy_seq_begin();
	p2p_route_compute(provider, cdev, r);
	if (p2p) {
		BUILD_BUG_ON(!FIELD_FIT(P2P_PACK_MAP, PCI_P2PDMA_MAP_NONE) ||
			     !FIELD_FIT(P2P_PACK_MAP, PCI_P2PDMA_MAP_NOT_SUPPORTED) ||
			     !FIELD_FIT(P2P_PACK_MAP, PCI_P2PDMA_MAP_BUS_ADDR) ||
			     !FIELD_FIT(P2P_PACK_MAP, PCI_P2PDMA_MAP_THRU_HOST_BRIDGE));
		v = FIELD_PREP(P2P_PACK_MAP, r->map) |
		    FIELD_PREP(P2P_PACK_WHY, r->why) |
		    (r->override ? P2P_PACK_OVERRIDE : 0) |
		    ((unsigned long)r->distance << P2P_PACK_DIST_SHIFT);

		/*
		 * A refresh that finds this very verdict cached has nothing
		 * to store: the orchestrators refresh every route they are
		 * asked about, and mostly find it unchanged. Skipping the
		 * store adds nothing to the cache, so no verdict of an older
		 * policy can survive through it: an entry seen here that
		 * predates a policy change is dropped by that change.
		 */
		if (fresh)
			entry = xa_load(&p2p->routes, key);
		if (!r->unsure && entry == xa_mk_value(v))
			goto out;
		/*
		 * An orchestrator's question refreshes a route that is cached
		 * but does not cache a new one: most pairs it asks about are
		 * never mapped (find_many asks about every provider). The
		 * first mapping caches the route.
		 */
		if (fresh && !entry)
			goto out;

		/*
		 * Best effort: a verdict that fails to cache is recomputed.
		 * Checked under the lock p2p_routes_forget_all() takes after
		 * a policy change, so no verdict of the old policy survives.
		 */
		xa_lock_irqsave(&p2p->routes, flags);
		if (r->unsure || p2p_policy_seq_retry(policy_seq))
			__xa_erase(&p2p->routes, key);
		else
			__xa_store(&p2p->routes, key, xa_mk_value(v),
				   GFP_ATOMIC | __GFP_NOWARN);
		xa_unlock_irqrestore(&p2p->routes, flags);
	}
out:
	rcu_read_unlock();
}

/*
 * Drop every cached verdict of every provider, after the host bridge
 * policy changed. Process context.
 */
void p2p_routes_forget_all(void)
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
VISIBLE_IF_KUNIT void __maybe_unused p2p_route_lookup(struct pci_dev *provider,
						      struct device *client,
						      struct p2p_route *r)
{
	p2p_route_get(provider, client, r, false);
}

const char *p2p_map_type_name(enum pci_p2pdma_map_type map)
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
void p2p_route_explain(const struct p2p_route *r, char *buf,
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
		if (p2p_policy_match(hb, p2p_host_bridge_id(hb), &rule) &&
		    !rule.allow) {
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
VISIBLE_IF_KUNIT void p2p_route_reason(struct pci_dev *provider, struct device *client,
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
/* DMA mapping                                                          */
/* ------------------------------------------------------------------ */

/**
 * __pci_p2pdma_update_state() - the map type of a P2P page, for pci_p2pdma_state()
 * @state: the mapping's state; left as it is if @page has the provider of
 *	the last page it saw
 * @dev: the device doing the DMA; it must be a PCI function (unlike the
 *	orchestrator calls, this does not look for a PCI ancestor)
 * @page: a P2P page (is_pci_p2pdma_page())
 *
 * Called through pci_p2pdma_state() by the DMA mapping code (dma-direct,
 * dma-iommu, the block layer, hmm) for each P2P page. Sets @state->mem to
 * the page's provider (its BAR) and @state->map to that provider's map
 * type for @dev, the verdict cached for the pair (pci_p2pdma_map_type()):
 * for %PCI_P2PDMA_MAP_BUS_ADDR (the provider and @dev share an upstream
 * bridge that routes the request by address, PCIe r6.0 sec 1.3.3) the
 * caller programs @dev with pci_p2pdma_bus_addr_map(); for
 * %PCI_P2PDMA_MAP_THRU_HOST_BRIDGE it maps the page as any memory; for
 * %PCI_P2PDMA_MAP_NOT_SUPPORTED it fails.
 *
 * Context: any, including atomic; does not sleep.
 *
 * Return: @state->map, as set.
 */
enum pci_p2pdma_map_type
__pci_p2pdma_update_state(struct pci_p2pdma_map_state *state,
			  struct device *dev, struct page *page)
{
	struct p2pdma_provider *mem = p2p_page_region(page)->mem;

	if (state->mem != mem || state->map == PCI_P2PDMA_MAP_UNKNOWN) {
		state->mem = mem;
		state->map = pci_p2pdma_map_type(mem, dev);
	}
	return state->map;
}

/**
 * pci_p2pdma_map_type() - how a device reaches a provider's BAR
 * @provider: a BAR of a PCI function, from pcim_p2pdma_provider()
 * @dev: the device that will DMA to or from that BAR; it must be a PCI
 *	function (as on the DMA mapping path, no PCI ancestor is looked for)
 *
 * For exporters that map the BAR for another device without struct
 * pages (a dma-buf of MMIO ranges): %PCI_P2PDMA_MAP_BUS_ADDR, program
 * @dev with bus addresses (pci_p2pdma_bus_addr_map()); with
 * %PCI_P2PDMA_MAP_THRU_HOST_BRIDGE, map the CPU physical addresses with
 * the DMA API; %PCI_P2PDMA_MAP_NOT_SUPPORTED, @dev must not be given the
 * memory. The rules are those of pci_p2pdma_distance() (ACS, host bridges,
 * pci_p2pdma.host_bridges=, Documentation/driver-api/pci/p2pdma.rst);
 * the verdict is the one cached for the pair, as the DMA mapping path
 * uses it.
 *
 * Context: any, including atomic; does not sleep. @provider must stay
 * valid, which it does while the driver of its PCI function stays bound.
 *
 * Return: the map type; %PCI_P2PDMA_MAP_NOT_SUPPORTED also when @dev is
 * not a PCI function.
 */
enum pci_p2pdma_map_type pci_p2pdma_map_type(struct p2pdma_provider *provider,
					     struct device *dev)
{
	struct p2p_route r;

	if (!dev_is_pci(dev))
		return PCI_P2PDMA_MAP_NOT_SUPPORTED;
	p2p_route_get_pci(to_pci_dev(provider->owner), to_pci_dev(dev), &r,
			  false);
	return r.map;
}
EXPORT_SYMBOL_GPL(pci_p2pdma_map_type);

/*
 * pci_p2pdma.host_bridges=: host-bridge-policy.c parses and keeps the
 * rules; a change also drops every cached verdict here, and then
 * host-bridge.c names what the new rules risk.
 */
VISIBLE_IF_KUNIT int p2p_policy_set(const char *val, const struct kernel_param *kp)
{
	int ret = p2p_policy_install(val);

	if (!ret && p2p_policy_booted()) {
		p2p_routes_forget_all();
		p2p_check_risks();
	}
	return ret;
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

#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST
#include "tests/route-kunit.h"
#if IS_ENABLED(CONFIG_HMM_MIRROR) && IS_ENABLED(CONFIG_DEVICE_PRIVATE)
#include "tests/hmm-p2p-kunit.h"
#endif
#endif
