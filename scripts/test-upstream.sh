#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-upstream`: the differential oracle. Builds a KUnit kernel with
# drivers/pci/p2pdma/tests/blackbox.kunitconfig twice from the prepared tree, each with the
# kernel's own runner (tools/testing/kunit/kunit.py) and a build directory
# of its own, and runs the black-box suite (drivers/pci/p2pdma/tests/p2pdma-blackbox.c, public
# API only) on each:
#
#   ours     our drivers/pci/p2pdma/ and pci-p2pdma.h (the tree as
#            prepare-tree.sh leaves it), build/kunit-bb-$KERNEL-ours
#   $KERNEL  the tree's own p2pdma.c/pci-p2pdma.h (6.12's or 7.3's), put
#            back for the build by prepare-tree.sh --pristine (copies from
#            build/pristine-$KERNEL, never into this repository) and
#            replaced by ours again right after; our Kconfig stays, so the
#            suite's symbol exists; build/kunit-bb-$KERNEL-upstream
#
# The upstream build directory starts as a copy of ours, so that only what
# the two files touch is rebuilt. Then tests/upstream-compare.py prints
# one table, case | ours | $KERNEL, and fails every case that did not
# report on a kernel, failed on ours, or differs (in result, or in the
# values it logs where the contract leaves them open) unless the kernel's
# differences file ($kupdiff of scripts/kernel.sh) names the row of the
# cover letter that explains it. Logs and the table:
# build/test-upstream/$KERNEL/.
#
# The black-box objects include the route fuzzing (tests/p2pdma-fuzz.c of the core),
# which runs on both kernels twice, under QEMU's default CPU and under an
# AMD Zen one; a seed whose normalised line differs, a seed missing on a
# kernel and a "not ok" of the suite each fail.
#
# Then scripts/test-upstream-guest.sh does the same for the guest suites of
# `make test` (end-to-end checks and kselftests) on two debug kernels.
#
# Usage: scripts/test-upstream.sh [-n] [-k | -g]
#   -n  no build: run the kernels built last time
#   -k  the KUnit suite only;  -g  the guest suites only
# Ends with "N passed, N failed" (cases of the black-box suite and seeds of
# the fuzzing); exits 1 when a build or a run failed or a verdict did.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
outdir=$top/build/test-upstream/$KERNEL
kunitconfig=$top/drivers/pci/p2pdma/tests/blackbox.kunitconfig
bd_ours=$top/build/kunit-bb-$KERNEL-ours
bd_up=$top/build/kunit-bb-$KERNEL-upstream
build=1 kunit=1 guest=1
while getopts nkg opt; do
	case $opt in
	n) build=0 ;;
	k) guest=0 ;;
	g) kunit=0 ;;
	*) exit 2 ;;
	esac
done
# The second part: the guest suites (scripts/test-upstream-guest.sh).
guest_part() {
	if [ "$build" = 1 ]; then
		exec "$top/scripts/test-upstream-guest.sh"
	fi
	exec "$top/scripts/test-upstream-guest.sh" -n
}
[ "$kunit" = 1 ] || guest_part

