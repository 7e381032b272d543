// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/p2pmem: P2P memory exported to userspace as a dma-buf
 * (P2PMEM_IOC_EXPORT, include/uapi/linux/p2pmem.h). Every errno of the
 * ioctl, the dma-buf's mmap() (zeroed memory, the same bytes at any
 * offset, the flags of a mapping of refcounted pages that only
 * FOLL_PCI_P2PDMA pins, block O_DIRECT into it),
 * what the dma-buf core shows and does with it
 * (fdinfo, DMA_BUF_IOCTL_SYNC, DMA_BUF_SET_NAME, passing it to another
 * process), and the revocation when the provider unbinds (SIGBUS, in a
 * forked child too, then -ENODEV until it is bound again; faults and
 * exports in threads racing the unbind; a dma-buf held by an O_PATH
 * descriptor alone).
 *
 * The provider comes from the environment, as for p2pdma_test:
 *   P2P_MEM      serial of the NVMe whose CMB is the P2P memory, or
 *   P2P_MEM_BDF  the PCI address of another provider (p2pmem-bar bound to
 *                an ivshmem device); only such a provider can withdraw
 *                its memory (p2pmem_bar/publish), which the
 *                unpublished_is_eacces case needs
 * Without a provider the cases SKIP (tests/run-all.sh counts that as a
 * failure). Every bind and unbind is bounded (BIND_TIMEOUT_S).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/dma-buf.h>
/* The tree's own, whether or not its uAPI headers were installed. */
#include "../../../../include/uapi/linux/p2pmem.h"

#include "../kselftest_harness.h"

#define MIB		(1024UL * 1024)
#define PAGE		4096UL
#define DEV		"/dev/p2pmem"

#include "p2pdma_util.h"

FIXTURE(p2pexp) {
	char bdf[64];
	struct p2pmem_export req;	/* the provider, 1 MiB */
	long long size;
	int dev;
};

FIXTURE_SETUP(p2pexp)
{
	const char *bdf = getenv("P2P_MEM_BDF");
	struct nvme_dev nd;

	self->dev = -1;
	if (bdf && *bdf)
		snprintf(self->bdf, sizeof(self->bdf), "%s", bdf);
	else if (find_nvme(getenv("P2P_MEM"), &nd))
		SKIP(return, "no NVMe with serial P2P_MEM=%s", getenv("P2P_MEM") ?: "(unset)");
	else
		snprintf(self->bdf, sizeof(self->bdf), "%s", nd.bdf);
	if (remember_driver(self->bdf))
		SKIP(return, "%s is bound to no driver", self->bdf);
	self->size = read_ull(P2PMEM "size", self->bdf);
	if (self->size <= 0)
		SKIP(return, "%s has no P2P memory", self->bdf);
	ASSERT_EQ(1, read_ull(P2PMEM "published", self->bdf));
	memset(&self->req, 0, sizeof(self->req));
	ASSERT_EQ(0, parse_bdf(self->bdf, &self->req.domain, &self->req.bus,
			       &self->req.devfn)) TH_LOG("not a PCI address: %s", self->bdf);
	self->req.size = MIB;
	self->req.fd = -1;
	self->dev = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev) TH_LOG("open %s: %s", DEV, strerror(errno));
}

FIXTURE_TEARDOWN(p2pexp)
{
	if (self->dev >= 0)
		close(self->dev);
}

/* P2PMEM_IOC_EXPORT of @req; the dma-buf's fd, or -errno. */
static int export(int dev, const struct p2pmem_export *req)
{
	struct p2pmem_export r = *req;

	r.fd = -1;
	if (ioctl(dev, P2PMEM_IOC_EXPORT, &r))
		return -errno;
	return r.fd;
}

static int export_size(FIXTURE_DATA(p2pexp) * self, unsigned long long size)
{
	struct p2pmem_export r = self->req;

	r.size = size;
	return export(self->dev, &r);
}

static unsigned char *map_buf(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

/* The value of @key in /proc/self/fdinfo/@fd, or "" if absent. */
static void fdinfo_get(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;

	val[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(val, len, "%s", line + klen + 1);
		break;
	}
	fclose(f);
}

/* The VmFlags line of the mapping at @p in /proc/self/smaps. */
static void vm_flags(const void *p, char *val, size_t len)
{
	unsigned long lo, hi, at = (unsigned long)p;
	char line[512], perm[8];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	val[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3) {
			in = at >= lo && at < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(val, len, "%s ", line + 8);
			val[strcspn(val, "\n")] = ' ';
			break;
		}
	}
	fclose(f);
}

