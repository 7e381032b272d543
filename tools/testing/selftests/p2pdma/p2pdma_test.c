// SPDX-License-Identifier: GPL-2.0
/*
 * PCI P2PDMA selftests: the p2pmem sysfs ABI, mmap of p2pmem/allocate and
 * its refusals, O_DIRECT between NVMe namespaces and P2P memory, what a
 * new mapping sees, and concurrency. Unbinding the provider under all of
 * that is p2pmem_unbind.c, with the same fixture (p2pmem_fixture.h).
 *
 * Devices are found by NVMe serial number, never by nvmeN name, from the
 * environment (the QEMU harness sets them from the topology):
 *   P2P_MEM         serial of the NVMe whose CMB is the P2P memory
 *   P2P_MEM_BDF     or instead the PCI address of a provider that is not an
 *                   NVMe (p2pmem-bar bound to an ivshmem device, say); the
 *                   cases that need the provider's own namespace then SKIP
 *   P2P_SRC/P2P_DST serials of a source and a destination NVMe
 *   P2P_EXPECT_SRC  map type from the provider to the source:
 *   P2P_EXPECT_DST  "bus-address", "through-host-bridge" or "refused"
 *   P2P_UNBIND_CYCLES  cycles of p2pmem_unbind's stress test (default 100)
 *   P2P_RACE_CYCLES    its unbinds under concurrent mmap (default 5)
 * The unbind and concurrency tests have long timeouts: under a debug kernel
 * in an emulator one unbind/rebind cycle can take seconds. Every bind and
 * unbind is bounded (BIND_TIMEOUT_S), so a stuck one fails its test.
 * Without them, or without P2P memory, the tests SKIP with the reason
 * (tests/run-all.sh counts such a skip as a failure: its topologies
 * provide the devices).
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

/* --- sysfs ABI ------------------------------------------------------- */

/* size equals the CMB the controller advertises in CMBSZ (NVMe 1.4 3.1.12) */
TEST_F(p2pmem, size_matches_advertised_cmb)
{
	char path[256];
	unsigned long long unit, cmb;
	unsigned int *regs;
	unsigned int cmbsz;
	int fd;

	if (strcmp(provider_drv, "nvme"))
		SKIP(return, "the provider is not an NVMe (driver %s)", provider_drv);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", self->mem.bdf);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	regs = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, regs);
	cmbsz = __atomic_load_n(&regs[0x3c / 4], __ATOMIC_RELAXED);
	munmap(regs, 4096);
	close(fd);
	unit = 4096ULL << (4 * ((cmbsz >> 8) & 0xf));
	cmb = (cmbsz >> 12) * unit;
	ASSERT_NE(0, cmb);
	EXPECT_EQ(cmb, self->size);
}

TEST_F(p2pmem, available_not_above_size)
{
	EXPECT_LT(0, self->avail);
	EXPECT_LE(self->avail, self->size);
}

TEST_F(p2pmem, published_is_one)
{
	EXPECT_EQ(1, read_ull(P2PMEM "published", self->mem.bdf));
}

