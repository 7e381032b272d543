// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma: sysfs, and the helpers every command uses. Paths below the sysfs
 * root (P2PDMA_SYSFS), reading and writing small files, PCI addresses, the
 * driver a device is bound to, byte counts, memory, the report of a usage
 * error and of a failed system call with its exit status, and whether
 * /dev/p2pmem can export a provider's memory. It calls no other file of
 * the tool: p2pdma.c calls the commands (list.c, print.c, bind.c), print.c
 * calls routes.c, and every one of them calls this file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "p2pdma.h"

/* The sysfs root (main() takes P2PDMA_SYSFS) and the program's name. */
const char *sysfs = "/sys";
const char *prog = "p2pdma";

/* A usage error: @fmt with @arg, a hint, exit status 2. */
void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(EXIT_USAGE);
}

/* Exit status for a failed system call: 3 when it was refused. */
int errno_status(int err)
{
	return (err == EACCES || err == EPERM) ? EXIT_PERM : EXIT_FAIL;
}

/* Report a failed system call on @path and return its exit status. */
int report_errno(const char *what, const char *path, int err)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(err));
	if (errno_status(err) == EXIT_PERM)
		fprintf(stderr, "%s: permission denied: run as root\n", prog);
	return errno_status(err);
}

/* @buf = the sysfs root followed by @fmt. */
void sys_path(char *buf, size_t len, const char *fmt, ...)
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
int read_str(const char *path, char *buf, size_t len)
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

/* The device's attribute @attr into @buf, or "?" if it cannot be read. */
void read_dev_attr(const char *bdf, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];

	sys_path(path, sizeof(path), DEVICES "/%s/%s", bdf, attr);
	if (read_str(path, buf, len))
		snprintf(buf, len, "?");
}

/* Write @s to @path in one write(). Returns 0 or a positive errno. */
int write_str(const char *path, const char *s)
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

bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* DDDD:BB:DD.F, the domain 4 to 8 hex digits. */
bool is_pci_addr(const char *s)
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
char *parse_addr(const char *arg)
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
void driver_of(const char *bdf, char *buf, size_t len)
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

unsigned long long to_ull(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* "67108864 (64.0 MiB)" from a decimal byte count. */
void human_bytes(char *buf, size_t len, const char *bytes)
{
	unsigned long long tenths = to_ull(bytes) / (1048576 / 10);

	snprintf(buf, len, "%.20s (%llu.%llu MiB)", bytes, tenths / 10, tenths % 10);
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		perror(prog);
		exit(EXIT_FAIL);
	}
	return p;
}

/*
 * The exporter is a misc device: /dev/p2pmem exists where
 * /sys/class/misc/p2pmem does. It exports from a provider that published
 * its memory (p2pmem/published reads 1: @pub, or read here when NULL).
 */
enum export_state export_state(const char *bdf, const char *pub)
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