/* Does the VmFlags line @flags hold the two-letter flag @f? */
static bool has_flag(const char *flags, const char *f)
{
	char word[5];

	snprintf(word, sizeof(word), " %.2s ", f);
	return strstr(flags, word);
}

TEST_F(p2pexp, dev_node_is_0600_root)
{
	struct stat st;

	ASSERT_EQ(0, stat(DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

TEST_F(p2pexp, unknown_ioctl_is_enotty)
{
	char arg[64] = { 0 };

	EXPECT_EQ(-1, ioctl(self->dev, _IOWR(P2PMEM_IOC_MAGIC, 1, struct p2pmem_export), arg));
	EXPECT_EQ(ENOTTY, errno);
	/* The right number with another size is another command. */
	EXPECT_EQ(-1, ioctl(self->dev, _IOWR(P2PMEM_IOC_MAGIC, 0, char[16]), arg));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->dev, DMA_BUF_IOCTL_SYNC, arg));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(p2pexp, bad_arguments_are_einval)
{
	struct p2pmem_export r = self->req;
	long long avail = available(self->bdf);

	r.flags = 1;
	EXPECT_EQ(-EINVAL, export(self->dev, &r));
	r = self->req;
	r.reserved = 1;
	EXPECT_EQ(-EINVAL, export(self->dev, &r));
	EXPECT_EQ(-EINVAL, export_size(self, 0));
	EXPECT_EQ(-EINVAL, export_size(self, PAGE + 1));
	EXPECT_EQ(-EINVAL, export_size(self, MIB - 512));
	EXPECT_EQ(avail, available(self->bdf));
}

TEST_F(p2pexp, no_such_provider_is_enodev)
{
	struct p2pmem_export r = self->req;

	/* Function 7 of a slot of the provider's bus that has none. */
	r.devfn = 31 << 3 | 7;
	EXPECT_EQ(-ENODEV, export(self->dev, &r));
	r = self->req;
	r.bus = 0x100 | self->req.bus;
	EXPECT_EQ(-ENODEV, export(self->dev, &r));
	r = self->req;
	r.domain = 0xffffffff;
	EXPECT_EQ(-ENODEV, export(self->dev, &r));
	/* The host bridge exists and has no P2P memory. */
	r.domain = 0;
	r.bus = 0;
	r.devfn = 0;
	EXPECT_EQ(-ENODEV, export(self->dev, &r));
}

TEST_F(p2pexp, more_than_the_pool_is_enomem)
{
	long long avail = available(self->bdf);

	EXPECT_EQ(-ENOMEM, export_size(self, (self->size + 2 * MIB) & ~(PAGE - 1)));
	EXPECT_EQ(avail, available(self->bdf));
}

/* Bad pointers: nothing exported, no descriptor left behind. */
TEST_F(p2pexp, bad_pointer_is_efault)
{
	long long avail = available(self->bdf);
	struct p2pmem_export *ro;
	int lowest, probe;

	EXPECT_EQ(-1, ioctl(self->dev, P2PMEM_IOC_EXPORT, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* Readable, not writable: the fd cannot be written back. */
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	*ro = self->req;
	ASSERT_EQ(0, mprotect(ro, PAGE, PROT_READ));
	lowest = dup(0);
	ASSERT_LE(0, lowest);
	close(lowest);
	EXPECT_EQ(-1, ioctl(self->dev, P2PMEM_IOC_EXPORT, ro));
	EXPECT_EQ(EFAULT, errno);
	/* The lowest free descriptor is still free: none was installed. */
	probe = dup(0);
	EXPECT_EQ(lowest, probe);
	close(probe);
	EXPECT_EQ(avail, available(self->bdf));
	munmap(ro, PAGE);
}

/* Only a provider that can withdraw its memory (p2pmem-bar). */
/* No free file descriptor: EMFILE, and no memory taken. */
TEST_F(p2pexp, no_free_fd_is_emfile)
{
	long long avail = available(self->bdf);
	struct rlimit old, lim;
	int lowest = dup(0);

	ASSERT_LE(0, lowest);
	close(lowest);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	/* Every descriptor below the lowest free one is in use. */
	lim = old;
	lim.rlim_cur = lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lim));
	EXPECT_EQ(-EMFILE, export(self->dev, &self->req));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	EXPECT_EQ(avail, available(self->bdf));
}

TEST_F(p2pexp, unpublished_is_eacces)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/p2pmem_bar/publish", self->bdf);
	ASSERT_EQ(0, write_file(path, "0")) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_EQ(0, read_ull(P2PMEM "published", self->bdf));
	EXPECT_EQ(-EACCES, export(self->dev, &self->req));
	ASSERT_EQ(0, write_file(path, "1"));
	fd = export(self->dev, &self->req);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

TEST_F(p2pexp, export_gives_cloexec_rdwr_dmabuf)
{
	long long avail = available(self->bdf);
	char val[128];
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd) TH_LOG("export: %s", strerror(-fd));
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(avail - (long long)MIB, available(self->bdf));
	fdinfo_get(fd, "exp_name", val, sizeof(val));
	EXPECT_STREQ("\tpci-p2pdma", val);
	fdinfo_get(fd, "size", val, sizeof(val));
	EXPECT_STREQ("\t1048576", val);
	close(fd);
	EXPECT_EQ(avail, available(self->bdf));
}

/*
 * The mapping holds pages, not bare PFNs (mm io dd de, shared, not pf:
 * VFIO type1 would pin a pf mapping's PFNs without a reference), reads
 * zero, and what the CPU writes reads back, also through a second
 * mapping.
 */
TEST_F(p2pexp, mmap_reads_zero_and_writes_read_back)
{
	unsigned char *p, *q;
	char flags[512];
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, first_nonzero(p, MIB));
	vm_flags(p, flags, sizeof(flags));
	EXPECT_FALSE(has_flag(flags, "pf")) TH_LOG("VmFlags:%s", flags);
	EXPECT_FALSE(has_flag(flags, "io")) TH_LOG("VmFlags:%s", flags);
	EXPECT_TRUE(has_flag(flags, "dd")) TH_LOG("VmFlags:%s", flags);
	EXPECT_TRUE(has_flag(flags, "de")) TH_LOG("VmFlags:%s", flags);
	EXPECT_TRUE(has_flag(flags, "sh")) TH_LOG("VmFlags:%s", flags);
	fill(p, MIB, 3);
	EXPECT_EQ(-1, mismatch(p, MIB, 3));
	q = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(-1, mismatch(q, MIB, 3));
	munmap(q, MIB);
	munmap(p, MIB);
	close(fd);
}

