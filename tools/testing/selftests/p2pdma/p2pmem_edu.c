// SPDX-License-Identifier: GPL-2.0
/*
 * A device DMAs with exactly the addresses the dma-buf exporter handed
 * out. QEMU's edu device (1234:11e8) is a DMA engine with a 4 KiB buffer;
 * the test importer (p2pdma-importer.c, P2PIMP_IOC_EDU) attaches to a
 * /dev/p2pmem dma-buf for it, maps it, and programs edu with the DMA
 * address of the mapping for a given offset: sg_dma_address() as a real
 * importer's hardware gets it, not the pages behind it.
 *
 *   - bytes: edu reads a random pattern (seed printed) from one place of
 *     the buffer and writes it to another; every byte of the buffer is
 *     then compared through an mmap() of the dma-buf: the copy is there,
 *     nothing else changed;
 *   - map type: what P2P_EDU_SCN says ("bus-address": every segment
 *     flagged, at the provider's BAR; "through-host-bridge": not flagged,
 *     an IOVA other than the CPU address when P2P_EDU_IOMMU=1);
 *   - permission: under a translating IOMMU, a DMA_TO_DEVICE mapping is
 *     read-only for edu: its write is blocked and the buffer unchanged;
 *   - refusal: where the route from the provider to edu is refused
 *     ("refused"), every attach fails with EREMOTEIO, nothing is mapped
 *     or changed, and the reason is logged.
 *
 * Environment (the topology): P2P_EDU_SCN=name,provider-serial,map-type,
 * and P2P_EDU_IOMMU=1 where the IOMMU translates edu's DMA.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drivers/pci/p2pdma/tests/p2pdma_importer.h>
#include "../../../../include/uapi/linux/p2pmem.h"

#include "../kselftest_harness.h"

/*
 * Large enough for every offset the cases use (up to 0x20000 + 4000), and
 * small: each byte of it is an MMIO access of the emulator at every fill
 * and compare, which made the cases take half a minute on a loaded host.
 */
#define BUF_SIZE	(256UL * 1024)
#define CTL		"/sys/kernel/debug/p2pdma-importer/ctl"
#define EDU_ID		"0x1234 0x11e8"

#include "p2pdma_util.h"

FIXTURE(edu) {
	char edu[300];			/* edu's PCI address */
	char type[32];			/* expected map type */
	struct nvme_dev mem;		/* the provider */
	int iommu;
	int ctl, fd;			/* importer; the dma-buf */
	unsigned char *cpu;		/* mmap() of the dma-buf */
	unsigned char *want;		/* what the buffer must hold */
	unsigned int seed;
};

FIXTURE_SETUP(edu)
{
	const char *scn = getenv("P2P_EDU_SCN");
	char serial[32], name[32];
	struct p2pmem_export req = { .size = BUF_SIZE, .fd = -1 };
	int dev;

	self->ctl = -1;
	self->fd = -1;
	self->cpu = MAP_FAILED;
	self->want = NULL;
	if (!scn || sscanf(scn, "%31[^,],%31[^,],%31s", name, serial, self->type) != 3)
		SKIP(return, "no edu scenario (P2P_EDU_SCN)");
	self->iommu = getenv("P2P_EDU_IOMMU") && !strcmp(getenv("P2P_EDU_IOMMU"), "1");
	ASSERT_EQ(0, find_pci(EDU_ID, self->edu, sizeof(self->edu))) TH_LOG("no edu device");
	ASSERT_EQ(0, find_nvme(serial, &self->mem)) TH_LOG("no NVMe %s", serial);
	ASSERT_EQ(0, parse_bdf(self->mem.bdf, &req.domain, &req.bus, &req.devfn));
	dev = open("/dev/p2pmem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, ioctl(dev, P2PMEM_IOC_EXPORT, &req)) TH_LOG("export: %s", strerror(errno));
	close(dev);
	self->fd = req.fd;
	self->ctl = open(CTL, O_RDWR);
	ASSERT_LE(0, self->ctl) TH_LOG("%s: %s", CTL, strerror(errno));
	self->cpu = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->cpu);
	self->want = malloc(BUF_SIZE);
	ASSERT_NE(NULL, self->want);
	/* A fresh random pattern over the whole buffer, seed in the log. */
	self->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	TH_LOG("pattern seed %u", self->seed);
	srandom(self->seed);
	for (size_t i = 0; i < BUF_SIZE; i++)
		self->want[i] = (unsigned char)random();
	memcpy(self->cpu, self->want, BUF_SIZE);
}

