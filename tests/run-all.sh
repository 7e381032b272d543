#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test`: boot the debug kernel on each machine of tests/machines (a
# machine is one or more topologies booted together), run the guest suites
# (tests/guest/all.sh), and turn everything into one TAP stream with a
# closing "N passed, N failed, N skipped" line. Exit status 1 on any failure.
#
# tests/judge.sh judges the logs (and can judge saved ones alone): every
# suite and its number of cases must be as tests/plan says, and nothing
# missing counts as passed (see there).
# One more short boot runs a guest script from a copy of the checkout under
# /tmp (the guest's own tmpfs hides the host's /tmp). Machines boot
# P2P_JOBS at a time, kunit.py's run counted (default 5: the four long
# machines and kunit.py first, the short hotplug and checkout boots as
# places free up; a TCG guest waits on its 9p root and its emulated
# devices much of the time, so four guests share two host CPUs with
# little loss). The time of each boot and each suite is printed at the
# end.
#
# Usage: tests/run-all.sh [MACHINE | TOPO[+TOPO...]]...  (default: the
# machines of this kernel, scripts/kernel.sh kmachines: all on 6.12)
# Environment: TEST_TIMEOUT per boot in seconds (default 2700: the
# longest boot takes ~1050 s on a quiet host and was seen at ~1850 s on a
# slow one; the timeout is for a hung guest, not a budget), P2P_JOBS,
# TEST_KERNEL another bzImage to boot (e.g. one with a fault injected),
# TEST_FLAVOUR the kernel flavour (default debug; kcsan: scripts/test-kcsan.sh),
# TCG_THREAD the TCG threading of each guest (default single, see below),
# P2P_RESULTS a file to which each result is also written as one line
# "ok|notok|skip<TAB>name<TAB>detail" (scripts/test-upstream.sh),
# P2P_FUZZ_CORE the core TEST_KERNEL was built with, for the route
# fuzzing's rules (p2pdma_fuzz.core: ours by default, 6.12 or 7.3).
set -uo pipefail

