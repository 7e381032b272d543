# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, global, monitor_relay
# and guest_env.
# A PCIe switch that QEMU pulls out (device_del through the monitor,
# qemu/qmp-relay.py) while a dma-buf of the CMB of one NVMe below it is
# mapped for the other: tests/guest/all.sh's p2pmem_hotunplug, the only
# suite of this topology. The root port's slot is hot-plug capable and
# handled by the guest's native pciehp: with ACPI hot-plug (q35's
# default) QEMU refuses to unplug a bridge that was there at boot. The
# switch's own ports have no slot, so the switch goes as one card.
#
#  pcie.0 -- rp1 (slot) -- up1 (switch) --+-- dn1 -- p2pA (the importer's device)
#                                         +-- dn2 -- p2pB (CMB, the P2P memory)
global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off
monitor_relay
dev pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=0x4
dev x3130-upstream,id=up1,bus=rp1
dev xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0,hotplug=off
dev xio3130-downstream,id=dn2,bus=up1,chassis=3,slot=1,hotplug=off
nvme p2pA dn1 64
nvme p2pB dn2 64
#        name              importer provider switch
guest_env P2P_HOTUNPLUG=switch_unplug,p2pA,p2pB,up1
