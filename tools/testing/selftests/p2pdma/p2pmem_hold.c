// SPDX-License-Identifier: GPL-2.0
/*
 * p2pmem_hold - helper of p2pmem_pci.sh: map P2P memory of a provider and
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf jmp;

static void on_fault(int sig)
{
	siglongjmp(jmp, sig);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 131 + seed) ^ (i >> 9));
}

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

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_fault };
	unsigned char *p, *ref;
	char path[256], line[16];
	size_t len;
	int fd, sig, ret;

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

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sig = sigsetjmp(jmp, 1);
	if (!sig) {
		/* An access the compiler cannot drop: it must fault or not. */
		(void)__atomic_load_n(&p[len - 1], __ATOMIC_RELAXED);
		printf("nofault\n");
	} else if (sig == SIGBUS) {
		printf("sigbus\n");
	} else {
		printf("signal %d\n", sig);
	}
	return 0;
}
