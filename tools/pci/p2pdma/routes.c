// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma: the kernel's route table. Loading it (the debugfs routes file,
 * format version 2, with the host bridge policy), finding a route, what a
 * route's fields mean (allowed by override, the reason of a refusal) and
 * the pci_p2pdma.host_bridges value that would allow a refused one.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2pdma.h"

static void strip_nl(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* Split one route line in place; false when it is malformed. */
static bool split_route(char *s, struct route *r)
{
	int i;

	for (i = 0; i < F_REASON; i++) {
		char *sp = strchr(s, ' ');

		if (!sp || sp == s)
			return false;
		*sp = '\0';
		r->f[i] = s;
		s = sp + 1;
	}
	/* The reason is "-" or text; an empty one is taken as it comes. */
	r->f[F_REASON] = s;
	r->note = 0;
	return is_pci_addr(r->f[F_PROVIDER]) && is_pci_addr(r->f[F_CLIENT]);
}

/* Read the kernel's route table into @t. Returns an exit status. */
static int load_routes(struct routes *t)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, status = EXIT_OK;
	FILE *f;

	sys_path(path, sizeof(path), ROUTES);
	f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT)
			return report_errno("cannot read", path, errno);
		fprintf(stderr,
			"%s: no %s: this kernel has no P2PDMA route table. It needs CONFIG_DEBUG_FS=y and debugfs mounted at /sys/kernel/debug (mount -t debugfs none /sys/kernel/debug); the stock 6.12 P2PDMA has no routes file.\n",
			prog, path);
		return EXIT_NOKERNEL;
	}
	t->r = NULL;
	t->nr = 0;
	while (getline(&line, &cap, f) >= 0) {
		struct route r;

		lineno++;
		strip_nl(line);
		if (lineno == 1 && strcmp(line, ROUTES_HEADER)) {
			fprintf(stderr,
				"%s: %s starts with '%s', not '%s': a route table format this tool does not read (it reads version 2)\n",
				prog, path, line, ROUTES_HEADER);
			status = EXIT_NOKERNEL;
			break;
		}
		if (!line[0] || line[0] == '#')
			continue;
		if (!split_route(line, &r)) {
			fprintf(stderr, "%s: %s:%d: malformed route line\n", prog, path, lineno);
			status = EXIT_FAIL;
			break;
		}
		t->r = xrealloc(t->r, (t->nr + 1) * sizeof(*t->r));
		t->r[t->nr++] = r;
		/* The route points into the line: take a new one. */
		line = NULL;
		cap = 0;
	}
	if (status == EXIT_OK && ferror(f)) {
		status = report_errno("cannot read", path, errno);
	} else if (status == EXIT_OK && lineno == 0) {
		fprintf(stderr, "%s: %s is empty: expected '" ROUTES_HEADER "'\n", prog, path);
		status = EXIT_NOKERNEL;
	}
	free(line);
	fclose(f);
	return status;
}

struct route *find_route(struct routes *t, const char *p, const char *c)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (!strcmp(t->r[i].f[F_PROVIDER], p) && !strcmp(t->r[i].f[F_CLIENT], c))
			return &t->r[i];
	return NULL;
}

/* Allowed only because an allow rule of pci_p2pdma.host_bridges says so. */
bool by_override(const struct route *r)
{
	return strcmp(r->f[F_MAP], "refused") && !strcmp(r->f[F_POLICY], "override");
}

/* Append to the string @buf of @len bytes; what does not fit is cut. */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* DDDD:BB, the name of a root bus in a host bridge's "pciDDDD:BB". */
static bool is_root_bus(const char *s, size_t n)
{
	return n >= 7 && n <= 11 && s[n - 3] == ':' && hex_run(s, n - 3) &&
	       hex_run(s + n - 2, 2);
}

/*
 * The host bridge of @bdf as DDDD:BB (its root bus): the "pciDDDD:BB"
 * directory its sysfs device lies below. False when sysfs does not say.
 */
static bool host_bridge_of(const char *bdf, char *buf, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *p, *end;
	ssize_t n;

	sys_path(path, sizeof(path), DEVICES "/%s", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	for (p = strstr(link, "/pci"); p; p = strstr(p + 1, "/pci")) {
		end = strchr(p + 4, '/');
		if (!end)
			end = p + strlen(p);
		if (is_root_bus(p + 4, end - (p + 4))) {
			snprintf(buf, len, "%.*s", (int)(end - (p + 4)), p + 4);
			return true;
		}
	}
	return false;
}

/*
 * The pci_p2pdma.host_bridges value that allows the refused route @r: an
 * allow rule for every host bridge on its path (the one that refused it,
 * and those of its provider and client where sysfs names them, since a
 * route between two host bridges needs both), first because the first
 * match wins, then the rules in force (@rules) but those for the same host
 * bridges, which could match no more. It removes a deny rule for them.
 */
void allow_value(const struct route *r, const char *rules, char *buf, size_t len)
{
	char hbs[3][32], *copy, *tok, *save = NULL;
	size_t nhb = 1, i, k;

	snprintf(hbs[0], sizeof(hbs[0]), "%s", r->f[F_HB]);
	for (k = F_PROVIDER; k <= F_CLIENT; k++) {
		if (!host_bridge_of(r->f[k], hbs[nhb], sizeof(hbs[nhb])))
			continue;
		for (i = 0; i < nhb && strcmp(hbs[i], hbs[nhb]); i++)
			;
		nhb += i == nhb;
	}
	buf[0] = '\0';
	for (i = 0; i < nhb; i++)
		append(buf, len, "%sallow:%s", i ? "," : "", hbs[i]);
	copy = strdup(rules);
	if (!copy) {
		perror(prog);
		exit(EXIT_FAIL);
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *sel = strchr(tok, ':');

		for (i = 0; sel && i < nhb && strcmp(sel + 1, hbs[i]); i++)
			;
		if (!sel || i == nhb)
			append(buf, len, ",%s", tok);
	}
	free(copy);
}

const char *reason_of(const struct route *r)
{
	return strcmp(r->f[F_REASON], "-") && r->f[F_REASON][0] ? r->f[F_REASON] :
	       "refused (no reason given)";
}

/*
 * Read the host bridge policy into @rules (RULES_LEN bytes) and the
 * kernel's route table into @t, checking that every one of the @ndevs
 * devices @devs is in a route. Returns an exit status.
 */
int load_all(char *rules, struct routes *t, char **devs, int ndevs)
{
	char path[PATH_MAX];
	int status, err, k;
	size_t i;

	/* The policy first: a non-root user can read it, so 4 wins over 3. */
	sys_path(path, sizeof(path), HB_PARAM);
	err = read_str(path, rules, RULES_LEN);
	if (err == ENOENT) {
		fprintf(stderr,
			"%s: no %s: this kernel's P2PDMA has no host bridge policy (the stock 6.12 P2PDMA has none)\n",
			prog, path);
		return EXIT_NOKERNEL;
	}
	if (err)
		return report_errno("cannot read", path, err);
	status = load_routes(t);
	if (status)
		return status;

	for (k = 0; k < ndevs; k++) {
		bool seen = false;

		for (i = 0; i < t->nr && !seen; i++)
			seen = !strcmp(t->r[i].f[F_PROVIDER], devs[k]) ||
			       !strcmp(t->r[i].f[F_CLIENT], devs[k]);
		if (!seen) {
			fprintf(stderr,
				"%s: %s is in no route of the kernel's table (no such PCI function, or not one with a type 0 header)\n",
				prog, devs[k]);
			status = EXIT_FAIL;
		}
	}
	return status;
}
