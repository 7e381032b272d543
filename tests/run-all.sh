#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test`: boot the debug kernel on each machine of tests/machines (a
# machine is one or more topologies booted together), run the guest suites
# (tests/guest/all.sh), and turn everything into one TAP stream with a
# closing "N passed, N failed, N skipped" line. Exit status 1 on any failure.
#
# Nothing missing counts as passed:
#  - every guest suite declares its plan; a planned case that did not
#    report, a suite that never ended, a suite's non-zero exit status, a
#    missing plan, and a skip the topology did not declare are failures;
#  - a boot that timed out, ended without the guest's exit status, or with
#    a non-zero one fails; so does a missing console log;
#  - the KUnit suites built into the kernel must all appear, each with as
#    many results as its plan (a KUnit SKIP counts as skipped);
#  - a checker report in a console log (KASAN, lockdep, kmemleak, WARNING,
#    BUG, hung task, soft lockup, RCU stall) is a failure.
# One more short boot runs a guest script from a copy of the checkout under
# /tmp (the guest's own tmpfs hides the host's /tmp). Machines boot
# P2P_JOBS at a time (default 5, all of them: a TCG guest waits on its 9p
# root and its emulated devices much of the time, so four guests share two
# host CPUs with little loss). The time of each boot and each suite is
# printed at the end.
#
# Usage: tests/run-all.sh [MACHINE | TOPO[+TOPO...]]...  (default: all machines)
# Environment: TEST_TIMEOUT per boot in seconds (default 1800), P2P_JOBS,
# TEST_KERNEL another bzImage to boot (e.g. one with a fault injected),
# P2P_RESULTS a file to which each result is also written as one line
# "ok|notok|skip<TAB>name<TAB>detail" (scripts/test-upstream.sh).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
timeout=${TEST_TIMEOUT:-1800}
jobs=${P2P_JOBS:-5}
runs=$top/build/test-runs
rm -rf "$runs"
mkdir -p "$runs"

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

n=0 passed=0 failed=0 skipped=0
[ -z "${P2P_RESULTS:-}" ] || : > "$P2P_RESULTS"
tap() { # tap ok|notok|skip NAME [DETAIL]
	n=$((n + 1))
	case $1 in
	ok) passed=$((passed + 1)); echo "ok $n - $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok $n - $2 # SKIP ${3:-}" ;;
	*) failed=$((failed + 1)); echo "not ok $n - $2${3:+: $3}" ;;
	esac
	if [ -n "${P2P_RESULTS:-}" ]; then
		local d=${3:-}
		printf '%s\t%s\t%s\n' "$1" "$2" "${d//$'\n'/ }" >> "$P2P_RESULTS"
	fi
}

echo "TAP version 13"

# The kernel under test must be built from our P2PDMA core (the directory
# drivers/pci/p2pdma/) and header, not the tree's p2pdma.c.
tree=$top/build/linux-source-6.12 out=$top/build/out-debug
ours_built() {
	local f
	[ "$(readlink "$tree/include/linux/pci-p2pdma.h")" = "$top/include/linux/pci-p2pdma.h" ] || return 1
	for f in "$top"/drivers/pci/p2pdma/*.c; do
		[ "$(readlink "$tree/drivers/pci/p2pdma/${f##*/}")" = "$f" ] || return 1
		[ "$out/drivers/pci/p2pdma/built-in.a" -nt "$f" ] || return 1
	done
	grep -q "$(sed -n 's/.*"\(P2PDMA to\/from client\) .*/\1/p' "$top/drivers/pci/p2pdma/route.c")" "$out/vmlinux"
}
if ours_built; then
	tap ok "debug kernel is built from our drivers/pci/p2pdma/ and pci-p2pdma.h"
else
	tap notok "debug kernel is built from our drivers/pci/p2pdma/ and pci-p2pdma.h"
fi

# Probe the accelerator once, before boots run side by side.
[ -f "$top/build/accel" ] || "$top/qemu/probe-accel.sh" "$out/arch/x86/boot/bzImage" > "$top/build/accel"

