#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-upstream`, third part: the kernel's own kselftests that reach
# the paths of our core (scripts/kernel.sh: kselftests, run by
# tests/guest/kselftests.sh) on the two debug kernels of the second part,
# one boot of the iommu topology each, then one table
# (tests/upstream-compare.py same): every case must report on both kernels
# with the same result. A third-party suite: a case that fails on both is
# its verdict on this machine, shown in the table, not a difference of
# the cores.
#
# Usage: scripts/test-upstream-kselftests.sh [-t]
#   -t  no boot: the table of the last two runs
# Results are in build/test-upstream/$KERNEL/kselftests-*. Ends with
# "N passed, N failed"; exits 1 when a boot failed or the verdict did.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
outdir=$top/build/test-upstream/$KERNEL
# The name of the upstream column (tests/upstream-compare.py).
export P2P_UPSTREAM=$KERNEL
if [ -z "$kselftests" ]; then
	echo "test-upstream: $KERNEL has no kselftests of its own to compare (scripts/kernel.sh)"
	exit 0
fi
mkdir -p "$outdir"

# The TAP of the framed suites of a guest's output as result rows
# "ok|notok|skip<TAB>suite: case<TAB>detail"; a suite that reported no
# case is one row: a skip if it skipped whole (a "1..0 # SKIP" plan, or
# kselftest's exit status 4, KSFT_SKIP), else a failure.
tsv() { # OUTPUT.LOG
	tr -d '\r' <"$1" | awk '
		/^P2PDMA-SUITE / { id = substr($0, 14); n = 0; plan = ""; next }
		/^P2PDMA-END / {
			if (!n) printf "%s\t%s: %s\texit status %s %s\n",
				plan ~ /SKIP/ || $3 == 4 ? "skip" : "notok", id, "(no case)", $3, plan
			id = ""; next
		}
		id == "" { next }
		/^1\.\.[0-9]/ { plan = $0; next }
		/^(not )?ok [0-9]+ / {
			st = /^not ok/ ? "notok" : (/ # [Ss][Kk][Ii][Pp]/ ? "skip" : "ok")
			name = $0
			sub(/^(not )?ok [0-9]+ (- )?/, "", name)
			sub(/ # .*/, "", name)
			printf "%s\t%s: %s\t\n", st, id, name
			n++
		}'
}

rc=0
for k in ours "$KERNEL"; do
	kernel=$(kout debug)/arch/x86/boot/bzImage
	[ "$k" = ours ] || kernel=$(kout upstream-debug)/arch/x86/boot/bzImage
	if [ "${1:-}" != -t ]; then
		[ -f "$kernel" ] || { echo "test-upstream: no $kernel" >&2; exit 1; }
		echo "test-upstream: the kernel's own kselftests ($kselftests) on $k"
		BZIMAGE=$kernel RUN_NAME=kselftests-$k TCG_THREAD=single CMDLINE_EXTRA=kunit.enable=0 \
			"$top/qemu/run.sh" -q -k debug -t iommu -T 2700 -- "$top/tests/guest/kselftests.sh" \
			>"$outdir/kselftests-$k.out" 2>&1 || true
		run=$(sed -n 's/^qemu: .*, run dir \(.*\)$/\1/p' "$outdir/kselftests-$k.out")
		if [ -z "$run" ] || [ ! -f "$top/$run/output.log" ]; then
			echo "test-upstream: the kselftests boot of $k left no output" >&2
			exit 1
		fi
		tsv "$top/$run/output.log" >"$outdir/kselftests-$k.tsv"
		grep -q '^P2PDMA-EXIT ' "$top/$run/output.log" ||
			{ echo "test-upstream: the kselftests boot of $k did not end" >&2; rc=1; }
	fi
	[ -s "$outdir/kselftests-$k.tsv" ] || { echo "test-upstream: no kselftest results of $k" >&2; exit 1; }
done
"$top/tests/upstream-compare.py" same "$outdir/kselftests-ours.tsv" "$outdir/kselftests-$KERNEL.tsv" |
	tee "$outdir/kselftests-table.md" || rc=1
exit $rc