/* The first offset of @p[0..@len) that is not @b, or -1. */
static long mismatch_byte(const unsigned char *p, size_t len, int b)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != b)
			return i;
	return -1;
}

/* VmPTE of /proc/self/status: kB of this process's page tables, or -1. */
static long vm_pte_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * 2 MiB at a time: a buffer of 4 MiB mapped at a 2 MiB-aligned address is
 * mapped with one PMD per 2 MiB where the kernel hands the buffer out in
 * folios of PMD order (7.3; 6.12 maps a page at a time: P2P_KERNEL), so
 * faulting its second 2 MiB in after the first adds no page table. The
 * bytes are the buffer's either way: written page by page through the
 * aligned mapping, read back through one at an offset of a page (mapped a
 * page at a time); unmapping one page of the second 2 MiB splits that PMD
 * and the rest of the mapping still reads what was written.
 */
TEST_F(p2pexp, aligned_mapping_maps_2mib_at_a_time)
{
	const size_t len = 4 * MIB, hole = 2 * MIB + 5 * PAGE;
	const char *kernel = getenv("P2P_KERNEL") ?: "";
	unsigned char *r, *p, *q;
	long before, after;
	size_t i;
	int fd;

	if (self->size < 8 * (long long)MIB)
		SKIP(return, "%s has %lld bytes of P2P memory", self->bdf, self->size);
	fd = export_size(self, len);
	ASSERT_LE(0, fd);
	/* An aligned 4 MiB within one 1 GiB (one PMD table) of 8 MiB reserved. */
	r = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	p = (unsigned char *)(((unsigned long)r + 2 * MIB - 1) & ~(2 * MIB - 1));
	if (((unsigned long)p >> 30) != (((unsigned long)p + len - 1) >> 30))
		p += 2 * MIB;
	ASSERT_EQ(p, mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0));
	p[0] = 1;
	before = vm_pte_kb();
	p[2 * MIB] = 1;
	after = vm_pte_kb();
	ASSERT_LE(0, before);
	if (!strcmp(kernel, "6.12")) {
		EXPECT_EQ(PAGE / 1024, after - before)
			TH_LOG("VmPTE %ld -> %ld kB", before, after);
	} else {
		EXPECT_EQ(0, after - before)
			TH_LOG("VmPTE %ld -> %ld kB: not a PMD", before, after);
	}
	/* A different byte in every page. */
	for (i = 0; i < len; i += PAGE)
		memset(p + i, (int)(i / PAGE * 7 + 1) & 0xff, PAGE);
	q = mmap(NULL, len - PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0, memcmp(q, p + PAGE, len - PAGE));
	ASSERT_EQ(0, munmap(p + hole, PAGE));
	for (i = 0; i < len; i += PAGE) {
		if (i == hole)
			continue;
		ASSERT_EQ(-1, mismatch_byte(p + i, PAGE, (i / PAGE * 7 + 1) & 0xff))
			TH_LOG("page %zu", i / PAGE);
	}
	/* The page before the hole, through the mapping a page further on. */
	EXPECT_EQ(0, memcmp(q + hole - 2 * PAGE, p + hole - PAGE, PAGE));
	munmap(q, len - PAGE);
	munmap(r, 2 * len);
	close(fd);
}

