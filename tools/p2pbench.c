// SPDX-License-Identifier: GPL-2.0
/*
 * p2pbench - the userspace half of `make bench`, run in the guest.
 *
 * Usage: p2pbench mmap BDF BYTES REPS [notouch | memset] [split] [afterdirty]
 *          mmap BYTES of /sys/bus/pci/devices/<BDF>/p2pmem/allocate,
 *          write one byte in every page (not with "notouch"; with
 *          "memset", zero the whole mapping first, as a program must to
 *          get zeroed memory from a kernel that does not clear it), munmap;
 *          prints the median time of the REPS rounds in microseconds
 *          (open, mmap, touch, munmap, close); with "split", one line
 *          "TOTAL MMAP MUNMAP": that, then the median mmap() call and the
 *          median munmap() call, each over its own REPS; with
 *          "afterdirty", each timed round follows an untimed one of the
 *          same size that writes every page: the memory a writer just gave
 *          back is dirty, and the timed round shows what mapping costs then
 *        p2pbench clear BDF BYTES REPS
 *          the kernel's clearing against a program's memset() of the same
 *          memory: each round mmaps BYTES (all of the provider's pool, so
 *          that no clean memory is left to prefer) that the round before
 *          wrote, munmaps it untouched, mmaps it again (clean now) and
 *          times a memset() of all of it to zero; prints "CLEAR MEMSET",
 *          the medians of the first mmap() call less the second (the
 *          clearing, 0 where the kernel does not clear) and of the memset()
 *        p2pbench read (BDF | ram) DEV BYTES CHUNK REPS
 *          read BYTES of DEV with O_DIRECT, CHUNK at a time, into one
 *          CHUNK buffer of P2P memory mmapped from BDF, or of host RAM;
 *          prints the best throughput in MB/s
 *        p2pbench hmm BYTES REPS
 *          a peer's view of device-private memory (the mm patch's
 *          HMM_PFN_REQ_P2P; the test owner of
 *          drivers/pci/p2pdma/tests/hmm-p2p-owner.c must be bound):
 *          each round migrates BYTES of a process range into the owner's
 *          device memory, then times the mirror client's fault and DMA
 *          mapping of all of it for edu (HMMP2P_IOC_MIRROR, one
 *          HMMP2P_MAX_PAGES chunk at a time), once with the flag and once
 *          without (6.12's way: every page migrates back to RAM first);
 *          edu then reads one chunk of the last range mapped, and the bytes
 *          must be the process's. Prints "P2P_US RAM_US P2P_BYTES
 *          RAM_BYTES": the median times of the two, and the bytes each
 *          copied through system RAM (migrate_to_ram() calls times the
 *          page size) in its last round
 *
 * mmap and clear print the median of REPS, the first round included: a
 * best-of would drop the one round that pays for clearing dirty memory.
 * read keeps the best: on a shared host under TCG its slow rounds measure
 * the host's other load.
 *
 * Exit status: 0 measured; 1 a system call failed; 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drivers/pci/p2pdma/tests/hmm_p2p_test.h>

#define MAX_REPS 64
#define HMM_CTL "/sys/kernel/debug/hmm-p2p/ctl"
#define HMM_CHUNK (HMMP2P_MAX_PAGES * 4096UL)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The highest of @n values. */
static double highest(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n - 1];
}

/* The median of @n values; the mean of the middle two for an even @n. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what)
{
	fprintf(stderr, "p2pbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* mmap @len of @bdf's p2pmem/allocate; *@mmap_us: the mmap() call alone. */
static void *map_p2pmem(const char *bdf, size_t len, double *mmap_us)
{
	char path[256];
	double t;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem/allocate", bdf);
	fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	t = now();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	t = now() - t;
	if (p == MAP_FAILED)
		die("mmap of p2pmem/allocate");
	if (mmap_us)
		*mmap_us = t * 1e6;
	close(fd);
	return p;
}

enum touch { NOTOUCH, TOUCH, MEMSET };

/* One round: returns the whole round's us, the two calls' in @mmap_us, @munmap_us. */
static double bench_mmap(const char *bdf, size_t len, enum touch touch,
			 double *mmap_us, double *munmap_us)
{
	double t0 = now(), t;
	unsigned char *p;
	size_t off;

	p = map_p2pmem(bdf, len, mmap_us);
	if (touch == MEMSET)
		memset(p, 0, len);
	for (off = 0; touch != NOTOUCH && off < len; off += 4096)
		p[off] = (unsigned char)(off >> 12);
	t = now();
	if (munmap(p, len))
		die("munmap");
	*munmap_us = (now() - t) * 1e6;
	return (now() - t0) * 1e6;
}

