# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu and guest_env.
# Two functions of one multi-function NVMe device below a root port: they
# reach each other by bus address, distance 2. (QEMU 7.2 root ports have no
# ACS capability, so no topology can switch ACS redirect on.)
#
#  pcie.0 -- rp1 --+-- 01:00.0 p2pF0 (CMB, the P2P memory)
#                  +-- 01:00.1 p2pF1
dev pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x4
nvme p2pF0 rp1 64 addr=00.0,multifunction=on
nvme p2pF1 rp1 "" addr=00.1
guest_env P2P_SRC=p2pF1
guest_env P2P_MEM=p2pF0
guest_env P2P_DST=p2pF1
guest_env P2P_EXPECT_SRC=bus-address
guest_env P2P_EXPECT_DST=bus-address
