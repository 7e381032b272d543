// SPDX-License-Identifier: GPL-2.0
/*
 * P2P memory exported as a dma-buf, seen by an importer: the test importer
 * of the test kernels (CONFIG_PCI_P2PDMA_TEST_IMPORTER,
 * /sys/kernel/debug/p2pdma-importer/ctl, p2pdma_importer.h) attaches for a
 * named PCI function and reports what it was given. The buffer is
 * exported the way userspace gets one, through /dev/p2pmem
 * (P2PMEM_IOC_EXPORT; the provider, an NVMe CMB, publishes its memory).
 *
 *   - map type: for each of the scenario's source and destination NVMe,
 *     what P2P_EXPECT_SRC/P2P_EXPECT_DST (the topology's scenario line)
 *     say: "bus-address" (every segment flagged as a PCI bus address, at
 *     the provider's BAR: on x86 QEMU a PCI bus address equals the CPU
 *     physical address, as no host bridge window translates),
 *     "through-host-bridge" (not flagged; the CPU physical address
 *     without an IOMMU, an IOVA when the device's IOMMU group translates,
 *     which its IOMMU maps to the BAR until the detach, and to nothing
 *     after it)
 *     or "refused" (attach fails with EREMOTEIO); an importer that does
 *     not accept peer-to-peer memory is refused with EOPNOTSUPP;
 *   - bytes: an NVMe namespace DMAs a random pattern into the dma-buf's
 *     memory (the importer submits the read); every byte is compared
 *     through the importer's kernel mapping and through an mmap() of the
 *     dma-buf, and what no transfer wrote still reads zero;
 *   - memory: an export takes exactly its size from p2pmem/available, its
 *     release gives it back;
 *   - revocation: unbinding the provider calls move_notify once, the
 *     importer's mapping is gone, map and attach then fail with ENODEV,
 *     and the unbind waits for nothing (it reports no wait); an importer
 *     that ignores move_notify holds the unbind for as long as it keeps
 *     its mapping (the memory is never given back under it), is named in
 *     the log, and the unbind ends once it unmaps; an importer that pins
 *     is refused with EOPNOTSUPP;
 *   - surprise removal (run alone, last of its boot: -t
 *     surprise_removal_of_the_switch_ends): QEMU removes the switch above
 *     the provider and the importer's device (device_del, asked for
 *     through qemu/qmp-relay.py), and both are gone within the time limit
 *     with nothing left waiting.
 *
 * Environment (tests/guest/all.sh, from the topology): P2P_MEM (serial of
 * the NVMe whose CMB is the provider), P2P_SRC, P2P_DST, P2P_EXPECT_SRC,
 * P2P_EXPECT_DST; P2P_HOTUNPLUG, the QEMU id of the switch's upstream port.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drivers/pci/p2pdma/tests/p2pdma_importer.h>
#include "../../../../include/uapi/linux/p2pmem.h"

#include "../kselftest_harness.h"

#define MIB		(1024UL * 1024)
#define BUF_SIZE	(2 * MIB)	/* above the per-CPU cache's sizes */
#define DISK_OFF	(40 * MIB)	/* region of the disks these tests use */
#define CTL		"/sys/kernel/debug/p2pdma-importer/ctl"
#define HANG_S		60		/* a step this late is hung: no speed claim */
#define HELD_S		7		/* from move_notify: past the first report (5 s) */

#include "p2pdma_util.h"

/*
 * @size bytes of @bdf's P2P memory as a dma-buf, the way userspace gets
 * one: P2PMEM_IOC_EXPORT of /dev/p2pmem (the provider has published its
 * memory). Returns the fd, or -errno.
 */
