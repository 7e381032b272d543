#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make run` in the guest: show the P2P providers and routes, then move a
# random pattern NVMe -> P2P memory (another NVMe's CMB, mmapped through
# p2pmem/allocate) -> NVMe with O_DIRECT, verify it byte for byte, and
# compare the throughput with the same copy through host RAM.
# Roles come from the topology: P2P_SRC, P2P_MEM, P2P_DST (NVMe serials).
# A leg our policy refuses is reported with its reason and errno, and the
# copy is completed through the provider's own namespace instead.
# With an ivshmem device in the topology (P2P_IVSHMEM, vendor:device), the
# administrator binds the generic provider p2pmem-bar to it, and a second
# leg copies NVMe -> its RAM-backed P2P memory -> NVMe between two NVMe its
# route allows, compared with the same copy through host RAM.
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/guest/lib.sh"
p2pcopy=$top/build/bin/p2pcopy
mib=16

fail() { echo "make run: FAILED: $*"; exit 1; }

mem_bdf=$(nvme_bdf "$P2P_MEM") || fail "no provider $P2P_MEM"
src_bdf=$(nvme_bdf "$P2P_SRC") || fail "no source $P2P_SRC"
dst_bdf=$(nvme_bdf "$P2P_DST") || fail "no destination $P2P_DST"
src=$(nvme_blk "$P2P_SRC") || fail "no namespace on $P2P_SRC"
dst=$(nvme_blk "$P2P_DST") || fail "no namespace on $P2P_DST"
mem=$(nvme_blk "$P2P_MEM") || fail "no namespace on $P2P_MEM"

iv_bdf=""
if [ -n "${P2P_IVSHMEM:-}" ]; then
	iv_bdf=$(ivshmem_bdf "$P2P_IVSHMEM") || fail "no ivshmem $P2P_IVSHMEM"
	echo "== Binding the ivshmem $iv_bdf ($P2P_IVSHMEM) to the generic provider p2pmem-bar"
	bind_p2pmem_bar "$iv_bdf" || fail "binding p2pmem-bar to $iv_bdf"
fi

