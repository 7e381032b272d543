#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make mutants: break the dma-buf exporter's revocation guards one at a
# time (tests/mutants/dmabuf.py) and show that a test fails for each. A
# scratch worktree of HEAD (build/mutants/tree, its own kernel build) gets
# one mutant, builds the debug kernel and boots the p2pdma-dmabuf KUnit
# suite; the mutant is caught when a case of the suite fails or KASAN
# reports (the use-after-free guards). Not part of make test: a cold
# build plus about 3 minutes per mutant.
#
# Usage: scripts/mutants.sh [NAME...]   (default: every mutant)
# Ends with "N passed, N failed": passed are the mutants caught.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/mutants/tree
list=$("$top/tests/mutants/dmabuf.py" --list) || exit 1
[ $# -gt 0 ] || mapfile -t names < <(cut -f1 <<< "$list")
[ $# -gt 0 ] && names=("$@")

if [ ! -d "$tree/.git" ] && [ ! -f "$tree/.git" ]; then
	mkdir -p "$top/build/mutants"
	git -C "$top" worktree add -q --detach "$tree" HEAD || exit 1
fi
git -C "$tree" checkout -q --detach "$(git -C "$top" rev-parse HEAD)" || exit 1
file=$tree/drivers/pci/p2pdma/dmabuf.c
caught=0
missed=0
for m in "${names[@]}"; do
	fails=$(awk -F'\t' -v m="$m" '$1 == m { print $3 }' <<< "$list")
	git -C "$tree" checkout -q -- drivers/pci/p2pdma/dmabuf.c
	if ! "$top/tests/mutants/dmabuf.py" "$m" "$file"; then
		missed=$((missed + 1))
		continue
	fi
	log=$top/build/mutants/$m
	if ! (cd "$tree" && make -s kernel-debug) > "$log.build" 2>&1; then
		echo "not ok $m: does not build (see $log.build)"
		missed=$((missed + 1))
		continue
	fi
	# A mutant may hang the suite (a lost thread): the timeout ends it.
	(cd "$tree" && CMDLINE_EXTRA="kunit.filter_glob=p2pdma-dmabuf" \
		RUN_NAME=mutant-$m qemu/run.sh -k debug -t none -T 420 -q -- true) \
		> "$log.run" 2>&1
	run=$(find "$tree/build/runs" -maxdepth 1 -name "mutant-$m-debug-*" | sort | tail -1)
	cp "$run/console.log" "$log.console"
	failed=$(grep -E '^\[ *[0-9.]+\]     not ok [0-9]+ ' "$log.console" |
		 sed 's/.*not ok [0-9]* //' | tr '\n' ' ')
	kasan=$(grep -c 'BUG: KASAN' "$log.console")
	if [ -n "$failed" ] || [ "$kasan" -gt 0 ]; then
		echo "ok $m: caught (failed: ${failed:-none}; KASAN reports: $kasan; expected: $fails)"
		caught=$((caught + 1))
	else
		echo "not ok $m: no test failed (expected: $fails)"
		missed=$((missed + 1))
	fi
done
git -C "$tree" checkout -q -- drivers/pci/p2pdma/dmabuf.c
echo "$caught passed, $missed failed"
[ "$missed" = 0 ]
