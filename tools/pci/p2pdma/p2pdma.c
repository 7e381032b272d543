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
 * Only libc is needed: make -C tools/pci/p2pdma
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VERSION		"1.2"
#define ROUTES_HEADER	"# p2pdma routes v2"
#define DRV_NAME	"p2pmem-bar"

#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2
#define EXIT_PERM	3
#define EXIT_NOKERNEL	4

/* Paths below the sysfs root, as the kernel names them. */
#define DEVICES		"bus/pci/devices"
#define DRIVERS_PROBE	"bus/pci/drivers_probe"
#define ROUTES		"kernel/debug/p2pdma/routes"
#define HB_PARAM	"module/pci_p2pdma/parameters/host_bridges"
#define DRV_PARAMS	"module/p2pmem_bar/parameters"
#define MISC_P2PMEM	"class/misc/p2pmem"

static const char *sysfs = "/sys";
static const char *prog = "p2pdma";
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

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(EXIT_USAGE);
}

/* Exit status for a failed system call: 3 when it was refused. */
static int errno_status(int err)
{
	return (err == EACCES || err == EPERM) ? EXIT_PERM : EXIT_FAIL;
}

/* Report a failed system call on @path and return its exit status. */
static int report_errno(const char *what, const char *path, int err)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(err));
	if (errno_status(err) == EXIT_PERM)
		fprintf(stderr, "%s: permission denied: run as root\n", prog);
	return errno_status(err);
}

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* @buf = the sysfs root followed by @fmt. */
static void sys_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(buf, len, "%s/", sysfs);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "%s: path too long\n", prog);
		exit(EXIT_FAIL);
	}
	va_start(ap, fmt);
	if ((size_t)vsnprintf(buf + n, len - n, fmt, ap) >= len - n) {
		fprintf(stderr, "%s: path too long\n", prog);
		exit(EXIT_FAIL);
	}
	va_end(ap);
}

/*
 * Read a small file into @buf without its trailing newline.
 * Returns 0 or a positive errno.
 */
static int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return 0;
}

/* Write @s to @path in one write(). Returns 0 or a positive errno. */
static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return errno;
	n = write(fd, s, len);
	err = n < 0 ? errno : 0;
	if (close(fd) && !err)
		err = errno;
	if (!err && (size_t)n != len)
		err = EIO;
	return err;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* DDDD:BB:DD.F, the domain 4 to 8 hex digits. */
static bool is_pci_addr(const char *s)
{
	size_t len = strlen(s), d = len - 8;

	if (len < 12 || len > 16)
		return false;
	return hex_run(s, d) && s[d] == ':' && hex_run(s + d + 1, 2) &&
	       s[d + 3] == ':' && hex_run(s + d + 4, 2) && s[d + 6] == '.' &&
	       s[d + 7] >= '0' && s[d + 7] <= '7';
}

/*
 * A PCI address from the command line: lower case, "0000:" added to a bare
 * BB:DD.F. Exits with a usage error when it is none.
 */
static char *parse_addr(const char *arg)
{
	size_t len = strlen(arg) + 6;
	char *s = malloc(len);
	char *p;

	if (!s) {
		perror(prog);
		exit(EXIT_FAIL);
	}
	snprintf(s, len, "%s%s", strlen(arg) == 7 ? "0000:" : "", arg);
	for (p = s; *p; p++)
		*p = tolower((unsigned char)*p);
	if (!is_pci_addr(s))
		usage_error("'%s' is not a PCI address (DDDD:BB:DD.F)", arg);
	return s;
}

