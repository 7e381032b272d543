#!/bin/bash
# shellcheck disable=SC2317  # the topology helpers are called from a sourced file
# SPDX-License-Identifier: GPL-2.0
#
# Boot a built kernel in QEMU (q35) on a named topology and run one command
# in the guest. The host root is shared read-only over virtio-9p, so guest
# commands are the host's own binaries and this checkout's scripts.
#
# The guest's command output goes to a second serial port (output.log), the
# kernel console to the first (console.log); both live in a fresh run
# directory under build/runs/ together with new scratch disk images. The
# command's exit status comes back as the run's exit status.
#
# Usage: qemu/run.sh [-k release|debug] [-t TOPO[+TOPO...]] [-T SECONDS] [-q] -- CMD [ARG...]
#   -k  kernel flavour (default release)
#   -t  topology: a file qemu/topologies/TOPO.sh (default switch); several
#       joined by '+' are booted together in one machine (their device ids,
#       serials and slots are distinct, and they must agree on the CPU)
#   -T  global timeout in seconds (default 600)
#   -q  do not stream the guest output while it runs
# Environment: ACCEL=tcg|kvm forces the accelerator (default: probe KVM once,
# fall back to TCG), QEMU_EXTRA appends QEMU arguments, CMDLINE_EXTRA
# appends kernel arguments, BZIMAGE names another bzImage, RUN_NAME names the
# run directory (default: the topology), TCG_THREAD=single runs all vCPUs
# of the guest in one host thread (tests/run-all.sh does), P9_CACHE sets
# the 9p cache mode of the guest's root (default loose; empty for none).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
case $top in
*[[:space:]]*)
	echo "qemu/run.sh: the checkout path '$top' contains white space, which" \
		"the kernel command line (init=) cannot carry; clone it elsewhere" >&2
	exit 2 ;;
esac
flavour=release topo=switch timeout=600 stream=1
while getopts k:t:T:q opt; do
	case $opt in
	k) flavour=$OPTARG ;;
	t) topo=$OPTARG ;;
	T) timeout=$OPTARG ;;
	q) stream=0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: qemu/run.sh [-k flavour] [-t topo] [-T secs] -- CMD..." >&2; exit 2; }
# The guest sees the host root, but not our working directory.
cmd=$1
shift
case $cmd in /*) ;; */*) cmd=$(realpath "$cmd") ;; esac
set -- "$cmd" "$@"

IFS=+ read -ra topo_names <<< "$topo"
for t in "${topo_names[@]}"; do
	if [ ! -f "$top/qemu/topologies/$t.sh" ]; then
		echo "qemu/run.sh: unknown topology '$t'; valid ones:" \
			"$(find "$top/qemu/topologies" -name '*.sh' -printf '%f\n' | sed 's/\.sh$//' | sort | tr '\n' ' ')" >&2
		exit 2
	fi
