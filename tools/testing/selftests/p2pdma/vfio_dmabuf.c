// SPDX-License-Identifier: GPL-2.0
/*
 * vfio-pci exports a BAR as a dma-buf (VFIO_DEVICE_FEATURE_DMA_BUF, Linux
 * 7.3). The P2PDMA core gives the export the BAR's provider
 * (pcim_p2pdma_provider()) and every importer its map type
 * (pci_p2pdma_map_type()). Here the BAR is BAR 2 of QEMU's ivshmem-plain
 * (plain RAM behind it), and QEMU's edu DMA engine, under an emulated
 * IOMMU, moves bytes into and out of it with exactly the addresses an
 * importer was given:
 *
 *   importer: the test importer (p2pdma-importer.c) attaches for edu and
 *     maps; edu DMAs with the mapping's address. VFIO_DEVICE_RESET
 *     revokes it: the importer is told, the IOVA no longer translates and
 *     edu's DMA through it is refused, and a new attachment works again
 *     after the reset. Closing the device revokes for good: a new
 *     attachment fails with ENODEV. Importers that cannot be revoked or
 *     take no P2P memory are refused at attach (EOPNOTSUPP).
 *   iommufd: edu, bound to vfio-pci too and attached to the same IOAS,
 *     DMAs into the dma-buf that IOMMU_IOAS_MAP_FILE mapped, from user
 *     space alone; after VFIO_DEVICE_RESET, or once the device is closed,
 *     the mapping is gone: edu's DMA faults in the IOMMU and the BAR
 *     keeps every byte.
 *
 * Every byte of the exported range is compared through vfio's mmap() of
 * the BAR (opened anew where the case closed it). Environment (the
 * topology): P2P_VFIO_SCN=name; one ivshmem-plain (1af4:1110) and one edu
 * (1234:11e8), each alone below a root port (VFIO_DEVICE_RESET resets
 * the bus), both behind the IOMMU.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/iommufd.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>

#include <drivers/pci/p2pdma/tests/p2pdma_importer.h>

#include "../kselftest_harness.h"
#include "p2pdma_util.h"

#define IVSHMEM_ID	"0x1af4 0x1110"
#define EDU_ID		"0x1234 0x11e8"
#define CTL		"/sys/kernel/debug/p2pdma-importer/ctl"
#define MEM_BAR		2		/* ivshmem's memory */
/* The exported range: the start of the BAR, compared byte by byte. */
#define BUF_SIZE	(256UL * 1024)
/* Where IOMMU_IOAS_MAP_FILE puts it for edu (64-bit DMA mask). */
#define IOVA		0x100000000ULL

/* edu's DMA registers in BAR 0 (QEMU docs/specs/edu.rst). */
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_CNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_CMD_START	0x1
#define EDU_CMD_TO_RAM	0x2
#define EDU_BUF		0x40000

/* One PCI function owned through its vfio cdev, bound to an iommufd. */
struct vdev {
	char bdf[32];
	int fd;
	__u64 bar_off;		/* the region of the BAR used, in @fd */
	__u64 cfg_off;		/* the config space region */
};

/* The driver @bdf is bound to, into @drv ("" for none). */
static void driver_of(const char *bdf, char *drv, size_t len)
{
	char path[300], link[300];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	drv[0] = '\0';
	if (n > 0) {
		link[n] = '\0';
		snprintf(drv, len, "%s", basename(link));
	}
}

/* Bind @bdf to vfio-pci the administrator's way, unless it is; 0 or -1. */
static int vfio_bind(const char *bdf)
{
	char path[300], drv[64];

	driver_of(bdf, drv, sizeof(drv));
	if (!strcmp(drv, "vfio-pci"))
		return 0;
	if (drv[0]) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver/unbind", bdf);
		if (write_file(path, bdf))
			return -1;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	if (write_file(path, "vfio-pci") ||
	    write_file("/sys/bus/pci/drivers_probe", bdf))
		return -1;
	driver_of(bdf, drv, sizeof(drv));
	return strcmp(drv, "vfio-pci") ? -1 : 0;
}

/* Give @bdf back to no driver (edu and ivshmem have none here). */
static int vfio_unbind(const char *bdf)
{
	char path[300], drv[64];

	driver_of(bdf, drv, sizeof(drv));
	if (!strcmp(drv, "vfio-pci") &&
	    write_file("/sys/bus/pci/drivers/vfio-pci/unbind", bdf))
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	return write_file(path, "\n");
}

