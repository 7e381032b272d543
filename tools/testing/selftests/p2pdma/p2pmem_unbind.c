// SPDX-License-Identifier: GPL-2.0
/*
 * PCI P2PDMA selftests: unbinding the provider while its memory is in use.
 * Mappings of p2pmem/allocate are revoked (SIGBUS, in a forked child too,
 * of 1 GiB too), mmap() racing the unbind, O_DIRECT I/O in flight, and
 * unbind/rebind cycles under load; after each, the provider registers in
 * full again and a new mapping reads zero. The environment is
 * p2pdma_test.c's (p2pmem_fixture.h); the unbind cases have long timeouts,
 * and every bind and unbind is bounded (BIND_TIMEOUT_S), so a stuck one
 * fails its test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#include "p2pmem_fixture.h"

/* --- unbinding the provider --------------------------------------------- */

/*
 * Rebind and wait for the provider to register again in full. (Its pool is
 * new, so "available" says nothing about the unbind; that every page came
 * back is proven by the unbind having finished, since it waits for them.)
 */
static void rebind_and_check(struct __test_metadata *_metadata,
			     FIXTURE_DATA(p2pmem) * self)
{
	ASSERT_EQ(0, set_bound(self->mem.bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->mem.bdf));
	EXPECT_EQ(self->size, read_ull(P2PMEM "size", self->mem.bdf));
	EXPECT_EQ(1, read_ull(P2PMEM "published", self->mem.bdf));
}

TEST_F_TIMEOUT(p2pmem, unbind_revokes_mapping_with_sigbus, 120)
{
	unsigned char *p = map_p2p(self->fd, MIB);

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 7;
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, set_bound(self->mem.bdf, false));
	EXPECT_EQ(-1, available(self->mem.bdf));
	EXPECT_EQ(SIGBUS, touch(p, false));
	EXPECT_EQ(SIGBUS, touch(p + MIB - 1, true));
	munmap(p, MIB);
	rebind_and_check(_metadata, self);
}

/*
 * The same for a mapping of 1 GiB (the switch topology's ivshmem), of which
 * only the first and the last page were ever touched: the unbind revokes
 * all of it, touched or not, and finishes.
 */
TEST_F_TIMEOUT(p2pmem, one_gib_unbind_revokes_mapping_with_sigbus, 300)
{
	unsigned char *p;

	if (self->avail < (long long)GIB)
		SKIP(return, "%s has %lld bytes available, not 1 GiB",
		     self->mem.bdf, self->avail);
	p = map_p2p(self->fd, GIB);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap of 1 GiB: %s", strerror(errno));
	EXPECT_EQ(self->avail - (long long)GIB, available(self->mem.bdf));
	memset(p, 0x11, 4096);
	memset(p + GIB - 4096, 0x22, 4096);
	EXPECT_EQ(0x11, p[0]);
	EXPECT_EQ(0x22, p[GIB - 1]);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, set_bound(self->mem.bdf, false));
	EXPECT_EQ(-1, available(self->mem.bdf));
	EXPECT_EQ(SIGBUS, touch(p, false));
	EXPECT_EQ(SIGBUS, touch(p + GIB / 2, false));
	EXPECT_EQ(SIGBUS, touch(p + GIB - 1, true));
	munmap(p, GIB);
	rebind_and_check(_metadata, self);
}

/*
 * A mapping shared with a forked child is revoked in both processes: each
 * gets SIGBUS, the unbind finishes, and the memory is all there after a
 * rebind.
 */
TEST_F_TIMEOUT(p2pmem, unbind_revokes_mapping_in_forked_child, 120)
{
	unsigned char *p = map_p2p(self->fd, MIB);
	int status, ready[2], go[2];
	char c = 0;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 7;
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		if (touch(p, false) || p[0] != 7)
			_exit(1);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		if (touch(p, false) != SIGBUS || touch(p + MIB - 1, true) != SIGBUS)
			_exit(3);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("child could not use the mapping");
	ASSERT_EQ(0, set_bound(self->mem.bdf, false));
	EXPECT_EQ(-1, available(self->mem.bdf));
	EXPECT_EQ(SIGBUS, touch(p, false));
	EXPECT_EQ(SIGBUS, touch(p + MIB - 1, true));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(ready[0]);
	close(go[1]);
	munmap(p, MIB);
	rebind_and_check(_metadata, self);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

#define RACERS		3
#define RACER_RING	4

struct racer {
	const char *path;
	int stop, unbound;	/* read and written with __atomic */
	long maps, refused, revoked;
	int errors, last_errno;
	unsigned char *ring[RACER_RING];
	size_t len;
};

static void racer_error(struct racer *r, int err)
{
	r->errors++;
	r->last_errno = err;
}

/*
 * Map, touch, and keep the last RACER_RING mappings, unmapping the oldest
 * only once a new one was made: a mapping that the unbind failed to revoke
 * therefore stays mapped, and the unbind never finishes.
 */
static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	unsigned int next = 0;
	unsigned char *p;
	int fd, sig, i, done;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		fd = open(r->path, O_RDWR);
		if (fd < 0) {
			/* The file is gone, or going (kernfs: ENODEV). */
			if (errno != ENOENT && errno != ENODEV)
				racer_error(r, errno);
			usleep(1000);
			continue;
		}
		p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED) {
			/* ENODEV: the file is being removed; ENOMEM: closing. */
			if (errno != ENODEV && errno != ENOMEM)
				racer_error(r, errno);
			r->refused++;
			usleep(1000);
			continue;
		}
		for (i = 0; i < 2; i++) {
			/* Once the unbind finished, nothing is mapped any more. */
			done = __atomic_load_n(&r->unbound, __ATOMIC_ACQUIRE);
			sig = touch(p + i * (r->len - 1), true);
			if (sig == SIGBUS)
				r->revoked++;
			else if (sig)
				racer_error(r, -sig);
			else if (done)
				racer_error(r, -1);
		}
		if (r->ring[next])
			munmap(r->ring[next], r->len);
		r->ring[next] = p;
		next = (next + 1) % RACER_RING;
		r->maps++;
	}
	return NULL;
}

