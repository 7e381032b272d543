/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Test-only interface of the P2PDMA test importer (p2pdma-importer.c,
 * CONFIG_PCI_P2PDMA_TEST_IMPORTER): ioctls on
 * /sys/kernel/debug/p2pdma-importer/ctl, used by the selftests
 * tools/testing/selftests/p2pdma/ (p2pmem_import.c, p2pmem_edu.c,
 * vfio_dmabuf.c and others). Not a uAPI: it changes
 * with the tests, and no release kernel has it.
 *
 * Handles name attachments of the open file that made them; closing the
 * file detaches them all. A PCI function is named by domain, bus and devfn
 * ((device << 3) | function).
 */
#ifndef _P2PDMA_IMPORTER_H
#define _P2PDMA_IMPORTER_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The importer's ops say allow_peer2peer = false (attach must fail). */
#define P2PIMP_ATTACH_NO_P2P	0x1
/* move_notify is counted but ignored: the mapping stays (a buggy importer). */
#define P2PIMP_ATTACH_BUGGY	0x2
/* Map for DMA_TO_DEVICE only (the device may read, not write), not both ways. */
#define P2PIMP_ATTACH_TO_DEVICE	0x4
/*
 * RDMA's pinned memory region, which cannot be revoked: no invalidation
 * callback (6.12: a move_notify that is ignored), and dma_buf_pin() at
 * attach. The attach fails with the error of either.
 */
#define P2PIMP_ATTACH_PINNED	0x8

/**
 * struct p2pimp_attach - P2PIMP_IOC_ATTACH: dma_buf_dynamic_attach()
 * @fd: the dma-buf's file descriptor
 * @domain: PCI domain of the importer's device
 * @bus: bus number of the importer's device
 * @devfn: device and function of the importer's device
 * @flags: P2PIMP_ATTACH_*
 * @handle: out: the attachment, for the other ioctls
 */
struct p2pimp_attach {
	__s32 fd;
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u32 flags;
	__u32 handle;
};

#define P2PIMP_MAX_SEGS		16

/**
 * struct p2pimp_seg - one DMA segment of a mapping
 * @dma: its DMA address, as the importer's device sees it
 * @phys: CPU physical address of the pages behind it (sg_phys()); 0 where
 *	the exporter has no pages (vfio-pci's BAR)
 * @len: bytes
 * @bus: 1 if sg_dma_is_bus_address(): a PCI bus address, not mapped
 */
struct p2pimp_seg {
	__u64 dma;
	__u64 phys;
	__u32 len;
	__u32 bus;
};

/**
 * struct p2pimp_map - P2PIMP_IOC_MAP: dma_buf_map_attachment(), for DMA both
 * ways unless the attach asked for P2PIMP_ATTACH_TO_DEVICE
 * @handle: the attachment
 * @nents: out: DMA segments of the mapping (the first P2PIMP_MAX_SEGS in @segs)
 * @segs: out: the segments
 *
 * The ioctl fails with the error of dma_buf_map_attachment(), or -EBUSY if
 * the attachment is mapped already.
 */
struct p2pimp_map {
	__u32 handle;
	__u32 nents;
	struct p2pimp_seg segs[P2PIMP_MAX_SEGS];
};

/**
 * struct p2pimp_status - P2PIMP_IOC_STATUS
 * @handle: the attachment
 * @moves: out: move_notify calls so far
 * @mapped: out: 1 while the importer holds a mapping
 * @pad: unused
 * @moved_ns: out: CLOCK_MONOTONIC time of the first move_notify call, in ns
 */
struct p2pimp_status {
	__u32 handle;
	__u32 moves;
	__u32 mapped;
	__u32 pad;
	__u64 moved_ns;
};

/**
 * struct p2pimp_io - P2PIMP_IOC_IO: a block device reads into the buffer
 * @handle: a mapped attachment that was never told to move
 * @sector: first 512-byte sector of the device to read
 * @offset: byte offset in the dma-buf, a multiple of 512
 * @len: bytes, a non-zero multiple of 512
 * @path: the block device, e.g. /dev/nvme0n1 (NUL-terminated)
 *
 * The device DMAs into the buffer through its driver's own mapping of the
 * buffer's pages (for nvme-pci, pci_p2pdma_map_segment() decides). Fails
 * with -ENODEV once the attachment was told to move, -EINVAL for a range
 * outside the buffer or a buffer without pages, or the error of the read.
 */