/* The offset of region @index of the device @fd, and its size; 0 or -errno. */
static int region(int fd, __u32 index, __u64 *off, __u64 *size)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri), .index = index };

	if (ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &ri))
		return -errno;
	*off = ri.offset;
	if (size)
		*size = ri.size;
	return 0;
}

/*
 * Open @v's vfio cdev, bind it to @iommufd and attach it to @ioas; @bar is
 * the BAR the case uses. 0 or -errno.
 */
static int vdev_open(struct vdev *v, int bar, int iommufd, __u32 ioas)
{
	struct vfio_device_attach_iommufd_pt at = { .argsz = sizeof(at), .pt_id = ioas };
	struct vfio_device_bind_iommufd bi = { .argsz = sizeof(bi), .iommufd = iommufd };
	char path[300] = "";
	struct dirent *e;
	DIR *d;
	int ret;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vfio-dev", v->bdf);
	d = opendir(path);
	if (!d)
		return -errno;
	path[0] = '\0';
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "vfio", 4))
			snprintf(path, sizeof(path), "/dev/vfio/devices/%s", e->d_name);
	closedir(d);
	v->fd = open(path, O_RDWR | O_CLOEXEC);
	if (v->fd < 0)
		return -errno;
	if (ioctl(v->fd, VFIO_DEVICE_BIND_IOMMUFD, &bi) ||
	    ioctl(v->fd, VFIO_DEVICE_ATTACH_IOMMUFD_PT, &at))
		return -errno;
	ret = region(v->fd, bar, &v->bar_off, NULL);
	return ret ?: region(v->fd, VFIO_PCI_CONFIG_REGION_INDEX, &v->cfg_off, NULL);
}

static void vdev_close(struct vdev *v)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}

/* A dma-buf of [@off, @off + @len) of BAR @bar of @v; its fd or -errno. */
static int get_dmabuf(struct vdev *v, __u32 bar, __u64 off, __u64 len)
{
	/* The feature header, its argument, one range; 8-byte aligned. */
	__u64 buf[(sizeof(struct vfio_device_feature) +
		   sizeof(struct vfio_device_feature_dma_buf) +
		   sizeof(struct vfio_region_dma_range) + 7) / 8] = {};
	struct vfio_device_feature *f = (void *)buf;
	struct vfio_device_feature_dma_buf *db = (void *)f->data;
	int ret;

	f->argsz = sizeof(buf);
	f->flags = VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_DMA_BUF;
	db->region_index = bar;
	db->open_flags = O_RDWR | O_CLOEXEC;
	db->nr_ranges = 1;
	db->dma_ranges[0].offset = off;
	db->dma_ranges[0].length = len;
	ret = ioctl(v->fd, VFIO_DEVICE_FEATURE, f);
	return ret < 0 ? -errno : ret;
}

/* The CPU physical address of BAR @bar of @bdf (sysfs "resource"). */
static __u64 bar_phys(const char *bdf, int bar)
{
	unsigned long long start = 0, end, flags;
	char path[300];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (i = 0; i <= bar; i++)
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			start = 0;
	fclose(f);
	return start;
}

/* The first byte of the BAR range (mapped at @p) that differs from @want, or -1. */
static long differs(const unsigned char *p, const unsigned char *want)
{
	unsigned char *got = malloc(BUF_SIZE);
	long at = -1;

	if (!got)
		return -2;
	memcpy(got, p, BUF_SIZE);
	for (size_t i = 0; i < BUF_SIZE; i++)
		if (got[i] != want[i]) {
			at = i;
			break;
		}
	free(got);
	return at;
}

/* A random pattern (seed logged by the caller) in @want and at @p. */
static void fill_random(unsigned char *p, unsigned char *want, unsigned int seed)
{
	srandom(seed);
	for (size_t i = 0; i < BUF_SIZE; i++)
		want[i] = (unsigned char)random();
	memcpy(p, want, BUF_SIZE);
}

/*
 * The ivshmem's vfio cdev bound to a fresh iommufd and IOAS, its BAR
 * mapped and filled, and a dma-buf of the BAR's first BUF_SIZE bytes.
 */
struct side {
	struct vdev mem;
	int iommufd;
	__u32 ioas;
	unsigned char *bar;
	unsigned char *want;
	unsigned int seed;
	int dmabuf;
};