/* The name of the driver @bdf is bound to into @buf, or "" when none. */
static void driver_of(const char *bdf, char *buf, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	sys_path(path, sizeof(path), DEVICES "/%s/driver", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	buf[0] = '\0';
	if (n <= 0)
		return;
	link[n] = '\0';
	base = strrchr(link, '/');
	snprintf(buf, len, "%.*s", (int)len - 1, base ? base + 1 : link);
}

static unsigned long long to_ull(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* "67108864 (64.0 MiB)" from a decimal byte count. */
static void human_bytes(char *buf, size_t len, const char *bytes)
{
	unsigned long long tenths = to_ull(bytes) / (1048576 / 10);

	snprintf(buf, len, "%.20s (%llu.%llu MiB)", bytes, tenths / 10, tenths % 10);
}

/* ---- list ---------------------------------------------------------------- */

/* Whether /dev/p2pmem can export a provider's memory as a dma-buf. */
enum export_state { EXPORT_YES, EXPORT_UNPUBLISHED, EXPORT_NO_DEV, EXPORT_NO_MEM };

static const struct {
	const char *word;	/* list -l */
	const char *text;	/* list */
} export_names[] = {
	[EXPORT_YES]		= { "yes", "yes" },
	[EXPORT_UNPUBLISHED]	= { "unpublished", "no (unpublished)" },
	[EXPORT_NO_DEV]		= { "no-dev", "no (no /dev/p2pmem)" },
	[EXPORT_NO_MEM]		= { "no-memory", "no (no P2P memory)" },
};

/*
 * The exporter is a misc device: /dev/p2pmem exists where
 * /sys/class/misc/p2pmem does. It exports from a provider that published
 * its memory (p2pmem/published reads 1: @pub, or read here when NULL).
 */
static enum export_state export_state(const char *bdf, const char *pub)
{
	char path[PATH_MAX], buf[16];

	sys_path(path, sizeof(path), MISC_P2PMEM);
	if (!is_dir(path))
		return EXPORT_NO_DEV;
	if (!pub) {
		sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/published", bdf);
		if (read_str(path, buf, sizeof(buf)))
			return EXPORT_NO_MEM;
		pub = buf;
	}
	return strcmp(pub, "0") ? EXPORT_YES : EXPORT_UNPUBLISHED;
}

static int filter_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int cmd_list(void)
{
	struct dirent **names;
	char path[PATH_MAX], drv[NAME_MAX + 1];
	char size[32], avail[32], used[32], pub[16], ven[16], dev[16];
	int i, n, found = 0, status = EXIT_OK;

	sys_path(path, sizeof(path), DEVICES);
	n = scandir(path, &names, filter_dots, alphasort);
	if (n < 0)
		return report_errno("cannot list", path, errno);
	for (i = 0; i < n; i++) {
		const char *bdf = names[i]->d_name;
		enum export_state exp;
		char human[3][64];
		int err = 0;

		sys_path(path, sizeof(path), DEVICES "/%s/p2pmem", bdf);
		if (!is_dir(path))
			continue;
		if (!found++ && !opt_list)
			printf("%-12s  %-23s  %-23s  %-23s  %-9s  %-19s  %-12s  %s\n",
			       "provider", "size", "available", "in use", "published",
			       "export", "driver", "vendor:device");
		sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/size", bdf);
		err = read_str(path, size, sizeof(size));
		if (!err) {
			sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/available", bdf);
			err = read_str(path, avail, sizeof(avail));
		}
		if (!err) {
			sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/published", bdf);
			err = read_str(path, pub, sizeof(pub));
		}
		if (err == ENOENT)	/* unbound while we looked */
			continue;
		if (err) {
			status = report_errno("cannot read", path, err);
			continue;
		}
		sys_path(path, sizeof(path), DEVICES "/%s/vendor", bdf);
		if (read_str(path, ven, sizeof(ven)))
			snprintf(ven, sizeof(ven), "?");
		sys_path(path, sizeof(path), DEVICES "/%s/device", bdf);
		if (read_str(path, dev, sizeof(dev)))
			snprintf(dev, sizeof(dev), "?");
		driver_of(bdf, drv, sizeof(drv));
		if (!drv[0])
			snprintf(drv, sizeof(drv), "-");
		/* available is never above size; a kernel that broke that shows 0. */
		snprintf(used, sizeof(used), "%llu", to_ull(size) > to_ull(avail) ?
			 to_ull(size) - to_ull(avail) : 0);
		human_bytes(human[0], sizeof(human[0]), size);
		human_bytes(human[1], sizeof(human[1]), avail);
		human_bytes(human[2], sizeof(human[2]), used);
		exp = export_state(bdf, pub);
		/*
		 * -l: the in-use bytes (1.1), then export (1.2), after the
		 * fields of version 1.0.
		 */
		if (opt_list)
			printf("%s %s %s %s %s %s:%s %s %s\n", bdf, size, avail,
			       strcmp(pub, "0") ? "yes" : "no", drv,
			       strncmp(ven, "0x", 2) ? ven : ven + 2,
			       strncmp(dev, "0x", 2) ? dev : dev + 2, used,
			       export_names[exp].word);
		else
			printf("%-12s  %-23s  %-23s  %-23s  %-9s  %-19s  %-12s  %s:%s\n",
			       bdf, human[0], human[1], human[2],
			       strcmp(pub, "0") ? "yes" : "no", export_names[exp].text,
			       drv, strncmp(ven, "0x", 2) ? ven : ven + 2,
			       strncmp(dev, "0x", 2) ? dev : dev + 2);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!found && !opt_list)
		printf("(no P2P memory providers: no %s/" DEVICES "/*/p2pmem)\n", sysfs);
	return status;
}

/* ---- routes -------------------------------------------------------------- */

enum { F_PROVIDER, F_CLIENT, F_MAP, F_DIST, F_POLICY, F_ACS, F_HB, F_REASON, NR_FIELDS };

struct route {
	char *f[NR_FIELDS];
	int note;		/* footnote of a refusal in the matrix, or 0 */
};

struct routes {
	struct route *r;
	size_t nr;
};

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		perror(prog);
		exit(EXIT_FAIL);
	}
	return p;
}

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