static int export_dmabuf(const char *bdf, size_t size)
{
	struct p2pmem_export e = { .size = size };
	int dev, ret;

	if (parse_bdf(bdf, &e.domain, &e.bus, &e.devfn))
		return -EINVAL;
	dev = open("/dev/p2pmem", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	ret = ioctl(dev, P2PMEM_IOC_EXPORT, &e) ? -errno : e.fd;
	close(dev);
	return ret;
}

/* Attach to @fd for the PCI function @bdf; the handle, or -errno. */
static int attach(int ctl, int fd, const char *bdf, __u32 flags)
{
	struct p2pimp_attach a = { .fd = fd, .flags = flags };

	if (parse_bdf(bdf, &a.domain, &a.bus, &a.devfn))
		return -EINVAL;
	return ioctl(ctl, P2PIMP_IOC_ATTACH, &a) ? -errno : (int)a.handle;
}

/* Map @handle into @m; 0 or -errno. */
static int map(int ctl, int handle, struct p2pimp_map *m)
{
	memset(m, 0, sizeof(*m));
	m->handle = handle;
	return ioctl(ctl, P2PIMP_IOC_MAP, m) ? -errno : 0;
}

static int status(int ctl, int handle, struct p2pimp_status *s)
{
	memset(s, 0, sizeof(*s));
	s->handle = handle;
	return ioctl(ctl, P2PIMP_IOC_STATUS, s) ? -errno : 0;
}

static int buf_read(int ctl, int handle, size_t off, void *data, size_t len)
{
	struct p2pimp_read r = {
		.handle = handle, .offset = off, .len = len,
		.data = (uintptr_t)data,
	};

	return ioctl(ctl, P2PIMP_IOC_READ, &r) ? -errno : 0;
}

/* @blk reads @len bytes at byte @disk_off into the buffer at @off. */
static int nvme_io(int ctl, int handle, const char *blk, size_t disk_off,
		   size_t off, size_t len)
{
	struct p2pimp_io io = {
		.handle = handle, .sector = disk_off / 512, .offset = off,
		.len = len,
	};

	snprintf(io.path, sizeof(io.path), "%s", blk);
	return ioctl(ctl, P2PIMP_IOC_IO, &io) ? -errno : 0;
}

static int is_bound(const char *bdf)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	return access(path, F_OK) == 0;
}

/* The BAR of @bdf that holds [@phys, @phys + @len), or -1. */
static int bar_of(const char *bdf, unsigned long long phys, size_t len)
{
	unsigned long long start, end, flags;
	char path[256];
	int i = 0, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < 0 && i < 6 &&
	       fscanf(f, "%llx %llx %llx", &start, &end, &flags) == 3) {
		if (start && start <= phys && phys + len - 1 <= end)
			found = i;
		i++;
	}
	fclose(f);
	return found;
}

/* Does @bdf's IOMMU group translate DMA (dma-iommu gives IOVAs)? */
static int translates(const char *bdf)
{
	char path[256], type[32];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/type", bdf);
	if (read_file(path, type, sizeof(type)))
		return 0;
	return !strncmp(type, "DMA", 3);
}

/*
 * What @dma translates to in @bdf's IOMMU domain now (0: nothing), or
 * -errno (ENODEV: its DMA is not translated).
 */
static long long iova_phys(int ctl, const char *bdf, __u64 dma)
{
	struct p2pimp_iova v = { .dma = dma };

	if (parse_bdf(bdf, &v.domain, &v.bus, &v.devfn))
		return -EINVAL;
	return ioctl(ctl, P2PIMP_IOC_IOVA, &v) ? -errno : (long long)v.phys;
}

/* Random bytes: a pattern no earlier run or zeroing could have left. */
static void fill_random(unsigned char *p, size_t len)
{
	unsigned int seed = (unsigned int)(now() * 1e6) ^ getpid();
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rand_r(&seed);
}

FIXTURE(import) {
	struct nvme_dev mem, src, dst;
	long long avail;
	int ctl;
	int fd;		/* the dma-buf */
};

