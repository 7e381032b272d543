#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Judge the logs of the boots of `make test` as TAP. tests/run-all.sh
# sources this file and calls judge_run after its boots; run alone, it
# judges the saved logs of a run, with no kernel and no boot.
#
# Nothing missing counts as passed:
#  - every suite a machine runs, and its number of cases, must be as
#    tests/plan says: a suite of the plan that did not run, a count that
#    differs, and a suite the plan does not list are failures (the line the
#    plan would need is printed); so is a machine of the plan not booted;
#  - every guest suite declares its plan; a planned case that did not
#    report, a suite that never ended, a suite's non-zero exit status, a
#    missing plan, and a skip the topology did not declare (expect_skip,
#    qemu/run.sh) are failures;
#  - a boot that timed out, ended without the guest's exit status, or with
#    a non-zero one fails; so does a missing console log;
#  - the KUnit suites built into the kernel must all appear, each with as
#    many results as its KTAP plan and as tests/plan says; a KUnit SKIP
#    fails unless its tests/plan line declares it (skip=PATTERN);
#  - a checker report in a console log (KASAN, lockdep, kmemleak, WARNING,
#    BUG, hung task, soft lockup, RCU stall) is a failure; so is a KCSAN
#    report with a frame of our code in a stack (the KCSAN flavour), while
#    one about code that is not ours is listed, with its stacks, at the end.
#
# Usage: tests/judge.sh [--partial] [--print-plan] [DIR]
#   DIR           the logs of a run (default build/test-runs): for each
#                 machine NAME, NAME.out (qemu/run.sh's output, whose "run
#                 dir" line names the run directory, relative to the
#                 checkout two levels above DIR), NAME.rc and NAME.secs, and
#                 optionally NAME.run, the run directory itself (output.log,
#                 console.log, expected-skips). DIR/machines lists the
#                 machines booted ("name topologies extra", as
#                 tests/machines); without it, the machines of tests/machines
#                 that have a NAME.out, and checkout.
#   --partial     only some machines were booted: a machine of the plan that
#                 is absent is no failure, and one the plan does not know
#                 (a topology booted alone) is not checked against it
#   --print-plan  print the tests/plan lines the logs show, instead of TAP
# Environment: P2P_PLAN another plan file (tests/judge-selftest.sh),
# TEST_TIMEOUT the boot timeout, for messages, P2P_RESULTS (tests/run-all.sh).
# Prints "N passed, N failed, N skipped" last; exit status 1 on any failure.

judge_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

n=0 passed=0 failed=0 skipped=0
tap() { # tap ok|notok|skip NAME [DETAIL]
	n=$((n + 1))
	case $1 in
	ok) passed=$((passed + 1)); echo "ok $n - $2" ;;
	skip) skipped=$((skipped + 1)); echo "ok $n - $2 # SKIP ${3:-}" ;;
	*) failed=$((failed + 1)); echo "not ok $n - $2${3:+: $3}" ;;
	esac
	if [ -n "${P2P_RESULTS:-}" ]; then
		local d=${3:-}
		printf '%s\t%s\t%s\n' "$1" "$2" "${d//$'\n'/ }" >> "$P2P_RESULTS"
	fi
}

# The plan: "machine suite" -> cases, and -> its skip patterns; the
# machines in the order of the file.
declare -A plan_cases plan_skips
declare -a plan_machines
# What the logs show: "machine suite" -> cases, in the order seen.
declare -A obs_cases
declare -a obs_keys
boots="" timing=""

# Does a plan line with these extra fields hold for $KERNEL? kernel=K:
# a suite only kernel K runs; the other kernels skip the line.
plan_for_this_kernel() { # EXTRA
	[[ " $1 " != *" kernel="* ]] || [[ " $1 " == *" kernel=${KERNEL:-} "* ]]
}

load_plan() { # FILE
	local m s c extra lineno=0 key f
	plan_cases=() plan_skips=() plan_machines=()
	if [ ! -r "$1" ]; then
		tap notok "plan: $1" "missing"
		return
	fi
	while read -r m s c extra; do
		lineno=$((lineno + 1))
		case $m in '#'* | '') continue ;; esac
		key="$m $s"
		if ! [[ $c =~ ^[0-9]+$ ]]; then
			tap notok "plan: ${1#"$judge_top"/} line $lineno" "cases '$c' is not a number"
			continue
		fi
		plan_for_this_kernel "$extra" || continue
		if [ -n "${plan_cases[$key]+set}" ]; then
			tap notok "plan: ${1#"$judge_top"/} line $lineno" "$m $s is listed twice"
			continue
		fi
		plan_cases[$key]=$c
		plan_skips[$key]=""
		for f in $extra; do
			case $f in
			skip=?*) plan_skips[$key]+="${f#skip=}"$'\n' ;;
			kernel=?*) ;;
			*) tap notok "plan: ${1#"$judge_top"/} line $lineno" "unknown field '$f'" ;;
			esac
		done
		[[ " ${plan_machines[*]} " == *" $m "* ]] || plan_machines+=("$m")
	done < "$1"
}

