// SPDX-License-Identifier: GPL-2.0
/*
 * Device-private memory that peers reach: HMM P2P (the mm patch of the
 * series) end to end, with the test owner and mirror client
 * (drivers/pci/p2pdma/tests/hmm-p2p-*.c, /sys/kernel/debug/hmm-p2p/ctl).
 * The machine's ivshmem (1af4:1110) is bound to the owner, which migrates
 * a process range into device-private pages backed by its BAR; the
 * mirror client maps the range for QEMU's edu DMA engine and edu copies
 * through exactly the DMA addresses the mapping gave.
 *
 *   - with HMM_PFN_REQ_P2P, where the route allows it: edu reads the
 *     bytes from the BAR (compared), the pages stay device-private
 *     (migrate_to_ram 0 times); edu writes, and after the CPU faults the
 *     pages back the process reads edu's bytes;
 *   - without the flag: 6.12's behaviour, migration to RAM, then DMA from
 *     RAM; where the route refuses the BAR, the same with the flag, and no
 *     error for the process;
 *   - a CPU touch fires the mirror's notifier, which drops the mapping
 *     before the page moves (the next DMA fails with EAGAIN); munmap()
 *     while mirrored; the owner's unbind while mirrored migrates every
 *     page back to RAM first: no byte lost, nothing left in device memory;
 *     an unbind between the mirror's fault and its map: it maps RAM.
 *
 * Environment (the topology): P2P_HMM_SCN=name,route where route is
 * "bus-address", "through-host-bridge" or "refused" (from the ivshmem to
 * edu).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drivers/pci/p2pdma/tests/hmm_p2p_test.h>

#include "../kselftest_harness.h"

#include "p2pdma_util.h"

#define CTL		"/sys/kernel/debug/hmm-p2p/ctl"
#define OWNER		"hmm-p2p-owner"
#define PAGES		4
#define LEN		(PAGES * 4096UL)
#define CHUNK		2048

FIXTURE(hmm) {
	char bdf[256];		/* the ivshmem */
	char route[32];		/* expected route from it to edu */
	char before[64];	/* its driver before the case, or "" */
	int ctl;
	unsigned char *buf;	/* the process range */
	unsigned int seed;
};

/* Bind @bdf to @drv with driver_override and drivers_probe. */
static int bind_to(const char *bdf, const char *drv)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", bdf);
	if (write_file(path, drv))
		return -1;
	if (write_file("/sys/bus/pci/drivers_probe", bdf))
		return -1;
	return remember_driver(bdf) || strcmp(provider_drv, drv) ? -1 : 0;
}

/* Unbind @bdf from whatever driver it has; 0 if it has none after. */
static int unbind(const char *bdf)
{
	if (remember_driver(bdf))
		return 0;	/* no driver */
	return set_bound(bdf, false);
}

FIXTURE_SETUP(hmm)
{
	const char *scn = getenv("P2P_HMM_SCN");
	const char *comma = scn ? strchr(scn, ',') : NULL;

	if (!comma)
		SKIP(return, "P2P_HMM_SCN is not set");
	snprintf(self->route, sizeof(self->route), "%s", comma + 1);
	ASSERT_EQ(find_pci("0x1af4 0x1110", self->bdf, sizeof(self->bdf)), 0);
	self->before[0] = 0;
	if (!remember_driver(self->bdf))
		snprintf(self->before, sizeof(self->before), "%s", provider_drv);
	ASSERT_EQ(unbind(self->bdf), 0);
	ASSERT_EQ(bind_to(self->bdf, OWNER), 0) TH_LOG("cannot bind %s to %s", self->bdf, OWNER);
	self->ctl = open(CTL, O_RDWR);
	ASSERT_GE(self->ctl, 0) TH_LOG("%s: %s", CTL, strerror(errno));
	self->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(self->buf, MAP_FAILED);
	self->seed = time(NULL);
	fill(self->buf, LEN, self->seed);
	TH_LOG("ivshmem %s, route to edu %s, seed %u", self->bdf, self->route, self->seed);
}

FIXTURE_TEARDOWN(hmm)
{
	char path[PATH_MAX];

	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, LEN);
	if (self->ctl > 0)
		close(self->ctl);
	if (!self->bdf[0])
		return;
	unbind(self->bdf);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", self->bdf);
	write_file(path, self->before[0] ? self->before : "\n");
	if (self->before[0])
		write_file("/sys/bus/pci/drivers_probe", self->bdf);
	write_file(path, "\n");
}

static struct hmmp2p_range range_of(void *addr, unsigned int flags)
{
	struct hmmp2p_range r = { .addr = (uintptr_t)addr, .len = LEN, .flags = flags };

	return r;
}

