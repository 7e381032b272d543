# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu and guest_env.
# An emulated Intel IOMMU translating every DMA, with NVMe on two root
# ports and an AMD Zen guest CPU: P2P goes through the host bridge and
# dma-iommu maps it to real IOVAs.
#
#  intel-iommu
#  pcie.0 --+-- rp1 -- p2pI1 (CMB, the P2P memory)
#           +-- rp2 -- p2pI2
cpu EPYC,vendor=AuthenticAMD
dev intel-iommu,intremap=off
dev pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x4
dev pcie-root-port,id=rp2,bus=pcie.0,chassis=2,slot=2,addr=0x5
nvme p2pI1 rp1 64
nvme p2pI2 rp2
guest_env intel_iommu=on
guest_env P2P_SRC=p2pI2
guest_env P2P_MEM=p2pI1
guest_env P2P_DST=p2pI2
guest_env P2P_EXPECT_SRC=through-host-bridge
guest_env P2P_EXPECT_DST=through-host-bridge
