#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test`: boot the debug kernel on each topology, run the guest suites,
# and turn everything into one TAP stream with a closing "N passed, N
# failed" line. A checker report in any console log (KASAN, lockdep,
# kmemleak, WARNING, BUG) is a failed test of its own. KUnit suites built
# into the debug kernel run on the first boot and are counted too.
#
# Usage: tests/run-all.sh [TOPO...]   (default: every topology below)
# Environment: TEST_TIMEOUT per boot in seconds (default 2400: the first boot
# runs KUnit and 100 unbind cycles under KASAN in an emulator).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
topos=("$@")
[ ${#topos[@]} -gt 0 ] || topos=(switch hostbridge hostbridge-amd mfd iommu)
timeout=${TEST_TIMEOUT:-2400}

n=0 passed=0 failed=0 skipped=0
tap() { # tap ok|notok|skip NAME [DETAIL]
	n=$((n + 1))
	case $1 in
	ok) passed=$((passed + 1)); echo "ok $n - $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok $n - $2 # SKIP ${3:-}" ;;
	*) failed=$((failed + 1)); echo "not ok $n - $2${3:+: $3}" ;;
	esac
}

echo "TAP version 13"

# The kernel under test must be built from our p2pdma files, not the tree's.
tree=$top/build/linux-source-6.12 out=$top/build/out-debug
if [ "$(readlink "$tree/drivers/pci/p2pdma.c")" = "$top/drivers/pci/p2pdma.c" ] &&
   [ "$(readlink "$tree/include/linux/pci-p2pdma.h")" = "$top/include/linux/pci-p2pdma.h" ] &&
   [ "$out/drivers/pci/p2pdma.o" -nt "$top/drivers/pci/p2pdma.c" ] &&
   grep -q "$(sed -n 's/.*"\(P2PDMA to\/from client\) .*/\1/p' "$top/drivers/pci/p2pdma.c")" "$out/vmlinux"; then
	tap ok "debug kernel is built from our p2pdma.c and pci-p2pdma.h"
else
	tap notok "debug kernel is built from our p2pdma.c and pci-p2pdma.h"
fi

first=1
for topo in "${topos[@]}"; do
	# KUnit and the full unbind stress run on the first boot only.
	extra="kunit.enable=0 P2P_UNBIND_CYCLES=10"
	[ $first = 1 ] && extra=""
	first=0
	echo "# topology $topo"
	CMDLINE_EXTRA=$extra "$top/qemu/run.sh" -q -k debug -t "$topo" -T "$timeout" \
		-- "$top/tests/guest/all.sh" > "$top/build/run-$topo.out" 2>&1
	rc=$?
	run=$(sed -n 's/^qemu: .*run dir //p' "$top/build/run-$topo.out")
	out=$top/$run/output.log
	console=$top/$run/console.log
	if [ ! -s "$out" ]; then
		tap notok "$topo: boot" "no guest output (qemu/run.sh exit $rc)"
		sed 's/^/# /' "$top/build/run-$topo.out"
		continue
	fi
	guest_tests=0
	while IFS= read -r line; do
		case $line in
		"ok - "*"# SKIP"*) name=${line#ok - }; tap skip "$topo: ${name%% # SKIP*}" "${name#*# SKIP }" ;;
		"ok - "*) tap ok "$topo: ${line#ok - }"; guest_tests=$((guest_tests + 1)) ;;
		"not ok - "*) tap notok "$topo: ${line#not ok - }"; guest_tests=$((guest_tests + 1)) ;;
		"P2PDMA-EXIT "*) ;;
		*) echo "# $line" ;;
		esac
	done < "$out"
	[ "$guest_tests" -gt 0 ] || tap notok "$topo: guest suite ran" "no results (qemu/run.sh exit $rc)"
	if [ -x "$top/tests/kunit-results.sh" ] && [ -z "$extra" ]; then
		kfail=0
		while IFS= read -r line; do
			case $line in
			"ok "*" - "*) tap ok "kunit: ${line#* - }" ;;
			"not ok "*" - "*) tap notok "kunit: ${line#* - }"; kfail=1 ;;
			"kunit-exit 0") ;;
			"kunit-exit "*) [ $kfail = 1 ] || tap notok "kunit: results in the console log" ;;
			*) echo "# $line" ;;
			esac
		done < <("$top/tests/kunit-results.sh" "$console"; echo "kunit-exit $?")
	fi
	if report=$("$top/qemu/scan-console.sh" "$console"); then
		tap ok "$topo: console clean (KASAN, lockdep, kmemleak, WARNING, BUG)"
	else
		tap notok "$topo: console clean (KASAN, lockdep, kmemleak, WARNING, BUG)" "see $run/console.log"
		echo "$report" | head -n 20 | sed 's/^/# /'
	fi
done

echo "1..$n"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
