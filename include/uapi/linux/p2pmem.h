/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/p2pmem: PCI peer-to-peer memory exported to userspace as a dma-buf.
 *
 * Documentation/ABI/testing/dev-p2pmem and the "Exporting P2P memory as a
 * dma-buf" section of Documentation/driver-api/pci/p2pdma.rst.
 */
#ifndef _UAPI_LINUX_P2PMEM_H
#define _UAPI_LINUX_P2PMEM_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct p2pmem_export - argument of P2PMEM_IOC_EXPORT
 * @flags: must be 0
 * @domain: PCI domain (segment) of the provider
 * @bus: bus number of the provider
 * @devfn: device and function of the provider: (device << 3) | function
 * @size: bytes to export, a non-zero multiple of the page size
 * @fd: out: the dma-buf's file descriptor (O_RDWR, O_CLOEXEC)
 * @reserved: must be 0
 */
struct p2pmem_export {
	__u32 flags;
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u64 size;
	__s32 fd;
	__u32 reserved;
};

#define P2PMEM_IOC_MAGIC	0xB9
#define P2PMEM_IOC_EXPORT	_IOWR(P2PMEM_IOC_MAGIC, 0x00, struct p2pmem_export)

#endif /* _UAPI_LINUX_P2PMEM_H */