done
kernel=${BZIMAGE:-$(kout "$flavour")/arch/x86/boot/bzImage}
[ -f "$kernel" ] || { echo "qemu/run.sh: $kernel not built (make kernel-$flavour KERNEL=$KERNEL)" >&2; exit 2; }
# This script builds nothing: the guest runs whatever build/ holds. Name a
# program older than its source, which would test code that is not this
# checkout's (make test builds everything first, so it never warns there).
stale=""
newer() { # OUT SRC...: record OUT if a SRC is newer
	local out=$1 src
	shift
	[ -z "$stale" ] && [ -e "$out" ] || return 0
	for src in "$@"; do
		[ "$src" -nt "$out" ] && stale="${out#"$top"/} is older than ${src#"$top"/}"
	done
	return 0
}
sdir=tools/testing/selftests/p2pdma
for src in "$top"/tools/*.c; do
	newer "$top/build/bin/$(basename "$src" .c)" "$src"
done
newer "$top/build/bin/p2pdma" "$top"/tools/pci/p2pdma/*.[ch]
for src in "$top/$sdir"/*.c; do
	newer "$top/build/selftests-$KERNEL/install/p2pdma/$(basename "$src" .c)" \
		"$src" "$top/$sdir/p2pdma_util.h"
done
for src in "$top/$sdir"/*.sh; do
	newer "$top/build/selftests-$KERNEL/install/p2pdma/$(basename "$src")" "$src"
done
[ -z "$stale" ] ||
	echo "qemu/run.sh: warning: $stale; run 'make tools selftests' first" >&2

run=$top/build/runs/${RUN_NAME:-$topo}-$flavour-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$run"

# Helpers the topology files call.
cpu=max
mem=1G
qargs=()
append=()
dev() { qargs+=(-device "$1"); }
# global DRIVER.PROPERTY=VALUE: a machine-wide QEMU default (-global).
global() { qargs+=(-global "$1"); }
# monitor_relay: a guest test may ask QEMU's monitor for a device_del
# (qemu/qmp-relay.py), as a hand pulls a card out.
relay_wanted=0
monitor_relay() { relay_wanted=1; }
cpu_set=""
cpu() {
	if [ -n "$cpu_set" ] && [ "$cpu_set" != "$1" ]; then
		echo "qemu/run.sh: topologies '$topo' disagree on the CPU ($cpu_set, $1)" >&2
		exit 2
	fi
	cpu=$1 cpu_set=$1
}
# guest_env VAR=VALUE: reaches the guest's init as an environment variable;
# kernel_arg ARG: a kernel parameter. Both travel on the kernel command line.
guest_env() { append+=("$1"); }
kernel_arg() { append+=("$1"); }
# expect_skip PATTERN: a guest case "suite-id: case" matching this shell
# pattern may SKIP without failing `make test` (tests/run-all.sh); any other
# skip is a failure, since the topology provides what the suites need.
expect_skip() { echo "$1" >> "$run/expected-skips"; }
# scenario NAME SRC MEM DST EXPECT_SRC EXPECT_DST DIST_SRC DIST_DST: a set
# of roles the guest suites run (tests/guest/all.sh): NVMe serials of the
# source, the P2P memory provider and the destination, the map type
# expected from the provider to the source and to the destination
# ("bus-address", "through-host-bridge" or "refused"), and the distance
# expected for each ("-" when refused): the links between the two, plus
# 1024 per host bridge a route through the root complex uses (see
# p2pdma.rst). The first scenario of a machine also gives P2P_SRC... to
# `make run`.
nscenario=0
scenario() {
	[ $# = 8 ] || { echo "qemu/run.sh: scenario needs 8 fields: $*" >&2; exit 2; }
	nscenario=$((nscenario + 1))
	guest_env "P2P_SCN_$nscenario=$1,$2,$3,$4,$5,$6,$7,$8"
	if [ "$nscenario" = 1 ]; then
		guest_env "P2P_SRC=$2"
		guest_env "P2P_MEM=$3"
		guest_env "P2P_DST=$4"
		guest_env "P2P_EXPECT_SRC=$5"
		guest_env "P2P_EXPECT_DST=$6"
	fi
}
# nvme SERIAL BUS [CMB_MiB [PROPS]]: an NVMe controller with a fresh 64 MiB
# disk; CMB_MiB may be empty, PROPS are extra device properties (addr=...).
nvme() {
	local serial=$1 bus=$2 cmb=${3:-} extra=""
	truncate -s 64M "$run/$serial.img"
	qargs+=(-drive "file=$run/$serial.img,if=none,id=d-$serial,format=raw,cache=none,aio=threads")
	[ -n "$cmb" ] && extra=",cmb_size_mb=$cmb"
	[ -n "${4:-}" ] && extra+=",$4"
	# QEMU serves DMA into another device's BAR (a CMB) through a bounce
	# buffer of 4 KiB by default; 64 MiB lets a whole I/O through at once.
	dev "nvme,serial=$serial,drive=d-$serial,bus=$bus,x-max-bounce-buffer-size=67108864$extra"
}
# ivshmem ID BUS SIZE: an ivshmem-plain device whose BAR 2 (64-bit,
# prefetchable) is SIZE (a power of two, e.g. 256M) of host RAM; no driver
# binds it until the guest binds p2pmem-bar to it (1af4:1110). The memory
# is private to QEMU (share=off), like the guest's own RAM: with share=on
# (host shared memory) the emulated NVMe's DMA into it ran at 0.7-0.8 of
# its DMA into guest RAM, which measured the host, not the P2P path.
ivshmem() {
	qargs+=(-object "memory-backend-ram,id=mem-$1,size=$3,share=off")
	dev "ivshmem-plain,memdev=mem-$1,bus=$2,id=$1"
}
for t in "${topo_names[@]}"; do
	# shellcheck source=/dev/null
	. "$top/qemu/topologies/$t.sh"
done
case $flavour in debug | kcsan) mem=2G ;; esac

accel=${ACCEL:-}
if [ -z "$accel" ]; then
	if [ -f "$top/build/accel" ]; then
		accel=$(cat "$top/build/accel")
	else
		accel=$("$top/qemu/probe-accel.sh" "$kernel")
		echo "$accel" > "$top/build/accel"
	fi
fi

[ "$accel" = tcg ] || TCG_THREAD=""

# The host root is read-only and nothing the guest reads changes while it
# runs, so the guest may cache it: with cache=loose an executable is read
# over 9p once, not at every exec (P9_CACHE= turns that off).
p9_cache=${P9_CACHE-loose}
cmdline="console=ttyS0 root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144${p9_cache:+,cache=$p9_cache}"
# Under TCG on a loaded host the IO-APIC timer check at boot can miss its
# ticks and panic ("IO-APIC + timer doesn't work!"), seen with five guests
# and two kernel builds on two cores; the emulated timer is fine, the
# check's window is not: no_timer_check skips it.
cmdline+=" ro panic=-1 loglevel=7 no_timer_check init=$top/guest/init.sh ${append[*]}"
cmdline+=" P2P_REFUSED_ERRNO=$krefused P2P_KERNEL=$KERNEL ${CMDLINE_EXTRA:-} -- $*"

echo "qemu: topology $topo, kernel $flavour, accel $accel, run dir ${run#"$top"/}"
touch "$run/output.log"
if [ "$stream" = 1 ]; then
	tail -n +1 -f "$run/output.log" --pid=$$ | grep --line-buffered -v '^P2PDMA-EXIT ' &
	tailer=$!
fi

# The relay a topology asked for (monitor_relay) ends when QEMU does. Its
# socket lives in a directory of its own: a UNIX socket's path must be
# short (108 bytes), a checkout's need not be.
relay="" qmp=()
if [ "$relay_wanted" = 1 ]; then
	qmpdir=$(mktemp -d "${TMPDIR:-/tmp}/p2pdma-qmp.XXXXXX")
	qmp=(-qmp "unix:$qmpdir/qmp.sock,server=on,wait=off")
	python3 "$top/qemu/qmp-relay.py" "$run" "$qmpdir/qmp.sock" &
	relay=$!
fi

rc=0
timeout -k 10 "$timeout" qemu-system-x86_64 \
	-machine q35 -accel "$accel${TCG_THREAD:+,thread=$TCG_THREAD}" -cpu "$cpu$kcpuflags" -smp 2 -m "$mem" \
	-nodefaults -display none -no-reboot \
	-kernel "$kernel" -append "$cmdline" \
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root \
	-serial "file:$run/console.log" -serial "file:$run/output.log" \
	"${qmp[@]}" "${qargs[@]}" ${QEMU_EXTRA:+$QEMU_EXTRA} || rc=$?

sleep 0.3
[ "$stream" = 1 ] && kill "$tailer" 2>/dev/null
if [ -n "$relay" ]; then
	kill "$relay" 2>/dev/null
	rm -rf "$qmpdir"
fi
wait 2>/dev/null || true

if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "qemu: TIMEOUT after ${timeout}s; last console lines:" >&2
	tail -n 40 "$run/console.log" >&2
	exit 124
fi
status=$(sed -n 's/^P2PDMA-EXIT \([0-9]*\).*/\1/p' "$run/output.log" | tail -n 1)
if [ -z "$status" ]; then
	echo "qemu: the guest ended without reporting a status (qemu rc $rc); last console lines:" >&2
	tail -n 40 "$run/console.log" >&2
	exit 125
fi
echo "$run" > "$top/build/last-run"
exit "$status"