FIXTURE_SETUP(import)
{
	self->ctl = -1;
	self->fd = -1;
	if (find_nvme(getenv("P2P_MEM"), &self->mem))
		SKIP(return, "no NVMe with serial P2P_MEM=%s", getenv("P2P_MEM") ?: "(unset)");
	ASSERT_EQ(0, find_nvme(getenv("P2P_SRC"), &self->src));
	ASSERT_EQ(0, find_nvme(getenv("P2P_DST"), &self->dst));
	ASSERT_EQ(0, remember_driver(self->mem.bdf));
	self->avail = available(self->mem.bdf);
	ASSERT_LE((long long)BUF_SIZE, self->avail);
	self->ctl = open(CTL, O_RDWR);
	ASSERT_LE(0, self->ctl) TH_LOG("open %s: %s", CTL, strerror(errno));
	self->fd = export_dmabuf(self->mem.bdf, BUF_SIZE);
	ASSERT_LE(0, self->fd) TH_LOG("export: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(import)
{
	/* Closing the control file detaches what a failed case left. */
	if (self->ctl >= 0)
		close(self->ctl);
	if (self->fd >= 0)
		close(self->fd);
	/* Later suites need the provider back. */
	if (self->mem.bdf[0] && !is_bound(self->mem.bdf) && !set_bound(self->mem.bdf, 1))
		wait_p2pmem(self->mem.bdf);
}

/* The client a case has P2P DMA done by: the source, else the provider. */
static const struct nvme_dev *reachable(FIXTURE_DATA(import) * self)
{
	const char *e = getenv("P2P_EXPECT_SRC") ?: "bus-address";

	return strcmp(e, "refused") ? &self->src : &self->mem;
}

/* The importer of @client maps what the scenario says, @expect. */
static void check_map(struct __test_metadata *_metadata,
		      FIXTURE_DATA(import) * self, const struct nvme_dev *client,
		      const char *expect)
{
	unsigned long long total = 0;
	unsigned int i, iovas = 0;
	struct p2pimp_map m;
	int h;

	ASSERT_NE(NULL, expect);
	h = attach(self->ctl, self->fd, client->bdf, 0);
	if (!strcmp(expect, "refused")) {
		ASSERT_EQ(-EREMOTEIO, h);
		return;
	}
	ASSERT_LE(0, h) TH_LOG("attach for %s: %s", client->bdf, strerror(-h));
	ASSERT_EQ(0, map(self->ctl, h, &m));
	ASSERT_LE(1, m.nents);
	ASSERT_GE(P2PIMP_MAX_SEGS, m.nents);
	/* The CPU side: one contiguous range of the provider's BAR. */
	ASSERT_LE(0, bar_of(self->mem.bdf, m.segs[0].phys, BUF_SIZE));
	for (i = 0; i < m.nents; i++) {
		TH_LOG("segment %u: dma %#llx phys %#llx len %u bus %u", i,
		       (unsigned long long)m.segs[i].dma,
		       (unsigned long long)m.segs[i].phys, m.segs[i].len, m.segs[i].bus);
		EXPECT_EQ(0, m.segs[i].dma & 4095);
		if (!strcmp(expect, "bus-address")) {
			/* Bus address == CPU address on x86 QEMU. */
			EXPECT_EQ(1, m.segs[i].bus);
			EXPECT_EQ(m.segs[0].phys + total, m.segs[i].dma);
		} else if (translates(client->bdf)) {
			/* An IOVA: not the BAR's address. */
			EXPECT_EQ(0, m.segs[i].bus);
			EXPECT_NE(m.segs[0].phys + total, m.segs[i].dma);
			EXPECT_EQ(-1, bar_of(self->mem.bdf, m.segs[i].dma, m.segs[i].len));
			/* Its IOMMU maps it to the BAR, until the unmap. */
			EXPECT_EQ((long long)(m.segs[0].phys + total),
				  iova_phys(self->ctl, client->bdf, m.segs[i].dma));
			iovas++;
		} else {
			/* dma-direct: the CPU physical address. */
			EXPECT_EQ(0, m.segs[i].bus);
			EXPECT_EQ(m.segs[0].phys + total, m.segs[i].dma);
		}
		total += m.segs[i].len;
	}
	EXPECT_EQ(BUF_SIZE, total);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	/* The exporter's unmap left no IOVA that reaches the BAR. */
	for (i = 0; i < m.nents && iovas; i++) {
		long long left = iova_phys(self->ctl, client->bdf, m.segs[i].dma);

		EXPECT_EQ(0, left)
			TH_LOG("segment %u: IOVA %#llx still maps %#llx after the unmap",
			       i, (unsigned long long)m.segs[i].dma, left);
	}
}

TEST_F(import, source_importer_gets_the_scenarios_map_type)
{
	check_map(_metadata, self, &self->src, getenv("P2P_EXPECT_SRC"));
}

TEST_F(import, destination_importer_gets_the_scenarios_map_type)
{
	check_map(_metadata, self, &self->dst, getenv("P2P_EXPECT_DST"));
}

TEST_F(import, importer_without_peer2peer_is_eopnotsupp)
{
	EXPECT_EQ(-EOPNOTSUPP, attach(self->ctl, self->fd, self->mem.bdf,
				      P2PIMP_ATTACH_NO_P2P));
	EXPECT_EQ(-EOPNOTSUPP, attach(self->ctl, self->fd, reachable(self)->bdf,
				      P2PIMP_ATTACH_NO_P2P));
}

/*
 * An importer that pins (RDMA's pinned memory region) could not be
 * revoked: it is refused with EOPNOTSUPP and the reason is logged (7.3: at
 * attach, it has no invalidate_mappings; 6.12: at its pin, its move_notify
 * only warns), and the buffer serves the next importer unchanged.
 */
TEST_F(import, pinned_importer_is_eopnotsupp)
{
	const struct nvme_dev *c = reachable(self);
	char line[128];
	int h, kmsg;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	h = attach(self->ctl, self->fd, c->bdf, P2PIMP_ATTACH_PINNED);
	EXPECT_EQ(-EOPNOTSUPP, h);
	if (h >= 0)
		ioctl(self->ctl, P2PIMP_IOC_DETACH, h);
	snprintf(line, sizeof(line), "dma-buf importer %s refused", c->bdf);
	EXPECT_EQ(1, kmsg_count(kmsg, line, "cannot be revoked"));
	close(kmsg);
	check_map(_metadata, self, c, c == &self->src ?
		  getenv("P2P_EXPECT_SRC") : "bus-address");
}

TEST_F(import, export_takes_its_size_and_release_returns_it)
{
	int h;

	EXPECT_EQ(self->avail - (long long)BUF_SIZE, available(self->mem.bdf));
	/* An importer's mapping, undone by detach, then the last fd. */
	h = attach(self->ctl, self->fd, reachable(self)->bdf, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

TEST_F(import, nvme_dma_into_dmabuf_reads_back_every_byte)
{
	const struct nvme_dev *c = reachable(self);
	size_t len = MIB, off2 = 4096 + 512, len2 = 8 * 512;
	unsigned char *ram, *back, *cpu;
	struct p2pimp_map m;
	int h, fd;

	ASSERT_EQ(0, posix_memalign((void **)&ram, 4096, 2 * len));
	back = ram + len;
	fill_random(ram, len);
	fd = open(c->blk, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, pwrite(fd, ram, len, DISK_OFF));
	close(fd);
	/* The CPU's view: the dma-buf's own mmap() of the same memory. */
	cpu = mmap(NULL, BUF_SIZE, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, cpu) TH_LOG("mmap of the dma-buf: %s", strerror(errno));
	h = attach(self->ctl, self->fd, c->bdf, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, map(self->ctl, h, &m));
	/*
	 * The whole first MiB, by the NVMe's P2P DMA, read back through the
	 * importer's kernel mapping and through the mmap().
	 */
	ASSERT_EQ(0, nvme_io(self->ctl, h, c->blk, DISK_OFF, 0, len));
	ASSERT_EQ(0, buf_read(self->ctl, h, 0, back, len));
	EXPECT_EQ(0, memcmp(back, ram, len));
	EXPECT_EQ(0, memcmp(cpu, ram, len));
	/* 4 KiB at an offset that is no page boundary, neighbours kept. */
	ASSERT_EQ(0, nvme_io(self->ctl, h, c->blk, DISK_OFF, MIB + off2, len2));
	ASSERT_EQ(0, buf_read(self->ctl, h, MIB + off2, back, len2));
	EXPECT_EQ(0, memcmp(back, ram, len2));
	ASSERT_EQ(0, nvme_io(self->ctl, h, c->blk, DISK_OFF + 512, MIB + off2 - 512, 512));
	ASSERT_EQ(0, buf_read(self->ctl, h, MIB + off2 - 512, back, 512 + len2));
	EXPECT_EQ(0, memcmp(back, ram + 512, 512));
	EXPECT_EQ(0, memcmp(back + 512, ram, len2));
	EXPECT_EQ(0, memcmp(cpu + MIB + off2 - 512, ram + 512, 512));
	EXPECT_EQ(0, memcmp(cpu + MIB + off2, ram, len2));
	/* What no transfer wrote still reads as the export's zeroes. */
	EXPECT_EQ(-1, first_nonzero(cpu + len, MIB + off2 - 512 - len));
	EXPECT_EQ(-1, first_nonzero(cpu + MIB + off2 + len2, BUF_SIZE - MIB - off2 - len2));
	/* Out of the buffer. */
	EXPECT_EQ(-EINVAL, nvme_io(self->ctl, h, c->blk, DISK_OFF, BUF_SIZE - 512, 1024));
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	EXPECT_EQ(0, munmap(cpu, BUF_SIZE));
	free(ram);
}

/*
 * Unbind the provider while importer @h holds a mapping. Returns the
 * seconds from the importer's move_notify to the end of the unbind: the
 * revocation's wait for importers and what follows it, not the device
 * driver's own shutdown before it, which takes seconds in an emulator.
 * *@total is the whole unbind.
 */
static double unbind_provider(struct __test_metadata *_metadata,
			      FIXTURE_DATA(import) * self, int h, double *total)
{
	struct p2pimp_status s;
	double t = now(), end;

	EXPECT_EQ(0, set_bound(self->mem.bdf, 0));
	end = now();
	*total = end - t;
	EXPECT_EQ(-1, available(self->mem.bdf));
	EXPECT_EQ(0, status(self->ctl, h, &s));
	EXPECT_LT(t, s.moved_ns / 1e9);
	t = end - s.moved_ns / 1e9;
	TH_LOG("unbind of %s took %.2f s, %.2f s of it after move_notify",
	       self->mem.bdf, *total, t);
	return t;
}

static void rebind_provider(struct __test_metadata *_metadata,
			    FIXTURE_DATA(import) * self)
{
	ASSERT_EQ(0, set_bound(self->mem.bdf, 1));
	ASSERT_EQ(0, wait_p2pmem(self->mem.bdf));
	/* A new pool, none of it taken by the revoked buffer. */
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

TEST_F_TIMEOUT(import, unbind_revokes_importer_mapping, 120)
{
	const struct nvme_dev *c = reachable(self);
	struct p2pimp_status s;
	struct p2pimp_map m;
	unsigned char b[512];
	double total;
	int h, kmsg;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	h = attach(self->ctl, self->fd, c->bdf, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, map(self->ctl, h, &m));
	ASSERT_EQ(0, status(self->ctl, h, &s));
	EXPECT_EQ(0, s.moves);
	EXPECT_EQ(1, s.mapped);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	unbind_provider(_metadata, self, h, &total);
	/*
	 * The importer unmapped inside move_notify, so the revocation had
	 * nothing to wait for: no fence, no mapping, no pinned page. It
	 * reports any wait after 5 s of it; how long the rest of the unbind
	 * takes in the emulator is no part of the claim.
	 */
	EXPECT_EQ(0, kmsg_count(kmsg, "P2PDMA: unbind waits", NULL));
	close(kmsg);
	ASSERT_EQ(0, status(self->ctl, h, &s));
	EXPECT_EQ(1, s.moves);
	EXPECT_EQ(0, s.mapped);
	EXPECT_EQ(-ENODEV, map(self->ctl, h, &m));
	EXPECT_EQ(-ENODEV, attach(self->ctl, self->fd, c->bdf, 0));
	EXPECT_EQ(-ENODEV, buf_read(self->ctl, h, 0, b, sizeof(b)));
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	rebind_provider(_metadata, self);
	/* The revoked buffer's release touches nothing of the new pool. */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(self->avail, available(self->mem.bdf));
}

/* Has the unbind writer @pid exited? Its status in *@status. */
static int unbind_done(pid_t pid, int *status)
{
	return waitpid(pid, status, WNOHANG) == pid;
}

/*
 * An importer that ignores move_notify keeps its mapping: the unbind
 * waits for it, past any timer, and names it in the log (its device and
 * driver); once it unmaps, the unbind ends. The memory it can still reach
 * is never handed to anyone meanwhile.
 */
TEST_F_TIMEOUT(import, unbind_waits_for_importer_ignoring_move_notify, 240)
{
	const struct nvme_dev *c = reachable(self);
	char path[256], line[128];
	struct p2pimp_status s;
	struct p2pimp_map m;
	unsigned char b[512];
	int h, kmsg, wstatus, i;
	pid_t pid;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	h = attach(self->ctl, self->fd, c->bdf, P2PIMP_ATTACH_BUGGY);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, map(self->ctl, h, &m));

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind",
		 provider_drv);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(write_file(path, self->mem.bdf) ? 1 : 0);
	/* The device driver's own shutdown comes first: seconds here. */
	for (i = 0; i < HANG_S * 10; i++) {
		ASSERT_EQ(0, status(self->ctl, h, &s));
		if (s.moves)
			break;
		usleep(100000);
	}
	ASSERT_EQ(1, s.moves);
	sleep(HELD_S);
	EXPECT_FALSE(unbind_done(pid, &wstatus));
	ASSERT_EQ(0, status(self->ctl, h, &s));
	EXPECT_EQ(1, s.moves);
	EXPECT_EQ(1, s.mapped);
	/* The importer's CPU access goes by move_notify, not its mapping. */
	EXPECT_EQ(-ENODEV, buf_read(self->ctl, h, 0, b, sizeof(b)));
	snprintf(line, sizeof(line), "for %s (nvme) to unmap 1 mapping(s)",
		 c->bdf);
	EXPECT_EQ(1, kmsg_logged(kmsg, line, NULL));
	close(kmsg);

	/* Its unmap ends the unbind. */
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	for (i = 0; i < HANG_S * 100 && !unbind_done(pid, &wstatus); i++)
		usleep(10000);
	ASSERT_GT(HANG_S * 100, i);
	EXPECT_TRUE(WIFEXITED(wstatus) && !WEXITSTATUS(wstatus));
	EXPECT_EQ(-1, available(self->mem.bdf));
	rebind_provider(_metadata, self);
}

/*
 * Is lockdep still checking (debug_locks 1 in /proc/lockdep_stats)? 1 on a
 * kernel without lockdep: nothing to lose.
 */
static int lockdep_on(void)
{
	char line[128];
	int on = 1;
	FILE *f;

	f = fopen("/proc/lockdep_stats", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " debug_locks: %d", &on) == 1)
			break;
	fclose(f);
	return on;
}

/* Is the PCI function @bdf gone from sysfs? */
static int gone(const char *bdf)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	return access(path, F_OK) && errno == ENOENT;
}

/*
 * The switch above the provider and the source (the importer's device) is
 * pulled out: pciehp removes every function below it, the provider first.
 * The importer that pins is refused before, the one that maps is told to
 * move and unmaps, so the provider's removal waits for nothing and the
 * importer's device goes after it. A pinned importer that cannot be
 * revoked would hold the provider's removal, and the one behind it,
 * until its owner gave it up (here: the control file's close, after the
 * case failed).
 */
TEST_F_TIMEOUT(import, surprise_removal_of_the_switch_ends, 300)
{
	const char *port = getenv("P2P_HOTUNPLUG");
	struct p2pimp_status s;
	struct p2pimp_map m;
	int h, kmsg, i;

	if (!port)
		SKIP(return, "P2P_HOTUNPLUG names no switch to remove");
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	/* Were it let in, it would map, and hold the removal with it. */
	h = attach(self->ctl, self->fd, self->src.bdf, P2PIMP_ATTACH_PINNED);
	EXPECT_EQ(-EOPNOTSUPP, h);
	if (h >= 0)
		EXPECT_EQ(0, map(self->ctl, h, &m));
	h = attach(self->ctl, self->fd, self->src.bdf, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, map(self->ctl, h, &m));

	/*
	 * Lockdep is on now. 6.12's pciehp turns it off when it takes its
	 * reset_lock again under pci_rescan_remove_lock (qemu/scan-console.sh
	 * excuses that report), which it does only after
	 * pci_stop_and_remove_bus_device() of the switch returned: the
	 * removal of ours has run under lockdep by then.
	 */
	EXPECT_EQ(1, lockdep_on());
	/* qemu/qmp-relay.py reads this line from the output port. */
	printf("P2PDMA-QMP device_del %s\n", port);
	fflush(stdout);
	/* pciehp's attention button waits 5 s; the rest is emulation. */
	for (i = 0; i < HANG_S * 10; i++) {
		if (gone(self->mem.bdf) && gone(self->src.bdf))
			break;
		usleep(100000);
	}
	EXPECT_TRUE(gone(self->mem.bdf));
	ASSERT_TRUE(gone(self->src.bdf));
	TH_LOG("both functions gone %.1f s after the request", i / 10.0);
	ASSERT_EQ(0, status(self->ctl, h, &s));
	EXPECT_EQ(1, s.moves);
	EXPECT_EQ(0, s.mapped);
	EXPECT_EQ(0, kmsg_count(kmsg, "P2PDMA: unbind waits", NULL));
	close(kmsg);
	EXPECT_EQ(-ENODEV, map(self->ctl, h, &m));
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	close(self->fd);
	self->fd = -1;
}

TEST_HARNESS_MAIN
