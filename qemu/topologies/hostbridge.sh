# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# An NVMe with a CMB behind a second host bridge (pxb-pcie, root bus 0x80)
# and one on pcie.0. Every P2P path between them crosses the host bridges:
# refused with the default CPU (AMD family 0xf, not Zen) and the q35 host
# bridge, allowed on AMD Zen (hostbridge-amd.sh sets hb_cpu and hb_expect).
# QEMU's edu DMA engine on pcie.0 is an importer of p2pX's memory across
# the same host bridges (p2pmem_edu): refused at attach here, a normal
# mapping through the host bridge on AMD Zen.
#
#  pcie.0 --+-- p2pY (CMB)
#           +-- edu (DMA engine, 64-bit mask)
#           +-- pxb1 (root bus 0x80) -- rp9 -- p2pX (CMB, the P2P memory)
[ -n "${hb_cpu:-}" ] && cpu "$hb_cpu"
dev pxb-pcie,id=pxb1,bus_nr=0x80,bus=pcie.0
dev pcie-root-port,id=rp9,bus=pxb1,chassis=9,slot=0
nvme p2pX rp9 64
nvme p2pY pcie.0 64
# Through the host bridges: p2pX is 1 link below pxb1, p2pY on pcie.0
# itself, 1 link up into each host bridge, 1024 for each of the two.
scenario "${hb_name:-hostbridge}" p2pY p2pX p2pY "${hb_expect:-refused}" "${hb_expect:-refused}" \
	"${hb_dist:--}" "${hb_dist:--}"
dev edu,bus=pcie.0,dma_mask=0xffffffffffffffff
# Device-private memory backed by the machine's one ivshmem (kunit.sh's on
# the intel machine, hostbridge-amd.sh's own), each on a root port of
# pcie.0: edu reaches it through the host bridge, or not at all
# (tools/testing/selftests/p2pdma/hmm_p2p.c).
guest_env P2P_HMM_SCN="${hb_name:-hostbridge}_hmm,${hb_expect:-refused}"
# Where the route is refused the mirror falls back to RAM: nothing is left
# in device memory for a CPU touch or the owner's unbind to move.
if [ "${hb_expect:-refused}" = refused ]; then
	expect_skip "${hb_name:-hostbridge}_hmm/hmm_p2p: hmm.cpu_touch_drops_mirror_before_page_moves"
	expect_skip "${hb_name:-hostbridge}_hmm/hmm_p2p: hmm.owner_unbind_while_mirrored_migrates_back"
fi
guest_env P2P_EDU_SCN="${hb_name:-hostbridge}_edu,p2pX,${hb_expect:-refused}"
# No IOMMU translates edu's DMA here; where the route is refused, nothing
# maps, and where it is not, nothing refuses.
expect_skip "${hb_name:-hostbridge}_edu/p2pmem_edu: edu.to_device_mapping_is_read_only_under_iommu"
if [ "${hb_expect:-refused}" = refused ]; then
	expect_skip "${hb_name:-hostbridge}_edu/p2pmem_edu: edu.dma_with_exported_addresses_moves_the_bytes"
else
	expect_skip "${hb_name:-hostbridge}_edu/p2pmem_edu: edu.refused_route_attach_is_eremoteio_with_reason"
fi
