// SPDX-License-Identifier: GPL-2.0
/*
 * p2pdma bind and p2pdma unbind: bind a device to the p2pmem-bar driver
 * with the module parameters of this probe (restored afterwards), unbind
 * it again, and the byte counts of the bind options.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "p2pdma.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const param_names[] = { "bar", "offset", "size", "publish" };
#define NR_PARAMS ARRAY_SIZE(param_names)

/* BYTES: a decimal or 0x number, optionally followed by K, M or G. */
void parse_bytes(const char *arg, char *out, size_t len)
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

int cmd_bind(const char *bdf, const struct bind_opts *o)
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
	read_dev_attr(bdf, "p2pmem/size", size, sizeof(size));
	read_dev_attr(bdf, "p2pmem/published", pub, sizeof(pub));
	human_bytes(human, sizeof(human), size);
	printf("%s: bound to " DRV_NAME ": %s of P2P memory, published %s\n",
	       bdf, human, strcmp(pub, "0") ? "yes" : "no");
	return EXIT_OK;
}

int cmd_unbind(const char *bdf, bool force)
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
