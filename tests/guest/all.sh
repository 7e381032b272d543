#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything one test boot of `make test` runs, as a sequence of suites.
# Each suite is a TAP producer (its own plan "1..N" and results), framed by
#   P2PDMA-SUITE <id>
#   P2PDMA-END <id> <exit status> <seconds>
# so that tests/run-all.sh can check every plan, count a suite that never
# ended as failed, and time each one.
#
# The topology gives the scenarios (P2P_SCN_1, P2P_SCN_2, ...: name, source,
# memory, destination and the two expected map types; see qemu/run.sh).
# Every scenario runs the end-to-end checks and the selftests whose outcome
# depends on the route; the first also runs the route-independent suites
# that P2P_SUITES names (all when unset). The kmemleak scan comes
# last, after every suite has freed what it used. Exits 1 if any suite did.
top=$(cd "$(dirname "$0")/../.." && pwd)
# The selftests make selftests built for this kernel (qemu/run.sh: P2P_KERNEL).
sel=$top/build/selftests-${P2P_KERNEL:?not set by qemu/run.sh}/install/p2pdma
# The p2pdma_test and p2pmem_unbind cases whose result depends on the route.
route_cases=(-t odirect_source_into_p2pmem -t odirect_p2pmem_to_destination)
route_unbind_cases=(-t unbind_during_odirect_io)

# The route-independent suites the first scenario runs: P2P_SUITES, a
# colon-separated list (tests/machines spreads them over the machines),
# or all of them when it is unset.
wanted() { # SUITE
	[ -z "${P2P_SUITES+set}" ] || [[ ":$P2P_SUITES:" == *":$1:"* ]]
}

worst=0
suite() { # ID CMD [ARG...]
	local id=$1 start rc
	shift
	echo "P2PDMA-SUITE $id"
	start=$(date +%s)
	"$@" 2>&1
	rc=$?
	echo "P2PDMA-END $id $rc $(($(date +%s) - start))"
	[ "$rc" = 0 ] || worst=1
}

# all.sh --only ID CMD [ARG...]: run just that one framed suite.
if [ "${1:-}" = --only ]; then
	suite "$2" "${@:3}"
	exit $worst
fi

i=1
while scn=$(printenv "P2P_SCN_$i"); do
	IFS=, read -r name P2P_SRC P2P_MEM P2P_DST P2P_EXPECT_SRC P2P_EXPECT_DST \
		P2P_DIST_SRC P2P_DIST_DST <<< "$scn"
	export P2P_SCENARIO=$name P2P_SRC P2P_MEM P2P_DST P2P_EXPECT_SRC P2P_EXPECT_DST \
		P2P_DIST_SRC P2P_DIST_DST
	suite "$name/e2e" "$top/tests/guest/e2e.sh"
	# Routes that cross host bridges: the pci_p2pdma.host_bridges override.
	if [[ $name == hostbridge* ]]; then
		suite "$name/host_bridge_policy" env P2P_BIN="$top/build/bin" \
			"$sel/host_bridge_policy.sh"
	fi
	if [ "$i" = 1 ] && wanted nvmet_configfs; then
		suite "$name/nvmet_configfs" "$sel/nvmet_configfs.sh"
	fi
	if [ "$i" = 1 ] && wanted fio_verify; then
		suite "$name/fio_verify" "$sel/fio_verify.sh"
	fi
	if [ "$i" = 1 ] && wanted p2pdma_tool; then
		suite "$name/p2pdma_tool" env P2PDMA_TOOL="$top/build/bin/p2pdma" \
			"$sel/p2pdma_tool.sh"
	fi
	if [ "$i" = 1 ] && wanted p2pdma_test; then
		suite "$name/p2pdma_test" "$sel/p2pdma_test"
	else
		suite "$name/p2pdma_test" "$sel/p2pdma_test" "${route_cases[@]}"
	fi
	if [ "$i" = 1 ] && wanted p2pmem_unbind; then
		suite "$name/p2pmem_unbind" "$sel/p2pmem_unbind"
	else
		suite "$name/p2pmem_unbind" "$sel/p2pmem_unbind" "${route_unbind_cases[@]}"
	fi
	# /dev/p2pmem on the scenario's provider (an NVMe CMB, which cannot
	# withdraw its memory: the EACCES case needs p2pmem-bar, below).
	if [ "$i" = 1 ] && wanted p2pmem_export; then
		suite "$name/p2pmem_export" "$sel/p2pmem_export" -T unpublished_is_eacces
	fi
	# The provider's memory as a dma-buf, seen by the test importer: map
	# type per route, NVMe DMA into it, revocation on unbind (the provider
	# is rebound at the end).
	suite "$name/p2pmem_import" "$sel/p2pmem_import" -T surprise_removal_of_the_switch_ends
	# Puts the scenario's provider into D3hot and back: last of its suites.
	if [ "$i" = 1 ] && wanted p2pmem_power; then
		suite "$name/p2pmem_power" "$sel/p2pmem_power.sh"
	fi
	i=$((i + 1))