/*
 * Threads map, touch and unmap allocate in a loop while the provider
 * unbinds, several times over. Every unbind must finish (so no mapping
 * escaped the revocation: it would hold its pages), every mapping left
 * must give SIGBUS, and after the last rebind the pool is whole again.
 */
TEST_F_TIMEOUT(p2pmem, mmap_races_unbind, 280)
{
	int cycles = getenv("P2P_RACE_CYCLES") ? atoi(getenv("P2P_RACE_CYCLES")) : 5;
	struct racer r[RACERS];
	pthread_t t[RACERS];
	long maps, revoked = 0;
	int c, i, k, w;

	close(self->fd);
	self->fd = -1;
	for (c = 0; c < cycles; c++) {
		for (i = 0; i < RACERS; i++) {
			r[i] = (struct racer){ .path = self->path,
					       .len = (size_t)(i + 1) * 64 * 1024 };
			ASSERT_EQ(0, pthread_create(&t[i], NULL, racer_fn, &r[i]));
		}
		/* The racers must be mapping when the unbind starts. */
		for (w = 0; w < 1000; w++) {
			for (maps = 0, i = 0; i < RACERS; i++)
				maps += __atomic_load_n(&r[i].maps, __ATOMIC_RELAXED);
			if (maps >= 20 * RACERS)
				break;
			usleep(10000);
		}
		EXPECT_LE(20 * RACERS, maps) TH_LOG("cycle %d: only %ld mappings", c, maps);
		usleep(c * 7000 % 50000);
		k = set_bound(self->mem.bdf, false);
		for (i = 0; i < RACERS; i++)
			__atomic_store_n(&r[i].unbound, !k, __ATOMIC_RELEASE);
		usleep(200000);
		for (i = 0; i < RACERS; i++) {
			__atomic_store_n(&r[i].stop, 1, __ATOMIC_RELAXED);
			pthread_join(t[i], NULL);
		}
		ASSERT_EQ(0, k) TH_LOG("cycle %d: unbind did not finish", c);
		for (i = 0; i < RACERS; i++) {
			EXPECT_EQ(0, r[i].errors)
				TH_LOG("cycle %d racer %d: last error %d", c, i, r[i].last_errno);
			for (w = 0; w < RACER_RING; w++) {
				if (!r[i].ring[w])
					continue;
				EXPECT_EQ(SIGBUS, touch(r[i].ring[w], false));
				munmap(r[i].ring[w], r[i].len);
			}
			revoked += r[i].revoked;
		}
		ASSERT_EQ(0, set_bound(self->mem.bdf, true));
		ASSERT_EQ(0, wait_p2pmem(self->mem.bdf));
		EXPECT_EQ(self->avail, available(self->mem.bdf)) TH_LOG("cycle %d", c);
	}
	TH_LOG("%ld accesses hit a revoked mapping", revoked);
	EXPECT_EQ(self->size, read_ull(P2PMEM "size", self->mem.bdf));
	EXPECT_EQ(1, read_ull(P2PMEM "published", self->mem.bdf));
}

struct reader {
	int fd;
	unsigned char *p;
	int stop;		/* read and written with __atomic */
	int unbound;		/* set once the unbind has returned */
	int ok, failed;
	int late_ok;		/* started after the unbind returned, yet read */
	int late_failed;	/* started after the unbind returned, failed */
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	int late;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		late = __atomic_load_n(&r->unbound, __ATOMIC_ACQUIRE);
		if (pread(r->fd, r->p, MIB, DISK_OFF) == (ssize_t)MIB) {
			__atomic_add_fetch(&r->ok, 1, __ATOMIC_RELAXED);
			r->late_ok += late;
		} else {
			r->failed++;
			r->late_failed += late;
			/* Failing while the unbind runs; enough once it is done. */
			if (r->late_failed > 3)
				break;
			usleep(1000);
		}
	}
	return NULL;
}