observe() { # MACHINE SUITE CASES
	local key="$1 $2"
	if [ -n "${obs_cases[$key]+set}" ]; then
		tap notok "$1/$2: reported once" "the suite ran twice"
		return
	fi
	obs_cases[$key]=$3
	obs_keys+=("$key")
}

# The plan line of an observed suite, with the skips its plan line declares.
plan_line() { # KEY
	local key=$1 p line
	line=$(printf '%-9s %-44s %s' "${key%% *}" "${key#* }" "${obs_cases[$key]}")
	while IFS= read -r p; do
		[ -z "$p" ] || line+=" skip=$p"
	done <<< "${plan_skips[$key]:-}"
	echo "$line"
}

# report MACHINE LOG SKIPS: the framed suites of a guest output log.
id="" plan="" count=0
finish() { # END-SEEN RC SECS
	[ -n "$id" ] || return 0
	local pfx="$mname/$id"
	if [ -z "$plan" ]; then
		tap notok "$pfx: plan" "the suite printed no plan (1..N)"
	elif [ "$count" -lt "$plan" ]; then
		tap notok "$pfx: $((plan - count)) planned case(s) did not report" "planned $plan, got $count"
	elif [ "$count" -gt "$plan" ]; then
		tap notok "$pfx: more results than planned" "planned $plan, got $count"
	fi
	# What the suite meant to run: its own plan, else what it reported.
	observe "$mname" "$id" "${plan:-$count}"
	if [ "$1" = 0 ]; then
		tap notok "$pfx: suite ended" "no P2PDMA-END: the guest crashed, hung or was cut off"
	elif [ "$2" = 0 ]; then
		tap ok "$pfx: exit status 0"
	else
		tap notok "$pfx: exit status 0" "exit status $2"
	fi
	timing+=$(printf '\n#   %-12s %-34s %5s s' "$mname" "$id" "${3:--}")
	id="" plan="" count=0
}
report() {
	local mname=$1 log=$2 skips=$3 line name detail res rc secs pat matched
	id="" plan="" count=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"P2PDMA-SUITE "*) finish 0 - -; id=${line#P2PDMA-SUITE }; continue ;;
		"P2PDMA-END "*)
			read -r _ _ rc secs <<< "$line"
			finish 1 "$rc" "$secs"
			continue ;;
		"P2PDMA-EXIT "*) continue ;;
		esac
		if [ -z "$id" ]; then echo "# $line"; continue; fi
		if [[ $line =~ ^1\.\.([0-9]+)(.*)$ ]]; then
			[ -n "$plan" ] && { echo "# $line"; continue; }
			plan=${BASH_REMATCH[1]}
			if [ "$plan" = 0 ]; then
				name="$mname/$id: whole suite skipped${BASH_REMATCH[2]}"
				if grep -qxF "$id" "$skips" 2>/dev/null; then
					tap skip "$mname/$id" "${BASH_REMATCH[2]}"
				else
					tap notok "$name" "a skip the topology does not declare"
				fi
			fi
			continue
		fi
		if [[ $line =~ ^(not )?ok\ [0-9]+\ (-\ )?(.*)$ ]]; then
			count=$((count + 1))
			res=${BASH_REMATCH[1]:+notok}
			name=${BASH_REMATCH[3]}
			if [[ $name =~ ^(.*[^ ])\ +#\ *[Ss][Kk][Ii][Pp]\ *(.*)$ ]]; then
				name=${BASH_REMATCH[1]} detail=${BASH_REMATCH[2]}
				matched=0
				while IFS= read -r pat; do
					# shellcheck disable=SC2053
					[[ "$id: $name" == $pat ]] && matched=1
				done < <(cat "$skips" 2>/dev/null)
				if [ $matched = 1 ]; then
					tap skip "$mname/$id: $name" "$detail"
				else
					tap notok "$mname/$id: $name" "skipped ($detail), but the topology provides what it needs"
				fi
				continue
			fi
			tap "${res:-ok}" "$mname/$id: $name"
			continue
		fi
		echo "# $line"
	done < "$log"
	finish 0 - -
}

# judge_kunit MACHINE CONSOLE: the KUnit results of a console log.
judge_kunit() {
	local mname=$1 console=$2 got krc line l name reason suite pat matched s
	local -A per_suite=()
	local -a order=()
	got=$("$judge_top/tests/kunit-results.py" "$console")
	krc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*" - "* | "not ok "*" - "*) ;;
		*) echo "# $line"; continue ;;
		esac
		l=${line#* - }
		name=${l%% # *}
		# A leaf "suite.case[.param]" counts for its suite; the lines
		# kunit-results.py adds for a plan not kept or a case that never
		# ended are failures of their own.
		case $l in
		*" (planned "*" reported)" | *" (no result: crashed or hung)") ;;
		*.*)
			suite=${name%%.*}
			[ -n "${per_suite[$suite]+set}" ] || order+=("$suite")
			per_suite[$suite]=$((${per_suite[$suite]:-0} + 1)) ;;
		esac
		case $line in
		"ok "*" # SKIP"*)
			reason=${l#*# SKIP}
			reason=${reason# }
			suite=${name%%.*}
			matched=0
			while IFS= read -r pat; do
				# shellcheck disable=SC2053
				[ -n "$pat" ] && [[ ${name#"$suite".} == $pat ]] && matched=1
			done <<< "${plan_skips["$mname kunit:$suite"]:-}"
			if [ $matched = 1 ]; then
				tap skip "kunit: $name" "$reason"
			else
				tap notok "kunit: $name" "skipped ($reason), and tests/plan declares no such skip (skip=PATTERN on its kunit:$suite line)"
			fi ;;
		"ok "*) tap ok "kunit: $l" ;;
		*) tap notok "kunit: $l" ;;
		esac
	done <<< "$got"
	[ $krc = 0 ] || [[ $got == *"not ok"* ]] || tap notok "kunit: results in the console log" "kunit-results.py exit $krc"
	while read -r s; do
		[ -n "${per_suite[$s]+set}" ] ||
			tap notok "kunit: suite $s ran" "no result in the console log"
	done < <(sed -n 's/^[[:space:]]*\.name = "\(p2pdma-[a-z0-9-]*\)",.*/\1/p' "$judge_top"/drivers/pci/p2pdma/tests/*.h | sort -u)
	for s in "${order[@]}"; do
		observe "$mname" "kunit:$s" "${per_suite[$s]}"
	done
}

# judge_kcsan DIR MACHINE CONSOLE: the KCSAN flavour's verdict on one
# console (scripts/test-kcsan.sh). A report in which our code made one of
# the racing accesses (tests/kcsan-reports.sh; DIR/ours-symbols, which
# tests/run-all.sh writes) fails; so does one that reaches our code unless
# tests/kcsan-benign lists its pair of accessing functions for MACHINE,
# reached through call sites of ours it lists (listed ones are shown with
# their reason). Reports with no frame of ours
# are listed with their stacks. A boot of the KCSAN kernel must also show
# that KCSAN worked: its boot-time selftest passed and the guest's
# counters (tests/guest/all.sh) set up watchpoints.
kcsan_notours=""
judge_kcsan() {
	local dir=$1 mname=$2 console=$3 kind title pair stacks via syms="" bad=0 why
	local benign=${P2P_KCSAN_BENIGN:-$judge_top/tests/kcsan-benign}
	if grep -q 'kernel kcsan' "$dir/$mname.out" 2>/dev/null; then
		why=""
		grep -qE 'kcsan: selftest: ([0-9]+)/\1 tests passed' "$console" ||
			why="no 'kcsan: selftest: N/N tests passed' line"
		grep -qE '^ +setup_watchpoints: [1-9]' <(tr -d '\r' < "$(dirname "$console")/output.log") ||
			why+="${why:+; }no non-zero setup_watchpoints among the guest's KCSAN counters"
		if [ -z "$why" ]; then
			tap ok "$mname: KCSAN ran (selftest passed, watchpoints set up)"
		else
			tap notok "$mname: KCSAN ran (selftest passed, watchpoints set up)" "$why"
		fi
	fi
	grep -q 'BUG: KCSAN: ' "$console" || return 0
	[ -s "$dir/ours-symbols" ] && syms=$dir/ours-symbols
	while IFS=$'\t' read -r kind title pair stacks via; do
		if [ "$kind" = ours ]; then
			bad=$((bad + 1))
			tap notok "$mname: KCSAN: $title" "$stacks"
		elif [ "$kind" = reached ]; then
			why=$(awk -v a="${pair% *}" -v b="${pair#* }" -v m="$mname" -v via="$via" '
				/^#/ || NF < 5 { next }
				$1 == a && $2 == b && ("," $3 ",") ~ ("," m ",") {
					n = split(via, v, ",")
					for (i = 1; i <= n; i++)
						if (("," $4 ",") !~ ("," v[i] ","))
							{ print "!" $4; exit }
					$1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print; exit }' "$benign")
			if [ "${why#!}" != "$why" ]; then
				bad=$((bad + 1))
				tap notok "$mname: KCSAN: $title (reached through our code at $via; tests/kcsan-benign lists $pair for $mname only at ${why#!})" "$stacks"
			elif [ -n "$why" ]; then
				kcsan_notours+=$(printf '\n#   %-12s %s (reached through our code; benign: %s): %s' "$mname" "$title" "$why" "$stacks")
			else
				bad=$((bad + 1))
				tap notok "$mname: KCSAN: $title (reached through our code; $pair is not a pair tests/kcsan-benign lists for $mname)" "$stacks"
			fi
		else
			kcsan_notours+=$(printf '\n#   %-12s %s: %s' "$mname" "$title" "$stacks")
		fi
	done < <("$judge_top/tests/kcsan-reports.sh" "$console" ${syms:+"$syms"})
	[ "$bad" -gt 0 ] || tap ok "$mname: no KCSAN report about our code"
}

# judge_kunitpy DIR: the KUnit suites once more under the kernel's own
# runner, tools/testing/kunit/kunit.py, with its one-CPU QEMU (started by
# tests/run-all.sh, which then leaves DIR/kunitpy.expected). Every case
# of tests/plan's KUnit suites must run and pass, or skip for a reason
# listed here, and the kernel log must be clean (qemu/scan-console.sh).
# One CPU cannot run a second thread beside the first (the first three),
# kunit.py's QEMU has no ivshmem for p2pmem-bar to claim, and 6.12 has no
# provider of a BAR without pages (the backport's bb_provider_per_bar) and
# no folios of PMD order for a dma-buf's mapping (db_mmap_pmd_test).
kunitpy_skips=" publish_races_close_test release_waits_for_readers_test alloc_run_on_other_cpu_not_stranded_test p2pmem_bar_claimed_bar_test bb_provider_per_bar db_mmap_pmd_test "
judge_kunitpy() {
	local dir=$1 rc ran want=0 key name bad="" out
	[ -e "$dir/kunitpy.expected" ] || return 0
	echo "# kunit.py: the KUnit suites on one CPU ($(cat "$dir/kunitpy.secs" 2>/dev/null || echo '?') s)"
	rc=$(cat "$dir/kunitpy.rc" 2>/dev/null || echo "none (it never ended)")
	for key in "${!plan_cases[@]}"; do
		[[ $key == *" kunit:"* ]] && want=$((want + plan_cases[$key]))
	done
	ran=$(sed -n 's/.*Testing complete\. Ran \([0-9]*\) tests.*/\1/p' "$dir/kunitpy.out" 2>/dev/null | tail -n 1)
	if [ "$rc" = 0 ] && [ "$ran" = "$want" ]; then
		tap ok "kunit.py: every case of the KUnit suites passes or skips on one CPU ($want)"
	else
		tap notok "kunit.py: every case of the KUnit suites passes or skips on one CPU ($want)" \
			"kunit.py exit $rc, ran ${ran:-no} tests"
		grep -E '\[FAILED\]|\[CRASHED\]|Testing complete|Error|rror:' "$dir/kunitpy.out" 2>/dev/null | head -n 20 | sed 's/^/# /'
	fi
	while read -r name; do
		[[ $kunitpy_skips == *" $name "* ]] || bad+=" $name"
	done < <(grep -v '====' "$dir/kunitpy.out" 2>/dev/null | sed -n 's/.*\[SKIPPED\] \([^ ]*\).*/\1/p')
	if [ -z "$bad" ]; then
		tap ok "kunit.py: no skip on one CPU but those listed in tests/judge.sh"
	else
		tap notok "kunit.py: no skip on one CPU but those listed in tests/judge.sh" "skipped:$bad"
	fi
	if out=$("$judge_top/qemu/scan-console.sh" "$dir/kunitpy.console"); then
		tap ok "kunit.py: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task, RCU stall)"
	else
		tap notok "kunit.py: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task, RCU stall)" "see $dir/kunitpy.console"
		echo "$out" | head -n 20 | sed 's/^/# /'
	fi
}

# The run directory of a machine: DIR/NAME.run, else the "run dir" of its
# qemu/run.sh output, under the checkout that ran it.
run_dir() { # DIR NAME
	local run
	if [ -d "$1/$2.run" ]; then
		echo "$1/$2.run"
		return
	fi
	run=$(sed -n 's/^qemu: .*run dir //p' "$1/$2.out" 2>/dev/null | tail -n 1)
	[ -n "$run" ] || return 0
	if [ -d "$1/../../$run" ]; then
		(cd "$1/../../$run" && pwd)
	else
		echo "$judge_top/$run"
	fi
}

judge_machine() { # DIR NAME TOPO EXTRA
	local dir=$1 mname=$2 topo=$3 extra=$4 rc secs rdir guest console out
	echo "# machine $mname: $topo"
	rc=$(cat "$dir/$mname.rc" 2>/dev/null || echo 255)
	secs=$(cat "$dir/$mname.secs" 2>/dev/null || echo 0)
	boots+=$(printf '\n#   %-12s %-34s %5s s' "$mname" "$topo" "$secs")
	rdir=$(run_dir "$dir" "$mname")
	guest=$rdir/output.log console=$rdir/console.log
	case $rc in
	0) tap ok "$mname: boot ended with guest exit status 0" ;;
	124) tap notok "$mname: boot ended with guest exit status 0" "timed out after ${TEST_TIMEOUT:-1800}s" ;;
	125) tap notok "$mname: boot ended with guest exit status 0" "the guest reported no exit status" ;;
	*) tap notok "$mname: boot ended with guest exit status 0" "qemu/run.sh exit $rc" ;;
	esac
	if [ -z "$rdir" ] || [ ! -s "$guest" ]; then
		tap notok "$mname: guest output" "none (qemu/run.sh exit $rc)"
		sed 's/^/# /' "$dir/$mname.out" 2>/dev/null
		return
	fi
	[ "$rc" = 0 ] || sed 's/^/# /' "$dir/$mname.out" 2>/dev/null | tail -n 45
	report "$mname" "$guest" "$rdir/expected-skips"
	if [ ! -s "$console" ]; then
		tap notok "$mname: console log" "missing or empty: $console"
		return
	fi
	# guest/init.sh ends every boot with this marker; a console without
	# it was cut short, and a report it lost would go unseen.
	if grep -q '^\[ *[0-9.]*\] P2PDMA-CONSOLE-END' "$console"; then
		tap ok "$mname: console complete (end-of-boot marker)"
	else
		tap notok "$mname: console complete (end-of-boot marker)" "no P2PDMA-CONSOLE-END in $console"
	fi
	if [[ " ${extra//,/ } " != *" kunit.enable=0 "* ]]; then
		judge_kunit "$mname" "$console"
	fi
	judge_kcsan "$dir" "$mname" "$console"
	if out=$("$judge_top/qemu/scan-console.sh" "$console"); then
		tap ok "$mname: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task, RCU stall)"
	else
		tap notok "$mname: console clean (KASAN, lockdep, kmemleak, WARNING, BUG, hung task, RCU stall)" "see $console"
		echo "$out" | head -n 20 | sed 's/^/# /'
	fi
}