done
[ "$i" -gt 1 ] || [ -n "${P2P_HOTUNPLUG:-}" ] ||
	{ echo "all.sh: the topology declares no scenario (P2P_SCN_1)"; worst=1; }
# The machine's ivshmem (P2P_IVSHMEM, its vendor:device; P2P_IVSHMEM_SCN:
# name, source, destination and the map types expected to them): the
# p2pmem-bar driver's suite, which leaves it bound to that driver, then the
# p2pdma_test and p2pmem_unbind cases that need no namespace of the
# provider's own, with the ivshmem as the provider.
ivshmem_cases=(-t cpu_writes_read_back -t new_mapping_reads_zero_after_another_process
	       -t odirect_source_into_p2pmem -t odirect_p2pmem_to_destination
	       -t threads_map_io_unmap_then_all_returned
	       -t one_gib_mapping_zeroed_shared_odirect_partial_munmap
	       -t new_mapping_reads_zero_after_dma_only_write
	       -t new_mapping_reads_zero_after_child_only_write
	       -t new_mapping_reads_zero_after_write_via_mprotect
	       -t new_mapping_reads_zero_after_untouched_and_touched_mix)
ivshmem_unbind_cases=(-t unbind_revokes_mapping_with_sigbus
	       -t one_gib_unbind_revokes_mapping_with_sigbus
	       -t unbind_revokes_mapping_in_forked_child -t mmap_races_unbind
	       -t unbind_during_odirect_io -t unbind_rebind_stress
	       -t mapping_of_used_memory_reads_zero)
if [ -n "${P2P_IVSHMEM:-}" ] && [ -n "${P2P_IVSHMEM_SCN:-}" ]; then
	IFS=, read -r name P2P_SRC P2P_DST P2P_EXPECT_SRC P2P_EXPECT_DST <<< "$P2P_IVSHMEM_SCN"
	export P2P_SCENARIO=$name P2P_SRC P2P_DST P2P_EXPECT_SRC P2P_EXPECT_DST P2P_MEM=""
	suite "$name/p2pmem_bar" "$sel/p2pmem_bar.sh"
	# shellcheck source=guest/lib.sh
	ivbdf=$(. "$top/guest/lib.sh" && ivshmem_bdf "$P2P_IVSHMEM")
	[ -d "/sys/bus/pci/devices/$ivbdf/p2pmem" ] ||
		(. "$top/guest/lib.sh" && bind_p2pmem_bar "$ivbdf")
	suite "$name/p2pdma_test_ivshmem" env P2P_MEM_BDF="$ivbdf" \
		"$sel/p2pdma_test" "${ivshmem_cases[@]}"
	suite "$name/p2pmem_unbind_ivshmem" env P2P_MEM_BDF="$ivbdf" P2P_UNBIND_CYCLES=3 \
		P2P_RACE_CYCLES=3 "$sel/p2pmem_unbind" "${ivshmem_unbind_cases[@]}"
	if wanted p2pmem_export; then
		suite "$name/p2pmem_export" env P2P_MEM_BDF="$ivbdf" "$sel/p2pmem_export"
	fi
