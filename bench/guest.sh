#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make bench` in the guest (qemu/topologies/bench.sh): run the in-kernel
# benchmark once, then the userspace metrics, and print every result as
# "BENCH key value" (times in ns or us, memory in bytes, throughput in
# MB/s; '#' keys are information). scripts/bench.sh collects the lines.
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=guest/lib.sh
. "$top/guest/lib.sh"
p2pbench=$top/build/bin/p2pbench
d=/sys/kernel/debug/p2pdma-bench

[ -d $d ] || { echo "bench: $d missing: kernel without CONFIG_PCI_P2PDMA_BENCH"; exit 1; }
rc=0
echo run > $d/run || rc=1
sed 's/^/BENCH /' $d/results
[ $rc = 0 ] || { echo "bench: the in-kernel run failed; see the console log"; exit 1; }
big=$(awk '$2 == "big_provider" { print $3 }' $d/results)
[ -n "$big" ] || exit 1

# Metric 6: mmap of p2pmem/allocate + a write to every page + munmap,
# and mmap + munmap alone, of 64 MiB and of 1 GiB (the whole pool); for
# these two also the mmap() call and the munmap() call alone, as
# information ("# KEY_mmap_us", "# KEY_munmap_us"). Every mmap row is the
# median of its 7 rounds, the first included: the in-kernel rows leave
# most of the pool dirty (kernel users' memory), which ours clears as an
# mmap() hands it out, and that round counts like any other.
for mib in 2 64; do
	us=$("$p2pbench" mmap "$big" $((mib << 20)) 7) || exit 1
	echo "BENCH mmap_touch_${mib}m $us"
done
# What a program must do on a kernel that does not clear: zero the
# mapping itself before use (the row ours' mmap_touch_64m is compared to).
us=$("$p2pbench" mmap "$big" $((64 << 20)) 7 memset) || exit 1
echo "BENCH mmap_memset_64m $us"
for size in 64m:64 1g:1024; do
	key=mmap_notouch_${size%:*}
	us=$("$p2pbench" mmap "$big" $((${size#*:} << 20)) 7 notouch split) || exit 1
	# shellcheck disable=SC2086 # "TOTAL MMAP MUNMAP", split on purpose
	set -- $us
	[ $# = 3 ] || { echo "bench: p2pbench split printed '$us'"; exit 1; }
	echo "BENCH $key $1"
	echo "BENCH # ${key}_mmap_us $2"
	echo "BENCH # ${key}_munmap_us $3"
done
# The clearing's own speed: the kernel's clearing of the whole pool,
# written by the round before, against a memset() of it by a program.
# Three rounds: each writes the 1 GiB from userspace (~4 s under TCG).
size=$(cat "/sys/bus/pci/devices/$big/p2pmem/size") || exit 1
us=$("$p2pbench" clear "$big" "$size" 3) || exit 1
# shellcheck disable=SC2086 # "CLEAR MEMSET", split on purpose
set -- $us
[ $# = 2 ] || { echo "bench: p2pbench clear printed '$us'"; exit 1; }
echo "BENCH clear_pool_us $1"
echo "BENCH memset_pool_us $2"

# Metric 7: O_DIRECT reads from one NVMe into P2P memory, then into RAM.
# Mapping right after a writer gave 64 MiB back (dirty): what preferring
# clean memory saves.
us=$("$p2pbench" mmap "$big" $((64 << 20)) 7 notouch afterdirty) || exit 1
echo "BENCH mmap_notouch_after_dirty_64m $us"

nvme=$(nvme_blk "$BENCH_NVME") || exit 1
for via in p2p ram; do
	buf=$via
	[ $via = p2p ] && buf=$big
	mbps=$("$p2pbench" read "$buf" "$nvme" $((32 << 20)) $((1 << 20)) 5) || exit 1
	echo "BENCH read_${via}_mbps $mbps"
done

# Metric 9: a peer's DMA mapping of 2 MiB of device-private memory (the
# mm patch's HMM_PFN_REQ_P2P against 6.12's migration to RAM), with the
# ivshmem p2pdma-bench left unbound, bound to the test owner.
owner=
for dev in /sys/bus/pci/devices/*; do
	[ "$(cat "$dev/vendor"):$(cat "$dev/device")" = 0x1af4:0x1110 ] || continue
	[ -e "$dev/driver" ] || owner=${dev##*/}
done
[ -n "$owner" ] || { echo "bench: no unbound ivshmem for the HMM owner"; exit 1; }
echo hmm-p2p-owner > "/sys/bus/pci/devices/$owner/driver_override"
echo "$owner" > /sys/bus/pci/drivers_probe
[ -e "/sys/bus/pci/drivers/hmm-p2p-owner/$owner" ] ||
	{ echo "bench: $owner did not bind to hmm-p2p-owner"; exit 1; }
out=$("$p2pbench" hmm $((2 << 20)) 5) || exit 1
# shellcheck disable=SC2086 # "P2P_US RAM_US P2P_BYTES RAM_BYTES", split on purpose
set -- $out
[ $# = 4 ] || { echo "bench: p2pbench hmm printed '$out'"; exit 1; }
echo "BENCH hmm_p2p_2m $1"
echo "BENCH hmm_migrate_2m $2"
echo "BENCH hmm_p2p_ram_bytes $3"
echo "BENCH hmm_migrate_ram_bytes $4"
echo BENCH-DONE