/* Open the ivshmem (and map its BAR); 0 or -errno, the step in @what. */
static int side_open_mem(struct side *s, const char **what)
{
	void *p;
	int ret;

	*what = "vfio cdev";
	ret = vdev_open(&s->mem, MEM_BAR, s->iommufd, s->ioas);
	if (ret)
		return ret;
	*what = "mmap of the BAR";
	p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, s->mem.fd,
		 s->mem.bar_off);
	if (p == MAP_FAILED)
		return -errno;
	s->bar = p;
	return 0;
}

static void side_close_mem(struct side *s)
{
	if (s->bar)
		munmap(s->bar, BUF_SIZE);
	s->bar = NULL;
	vdev_close(&s->mem);
}

/* Set up @s; 0 or -errno with the step in @what. */
static int side_setup(struct side *s, const char **what)
{
	struct iommu_ioas_alloc ia = { .size = sizeof(ia) };
	int ret;

	s->mem.fd = -1;
	s->iommufd = -1;
	s->dmabuf = -1;
	*what = "ivshmem";
	if (find_pci(IVSHMEM_ID, s->mem.bdf, sizeof(s->mem.bdf)))
		return -ENODEV;
	*what = "binding vfio-pci";
	if (vfio_bind(s->mem.bdf))
		return -EIO;
	*what = "/dev/iommu";
	s->iommufd = open("/dev/iommu", O_RDWR | O_CLOEXEC);
	if (s->iommufd < 0)
		return -errno;
	*what = "IOMMU_IOAS_ALLOC";
	if (ioctl(s->iommufd, IOMMU_IOAS_ALLOC, &ia))
		return -errno;
	s->ioas = ia.out_ioas_id;
	ret = side_open_mem(s, what);
	if (ret)
		return ret;
	s->want = malloc(BUF_SIZE);
	if (!s->want)
		return -ENOMEM;
	s->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	fill_random(s->bar, s->want, s->seed);
	*what = "VFIO_DEVICE_FEATURE_DMA_BUF";
	s->dmabuf = get_dmabuf(&s->mem, MEM_BAR, 0, BUF_SIZE);
	return s->dmabuf < 0 ? s->dmabuf : 0;
}

static void side_teardown(struct side *s)
{
	if (s->dmabuf >= 0)
		close(s->dmabuf);
	side_close_mem(s);
	if (s->iommufd >= 0)
		close(s->iommufd);
	free(s->want);
}

/* After the case closed the ivshmem: open it again to read the BAR. */
static int side_reopen_mem(struct side *s)
{
	const char *what;

	return side_open_mem(s, &what);
}

/* --- The test importer, for edu ------------------------------------- */

FIXTURE(importer) {
	struct side s;
	char edu[32];
	__u64 phys;		/* the exported range's CPU address */
	int ctl;
};

FIXTURE_SETUP(importer)
{
	const char *what = "";
	int ret;

	self->ctl = -1;
	if (!getenv("P2P_VFIO_SCN"))
		SKIP(return, "no vfio scenario (P2P_VFIO_SCN)");
	ASSERT_EQ(0, find_pci(EDU_ID, self->edu, sizeof(self->edu))) TH_LOG("no edu");
	/* The importer drives edu itself: no driver may hold it. */
	ASSERT_EQ(0, vfio_unbind(self->edu));
	ret = side_setup(&self->s, &what);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", what, strerror(-ret));
	TH_LOG("pattern seed %u", self->s.seed);
	self->phys = bar_phys(self->s.mem.bdf, MEM_BAR);
	ASSERT_NE(0, self->phys);
	self->ctl = open(CTL, O_RDWR);
	ASSERT_LE(0, self->ctl) TH_LOG("%s: %s", CTL, strerror(errno));
}

FIXTURE_TEARDOWN(importer)
{
	if (self->ctl >= 0)
		close(self->ctl);
	side_teardown(&self->s);
}

/* Attach for edu with @flags; the handle, or -errno. */
static int imp_attach(FIXTURE_DATA(importer) * self, __u32 flags)
{
	struct p2pimp_attach a = { .fd = self->s.dmabuf, .flags = flags };

	if (parse_bdf(self->edu, &a.domain, &a.bus, &a.devfn))
		return -EINVAL;
	return ioctl(self->ctl, P2PIMP_IOC_ATTACH, &a) ? -errno : (int)a.handle;
}

/* Map the attachment @h into @m; 0 or -errno. */
static int imp_map(FIXTURE_DATA(importer) * self, int h, struct p2pimp_map *m)
{
	memset(m, 0, sizeof(*m));
	m->handle = h;
	return ioctl(self->ctl, P2PIMP_IOC_MAP, m) ? -errno : 0;
}