/*
 * A mapping at a non-zero offset shows the buffer's bytes from that
 * offset on: what a mapping at offset 0 wrote, page for page.
 */
TEST_F(p2pexp, mmap_at_offset_maps_those_pages)
{
	const size_t off = 5 * PAGE, len = 3 * PAGE;
	unsigned char *p, *q;
	size_t i;
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	/* A different byte in every page. */
	for (i = 0; i < MIB; i++)
		p[i] = (unsigned char)(i / PAGE * 7 + i % 251);
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0, memcmp(q, p + off, len));
	q[len - 1] ^= 0xff;
	EXPECT_EQ(p[off + len - 1], q[len - 1]);
	/* Past the end of the buffer. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, MIB - PAGE));
	EXPECT_EQ(EINVAL, errno);
	munmap(q, len);
	munmap(p, MIB);
	close(fd);
}

/*
 * GUP without FOLL_PCI_P2PDMA refuses the mapping's pages: vmsplice(),
 * which takes references on the user pages it is given, fails with
 * EREMOTEIO, as would a long-term pin (RDMA, io_uring, VFIO). DMA goes
 * through the dma-buf, or through block O_DIRECT (below).
 */
TEST_F(p2pexp, gup_without_p2pdma_flag_is_eremoteio)
{
	int fd = export(self->dev, &self->req), pfd[2];
	struct iovec iov;
	unsigned char *p;

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, touch(p, true));
	iov.iov_base = p;
	iov.iov_len = PAGE;
	ASSERT_EQ(0, pipe(pfd));
	EXPECT_EQ(-1, vmsplice(pfd[1], &iov, 1, 0));
	EXPECT_EQ(EREMOTEIO, errno) TH_LOG("vmsplice: %s", strerror(errno));
	close(pfd[0]);
	close(pfd[1]);
	munmap(p, MIB);
	close(fd);
}

/* Region of the source disk this suite writes (others use 40 and 48 MiB). */
#define DISK_OFF	(56 * MIB)

/*
 * Block O_DIRECT from the scenario's source NVMe (P2P_SRC) into the
 * dma-buf's mapping: the NVMe DMAs into the provider's memory, which then
 * holds the bytes written to the disk. It works whether or not the kernel
 * has CONFIG_SECRETMEM (GUP-fast or GUP through the VMA, both with
 * FOLL_PCI_P2PDMA); a route the policy refuses fails with refused_errno().
 */
TEST_F(p2pexp, odirect_read_into_mapping_moves_the_bytes)
{
	const char *expect = getenv("P2P_EXPECT_SRC") ?: "bus-address";
	int fd = export(self->dev, &self->req), dfd;
	struct nvme_dev src;
	unsigned char *ram, *p;
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, find_nvme(getenv("P2P_SRC"), &src))
		TH_LOG("no NVMe with serial P2P_SRC=%s", getenv("P2P_SRC") ?: "(unset)");
	ASSERT_EQ(0, posix_memalign((void **)&ram, PAGE, MIB));
	fill(ram, MIB, 21);
	dfd = open(src.blk, O_RDWR | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, dfd) TH_LOG("%s: %s", src.blk, strerror(errno));
	ASSERT_EQ((ssize_t)MIB, pwrite(dfd, ram, MIB, DISK_OFF));
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	n = pread(dfd, p, MIB, DISK_OFF);
	if (!strcmp(expect, "refused")) {
		EXPECT_EQ(-1, n);
		EXPECT_EQ(refused_errno(), errno);
	} else {
		EXPECT_EQ((ssize_t)MIB, n) TH_LOG("pread: %s", strerror(errno));
		EXPECT_EQ(-1, mismatch(p, MIB, 21));
	}
	munmap(p, MIB);
	close(dfd);
	close(fd);
	free(ram);
}

