#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the KUnit results (KTAP) from a kernel console log and print one
# TAP line per leaf test case ("ok N - suite.case[.param]"), then
# "kunit: P passed, F failed". Skipped cases keep their "# SKIP" directive
# (tests/run-all.sh counts them as skipped). A suite or case that started
# but never reported (the kernel crashed or hung in it) counts as one
# failure, and so does every level whose number of results differs from its
# KTAP plan ("1..N"): a planned case that did not report is not a pass.
#
# Usage: tests/kunit-results.sh CONSOLE_LOG
# Exit status: 0 if all passed, 1 on any failure or if the log holds no
# KUnit results, 2 on usage errors.
set -euo pipefail

log=${1:?usage: kunit-results.sh CONSOLE_LOG}
[ -r "$log" ] || { echo "kunit-results: cannot read $log" >&2; exit 2; }

# Drop carriage returns and the "[    1.234567] " printk time stamps.
sed -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //' "$log" | awk '
function path(d,    i, s) {
	s = ""
	for (i = 1; i <= d; i++)
		if (i in name)
			s = s (s == "" ? "" : ".") name[i]
	return s
}
/^ *# Subtest: / {
	match($0, /^ */)
	d = RLENGTH / 4
	n = $0
	sub(/^ *# Subtest: /, "", n)
	name[d] = n
	open[d] = 1
	kids[d] = 0
	cnt[d] = 0
	delete plan[d]
	next
}
/^ *1\.\.[0-9]+/ {
	match($0, /^ */)
	d = RLENGTH / 4
	p = substr($0, RLENGTH + 4)
	sub(/[^0-9].*/, "", p)
	plan[d] = p + 0
	next
}
/^ *(not )?ok [0-9]+( |$)/ {
	match($0, /^ */)
	d = RLENGTH / 4
	line = substr($0, RLENGTH + 1)
	bad = line ~ /^not ok/
	sub(/^(not )?ok [0-9]+ ?/, "", line)
	directive = ""
	if (match(line, / # .*/)) {
		directive = substr(line, RSTART)
		line = substr(line, 1, RSTART - 1)
	}
	cnt[d]++
	if (((d + 1) in open) && open[d + 1]) {
		# The result of a suite or parameterized case: a container.
		open[d + 1] = 0
		if (((d + 1) in plan) && plan[d + 1] != cnt[d + 1]) {
			n_all++
			failed++
			printf "not ok %d - %s (planned %d cases, %d reported)\n", n_all, path(d + 1), plan[d + 1], cnt[d + 1]
		}
		had = kids[d + 1]
		if (had)
			next
	}
	kids[d] = 1
	leaf = path(d)
	leaf = leaf (leaf == "" ? "" : ".") line
	n_all++
	if (bad) {
		failed++
		printf "not ok %d - %s%s\n", n_all, leaf, directive
	} else {
		passed++
		printf "ok %d - %s%s\n", n_all, leaf, directive
	}
	next
}
END {
	if ((0 in plan) && plan[0] != cnt[0]) {
		n_all++
		failed++
		printf "not ok %d - kunit (planned %d suites, %d reported)\n", n_all, plan[0], cnt[0]
	}
	for (d in open) {
		if (!open[d])
			continue
		n_all++
		failed++
		printf "not ok %d - %s (no result: crashed or hung)\n", n_all, path(d)
	}
	printf "kunit: %d passed, %d failed\n", passed, failed
	if (n_all == 0) {
		print "kunit: no KUnit results in the log" > "/dev/stderr"
		exit 1
	}
	exit (failed > 0)
}
'
