// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma routes and p2pdma route: the provider x client matrix with its
 * footnotes, the knobs that would allow a refused route and the warning
 * of a route allowed by override; one route explained, with the export of
 * the provider's memory as a dma-buf.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2pdma.h"

#define CELL_LEN 32
#define VERIFY_DOC "Documentation/admin-guide/p2pdma/host-bridges.rst, \"Verifying a host bridge before allowing it\""

/* Add @s to the set @v of @n strings unless it is there already. */
static void add_unique(const char ***v, size_t *n, const char *s)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool listed(const char *addr, char **devs, int ndevs)
{
	int i;

	if (!ndevs)
		return true;
	for (i = 0; i < ndevs; i++)
		if (!strcmp(devs[i], addr))
			return true;
	return false;
}

/* The matrix cell of a route: "bus 4", "hb 2052", "hb 2052*", "REFUSED[1]". */
static void cell_text(const struct route *r, char *buf)
{
	const char *map;

	if (!r) {
		snprintf(buf, CELL_LEN, "?");
		return;
	}
	map = r->f[F_MAP];
	if (!strcmp(map, "refused"))
		snprintf(buf, CELL_LEN, "REFUSED[%d]", r->note);
	else if (!strcmp(map, "bus-address"))
		snprintf(buf, CELL_LEN, "bus %.20s", r->f[F_DIST]);
	else if (!strcmp(map, "through-host-bridge"))
		snprintf(buf, CELL_LEN, "hb %.20s%s", r->f[F_DIST], by_override(r) ? "*" : "");
	else
		snprintf(buf, CELL_LEN, "%.19s %.10s%s", map, r->f[F_DIST],
			 by_override(r) ? "*" : "");
}

/*
 * What would allow the refused route @r, each line after @indent: the
 * pci_p2pdma.host_bridges value, and clearing the ACS redirect. Returns
 * false when no knob applies (no host bridge refused it).
 */
static bool print_knob(const struct route *r, const char *rules, const char *indent)
{
	const char *acs = r->f[F_ACS], *policy = r->f[F_POLICY];
	char val[RULES_LEN + 128];

	if (!strcmp(r->f[F_HB], "-") ||
	    (strcmp(policy, "builtin") && strcmp(policy, "override")))
		return false;
	allow_value(r, rules, val, sizeof(val));
	if (!strcmp(policy, "override"))
		printf("%sa deny rule of pci_p2pdma.host_bridges refuses it (now: %s)\n",
		       indent, rules[0] ? rules : "empty");
	printf("%sallow it: echo '%s' > /sys/" HB_PARAM " (at boot: pci_p2pdma.host_bridges=%s)\n",
	       indent, val, val);
	if (strcmp(acs, "-"))
		printf("%sor turn off ACS P2P redirect on %s: %s%s %s\n", indent, acs,
		       "boot with pci=config_acs=00xx@", acs, "(this can merge IOMMU groups)");
	return true;
}

/*
 * One footnote: why the kernel refused a route and what would allow it.
 * Returns whether it names a knob.
 */
static bool print_note(const struct route *r, const char *rules)
{
	printf("[%d] %s -> %s: %s\n", r->note, r->f[F_PROVIDER], r->f[F_CLIENT],
	       reason_of(r));
	return print_knob(r, rules, "    ");
}

/* After the knobs: what an allow rule means. */
static void print_allow_caveat(const char *indent)
{
	printf("%sAn allow rule makes a route allowed by override: use one only for a host\n"
	       "%sbridge known to forward P2P requests (see " VERIFY_DOC ").\n",
	       indent, indent);
}

static void print_row(const char *head, int w0, char (*cells)[CELL_LEN],
		      const int *w, size_t n)
{
	size_t j;

	printf("%-*s", (int)(n ? w0 : 0), head);
	for (j = 0; j < n; j++)
		printf("  %-*s", j + 1 < n ? w[j] : 0, cells[j]);
	printf("\n");
}