fi
# The machine's edu DMA engine (P2P_EDU_SCN: name, provider serial, map
# type): a device DMAing with exactly the addresses the dma-buf exporter
# handed out. Before iommu_bus_address: its burst of DMAR faults can
# leave a fault record pending that the kernel's handler did not see
# (QEMU then raises no fault interrupt), and edu's one write fault, which
# p2pmem_edu looks for in the log, would go unreported (seen on 7.3).
if [ -n "${P2P_EDU_SCN:-}" ]; then
	suite "${P2P_EDU_SCN%%,*}/p2pmem_edu" "$sel/p2pmem_edu"
fi
# vfio-pci's dma-buf of a BAR (P2P_VFIO_SCN: name): the machine's ivshmem
# exported through its vfio cdev, edu DMAing into it by the test
# importer's mapping and by iommufd's (vfio_dmabuf.c). Where the kernel
# has vfio-pci (7.3's debug configuration; tests/plan lists the suite for
# 7.3 only). After p2pmem_edu, before iommu_bus_address's burst of faults.
if [ -n "${P2P_VFIO_SCN:-}" ] && [ -d /sys/bus/pci/drivers/vfio-pci ]; then
	suite "${P2P_VFIO_SCN%%,*}/vfio_dmabuf" "$sel/vfio_dmabuf"
fi
# A bus-address route under a translating IOMMU (P2P_IOMMU_BUS: name,
# provider, client, distance): iommu_bus_address.sh, which makes the
# client's DMA fault in the IOMMU, as QEMU does for a bus address.
if [ -n "${P2P_IOMMU_BUS:-}" ]; then
	IFS=, read -r name P2P_MEM P2P_CLIENT P2P_DIST <<< "$P2P_IOMMU_BUS"
	export P2P_SCENARIO=$name P2P_MEM P2P_CLIENT P2P_DIST
	suite "$name/iommu_bus_address" env P2P_BIN="$top/build/bin" \
		"$sel/iommu_bus_address.sh"
fi
# Device-private memory that edu reaches (P2P_HMM_SCN: name, route from
# the machine's one ivshmem to edu): the mm patch's HMM P2P with the test
# owner and mirror client (drivers/pci/p2pdma/tests/hmm-p2p-*.c).
if [ -n "${P2P_HMM_SCN:-}" ]; then
	suite "${P2P_HMM_SCN%%,*}/hmm_p2p" "$sel/hmm_p2p"
fi
# A switch pulled out (P2P_HOTUNPLUG: name, the NVMe serials of the
# importer's device and of the provider below it, the switch's QEMU id):
# last, as it takes devices away; QEMU's device_del is asked for through
# qemu/qmp-relay.py.
if [ -n "${P2P_HOTUNPLUG:-}" ]; then
	IFS=, read -r name imp mem port <<< "$P2P_HOTUNPLUG"
	suite "$name/p2pmem_hotunplug" env P2P_SRC="$imp" P2P_DST="$imp" P2P_MEM="$mem" \
		P2P_HOTUNPLUG="$port" "$sel/p2pmem_import" -t surprise_removal_of_the_switch_ends
fi
suite kmemleak "$top/tests/guest/kmemleak.sh"
# The KCSAN flavour: what KCSAN watched, outside any suite (a comment of
# the judged output), to show that it ran.
kcsan=/sys/kernel/debug/kcsan
if [ -r $kcsan ]; then
	echo "KCSAN counters:"
	grep -E 'enabled|used_watchpoints|setup_watchpoints|data_races|assert_failures|no_capacity|report_races|races_unknown_origin' $kcsan | sed 's/^/  /'
fi
# Non-zero when any suite failed: the guest's exit status carries it too.
exit $worst
