// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma: look at and set up PCI peer-to-peer DMA on a live machine.
 *
 *   p2pdma list                 the P2P memory providers, how much of each
 *                               one's memory is in use, and whether
 *                               /dev/p2pmem can export it as a dma-buf
 *   p2pdma routes [DEV...]      provider x client route matrix, with the
 *                               knob that would change each refusal
 *   p2pdma route PROV CLIENT    one route, explained
 *   p2pdma bind BDF [...]       bind a device to the p2pmem-bar driver
 *   p2pdma unbind BDF           unbind it again
 *
 * It reads /sys/bus/pci/devices/<bdf>/p2pmem/, /sys/class/misc/p2pmem (the
 * dma-buf exporter /dev/p2pmem, CONFIG_PCI_P2PDMA_DMABUF), the kernel's debugfs route
 * table /sys/kernel/debug/p2pdma/routes (format version 2), the host bridge
 * policy /sys/module/pci_p2pdma/parameters/host_bridges and the p2pmem-bar
 * module parameters /sys/module/p2pmem_bar/parameters/. The environment
 * variable P2PDMA_SYSFS (default "/sys") replaces the leading "/sys" of
 * every path it reads or writes, so that it can run against a fake tree.
 *
 * "list -l" prints one line per provider: address size available published
 * driver vendor:device in_use export. in_use came in 1.1 and export in 1.2,
 * each after the fields before it, so that scripts reading the first fields
 * keep working. export is one word: "yes" (/dev/p2pmem exports its memory),
 * "unpublished" (the provider did not publish it: the export fails with
 * EACCES) or "no-dev" (no /dev/p2pmem: a kernel without the exporter, such
 * as Linux 6.12's own).
 *
 * Exit status:
 *   0  success
 *   1  the operation failed
 *   2  usage error
 *   3  permission denied (run as root)
 *   4  the kernel lacks this P2PDMA (no host_bridges parameter, no routes
 *      file, a routes file of another version, no p2pmem-bar driver)
 *
 * This file holds main(): the usage text and the options. sysfs.c reads
 * and writes sysfs, list.c lists the providers, routes.c loads the
 * kernel's route table and tells what would allow a refused route,
 * print.c prints the routes and explains one, bind.c binds and unbinds;
 * p2pdma.h is what they share.
 *
 * Only libc is needed: make -C tools/pci/p2pdma
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2pdma.h"

#define VERSION		"1.2"

static bool opt_list;

static const char usage_text[] =
"Usage: p2pdma [-l] list\n"
"       p2pdma [-l] routes [DEV...]\n"
"       p2pdma [-l] route PROVIDER CLIENT\n"
"       p2pdma bind BDF [--bar N] [--offset BYTES] [--size BYTES] [--no-publish] [--force]\n"
"       p2pdma unbind BDF [--force]\n"
"       p2pdma --help | --version\n"
"\n"
"Look at and set up PCI peer-to-peer DMA (P2PDMA) on this machine.\n"
"\n"
"  list     every P2P memory provider (a PCI function with a p2pmem directory):\n"
"           address, size, available and in-use bytes (in use: size - available,\n"
"           held by mappings of p2pmem/allocate and by kernel users), published,\n"
"           export (whether /dev/p2pmem can export its memory as a dma-buf:\n"
"           'yes', 'no (unpublished)', 'no (no /dev/p2pmem)' for a kernel\n"
"           without the exporter), driver, vendor:device\n"
"  routes   the route from each provider (rows) to each client (columns) as the\n"
"           kernel computes it: 'bus N' (by PCI bus address), 'hb N' (through\n"
"           the host bridge), N the distance, 'hb N*' allowed by override (an\n"
"           allow rule of pci_p2pdma.host_bridges, not the kernel's built-in\n"
"           list, allows it: see the legend), or 'REFUSED[n]' with footnote n\n"
"           below: the kernel's reason and the knob that would allow the route\n"
"           (the pci_p2pdma.host_bridges value to write). The kernel API gives\n"
"           a refused pair the distance -1: refused, not a negative distance.\n"
"           DEV... (PCI addresses, DDDD:BB:DD.F or BB:DD.F) keeps only routes\n"
"           whose provider and client are both listed, so 'routes A B C' answers\n"
"           \"can A, B and C use each other's P2P memory\". Reads\n"
"           /sys/kernel/debug/p2pdma/routes: needs root and debugfs mounted.\n"
"  route    the route from PROVIDER to CLIENT, explained: allowed (how, the\n"
"           distance, by override or not) or refused (why, the bridge with ACS\n"
"           redirect, the host bridge that refuses, what decided it and the\n"
"           knob that would allow it), and whether /dev/p2pmem can export\n"
"           PROVIDER's memory as a dma-buf and an importer on CLIENT attach\n"
"           it (refused with EREMOTEIO where the route is). Exit status 0\n"
"           either way.\n"
"  bind     bind BDF to the p2pmem-bar driver, which offers a memory BAR as P2P\n"
"           memory: --bar N (default: the driver picks), --offset BYTES (0),\n"
"           --size BYTES (0: the rest of the BAR), --no-publish (keep it out of\n"
"           the orchestrator's choice; default: published). BYTES may end in\n"
"           K, M or G. A device bound to another driver is refused unless\n"
"           --force, which unbinds it first. The p2pmem_bar module parameters\n"
"           are set for this probe only and restored afterwards.\n"
"  unbind   unbind BDF from p2pmem-bar and clear its driver_override (--force:\n"
"           from whatever driver it is bound to)\n"
"\n"
"Options:\n"
"  -l, --list     machine-friendly output: no header, one line per provider\n"
"                 (address size available published driver vendor:device\n"
"                 in_use export: bytes, and export one of yes, unpublished,\n"
"                 no-dev) or per route (the fields of the kernel's routes\n"
"                 file: provider client map_type distance policy acs\n"
"                 host_bridge reason)\n"
"  -h, --help     this text\n"
"  -V, --version  the version and the routes file format it reads\n"
"\n"
"Environment:\n"
"  P2PDMA_SYSFS   replaces /sys in every path read or written (default /sys),\n"
"                 to run against a fake tree\n"
"\n"
"Exit status: 0 success, 1 the operation failed, 2 usage error,\n"
"3 permission denied (run as root), 4 the kernel lacks this P2PDMA (no\n"
"host_bridges parameter, no routes file v2, no p2pmem-bar driver).\n";

enum { OPT_BAR = 256, OPT_OFFSET, OPT_SIZE, OPT_NO_PUBLISH, OPT_FORCE };

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "list", no_argument, NULL, 'l' },
	{ "bar", required_argument, NULL, OPT_BAR },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "no-publish", no_argument, NULL, OPT_NO_PUBLISH },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	struct bind_opts o = { "-1", "0", "0", true, false };
	const char *env = getenv("P2PDMA_SYSFS");
	const char *bind_opt = NULL, *cmd;
	char **devs;
	char *end;
	int c, i, n;
	long bar;

	if (env && env[0])
		sysfs = env;
	while ((c = getopt_long(argc, argv, "hlV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		case 'V':
			printf("p2pdma %s (reads the route table format \"%s\")\n", VERSION,
			       ROUTES_HEADER);
			return EXIT_OK;
		case 'l':
			opt_list = true;
			break;
		case OPT_BAR:
			errno = 0;
			bar = strtol(optarg, &end, 0);
			if (end == optarg || *end || errno || bar < -1 || bar > 5)
				usage_error("--bar '%s': a BAR is 0 to 5 (-1: the driver picks)",
					    optarg);
			snprintf(o.bar, sizeof(o.bar), "%ld", bar);
			bind_opt = "--bar";
			break;
		case OPT_OFFSET:
			parse_bytes(optarg, o.offset, sizeof(o.offset));
			bind_opt = "--offset";
			break;
		case OPT_SIZE:
			parse_bytes(optarg, o.size, sizeof(o.size));
			bind_opt = "--size";
			break;
		case OPT_NO_PUBLISH:
			o.publish = false;
			bind_opt = "--no-publish";
			break;
		case OPT_FORCE:
			o.force = true;
			break;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		usage_error("%s", "no command (list, routes, route, bind, unbind)");
	cmd = argv[optind++];
	n = argc - optind;
	if (strcmp(cmd, "bind") && bind_opt)
		usage_error("%s is an option of bind only", bind_opt);
	if (o.force && strcmp(cmd, "bind") && strcmp(cmd, "unbind"))
		usage_error("%s", "--force is an option of bind and unbind only");
	if (opt_list && strcmp(cmd, "list") && strcmp(cmd, "routes") && strcmp(cmd, "route"))
		usage_error("%s", "--list is an option of list, routes and route only");

	if (!strcmp(cmd, "list")) {
		if (n)
			usage_error("list takes no argument ('%s')", argv[optind]);
		return cmd_list(opt_list);
	}
	if (!strcmp(cmd, "routes")) {
		devs = xrealloc(NULL, (n + 1) * sizeof(*devs));
		for (i = 0; i < n; i++)
			devs[i] = parse_addr(argv[optind + i]);
		return cmd_routes(devs, n, opt_list);
	}
	if (!strcmp(cmd, "route")) {
		if (n != 2)
			usage_error("%s", "route takes two PCI addresses: PROVIDER CLIENT");
		return cmd_route(parse_addr(argv[optind]), parse_addr(argv[optind + 1]),
				 opt_list);
	}
	if (!strcmp(cmd, "bind") || !strcmp(cmd, "unbind")) {
		if (n != 1)
			usage_error("%s takes one PCI address", cmd);
		if (!strcmp(cmd, "bind"))
			return cmd_bind(parse_addr(argv[optind]), &o);
		return cmd_unbind(parse_addr(argv[optind]), o.force);
	}
	usage_error("unknown command '%s' (list, routes, route, bind, unbind)", cmd);
	return EXIT_USAGE;
}
