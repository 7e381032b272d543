/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of p2pdma_test.c and p2pmem_unbind.c: one provider's
 * p2pmem/allocate open for the case, the NVMe devices of the topology
 * (see p2pdma_test.c for the environment), and what both programs use
 * besides p2pdma_util.h. Include after kselftest_harness.h.
 */
#ifndef P2PMEM_FIXTURE_H
#define P2PMEM_FIXTURE_H

#define MIB		(1024UL * 1024)
#define DISK_OFF	(48 * MIB)	/* region of the disks these tests use */
#define GIB		(1024 * MIB)

#include "p2pdma_util.h"

FIXTURE(p2pmem) {
	struct nvme_dev mem, src, dst;
	bool have_src, have_dst;
	char path[256];
	long long size, avail;
	int fd;
};

FIXTURE_SETUP(p2pmem)
{
	const char *bdf = getenv("P2P_MEM_BDF");

	self->fd = -1;
	if (bdf && *bdf) {
		/* A provider that is not an NVMe: no namespace of its own. */
		snprintf(self->mem.bdf, sizeof(self->mem.bdf), "%s", bdf);
		self->mem.blk[0] = '\0';
	} else if (find_nvme(getenv("P2P_MEM"), &self->mem)) {
		SKIP(return, "no NVMe with serial P2P_MEM=%s", getenv("P2P_MEM") ?: "(unset)");
	}
	if (remember_driver(self->mem.bdf))
		SKIP(return, "%s is bound to no driver", self->mem.bdf);
	self->have_src = !find_nvme(getenv("P2P_SRC"), &self->src);
	self->have_dst = !find_nvme(getenv("P2P_DST"), &self->dst);
	self->size = read_ull(P2PMEM "size", self->mem.bdf);
	self->avail = available(self->mem.bdf);
	if (self->size <= 0)
		SKIP(return, "%s has no P2P memory", self->mem.bdf);
	snprintf(self->path, sizeof(self->path), P2PMEM "allocate", self->mem.bdf);
	self->fd = open(self->path, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", self->path, strerror(errno));
}

FIXTURE_TEARDOWN(p2pmem)
{
	if (self->fd >= 0)
		close(self->fd);
}

static inline void *map_p2p(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

/* A scenario's expected map type ("bus-address" unless the topology says). */
static inline const char *expect_map(const char *var)
{
	return getenv(var) ?: "bus-address";
}

#endif /* P2PMEM_FIXTURE_H */
