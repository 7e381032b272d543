# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, ivshmem, cpu, guest_env
# and kernel_arg (and qargs, and mem, the guest RAM, which a topology may set).
# `make bench` (scripts/bench.sh): eight ivshmem-plain P2P providers (one
# of 1 GiB, the pool, and seven of 4 MiB), sixteen pci-testdev clients
# behind a PCIe-to-PCI bridge and one NVMe, all below one x3130 switch, so
# every route is a direct bus-address route. The p2pdma-bench driver
# (CONFIG_PCI_P2PDMA_BENCH) binds the ivshmem devices; ivshmem is RAM-backed,
# so DMA into it runs at RAM speed, unlike an NVMe CMB. Their memory is
# private to QEMU (share=off, the ivshmem helper of qemu/run.sh, whose
# comment says why). The 1 GiB pool lets bench/guest.sh map 1 GiB at once;
# its struct pages (16 MiB) fit in the guest's default 1 GiB of RAM.
# Below a second switch, the HMM P2P row's device-private memory (a ninth
# ivshmem, which p2pdma-bench refuses, being full, so that bench/guest.sh
# binds it to the test owner, drivers/pci/p2pdma/tests/hmm-p2p-owner.c)
# and edu, its peer, which reaches it by bus address. That root port comes after rp1: the eight
# below rp1 probe first.
#
#  pcie.0 -- rp1 -- up1 (switch) --+-- dn1 -- benchN (NVMe, no CMB)
#        |                         +-- dv0..dv7 -- ivshmem-plain x8
#        |                         +-- dt -- pcie-pci-bridge -- pci-testdev x16
#        +-- rp2 -- up2 (switch) --+-- dh1 -- ivhmm (ivshmem-plain, 2 MiB)
#                                  +-- dh2 -- edu (DMA engine, 64-bit mask)
dev pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x4
dev x3130-upstream,id=up1,bus=rp1
dev xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0
nvme benchN dn1
for i in 0 1 2 3 4 5 6 7; do
	size=4M
	[ $i = 0 ] && size=1G
	dev "xio3130-downstream,id=dv$i,bus=up1,chassis=$((10 + i)),slot=$((1 + i))"
	ivshmem "ivb$i" "dv$i" "$size"
done
dev xio3130-downstream,id=dt,bus=up1,chassis=20,slot=9
dev pcie-pci-bridge,id=br1,bus=dt
for i in $(seq 1 16); do
	dev "pci-testdev,bus=br1,addr=$(printf '%#x' "$i")"
done
dev pcie-root-port,id=rp2,bus=pcie.0,chassis=40,slot=40,addr=0x5
dev x3130-upstream,id=up2,bus=rp2
dev xio3130-downstream,id=dh1,bus=up2,chassis=41,slot=0
ivshmem ivhmm dh1 2M
dev xio3130-downstream,id=dh2,bus=up2,chassis=42,slot=1
dev edu,bus=dh2,dma_mask=0xffffffffffffffff
guest_env BENCH_NVME=benchN
