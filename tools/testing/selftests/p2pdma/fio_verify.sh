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

# One fio process runs the four jobs one after another (stonewall): one
# start-up instead of four, which under a debug kernel in an emulator costs
# more than the I/O. Terse output: one line per job, field 3 its name and
# field 5 its error (0 when the write and the crc32c verify passed).
# Each job moves 64 blocks of its size at most (a debug kernel in an
# emulator takes milliseconds per I/O): enough to wrap the 4-deep queue
# many times and to verify every block.
jobs=(libaio_4k:libaio:4k:256k libaio_64k:libaio:64k:2M libaio_1m:libaio:1m:4M
      io_uring_128k:io_uring:128k:2M)
args=()
for j in "${jobs[@]}"; do
	IFS=: read -r name engine bs size <<< "$j"
	args+=(--name="$name" --ioengine="$engine" --bs="$bs" --size="$size" --stonewall)
done
out=$(fio --filename="$blk" --direct=1 --iodepth=4 --rw=randwrite \
	--offset=40M --verify=crc32c --verify_fatal=1 --do_verify=1 \
	--iomem="mmapshared:$alloc" --output-format=terse "${args[@]}" 2>&1)
for j in "${jobs[@]}"; do
	name=${j%%:*}
	if awk -F';' -v n="$name" '$3 == n && $5 == 0 { ok = 1 } END { exit !ok }' <<< "$out"; then
		ktap_test_pass "fio_verify_$name"
	else
		echo "$out" | grep -v '^3;' | tail -n 5 | sed 's/^/# /'
		ktap_test_fail "fio_verify_$name"
	fi
done

after=$(cat "/sys/bus/pci/devices/$bdf/p2pmem/available")
if [ "$after" = "$before" ]; then
	ktap_test_pass "fio_returns_all_p2pmem"
else
	ktap_print_msg "available $before before, $after after"
	ktap_test_fail "fio_returns_all_p2pmem"
fi
ktap_finished
