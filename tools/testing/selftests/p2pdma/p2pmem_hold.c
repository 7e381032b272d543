// SPDX-License-Identifier: GPL-2.0
/*
 * p2pmem_hold - helper of p2pmem_bar.sh: map P2P memory of a provider and
 * keep the mapping while the script unbinds the provider.
 *
 * Usage: p2pmem_hold BDF LENGTH [BLOCK_DEVICE OFFSET]
 *
 * Maps LENGTH bytes of /sys/bus/pci/devices/BDF/p2pmem/allocate and prints
 * one line per step on stdout:
 *   "mapped" or "error mmap <errno name>"
 *   "cpu ok" or "cpu bad": a pattern written by the CPU reads back
 *   "odirect ok", "odirect bad" or "odirect error <errno name>": with a
 *       block device, a pattern written there from RAM is read with
 *       O_DIRECT into the mapping and compared byte for byte
 *   "ready": then it waits for a line on stdin (the script unbinds)
 *   "sigbus", "nofault" or "signal N": what a read of the mapping does
 *
 * p2pmem_hold bar BDF write SEED
 * p2pmem_hold bar BDF check SEED ZERO_BYTES
 *   Through BDF's resource2 (BAR 2, whatever driver is bound), write a
 *   pattern made from SEED into three 4 MiB windows (the start, the middle
 *   and the end of the BAR), or check that the first ZERO_BYTES of the BAR
 *   read zero and that the rest of the windows still hold the pattern.
 *   Prints "bar ok" or "bar bad at OFFSET: BYTE, want WANT".
 * p2pmem_hold map BDF LENGTH [FILL]
 *   Map LENGTH bytes of p2pmem/allocate ("error mmap <errno name>" if that
 *   fails), print "zero ok" if the first byte of every 64 reads zero
 *   ("zero bad at OFFSET: BYTE" otherwise; reads of device memory are
 *   slow, and memory handed out dirty is dirty in whole pages), then write
 *   FILL into every byte if given, unmap and exit.
 * p2pmem_hold export BDF LENGTH
 *   Export LENGTH bytes of BDF's P2P memory through /dev/p2pmem
 *   (P2PMEM_IOC_EXPORT) and close the dma-buf: prints "export ok", or
 *   "export error <errno name>" (of the open() or the ioctl()), for
 *   p2pdma_tool.sh to check the route tool's export column against.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* The tree's own, whether or not its uAPI headers were installed. */
#include "../../../../include/uapi/linux/p2pmem.h"

#include "p2pdma_util.h"

static int odirect(const char *blk, off_t off, unsigned char *p, size_t len)
{
	unsigned char *ram;
	int fd, ret = 1;

	if (posix_memalign((void **)&ram, 4096, len))
		return -ENOMEM;
	fill(ram, len, 77);
	fd = open(blk, O_RDWR | O_DIRECT);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (pwrite(fd, ram, len, off) != (ssize_t)len ||
	    pread(fd, p, len, off) != (ssize_t)len)
		ret = -errno;
	else
		ret = memcmp(p, ram, len) ? 1 : 0;
	close(fd);
out:
	free(ram);
	return ret;
}

#define WINDOW	(4UL << 20)

static int bar_mode(const char *bdf, const char *op, unsigned int seed,
		    size_t zero)
{
	size_t size, off[3], i, w;
	unsigned char *p, *want;
	char path[256];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource2", bdf);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0 || fstat(fd, &st)) {
		printf("bar error open %s\n", strerrorname_np(errno) ?: "?");
		return 1;
	}
	size = st.st_size;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || size < 3 * WINDOW) {
		printf("bar error mmap %s (%zu bytes)\n", strerrorname_np(errno) ?: "?", size);
		return 1;
	}
	want = malloc(WINDOW);
	if (!want)
		return 1;
	off[0] = 0;
	off[1] = size / 2;
	off[2] = size - WINDOW;
	for (w = 0; w < 3; w++) {
		fill(want, WINDOW, seed + w);
		if (!strcmp(op, "write")) {
			memcpy(p + off[w], want, WINDOW);
			continue;
		}
		for (i = 0; i < WINDOW; i++) {
			unsigned char b = p[off[w] + i];
			unsigned char exp = off[w] + i < zero ? 0 : want[i];

			if (b != exp) {
				printf("bar bad at %#zx: %#x, want %#x\n",
				       off[w] + i, b, exp);
				return 1;
			}
		}
	}
	printf("bar ok\n");
	return 0;
}

static int map_mode(const char *bdf, size_t len, const char *fill)
{
	unsigned char *p;
	char path[256];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", bdf);
	fd = open(path, O_RDWR);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("error mmap %s\n", strerrorname_np(errno) ?: "?");
		return 1;
	}
	for (i = 0; i < len; i += 64) {
		if (p[i]) {
			printf("zero bad at %#zx: %#x\n", i, p[i]);
			return 1;
		}
	}
	if (fill)
		memset(p, strtoul(fill, NULL, 0), len);
	munmap(p, len);
	printf("zero ok\n");
	return 0;
}

static int export_mode(const char *bdf, size_t len)
{
	struct p2pmem_export req = { .size = len };
	int fd, ret;

	if (parse_bdf(bdf, &req.domain, &req.bus, &req.devfn)) {
		fprintf(stderr, "p2pmem_hold: '%s' is not DDDD:BB:DD.F\n", bdf);
		return 2;
	}
	fd = open("/dev/p2pmem", O_RDWR | O_CLOEXEC);
	ret = fd < 0 ? -1 : ioctl(fd, P2PMEM_IOC_EXPORT, &req);
	if (ret) {
		printf("export error %s\n", strerrorname_np(errno) ?: "?");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(req.fd);
	close(fd);
	printf("export ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *p, *ref;
	char path[256], line[16];
	size_t len;
	int fd, sig, ret;

	if (argc >= 5 && !strcmp(argv[1], "bar"))
		return bar_mode(argv[2], argv[3], strtoul(argv[4], NULL, 0),
				argc > 5 ? strtoull(argv[5], NULL, 0) : 0);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "map"))
		return map_mode(argv[2], strtoull(argv[3], NULL, 0),
				argc == 5 ? argv[4] : NULL);
	if (argc == 4 && !strcmp(argv[1], "export"))
		return export_mode(argv[2], strtoull(argv[3], NULL, 0));
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: p2pmem_hold BDF LENGTH [BLOCK_DEVICE OFFSET]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	len = strtoull(argv[2], NULL, 0);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", argv[1]);
	fd = open(path, O_RDWR);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("error mmap %s\n", strerrorname_np(errno) ?: "?");
		return 1;
	}
	close(fd);
	printf("mapped\n");

	ref = malloc(len);
	if (!ref)
		return 1;
	fill(ref, len, 5);
	memcpy(p, ref, len);
	printf("cpu %s\n", memcmp(p, ref, len) ? "bad" : "ok");
	free(ref);

	if (argc == 5) {
		ret = odirect(argv[3], strtoll(argv[4], NULL, 0), p, len);
		if (ret < 0)
			printf("odirect error %s\n", strerrorname_np(-ret) ?: "?");
		else
			printf("odirect %s\n", ret ? "bad" : "ok");
	}

	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;

	sig = touch(&p[len - 1], false);
	if (!sig)
		printf("nofault\n");
	else if (sig == SIGBUS)
		printf("sigbus\n");
	else
		printf("signal %d\n", sig);
	return 0;
}