# run_one NAME BUILD_DIR CORE [KUNIT.PY-ARGS...]: the suites on one kernel,
# whose P2PDMA core is CORE (ours or $KERNEL: the fuzzing's normalisation
# needs to know); the console in $outdir/NAME.log. Without a build (-n),
# or with arguments (the fuzzing alone), the kernel built last is booted
# again.
run_one() {
	local name=$1 bdir=$2 core=$3 rc=0 suite=p2pdma_blackbox
	local args=(run --kunitconfig="$kunitconfig")
	shift 3
	[ "$build" = 1 ] && [ $# = 0 ] || args=(exec)
	[ $# = 0 ] || suite=p2pdma_fuzz
	echo "test-upstream: kunit.py ${args[0]}, $name ($bdir)"
	(renice -n 19 $BASHPID >/dev/null && kunitpy "${args[@]}" --arch=x86_64 \
		--build_dir="$bdir" --raw_output=all --timeout=3600 \
		--kernel_args=p2pdma_fuzz.core="$core" "$@") > "$outdir/$name.log" 2>&1 || rc=$?
	if ! grep -Eq "^[[:space:]]*(\[[^]]*\] )?(not )?ok [0-9]+ $suite" "$outdir/$name.log"; then
		echo "test-upstream: the $name kernel did not finish $suite (status $rc); see $outdir/$name.log" >&2
		tail -n 30 "$outdir/$name.log" >&2
		return 1
	fi
}

mkdir -p "$outdir"
# What the cover letter and the differences files call the upstream core.
export P2P_UPSTREAM=$KERNEL P2P_COVER=$kcover
"$top/scripts/prepare-tree.sh"
run_one ours "$bd_ours" ours
if [ "$build" = 1 ]; then
	[ -d "$bd_up" ] || { echo "test-upstream: seeding $bd_up from $bd_ours"; cp -a "$bd_ours" "$bd_up"; }
	# Our files go back whatever happens to the upstream run.
	trap '"$top/scripts/prepare-tree.sh"' EXIT
	"$top/scripts/prepare-tree.sh" --pristine
fi
run_one "$KERNEL" "$bd_up" "$KERNEL"
if [ "$build" = 1 ]; then
	"$top/scripts/prepare-tree.sh"
	trap - EXIT
fi
# The route fuzzing (p2pdma-fuzz.c) ran above under QEMU's default
# CPU, which is not AMD Zen; once more on a Zen guest, fuzzing only, both
# kernels side by side (one vCPU each).
zen=(--qemu_args=-cpu --qemu_args=EPYC --kernel_args=kunit.filter_glob=p2pdma_fuzz)
run_one ours-zen "$bd_ours" ours "${zen[@]}" &
zen_ours=$!
rc=0
run_one "$KERNEL-zen" "$bd_up" "$KERNEL" "${zen[@]}" || rc=1
wait "$zen_ours" || rc=1
[ "$rc" = 0 ] || exit 1

# The two kernels must have been built from the two P2PDMA cores: only
# ours has p2p_policy_seq_begin() (drivers/pci/p2pdma/host-bridge-policy.c).
if ! grep -qw p2p_policy_seq_begin "$bd_ours/System.map" ||
   grep -qw p2p_policy_seq_begin "$bd_up/System.map"; then
	echo "test-upstream: the two kernels are not built from the two P2PDMA cores" >&2
	exit 1
fi

# The verdicts (tests/upstream-compare.py): every case and seed reported
# on both kernels, nothing failed, and every difference is one of
# $kupdiff, that is of the cover letter; the tables in
# build/test-upstream/$KERNEL/table.md.
cmp=$top/tests/upstream-compare.py
rc=0
{
	"$cmp" kunit "$outdir/ours.log" "$outdir/$KERNEL.log" "$kupdiff" || rc=1
	echo
	# A seed that differs is a difference the normalisation of
	# p2pdma-fuzz.c does not explain: rerun both kernels with
	# --kernel_args=p2pdma_fuzz.dump=S to see the calls.
	"$cmp" fuzz "QEMU's default CPU (not AMD Zen)" "$outdir/ours.log" "$outdir/$KERNEL.log" || rc=1
	echo
	"$cmp" fuzz "AMD Zen (EPYC)" "$outdir/ours-zen.log" "$outdir/$KERNEL-zen.log" || rc=1
	[ "$rc" = 0 ]
} | tee "$outdir/table.md" || rc=1
passed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$outdir/table.md" | paste -sd+ | bc)
failed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$outdir/table.md" | paste -sd+ | bc)
echo "$passed passed, $failed failed"
[ "$guest" = 0 ] || (guest_part) || rc=1
[ "$rc" = 0 ] && [ "$failed" = 0 ]