FIXTURE_TEARDOWN(edu)
{
	if (self->cpu != MAP_FAILED)
		munmap(self->cpu, BUF_SIZE);
	free(self->want);
	if (self->ctl >= 0)
		close(self->ctl);
	if (self->fd >= 0)
		close(self->fd);
}

/* Attach for edu with @flags and map; the handle, or -errno. */
static int edu_attach_map(FIXTURE_DATA(edu) * self, __u32 flags, struct p2pimp_map *m)
{
	struct p2pimp_attach a = { .fd = self->fd, .flags = flags };

	if (parse_bdf(self->edu, &a.domain, &a.bus, &a.devfn))
		return -EINVAL;
	if (ioctl(self->ctl, P2PIMP_IOC_ATTACH, &a))
		return -errno;
	memset(m, 0, sizeof(*m));
	m->handle = a.handle;
	if (ioctl(self->ctl, P2PIMP_IOC_MAP, m))
		return -errno;
	return a.handle;
}

/* edu DMAs @len bytes at @off: into its buffer, or from it (@to_buffer). */
static int edu_dma(FIXTURE_DATA(edu) * self, int h, int to_buffer, size_t off,
		   size_t len, __u64 *dma)
{
	struct p2pimp_edu e = {
		.handle = h, .to_buffer = to_buffer, .len = len, .offset = off,
	};

	if (ioctl(self->ctl, P2PIMP_IOC_EDU, &e))
		return -errno;
	*dma = e.dma;
	return 0;
}

/* The DMA address the mapping @m gives for @off (one segment). */
static __u64 seg_addr(const struct p2pimp_map *m, size_t off)
{
	size_t pos = 0;

	for (unsigned int i = 0; i < m->nents && i < P2PIMP_MAX_SEGS; i++) {
		if (off < pos + m->segs[i].len)
			return m->segs[i].dma + (off - pos);
		pos += m->segs[i].len;
	}
	return 0;
}

/* Offset of the first byte where the buffer differs from want, or -1. */
static long differs(FIXTURE_DATA(edu) * self)
{
	unsigned char *got = malloc(BUF_SIZE);
	long at = -1;

	if (!got)
		return -2;
	/* One wide copy out of the BAR, then compare in RAM. */
	memcpy(got, self->cpu, BUF_SIZE);
	for (size_t i = 0; i < BUF_SIZE; i++)
		if (got[i] != self->want[i]) {
			at = i;
			break;
		}
	free(got);
	return at;
}

/*
 * edu copies 4000 bytes from one place of the buffer to another with the
 * mapping's DMA addresses; the buffer then holds exactly the copy.
 */
