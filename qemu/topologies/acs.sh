# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# The mfd shape below a root port with ACS P2P Request Redirect and
# Completion Redirect enabled by the kernel (pci=config_acs=, ACS flags
# bit 3 and bit 2; QEMU 10's pcie-root-port has the ACS capability). Peer
# requests must go up to the root complex, so the bus-address route becomes
# a route through the host bridge: refused with the default CPU and the q35
# host bridge, allowed on AMD Zen (acs-amd.sh).
#
#  pcie.0 -- rp4 (00:07.0, ACS RR+CR) --+-- 00.0 p2pG0 (CMB, the P2P memory)
#                                       +-- 00.1 p2pG1
[ -n "${acs_cpu:-}" ] && cpu "$acs_cpu"
dev pcie-root-port,id=rp4,bus=pcie.0,chassis=6,slot=4,addr=0x7
nvme p2pG0 rp4 64 addr=00.0,multifunction=on
nvme p2pG1 rp4 "" addr=00.1
kernel_arg "pci=config_acs=11xx@0000:00:07.0"
# Redirected up to the root complex: 1 link each to rp4, 1 each into the
# host bridge, 1024 for the one host bridge.
scenario "${acs_name:-acs}" p2pG1 p2pG0 p2pG1 "${acs_expect:-refused}" "${acs_expect:-refused}" \
	"${acs_dist:--}" "${acs_dist:--}"