TEST_F(p2pexp, map_private_and_past_the_end_are_einval)
{
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * MIB, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/*
 * Memory another buffer left dirty reads zero in the next one: with the
 * rest of the pool held by other exports, the only free memory is the
 * written buffer's, so the next export must get it, cleared. Three whole
 * clearing batches of 2 MiB and part of a fourth.
 */
#define USED	(6 * MIB + 3 * PAGE)
TEST_F_TIMEOUT(p2pexp, export_of_used_memory_reads_zero, 180)
{
	long long start = available(self->bdf), avail;
	int held[256], nheld = 0, fd, i;
	unsigned long long chunk;
	unsigned char *p;

	fd = export_size(self, USED);
	ASSERT_LE(0, fd);
	p = map_buf(fd, USED);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, USED, 9);
	ASSERT_EQ(-1, mismatch(p, USED, 9));
	munmap(p, USED);
	/* Take everything else, largest pieces first. */
	chunk = 1ULL << 62;
	while ((avail = available(self->bdf)) > 0 && nheld < 256) {
		while (chunk > (unsigned long long)avail)
			chunk >>= 1;
		if (chunk < PAGE)
			break;
		i = export_size(self, chunk);
		if (i == -ENOMEM) {
			chunk >>= 1;
			continue;
		}
		ASSERT_LE(0, i) TH_LOG("export of %llu: %s", chunk, strerror(-i));
		held[nheld++] = i;
	}
	ASSERT_EQ(0, available(self->bdf));
	EXPECT_EQ(-ENOMEM, export_size(self, PAGE));
	close(fd);
	ASSERT_EQ((long long)(USED), available(self->bdf));
	fd = export_size(self, USED);
	ASSERT_LE(0, fd);
	p = map_buf(fd, USED);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, first_nonzero(p, USED));
	munmap(p, USED);
	close(fd);
	for (i = 0; i < nheld; i++)
		close(held[i]);
	EXPECT_EQ(start, available(self->bdf));
}

/*
 * Every size the pool's per-CPU cache keeps (4 KiB to 1 MiB, powers of
 * two): a buffer written, released, then exported again on the same CPU,
 * likely served from what the cache kept of the first, reads zero. The
 * cache cannot know what a user did with the memory.
 */
TEST_F(p2pexp, export_of_each_cached_size_reads_zero_again)
{
	unsigned long size;
	unsigned char *p;
	cpu_set_t cpus;
	int fd, round;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	for (size = PAGE; size <= MIB; size <<= 1) {
		for (round = 0; round < 2; round++) {
			fd = export_size(self, size);
			ASSERT_LE(0, fd) TH_LOG("export of %lu: %s", size, strerror(-fd));
			p = map_buf(fd, size);
			ASSERT_NE(MAP_FAILED, p);
			EXPECT_EQ(-1, first_nonzero(p, size))
				TH_LOG("export %d of %lu bytes", round, size);
			fill(p, size, 11 + round);
			EXPECT_EQ(-1, mismatch(p, size, 11 + round));
			munmap(p, size);
			close(fd);
		}
	}
}

TEST_F(p2pexp, sync_start_end_return_zero)
{
	struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
	s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
	s.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
	EXPECT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
	s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	EXPECT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
	close(fd);
}

TEST_F(p2pexp, set_name_shows_in_fdinfo)
{
	char val[128];
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, DMA_BUF_SET_NAME, "p2p-selftest"));
	fdinfo_get(fd, "name", val, sizeof(val));
	EXPECT_STREQ("\tp2p-selftest", val);
	fdinfo_get(fd, "exp_name", val, sizeof(val));
	EXPECT_STREQ("\tpci-p2pdma", val);
	close(fd);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b = 'f';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * The fd passed over SCM_RIGHTS to a process that did not inherit it (it
 * was exported after the fork, and is O_CLOEXEC anyway): the receiver
 * maps the same bytes and its writes show in the sender's mapping.
 */
TEST_F(p2pexp, fd_passed_to_another_process_maps_same_bytes)
{
	int sv[2], fd, status;
	unsigned char *p, ok;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned char *c;
		int rfd;

		close(sv[0]);
		rfd = recv_fd(sv[1]);
		if (rfd < 0)
			_exit(10);
		c = map_buf(rfd, MIB);
		if (c == MAP_FAILED)
			_exit(11);
		if (mismatch(c, MIB, 21) != -1)
			_exit(12);
		fill(c + MIB / 2, MIB / 2, 22);
		munmap(c, MIB);
		close(rfd);
		ok = 1;
		_exit(write(sv[1], &ok, 1) == 1 ? 0 : 13);
	}
	close(sv[1]);
	fd = export(self->dev, &self->req);
	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, MIB, 21);
	ASSERT_EQ(0, send_fd(sv[0], fd));
	EXPECT_EQ(1, read(sv[0], &ok, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-1, mismatch(p, MIB / 2, 21));
	EXPECT_EQ(-1, mismatch(p + MIB / 2, MIB / 2, 22));
	munmap(p, MIB);
	close(fd);
	close(sv[0]);
}

