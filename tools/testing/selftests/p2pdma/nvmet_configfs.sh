#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The nvmet namespace "p2pmem" configfs attribute, which parses its input
# with pci_p2pdma_enable_store(): each accepted value reads back exactly,
# each refusal has its exact errno (Linux 6.12: a device without published
# P2P memory, an unknown device, garbage and an empty string are all
# ENODEV; booleans follow kstrtobool(), except that a 0 or 1 must stand
# alone, so "10" is ENODEV too). Then the namespace enables with the
# provider's P2P memory, which nvmet checks with pci_p2pdma_distance().
#
# Last, a loop target serves verified I/O to an `nvme connect` over the
# loop transport. That is a configfs and nvmet check only: nvmet uses P2P
# memory for ports whose transport can (RDMA), never for loop, so this I/O
# does not touch P2P memory, and its name says so.
# Environment: P2P_MEM (NVMe with a CMB), P2P_DST (an NVMe, with or
# without a CMB).
dir=$(dirname "$0")
# shellcheck source=/dev/null
. "$dir/../kselftest/ktap_helpers.sh"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

cfs=/sys/kernel/config/nvmet
nqn=nqn.2026-11.io.p2pdma:selftest
hostnqn=nqn.2014-08.org.nvmexpress:uuid:5a1ec7ed-0000-4000-8000-000000000001

ktap_print_header
bdf=$(nvme_bdf "${P2P_MEM:-}") && blk=$(nvme_blk "$P2P_MEM")
if [ -z "${blk:-}" ] || [ ! -d $cfs ] || ! command -v nvme >/dev/null; then
	ktap_skip_all "needs nvmet configfs, nvme-cli and an NVMe with a CMB (P2P_MEM)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 15

# A PCI device with no P2P memory: the host bridge always qualifies.
nop2p=0000:00:00.0

sub=$cfs/subsystems/$nqn
ns=$sub/namespaces/1
if ! { mkdir "$sub" && echo 1 > "$sub/attr_allow_any_host" && mkdir "$ns" &&
	echo -n "$blk" > "$ns/device_path"; }; then
	ktap_exit_fail_msg "cannot create the nvmet subsystem"
fi

# store NAME VALUE WANT_ERRNO(0 = accepted) WANT_SHOW
store() {
	local err=0 out show
	out=$(printf '%s\n' "$2" 2>&1 > "$ns/p2pmem") || err=1
	show=$(<"$ns/p2pmem")
	if [ "$3" = 0 ] && [ $err = 0 ] && [ "$show" = "$4" ]; then
		ktap_test_pass "$1"
	elif [ "$3" != 0 ] && [ $err = 1 ] && [[ "$out" == *"$3"* ]] && [ "$show" = "$4" ]; then
		ktap_test_pass "$1"
	else
		ktap_print_msg "wrote '$2': error=$err '$out', reads back '$show'"
		ktap_test_fail "$1"
	fi
}
store p2pmem_0_disables 0 0 0
store p2pmem_1_any_provider 1 0 1
store p2pmem_yes_word yes 0 1
store p2pmem_off_word off 0 0
# Not a device, and a leading 0 or 1 counts as a boolean only when it stands
# alone (6.12, found by make test-upstream): refused, the setting stays 0.
store p2pmem_unknown_device_leading_0_enodev 0000:ff:1f.7 "No such device" 0
# A letter first is kstrtobool()'s to read: "f..." is false.
store p2pmem_name_with_letter_first_is_false ffff:ff:1f.7 0 0
store p2pmem_provider_name "$bdf" 0 "$bdf"
store p2pmem_device_without_p2pmem_enodev "$nop2p" "No such device" "$bdf"
store p2pmem_unknown_device_enodev 9999:ff:1f.7 "No such device" "$bdf"
store p2pmem_garbage_enodev banana "No such device" "$bdf"
store p2pmem_longer_number_enodev 10 "No such device" "$bdf"
store p2pmem_empty_enodev "" "No such device" "$bdf"

# Enable the namespace with the provider's P2P memory and serve I/O.
if echo 1 > "$ns/enable"; then
	ktap_test_pass "namespace_enables_with_p2pmem"
else
	ktap_test_fail "namespace_enables_with_p2pmem"
fi
port=$cfs/ports/1
mkdir "$port" && echo loop > "$port/addr_trtype" && ln -s "$sub" "$port/subsystems/$nqn"
if nvme connect -t loop -n "$nqn" --hostnqn="$hostnqn" >/dev/null 2>&1; then
	ktap_test_pass "nvme_connect_over_loop"
else
	ktap_test_fail "nvme_connect_over_loop"
fi
rblk=""
for _ in $(seq 50); do
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
		for n in "$c"/nvme*n*; do [ -e "$n/size" ] && rblk=/dev/${n##*/}; done
	done
	[ -n "$rblk" ] && [ -b "$rblk" ] && break
	sleep 0.2
done
if [ -n "$rblk" ] && dd if=/dev/urandom of=/tmp/nvmet.pat bs=1M count=4 status=none &&
   dd if=/tmp/nvmet.pat of="$rblk" bs=1M seek=56 oflag=direct status=none &&
   dd if="$rblk" of=/tmp/nvmet.back bs=1M skip=56 count=4 iflag=direct status=none &&
   cmp -s /tmp/nvmet.pat /tmp/nvmet.back; then
	ktap_test_pass "loop_target_io_bytes_match_no_p2p_on_loop"
else
	ktap_print_msg "remote namespace '${rblk:-none}'"
	ktap_test_fail "loop_target_io_bytes_match_no_p2p_on_loop"
fi

nvme disconnect -n "$nqn" >/dev/null 2>&1
rm -f "$port/subsystems/$nqn"
rmdir "$port"
echo 0 > "$ns/enable"
rmdir "$ns" "$sub"
ktap_finished