static void print_fields(const struct route *r)
{
	int k;

	for (k = 0; k < NR_FIELDS; k++)
		printf("%s%c", r->f[k], k + 1 < NR_FIELDS ? ' ' : '\n');
}

/* The warning of a route allowed by override, each line after @indent. */
static void print_override_warning(const char *indent)
{
	printf("%san allow rule of pci_p2pdma.host_bridges allows it, not the kernel's built-in\n"
	       "%slist of host bridges: nothing vouches that the root complex forwards peer-to-\n"
	       "%speer requests, and if it does not, DMA on the route can lose or corrupt data.\n"
	       "%sSee " VERIFY_DOC ".\n", indent, indent, indent, indent);
}

int cmd_routes(char **devs, int ndevs, bool opt_list)
{
	char rules[RULES_LEN];
	const char **prov = NULL, **cli = NULL;
	size_t np = 0, nc = 0, i, j;
	char (*cells)[CELL_LEN];
	struct routes t = { NULL, 0 };
	int *w, w0, note = 0, missing = 0, override = 0, status;

	status = load_all(rules, &t, devs, ndevs);
	if (status)
		return status;

	if (opt_list) {
		for (i = 0; i < t.nr; i++) {
			struct route *r = &t.r[i];

			if (listed(r->f[F_PROVIDER], devs, ndevs) &&
			    listed(r->f[F_CLIENT], devs, ndevs))
				print_fields(r);
		}
		return EXIT_OK;
	}

	for (i = 0; i < t.nr; i++) {
		if (listed(t.r[i].f[F_PROVIDER], devs, ndevs))
			add_unique(&prov, &np, t.r[i].f[F_PROVIDER]);
		if (listed(t.r[i].f[F_CLIENT], devs, ndevs))
			add_unique(&cli, &nc, t.r[i].f[F_CLIENT]);
	}
	if (!np || !nc) {
		printf(ndevs ? "(no P2P memory provider and client among the devices listed)\n" :
		       "(no P2P memory providers)\n");
		return EXIT_OK;
	}
	qsort(prov, np, sizeof(*prov), cmp_str);
	qsort(cli, nc, sizeof(*cli), cmp_str);

	cells = xrealloc(NULL, np * nc * sizeof(*cells));
	w = xrealloc(NULL, nc * sizeof(*w));
	w0 = strlen("provider\\client");
	for (j = 0; j < nc; j++)
		w[j] = strlen(cli[j]);
	for (i = 0; i < np; i++) {
		if ((int)strlen(prov[i]) > w0)
			w0 = strlen(prov[i]);
		for (j = 0; j < nc; j++) {
			struct route *r = find_route(&t, prov[i], cli[j]);

			if (r && !strcmp(r->f[F_MAP], "refused"))
				r->note = ++note;
			missing += !r;
			override += r && by_override(r);
			cell_text(r, cells[i * nc + j]);
			if ((int)strlen(cells[i * nc + j]) > w[j])
				w[j] = strlen(cells[i * nc + j]);
		}
	}

	/* The header row: the clients. */
	{
		char (*head)[CELL_LEN] = xrealloc(NULL, nc * sizeof(*head));

		for (j = 0; j < nc; j++)
			snprintf(head[j], CELL_LEN, "%s", cli[j]);
		print_row("provider\\client", w0, head, w, nc);
		free(head);
	}
	for (i = 0; i < np; i++)
		print_row(prov[i], w0, &cells[i * nc], w, nc);
	printf("\nbus N: by PCI bus address, hb N: through the host bridge (N: the distance)%s\n",
	       missing ? ", ?: not in the kernel's table" : "");
	if (note)
		printf("REFUSED[n]: refused, footnote n (%s: refused, not a negative distance)\n",
		       "the kernel API's distance for it is -1");
	if (override) {
		printf("*: allowed by override:\n");
		print_override_warning("   ");
	}
	printf("pci_p2pdma.host_bridges: %s\n", rules[0] ? rules : "(no rules)");
	if (note) {
		bool knob = false;

		printf("\nRefused:\n");
		for (i = 0; i < np; i++)
			for (j = 0; j < nc; j++) {
				struct route *r = find_route(&t, prov[i], cli[j]);

				if (r && r->note)
					knob |= print_note(r, rules);
			}
		if (knob)
			print_allow_caveat("");
	}
	free(cells);
	free(w);
	free(prov);
	free(cli);
	return EXIT_OK;
}

