#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end P2PDMA checks inside the guest, on whatever topology booted.
# Roles and expectations come from the topology file (kernel command line):
#   P2P_SRC, P2P_MEM, P2P_DST      NVMe serials (source, provider, destination)
#   P2P_EXPECT_SRC, P2P_EXPECT_DST map type expected from the provider to the
#                                  source and to the destination
#   P2P_DIST_SRC, P2P_DIST_DST     the distance expected for each ("-" when
#                                  refused; required)
#   P2P_EXPECT_IOMMU               serials whose DMA an IOMMU must translate
# Prints TAP: the plan, then one line per check ("ok N - name" / "not ok N -
# name: why"); exits 1 if any check failed. tests/run-all.sh fails every
# planned check that did not report.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/guest/lib.sh"
bin=$top/build/bin
mib=4
bytes=$((mib << 20))

plan=18
[ -n "${P2P_EXPECT_IOMMU:-}" ] && plan=$((plan + 2))
echo "1..$plan"
n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=1; echo "not ok $n - $1: $2"; }
# expect NAME WANT GOT
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi; }

mem_bdf=$(nvme_bdf "$P2P_MEM") src_bdf=$(nvme_bdf "$P2P_SRC") dst_bdf=$(nvme_bdf "$P2P_DST")
src=$(nvme_blk "$P2P_SRC") dst=$(nvme_blk "$P2P_DST") own=$(nvme_blk "$P2P_MEM")
if [ -z "$mem_bdf" ] || [ -z "$src" ] || [ -z "$dst" ] || [ -z "$own" ]; then
	fail "devices_present" "NVMe $P2P_SRC/$P2P_MEM/$P2P_DST not all found"
	exit 1
fi
pass "devices_present"
sysfs=/sys/bus/pci/devices/$mem_bdf/p2pmem

# --- provider state -----------------------------------------------------
size0=$(<"$sysfs/size")
expect "provider_size_is_cmb" 67108864 "$size0"
expect "provider_published" 1 "$(<"$sysfs/published")"
avail0=$(<"$sysfs/available")
if [ "$avail0" -gt 0 ] && [ "$avail0" -le 67108864 ]; then
	pass "provider_available_in_range"
else
	fail "provider_available_in_range" "available=$avail0"
fi
expect "allocate_mode_0660_root" "660 root" "$(stat -c '%a %U' "$sysfs/allocate")"

# --- routes ---------------------------------------------------------------
# The map type and the distance, from the topology's scenario line.
expect "route_to_source_is_$P2P_EXPECT_SRC" "$P2P_EXPECT_SRC ${P2P_DIST_SRC:-unset}" \
	"$(route "$mem_bdf" "$src_bdf" | cut -d' ' -f1-2)"
expect "route_to_destination_is_$P2P_EXPECT_DST" "$P2P_EXPECT_DST ${P2P_DIST_DST:-unset}" \
	"$(route "$mem_bdf" "$dst_bdf" | cut -d' ' -f1-2)"
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
# With an IOMMU, record every IOMMU mapping (iommu:map trace event: IOVA
# and CPU physical address) during the legs: dma-iommu maps a client's
# through-host-bridge segment with it whether the client maps a
# scatterlist (6.12: dma_map_sg) or links an IOVA range (7.3's block layer).
ev=/sys/kernel/tracing/events/iommu/map
if [ -n "${P2P_EXPECT_IOMMU:-}" ]; then
	echo 0 > /sys/kernel/tracing/trace 2>/dev/null
	echo 1 > $ev/enable 2>/dev/null
fi
dd if=/dev/urandom of=/tmp/pattern bs=1M count=$mib status=none
dd if=/tmp/pattern of="$src" bs=1M oflag=direct conv=fsync status=none
dd if=/tmp/pattern of="$own" bs=1M oflag=direct conv=fsync status=none

