#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A bus-address route under a translating IOMMU: two NVMe functions below
# one PCIe switch, intel-iommu on. The route from the provider to the
# client is PCI_P2PDMA_MAP_BUS_ADDR, so the client's DMA mapping (dma-iommu
# on 6.12, the block layer's map state on 7.3) must hand the client the
# provider's BAR bus address and map nothing in the IOMMU for it: on
# hardware the switch routes that address to the provider and the IOMMU
# never sees it.
#
# QEMU limitation, on which every check below relies: QEMU's bridges do
# not route peer traffic, every device DMA goes up to the root IOMMU. The
# client's DMA to the bus address is looked up in its IOMMU page table,
# is not there (the IOVA allocator reserves the host bridge windows), and
# intel-iommu reports a DMAR fault whose address is the bus address.
# QEMU (10.0) then drops the data and completes the NVMe command with
# success status: the O_DIRECT read into P2P memory returns 0 and no byte
# arrives (nothing is retried, no I/O error). So the proof that the client
# was given the bus address is that the IOMMU mapped nothing in the BAR
# (iommu:map trace event; a read into RAM in the same window shows the
# event works) and the fault at an address in the BAR's bus range, and
# the P2P memory must still hold the zeros of a fresh mapping. Had
# dma-iommu mapped the page through the IOMMU (a real IOVA, as for a
# through-host-bridge route), the copy would deliver the
# bytes and no fault would be logged: those cases would fail. Nothing
# here counts the transfer's exit status as a verified copy. On hardware
# whose switch routes the peer traffic the bytes would arrive and no
# fault would be logged: the last two checks describe QEMU, not a spec.
#
# Environment: P2P_MEM (NVMe serial of the provider, with a CMB),
# P2P_CLIENT (NVMe serial of the client), P2P_DIST (the distance expected
# between them; default 4: both below one switch), P2P_BIN (directory of
# p2pcopy; default: the checkout's build/bin).
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$dir/../kselftest/ktap_helpers.sh"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

MIB=$((1 << 20))
routes=/sys/kernel/debug/p2pdma/routes
tracing=/sys/kernel/tracing
event=$tracing/events/iommu/map
p2pcopy=${P2P_BIN:-$dir/../../../../build/bin}/p2pcopy

ktap_print_header
mem=$(nvme_bdf "${P2P_MEM:-}") && cli=$(nvme_bdf "${P2P_CLIENT:-}") &&
	own=$(nvme_blk "$P2P_MEM") && cli_blk=$(nvme_blk "$P2P_CLIENT")
if [ -z "${own:-}" ] || [ -z "${cli_blk:-}" ] || [ ! -d "/sys/bus/pci/devices/$mem/p2pmem" ] ||
   [ ! -r "$routes" ] || [ ! -e "$event/enable" ] || [ ! -x "$p2pcopy" ] ||
   ! command -v setpci >/dev/null; then
	ktap_skip_all "needs NVMe P2P_MEM (with P2P memory) and P2P_CLIENT, $routes, $event, $p2pcopy and setpci"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 6

# The provider's BAR 2 (the CMB): its CPU address range from sysfs, and
# its start as the bus sees it: the BAR registers themselves (64-bit,
# BAR 2 and 3; the low 4 bits of BAR 2 are flags).
read -r cpu_lo cpu_hi _ < <(sed -n 3p "/sys/bus/pci/devices/$mem/resource")
read -r bar2 bar3 < <(setpci -s "$mem" BASE_ADDRESS_2.l BASE_ADDRESS_3.l | tr '\n' ' ')
bus_lo=$(printf '%#x' $(((0x$bar3 << 32) | (0x$bar2 & ~0xf))))
bus_hi=$((bus_lo + cpu_hi - cpu_lo))
ktap_print_msg "provider $mem BAR 2: CPU $cpu_lo-$cpu_hi, bus $bus_lo-$(printf '%#x' "$bus_hi"); client $cli"

# --- the route and the client's DMA domain -------------------------------
# Our core's verdict: the two functions share the switch, no ACS redirect
# on its downstream ports, so the bus address is the route.
dist=${P2P_DIST:-4}
got=$(awk -v p="$mem" -v c="$cli" '$1 == p && $2 == c { print $3, $4; exit }' "$routes")
p2p_check "route_is_bus_address_distance_$dist" \
	"$([ "$got" = "bus-address $dist" ]; echo $?)" "routes file: '$got'"
# dma-iommu maps the client's DMA only if its default domain translates;
# with an identity domain (iommu=pt) dma-direct would, and the bus-address
# branch of iommu_dma_map_sg() would not run.
type=$(cat "/sys/bus/pci/devices/$cli/iommu_group/type" 2>/dev/null)
p2p_check client_iommu_domain_translates \
	"$([[ $type == DMA || $type == DMA-FQ ]]; echo $?)" "client's IOMMU group type: '${type:-no group}'"