echo "== P2P providers (PCI address, bytes)"
p2p_providers
echo "== Routes to the P2P memory of $mem_bdf ($P2P_MEM): map type, distance, reason"
for c in "$P2P_SRC:$src_bdf" "$P2P_DST:$dst_bdf"; do
	echo "  client ${c#*:} (${c%%:*}): $(route "$mem_bdf" "${c#*:}")"
done

dd if=/dev/urandom of=/tmp/pattern bs=1M count=$mib status=none
dd if=/tmp/pattern of="$src" bs=1M oflag=direct conv=fsync status=none || fail "writing the pattern to $src"

echo "== O_DIRECT copy of $mib MiB: $src -> P2P memory of $mem_bdf -> $dst"
# p2p_copy: $src -> P2P memory -> $dst at 32 MiB; exit 3/4 = read/write
# refused, with the errno qemu/run.sh says this kernel's block layer gives
refused_errno=${P2P_REFUSED_ERRNO:-EREMOTEIO}
p2p_copy() {
	"$p2pcopy" -m "$mem_bdf" -s "$src" -d "$dst" -n $((mib << 20)) -c 1048576 -D $((32 << 20)) \
		-E "$refused_errno"
}
# refused BDF ROLE: BDF cannot reach the P2P memory; say so, and that the
# provider's own namespace plays ROLE instead.
refused() {
	echo "  refused ($refused_errno): $1 cannot reach the P2P memory: $(route "$mem_bdf" "$1")"
	echo "  using the provider's own namespace $mem as the $2 instead"
}
p2p_copy
rc=$?
if [ $rc = 3 ]; then
	refused "$src_bdf" source
	src=$mem
	dd if=/tmp/pattern of="$src" bs=1M oflag=direct conv=fsync status=none || fail "pattern to $src"
	p2p_copy
	rc=$?
fi
if [ $rc = 4 ]; then
	refused "$dst_bdf" destination
	dst=$mem
	p2p_copy
	rc=$?
fi
[ $rc = 0 ] || fail "P2P copy (p2pcopy exit $rc)"

dd if="$dst" of=/tmp/readback bs=1M skip=32 count=$mib iflag=direct status=none || fail "reading back $dst"
cmp /tmp/pattern /tmp/readback || fail "bytes differ after the P2P copy"
echo "  $mib MiB verified byte for byte on $dst"

echo "== Same copy through host RAM"
"$p2pcopy" -r -s "$src" -d "$dst" -n $((mib << 20)) -c 1048576 -D $((48 << 20)) || fail "RAM copy"
dd if="$dst" of=/tmp/readback bs=1M skip=48 count=$mib iflag=direct status=none || fail "reading back $dst"
cmp /tmp/pattern /tmp/readback || fail "bytes differ after the RAM copy"

# mbps OUTPUT: the MB/s figure of a p2pcopy report
mbps() { sed -n 's/.* \([0-9.]*\) MB\/s$/\1/p' "$1"; }

if [ -n "$iv_bdf" ]; then
	echo "== Routes to the P2P memory of $iv_bdf (ivshmem, p2pmem-bar): map type, distance, reason"
	iv_src="" iv_dst=""
	for sn in "$P2P_SRC" "$P2P_MEM" "$P2P_DST"; do
		b=$(nvme_bdf "$sn") || fail "no NVMe $sn"
		r=$(route "$iv_bdf" "$b")
		echo "  client $b ($sn): $r"
		case $r in refused*) continue ;; esac
		if [ -z "$iv_src" ]; then iv_src=$sn; elif [ -z "$iv_dst" ]; then iv_dst=$sn; fi
	done
	[ -n "$iv_dst" ] || fail "fewer than two NVMe reach the P2P memory of $iv_bdf"
	s=$(nvme_blk "$iv_src") || fail "no namespace on $iv_src"
	d=$(nvme_blk "$iv_dst") || fail "no namespace on $iv_dst"
	echo "== O_DIRECT copy of $mib MiB: $s ($iv_src) -> P2P memory of $iv_bdf (ivshmem) -> $d ($iv_dst),"
	echo "   against the same copy through host RAM: three rounds, alternating, bytes compared each time"
	dd if=/tmp/pattern of="$s" bs=1M oflag=direct conv=fsync status=none || fail "writing the pattern to $s"
	p2p=0 ram=0
	for round in 1 2 3; do
		"$p2pcopy" -m "$iv_bdf" -s "$s" -d "$d" -n $((mib << 20)) -c 1048576 -D $((16 << 20)) \
			> /tmp/iv-p2p || fail "P2P copy through $iv_bdf"
		dd if="$d" of=/tmp/readback bs=1M skip=16 count=$mib iflag=direct status=none || fail "reading back $d"
		cmp -s /tmp/pattern /tmp/readback || fail "bytes differ after the P2P copy through $iv_bdf"
		"$p2pcopy" -r -s "$s" -d "$d" -n $((mib << 20)) -c 1048576 -D 0 > /tmp/iv-ram || fail "RAM copy"
		dd if="$d" of=/tmp/readback bs=1M count=$mib iflag=direct status=none || fail "reading back $d"
		cmp -s /tmp/pattern /tmp/readback || fail "bytes differ after the RAM copy"
		p=$(mbps /tmp/iv-p2p) r=$(mbps /tmp/iv-ram)
		echo "  round $round: P2P $p MB/s, host RAM $r MB/s, $mib MiB verified both ways"
		p2p=$(awk -v a="$p2p" -v b="$p" 'BEGIN { print (b > a ? b : a) }')
		ram=$(awk -v a="$ram" -v b="$r" 'BEGIN { print (b > a ? b : a) }')
	done
	echo "  best of 3: ivshmem P2P $p2p MB/s, host RAM $ram MB/s: P2P/RAM = $(awk -v p="$p2p" -v r="$ram" 'BEGIN { printf "%.2f", p / r }')"
fi

echo "== Providers after the copies"
p2p_providers
ivmsg=""
[ -n "$iv_bdf" ] && ivmsg="; $mib MiB $iv_src -> ivshmem $iv_bdf (p2pmem-bar) -> $iv_dst, P2P/RAM $(awk -v p="$p2p" -v r="$ram" 'BEGIN { printf "%.2f", p / r }')"
# Which core ran: ours has the host-bridge policy parameter, upstream's not.
core="the kernel's own P2PDMA core"
[ -e /sys/module/pci_p2pdma/parameters/host_bridges ] && core="our P2PDMA core"
echo "make run: OK ($(uname -r), $core): $mib MiB moved $src -> P2P memory of $mem_bdf -> $dst and verified$ivmsg"