/*
 * Whether /dev/p2pmem exports @provider's memory as a dma-buf, and whether
 * an importer on @client can attach it: the attach follows the route, a
 * refused one fails with EREMOTEIO.
 */
static void print_export(const char *provider, const char *client, bool refused)
{
	enum export_state exp = export_state(provider, NULL);

	printf("  export:       ");
	if (exp == EXPORT_YES)
		printf("yes, as a dma-buf by /dev/p2pmem; an importer on %s %s\n", client,
		       refused ? "cannot attach it (EREMOTEIO, the route is refused)" :
		       "can attach it");
	else if (exp == EXPORT_UNPUBLISHED)
		printf("no: the provider did not publish its memory (EACCES)\n");
	else if (exp == EXPORT_NO_DEV)
		printf("no: no /dev/p2pmem (a kernel without CONFIG_PCI_P2PDMA_DMABUF)\n");
	else
		printf("no: the provider has no P2P memory\n");
}

/* The route from @provider to @client, explained. */
int cmd_route(char *provider, char *client, bool opt_list)
{
	char *devs[2] = { provider, client };
	struct routes t = { NULL, 0 };
	char rules[RULES_LEN];
	const char *map, *how;
	struct route *r;
	int status;
	bool hb;

	status = load_all(rules, &t, devs, 2);
	if (status)
		return status;
	r = find_route(&t, provider, client);
	if (!r) {
		fprintf(stderr,
			"%s: no route from %s to %s in the kernel's table (%s is not a P2P memory provider)\n",
			prog, provider, client, provider);
		return EXIT_FAIL;
	}
	if (opt_list) {
		print_fields(r);
		return EXIT_OK;
	}
	map = r->f[F_MAP];
	hb = strcmp(r->f[F_HB], "-");
	if (!strcmp(map, "refused")) {
		printf("%s -> %s: refused\n", provider, client);
		printf("  distance:     -1 in the kernel API (pci_p2pdma_distance()): %s\n",
		       "refused, not a negative distance");
		printf("  reason:       %s\n", reason_of(r));
		printf("  ACS redirect: %s\n", strcmp(r->f[F_ACS], "-") ? r->f[F_ACS] : "none");
		printf("  host bridge:  %s\n", hb ? r->f[F_HB] : "none");
		printf("  decided by:   %s\n", !hb ? "no host bridge policy (see the reason)" :
		       !strcmp(r->f[F_POLICY], "builtin") ?
		       "the kernel's built-in host bridge list" :
		       !strcmp(r->f[F_POLICY], "override") ?
		       "a deny rule of pci_p2pdma.host_bridges" : r->f[F_POLICY]);
		print_export(provider, client, true);
		if (!print_knob(r, rules, "  "))
			printf("  no knob: no host bridge refused it, no setting allows it\n");
		else
			print_allow_caveat("  ");
		return EXIT_OK;
	}
	how = !strcmp(map, "bus-address") ? "by PCI bus address" :
	      !strcmp(map, "through-host-bridge") ? "through the host bridge" : map;
	printf("%s -> %s: allowed%s %s, distance %s\n", provider, client,
	       by_override(r) ? " by override," : "", how, r->f[F_DIST]);
	if (by_override(r))
		printf("  decided by:   pci_p2pdma.host_bridges (now: %s)\n", rules);
	else if (!strcmp(r->f[F_POLICY], "builtin"))
		printf("  decided by:   the kernel's built-in host bridge list\n");
	print_export(provider, client, false);
	if (by_override(r))
		print_override_warning("  ");
	return EXIT_OK;
}
