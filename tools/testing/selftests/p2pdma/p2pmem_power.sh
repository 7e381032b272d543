#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# P2P memory of a provider that is not in D0. A function in D3hot answers
# configuration requests only (PCIe r6.0 sec 5.3.1.4.1): the zeros that an
# mmap() of p2pmem/allocate writes to clear dirty memory are dropped, and
# what its reads return is the platform's choice (QEMU's q35 returns
# zeros). So the mmap() must fail with EIO and one kernel log line, and
# mark nothing clean; so must an export of that memory as a dma-buf
# (/dev/p2pmem), which must take nothing from the pool; back in D0 the
# same memory is cleared and handed out as zeros, never with the bytes
# its previous user wrote.
#
# Puts the provider into D3hot and back to D0 with setpci (Power
# Management Control/Status), with no I/O to it in between; the NVMe
# functions QEMU emulates keep their state (No_Soft_Reset).
# Environment: P2P_MEM, serial of an NVMe whose CMB is P2P memory and
# which has the PCI Power Management capability.
#
# Then the other side: memory that came back unwritten stays clean. The
# D0 mapping of all available memory cleared it and was unmapped without
# a write, so none of it may hold data: a mapping of all of it again,
# with the provider in D3hot, has nothing to clear and must succeed (were
# any page counted dirty, it would fail with EIO as above).
dir=$(dirname "$0")
# shellcheck source=/dev/null
. "$dir/../kselftest/ktap_helpers.sh"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

MIB=$((1 << 20))
ktap_print_header
bdf=$(nvme_bdf "${P2P_MEM:-}")
dev=/sys/bus/pci/devices/$bdf
if [ -z "$bdf" ] || [ ! -d "$dev/p2pmem" ] ||
   ! setpci -s "$bdf" CAP_PM+4.w >/dev/null 2>&1; then
	ktap_skip_all "needs an NVMe with P2P memory (P2P_MEM) and the PCI PM capability"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 9

d0() { setpci -s "$bdf" CAP_PM+4.w=0000:0003; }
trap d0 EXIT

# Someone's data: 2 MiB mapped, found zero, written with 0x77, unmapped.
out=$("$dir/p2pmem_hold" map "$bdf" $((2 * MIB)) 0x77 2>&1)
p2p_check dirty_2mib_of_p2p_memory "$([ "$out" = "zero ok" ]; echo $?)" "p2pmem_hold: $out"

setpci -s "$bdf" CAP_PM+4.w=0003:0003
state=$(setpci -s "$bdf" CAP_PM+4.w)
p2p_check provider_in_d3hot $(((0x$state & 3) != 3)) "PMCSR $state"

# All of the available memory: it holds the dirty 2 MiB, whatever the
# pool's placement prefers.
avail=$(<"$dev/p2pmem/available")
echo "p2pmem_power: mapping $avail bytes in D3hot" > /dev/kmsg
out=$("$dir/p2pmem_hold" map "$bdf" "$avail" 2>&1)
p2p_check mmap_in_d3hot_fails_with_eio "$([ "$out" = "error mmap EIO" ]; echo $?)" \
	"p2pmem_hold: $out"
log=$(dmesg | sed -n '/p2pmem_power: mapping/,$p')
p2p_check mmap_in_d3hot_logs_why \
	"$([[ $log == *"$bdf: P2PDMA: p2pmem_hold: cannot clear P2P memory: the device is not in D0"* ]]; echo $?)" \
	"kernel log: $(tail -n 2 <<< "$log")"
out=$("$dir/p2pmem_hold" export "$bdf" "$avail" 2>&1)
p2p_check export_in_d3hot_fails_with_eio "$([ "$out" = "export error EIO" ]; echo $?)" \
	"p2pmem_hold: $out"
now=$(<"$dev/p2pmem/available")
p2p_check export_in_d3hot_takes_nothing "$([ "$now" = "$avail" ]; echo $?)" \
	"available $now, want $avail"

d0
out=$("$dir/p2pmem_hold" map "$bdf" "$avail" 2>&1)
p2p_check back_in_d0_mapping_reads_zero "$([ "$out" = "zero ok" ]; echo $?)" \
	"p2pmem_hold: $out (PMCSR $(setpci -s "$bdf" CAP_PM+4.w))"

setpci -s "$bdf" CAP_PM+4.w=0003:0003
echo "p2pmem_power: mapping $avail clean bytes in D3hot" > /dev/kmsg
out=$("$dir/p2pmem_hold" map "$bdf" "$avail" 2>&1)
p2p_check unwritten_memory_stays_clean_no_clearing_in_d3hot \
	"$([[ $out != *error* ]]; echo $?)" "p2pmem_hold: $out"
log=$(dmesg | sed -n '/p2pmem_power: mapping .* clean bytes/,$p')
p2p_check clean_mapping_in_d3hot_logs_nothing \
	"$([[ $log != *"$bdf: P2PDMA"* ]]; echo $?)" "kernel log: $(tail -n 2 <<< "$log")"
d0
ktap_finished
