# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# Two functions of one multi-function NVMe device below a root port whose
# ACS is left off: they reach each other by bus address, distance 2.
#
#  pcie.0 -- rp3 (00:06.0) --+-- 00.0 p2pF0 (CMB, the P2P memory)
#                            +-- 00.1 p2pF1
dev pcie-root-port,id=rp3,bus=pcie.0,chassis=5,slot=3,addr=0x6
nvme p2pF0 rp3 64 addr=00.0,multifunction=on
nvme p2pF1 rp3 "" addr=00.1
scenario mfd p2pF1 p2pF0 p2pF1 bus-address bus-address 2 2