# judge_plan MACHINE KIND: the suites of one kind (guest or kunit) that
# MACHINE ran, against its lines in the plan. Returns 1 on a difference.
judge_plan() {
	local m=$1 kind=$2 key s bad=0 what=suites pfx=""
	local -a keys
	[ "$kind" = kunit ] && what="KUnit suites" pfx="kunit: "
	mapfile -t keys < <(printf '%s\n' "${!plan_cases[@]}" "${!obs_cases[@]}" | grep "^$m " | sort -u)
	for key in "${keys[@]}"; do
		s=${key#* }
		if [ "$kind" = kunit ]; then
			[[ $s == kunit:* ]] || continue
		else
			[[ $s != kunit:* ]] || continue
		fi
		if [ -z "${obs_cases[$key]+set}" ]; then
			tap notok "${pfx}plan: $m/$s ran" "tests/plan lists it (${plan_cases[$key]} cases), the logs do not show it; if it is meant to go, delete its plan line"
		elif [ -z "${plan_cases[$key]+set}" ]; then
			tap notok "${pfx}plan: $m/$s is in tests/plan" "it ran (${obs_cases[$key]} cases); if it is meant to run, add the line: $(plan_line "$key")"
		elif [ "${plan_cases[$key]}" != "${obs_cases[$key]}" ]; then
			tap notok "${pfx}plan: $m/$s has ${plan_cases[$key]} cases" "it has ${obs_cases[$key]}; if that is meant, the plan line is: $(plan_line "$key")"
		else
			continue
		fi
		bad=1
	done
	[ $bad = 1 ] || tap ok "$pfx$m: $what and case counts as tests/plan says"
	return $bad
}

# judge_run DIR FULL: judge every machine of a run (FULL=1: all machines
# of tests/machines were meant to boot; 0: some).
judge_run() {
	local dir=$1 full=$2 name topo extra i m key mismatch
	local -a names topos extras
	obs_cases=() obs_keys=() boots="" timing="" kcsan_notours=""
	load_plan "${P2P_PLAN:-$judge_top/tests/plan}"
	if [ -f "$dir/machines" ]; then
		while read -r name topo extra; do
			case $name in '#'* | '') continue ;; esac
			names+=("$name") topos+=("$topo") extras+=("${extra:--}")
		done < "$dir/machines"
	else
		while read -r name topo extra; do
			case $name in '#'* | '') continue ;; esac
			[ -e "$dir/$name.out" ] || continue
			names+=("$name") topos+=("$topo") extras+=("${extra:--}")
		done < "$judge_top/tests/machines"
		[ -e "$dir/checkout.out" ] && names+=(checkout) topos+=(none) extras+=(kunit.enable=0)
	fi
	for i in "${!names[@]}"; do
		judge_machine "$dir" "${names[$i]}" "${topos[$i]}" "${extras[$i]}"
	done
	judge_kunitpy "$dir"
	for i in "${!names[@]}"; do
		m=${names[$i]}
		if [[ " ${plan_machines[*]} " != *" $m "* ]]; then
			if [ "$full" = 1 ]; then
				tap notok "plan: $m is in tests/plan" "tests/machines boots it, tests/plan has no line for it"
			else
				echo "# $m: not in tests/plan (topologies booted alone), not checked against it"
			fi
			mismatch=1
		else
			mismatch=0
			judge_plan "$m" guest || mismatch=1
			if [[ " ${extras[$i]//,/ } " != *" kunit.enable=0 "* ]] ||
			   printf '%s\n' "${!plan_cases[@]}" | grep -q "^$m kunit:"; then
				judge_plan "$m" kunit || mismatch=1
			fi
		fi
		[ "$mismatch" = 1 ] || continue
		echo "# the lines of $m that these logs give tests/plan:"
		for key in "${obs_keys[@]}"; do
			[ "${key%% *}" = "$m" ] && echo "#   $(plan_line "$key")"
		done
	done
	if [ "$full" = 1 ]; then
		for m in "${plan_machines[@]}"; do
			[[ " ${names[*]} " == *" $m "* ]] ||
				tap notok "plan: $m booted" "tests/plan lists its suites, but no log of it is here (tests/machines no longer boots it?)"
		done
	fi
}

# The observed plan, in tests/plan's format.
print_plan() {
	local key
	for key in "${obs_keys[@]}"; do
		plan_line "$key"
	done
}

# Run alone: judge a directory of logs.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	full=1 print=0
	while [ $# -gt 0 ]; do
		case $1 in
		--partial) full=0 ;;
		--print-plan) print=1 ;;
		-*) echo "usage: tests/judge.sh [--partial] [--print-plan] [DIR]" >&2; exit 2 ;;
		*) break ;;
		esac
		shift
	done
	dir=${1:-$judge_top/build/test-runs}
	[ -d "$dir" ] || { echo "judge: no directory $dir" >&2; exit 2; }
	if [ "$print" = 1 ]; then
		judge_run "$dir" "$full" > /dev/null
		print_plan
		exit 0
	fi
	echo "TAP version 13"
	judge_run "$dir" "$full"
	[ -z "$kcsan_notours" ] || echo "# KCSAN reports about code that is not ours:$kcsan_notours"
	echo "# time of each boot:$boots"
	echo "# time of each suite in the guest:$timing"
	echo "1..$n"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
fi
