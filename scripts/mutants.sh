#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test-mutants: the mutation catalogue (tests/mutants/*.patch). Each
# patch removes or breaks one guard of the core and names, in its header,
# the suite that claims to catch that and the cases that must fail:
#
#   Guard: what the patch breaks
#   Kernel: 6.12 | 7.3       only on that kernel (the guard lives in one
#                            kernel's form: the 6.12 backport, an mm diff);
#                            skipped on the other. No field: both kernels
#   Suite: kunit SUITE       a KUnit suite, booted alone on the debug
#                            kernel (kunit.filter_glob=SUITE; the route
#                            fuzzing with make test's seeds)
#          guest TOPO ARGS   a boot of make test's guest suites
#                            (tests/guest/all.sh) on the debug kernel and
#                            topology TOPO, with kernel arguments ARGS
#                            (P2P_SUITES=... picks the suites)
#   Kills: CASE... [REPORT]  the mutant is killed when one of these cases
#                            reports "not ok" (REPORT: or the console has a
#                            report the judge of make test fails a run on,
#                            qemu/scan-console.sh: KASAN, oops, hung task...)
#
# A scratch worktree of HEAD (build/mutants/tree, with kernel builds of
# its own) gets one patch at a time on a clean checkout; each result and
# its logs are in build/mutants/NAME.*. A mutant that survives, that does
# not apply or whose kernel does not build fails the run. Not part of
# make test: a cold build, then ~3 min per mutant.
#
# Usage: scripts/mutants.sh [NAME...]   (default: the whole catalogue)
# Ends with "N passed, N failed, N skipped": passed are the mutants
# killed, skipped those of the other kernel.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
out=$top/build/mutants
tree=$out/tree
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for p in "$top"/tests/mutants/*.patch; do
		names+=("$(basename "$p" .patch)")
	done
fi

if [ ! -e "$tree/.git" ]; then
	mkdir -p "$out"
	git -C "$top" worktree add -q --detach "$tree" HEAD || exit 1
fi
git -C "$tree" checkout -q -f --detach "$(git -C "$top" rev-parse HEAD)" || exit 1
# The worktree builds from the kernel source make deps fetched here (7.3's
# tarball under build/src): no second fetch of it.
mkdir -p "$tree/build/src"
for t in "$top"/build/src/*.tar.xz; do
	[ -e "$t" ] && ln -sfn "$t" "$tree/build/src/"
done

field() { # FIELD PATCH
	sed -n "s/^$1: //p;/^---/q" "$2" | head -n 1
}

# run_kunit NAME SUITE: boot the suite alone on the mutant's debug kernel.
run_kunit() {
	local m=$1 suite=$2 run seeds
	if ! (cd "$tree" && make -s kernel-debug) > "$out/$m.build" 2>&1; then
		return 2
	fi
	# A mutant may hang the suite (a lost thread): the timeout ends it.
	# make test's seed count (its fuzz_seeds), not the module's default.
	seeds=$(grep -o -m 1 'p2pdma_fuzz\.seeds=[0-9][0-9]*' "$tree/tests/run-all.sh")
	[ -n "$seeds" ] || { echo "mutants: no p2pdma_fuzz.seeds= in tests/run-all.sh"; return 2; }
	(cd "$tree" && CMDLINE_EXTRA="kunit.filter_glob=$suite $seeds" \
		RUN_NAME=mutant-$m qemu/run.sh -k debug -t none -T 600 -q -- true) \
		> "$out/$m.run" 2>&1
	run=$(find "$tree/build/runs" -maxdepth 1 -name "mutant-$m-debug-*" | sort | tail -n 1)
	[ -n "$run" ] && cp "$run/console.log" "$out/$m.console"
}

# run_guest NAME TOPO [ARG...]: the guest suites of one topology.
run_guest() {
	local m=$1 topo=$2 run
	shift 2
	if ! (cd "$tree" && make -s kernel-debug tools selftests) > "$out/$m.build" 2>&1; then
		return 2
	fi
	(cd "$tree" && CMDLINE_EXTRA="kunit.enable=0 $*" RUN_NAME=mutant-$m \
		qemu/run.sh -k debug -t "$topo" -T 1800 -q -- tests/guest/all.sh) \
		> "$out/$m.run" 2>&1
	run=$(find "$tree/build/runs" -maxdepth 1 -name "mutant-$m-debug-*" | sort | tail -n 1)
	[ -n "$run" ] || return 0
	# The guest's TAP after the kernel's console: both are judged.
	cat "$run/console.log" "$run/output.log" > "$out/$m.console" 2>/dev/null
}

killed=0
survived=0
skipped=0
for m in "${names[@]}"; do
	patch=$top/tests/mutants/$m.patch
	only=$([ -f "$patch" ] && field Kernel "$patch")
	if [ -n "$only" ] && [ "$only" != "$KERNEL" ]; then
		echo "ok $m # SKIP KERNEL=$only only"
		skipped=$((skipped + 1))
		continue
	fi
	suite=$(field Suite "$patch")
	kills=$(field Kills "$patch")
	rm -f "$out/$m".*
	git -C "$tree" checkout -q -f -- . || exit 1
	if [ ! -f "$patch" ] || ! git -C "$tree" apply "$patch" 2> "$out/$m.apply"; then
		echo "not ok $m: does not apply (see $out/$m.apply)"
		survived=$((survived + 1))
		continue
	fi
	rc=0
	case $suite in
	kunit\ *) run_kunit "$m" "${suite#kunit }" || rc=$? ;;
	guest\ *)
		# shellcheck disable=SC2086 # TOPO and its arguments, split on purpose
		run_guest "$m" ${suite#guest } || rc=$? ;;
	*) echo "not ok $m: unknown suite \"$suite\""; survived=$((survived + 1)); continue ;;
	esac
	if [ "$rc" = 2 ] || [ ! -s "$out/$m.console" ]; then
		echo "not ok $m: no kernel built or no console (see $out/$m.build, $out/$m.run)"
		survived=$((survived + 1))
		continue
	fi
	failed=$(sed -E 's/^\[[^]]*\] //' "$out/$m.console" |
		 sed -nE 's/^\s*not ok [0-9]+ (\S+).*/\1/p' | sort -u | tr '\n' ' ')
	reports=$("$top/qemu/scan-console.sh" "$out/$m.console" | wc -l)
	by=
	for k in $kills; do
		if [ "$k" = REPORT ]; then
			[ "$reports" -gt 0 ] && by="$by REPORT"
		elif grep -qw -- "$k" <<< "$failed"; then
			by="$by $k"
		fi
	done
	if [ -n "$by" ]; then
		echo "ok $m: killed by$by (every case that failed: ${failed:-none}; console reports: $reports)"
		killed=$((killed + 1))
	else
		echo "not ok $m: survived: none of \"$kills\" failed (failed: ${failed:-none}; console reports: $reports)"
		survived=$((survived + 1))
	fi
done
git -C "$tree" checkout -q -f -- .
echo "$killed passed, $survived failed, $skipped skipped"
[ "$survived" = 0 ]
