/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Test-only interface of the HMM P2P test owner and mirror client
 * (hmm-p2p-owner.c, hmm-p2p-mirror.c, CONFIG_PCI_P2PDMA_TEST_HMM): ioctls on
 * /sys/kernel/debug/hmm-p2p/ctl, used by the selftest
 * tools/testing/selftests/p2pdma/hmm_p2p.c. Not a uAPI: it changes with
 * the tests, and no release kernel has it.
 *
 * The owner (a PCI driver, "hmm-p2p-owner", bound to an ivshmem device by
 * driver_override) plays a GPU: it migrates a process range into
 * device-private memory, each page backed by one page of its BAR, which it
 * registered as P2P memory. The mirror client (the calling file) plays an
 * RDMA NIC with on-demand paging: it mirrors a range with
 * hmm_range_fault(), maps it for QEMU's edu DMA engine with the DMA API
 * and has edu copy through exactly those DMA addresses.
 */
#ifndef _HMM_P2P_TEST_H
#define _HMM_P2P_TEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct hmmp2p_range - a range of the caller's address space
 * @addr: start, page aligned
 * @len: bytes, page aligned, at most HMMP2P_MAX_PAGES pages
 * @flags: HMMP2P_MIRROR_* (HMMP2P_IOC_MIRROR only)
 * @pages: out: pages migrated (MIGRATE) or mirrored (MIRROR)
 * @p2p: out: pages mirrored as the owner's P2P pages (HMM_PFN_P2P)
 * @bus: out: of those, mapped as PCI bus addresses
 * @fallback: out: P2P pages the route refused, mirrored again from RAM
 * @pad: 0
 */
struct hmmp2p_range {
	__u64 addr;
	__u64 len;
	__u32 flags;
	__u32 pages;
	__u32 p2p;
	__u32 bus;
	__u32 fallback;
	__u32 pad;
};

#define HMMP2P_MAX_PAGES	64
/* Ask hmm_range_fault() for P2P pages (HMM_PFN_REQ_P2P). */
#define HMMP2P_MIRROR_P2P	0x1
/*
 * Sleep HMMP2P_WINDOW_MS between the first fault and the map: a window in
 * which a test unbinds the owner.
 */
#define HMMP2P_MIRROR_WINDOW	0x2
#define HMMP2P_WINDOW_MS	5000

/**
 * struct hmmp2p_dma - HMMP2P_IOC_DMA: edu copies through the mirror
 * @offset: bytes into the mirrored range
 * @len: bytes, at most 2048, within one page
 * @to_mem: 1: from @buf to the memory; 0: from the memory to @buf
 * @buf: the caller's buffer of @len bytes
 * @dma: out: the DMA address edu used for the memory
 */
struct hmmp2p_dma {
	__u64 offset;
	__u32 len;
	__u32 to_mem;
	__u64 buf;
	__u64 dma;
};

/**
 * struct hmmp2p_stats - counters since the owner was bound
 * @to_ram: migrate_to_ram() calls (CPU faults on device-private pages)
 * @evicted: pages migrated back to RAM by the owner's unbind
 * @in_use: device-private pages that hold data now
 * @invalidations: of this file's mirror, while it held DMA mappings
 * @mapped: pages this file's mirror has mapped now
 * @pad: 0
 */
struct hmmp2p_stats {
	__u32 to_ram;
	__u32 evicted;
	__u32 in_use;
	__u32 invalidations;
	__u32 mapped;
	__u32 pad;
};

#define HMMP2P_IOC_MIGRATE	_IOWR('H', 0x70, struct hmmp2p_range)
#define HMMP2P_IOC_MIRROR	_IOWR('H', 0x71, struct hmmp2p_range)
#define HMMP2P_IOC_DMA		_IOWR('H', 0x72, struct hmmp2p_dma)
#define HMMP2P_IOC_STATS	_IOR('H', 0x73, struct hmmp2p_stats)
#define HMMP2P_IOC_UNMIRROR	_IO('H', 0x74)

#endif /* _HMM_P2P_TEST_H */