static struct hmmp2p_stats stats(int ctl)
{
	struct hmmp2p_stats s = {};

	ioctl(ctl, HMMP2P_IOC_STATS, &s);
	return s;
}

/* edu copies all of the mirrored range into @out; 0 or -errno. */
static int edu_read(int ctl, unsigned char *out)
{
	struct hmmp2p_dma d = { .len = CHUNK };
	unsigned long off;

	for (off = 0; off < LEN; off += CHUNK) {
		d.offset = off;
		d.to_mem = 0;
		d.buf = (uintptr_t)(out + off);
		if (ioctl(ctl, HMMP2P_IOC_DMA, &d))
			return -errno;
	}
	return 0;
}

/* edu copies @in over all of the mirrored range; 0 or -errno. */
static int edu_write(int ctl, const unsigned char *in)
{
	struct hmmp2p_dma d = { .len = CHUNK, .to_mem = 1 };
	unsigned long off;

	for (off = 0; off < LEN; off += CHUNK) {
		d.offset = off;
		d.buf = (uintptr_t)(in + off);
		if (ioctl(ctl, HMMP2P_IOC_DMA, &d))
			return -errno;
	}
	return 0;
}

static void migrate_all(struct __test_metadata *_metadata, int ctl, unsigned char *buf)
{
	struct hmmp2p_range r = range_of(buf, 0);

	ASSERT_EQ(ioctl(ctl, HMMP2P_IOC_MIGRATE, &r), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(r.pages, PAGES);
	ASSERT_EQ(stats(ctl).in_use, PAGES);
}

/*
 * The flag: P2P pages where the route allows them, edu reads the BAR's
 * bytes, nothing migrates; edu's writes are what the CPU reads after it
 * faults the pages back. Where the route refuses: the fallback, no error.
 */
TEST_F(hmm, mirror_with_flag_dmas_device_memory)
{
	unsigned char got[LEN], mine[LEN];
	struct hmmp2p_range r = range_of(self->buf, HMMP2P_MIRROR_P2P);
	bool refused = !strcmp(self->route, "refused");
	struct hmmp2p_stats s;

	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(r.pages, PAGES);
	EXPECT_EQ(r.p2p, refused ? 0 : PAGES);
	EXPECT_EQ(r.fallback, refused ? PAGES : 0);
	EXPECT_EQ(r.bus, strcmp(self->route, "bus-address") ? 0 : PAGES);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(edu_read(self->ctl, got), 0);
	EXPECT_EQ(mismatch(got, LEN, self->seed), -1);
	s = stats(self->ctl);
	EXPECT_EQ(s.to_ram, refused ? PAGES : 0);
	EXPECT_EQ(s.in_use, refused ? 0 : PAGES);

	fill(mine, LEN, self->seed + 1);
	ASSERT_EQ(edu_write(self->ctl, mine), 0);
	/* The CPU reads: device-private pages fault back to RAM. */
	EXPECT_EQ(memcmp(self->buf, mine, LEN), 0);
	s = stats(self->ctl);
	EXPECT_EQ(s.to_ram, PAGES);
	EXPECT_EQ(s.in_use, 0);
}

/* Without the flag: 6.12's behaviour, migration, then DMA from RAM. */
TEST_F(hmm, mirror_without_flag_migrates_to_ram)
{
	struct hmmp2p_range r = range_of(self->buf, 0);
	unsigned char got[LEN];
	struct hmmp2p_stats s;

	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(r.p2p, 0);
	EXPECT_EQ(r.fallback, 0);
	EXPECT_EQ(r.bus, 0);
	s = stats(self->ctl);
	EXPECT_EQ(s.to_ram, PAGES);
	EXPECT_EQ(s.in_use, 0);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(edu_read(self->ctl, got), 0);
	EXPECT_EQ(mismatch(got, LEN, self->seed), -1);
}

/*
 * A CPU touch of one mirrored page: the notifier drops the mapping before
 * the page moves, so the next DMA is refused (EAGAIN) until the range is
 * mirrored again; the process reads its bytes.
 */
TEST_F(hmm, cpu_touch_drops_mirror_before_page_moves)
{
	struct hmmp2p_range r = range_of(self->buf, HMMP2P_MIRROR_P2P);
	unsigned char got[LEN];
	struct hmmp2p_stats s;

	if (!strcmp(self->route, "refused"))
		SKIP(return, "the route is refused: the mirror is of RAM, nothing moves");
	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0);
	EXPECT_EQ(stats(self->ctl).mapped, PAGES);
	/* One byte of page 1, read by the CPU. */
	EXPECT_EQ(self->buf[4096 + 5], pat(4096 + 5, self->seed));
	s = stats(self->ctl);
	EXPECT_GE(s.invalidations, 1);
	EXPECT_EQ(s.mapped, 0);
	EXPECT_EQ(edu_read(self->ctl, got), -EAGAIN);
	/* Mirrored again, every byte is there. */
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(edu_read(self->ctl, got), 0);
	EXPECT_EQ(mismatch(got, LEN, self->seed), -1);
}