struct p2pimp_io {
	__u32 handle;
	__u32 len;
	__u64 sector;
	__u64 offset;
	char path[64];
};

/**
 * struct p2pimp_read - P2PIMP_IOC_READ: the CPU reads the buffer's bytes
 * @handle: a mapped attachment that was never told to move, of a buffer
 *	with pages (-EINVAL otherwise)
 * @len: bytes, at most 1 MiB
 * @offset: byte offset in the dma-buf
 * @data: user pointer to @len bytes
 */
struct p2pimp_read {
	__u32 handle;
	__u32 len;
	__u64 offset;
	__u64 data;
};

/**
 * struct p2pimp_edu - P2PIMP_IOC_EDU: the attachment's device, a QEMU edu
 * (1234:11e8, a DMA engine with a 4 KiB buffer), DMAs with the DMA
 * address its mapping gave for @offset: the exporter's own address, as
 * hardware gets it
 * @handle: a mapped attachment that was never told to move, for an edu
 * @to_buffer: 0: edu reads @len bytes of the dma-buf into its buffer;
 *	1: edu writes the first @len bytes of its buffer into the dma-buf
 * @len: bytes, 1 to 4095, within one DMA segment of the mapping
 * @pad: 0
 * @offset: byte offset in the dma-buf
 * @dma: out: the DMA address edu was given
 * The reservation lock is held until edu has finished, so a move_notify
 * waits for the DMA. Fails with -ENODEV once told to move, -EINVAL for a
 * device that is not an edu or a range it cannot do, -ETIMEDOUT if edu
 * did not finish within 5 s.
 */
struct p2pimp_edu {
	__u32 handle;
	__u32 to_buffer;
	__u32 len;
	__u32 pad;
	__u64 offset;
	__u64 dma;
};

/**
 * struct p2pimp_iova - P2PIMP_IOC_IOVA: what an IOVA of a PCI function
 * translates to now, in its IOMMU domain (iommu_iova_to_phys())
 * @domain: PCI domain of the function
 * @bus: its bus number
 * @devfn: its device and function
 * @pad: 0
 * @dma: the IOVA, e.g. a segment of a mapping since unmapped
 * @phys: out: the CPU physical address it translates to, 0 if none
 *
 * Fails with -ENODEV for a function that does not exist or whose DMA is
 * not translated (no IOMMU, or an identity domain).
 */
struct p2pimp_iova {
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u32 pad;
	__u64 dma;
	__u64 phys;
};

#define P2PIMP_IOC_MAGIC	0xBA
#define P2PIMP_IOC_ATTACH	_IOWR(P2PIMP_IOC_MAGIC, 1, struct p2pimp_attach)
#define P2PIMP_IOC_MAP		_IOWR(P2PIMP_IOC_MAGIC, 2, struct p2pimp_map)
#define P2PIMP_IOC_STATUS	_IOWR(P2PIMP_IOC_MAGIC, 3, struct p2pimp_status)
#define P2PIMP_IOC_IO		_IOW(P2PIMP_IOC_MAGIC, 4, struct p2pimp_io)
#define P2PIMP_IOC_READ		_IOW(P2PIMP_IOC_MAGIC, 5, struct p2pimp_read)
/* Argument: the handle. The importer unmaps first if it still maps. */
#define P2PIMP_IOC_DETACH	_IO(P2PIMP_IOC_MAGIC, 6)
#define P2PIMP_IOC_EDU		_IOWR(P2PIMP_IOC_MAGIC, 7, struct p2pimp_edu)
#define P2PIMP_IOC_IOVA		_IOWR(P2PIMP_IOC_MAGIC, 8, struct p2pimp_iova)

#endif /* _P2PDMA_IMPORTER_H */