/* edu DMAs @len bytes at @off of the dma-buf, in or out; 0 or -errno. */
static int imp_edu(FIXTURE_DATA(importer) * self, int h, int to_buffer,
		   size_t off, size_t len, __u64 *dma)
{
	struct p2pimp_edu e = {
		.handle = h, .to_buffer = to_buffer, .len = len, .offset = off,
	};

	if (ioctl(self->ctl, P2PIMP_IOC_EDU, &e))
		return -errno;
	*dma = e.dma;
	return 0;
}

/* What edu's IOMMU domain translates @dma to now (0: nothing). */
static __u64 edu_iova_phys(FIXTURE_DATA(importer) * self, __u64 dma)
{
	struct p2pimp_iova q = { .dma = dma };

	if (parse_bdf(self->edu, &q.domain, &q.bus, &q.devfn) ||
	    ioctl(self->ctl, P2PIMP_IOC_IOVA, &q))
		return ~0ULL;
	return q.phys;
}

/*
 * The attachment @h, whose mapping gave edu the address @old, was
 * revoked: the importer was told and unmapped, @old translates to nothing
 * in edu's domain, and edu's DMA through the attachment is refused.
 */
static void expect_revoked(struct __test_metadata *_metadata,
			   FIXTURE_DATA(importer) * self, int h, __u64 old)
{
	struct p2pimp_status st = { .handle = h };
	__u64 dma = 0;

	ASSERT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_STATUS, &st));
	EXPECT_LE(1, st.moves);
	EXPECT_EQ(0, st.mapped);
	EXPECT_EQ(0, edu_iova_phys(self, old));
	EXPECT_EQ(-ENODEV, imp_edu(self, h, 1, 0, 4000, &dma));
}

/*
 * The mapping is one segment of the whole range, an IOVA (not a bus
 * address: the route goes through the host bridge, under the IOMMU) that
 * translates to the BAR; edu copies 4000 bytes from one place of the BAR
 * to another with it, and the range then holds exactly the copy.
 */
TEST_F_TIMEOUT(importer, edu_dma_with_the_mapping_moves_the_bytes, 120)
{
	struct p2pimp_read rd = { .len = 64 };
	unsigned char buf[64];
	const size_t src = 0x1000 + 123, dst = 0x10000 + 7, len = 4000;
	struct p2pimp_map m;
	__u64 dma = 0;
	int h;

	h = imp_attach(self, 0);
	ASSERT_LE(0, h) TH_LOG("attach for %s: %s", self->edu, strerror(-h));
	ASSERT_EQ(0, imp_map(self, h, &m));
	ASSERT_EQ(1, m.nents);
	EXPECT_EQ(BUF_SIZE, m.segs[0].len);
	EXPECT_EQ(0, m.segs[0].bus);
	/*
	 * No pages behind a vfio BAR: the importer reports none, and refuses
	 * its CPU read, which would go through the pages (EINVAL).
	 */
	EXPECT_EQ(0, m.segs[0].phys);
	rd.handle = h;
	rd.data = (uintptr_t)buf;
	EXPECT_EQ(-1, ioctl(self->ctl, P2PIMP_IOC_READ, &rd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(self->phys, m.segs[0].dma);
	EXPECT_EQ(self->phys + 0x2000, edu_iova_phys(self, m.segs[0].dma + 0x2000));
	ASSERT_EQ(0, imp_edu(self, h, 0, src, len, &dma));
	EXPECT_EQ(m.segs[0].dma + src, dma);
	ASSERT_EQ(0, imp_edu(self, h, 1, dst, len, &dma));
	EXPECT_EQ(m.segs[0].dma + dst, dma);
	memcpy(self->s.want + dst, self->s.want + src, len);
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
}

/*
 * VFIO_DEVICE_RESET revokes: the importer is told and unmaps, its IOVA
 * translates to nothing, edu's DMA through the old attachment is refused
 * (ENODEV) and the BAR keeps its bytes. After the reset the BAR decodes
 * again: a new attachment maps and edu's DMA lands.
 */
TEST_F_TIMEOUT(importer, reset_revokes_then_a_new_attachment_maps, 120)
{
	struct p2pimp_map m;
	__u64 dma = 0, old;
	int h, h2;

	h = imp_attach(self, 0);
	ASSERT_LE(0, h) TH_LOG("attach: %s", strerror(-h));
	ASSERT_EQ(0, imp_map(self, h, &m));
	old = m.segs[0].dma;
	ASSERT_EQ(self->phys, edu_iova_phys(self, old));
	ASSERT_EQ(0, ioctl(self->s.mem.fd, VFIO_DEVICE_RESET)) TH_LOG("%s", strerror(errno));
	expect_revoked(_metadata, self, h, old);
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);

	h2 = imp_attach(self, 0);
	ASSERT_LE(0, h2) TH_LOG("attach after the reset: %s", strerror(-h2));
	ASSERT_EQ(0, imp_map(self, h2, &m));
	ASSERT_EQ(0, imp_edu(self, h2, 0, 0x3000, 4000, &dma));
	ASSERT_EQ(0, imp_edu(self, h2, 1, 0x20000, 4000, &dma));
	memcpy(self->s.want + 0x20000, self->s.want + 0x3000, 4000);
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h2));
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
}

