#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KCSAN reports of a kernel console log ("BUG: KCSAN: ..." up to the
# closing line of '='), each classified as ours or not ours, one line each:
#   ours<TAB>TITLE<TAB>STACKS
#   through<TAB>TITLE<TAB>STACKS
#   notours<TAB>TITLE<TAB>STACKS
# TITLE is the report's line without "BUG: KCSAN: " ("data-race in a / b"),
# STACKS the top frames of each access ("write by task 12 on cpu 0: f+0x1/0x2
# < g+0x3/0x4 < ...; read by ...").
#
# A report is ours when our code made one of the two racing accesses: the
# first frame of its stack that is not a generic helper working on memory
# its caller passes (find_*_bit, bitmap_*, mem*, str*) is a function of
# our code: a text symbol of SYMBOLS (tests/run-all.sh writes the symbols
# of drivers/pci/p2pdma/ and p2pmem-bar.o there, from the kernel it boots);
# without SYMBOLS, a function whose name contains "p2p". A race that
# another subsystem's code made on its own memory, with our code only
# further down a stack as its caller (genalloc's lockless bitmap, between
# two allocations of ours), is "through": not ours, listed apart.
# qemu/scan-console.sh leaves KCSAN reports to this script (tests/judge.sh):
# one about our code fails the run, the others are listed with their stacks.
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
	printf "%s\t%s\t%s\n", (made ? "ours" : hit ? "through" : "notours"), title, stacks
	title = ""
}
/BUG: KCSAN: / {
	flush()
	title = $0
	sub(/.*BUG: KCSAN: /, "", title)
	stacks = ""; hit = 0; made = 0; inrep = 1; frames = -1
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
	next
}
/^ *[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+\/0x[0-9a-f]+/ {
	if (frames < 0)
		next
	f = $1
	fn = f
	sub(/\+.*/, "", fn)
	if (isours(fn))
		hit = 1
	# The function that made the access: the first one that is not a
	# generic helper.
	if (!accessor && fn !~ /^_*(find_|bitmap_|mem[a-z]*$|str[a-z]*$)/) {
		accessor = 1
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