/*
 * O_DIRECT into the provider's memory is in flight while it unbinds: the
 * unbind waits for the I/O, later I/O fails, and nothing leaks.
 */
TEST_F_TIMEOUT(p2pmem, unbind_during_odirect_io, 120)
{
	struct reader r = { 0 };
	pthread_t t;
	int i;
	/* The source's route if it has one, else the provider's own. */
	const char *blk = self->have_src &&
		strcmp(expect_map("P2P_EXPECT_SRC"), "refused") ? self->src.blk : self->mem.blk;

	if (!blk[0])
		SKIP(return, "no namespace reaches the P2P memory of %s", self->mem.bdf);
	r.fd = open(blk, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, r.fd);
	r.p = map_p2p(self->fd, MIB);
	ASSERT_NE(MAP_FAILED, r.p);
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_fn, &r));
	/* The load must be running when the unbind starts. */
	for (i = 0; i < 300 && __atomic_load_n(&r.ok, __ATOMIC_RELAXED) < 2; i++)
		usleep(100000);
	ASSERT_LE(2, __atomic_load_n(&r.ok, __ATOMIC_RELAXED))
		TH_LOG("only %d reads completed before the unbind", r.ok);
	ASSERT_EQ(0, set_bound(self->mem.bdf, false));
	__atomic_store_n(&r.unbound, 1, __ATOMIC_RELEASE);
	usleep(300000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	TH_LOG("%d reads completed, %d failed (%d of them started after the unbind)",
	       r.ok, r.failed, r.late_failed);
	/*
	 * The unbind waited for the reads in flight: none that started after
	 * it returned reached the memory, and the reader saw them fail.
	 */
	EXPECT_EQ(0, r.late_ok);
	EXPECT_LE(1, r.late_failed);
	/*
	 * No byte reaches the revoked memory: -1 with EFAULT through another
	 * NVMe (the pages cannot be pinned); through the provider's own
	 * namespace, which went away with it, 0 or -1.
	 */
	errno = 0;
	if (blk == self->src.blk) {
		EXPECT_EQ(-1, pread(r.fd, r.p, MIB, DISK_OFF));
		EXPECT_EQ(EFAULT, errno);
	} else {
		EXPECT_GE(0, pread(r.fd, r.p, MIB, DISK_OFF));
	}
	EXPECT_EQ(SIGBUS, touch(r.p, false));
	munmap(r.p, MIB);
	close(r.fd);
	rebind_and_check(_metadata, self);
}

/* Bounded so a slow cycle fails this case long before the boot's limit. */
TEST_F_TIMEOUT(p2pmem, unbind_rebind_stress, 600)
{
	int cycles = getenv("P2P_UNBIND_CYCLES") ? atoi(getenv("P2P_UNBIND_CYCLES")) : 100;
	int i, fd;
	unsigned char *p;

	close(self->fd);
	self->fd = -1;
	for (i = 0; i < cycles; i++) {
		fd = open(self->path, O_RDWR);
		ASSERT_LE(0, fd) TH_LOG("cycle %d: open: %s", i, strerror(errno));
		p = map_p2p(fd, MIB);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("cycle %d", i);
		p[i % MIB] = 1;
		ASSERT_EQ(0, set_bound(self->mem.bdf, false));
		ASSERT_EQ(SIGBUS, touch(p, true));
		munmap(p, MIB);
		close(fd);
		ASSERT_EQ(0, set_bound(self->mem.bdf, true));
		ASSERT_EQ(0, wait_p2pmem(self->mem.bdf)) TH_LOG("cycle %d", i);
	}
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/*
 * Last, after the cases of p2pdma_test (which runs first) and every case
 * above have written P2P memory and unbound and rebound its provider
 * (whose NVMe queues live in the same BAR): a new mapping of up to 8 MiB
 * of what is available reads as zero.
 */
TEST_F_TIMEOUT(p2pmem, mapping_of_used_memory_reads_zero, 120)
{
	size_t len = self->avail < (long long)(8 * MIB) ? self->avail : 8 * MIB;
	unsigned char *p;
	long at;

	len &= ~(2 * MIB - 1);
	ASSERT_NE(0, len);
	p = map_p2p(self->fd, len);
	ASSERT_NE(MAP_FAILED, p);
	at = first_nonzero(p, len);
	EXPECT_EQ(-1, at) TH_LOG("byte %ld of %zu is %#x, not 0", at, len, p[at]);
	munmap(p, len);
}

TEST_HARNESS_MAIN
