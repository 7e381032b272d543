# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu and guest_env.
# An NVMe with a CMB behind a second host bridge (pxb-pcie, root bus 0x80)
# and one on pcie.0. Every P2P path between them crosses the host bridges:
# refused on an Intel guest CPU with the q35 host bridge, allowed on AMD Zen.
#
#  pcie.0 --+-- p2pY (CMB)
#           +-- pxb1 (root bus 0x80) -- rp9 -- p2pX (CMB, the P2P memory)
dev pxb-pcie,id=pxb1,bus_nr=0x80,bus=pcie.0
dev pcie-root-port,id=rp9,bus=pxb1,chassis=9,slot=0
nvme p2pX rp9 64
nvme p2pY pcie.0 64
guest_env P2P_SRC=p2pY
guest_env P2P_MEM=p2pX
guest_env P2P_DST=p2pY
guest_env P2P_EXPECT_SRC=refused
guest_env P2P_EXPECT_DST=refused
