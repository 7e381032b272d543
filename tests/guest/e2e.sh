#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end P2PDMA checks inside the guest, on whatever topology booted.
# Roles and expectations come from the topology file (kernel command line):
#   P2P_SRC, P2P_MEM, P2P_DST      NVMe serials (source, provider, destination)
#   P2P_EXPECT_SRC, P2P_EXPECT_DST map type expected from the provider to the
#                                  source and to the destination
# Prints one TAP line per check ("ok - name" / "not ok - name: why"); the host
# (tests/run-all.sh) numbers them and adds the totals.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/guest/lib.sh"
bin=$top/build/bin
mib=8
bytes=$((mib << 20))

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; }
# expect NAME WANT GOT
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi; }

mem_bdf=$(nvme_bdf "$P2P_MEM") src_bdf=$(nvme_bdf "$P2P_SRC") dst_bdf=$(nvme_bdf "$P2P_DST")
src=$(nvme_blk "$P2P_SRC") dst=$(nvme_blk "$P2P_DST") own=$(nvme_blk "$P2P_MEM")
if [ -z "$mem_bdf" ] || [ -z "$src" ] || [ -z "$dst" ] || [ -z "$own" ]; then
	fail "devices_present" "NVMe $P2P_SRC/$P2P_MEM/$P2P_DST not all found"
	exit 0
fi
pass "devices_present"
sysfs=/sys/bus/pci/devices/$mem_bdf/p2pmem

# --- provider state -----------------------------------------------------
expect "provider_size_is_cmb" 67108864 "$(cat "$sysfs/size")"
expect "provider_published" 1 "$(cat "$sysfs/published")"
avail0=$(cat "$sysfs/available")
if [ "$avail0" -gt 0 ] && [ "$avail0" -le 67108864 ]; then
	pass "provider_available_in_range"
else
	fail "provider_available_in_range" "available=$avail0"
fi
expect "allocate_mode_0660_root" "660 root" "$(stat -c '%a %U' "$sysfs/allocate")"

# --- routes ---------------------------------------------------------------
expect "route_to_source_is_$P2P_EXPECT_SRC" "$P2P_EXPECT_SRC" "$(route "$mem_bdf" "$src_bdf" | cut -d' ' -f1)"
expect "route_to_destination_is_$P2P_EXPECT_DST" "$P2P_EXPECT_DST" "$(route "$mem_bdf" "$dst_bdf" | cut -d' ' -f1)"
expect "route_to_itself_is_bus_address_0" "bus-address 0" "$(route "$mem_bdf" "$mem_bdf" | cut -d' ' -f1-2)"

# --- sysfs mmap -----------------------------------------------------------
r=$("$bin/p2pmap" "$mem_bdf" shared 1048576)
case $r in
"result=ok before=$avail0 during=$((avail0 - 1048576)) after=$avail0") pass "mmap_accounts_available_and_cpu_sees_data" ;;
*) fail "mmap_accounts_available_and_cpu_sees_data" "$r (available was $avail0)" ;;
esac
expect "mmap_private_refused_einval" "result=EINVAL" "$("$bin/p2pmap" "$mem_bdf" private 65536)"
expect "mmap_offset_refused_einval" "result=EINVAL" "$("$bin/p2pmap" "$mem_bdf" offset 65536)"
expect "mmap_larger_than_available_enomem" "result=ENOMEM" "$("$bin/p2pmap" "$mem_bdf" shared $((avail0 + 2097152)))"

# --- O_DIRECT data path -------------------------------------------------
dd if=/dev/urandom of=/tmp/pattern bs=1M count=$mib status=none
dd if=/tmp/pattern of="$src" bs=1M oflag=direct conv=fsync status=none
dd if=/tmp/pattern of="$own" bs=1M oflag=direct conv=fsync status=none

# leg NAME EXPECTED_MAP SRCDEV DSTDEV DSTOFF_MIB REFUSED_EXIT
leg() {
	local name=$1 want=$2 from=$3 to=$4 off=$5 refused=$6 rc out
	: > /tmp/readback
	out=$("$bin/p2pcopy" -m "$mem_bdf" -s "$from" -d "$to" -n $bytes -c 1048576 -D $((off << 20)) 2>&1)
	rc=$?
	if [ "$want" = refused ]; then
		if [ $rc = "$refused" ]; then
			pass "${name}_refused_eremoteio"
		else
			fail "${name}_refused_eremoteio" "p2pcopy exit $rc: $out"
		fi
		return
	fi
	if [ $rc != 0 ]; then
		fail "${name}_bytes_match" "p2pcopy exit $rc: $out"
		return
	fi
	dd if="$to" of=/tmp/readback bs=1M skip="$off" count=$mib iflag=direct status=none
	if cmp -s /tmp/pattern /tmp/readback; then
		pass "${name}_bytes_match"
	else
		fail "${name}_bytes_match" "$(cmp /tmp/pattern /tmp/readback 2>&1 | head -n 1)"
	fi
}
leg "odirect_source_to_p2pmem" "$P2P_EXPECT_SRC" "$src" "$own" 16 3
leg "odirect_p2pmem_to_destination" "$P2P_EXPECT_DST" "$own" "$dst" 24 4
leg "odirect_provider_to_own_p2pmem" bus-address "$own" "$own" 32 3
expect "available_restored_after_io" "$avail0" "$(cat "$sysfs/available")"

# --- unbind and rebind the provider -------------------------------------
drv=$(basename "$(readlink -f "/sys/bus/pci/devices/$mem_bdf/driver")")
echo "$mem_bdf" > "/sys/bus/pci/drivers/$drv/unbind"
if [ -e "$sysfs" ]; then fail "unbind_removes_p2pmem" "$sysfs still there"; else pass "unbind_removes_p2pmem"; fi
echo "$mem_bdf" > "/sys/bus/pci/drivers/$drv/bind"
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$sysfs/available" ] && break; sleep 1; done
expect "rebind_restores_available" "$avail0" "$(cat "$sysfs/available" 2>/dev/null)"

# --- kmemleak -------------------------------------------------------------
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	leaks=$(cat /sys/kernel/debug/kmemleak)
	if [ -z "$leaks" ]; then
		pass "kmemleak_clean"
	else
		fail "kmemleak_clean" "$(echo "$leaks" | grep -c unreferenced) leaks"
		echo "$leaks" | sed 's/^/# /' | head -n 60
	fi
fi
exit 0