# --- the client's DMA into P2P memory ------------------------------------
# Pattern A on the client's namespace; pattern B where the provider's own
# namespace will receive the P2P buffer, so that what lands there can
# only have come from the buffer.
off=$((8 * MIB))
dd if=/dev/urandom of=/tmp/iba_a bs=1M count=1 status=none
dd if=/dev/urandom of=/tmp/iba_b bs=1M count=1 status=none
dd if=/tmp/iba_a of="$cli_blk" bs=1M oflag=direct conv=fsync status=none
dd if=/tmp/iba_b of="$own" bs=1M seek=$((off / MIB)) oflag=direct conv=fsync status=none
head -c $MIB /dev/zero > /tmp/iba_zero

# The kernel rate-limits DMAR fault reports (10 lines per 5 s): give an
# earlier fault's window time to close, so that ours is printed.
dmesg | grep -q 'DMAR: DRHD: handling fault' && sleep 6
marker="iommu_bus_address: client $cli into P2P memory of $mem"
echo "$marker" > /dev/kmsg
echo 0 > "$tracing/trace"
echo 1 > "$event/enable"
# The control: the client reads into RAM, which the IOMMU maps.
dd if="$cli_blk" of=/dev/null bs=64k count=1 iflag=direct status=none
# Read the client's namespace into P2P memory (the client writes the BAR),
# then write that buffer to the provider's own namespace at $off.
out=$("$p2pcopy" -m "$mem" -s "$cli_blk" -d "$own" -n $MIB -c $MIB -D $off 2>&1)
rc=$?
echo 0 > "$event/enable"
# Not refused (EREMOTEIO would exit 3, an I/O error 1): the core allowed
# the route and dma-iommu mapped it. The 0 is QEMU's silence, see above.
p2p_check odirect_client_into_p2pmem_not_refused "$rc" "p2pcopy exit $rc: $out"

# The IOMMU mapped nothing in the provider's BAR (by CPU physical address),
# and did map the control's RAM buffer: dma-iommu gave the client the bus
# address (the fault below shows where the client wrote).
maps=$(sed -n 's/.* map: IOMMU: iova=\(0x[0-9a-f]*\) - 0x[0-9a-f]* paddr=\(0x[0-9a-f]*\) .*/\1 \2/p' \
	"$tracing/trace")
ram=0 bad=""
while read -r iova ph; do
	[ -n "$ph" ] || continue
	if [ $((ph)) -lt $((cpu_lo)) ] || [ $((ph)) -gt $((cpu_hi)) ]; then
		ram=$((ram + 1))
	else
		bad+=" iova=$iova phys=$ph"
	fi
done <<< "$maps"
p2p_check client_given_bar_bus_address_by_dma_iommu \
	"$([ "$ram" -gt 0 ] && [ -z "$bad" ]; echo $?)" \
	"IOMMU mappings outside the BAR (the control): $ram; in the BAR:${bad:- none}"

# The IOMMU fault of the client's write: QEMU's intel-iommu looked the bus
# address up in the client's page table. Every fault of the client lies in
# the BAR's bus range, and there is one. The report comes from the fault
# interrupt: wait for it a little.
rid=${cli#*:}
for _ in 1 2 3 4 5; do
	log=$(dmesg | sed -n "\|$marker|,\$p")
	[[ $log =~ "Request device ["(0000:)?"$rid] fault addr" ]] && break
	sleep 1
done
# 6.12 names the requester bus:dev.fn, 7.3 with its PCI domain first.
faults=$(sed -En "s/.*DMAR: \[DMA Write[^]]*\] Request device \[(0000:)?$rid\] fault addr (0x[0-9a-f]*).*/\2/p" <<< "$log")
n=0 bad=""
for a in $faults; do
	n=$((n + 1))
	if [ $((a)) -lt $((bus_lo)) ] || [ $((a)) -gt $((bus_hi)) ]; then bad+=" $a"; fi
done
p2p_check iommu_fault_of_client_at_bar_bus_address \
	"$([ "$n" -gt 0 ] && [ -z "$bad" ]; echo $?)" \
	"DMA Write faults of [$rid]: $n, outside the BAR:${bad:- none}; log: $(grep DMAR <<< "$log" | head -n 2)"

# What the P2P buffer held, as the provider wrote it to its namespace: the
# zeros of the fresh mapping. Pattern A would mean the client's DMA
# reached the BAR through an IOMMU mapping; pattern B, that nothing was
# written; anything else, corruption.
dd if="$own" of=/tmp/iba_got bs=1M skip=$((off / MIB)) count=1 iflag=direct status=none
if cmp -s /tmp/iba_got /tmp/iba_zero; then
	what=zeros
elif cmp -s /tmp/iba_got /tmp/iba_a; then
	what="the client's data"
elif cmp -s /tmp/iba_got /tmp/iba_b; then
	what="the namespace's old data"
else
	what="other bytes: $(cmp /tmp/iba_got /tmp/iba_zero 2>&1 | head -n 1)"
fi
p2p_check p2pmem_kept_zeros_client_data_dropped "$([ "$what" = zeros ]; echo $?)" \
	"P2P buffer, as written to $own at $off: $what"
rm -f /tmp/iba_a /tmp/iba_b /tmp/iba_zero /tmp/iba_got
ktap_finished
