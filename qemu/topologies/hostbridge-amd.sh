# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, ivshmem, cpu, guest_env,
# kernel_arg and scenario.
# The hostbridge topology with an AMD Zen guest CPU, whose root complex
# routes P2P between host bridges: the same paths are allowed. Plus an
# ivshmem-plain device (256 MiB BAR 2) on a root port of its own, which the
# guest binds to p2pmem-bar: both NVMe reach it through the host bridge.
# And an NVMe alone below a third host bridge, which tests/machines denies
# at boot (pci_p2pdma.host_bridges=deny:0000:40): the route to it is the
# one a boot-time rule refuses.
#
#  pcie.0 --+-- p2pY (CMB)
#           +-- pxb1 (root bus 0x80) -- rp9 -- p2pX (CMB, the P2P memory)
#           +-- rp10 -- ivhb (ivshmem, 256 MiB BAR 2)
#           +-- pxb2 (root bus 0x40) -- rp12 -- p2pZ (denied at boot)
hb_cpu=EPYC,vendor=AuthenticAMD hb_name=hostbridge_amd hb_expect=through-host-bridge hb_dist=2051
# shellcheck source=qemu/topologies/hostbridge.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostbridge.sh"
dev pcie-root-port,id=rp10,bus=pcie.0,chassis=10,slot=10,addr=0xa
ivshmem ivhb rp10 256M
dev pxb-pcie,id=pxb2,bus_nr=0x40,bus=pcie.0
dev pcie-root-port,id=rp12,bus=pxb2,chassis=12,slot=0
nvme p2pZ rp12
guest_env P2P_BOOT_DENIED=p2pZ
guest_env P2P_IVSHMEM=1af4:1110
guest_env P2P_IVSHMEM_SCN=hostbridge_amd_ivshmem,p2pX,p2pY,through-host-bridge,through-host-bridge
# A 256 MiB ivshmem: too small for the 1 GiB case (switch has 1 GiB).
expect_skip 'hostbridge_amd_ivshmem/p2pdma_test_ivshmem: p2pmem.one_gib_*'
expect_skip 'hostbridge_amd_ivshmem/p2pmem_unbind_ivshmem: p2pmem.one_gib_*'