/*
 * Unbind the provider while the buffer is mapped and its fd open: the
 * unbind finishes, every access gets SIGBUS, munmap() and close() still
 * work, a new mmap() and a new export fail with ENODEV; after the rebind
 * an export works again.
 */
TEST_F_TIMEOUT(p2pexp, unbind_revokes_mapping_with_sigbus, 120)
{
	unsigned char *p;
	int fd = export(self->dev, &self->req);

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, MIB, 5);
	ASSERT_EQ(0, touch(p + MIB - 1, false));
	ASSERT_EQ(0, set_bound(self->bdf, false));
	EXPECT_EQ(-1, available(self->bdf));
	EXPECT_EQ(SIGBUS, touch(p, false));
	EXPECT_EQ(SIGBUS, touch(p + MIB - 1, true));
	EXPECT_EQ(SIGBUS, touch(p + MIB / 2, false));
	EXPECT_EQ(MAP_FAILED, map_buf(fd, MIB));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-ENODEV, export(self->dev, &self->req));
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0, close(fd));

	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
	EXPECT_EQ(self->size, read_ull(P2PMEM "size", self->bdf));
	EXPECT_EQ(1, read_ull(P2PMEM "published", self->bdf));
	fd = export(self->dev, &self->req);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

/*
 * A forked child shares the mapping (its copy of the page table holds
 * page references of its own): after the unbind the child's access gets
 * SIGBUS too, and the unbind did not wait for the child to exit.
 */
TEST_F_TIMEOUT(p2pexp, unbind_revokes_forked_childs_mapping, 120)
{
	long long avail = available(self->bdf);
	int fd = export(self->dev, &self->req), go[2], done[2], status;
	unsigned char *p, c = 0;
	pid_t pid;

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, MIB, 9);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The child's own PTEs, then wait for the unbind. */
		int bad = mismatch(p, MIB, 9) != -1;

		if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		if (touch(p, false) != SIGBUS || touch(p + MIB - 1, true) != SIGBUS)
			_exit(3);
		_exit(bad ? 1 : 0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0, close(fd));
	ASSERT_EQ(0, set_bound(self->bdf, false));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child: 1 bytes differ, 2 pipe, 3 no SIGBUS");
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
	/* The driver's own use of its memory (NVMe queues) as before. */
	EXPECT_EQ(avail, available(self->bdf));
}

/* sw_sync (drivers/dma-buf/sw_sync.c): a timeline in debugfs, for tests. */
#define SW_SYNC		"/sys/kernel/debug/sync/sw_sync"
struct sw_sync_create_fence_data {
	__u32 value;
	char name[32];
	__s32 fence;
};

#define SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct sw_sync_create_fence_data)
#define SW_SYNC_IOC_INC		_IOW('W', 1, __u32)

/*
 * A fence from userspace (a sw_sync point, imported as a writer with
 * DMA_BUF_IOCTL_IMPORT_SYNC_FILE) stands for DMA queued on the buffer:
 * the unbind waits for it, for longer than any timer would have, and
 * ends once it signals; the mapping then gets SIGBUS.
 */
TEST_F_TIMEOUT(p2pexp, unbind_waits_for_unsignalled_fence, 120)
{
	struct sw_sync_create_fence_data f = { .value = 1, .name = "p2pexp" };
	struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
	int fd = export(self->dev, &self->req), tl, status, i;
	char path[256];
	unsigned char *p;
	__u32 one = 1;
	pid_t pid;

	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	tl = open(SW_SYNC, O_RDWR);
	ASSERT_LE(0, tl) TH_LOG("%s: %s", SW_SYNC, strerror(errno));
	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &f));
	imp.fd = f.fence;
	ASSERT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp)) TH_LOG("%s", strerror(errno));
	close(f.fence);

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", provider_drv);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(write_file(path, self->bdf) ? 1 : 0);
	/* Past the driver's own shutdown and the 10 s of a timer. */
	sleep(12);
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG));
	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_INC, &one));
	for (i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) != pid; i++)
		usleep(10000);
	ASSERT_GT(1000, i) TH_LOG("unbind still blocked 10 s after the fence signalled");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(SIGBUS, touch(p, false));
	close(tl);
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0, close(fd));
	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
}