TEST_F(p2pmem, allocate_mode_0660_owner_root)
{
	struct stat st;

	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

/*
 * Like Linux 6.12, allocate is 1 TiB long, so that mmap(2) wrappers that
 * check the length against st_size (Python's mmap.mmap()) accept it.
 */
TEST_F(p2pmem, allocate_size_is_1tib)
{
	struct stat st;

	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(1LL << 40, (long long)st.st_size);
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ(1LL << 40, (long long)st.st_size);
}

TEST_F(p2pmem, unprivileged_open_is_eacces)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(open(self->path, O_RDWR) < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* --- mmap and its refusals ----------------------------------------- */

TEST_F(p2pmem, mmap_takes_exactly_its_length_and_munmap_returns_it)
{
	unsigned char *p = map_p2p(self->fd, 2 * MIB);

	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(self->avail - (long long)(2 * MIB), available(self->mem.bdf));
	ASSERT_EQ(0, munmap(p, 2 * MIB));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

TEST_F(p2pmem, cpu_writes_read_back)
{
	unsigned char *p = map_p2p(self->fd, MIB), *ref = malloc(MIB);

	ASSERT_NE(MAP_FAILED, p);
	fill(ref, MIB, 7);
	memcpy(p, ref, MIB);
	EXPECT_EQ(0, memcmp(p, ref, MIB));
	munmap(p, MIB);
	free(ref);
}

TEST_F(p2pmem, process_exit_returns_memory)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned char *p = map_p2p(self->fd, 4 * MIB);

		if (p == MAP_FAILED)
			_exit(1);
		memset(p, 1, 4 * MIB);
		_exit(available(self->mem.bdf) == self->avail - (long long)(4 * MIB) ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

TEST_F(p2pmem, map_private_is_einval)
{
	void *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/*
 * A shared mapping of a file open read-only is still shared (VM_MAYSHARE):
 * it gets P2P memory, reads work and writes fault; it can never be made
 * writable. A private one is refused on such a file too.
 */
TEST_F(p2pmem, read_only_shared_mapping_is_allowed)
{
	int fd = open(self->path, O_RDONLY);
	unsigned char *p;

	ASSERT_LE(0, fd) TH_LOG("open O_RDONLY: %s", strerror(errno));
	p = mmap(NULL, MIB, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_EQ(self->avail - (long long)MIB, available(self->mem.bdf));
	EXPECT_EQ(0, touch(p, false));
	EXPECT_EQ(0, touch(p + MIB - 1, false));
	EXPECT_EQ(SIGSEGV, touch(p, true));
	EXPECT_EQ(-1, mprotect(p, MIB, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MIB, PROT_READ, MAP_PRIVATE, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	close(fd);
}

TEST_F(p2pmem, nonzero_offset_is_einval)
{
	void *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 4096);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/*
 * Too long for the pool is ENOMEM, up to the file's whole 1 TiB (which
 * once made the kernel ask for 32 MiB of bitmaps first: a warning).
 */
TEST_F(p2pmem, larger_than_available_is_enomem)
{
	void *p = map_p2p(self->fd, self->avail + 2 * MIB);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENOMEM, errno);
	p = map_p2p(self->fd, 1ULL << 40);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* Partial munmap frees just the unmapped pages; the rest keeps its data. */
TEST_F(p2pmem, partial_munmap_frees_only_that_part)
{
	unsigned char *p = map_p2p(self->fd, MIB), *ref = malloc(MIB);

	ASSERT_NE(MAP_FAILED, p);
	fill(ref, MIB, 3);
	memcpy(p, ref, MIB);
	ASSERT_EQ(0, munmap(p + 256 * 1024, 256 * 1024));
	EXPECT_EQ(self->avail - (long long)(768 * 1024), available(self->mem.bdf));
	EXPECT_EQ(0, memcmp(p, ref, 256 * 1024));
	EXPECT_EQ(0, memcmp(p + 512 * 1024, ref + 512 * 1024, 512 * 1024));
	munmap(p, MIB);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	free(ref);
}

/* The mapping cannot grow (VM_DONTEXPAND): mremap() fails with EFAULT. */
TEST_F(p2pmem, mremap_grow_is_efault)
{
	unsigned char *p = map_p2p(self->fd, MIB);
	void *q;

	ASSERT_NE(MAP_FAILED, p);
	q = mremap(p, MIB, 2 * MIB, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	munmap(p, MIB);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* Moving the mapping without growing it keeps the same P2P memory. */
TEST_F(p2pmem, mremap_move_keeps_data)
{
	unsigned char *p = map_p2p(self->fd, MIB), *q, *ref = malloc(MIB);
	void *hole;

	ASSERT_NE(MAP_FAILED, p);
	fill(ref, MIB, 9);
	memcpy(p, ref, MIB);
	hole = mmap(NULL, MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	q = mremap(p, MIB, MIB, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0, memcmp(q, ref, MIB));
	EXPECT_EQ(self->avail - (long long)MIB, available(self->mem.bdf));
	munmap(q, MIB);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	free(ref);
}

TEST_F(p2pmem, mprotect_read_only_then_write_faults)
{
	unsigned char *p = map_p2p(self->fd, MIB);

	ASSERT_NE(MAP_FAILED, p);
	p[5] = 42;
	ASSERT_EQ(0, mprotect(p, MIB, PROT_READ));
	EXPECT_EQ(42, p[5]);
	EXPECT_EQ(SIGSEGV, touch(p + 5, true));
	munmap(p, MIB);
}

/*
 * A mapping made without write access and widened by mprotect() takes
 * writes, on pages never written before (Linux 6.12 retries the write
 * fault forever). The child widens its view and writes, bounded by
 * alarm(); the parent, which shares the pages, compares the bytes.
 */
TEST_F(p2pmem, write_after_mprotect_to_read_write_goes_through)
{
	static const int first_prot[] = { PROT_NONE, PROT_READ };
	const size_t len = 64 * 1024;
	unsigned char *p, *ref = malloc(len);
	int i, status;
	pid_t pid;

	ASSERT_NE(NULL, ref);
	for (i = 0; i < 2; i++) {
		fill(ref, len, 53 + i);
		p = mmap(NULL, len, first_prot[i], MAP_SHARED, self->fd, 0);
		ASSERT_NE(MAP_FAILED, p);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			alarm(20);
			if (mprotect(p, len, PROT_READ | PROT_WRITE))
				_exit(1);
			memcpy(p, ref, len);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status))
			TH_LOG("from %s: the writer died of signal %d%s",
			       i ? "PROT_READ" : "PROT_NONE", WTERMSIG(status),
			       WTERMSIG(status) == SIGALRM ? " (the write spun for 20 s)" : "");
		ASSERT_EQ(0, WEXITSTATUS(status));
		ASSERT_EQ(0, mprotect(p, len, PROT_READ));
		EXPECT_EQ(0, memcmp(p, ref, len))
			TH_LOG("from %s: the child's bytes are not in the memory",
			       i ? "PROT_READ" : "PROT_NONE");
		munmap(p, len);
	}
	free(ref);
}

/*
 * fork() shares the mapping: the child sees the parent's bytes and the
 * parent sees the child's writes. The memory returns to the pool only once
 * both have let go, whichever goes first.
 */
TEST_F(p2pmem, fork_child_shares_mapping)
{
	unsigned char *p = map_p2p(self->fd, MIB), *ref = malloc(MIB), *ref2 = malloc(MIB);
	int status, go[2];
	char c = 0;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, p);
	fill(ref, MIB, 29);
	fill(ref2, MIB, 31);
	memcpy(p, ref, MIB);

	/* The child goes first. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (touch(p, false) || memcmp(p, ref, MIB))
			_exit(1);
		memcpy(p, ref2, MIB);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, memcmp(p, ref2, MIB));
	EXPECT_EQ(self->avail - (long long)MIB, available(self->mem.bdf));

	/* The parent goes first: the child keeps the memory alive. */
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (touch(p, false) || memcmp(p, ref2, MIB))
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(self->avail - (long long)MIB, available(self->mem.bdf));
	ASSERT_EQ(1, write(go[1], &c, 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	free(ref);
	free(ref2);
}

/*
 * Memory that the parent never touched is the child's to fault in after
 * the parent let go: an munmap() gives back only what no process maps
 * any more, whether or not a page of it was ever mapped.
 */
TEST_F(p2pmem, fork_child_faults_in_what_the_parent_unmapped_untouched)
{
	const size_t len = 4 * MIB;
	unsigned char *p = map_p2p(self->fd, len), *ref = malloc(len);
	int status, go[2];
	char c = 0;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_NE(NULL, ref);
	fill(ref, len, 37);
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (touch(p, true) || touch(p + len - 1, false))
			_exit(3);
		memcpy(p, ref, len);
		_exit(memcmp(p, ref, len) ? 1 : 0);
	}
	close(go[0]);
	ASSERT_EQ(0, munmap(p, len));
	EXPECT_EQ(self->avail - (long long)len, available(self->mem.bdf));
	ASSERT_EQ(1, write(go[1], &c, 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	free(ref);
}

/* Many mappings until the pool runs dry, then every byte comes back. */
TEST_F(p2pmem, map_until_exhausted_then_release_all)
{
	void *maps[128];
	int n = 0, i;

	while (n < 128) {
		maps[n] = map_p2p(self->fd, 2 * MIB);
		if (maps[n] == MAP_FAILED)
			break;
		n++;
	}
	ASSERT_LT(n, 128);
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(self->avail / (long long)(2 * MIB), n);
	for (i = 0; i < n; i++)
		munmap(maps[i], 2 * MIB);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* --- O_DIRECT ------------------------------------------------------- */

/* NVMe -> P2P memory: the bytes in P2P memory match, or refused_errno(). */
static void odirect_read_leg(struct __test_metadata *_metadata,
			     FIXTURE_DATA(p2pmem) * self, const char *blk,
			     const char *expect)
{
	unsigned char *ram, *p;
	int fd;

	ASSERT_EQ(0, posix_memalign((void **)&ram, 4096, MIB));
	fill(ram, MIB, 11);
	fd = open(blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)MIB, pwrite(fd, ram, MIB, DISK_OFF));
	p = map_p2p(self->fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0, MIB);
	if (!strcmp(expect, "refused")) {
		EXPECT_EQ(-1, pread(fd, p, MIB, DISK_OFF));
		EXPECT_EQ(refused_errno(), errno);
	} else {
		EXPECT_EQ((ssize_t)MIB, pread(fd, p, MIB, DISK_OFF));
		EXPECT_EQ(0, memcmp(p, ram, MIB));
	}
	munmap(p, MIB);
	close(fd);
	free(ram);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* P2P memory -> NVMe: the bytes on disk match, or refused_errno(). */
static void odirect_write_leg(struct __test_metadata *_metadata,
			      FIXTURE_DATA(p2pmem) * self, const char *blk,
			      const char *expect)
{
	unsigned char *ram, *p;
	int fd;

	ASSERT_EQ(0, posix_memalign((void **)&ram, 4096, MIB));
	fd = open(blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	memset(ram, 0, MIB);
	ASSERT_EQ((ssize_t)MIB, pwrite(fd, ram, MIB, DISK_OFF + MIB));
	p = map_p2p(self->fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, MIB, 13);
	if (!strcmp(expect, "refused")) {
		EXPECT_EQ(-1, pwrite(fd, p, MIB, DISK_OFF + MIB));
		EXPECT_EQ(refused_errno(), errno);
	} else {
		EXPECT_EQ((ssize_t)MIB, pwrite(fd, p, MIB, DISK_OFF + MIB));
		ASSERT_EQ((ssize_t)MIB, pread(fd, ram, MIB, DISK_OFF + MIB));
		EXPECT_EQ(0, memcmp(p, ram, MIB));
	}
	munmap(p, MIB);
	close(fd);
	free(ram);
}

TEST_F(p2pmem, odirect_source_into_p2pmem)
{
	if (!self->have_src)
		SKIP(return, "no P2P_SRC NVMe");
	odirect_read_leg(_metadata, self, self->src.blk, expect_map("P2P_EXPECT_SRC"));
}

TEST_F(p2pmem, odirect_p2pmem_to_destination)
{
	if (!self->have_dst)
		SKIP(return, "no P2P_DST NVMe");
	odirect_write_leg(_metadata, self, self->dst.blk, expect_map("P2P_EXPECT_DST"));
}

/* The provider's own namespace always reaches its CMB (distance 0). */
TEST_F(p2pmem, odirect_provider_namespace_both_ways)
{
	if (!self->mem.blk[0])
		SKIP(return, "the provider %s has no namespace", self->mem.bdf);
	odirect_read_leg(_metadata, self, self->mem.blk, "bus-address");
	odirect_write_leg(_metadata, self, self->mem.blk, "bus-address");
}

/* Buffered I/O copies through the CPU: it works and moves the same bytes. */
TEST_F(p2pmem, buffered_read_into_p2pmem_copies_by_cpu)
{
	unsigned char *ram, *p;
	int dfd, bfd;

	if (!self->mem.blk[0])
		SKIP(return, "the provider %s has no namespace", self->mem.bdf);
	ASSERT_EQ(0, posix_memalign((void **)&ram, 4096, MIB));
	fill(ram, MIB, 17);
	dfd = open(self->mem.blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, dfd);
	ASSERT_EQ((ssize_t)MIB, pwrite(dfd, ram, MIB, DISK_OFF + 2 * MIB));
	bfd = open(self->mem.blk, O_RDONLY);
	ASSERT_LE(0, bfd);
	p = map_p2p(self->fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ((ssize_t)MIB, pread(bfd, p, MIB, DISK_OFF + 2 * MIB));
	EXPECT_EQ(0, memcmp(p, ram, MIB));
	munmap(p, MIB);
	close(bfd);
	close(dfd);
	free(ram);
}

/*
 * A namespace whose O_DIRECT I/O reaches the P2P memory: the provider's
 * own, else the source's if its route is not refused; NULL if none.
 */
static const char *reachable_blk(FIXTURE_DATA(p2pmem) * self)
{
	if (self->mem.blk[0])
		return self->mem.blk;
	if (self->have_src && strcmp(expect_map("P2P_EXPECT_SRC"), "refused"))
		return self->src.blk;
	return NULL;
}

/* --- what the next mapping sees ----------------------------------------- */

/*
 * The page frame behind the mapped page at @p (/proc/self/pagemap, which
 * shows frames to root only), or 0 if none is mapped there.
 */
static uint64_t pfn_of(const void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (uintptr_t)p / 4096 * sizeof(ent)) != sizeof(ent))
		ent = 0;
	close(fd);
	return ent >> 63 ? ent & ((1ULL << 55) - 1) : 0;
}

/* Load one word of every 4 KiB page of @p, so that each has a clean PTE. */
static void read_every_page(const unsigned char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		(void)__atomic_load_n((const uint64_t *)(p + off), __ATOMIC_RELAXED);
}

/*
 * The end of the cases below: a mapping of @len, whose pages were the
 * frames @pfn[0] to @pfn[1], was written the way @how says and is unmapped
 * now. All of it is back in the pool, so one mapping of everything that is
 * available gets those frames again (mmap() prefers clean memory, so a
 * mapping of @len alone may well land elsewhere): every written page reads
 * zero in it, since memory written through any path is cleared before it
 * is handed out again, and so does the start of every other page.
 */
static void next_mapping_reads_zero(struct __test_metadata *_metadata,
				    FIXTURE_DATA(p2pmem) * self, size_t len,
				    const uint64_t pfn[2], const char *how)
{
	size_t all = self->avail, pages = all / 4096, found = 0, i;
	uint64_t *pm = malloc(pages * sizeof(*pm)), f;
	unsigned char *p;
	long at = -1;
	int fd;

	ASSERT_NE(NULL, pm);
	ASSERT_EQ(self->avail, available(self->mem.bdf))
		TH_LOG("after %s: not all of the mapping came back", how);
	p = map_p2p(self->fd, all);
	ASSERT_NE(MAP_FAILED, p)
		TH_LOG("mmap of all %zu available bytes: %s", all, strerror(errno));
	/* A page has a frame in pagemap once it was faulted in. */
	read_every_page(p, all);
	fd = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)(pages * sizeof(*pm)),
		  pread(fd, pm, pages * sizeof(*pm), (uintptr_t)p / 4096 * sizeof(*pm)));
	close(fd);
	for (i = 0; i < pages && at < 0; i++) {
		f = pm[i] >> 63 ? pm[i] & ((1ULL << 55) - 1) : 0;
		if (f >= pfn[0] && f <= pfn[1]) {
			found++;
			at = first_nonzero(p + i * 4096, 4096);
		} else {
			at = first_nonzero(p + i * 4096, 64);
		}
		if (at >= 0)
			at += i * 4096;
	}
	EXPECT_EQ(-1, at)
		TH_LOG("after %s: byte %ld (page %ld, %s) of the new mapping is %#x, not 0",
		       how, at, at / 4096,
		       found && f >= pfn[0] && f <= pfn[1] ? "written before" : "not written",
		       p[at]);
	if (at < 0)
		EXPECT_EQ(len / 4096, found)
			TH_LOG("only %zu of the %zu written pages are in the new mapping",
			       found, len / 4096);
	EXPECT_EQ(0, munmap(p, all));
	free(pm);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* Record the frames of the first and last page of the mapping @p of @len. */
static void frames_of(struct __test_metadata *_metadata, const unsigned char *p,
		      size_t len, uint64_t pfn[2])
{
	pfn[0] = pfn_of(p);
	pfn[1] = pfn_of(p + len - 4096);
	ASSERT_NE(0, pfn[0]) TH_LOG("no frame in /proc/self/pagemap (not root?)");
	ASSERT_EQ(pfn[0] + len / 4096 - 1, pfn[1])
		TH_LOG("the mapping is not one range of P2P memory");
}

/*
 * No data reaches another process: a child fills a mapping, sends its
 * frames and exits; the next mapping that gets those frames reads them as
 * zero. Linux 6.12 shows the child's bytes.
 */
TEST_F_TIMEOUT(p2pmem, new_mapping_reads_zero_after_another_process, 120)
{
	const size_t len = 2 * MIB;
	uint64_t pfn[2] = {};
	unsigned char *p;
	int status, fds[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fds[0]);
		p = map_p2p(self->fd, len);
		if (p == MAP_FAILED)
			_exit(1);
		fill(p, len, 41);
		pfn[0] = pfn_of(p);
		pfn[1] = pfn_of(p + len - 4096);
		if (write(fds[1], pfn, sizeof(pfn)) != sizeof(pfn))
			_exit(3);
		_exit(first_nonzero(p, len) < 0 ? 2 : 0);
	}
	close(fds[1]);
	ASSERT_EQ((ssize_t)sizeof(pfn), read(fds[0], pfn, sizeof(pfn)));
	close(fds[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_NE(0, pfn[0]) TH_LOG("no frame in /proc/self/pagemap (not root?)");
	ASSERT_EQ(pfn[0] + len / 4096 - 1, pfn[1])
		TH_LOG("the child's mapping is not one range of P2P memory");
	next_mapping_reads_zero(_metadata, self, len, pfn, "another process's writes");
}

/*
 * Only a device writes the memory: O_DIRECT reads from an NVMe into the
 * mapping, whose pages the CPU only read (so their PTEs stayed clean). The
 * pages are dirty all the same, and the next mapping reads zero.
 */
TEST_F_TIMEOUT(p2pmem, new_mapping_reads_zero_after_dma_only_write, 120)
{
	const char *blk = reachable_blk(self);
	const size_t len = 4 * MIB;
	unsigned char *ram, *p;
	uint64_t pfn[2];
	int fd;

	if (!blk)
		SKIP(return, "no namespace reaches the P2P memory of %s", self->mem.bdf);
	ASSERT_EQ(0, posix_memalign((void **)&ram, 4096, len));
	fill(ram, len, 61);
	fd = open(blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", blk, strerror(errno));
	ASSERT_EQ((ssize_t)len, pwrite(fd, ram, len, DISK_OFF));
	p = map_p2p(self->fd, len);
	ASSERT_NE(MAP_FAILED, p);
	read_every_page(p, len);
	ASSERT_EQ((ssize_t)len, pread(fd, p, len, DISK_OFF))
		TH_LOG("O_DIRECT read from %s: %s", blk, strerror(errno));
	ASSERT_EQ(0, memcmp(p, ram, len)) TH_LOG("the disk's bytes did not arrive");
	frames_of(_metadata, p, len, pfn);
	ASSERT_EQ(0, munmap(p, len));
	close(fd);
	free(ram);
	next_mapping_reads_zero(_metadata, self, len, pfn, "an O_DIRECT read into it");
}

/*
 * Only a forked child writes; the parent reads the pages before the fork
 * and after the child exited, and is the last to unmap them, with clean
 * PTEs of its own. The child's writes still count.
 */
TEST_F_TIMEOUT(p2pmem, new_mapping_reads_zero_after_child_only_write, 120)
{
	const size_t len = 2 * MIB;
	unsigned char *p, *ref = malloc(len);
	uint64_t pfn[2];
	int status;
	pid_t pid;

	ASSERT_NE(NULL, ref);
	fill(ref, len, 67);
	p = map_p2p(self->fd, len);
	ASSERT_NE(MAP_FAILED, p);
	read_every_page(p, len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		memcpy(p, ref, len);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, memcmp(p, ref, len)) TH_LOG("the parent does not see the child's bytes");
	frames_of(_metadata, p, len, pfn);
	ASSERT_EQ(0, munmap(p, len));
	free(ref);
	next_mapping_reads_zero(_metadata, self, len, pfn, "a forked child's writes");
}

/*
 * Mapped PROT_READ and read, so every page has a read-only PTE, then
 * made writable by mprotect() and written: the next mapping reads zero.
 */
TEST_F_TIMEOUT(p2pmem, new_mapping_reads_zero_after_write_via_mprotect, 120)
{
	const size_t len = 2 * MIB;
	unsigned char *p, *ref = malloc(len);
	uint64_t pfn[2];

	ASSERT_NE(NULL, ref);
	fill(ref, len, 71);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	read_every_page(p, len);
	ASSERT_EQ(0, mprotect(p, len, PROT_READ | PROT_WRITE));
	memcpy(p, ref, len);
	ASSERT_EQ(0, memcmp(p, ref, len)) TH_LOG("the writes did not arrive");
	frames_of(_metadata, p, len, pfn);
	ASSERT_EQ(0, munmap(p, len));
	free(ref);
	next_mapping_reads_zero(_metadata, self, len, pfn, "writes after mprotect()");
}

/*
 * Of 4 MiB, the odd 4 KiB pages are written, the even pages of the first
 * half only read and those of the second half never touched: the next
 * mapping reads zero everywhere.
 */
TEST_F_TIMEOUT(p2pmem, new_mapping_reads_zero_after_untouched_and_touched_mix, 120)
{
	const size_t len = 4 * MIB;
	unsigned char *p, *ref = malloc(4096);
	uint64_t pfn[2];
	size_t off;

	ASSERT_NE(NULL, ref);
	p = map_p2p(self->fd, len);
	ASSERT_NE(MAP_FAILED, p);
	for (off = 0; off < len; off += 4096) {
		if (off / 4096 % 2) {
			fill(ref, 4096, off / 4096);
			memcpy(p + off, ref, 4096);
		} else if (off < len / 2) {
			(void)__atomic_load_n((uint64_t *)(p + off), __ATOMIC_RELAXED);
		}
	}
	for (off = 4096; off < len; off += 2 * 4096) {
		fill(ref, 4096, off / 4096);
		ASSERT_EQ(0, memcmp(p + off, ref, 4096))
			TH_LOG("the write to page %zu did not arrive", off / 4096);
	}
	frames_of(_metadata, p, len, pfn);
	ASSERT_EQ(0, munmap(p, len));
	free(ref);
	next_mapping_reads_zero(_metadata, self, len, pfn, "writes to the odd pages");
}

/* --- concurrency ------------------------------------------------------ */

struct worker {
	const char *alloc_path, *blk;
	const unsigned char *ref;	/* what the disk holds at DISK_OFF */
	int id, errors, rounds;
	double until;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	size_t len = (size_t)(w->id + 1) * 256 * 1024;
	int afd = open(w->alloc_path, O_RDWR), dfd = open(w->blk, O_RDONLY | O_DIRECT);
	unsigned char *p;

	if (afd < 0 || dfd < 0) {
		w->errors++;
		return NULL;
	}
	while (now() < w->until) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
		if (p == MAP_FAILED) {
			w->errors++;
			break;
		}
		memset(p, 0, len);
		if (pread(dfd, p, len, DISK_OFF) != (ssize_t)len ||
		    memcmp(p, w->ref, len))
			w->errors++;
		munmap(p, len);
		w->rounds++;
	}
	close(afd);
	close(dfd);
	return NULL;
}

/*
 * Four threads map P2P memory, read the same disk region into it with
 * O_DIRECT and compare every byte with what was written there, then unmap.
 */
TEST_F_TIMEOUT(p2pmem, threads_map_io_unmap_then_all_returned, 120)
{
	const char *blk = reachable_blk(self);
	struct worker w[4];
	pthread_t t[4];
	int i, fd, rounds = 0;
	unsigned char *ref;

	if (!blk)
		SKIP(return, "no namespace reaches the P2P memory of %s", self->mem.bdf);
	ASSERT_EQ(0, posix_memalign((void **)&ref, 4096, MIB));
	fill(ref, MIB, 23);
	fd = open(blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)MIB, pwrite(fd, ref, MIB, DISK_OFF));
	close(fd);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .alloc_path = self->path, .blk = blk,
					.ref = ref, .id = i, .until = now() + 5 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker_fn, &w[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].errors);
		rounds += w[i].rounds;
	}
	EXPECT_LT(4, rounds);
	EXPECT_EQ(self->avail, available(self->mem.bdf));
	free(ref);
}

/* --- a gigabyte --------------------------------------------------------- */

#define PAGE_MARK(off)	((uint64_t)(off) ^ 0x5a5a5a5a5a5a5a5aULL)

/*
 * One 1 GiB mapping: every page reads zero, a forked child sees the
 * parent's bytes and the parent the child's, O_DIRECT lands at its far
 * end, and unmapping half returns exactly that half while the other keeps
 * its data. Needs 1 GiB available (the switch topology's ivshmem); the
 * 64 MiB CMBs skip it, as their topologies declare. A soft lockup or hung
 * task while mapping fails the boot's console check.
 */
TEST_F_TIMEOUT(p2pmem, one_gib_mapping_zeroed_shared_odirect_partial_munmap, 300)
{
	const char *blk = reachable_blk(self);
	unsigned char *p, *ref;
	long bad = -1, nz;
	size_t off;
	int fd, status;
	pid_t pid;

	if (self->avail < (long long)GIB)
		SKIP(return, "%s has %lld bytes available, not 1 GiB",
		     self->mem.bdf, self->avail);
	ASSERT_NE(NULL, blk) TH_LOG("no namespace reaches %s", self->mem.bdf);
	p = map_p2p(self->fd, GIB);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap of 1 GiB: %s", strerror(errno));
	EXPECT_EQ(self->avail - (long long)GIB, available(self->mem.bdf));

	/* Zeroed: the first 64 bytes of every page, the last 2 MiB whole. */
	for (off = 0; off < GIB && bad < 0; off += 4096) {
		nz = first_nonzero(p + off, 64);
		if (nz >= 0)
			bad = off + nz;
	}
	EXPECT_EQ(-1, bad) TH_LOG("byte %ld of the new mapping is not zero", bad);
	EXPECT_EQ(-1, first_nonzero(p + GIB - 2 * MIB, 2 * MIB));

	/* Shared with a child, both ways. */
	for (off = 0; off < GIB; off += 4096)
		*(uint64_t *)(p + off) = PAGE_MARK(off);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (off = 0; off < GIB; off += 4096)
			if (*(uint64_t *)(p + off) != PAGE_MARK(off))
				_exit(1);
		*(uint64_t *)(p + GIB - 8) = 0xc0ffee;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child saw other bytes");
	EXPECT_EQ(0xc0ffee, *(uint64_t *)(p + GIB - 8));

	/* O_DIRECT from the NVMe into the last 4 MiB. */
	ASSERT_EQ(0, posix_memalign((void **)&ref, 4096, 4 * MIB));
	fill(ref, 4 * MIB, 31);
	fd = open(blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)(4 * MIB), pwrite(fd, ref, 4 * MIB, DISK_OFF));
	EXPECT_EQ((ssize_t)(4 * MIB), pread(fd, p + GIB - 4 * MIB, 4 * MIB, DISK_OFF));
	EXPECT_EQ(0, memcmp(p + GIB - 4 * MIB, ref, 4 * MIB));
	close(fd);
	free(ref);

	/* Half back to the pool, page for page; the other half unchanged. */
	ASSERT_EQ(0, munmap(p + GIB / 2, GIB / 2));
	EXPECT_EQ(self->avail - (long long)(GIB / 2), available(self->mem.bdf));
	EXPECT_EQ(PAGE_MARK(GIB / 2 - 4096), *(uint64_t *)(p + GIB / 2 - 4096));
	EXPECT_EQ(PAGE_MARK(0), *(uint64_t *)p);
	ASSERT_EQ(0, munmap(p, GIB / 2));
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

TEST_HARNESS_MAIN
