// SPDX-License-Identifier: GPL-2.0
/*
 * PCI peer-to-peer DMA: debugfs.
 *
 * Owns /sys/kernel/debug/p2pdma/routes, the route of every provider and
 * PCI endpoint and the reason for each refusal, in a versioned text format
 * described in Documentation/admin-guide/p2pdma/routes.rst.
 */

#define pr_fmt(fmt) "pci-p2pdma: " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "../pci.h"
#include "p2pdma.h"

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