static struct route *find_route(struct routes *t, const char *p, const char *c)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (!strcmp(t->r[i].f[F_PROVIDER], p) && !strcmp(t->r[i].f[F_CLIENT], c))
			return &t->r[i];
	return NULL;
}

#define CELL_LEN 32
#define RULES_LEN 4096
#define VERIFY_DOC "p2pdma.rst, \"Verifying a host bridge before allowing it\""

/* Allowed only because an allow rule of pci_p2pdma.host_bridges says so. */
static bool by_override(const struct route *r)
{
	return strcmp(r->f[F_MAP], "refused") && !strcmp(r->f[F_POLICY], "override");
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
static void allow_value(const struct route *r, const char *rules, char *buf, size_t len)
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

static const char *reason_of(const struct route *r)
{
	return strcmp(r->f[F_REASON], "-") && r->f[F_REASON][0] ? r->f[F_REASON] :
	       "refused (no reason given)";
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

/*
 * Read the host bridge policy into @rules (RULES_LEN bytes) and the
 * kernel's route table into @t, checking that every one of the @ndevs
 * devices @devs is in a route. Returns an exit status.
 */
static int load_all(char *rules, struct routes *t, char **devs, int ndevs)
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

static int cmd_routes(char **devs, int ndevs)
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
static int cmd_route(char *provider, char *client)
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

/* ---- bind, unbind -------------------------------------------------------- */

struct bind_opts {
	char bar[24];
	char offset[24];
	char size[24];
	bool publish;
	bool force;
};

static const char *const param_names[] = { "bar", "offset", "size", "publish" };
#define NR_PARAMS ARRAY_SIZE(param_names)

/* BYTES: a decimal or 0x number, optionally followed by K, M or G. */
static void parse_bytes(const char *arg, char *out, size_t len)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (end == arg || errno || arg[0] == '-')
		usage_error("'%s' is not a byte count", arg);
	switch (toupper((unsigned char)*end)) {
	case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	}
	if (*end || (v && mult > ~0ULL / v))
		usage_error("'%s' is not a byte count", arg);
	snprintf(out, len, "%llu", v * mult);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Whether @bdf is bound to p2pmem-bar with a p2pmem directory. A probe
 * through drivers_probe is synchronous; the short wait only covers a driver
 * that probes asynchronously.
 */
static bool wait_bound(const char *bdf)
{
	char path[PATH_MAX], drv[NAME_MAX + 1];
	int i;

	sys_path(path, sizeof(path), DEVICES "/%s/p2pmem", bdf);
	for (i = 0; i < 100; i++) {
		driver_of(bdf, drv, sizeof(drv));
		if (!strcmp(drv, DRV_NAME) && is_dir(path))
			return true;
		sleep_ms(20);
	}
	return false;
}

/* Check that @bdf exists; returns an exit status. */
static int check_device(const char *bdf)
{
	char path[PATH_MAX];
	struct stat st;

	sys_path(path, sizeof(path), DEVICES "/%s", bdf);
	if (stat(path, &st) == 0)
		return EXIT_OK;
	if (errno == ENOENT) {
		fprintf(stderr, "%s: no PCI device %s (no %s)\n", prog, bdf, path);
		return EXIT_FAIL;
	}
	return report_errno("cannot look at", path, errno);
}

/* Unbind @bdf from driver @drv; returns an exit status. */
static int unbind_driver(const char *bdf, const char *drv)
{
	char path[PATH_MAX];
	int err;

	sys_path(path, sizeof(path), DEVICES "/%s/driver/unbind", bdf);
	err = write_str(path, bdf);
	if (err)
		return report_errno("unbinding from its driver failed: writing to", path, err);
	printf("%s: unbound from %s\n", bdf, drv);
	return EXIT_OK;
}

/* Clear driver_override of @bdf, quietly: only a cleanup. */
static void clear_override(const char *bdf)
{
	char path[PATH_MAX];

	sys_path(path, sizeof(path), DEVICES "/%s/driver_override", bdf);
	write_str(path, "\n");
}

static int cmd_bind(const char *bdf, const struct bind_opts *o)
{
	char path[PATH_MAX], drv[NAME_MAX + 1], probe_path[PATH_MAX];
	char old[NR_PARAMS][64], size[32], pub[16], human[64];
	const char *want[NR_PARAMS] = { o->bar, o->offset, o->size, o->publish ? "Y" : "N" };
	int status, err, probe_err = 0;
	size_t i, set = 0;

	status = check_device(bdf);
	if (status)
		return status;
	sys_path(path, sizeof(path), DRV_PARAMS);
	if (!is_dir(path)) {
		fprintf(stderr,
			"%s: no %s: this kernel has no p2pmem-bar driver (CONFIG_PCI_P2PMEM_BAR)\n",
			prog, path);
		return EXIT_NOKERNEL;
	}
	driver_of(bdf, drv, sizeof(drv));
	if (drv[0] && !o->force) {
		if (!strcmp(drv, DRV_NAME))
			fprintf(stderr,
				"%s: %s is already bound to %s ('p2pdma unbind %s' first, or --force to bind it again with these parameters)\n",
				prog, bdf, DRV_NAME, bdf);
		else
			fprintf(stderr,
				"%s: %s is bound to %s: not taking it away from its driver (--force unbinds it first)\n",
				prog, bdf, drv);
		return EXIT_FAIL;
	}
	for (i = 0; i < NR_PARAMS; i++) {
		sys_path(path, sizeof(path), DRV_PARAMS "/%s", param_names[i]);
		err = read_str(path, old[i], sizeof(old[i]));
		if (err == ENOENT) {
			fprintf(stderr, "%s: no %s: this p2pmem-bar driver has no '%s' parameter\n",
				prog, path, param_names[i]);
			return EXIT_NOKERNEL;
		}
		if (err)
			return report_errno("cannot read", path, err);
	}
	if (drv[0]) {
		status = unbind_driver(bdf, drv);
		if (status)
			return status;
	}

	/* The parameters for this probe; the previous values come back below. */
	for (set = 0; set < NR_PARAMS; set++) {
		sys_path(path, sizeof(path), DRV_PARAMS "/%s", param_names[set]);
		err = write_str(path, want[set]);
		if (err) {
			status = report_errno("cannot set", path, err);
			break;
		}
	}
	if (!status) {
		sys_path(path, sizeof(path), DEVICES "/%s/driver_override", bdf);
		err = write_str(path, DRV_NAME);
		if (err)
			status = report_errno("cannot write " DRV_NAME " to", path, err);
	}
	if (!status) {
		sys_path(probe_path, sizeof(probe_path), DRIVERS_PROBE);
		probe_err = write_str(probe_path, bdf);
		if (!probe_err && !wait_bound(bdf))
			probe_err = ENODEV;
	}
	/* Restore the parameters, also after a failure. */
	for (i = 0; i < set; i++) {
		sys_path(path, sizeof(path), DRV_PARAMS "/%s", param_names[i]);
		err = write_str(path, old[i]);
		if (err) {
			fprintf(stderr, "%s: cannot restore %s to '%s': %s\n", prog, path,
				old[i], strerror(err));
			if (!status)
				status = EXIT_FAIL;
		}
	}
	if (probe_err) {
		if (probe_err == ENODEV)
			fprintf(stderr, "%s: %s did not bind %s (no p2pmem directory appeared)\n",
				prog, DRV_NAME, bdf);
		else
			fprintf(stderr, "%s: writing %s to %s failed: %s\n", prog, bdf,
				probe_path, strerror(probe_err));
		fprintf(stderr, "%s: see dmesg: " DRV_NAME " logs a one-line reason\n", prog);
		clear_override(bdf);
		if (drv[0])
			fprintf(stderr, "%s: %s is left without a driver (it was bound to %s)\n",
				prog, bdf, drv);
		return errno_status(probe_err);
	}
	if (status) {
		clear_override(bdf);
		return status;
	}
	sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/size", bdf);
	if (read_str(path, size, sizeof(size)))
		snprintf(size, sizeof(size), "?");
	sys_path(path, sizeof(path), DEVICES "/%s/p2pmem/published", bdf);
	if (read_str(path, pub, sizeof(pub)))
		snprintf(pub, sizeof(pub), "?");
	human_bytes(human, sizeof(human), size);
	printf("%s: bound to " DRV_NAME ": %s of P2P memory, published %s\n",
	       bdf, human, strcmp(pub, "0") ? "yes" : "no");
	return EXIT_OK;
}

static int cmd_unbind(const char *bdf, bool force)
{
	char path[PATH_MAX], drv[NAME_MAX + 1], over[64];
	int status;

	status = check_device(bdf);
	if (status)
		return status;
	driver_of(bdf, drv, sizeof(drv));
	if (drv[0] && strcmp(drv, DRV_NAME) && !force) {
		fprintf(stderr, "%s: %s is bound to %s, not %s (--force unbinds it anyway)\n",
			prog, bdf, drv, DRV_NAME);
		return EXIT_FAIL;
	}
	if (drv[0]) {
		status = unbind_driver(bdf, drv);
		if (status)
			return status;
	} else {
		printf("%s: not bound to a driver\n", bdf);
	}
	sys_path(path, sizeof(path), DEVICES "/%s/driver_override", bdf);
	if (!read_str(path, over, sizeof(over)) && !strcmp(over, DRV_NAME)) {
		int err = write_str(path, "\n");

		if (err)
			return report_errno("cannot clear", path, err);
	}
	return EXIT_OK;
}

/* ---- main ---------------------------------------------------------------- */

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
		return cmd_list();
	}
	if (!strcmp(cmd, "routes")) {
		devs = xrealloc(NULL, (n + 1) * sizeof(*devs));
		for (i = 0; i < n; i++)
			devs[i] = parse_addr(argv[optind + i]);
		return cmd_routes(devs, n);
	}
	if (!strcmp(cmd, "route")) {
		if (n != 2)
			usage_error("%s", "route takes two PCI addresses: PROVIDER CLIENT");
		return cmd_route(parse_addr(argv[optind]), parse_addr(argv[optind + 1]));
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