# boot NAME TOPO EXTRA [CHECKOUT [CMD...]]: one QEMU run in the background
# of this shell's job table; writes $runs/NAME.{out,rc,secs}.
boot() {
	local name=$1 topo=$2 extra=$3 co=${4:-$top} start rc
	shift 4 2>/dev/null || shift $#
	[ $# -gt 0 ] || set -- "$co/tests/guest/all.sh"
	[ "$extra" = - ] && extra=""
	start=$(date +%s)
	# watchdog_thresh=60: five emulated guests share two host CPUs, and a
	# vCPU thread the host does not run for 20 s is no soft lockup of the
	# guest's (the default threshold, 2 x 10 s, reported exactly that).
	# Soft lockups are still reported after 120 s; hung tasks after 45 s.
	# TCG_THREAD=single: QEMU 10's multi-threaded TCG once aborted in
	# iotlb_to_section() while a guest programmed BARs; the guests run side
	# by side anyway, so one host thread each loses nothing.
	KERNEL=${TEST_KERNEL:-$out/arch/x86/boot/bzImage} RUN_NAME=$name TCG_THREAD=single \
		CMDLINE_EXTRA="watchdog_thresh=60 ${extra//,/ }" \
		"$co/qemu/run.sh" -q -k debug -t "$topo" -T "$timeout" -- "$@" > "$runs/$name.out" 2>&1
	rc=$?
	echo $rc > "$runs/$name.rc"
	echo $(($(date +%s) - start)) > "$runs/$name.secs"
}

# A copy of the harness part of the checkout under /tmp, for the
# checkout-path boot.
co=""
if [ $# = 0 ]; then
	co=$(mktemp -d /tmp/p2pdma-checkout.XXXXXX)/p2pdma
	mkdir -p "$co/build"
	cp -a "$top/guest" "$top/qemu" "$top/tests" "$co/"
	marker=$RANDOM$RANDOM
	echo "$marker" > "$co/build/checkout-marker"
	m_name+=(checkout) m_topo+=(none) m_extra+=("kunit.enable=0,P2P_MARKER=$marker")
fi

wall0=$(date +%s)
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

# The KUnit suites the kernel must run: every suite our kunit/ defines.
kunit_suites=$(sed -n 's/^[[:space:]]*\.name = "\(p2pdma-[a-z0-9-]*\)",.*/\1/p' "$top"/kunit/*.h | sort -u)

timing=""
# report_suite MACHINE ID: read one framed suite from stdin up to its
# P2PDMA-END line (or the end of the log) and report it.
report() {
	local mname=$1 log=$2 skips=$3 id="" plan="" count=0 line name detail res
	local pfx
	finish() { # finish END-SEEN RC SECS
		[ -n "$id" ] || return 0
		pfx="$mname/$id"
		if [ -z "$plan" ]; then
			tap notok "$pfx: plan" "the suite printed no plan (1..N)"
		elif [ "$count" -lt "$plan" ]; then
			tap notok "$pfx: $((plan - count)) planned case(s) did not report" "planned $plan, got $count"
		elif [ "$count" -gt "$plan" ]; then
			tap notok "$pfx: more results than planned" "planned $plan, got $count"
		fi
		if [ "$1" = 0 ]; then
			tap notok "$pfx: suite ended" "no P2PDMA-END: the guest crashed, hung or was cut off"
		elif [ "$2" = 0 ]; then
			tap ok "$pfx: exit status 0"
		else
			tap notok "$pfx: exit status 0" "exit status $2"
		fi
		timing+=$(printf '\n#   %-8s %-34s %5s s' "$mname" "$id" "${3:--}")
		id="" plan="" count=0
	}
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"P2PDMA-SUITE "*) finish 0 - -; id=${line#P2PDMA-SUITE }; continue ;;
		"P2PDMA-END "*)
			read -r _ _ rc secs <<< "$line"
			finish 1 "$rc" "$secs"
			continue ;;
		"P2PDMA-EXIT "*) continue ;;
		esac
		if [ -z "$id" ]; then echo "# $line"; continue; fi
		if [[ $line =~ ^1\.\.([0-9]+)(.*)$ ]]; then
			[ -n "$plan" ] && { echo "# $line"; continue; }
			plan=${BASH_REMATCH[1]}
			if [ "$plan" = 0 ]; then
				name="$mname/$id: whole suite skipped${BASH_REMATCH[2]}"
				if grep -qxF "$id" "$skips" 2>/dev/null; then
					tap skip "$mname/$id" "${BASH_REMATCH[2]}"
				else
					tap notok "$name" "a skip the topology does not declare"
				fi
			fi
			continue
		fi
		if [[ $line =~ ^(not )?ok\ [0-9]+\ (-\ )?(.*)$ ]]; then
			count=$((count + 1))
			res=${BASH_REMATCH[1]:+notok}
			name=${BASH_REMATCH[3]}
			if [[ $name =~ ^(.*[^ ])\ +#\ *[Ss][Kk][Ii][Pp]\ *(.*)$ ]]; then
				name=${BASH_REMATCH[1]} detail=${BASH_REMATCH[2]}
				local pat matched=0
				while IFS= read -r pat; do
					# shellcheck disable=SC2053
					[[ "$id: $name" == $pat ]] && matched=1
				done < <(cat "$skips" 2>/dev/null)
				if [ $matched = 1 ]; then
					tap skip "$mname/$id: $name" "$detail"
				else
					tap notok "$mname/$id: $name" "skipped ($detail), but the topology provides what it needs"
				fi
				continue
			fi
			tap "${res:-ok}" "$mname/$id: $name"
			continue
		fi
		echo "# $line"
	done < "$log"
	finish 0 - -
}

boots=""
for i in "${!m_name[@]}"; do
	mname=${m_name[$i]}
	echo "# machine $mname: ${m_topo[$i]}"
	rc=$(cat "$runs/$mname.rc" 2>/dev/null || echo 255)
	secs=$(cat "$runs/$mname.secs" 2>/dev/null || echo 0)
	boots+=$(printf '\n#   %-8s %-34s %5s s' "$mname" "${m_topo[$i]}" "$secs")
	run=$(sed -n 's/^qemu: .*run dir //p' "$runs/$mname.out")
	guest=$top/$run/output.log console=$top/$run/console.log
	[ "$mname" = checkout ] && guest=$co/$run/output.log console=$co/$run/console.log
	case $rc in
	0) tap ok "$mname: boot ended with guest exit status 0" ;;
	124) tap notok "$mname: boot ended with guest exit status 0" "timed out after ${timeout}s" ;;
	125) tap notok "$mname: boot ended with guest exit status 0" "the guest reported no exit status" ;;
	*) tap notok "$mname: boot ended with guest exit status 0" "qemu/run.sh exit $rc" ;;
	esac
	if [ -z "$run" ] || [ ! -s "$guest" ]; then
		tap notok "$mname: guest output" "none (qemu/run.sh exit $rc)"
		sed 's/^/# /' "$runs/$mname.out"
		continue
	fi
	[ "$rc" = 0 ] || sed 's/^/# /' "$runs/$mname.out" | tail -n 45
	report "$mname" "$guest" "$(dirname "$guest")/expected-skips"
	if [ ! -s "$console" ]; then
		tap notok "$mname: console log" "missing or empty: $console"
		continue
	fi
	if [[ " ${m_extra[$i]//,/ } " != *" kunit.enable=0 "* ]]; then
		got=$("$top/tests/kunit-results.sh" "$console")
		krc=$?
		while IFS= read -r line; do
			case $line in
			"ok "*" - "*"# SKIP"*) l=${line#* - }; tap skip "kunit: ${l%% # SKIP*}" "${l#*# SKIP}" ;;
			"ok "*" - "*) tap ok "kunit: ${line#* - }" ;;
			"not ok "*" - "*) tap notok "kunit: ${line#* - }" ;;
			*) echo "# $line" ;;
			esac
		done <<< "$got"
		[ $krc = 0 ] || [[ $got == *"not ok"* ]] || tap notok "kunit: results in the console log" "kunit-results.sh exit $krc"
		for s in $kunit_suites; do
			grep -q "^ok [0-9]* - $s\.\|^not ok [0-9]* - $s\." <<< "$got" ||
				tap notok "kunit: suite $s ran" "no result in the console log"
		done
	fi
	if report=$("$top/qemu/scan-console.sh" "$console"); then
		tap ok "$mname: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task)"
	else
		tap notok "$mname: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task)" "see $run/console.log"
		echo "$report" | head -n 20 | sed 's/^/# /'
	fi
done

echo "# time of each boot (P2P_JOBS=$jobs side by side; wall $wall s):$boots"
echo "# time of each suite in the guest:$timing"
# The checkout copy: its console and output were read above; keep them.
if [ -n "$co" ]; then
	mkdir -p "$top/build/runs"
	cp -a "$co"/build/runs/* "$top/build/runs/" 2>/dev/null
	rm -rf "$(dirname "$co")"
fi
echo "1..$n"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
