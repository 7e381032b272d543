#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-upstream`, second part: every black-box guest suite of
# `make test` (the end-to-end checks and the kselftests, on every machine of
# tests/machines) on two debug kernels built from the same tree and
# configuration, then one table: case | ours | 6.12.
#
#   ours  build/out-debug, the kernel of `make test`
#   6.12  build/out-upstream-debug, with the tree's own p2pdma.c and
#         pci-p2pdma.h, put back for the build by prepare-tree.sh
#         --pristine (copies from build/pristine, never into this
#         repository) and replaced by ours right after; it starts as a
#         copy of ours, so only what the two files touch is rebuilt
#
# Rows that only make sense for our kernel are left out of the table: the
# white-box KUnit suites (the black-box one is the first part) and the
# check that the kernel was built from our files. Results, TAP and the
# table are in build/test-upstream/guest-*.
#
# Usage: scripts/test-upstream-guest.sh [-n] [-t]
#   -n  no build: boot the two kernels built last time
#   -t  no build and no boot: the table of the last two runs
# Exits 0 when both runs produced results, whatever the cases said.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
outdir=$top/build/test-upstream
ours=$top/build/out-debug
up=$top/build/out-upstream-debug
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
	# The same configuration as ours. make, not build-kernel.sh, which
	# would link our files into the tree again before building.
	cp "$ours/.config" "$up/.config"
	# Our files go back whatever happens to the 6.12 build.
	trap '"$top/scripts/prepare-tree.sh"' EXIT
	"$top/scripts/prepare-tree.sh" --pristine
	make -s -C "$top/build/linux-source-6.12" O="$up" -j"$(nproc)" bzImage
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
	for k in ours 6.12; do
		kernel=$ours/arch/x86/boot/bzImage
		[ "$k" = 6.12 ] && kernel=$up/arch/x86/boot/bzImage
		[ -f "$kernel" ] || { echo "test-upstream: no $kernel (run without -n)" >&2; exit 1; }
		echo "test-upstream: make test's suites on $k ($kernel)"
		TEST_KERNEL=$kernel P2P_RESULTS=$outdir/guest-$k.tsv \
			"$top/tests/run-all.sh" > "$outdir/guest-$k.tap" 2>&1 || true
		tail -n 1 "$outdir/guest-$k.tap"
	done
fi

for k in ours 6.12; do
	[ -s "$outdir/guest-$k.tsv" ] || { echo "test-upstream: no results of $k" >&2; exit 1; }
done

python3 - "$outdir/guest-ours.tsv" "$outdir/guest-6.12.tsv" <<'EOF' | tee "$outdir/guest-table.md"
import re
import sys

LABEL = {"ok": "pass", "notok": "fail", "skip": "skip"}


def case_key(name):
    """The case a result is for: "machine/scenario/suite: case", without
    the reason a failed guest check appends (": expected ...") or the
    temporary checkout path the checkout case names."""
    name = re.sub(r" \(/tmp/[^)]*\)", "", name)
    head, sep, rest = name.partition(": ")
    if sep and "/" in head:
        case, _, why = rest.partition(": ")
        return head + sep + case, why
    return name, ""


def parse(path):
    """Case -> (status, detail), in the order of the run."""
    rows = {}
    with open(path, errors="replace") as f:
        for line in f:
            status, name, detail = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
            if name.startswith("kunit: ") or name.startswith("debug kernel is built"):
                continue
            key, why = case_key(name)
            rows[key] = (LABEL.get(status, status), "; ".join(x for x in (why, detail) if x))
    return rows


ours, up = parse(sys.argv[1]), parse(sys.argv[2])
names = list(ours) + [n for n in up if n not in ours]
tot = {k: {"pass": 0, "fail": 0, "skip": 0, "-": 0} for k in ("ours", "6.12")}
print("| case | ours | 6.12 |")
print("| --- | --- | --- |")
for n in names:
    a = ours.get(n, ("-", ""))[0]
    b = up.get(n, ("-", ""))[0]
    tot["ours"][a] += 1
    tot["6.12"][b] += 1
    print(f"| {n}{' (differs)' if a != b else ''} | {a} | {b} |")


def total(t):
    s = f"{t['pass']} pass, {t['fail']} fail, {t['skip']} skip"
    return s + (f", {t['-']} missing" if t["-"] else "")


print(f"| total ({len(names)} cases) | {total(tot['ours'])} | {total(tot['6.12'])} |")
diff = [n for n in names if ours.get(n, ("-",))[0] != up.get(n, ("-",))[0]]
print()
print(f"{len(diff)} case(s) differ; what each kernel reported:")
for n in diff:
    print()
    print(f"{n}:")
    for label, rows in (("ours", ours), ("6.12", up)):
        status, detail = rows.get(n, ("-", "no result"))
        print(f"  {label}: {status}{': ' + detail if detail else ''}")
EOF