static double bench_read(const char *via, const char *dev, size_t bytes, size_t chunk)
{
	size_t done;
	double t;
	void *buf;
	int fd;

	if (strcmp(via, "ram"))
		buf = map_p2pmem(via, chunk, NULL);
	else if (posix_memalign(&buf, 4096, chunk))
		die("posix_memalign");
	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		die(dev);
	t = now();
	for (done = 0; done < bytes; done += chunk)
		if (pread(fd, buf, chunk, done) != (ssize_t)chunk)
			die("O_DIRECT read");
	t = now() - t;
	close(fd);
	if (strcmp(via, "ram"))
		munmap(buf, chunk);
	else
		free(buf);
	return bytes / t / 1e6;
}

/*
 * One round of "clear": @len that the round before wrote (or this one's
 * first writer) mapped twice; the clearing in @clear_us, the memset() in
 * @memset_us. It leaves the memory written, for the next round.
 */
static void bench_clear(const char *bdf, size_t len, double *clear_us,
			double *memset_us)
{
	double dirty_us, clean_us;
	unsigned char *p;
	double t;

	p = map_p2pmem(bdf, len, &dirty_us);
	if (munmap(p, len))
		die("munmap");
	p = map_p2pmem(bdf, len, &clean_us);
	t = now();
	memset(p, 0, len);
	*memset_us = (now() - t) * 1e6;
	if (munmap(p, len))
		die("munmap");
	*clear_us = dirty_us - clean_us;
}

/*
 * One round of "hmm": @len of fresh process memory, filled with a
 * pattern, migrated into device memory; the mirror's fault and map of all
 * of it with @flags (HMMP2P_MIRROR_P2P or 0) timed; one edu read checked.
 * Returns the us; *@ram_bytes: the bytes migrate_to_ram() copied.
 */
static double bench_hmm(int ctl, size_t len, unsigned int flags, unsigned long *ram_bytes)
{
	struct hmmp2p_stats before, after;
	struct hmmp2p_range r = {};
	unsigned char got[2048];
	struct hmmp2p_dma d = { .len = sizeof(got), .buf = (uintptr_t)got };
	unsigned char *p, *want;
	size_t off;
	double t;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = malloc(len);
	if (p == MAP_FAILED || !want)
		die("hmm: memory");
	for (off = 0; off < len; off++)
		want[off] = (unsigned char)(off * 7 + (off >> 12) + flags);
	memcpy(p, want, len);
	for (off = 0; off < len; off += HMM_CHUNK) {
		r.addr = (uintptr_t)(p + off);
		r.len = HMM_CHUNK;
		if (ioctl(ctl, HMMP2P_IOC_MIGRATE, &r) || r.pages != HMMP2P_MAX_PAGES)
			die("hmm: HMMP2P_IOC_MIGRATE did not move every page");
	}
	if (ioctl(ctl, HMMP2P_IOC_STATS, &before))
		die("hmm: HMMP2P_IOC_STATS");
	t = now();
	for (off = 0; off < len; off += HMM_CHUNK) {
		r.addr = (uintptr_t)(p + off);
		r.len = HMM_CHUNK;
		r.flags = flags;
		if (ioctl(ctl, HMMP2P_IOC_MIRROR, &r))
			die("hmm: HMMP2P_IOC_MIRROR");
		/* With the flag, every page must come back as the BAR's. */
		if (flags && r.p2p != HMMP2P_MAX_PAGES) {
			errno = EREMOTEIO;
			die("hmm: not every page was mirrored as P2P memory");
		}
	}
	t = now() - t;
	if (ioctl(ctl, HMMP2P_IOC_STATS, &after))
		die("hmm: HMMP2P_IOC_STATS");
	if (ioctl(ctl, HMMP2P_IOC_DMA, &d))
		die("hmm: HMMP2P_IOC_DMA");
	if (memcmp(got, want + len - HMM_CHUNK, sizeof(got))) {
		errno = EIO;
		die("hmm: edu read other bytes than the process wrote");
	}
	if (ioctl(ctl, HMMP2P_IOC_UNMIRROR))
		die("hmm: HMMP2P_IOC_UNMIRROR");
	munmap(p, len);
	free(want);
	*ram_bytes = (unsigned long)(after.to_ram - before.to_ram) * 4096;
	return t * 1e6;
}