# leg NAME EXPECTED_MAP SRCDEV DSTDEV DSTOFF_MIB REFUSED_EXIT
leg() {
	local name=$1 want=$2 from=$3 to=$4 off=$5 refused=$6 rc out
	: > /tmp/readback
	out=$("$bin/p2pcopy" -m "$mem_bdf" -s "$from" -d "$to" -n $bytes -c 1048576 -D $((off << 20)) \
		-E "${P2P_REFUSED_ERRNO:-EREMOTEIO}" 2>&1)
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
expect "available_restored_after_io" "$avail0" "$(<"$sysfs/available")"
[ -n "${P2P_EXPECT_IOMMU:-}" ] && echo 0 > $ev/enable 2>/dev/null

# --- IOMMU ---------------------------------------------------------------
# Where the topology has an IOMMU, each named device must sit in an IOMMU
# group whose default domain translates (DMA or DMA-FQ, not identity).
if [ -n "${P2P_EXPECT_IOMMU:-}" ]; then
	bad=""
	for serial in ${P2P_EXPECT_IOMMU//,/ }; do
		grp=/sys/bus/pci/devices/$(nvme_bdf "$serial")/iommu_group
		type=$(cat "$grp/type" 2>/dev/null)
		case $type in DMA | DMA-FQ) ;; *) bad+=" $serial:${type:-no-group}" ;; esac
	done
	if [ -z "$bad" ]; then pass "iommu_group_translates_dma"; else fail "iommu_group_translates_dma" "$bad"; fi
	# Every range the IOMMU mapped in the provider's BAR (resource line
	# 2, BAR2: the CMB) during the legs is at an IOVA that differs from
	# its CPU physical address, and there was at least one. Only the
	# clients map that BAR through the IOMMU (the provider's own leg is a
	# bus address).
	read -r bar_lo bar_hi _ < <(sed -n 3p "/sys/bus/pci/devices/$mem_bdf/resource")
	seg=0 same=0
	while read -r d ph; do
		if [ $((ph)) -lt $((bar_lo)) ] || [ $((ph)) -gt $((bar_hi)) ]; then continue; fi
		seg=$((seg + 1))
		[ $((d)) = $((ph)) ] && same=$((same + 1))
	done < <(sed -n 's/.* map: IOMMU: iova=\(0x[0-9a-f]*\) - 0x[0-9a-f]* paddr=\(0x[0-9a-f]*\) .*/\1 \2/p' \
		/sys/kernel/tracing/trace 2>/dev/null)
	got="$seg $same"
	if [ "${got%% *}" -gt 0 ] 2>/dev/null && [ "${got#* }" = 0 ]; then
		pass "p2p_segments_mapped_to_iova_not_cpu_address"
	else
		fail "p2p_segments_mapped_to_iova_not_cpu_address" "IOMMU mappings in BAR2, of them with iova == phys: ${got:-no trace}"
	fi
fi

# --- unbind and rebind the provider -------------------------------------
# The provider registers again in full (same size, published); that every
# page came back before the unbind is checked by available_restored_after_io
# and by the unbind finishing at all (it waits for every page reference).
drv=$(basename "$(readlink -f "/sys/bus/pci/devices/$mem_bdf/driver")")
if write_bounded 60 "$mem_bdf" "/sys/bus/pci/drivers/$drv/unbind" && [ ! -e "$sysfs" ]; then
	pass "unbind_finishes_and_removes_p2pmem"
else
	fail "unbind_finishes_and_removes_p2pmem" "unbind blocked, failed, or $sysfs still there"
fi
write_bounded 60 "$mem_bdf" "/sys/bus/pci/drivers/$drv/bind"
for _ in $(seq 100); do [ -e "$sysfs/published" ] && break; sleep 0.2; done
expect "rebind_registers_same_size_published" "$size0 1" \
	"$(cat "$sysfs/size" 2>/dev/null) $(cat "$sysfs/published" 2>/dev/null)"
[ "$n" = "$plan" ] || echo "# e2e: planned $plan checks, ran $n"
exit $failed
