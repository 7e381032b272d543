# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# An emulated Intel IOMMU translating every DMA, with NVMe on two root
# ports and an AMD Zen guest CPU: P2P goes through the host bridge and
# dma-iommu maps it to real IOVAs. (Linux asks for ACS on every port here.)
# A second pair below one PCIe switch, whose downstream ports have no ACS:
# a bus-address route, for which dma-iommu hands the client the BAR's bus
# address. QEMU routes no peer traffic, so that DMA faults in the IOMMU
# (iommu_bus_address.sh checks exactly that). QEMU's edu DMA engine on a
# root port of its own reaches p2pI1's CMB through the host bridge, by
# IOVA (p2pmem_edu). An ivshmem-plain on a root port of its own is the BAR
# vfio-pci exports as a dma-buf (7.3, vfio_dmabuf): edu DMAs into it by
# the test importer's mapping and by iommufd's.
#
#  intel-iommu
#  pcie.0 --+-- rp7 -- p2pI1 (CMB, the P2P memory)
#           +-- rp8 -- p2pI2
#           +-- rp11 -- up11 (switch) --+-- dn111 -- p2pJ1 (CMB, the P2P memory)
#                                       +-- dn112 -- p2pJ2
#           +-- rp12 -- edu (DMA engine, 64-bit mask)
#           +-- rp13 -- vfio0 (ivshmem-plain, 4 MiB BAR 2)
cpu EPYC,vendor=AuthenticAMD
dev intel-iommu,intremap=off
dev pcie-root-port,id=rp7,bus=pcie.0,chassis=7,slot=7,addr=0x8
dev pcie-root-port,id=rp8,bus=pcie.0,chassis=8,slot=8,addr=0x9
nvme p2pI1 rp7 64
nvme p2pI2 rp8
dev pcie-root-port,id=rp11,bus=pcie.0,chassis=40,slot=11,addr=0xb
dev x3130-upstream,id=up11,bus=rp11
dev xio3130-downstream,id=dn111,bus=up11,chassis=41,slot=0
dev xio3130-downstream,id=dn112,bus=up11,chassis=42,slot=1
nvme p2pJ1 dn111 64
nvme p2pJ2 dn112
dev pcie-root-port,id=rp12,bus=pcie.0,chassis=43,slot=12,addr=0xc
dev edu,bus=rp12,dma_mask=0xffffffffffffffff
guest_env P2P_EDU_SCN=iommu_edu,p2pI1,through-host-bridge
guest_env P2P_EDU_IOMMU=1
dev pcie-root-port,id=rp13,bus=pcie.0,chassis=44,slot=13,addr=0xd
ivshmem vfio0 rp13 4M
guest_env P2P_VFIO_SCN=iommu_vfio
# No interrupt remapping here (intremap=off), so the platform cannot
# isolate a device's MSIs: iommufd and vfio's type1 refuse to bind a
# device (EPERM) unless told, as their parameters document, to allow it.
kernel_arg iommufd.allow_unsafe_interrupts=1
kernel_arg vfio_iommu_type1.allow_unsafe_interrupts=1
kernel_arg intel_iommu=on
guest_env P2P_EXPECT_IOMMU=p2pI1,p2pI2
# The switch pair's suite: name, provider, client and their distance.
guest_env P2P_IOMMU_BUS=iommu_switch,p2pJ1,p2pJ2,4
scenario iommu p2pI2 p2pI1 p2pI2 through-host-bridge through-host-bridge 1028 1028
# A 64 MiB CMB: too small for the 1 GiB case.
expect_skip 'iommu/p2pdma_test: p2pmem.one_gib_*'
expect_skip 'iommu/p2pmem_unbind: p2pmem.one_gib_*'
# The route to edu is not refused here.
expect_skip 'iommu_edu/p2pmem_edu: edu.refused_route_attach_is_eremoteio_with_reason'