/* The optional words of "mmap" (argv[5...]): notouch or memset, split, afterdirty. */
static int mmap_words(int argc, char **argv, enum touch *touch, int *split, int *dirty)
{
	int i;

	*touch = TOUCH;
	*split = 0;
	*dirty = 0;
	for (i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "notouch") && *touch == TOUCH)
			*touch = NOTOUCH;
		else if (!strcmp(argv[i], "memset") && *touch == TOUCH)
			*touch = MEMSET;
		else if (!strcmp(argv[i], "split") && !*split)
			*split = 1;
		else if (!strcmp(argv[i], "afterdirty") && !*dirty)
			*dirty = 1;
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double v[MAX_REPS], vmap[MAX_REPS], vunmap[MAX_REPS];
	int reps, i, split = 0, dirty;
	double ignored[2];
	enum touch touch;

	if (argc >= 5 && argc <= 8 && !strcmp(argv[1], "mmap") &&
	    !mmap_words(argc, argv, &touch, &split, &dirty)) {
		size_t len = strtoull(argv[3], NULL, 0);

		reps = atoi(argv[4]);
		if (reps < 1 || reps > MAX_REPS)
			return 2;
		for (i = 0; i < reps; i++) {
			if (dirty)
				bench_mmap(argv[2], len, TOUCH, &ignored[0], &ignored[1]);
			v[i] = bench_mmap(argv[2], len, touch, &vmap[i], &vunmap[i]);
		}
		if (split)
			printf("%.0f %.0f %.0f\n", median(v, reps),
			       median(vmap, reps), median(vunmap, reps));
		else
			printf("%.0f\n", median(v, reps));
		return 0;
	} else if (argc == 5 && !strcmp(argv[1], "clear")) {
		size_t len = strtoull(argv[3], NULL, 0);

		reps = atoi(argv[4]);
		if (reps < 1 || reps > MAX_REPS || !len)
			return 2;
		/* The first round's writer. */
		bench_mmap(argv[2], len, MEMSET, &ignored[0], &ignored[1]);
		for (i = 0; i < reps; i++)
			bench_clear(argv[2], len, &v[i], &vmap[i]);
		printf("%.0f %.0f\n", median(v, reps), median(vmap, reps));
		return 0;
	} else if (argc == 7 && !strcmp(argv[1], "read")) {
		size_t bytes = strtoull(argv[4], NULL, 0), chunk = strtoull(argv[5], NULL, 0);

		reps = atoi(argv[6]);
		if (reps < 1 || reps > MAX_REPS || !chunk || bytes % chunk)
			return 2;
		for (i = 0; i < reps; i++)
			v[i] = bench_read(argv[2], argv[3], bytes, chunk);
		printf("%.0f\n", highest(v, reps));
		return 0;
	} else if (argc == 4 && !strcmp(argv[1], "hmm")) {
		size_t len = strtoull(argv[2], NULL, 0);
		unsigned long p2p_bytes = 0, ram_bytes = 0;
		int ctl = open(HMM_CTL, O_RDWR);

		reps = atoi(argv[3]);
		if (reps < 1 || reps > MAX_REPS || !len || len % HMM_CHUNK)
			return 2;
		if (ctl < 0)
			die(HMM_CTL);
		for (i = 0; i < reps; i++) {
			v[i] = bench_hmm(ctl, len, HMMP2P_MIRROR_P2P, &p2p_bytes);
			vmap[i] = bench_hmm(ctl, len, 0, &ram_bytes);
		}
		printf("%.0f %.0f %lu %lu\n", median(v, reps), median(vmap, reps),
		       p2p_bytes, ram_bytes);
		return 0;
	}
	fprintf(stderr, "usage: %s\n       %s\n       %s\n       %s\n",
		"p2pbench mmap BDF BYTES REPS [notouch | memset] [split] [afterdirty]",
		"p2pbench clear BDF BYTES REPS",
		"p2pbench read (BDF|ram) DEV BYTES CHUNK REPS",
		"p2pbench hmm BYTES REPS");
	return 2;
}
