// SPDX-License-Identifier: GPL-2.0
/*
 * p2pmap - map /sys/bus/pci/devices/<bdf>/p2pmem/allocate one way and say
 * what happened, for the end-to-end tests.
 *
 * Usage: p2pmap BDF MODE LENGTH
 *   shared   MAP_SHARED at offset 0; fill the memory through the CPU, read
 *            it back, and report p2pmem/available before, during and after
 *   private  MAP_PRIVATE (must be refused)
 *   offset   MAP_SHARED at offset 4096 (must be refused)
 *
 * Prints one line: "result=ok before=B during=D after=A" or
 * "result=<ERRNO NAME>", and exits 0 unless the tool itself failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char avail_path[256];

static unsigned long long available(void)
{
	unsigned long long v = 0;
	FILE *f = fopen(avail_path, "r");

	if (!f || fscanf(f, "%llu", &v) != 1) {
		perror(avail_path);
		exit(1);
	}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long before, during, after, len, i;
	int flags = MAP_SHARED, fd;
	off_t off = 0;
	char path[256];
	unsigned char *p;

	if (argc != 4) {
		fprintf(stderr, "usage: p2pmap BDF shared|private|offset LENGTH\n");
		return 2;
	}
	len = strtoull(argv[3], NULL, 0);
	if (!strcmp(argv[2], "private"))
		flags = MAP_PRIVATE;
	else if (!strcmp(argv[2], "offset"))
		off = 4096;
	else if (strcmp(argv[2], "shared"))
		return 2;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", argv[1]);
	snprintf(avail_path, sizeof(avail_path), "/sys/bus/pci/devices/%s/p2pmem/available",
		 argv[1]);
	fd = open(path, O_RDWR);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	before = available();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);
	if (p == MAP_FAILED) {
		printf("result=%s\n", strerrorname_np(errno));
		return 0;
	}
	during = available();
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + 3);
	for (i = 0; i < len; i++) {
		if (p[i] != (unsigned char)(i * 7 + 3)) {
			printf("result=MISMATCH offset=%llu\n", i);
			return 0;
		}
	}
	munmap(p, len);
	after = available();
	close(fd);
	printf("result=ok before=%llu during=%llu after=%llu\n", before, during, after);
	return 0;
}
