#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fio writes and verifies through I/O buffers mmapped from the provider's
# p2pmem/allocate, with O_DIRECT, on the provider's own namespace (a route
# that always works), for several block sizes and two I/O engines.
# Environment: P2P_MEM, the provider's NVMe serial.
dir=$(dirname "$0")
# shellcheck source=/dev/null
. "$dir/../kselftest/ktap_helpers.sh"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

ktap_print_header
bdf=$(nvme_bdf "${P2P_MEM:-}") && blk=$(nvme_blk "$P2P_MEM")
if [ -z "${blk:-}" ] || ! command -v fio >/dev/null; then
	ktap_skip_all "needs fio and an NVMe with a CMB (P2P_MEM)"
	exit "$KSFT_SKIP"
fi
alloc=/sys/bus/pci/devices/$bdf/p2pmem/allocate
before=$(cat "/sys/bus/pci/devices/$bdf/p2pmem/available")
ktap_set_plan 5

run_fio() { # NAME ENGINE BS
	local out
	if out=$(fio --name="$1" --filename="$blk" --direct=1 --ioengine="$2" \
		--iodepth=4 --rw=randwrite --bs="$3" --size=8M --offset=40M \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--iomem="mmapshared:$alloc" --output-format=terse 2>&1); then
		ktap_test_pass "fio_verify_$1"
	else
		echo "$out" | tail -n 5 | sed 's/^/# /'
		ktap_test_fail "fio_verify_$1"
	fi
}
run_fio libaio_4k libaio 4k
run_fio libaio_64k libaio 64k
run_fio libaio_1m libaio 1m
run_fio io_uring_128k io_uring 128k

after=$(cat "/sys/bus/pci/devices/$bdf/p2pmem/available")
if [ "$after" = "$before" ]; then
	ktap_test_pass "fio_returns_all_p2pmem"
else
	ktap_print_msg "available $before before, $after after"
	ktap_test_fail "fio_returns_all_p2pmem"
fi
ktap_finished