/*
 * The dma-buf held by its dentry alone: an O_PATH open of /proc/self/fd/N,
 * then close(N), frees the file and keeps the dma-buf. With a fence
 * (sw_sync, a writer's) on it and files opened since, the unbind still
 * revokes it: it waits for the fence; the O_PATH fd closed during that
 * wait (the release runs under the revocation) changes nothing; once
 * the fence signals the unbind ends within seconds, and the provider
 * binds again with all its memory.
 */
TEST_F_TIMEOUT(p2pexp, unbind_with_dmabuf_held_by_o_path_only, 120)
{
	struct sw_sync_create_fence_data f = { .value = 1, .name = "p2pexp" };
	struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
	long long avail = available(self->bdf);
	int fd, tl, opath, others[16], status, i;
	char path[256];
	__u32 one = 1;
	pid_t pid;

	fd = export(self->dev, &self->req);
	ASSERT_LE(0, fd);
	tl = open(SW_SYNC, O_RDWR);
	ASSERT_LE(0, tl) TH_LOG("%s: %s", SW_SYNC, strerror(errno));
	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &f));
	imp.fd = f.fence;
	ASSERT_EQ(0, ioctl(fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp)) TH_LOG("%s", strerror(errno));
	close(f.fence);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	opath = open(path, O_PATH | O_CLOEXEC);
	ASSERT_LE(0, opath) TH_LOG("O_PATH open of %s: %s", path, strerror(errno));
	ASSERT_EQ(0, close(fd));
	/* Files that may take the freed file's place. */
	for (i = 0; i < 16; i++)
		others[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* The dma-buf still holds its memory. */
	EXPECT_GE(avail - (long long)MIB, available(self->bdf));

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", provider_drv);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(write_file(path, self->bdf) ? 1 : 0);
	sleep(3);
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG))
		TH_LOG("the unbind did not wait for the fence");
	/* The release, while the unbind waits. */
	EXPECT_EQ(0, close(opath));
	sleep(1);
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG))
		TH_LOG("the release ended the unbind's wait for the fence");
	ASSERT_EQ(0, ioctl(tl, SW_SYNC_IOC_INC, &one));
	for (i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) != pid; i++)
		usleep(10000);
	ASSERT_GT(1000, i) TH_LOG("unbind still blocked 10 s after the fence signalled");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	for (i = 0; i < 16; i++)
		if (others[i] >= 0)
			close(others[i]);
	close(tl);
	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
	EXPECT_EQ(avail, available(self->bdf));
}

/* Faulting threads, each on pages of its own (see below). */
#define RACERS		4
struct racer {
	unsigned char *p;	/* the mapping: MIB bytes, pattern 9 */
	int id;
	int *stop;		/* set (atomically) when the case is done */
	long ok, bus;		/* accesses that read a byte, or got SIGBUS */
	long wrong;		/* bytes read that were not the pattern */
	long after;		/* pages read after this thread saw SIGBUS */
	long madv;		/* MADV_DONTNEED failures */
};

/*
 * Drop a page of the thread's own from its page table and read it back,
 * so that every access is a fresh fault; until told to stop.
 */
static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	size_t pg = r->id, off;
	unsigned char v;

	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		off = pg * PAGE + (pg * 61) % PAGE;
		if (madvise(r->p + pg * PAGE, PAGE, MADV_DONTNEED))
			r->madv++;
		if (access_byte(r->p + off, false, &v)) {
			r->bus++;
		} else {
			r->ok++;
			r->wrong += v != pat(off, 9);
			r->after += r->bus > 0;
		}
		pg += RACERS;
		if (pg >= MIB / PAGE)
			pg = r->id;
	}
	return NULL;
}

/*
 * Threads fault the mapping page after page while the provider unbinds.
 * Each access is a fresh fault on a page no other thread touches, so once
 * a thread got SIGBUS (the buffer is revoked) none of its later faults
 * may map a page: no page is inserted after the revocation. Every byte
 * read before is the one written; after the unbind every page of the
 * mapping gets SIGBUS; the unbind ends; the provider comes back whole.
 */