# shellcheck source=tests/judge.sh
. "$(dirname "$0")/judge.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
timeout=${TEST_TIMEOUT:-2700}
jobs=${P2P_JOBS:-5}
runs=$top/build/test-runs
rm -rf "$runs"
mkdir -p "$runs"
[ -z "${P2P_RESULTS:-}" ] || : > "$P2P_RESULTS"
# All machines of tests/machines (1), or those named (0): by default
# those that run on this kernel (kmachines, scripts/kernel.sh).
# shellcheck disable=SC2086  # a list of names
[ $# -gt 0 ] || [ -z "$kmachines" ] || set -- $kmachines
full=1
[ $# = 0 ] || full=0

# name topologies extra-arguments, one machine a line.
declare -a m_name m_topo m_extra
while read -r name topo extra; do
	case $name in '#'* | '') continue ;; esac
	m_name+=("$name") m_topo+=("$topo") m_extra+=("${extra:--}")
done < "$top/tests/machines"
if [ $# -gt 0 ]; then
	declare -a s_name s_topo s_extra
	for want in "$@"; do
		found=0
		for i in "${!m_name[@]}"; do
			[ "${m_name[$i]}" = "$want" ] || continue
			s_name+=("$want") s_topo+=("${m_topo[$i]}") s_extra+=("${m_extra[$i]}")
			found=1
		done
		[ $found = 1 ] || { s_name+=("${want//+/_}") s_topo+=("$want") s_extra+=(-); }
	done
	m_name=("${s_name[@]}") m_topo=("${s_topo[@]}") m_extra=("${s_extra[@]}")
fi

echo "TAP version 13"

# The kernel under test must be built from our P2PDMA core (the directory
# drivers/pci/p2pdma/) and header, not the tree's p2pdma.c.
flavour=${TEST_FLAVOUR:-debug}
tree=$ktree out=$(kout "$flavour")
# ours_in_tree PATH: the tree has our file PATH: a link to it or, where the
# backport patches it, the same text as our file patched.
backported=$(mktemp -d)
trap 'rm -rf "$backported"' EXIT
[ "$kbackported" = " " ] || kbackport_to "$backported" || exit 1
ours_in_tree() {
	local t=$tree/$1
	[ "$(readlink "$t")" = "$top/$1" ] && return 0
	is_backported "$1" && [ ! -L "$t" ] && cmp -s "$backported/$1" "$t"
}
ours_built() {
	local f
	ours_in_tree include/linux/pci-p2pdma.h || return 1
	for f in "$top"/drivers/pci/p2pdma/*.c; do
		ours_in_tree "drivers/pci/p2pdma/${f##*/}" || return 1
		# The file the build compiled (a link follows to ours).
		[ "$out/drivers/pci/p2pdma/built-in.a" -nt "$tree/drivers/pci/p2pdma/${f##*/}" ] ||
			return 1
	done
	grep -q "$(sed -n 's/.*"\(P2PDMA to\/from client\) .*/\1/p' "$top/drivers/pci/p2pdma/route.c")" "$out/vmlinux"
}
if ours_built; then
	tap ok "$flavour kernel is built from our drivers/pci/p2pdma/ and pci-p2pdma.h"
else
	tap notok "$flavour kernel is built from our drivers/pci/p2pdma/ and pci-p2pdma.h"
fi
# The functions of our code, by which tests/judge.sh tells a KCSAN report
# about our code from the others.
nm "$out/drivers/pci/p2pdma/built-in.a" "$out/drivers/pci/p2pmem-bar.o" 2>/dev/null |
	awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$runs/ours-symbols"

# Probe the accelerator once, before boots run side by side.
[ -f "$top/build/accel" ] || "$top/qemu/probe-accel.sh" "$out/arch/x86/boot/bzImage" > "$top/build/accel"

# The route fuzzing (drivers/pci/p2pdma/tests/p2pdma-fuzz.c) wherever KUnit runs: seeds 1..N,
# each a random hierarchy; 100 take about 50 s on the debug kernel and
# kill the route mutants (tests/mutants). make test-upstream runs 10,000,
# and boots the kernel's own core with its rules (P2P_FUZZ_CORE): held to
# ours, every part fails and prints its seeds, past the hung-task limit.
fuzz_seeds="p2pdma_fuzz.seeds=100${P2P_FUZZ_CORE:+ p2pdma_fuzz.core=$P2P_FUZZ_CORE}"
# watchdog_thresh=60: five emulated guests share two host CPUs, and a
# vCPU thread the host does not run for 20 s is no soft lockup of the
# guest's (the default threshold, 2 x 10 s, reported exactly that).
# Soft lockups are still reported after 120 s; hung tasks after 45 s.
# rcupdate.rcu_cpu_stall_timeout=60 for the same reason: a boot whose
# vCPUs the host starved while it calibrated the TSC jumped jiffies
# by 37 s at the switch to that clocksource, and the stall detector
# (21 s by default) reported the jump; stalls still count after 60 s.
# Every guest of the run takes them, kunit.py's too: it runs beside the
# machines, and without them a CI host's starvation of its one vCPU was
# reported as an RCU stall 77 s into its boot.
shared_host="watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=60"

# boot NAME TOPO EXTRA [CHECKOUT [CMD...]]: one QEMU run in the background
# of this shell's job table; writes $runs/NAME.{out,rc,secs}.
boot() {
	local name=$1 topo=$2 extra=$3 co=${4:-$top} start rc
	shift 4 2>/dev/null || shift $#
	[ $# -gt 0 ] || set -- "$co/tests/guest/all.sh"
	[ "$extra" = - ] && extra=""
	start=$(date +%s)
	# TCG_THREAD=single: QEMU 10's multi-threaded TCG once aborted in
	# iotlb_to_section() while a guest programmed BARs; the guests run side
	# by side anyway, so one host thread each loses nothing. The KCSAN
	# run asks for multi: its vCPUs must run at the same time for a
	# watchpoint of one to see the other's access.
	BZIMAGE=${TEST_KERNEL:-$out/arch/x86/boot/bzImage} RUN_NAME=$name TCG_THREAD=${TCG_THREAD:-single} \
		CMDLINE_EXTRA="$shared_host $fuzz_seeds ${extra//,/ }" \
		"$co/qemu/run.sh" -q -k "$flavour" -t "$topo" -T "$timeout" -- "$@" > "$runs/$name.out" 2>&1
	rc=$?
	echo $rc > "$runs/$name.rc"
	echo $(($(date +%s) - start)) > "$runs/$name.secs"
}

# A copy of the harness part of the checkout under /tmp, for the
# checkout-path boot.
co=""
if [ $# = 0 ]; then
	co=$(mktemp -d /tmp/p2pdma-checkout.XXXXXX)/p2pdma
	mkdir -p "$co/build" "$co/scripts"
	cp -a "$top/guest" "$top/qemu" "$top/tests" "$top/backport" "$co/"
	cp -a "$top/scripts/kernel.sh" "$co/scripts/"
	marker=$RANDOM$RANDOM
	echo "$marker" > "$co/build/checkout-marker"
	m_name+=(checkout) m_topo+=(none) m_extra+=("kunit.enable=0,P2P_MARKER=$marker")
fi

# The machines booted, for tests/judge.sh.
for i in "${!m_name[@]}"; do
	echo "${m_name[$i]} ${m_topo[$i]} ${m_extra[$i]}"
done > "$runs/machines"

wall0=$(date +%s)
# The KUnit suites once more under the kernel's own runner and its one-CPU
# QEMU (kunit.py exec: the debug kernel, no build), beside the machines:
# every case must also hold on one CPU (tests/judge.sh, judge_kunitpy).
if [ "$full" = 1 ] && [ "$flavour" = debug ] && [ -z "${TEST_KERNEL:-}" ]; then
	: > "$runs/kunitpy.expected"
	echo "# running kunit.py exec on ${out#"$top"/}"
	(
		start=$(date +%s)
		# kunit.py leaves the kernel's log there: none from an older
		# run may stand in for a run that wrote none.
		rm -f "$out/test.log"
		kunitpy exec --arch=x86_64 \
			--build_dir="$out" --timeout=1800 --kernel_args="$shared_host $fuzz_seeds" \
			> "$runs/kunitpy.out" 2>&1
		echo $? > "$runs/kunitpy.rc"
		cp "$out/test.log" "$runs/kunitpy.console"
		echo $(($(date +%s) - start)) > "$runs/kunitpy.secs"
	) &
fi
for i in "${!m_name[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	echo "# booting ${m_name[$i]}: ${m_topo[$i]} (${m_extra[$i]})"
	if [ "${m_name[$i]}" = checkout ]; then
		boot checkout none "${m_extra[$i]}" "$co" \
			"$co/tests/guest/all.sh" --only checkout "$co/tests/guest/checkout.sh" &
	else
		boot "${m_name[$i]}" "${m_topo[$i]}" "${m_extra[$i]}" &
	fi
done
wait
wall=$(($(date +%s) - wall0))

# The checkout copy's run directory joins the others before its copy goes.
if [ -n "$co" ]; then
	mkdir -p "$top/build/runs"
	cp -a "$co"/build/runs/* "$top/build/runs/" 2>/dev/null
	rm -rf "$(dirname "$co")"
fi
judge_run "$runs" "$full"

[ -z "$kcsan_notours" ] || echo "# KCSAN reports about code that is not ours:$kcsan_notours"
echo "# time of each boot (P2P_JOBS=$jobs side by side; wall $wall s):$boots"
echo "# time of each suite in the guest:$timing"
echo "1..$n"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
