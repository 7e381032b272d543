#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KCSAN reports of a kernel console log ("BUG: KCSAN: ..." up to the
# closing line of '='), each classified, one line each:
#   KIND<TAB>TITLE<TAB>PAIR<TAB>STACKS<TAB>VIA
# KIND is "ours" when our code made one of the two racing accesses: the
# first frame of its stack that is not a generic helper working on memory
# its caller passes (find_*_bit, bitmap_*, mem*, str*) is a function of our
# code; "reached" when another subsystem's code made both accesses but a
# function of ours is further down one of the stacks (genalloc's lockless
# bitmap, between two allocations of ours; or a use-after-free race such
# as gen_pool_destroy() under our release against gen_pool_free_owner()
# under our free); "notours" when no frame is ours. Functions of ours are
# the text symbols of SYMBOLS (tests/run-all.sh writes the symbols of
# drivers/pci/p2pdma/ and p2pmem-bar.o there, from the kernel it boots);
# without SYMBOLS, those whose name contains "p2p".
# TITLE is the report's line without "BUG: KCSAN: " ("data-race in a / b"),
# PAIR the two accessing functions (as above), sorted, joined by a blank,
# STACKS the top frames of each access ("write by task 12 on cpu 0:
# f+0x1/0x2 < g+0x3/0x4 < ...; read by ..."), VIA the call sites of ours:
# the first function of ours in each stack, sorted, joined by commas
# ("-" if none).
# tests/judge.sh fails a run on every "ours" report and on every "reached"
# one whose PAIR tests/kcsan-benign does not list for that machine.
#
# Usage: tests/kcsan-reports.sh CONSOLE_LOG [SYMBOLS]
# Exit status: 0, also when there are reports; 2 on usage errors.
set -euo pipefail
log=${1:?usage: kcsan-reports.sh CONSOLE_LOG [SYMBOLS]}
syms=${2:-}
[ -r "$log" ] || { echo "kcsan-reports: cannot read $log" >&2; exit 2; }
[ -z "$syms" ] || [ -r "$syms" ] || { echo "kcsan-reports: cannot read $syms" >&2; exit 2; }

# Drop carriage returns and the "[    1.234567] " printk time stamps.
sed -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //' "$log" | awk -v symfile="$syms" '
BEGIN {
	if (symfile != "")
		while ((getline s < symfile) > 0)
			ours[s] = 1
	depth = 6
}
function isours(fn) {
	return (symfile != "" && (fn in ours)) || (symfile == "" && fn ~ /p2p/)
}
function flush() {
	if (title == "")
		return
	pair = acc[1] < acc[2] ? acc[1] " " acc[2] : acc[2] " " acc[1]
	if (via[1] == "" || (via[2] != "" && via[2] < via[1]))
		v = via[2] (via[1] != "" && via[2] != "" && via[1] != via[2] ? "," via[1] : "")
	else
		v = via[1] (via[2] != "" && via[2] != via[1] ? "," via[2] : "")
	printf "%s\t%s\t%s\t%s\t%s\n", (made ? "ours" : hit ? "reached" : "notours"), title, pair, stacks, (v == "" ? "-" : v)
	title = ""
}
/BUG: KCSAN: / {
	flush()
	title = $0
	sub(/.*BUG: KCSAN: /, "", title)
	stacks = ""; hit = 0; made = 0; inrep = 1; frames = -1
	nacc = 0; acc[1] = "?"; acc[2] = "?"; via[1] = ""; via[2] = ""; nstack = 0
	next
}
!inrep { next }
/^=+$/ { flush(); inrep = 0; next }
/^Reported by Kernel Concurrency Sanitizer/ { frames = -1; next }
# "write to 0x... of 8 bytes by task 12 on cpu 0:", "read (marked) to ...",
# "race at unknown origin, with read to ...".
/ to 0x[0-9a-f]+ of [0-9]+ bytes by / {
	a = $0
	sub(/ to 0x[0-9a-f]+ of [0-9]+ bytes/, "", a)
	sub(/:$/, "", a)
	stacks = stacks (stacks == "" ? "" : "; ") a ":"
	frames = 0
	accessor = 0
	nstack++
	next
}
/^ *[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+\/0x[0-9a-f]+/ {
	if (frames < 0)
		next
	f = $1
	fn = f
	sub(/\+.*/, "", fn)
	if (isours(fn)) {
		hit = 1
		if (nstack <= 2 && via[nstack] == "")
			via[nstack] = fn
	}
	# The function that made the access: the first one that is not a
	# generic helper.
	if (!accessor && fn !~ /^_*(find_|bitmap_|mem[a-z]*$|str[a-z]*$)/) {
		accessor = 1
		if (nacc < 2)
			acc[++nacc] = fn
		if (isours(fn))
			made = 1
	}
	if (frames < depth)
		stacks = stacks (frames == 0 ? " " : " < ") f
	else if (frames == depth)
		stacks = stacks " < ..."
	frames++
	next
}
/^$/ { frames = -1 }
END { flush() }
'
