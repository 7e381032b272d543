# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, ivshmem, cpu, guest_env,
# kernel_arg and scenario.
# Two NVMe controllers with a CMB below one PCIe switch (x3130), a third
# NVMe on another root port. p2pA reaches p2pB's CMB by bus address;
# p2pC has to go through the host bridge. An ivshmem-plain device below
# the same switch has 1 GiB of RAM-backed BAR: the guest binds p2pmem-bar
# to it, and p2pA and p2pB reach it by bus address too. QEMU's edu DMA
# engine below the switch reaches p2pB's CMB by bus address
# (p2pmem_edu).
#
#  pcie.0 -- rp1 -- up1 (switch) --+-- dn1 -- p2pA (CMB)
#        |                         +-- dn2 -- p2pB (CMB, the P2P memory)
#        |                         +-- dn3 -- ivsw (ivshmem, 1 GiB BAR 2)
#        |                         +-- dn4 -- edu (DMA engine, 64-bit mask)
#        +-- rp2 -- p2pC
dev pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x4
dev x3130-upstream,id=up1,bus=rp1
dev xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0
dev xio3130-downstream,id=dn2,bus=up1,chassis=3,slot=1
dev pcie-root-port,id=rp2,bus=pcie.0,chassis=4,slot=2,addr=0x5
nvme p2pA dn1 64
nvme p2pB dn2 64
nvme p2pC rp2
dev xio3130-downstream,id=dn3,bus=up1,chassis=30,slot=2
ivshmem ivsw dn3 1G
dev xio3130-downstream,id=dn4,bus=up1,chassis=31,slot=3
dev edu,bus=dn4,dma_mask=0xffffffffffffffff
guest_env P2P_EDU_SCN=switch_edu,p2pB,bus-address
# Device-private memory backed by ivsw, below the switch with edu
# (tools/testing/selftests/p2pdma/hmm_p2p.c): bus addresses.
guest_env P2P_HMM_SCN=switch_hmm,bus-address
# The one ivshmem of the machine (found by 1af4:1110), and the roles of its
# suite: name, source, destination and the map types expected to them.
guest_env P2P_IVSHMEM=1af4:1110
guest_env P2P_IVSHMEM_SCN=switch_ivshmem,p2pA,p2pB,bus-address,bus-address
#        name   source memory destination expected-to-source expected-to-destination
scenario switch p2pA   p2pB   p2pC        bus-address        refused 4 -
# The full p2pdma_test and p2pmem_unbind run on p2pB's 64 MiB CMB: too small for the 1 GiB case.
expect_skip 'switch/p2pdma_test: p2pmem.one_gib_*'
expect_skip 'switch/p2pmem_unbind: p2pmem.one_gib_*'
# No IOMMU translates edu's DMA here: nothing makes a mapping read-only.
expect_skip 'switch_edu/p2pmem_edu: edu.to_device_mapping_is_read_only_under_iommu'
# The route to edu is not refused here.
expect_skip 'switch_edu/p2pmem_edu: edu.refused_route_attach_is_eremoteio_with_reason'