/*
 * Closing the device (its last file reference: the BAR's mmap() goes
 * first) revokes for good: the importer is told and its IOVA translates
 * to nothing, edu's DMA is refused, a new attachment to the dma-buf the
 * user still holds fails with ENODEV, and the BAR kept its bytes.
 */
TEST_F_TIMEOUT(importer, close_revokes_for_good, 120)
{
	struct p2pimp_map m;
	__u64 old;
	int h;

	h = imp_attach(self, 0);
	ASSERT_LE(0, h) TH_LOG("attach: %s", strerror(-h));
	ASSERT_EQ(0, imp_map(self, h, &m));
	old = m.segs[0].dma;
	side_close_mem(&self->s);
	expect_revoked(_metadata, self, h, old);
	EXPECT_EQ(-ENODEV, imp_attach(self, 0));
	EXPECT_EQ(0, ioctl(self->ctl, P2PIMP_IOC_DETACH, h));
	ASSERT_EQ(0, side_reopen_mem(&self->s));
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
}

/*
 * vfio-pci takes revocable P2P importers only: one that cannot be revoked
 * (a pinned attachment without invalidate_mappings) and one that takes
 * no P2P memory are refused at attach with EOPNOTSUPP.
 */
TEST_F(importer, unrevocable_and_non_p2p_importers_are_refused)
{
	EXPECT_EQ(-EOPNOTSUPP, imp_attach(self, P2PIMP_ATTACH_PINNED));
	EXPECT_EQ(-EOPNOTSUPP, imp_attach(self, P2PIMP_ATTACH_NO_P2P));
}

/* --- iommufd: edu from user space, through IOMMU_IOAS_MAP_FILE ------- */

FIXTURE(iommufd) {
	struct side s;
	struct vdev edu;	/* its BAR 0: the DMA registers */
};

/* Map the dma-buf at @iova of the IOAS; 0 or -errno. */
static int map_file(struct side *s, __u64 iova)
{
	struct iommu_ioas_map_file mf = {
		.size = sizeof(mf),
		.flags = IOMMU_IOAS_MAP_FIXED_IOVA | IOMMU_IOAS_MAP_READABLE |
			 IOMMU_IOAS_MAP_WRITEABLE,
		.ioas_id = s->ioas,
		.fd = s->dmabuf,
		.length = BUF_SIZE,
		.iova = iova,
	};

	return ioctl(s->iommufd, IOMMU_IOAS_MAP_FILE, &mf) ? -errno : 0;
}