TEST_F_TIMEOUT(edu, dma_with_exported_addresses_moves_the_bytes, 120)
{
	const size_t src = 0x1000 + 123, dst = 0x10000 + 7, len = 4000;
	struct p2pimp_map m;
	__u64 dma = 0;
	int h;

	if (!strcmp(self->type, "refused"))
		SKIP(return, "the route to edu is refused here");
	h = edu_attach_map(self, 0, &m);
	ASSERT_LE(0, h) TH_LOG("attach/map for %s: %s", self->edu, strerror(-h));
	ASSERT_LE(1, m.nents);
	for (unsigned int i = 0; i < m.nents && i < P2PIMP_MAX_SEGS; i++) {
		if (!strcmp(self->type, "bus-address")) {
			/* x86 QEMU: a bus address equals the CPU address. */
			EXPECT_EQ(1, m.segs[i].bus);
			EXPECT_EQ(m.segs[i].phys, m.segs[i].dma);
		} else {
			EXPECT_EQ(0, m.segs[i].bus);
			/* An IOVA under the IOMMU, else the CPU address. */
			EXPECT_EQ(!self->iommu, m.segs[i].phys == m.segs[i].dma);
		}
	}
	ASSERT_EQ(0, edu_dma(self, h, 0, src, len, &dma));
	EXPECT_EQ(seg_addr(&m, src), dma);
	ASSERT_EQ(0, edu_dma(self, h, 1, dst, len, &dma));
	EXPECT_EQ(seg_addr(&m, dst), dma);
	memcpy(self->want + dst, self->want + src, len);
	EXPECT_EQ(-1, differs(self)) TH_LOG("seed %u", self->seed);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
}

/*
 * Under a translating IOMMU a DMA_TO_DEVICE mapping lets edu read but not
 * write: the read brings the bytes, the write is blocked (the IOMMU logs
 * the fault for edu) and the buffer keeps every byte.
 */
TEST_F_TIMEOUT(edu, to_device_mapping_is_read_only_under_iommu, 120)
{
	const size_t src = 0x3000, dst = 0x20000, len = 4000;
	struct p2pimp_map m;
	__u64 dma = 0;
	int h;

	char dev[40];
	int kmsg;

	if (!self->iommu)
		SKIP(return, "edu's DMA is not translated here");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	h = edu_attach_map(self, P2PIMP_ATTACH_TO_DEVICE, &m);
	ASSERT_LE(0, h) TH_LOG("attach/map for %s: %s", self->edu, strerror(-h));
	ASSERT_EQ(0, edu_dma(self, h, 0, src, len, &dma));
	ASSERT_EQ(0, edu_dma(self, h, 1, dst, len, &dma));
	EXPECT_EQ(-1, differs(self)) TH_LOG("seed %u", self->seed);
	/*
	 * The DMAR driver names the requester "[bus:dev.fn]" (6.12) or
	 * "[domain:bus:dev.fn]" (7.3): match the end of either.
	 */
	snprintf(dev, sizeof(dev), "%s] fault", self->edu + 5);
	EXPECT_EQ(1, kmsg_logged(kmsg, dev, "PTE Write access is not set"));
	close(kmsg);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
}

/*
 * Where the route from the provider to edu is refused, every attach fails
 * with EREMOTEIO, the kernel log gives the reason naming edu, and nothing
 * changes in the buffer. (That a loop of refusals is rate-limited is
 * p2pdma-dmabuf's db_refusals_ratelimited_test: here, under TCG, attaches
 * come too slowly for the limit of 10 in 5 s to bite.)
 */
TEST_F_TIMEOUT(edu, refused_route_attach_is_eremoteio_with_reason, 180)
{
	struct p2pimp_map m;
	char want[320];
	int i, h, kmsg;

	if (strcmp(self->type, "refused"))
		SKIP(return, "the route to edu is not refused here");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	/* Past any burst of refusals the rate limit still holds back. */
	sleep(6);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	for (i = 0; i < 3; i++) {
		h = edu_attach_map(self, 0, &m);
		if (h != -EREMOTEIO)
			break;
	}
	EXPECT_EQ(3, i) TH_LOG("attach %d for %s: %s", i, self->edu,
			       strerror(h < 0 ? -h : 0));
	if (h >= 0)
		ioctl(self->ctl, P2PIMP_IOC_DETACH, h);
	snprintf(want, sizeof(want), "client %s refused", self->edu);
	EXPECT_LE(1, kmsg_count(kmsg, "P2PDMA to/from", want));
	EXPECT_EQ(-1, differs(self)) TH_LOG("seed %u", self->seed);
	close(kmsg);
}

TEST_HARNESS_MAIN
