#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Edit the backport of our files to an older kernel (backport/$KERNEL.diff)
# as files, not as a diff:
#   scripts/backport.sh open DIR [FILE...]   DIR/<file>: our files, patched
#                                            (FILE...: ours to add to it)
#   scripts/backport.sh close DIR            backport/$KERNEL.diff from DIR
# Between the two, edit the files in DIR. close writes one diff per file
# whose DIR copy differs from ours, after the diff's top comment, and
# stops if a file of DIR is not one of ours.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
[ -n "$kbackport" ] || { echo "backport: KERNEL=$KERNEL is mainline, nothing to backport" >&2; exit 2; }
cmd=${1:-}; dir=${2:-}
[ -n "$dir" ] || { echo "usage: $0 open|close DIR [FILE...]" >&2; exit 2; }
case $cmd in
open)
	[ ! -e "$dir" ] || { echo "backport: $dir exists" >&2; exit 2; }
	mkdir -p "$dir"
	kbackport_to "$dir"
	shift 2
	for f; do
		[ -f "$top/$f" ] || { echo "backport: $f: not a file of ours" >&2; exit 2; }
		[ -e "$dir/$f" ] || { mkdir -p "$dir/$(dirname "$f")"; cp "$top/$f" "$dir/$f"; }
	done
	echo "backport: edit the files under $dir, then: $0 close $dir"
	;;
close)
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	# The top comment: everything before the first file's diff.
	sed '/^--- a\//,$d' "$kbackport" >"$tmp"
	# The order of the old diff first, files new to it after.
	files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$kbackport")
	files+=$'\n'$(cd "$dir" && find . -type f | sed 's|^\./||' | sort)
	while read -r f; do
		[ -f "$dir/$f" ] || continue
		[ -f "$top/$f" ] || { echo "backport: $dir/$f: not a file of ours" >&2; exit 1; }
		diff -u --label "a/$f" --label "b/$f" "$top/$f" "$dir/$f" >>"$tmp" || [ $? = 1 ]
	done < <(awk '!seen[$0]++' <<<"$files")
	cp "$tmp" "$kbackport"
	echo "backport: wrote ${kbackport#"$top"/} ($(grep -c '^+++ ' "$kbackport") files)"
	;;
*)
	echo "usage: $0 open|close DIR [FILE...]" >&2; exit 2 ;;
esac