FIXTURE_SETUP(iommufd)
{
	const char *what = "";
	__u16 cmd;
	int ret;

	self->edu.fd = -1;
	if (!getenv("P2P_VFIO_SCN"))
		SKIP(return, "no vfio scenario (P2P_VFIO_SCN)");
	ret = side_setup(&self->s, &what);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", what, strerror(-ret));
	TH_LOG("pattern seed %u", self->s.seed);
	ASSERT_EQ(0, find_pci(EDU_ID, self->edu.bdf, sizeof(self->edu.bdf))) TH_LOG("no edu");
	ASSERT_EQ(0, vfio_bind(self->edu.bdf));
	ret = vdev_open(&self->edu, 0, self->s.iommufd, self->s.ioas);
	ASSERT_EQ(0, ret) TH_LOG("edu's vfio cdev: %s", strerror(-ret));
	/* edu may master the bus now, and DMA through the IOAS. */
	ASSERT_EQ(2, pread(self->edu.fd, &cmd, 2, self->edu.cfg_off + PCI_COMMAND));
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	ASSERT_EQ(2, pwrite(self->edu.fd, &cmd, 2, self->edu.cfg_off + PCI_COMMAND));
	ret = map_file(&self->s, IOVA);
	ASSERT_EQ(0, ret) TH_LOG("IOMMU_IOAS_MAP_FILE: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(iommufd)
{
	vdev_close(&self->edu);
	side_teardown(&self->s);
	/* The importer's cases drive edu themselves. */
	if (self->edu.bdf[0])
		vfio_unbind(self->edu.bdf);
}

/* Write edu's 64-bit register @reg through vfio's BAR 0 region; 0 or -1. */
static int edu_write(struct vdev *edu, __u64 reg, __u64 val)
{
	return pwrite(edu->fd, &val, 8, edu->bar_off + reg) == 8 ? 0 : -1;
}

/* One edu transfer of @len bytes, waited for (5 s); 0, -EIO or -ETIMEDOUT. */
static int edu_user_dma(struct vdev *edu, __u64 src, __u64 dst, __u32 len,
			bool to_ram)
{
	__u64 cmd;

	if (edu_write(edu, EDU_DMA_SRC, src) || edu_write(edu, EDU_DMA_DST, dst) ||
	    edu_write(edu, EDU_DMA_CNT, len) ||
	    edu_write(edu, EDU_DMA_CMD, EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0)))
		return -EIO;
	for (int i = 0; i < 5000; i++) {
		if (pread(edu->fd, &cmd, 8, edu->bar_off + EDU_DMA_CMD) != 8)
			return -EIO;
		if (!(cmd & EDU_CMD_START))
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/* edu copies @len bytes from @src to @dst of the dma-buf at @iova. */
static int edu_copy(FIXTURE_DATA(iommufd) * self, __u64 iova, size_t src,
		    size_t dst, __u32 len)
{
	return edu_user_dma(&self->edu, iova + src, EDU_BUF, len, false) ?:
	       edu_user_dma(&self->edu, EDU_BUF, iova + dst, len, true);
}

/*
 * edu, programmed from user space, copies 4000 bytes from one place of
 * the BAR to another through the IOVA where iommufd mapped the dma-buf.
 */
TEST_F_TIMEOUT(iommufd, edu_dma_through_the_mapped_dmabuf, 120)
{
	ASSERT_EQ(0, edu_copy(self, IOVA, 0x1000 + 123, 0x10000 + 7, 4000));
	memcpy(self->s.want + 0x10000 + 7, self->s.want + 0x1000 + 123, 4000);
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
}

/*
 * VFIO_DEVICE_RESET revokes the dma-buf: iommufd unmaps it from edu's
 * domain, and edu's write through the old IOVA lands nowhere. A new
 * IOMMU_IOAS_MAP_FILE after the reset maps the BAR again.
 */
TEST_F_TIMEOUT(iommufd, reset_unmaps_the_dmabuf, 120)
{
	const __u64 again = IOVA + 0x10000000ULL;
	int ret;

	/* edu's buffer holds bytes other than the BAR's. */
	ASSERT_EQ(0, edu_copy(self, IOVA, 0x5000, 0x5000, 4000));
	ASSERT_EQ(0, ioctl(self->s.mem.fd, VFIO_DEVICE_RESET)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, edu_user_dma(&self->edu, EDU_BUF, IOVA + 0x30000, 4000, true));
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
	ret = map_file(&self->s, again);
	ASSERT_EQ(0, ret) TH_LOG("IOMMU_IOAS_MAP_FILE after the reset: %s", strerror(-ret));
	ASSERT_EQ(0, edu_copy(self, again, 0x6000, 0x31000, 4000));
	memcpy(self->s.want + 0x31000, self->s.want + 0x6000, 4000);
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
}

/*
 * Closing the device revokes the dma-buf the user still holds: edu's
 * write through the IOVA lands nowhere, and the dma-buf can be mapped no
 * more (ENODEV).
 */
TEST_F_TIMEOUT(iommufd, close_unmaps_the_dmabuf, 120)
{
	ASSERT_EQ(0, edu_copy(self, IOVA, 0x7000, 0x7000, 4000));
	side_close_mem(&self->s);
	ASSERT_EQ(0, edu_user_dma(&self->edu, EDU_BUF, IOVA + 0x32000, 4000, true));
	EXPECT_EQ(-ENODEV, map_file(&self->s, IOVA + 0x10000000ULL));
	ASSERT_EQ(0, side_reopen_mem(&self->s));
	EXPECT_EQ(-1, differs(self->s.bar, self->s.want)) TH_LOG("seed %u", self->s.seed);
}

TEST_HARNESS_MAIN
