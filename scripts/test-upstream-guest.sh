#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-upstream`, second part: every black-box guest suite of
# `make test` (the end-to-end checks and the kselftests, on every machine of
# tests/machines) on two debug kernels built from the same tree and
# configuration, then one table: case | ours | $KERNEL.
#
#   ours     build/out-$KERNEL-debug, the kernel of `make test`
#   $KERNEL  build/out-$KERNEL-upstream-debug, with the tree's own
#            p2pdma.c and pci-p2pdma.h, put back for the build by
#            prepare-tree.sh --pristine (copies from build/pristine-$KERNEL,
#            never into this repository) and replaced by ours right after;
#            it starts as a copy of ours, so only what the two files touch
#            is rebuilt
#
# Rows that only make sense for our kernel are left out of the table: the
# white-box KUnit suites (the black-box one is the first part) and the
# check that the kernel was built from our files. Results, TAP and the
# table are in build/test-upstream/$KERNEL/guest-*. Last, the kernel's own
# kselftests (scripts/test-upstream-kselftests.sh).
#
# Usage: scripts/test-upstream-guest.sh [-n] [-t]
#   -n  no build: boot the two kernels built last time
#   -t  no build and no boot: the table of the last two runs
# Ends with "N passed, N failed" (the cases of the table); exits 1 when a
# build or a run failed or a verdict did.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
outdir=$top/build/test-upstream/$KERNEL
ours=$(kout debug)
up=$(kout upstream-debug)
# What the cover letter and the differences files call the upstream core.
export P2P_UPSTREAM=$KERNEL P2P_COVER=$kcover
build=1 boot=1
while getopts nt opt; do
	case $opt in
	n) build=0 ;;
	t) build=0 boot=0 ;;
	*) exit 2 ;;
	esac
done
mkdir -p "$outdir"

if [ "$build" = 1 ]; then
	"$top/scripts/build-kernel.sh" debug
	if [ ! -d "$up" ]; then
		echo "test-upstream: seeding $up from $ours"
		cp -a "$ours" "$up"
	fi
	# The same configuration as ours, less two test modules: the test
	# importer needs our pci_p2pmem_export(); the HMM test owner and
	# mirror would build, but their cases upstream are listed as failing
	# ($kupguestdiff). make, not build-kernel.sh,
	# which would link our files into the tree again before building.
	cp "$ours/.config" "$up/.config"
	"$ktree/scripts/config" --file "$up/.config" \
		-d PCI_P2PDMA_TEST_IMPORTER -d PCI_P2PDMA_TEST_HMM
	# Our files go back whatever happens to the upstream build.
	trap '"$top/scripts/prepare-tree.sh"' EXIT
	"$top/scripts/prepare-tree.sh" --pristine
	make -s -C "$ktree" O="$up" olddefconfig
	make -s -C "$ktree" O="$up" -j"$(nproc)" bzImage
	"$top/scripts/prepare-tree.sh"
	trap - EXIT
	# Only ours has p2p_policy_seq_begin() (drivers/pci/p2pdma/).
	if ! grep -qw p2p_policy_seq_begin "$ours/System.map" ||
	   grep -qw p2p_policy_seq_begin "$up/System.map"; then
		echo "test-upstream: the two kernels are not built from the two P2PDMA cores" >&2
		exit 1
	fi
fi

if [ "$boot" = 1 ]; then
	for k in ours "$KERNEL"; do
		kernel=$ours/arch/x86/boot/bzImage
		[ "$k" = ours ] || kernel=$up/arch/x86/boot/bzImage
		[ -f "$kernel" ] || { echo "test-upstream: no $kernel (run without -n)" >&2; exit 1; }
		echo "test-upstream: make test's suites on $k ($kernel)"
		core=$k
		[ "$k" = ours ] || core=$KERNEL
		TEST_KERNEL=$kernel P2P_RESULTS=$outdir/guest-$k.tsv P2P_FUZZ_CORE=$core \
			"$top/tests/run-all.sh" > "$outdir/guest-$k.tap" 2>&1 || true
		tail -n 1 "$outdir/guest-$k.tap"
	done
fi

for k in ours "$KERNEL"; do
	[ -s "$outdir/guest-$k.tsv" ] || { echo "test-upstream: no results of $k" >&2; exit 1; }
done

# The verdict (tests/upstream-compare.py guest): a case that failed on
# ours, did not report on ours, or whose result differs without a pattern
# of $kupguestdiff (under the row of the cover letter that explains it)
# fails, and so does a pattern that covers no such case.
rc=0
"$top/tests/upstream-compare.py" guest "$outdir/guest-ours.tsv" "$outdir/guest-$KERNEL.tsv" \
	"$kupguestdiff" | tee "$outdir/guest-table.md" || rc=1

# Then the kernel's own kselftests that reach our core, on both kernels
# (scripts/test-upstream-kselftests.sh; none on 6.12).
ks=()
[ "$boot" = 1 ] || ks=(-t)
"$top/scripts/test-upstream-kselftests.sh" "${ks[@]}" || rc=1
exit $rc