/* munmap() while mirrored: the mapping goes, and the device memory. */
TEST_F(hmm, munmap_while_mirrored)
{
	struct hmmp2p_range r = range_of(self->buf, HMMP2P_MIRROR_P2P);
	unsigned char got[CHUNK];
	struct hmmp2p_stats s;

	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0);
	ASSERT_EQ(munmap(self->buf, LEN), 0);
	self->buf = NULL;
	s = stats(self->ctl);
	EXPECT_GE(s.invalidations, 1);
	EXPECT_EQ(s.mapped, 0);
	EXPECT_EQ(s.in_use, 0);
	EXPECT_EQ(edu_read(self->ctl, got), -EAGAIN);
}

/*
 * The owner (the provider) unbinds while the range is mirrored: every
 * page migrates back to RAM first, the mirror is dropped, no byte is lost.
 */
TEST_F(hmm, owner_unbind_while_mirrored_migrates_back)
{
	struct hmmp2p_range r = range_of(self->buf, HMMP2P_MIRROR_P2P);
	unsigned char got[LEN];
	struct hmmp2p_stats s;

	if (!strcmp(self->route, "refused"))
		SKIP(return, "the route is refused: the mirror is of RAM already");
	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(ioctl(self->ctl, HMMP2P_IOC_MIRROR, &r), 0);
	ASSERT_EQ(remember_driver(self->bdf), 0);
	ASSERT_EQ(set_bound(self->bdf, false), 0);
	s = stats(self->ctl);
	EXPECT_GE(s.invalidations, 1);
	EXPECT_EQ(s.mapped, 0);
	EXPECT_EQ(edu_read(self->ctl, got), -EAGAIN);
	EXPECT_EQ(s.evicted, PAGES);
	EXPECT_EQ(s.to_ram, 0);
	EXPECT_EQ(s.in_use, 0);
	/* No owner: the process's bytes are in RAM. */
	EXPECT_EQ(mismatch(self->buf, LEN, self->seed), -1);
}

struct mirror_call {
	int ctl;
	struct hmmp2p_range r;
	int ret, err;
};

static void *mirror_thread(void *data)
{
	struct mirror_call *c = data;

	c->ret = ioctl(c->ctl, HMMP2P_IOC_MIRROR, &c->r);
	c->err = errno;
	return NULL;
}

/*
 * The owner unbinds between the mirror's fault and its map (a window the
 * mirror holds open, HMMP2P_MIRROR_WINDOW): the mirror sees the
 * invalidation under its lock before it maps anything, faults again and
 * maps the pages that are now in RAM; edu reads the process's bytes.
 * Mapping the P2P pages of the first fault would use the struct pages
 * the unbind freed (a kernel report). Whatever the route.
 */
TEST_F_TIMEOUT(hmm, owner_unbind_between_fault_and_map, 60)
{
	struct mirror_call c = {
		.ctl = self->ctl,
		.r = range_of(self->buf, HMMP2P_MIRROR_P2P | HMMP2P_MIRROR_WINDOW),
	};
	unsigned char got[LEN];
	double t0, took;
	pthread_t t;

	migrate_all(_metadata, self->ctl, self->buf);
	ASSERT_EQ(pthread_create(&t, NULL, mirror_thread, &c), 0);
	/* The first fault is done well within this; the window is 5 s. */
	sleep(1);
	t0 = now();
	ASSERT_EQ(remember_driver(self->bdf), 0);
	EXPECT_EQ(set_bound(self->bdf, false), 0);
	took = now() - t0;
	ASSERT_EQ(pthread_join(t, NULL), 0);
	/* An unbind that outlasted the window proves nothing either way. */
	ASSERT_GT(HMMP2P_WINDOW_MS / 1000.0 - 1.5, took) TH_LOG("unbind took %.1f s", took);
	ASSERT_EQ(c.ret, 0) TH_LOG("%s", strerror(c.err));
	EXPECT_EQ(c.r.pages, PAGES);
	EXPECT_EQ(c.r.p2p, 0);
	EXPECT_EQ(c.r.fallback, 0);
	EXPECT_EQ(stats(self->ctl).evicted, PAGES);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(edu_read(self->ctl, got), 0);
	EXPECT_EQ(mismatch(got, LEN, self->seed), -1);
}

TEST_HARNESS_MAIN
