/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the P2PDMA kselftests share: sysfs files, the NVMe controller
 * a topology names by serial, a provider's p2pmem directory.
 */
#ifndef P2PDMA_UTIL_H
#define P2PDMA_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nvme_dev {
	char bdf[32];		/* PCI address, e.g. 0000:03:00.0 */
	char blk[300];		/* /dev/nvmeXnY */
};

static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static inline long long read_ull(const char *fmt, const char *bdf)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), fmt, bdf);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 0);
}

#define P2PMEM		"/sys/bus/pci/devices/%s/p2pmem/"
#define available(bdf)	read_ull(P2PMEM "available", bdf)

/* Find the NVMe controller with serial @serial; 0 on success. */
static inline int find_nvme(const char *serial, struct nvme_dev *nd)
{
	char path[PATH_MAX], buf[PATH_MAX], *base;
	struct dirent *ctl, *ns;
	DIR *d, *cd;
	int found = -1;

	if (!serial)
		return -1;
	d = opendir("/sys/class/nvme");
	if (!d)
		return -1;
	while (found && (ctl = readdir(d))) {
		if (ctl->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/serial", ctl->d_name);
		if (read_file(path, buf, sizeof(buf)) || strcmp(buf, serial))
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/device", ctl->d_name);
		if (!realpath(path, buf))
			continue;
		base = strrchr(buf, '/');
		snprintf(nd->bdf, sizeof(nd->bdf), "%s", base + 1);
		nd->blk[0] = '\0';
		snprintf(path, sizeof(path), "/sys/class/nvme/%s", ctl->d_name);
		cd = opendir(path);
		while (cd && (ns = readdir(cd))) {
			if (!strncmp(ns->d_name, "nvme", 4) && strchr(ns->d_name + 4, 'n')) {
				snprintf(nd->blk, sizeof(nd->blk), "/dev/%s", ns->d_name);
				break;
			}
		}
		if (cd)
			closedir(cd);
		found = nd->blk[0] ? 0 : -1;
	}
	closedir(d);
	return found;
}

/* Wait up to 20 s for the provider's p2pmem directory to (re)appear. */
static inline int wait_p2pmem(const char *bdf)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (available(bdf) >= 0)
			return 0;
		usleep(100000);
	}
	return -1;
}

#endif /* P2PDMA_UTIL_H */