TEST_F_TIMEOUT(p2pexp, faults_racing_unbind_map_nothing_after, 180)
{
	long long avail0 = available(self->bdf);
	struct racer r[RACERS] = {};
	int stop = 0;
	pthread_t t[RACERS];
	unsigned char *p;
	size_t off;
	long ok = 0;
	int fd, i;

	fd = export(self->dev, &self->req);
	ASSERT_LE(0, fd);
	p = map_buf(fd, MIB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, MIB, 9);
	for (i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .p = p, .id = i, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, racer_fn, &r[i]));
	}
	usleep(300000);
	EXPECT_EQ(0, set_bound(self->bdf, false));
	usleep(300000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RACERS; i++) {
		pthread_join(t[i], NULL);
		TH_LOG("thread %d: %ld bytes read, %ld SIGBUS", i, r[i].ok, r[i].bus);
		EXPECT_EQ(0, r[i].madv);
		EXPECT_EQ(0, r[i].wrong);
		EXPECT_EQ(0, r[i].after);
		EXPECT_LT(0, r[i].bus);
		ok += r[i].ok;
	}
	EXPECT_LT(0, ok);
	for (off = 0; off < MIB; off += PAGE)
		if (touch(p + off, false) != SIGBUS)
			break;
	EXPECT_EQ(MIB, off) TH_LOG("page at %zu still mapped after the unbind", off);
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0, close(fd));
	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
	EXPECT_EQ(avail0, available(self->bdf));
}

/*
 * An exporting thread: export, map, write, unmap; until told. It keeps the
 * last HELD fds open, so that the buffers exported around the unbind are
 * still there when it ended.
 */
#define HELD	64
struct exporter {
	int dev;
	const struct p2pmem_export *req;
	int *stop;		/* set (atomically) when the case is done */
	long ok, enodev, other, bus;
	int other_err;
	int fds[HELD];		/* -1 where none */
};

static void *exporter_fn(void *arg)
{
	struct exporter *e = arg;
	unsigned char *p;
	int fd;

	while (!__atomic_load_n(e->stop, __ATOMIC_RELAXED)) {
		fd = export(e->dev, e->req);
		if (fd == -ENODEV) {
			e->enodev++;
			continue;
		}
		if (fd < 0) {
			e->other++;
			e->other_err = -fd;
			continue;
		}
		p = map_buf(fd, PAGE);
		if (p != MAP_FAILED) {
			e->bus += touch(p, true) == SIGBUS;
			munmap(p, PAGE);
		} else if (errno != ENODEV) {
			e->other++;
			e->other_err = errno;
		}
		if (e->fds[e->ok % HELD] >= 0)
			close(e->fds[e->ok % HELD]);
		e->fds[e->ok % HELD] = fd;
		e->ok++;
	}
	return NULL;
}

/*
 * Exports, each mapped and written, run in two threads while the provider
 * unbinds: an export either works or fails with ENODEV, never another
 * error. Every buffer an export gave, those exported while the unbind ran
 * included, is revoked once it ended (mmap() fails with ENODEV): none
 * slipped past the revocation, which would leave memory of an unbound
 * provider mapped (and keep the unbind waiting for its page map). After
 * the rebind the provider has all its memory.
 */
TEST_F_TIMEOUT(p2pexp, exports_racing_unbind_get_enodev, 180)
{
	long long avail0 = available(self->bdf);
	struct exporter e[2] = {};
	int stop = 0;
	pthread_t t[2];
	long live = 0;
	int i, k;

	self->req.size = 64 * 1024;
	for (i = 0; i < 2; i++) {
		e[i] = (struct exporter){ .dev = self->dev, .req = &self->req,
					  .stop = &stop };
		memset(e[i].fds, -1, sizeof(e[i].fds));
		ASSERT_EQ(0, pthread_create(&t[i], NULL, exporter_fn, &e[i]));
	}
	usleep(300000);
	EXPECT_EQ(0, set_bound(self->bdf, false));
	usleep(300000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		TH_LOG("thread %d: %ld exports, %ld ENODEV, %ld SIGBUS", i,
		       e[i].ok, e[i].enodev, e[i].bus);
		EXPECT_EQ(0, e[i].other)
			TH_LOG("errno %d: %s", e[i].other_err, strerror(e[i].other_err));
		EXPECT_LT(0, e[i].ok);
		EXPECT_LT(0, e[i].enodev);
		for (k = 0; k < HELD; k++) {
			if (e[i].fds[k] < 0)
				continue;
			if (map_buf(e[i].fds[k], PAGE) != MAP_FAILED || errno != ENODEV)
				live++;
			close(e[i].fds[k]);
		}
	}
	EXPECT_EQ(0, live) TH_LOG("%ld buffers not revoked by the unbind", live);
	ASSERT_EQ(0, set_bound(self->bdf, true));
	ASSERT_EQ(0, wait_p2pmem(self->bdf));
	EXPECT_EQ(avail0, available(self->bdf));
}

TEST_HARNESS_MAIN
