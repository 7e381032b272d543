#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2016  # awk programs and sh -c scripts, single-quoted
#
# Test the judge of `make test` (tests/judge.sh) without a kernel: it must
# pass a run that matches tests/plan, and fail, with a "not ok" line that
# names what is wrong, every run that lost something. The runs are logs:
#  - synthetic ones made from tests/plan (always; `make check` runs this);
#  - with DIR, also a copy of a real run's logs (build/test-runs after
#    `make test`), which must pass as they are.
# Each is mutated in a scratch copy: a suite's output dropped, a case line
# dropped, a suite planning one case fewer (a TEST_F a -t filter no longer
# finds), a scenario renamed, a suite the plan does not list, an undeclared
# guest skip, an undeclared KUnit skip (and the same skip declared in a
# plan), a plan line of another kernel (kernel=K: no plan here) and one
# of this kernel whose suite did not run, a KUnit suite dropped, a
# machine not booted, a machine booted alone with the made-up log of issue #22 (e2e, two p2pdma_test cases and
# kmemleak), an RCU stall in a console log, a console without the
# end-of-boot marker, a task left blocked, lockdep off at the end or
# switched off, printk messages dropped, a DMA-API or debugobjects report; a KCSAN report about a race
# our code made fails, one about other code is listed and passes; one
# that other code made below a call of ours fails unless its pair is
# listed for that machine (tests/kcsan-benign), or is reached through a
# call site of ours not listed for it; a KCSAN boot without its
# selftest line or watchpoints fails; kunit.py's one-CPU run that never
# reported, ran a case fewer or skipped an unlisted case fails.
#
# Usage: tests/judge-selftest.sh [DIR]
# Prints "judge-selftest: N passed, N failed"; exit status 1 on a failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
judge=$top/tests/judge.sh
# shellcheck source=tests/judge.sh
. "$judge"
tmp=$(mktemp -d /tmp/judge-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
npass=0 nfail=0

result() { # ok|notok NAME [WHY]
	if [ "$1" = ok ]; then
		npass=$((npass + 1))
		echo "ok - $2"
	else
		nfail=$((nfail + 1))
		echo "not ok - $2${3:+: $3}"
	fi
}

# synth DIR: the logs of a run that does exactly what tests/plan says.
synth() {
	local dir=$1 m s c topo extra k key
	local -A seen=()
	mkdir -p "$dir"
	while read -r m s c extra; do
		case $m in '#'* | '') continue ;; esac
		plan_for_this_kernel "$extra" || continue
		if [ -z "${seen[$m]+set}" ]; then
			seen[$m]=1
			topo=$(awk -v m="$m" '$1 == m { print $2 }' "$top/tests/machines")
			extra=$(awk -v m="$m" '$1 == m { print $3 }' "$top/tests/machines")
			[ "$m" = checkout ] && topo=none extra=kunit.enable=0
			echo "$m ${topo:-none} ${extra:--}" >> "$dir/machines"
			echo "qemu: topology $topo, kernel debug, accel tcg, run dir build/runs/$m-synthetic" > "$dir/$m.out"
			echo 0 > "$dir/$m.rc"
			echo 1 > "$dir/$m.secs"
			mkdir -p "$dir/$m.run"
			touch "$dir/$m.run/expected-skips"
			echo "[    0.000000] Linux version 6.12.0 (synthetic)" > "$dir/$m.run/console.log"
		fi
		if [[ $s == kunit:* ]]; then
			printf '%s\n' "$m ${s#kunit:} $c" >> "$dir/kunit-suites"
			continue
		fi
		{
			echo "P2PDMA-SUITE $s"
			echo "1..$c"
			for ((k = 1; k <= c; k++)); do echo "ok $k - case_$k"; done
			echo "P2PDMA-END $s 0 1"
		} >> "$dir/$m.run/output.log"
	done < "$top/tests/plan"
	for m in "${!seen[@]}"; do
		echo "P2PDMA-EXIT 0" >> "$dir/$m.run/output.log"
	done
	# KTAP as the kernel prints it, one level per suite.
	touch "$dir/kunit-suites"
	for m in "${!seen[@]}"; do
		grep -q "^$m " "$dir/kunit-suites" || continue
		awk -v m="$m" '
			$1 == m { name[++n] = $2; cnt[n] = $3 }
			END {
				printf "[    1.000000] KTAP version 1\n[    1.000000] 1..%d\n", n
				for (i = 1; i <= n; i++) {
					printf "[    1.000000]     KTAP version 1\n"
					printf "[    1.000000]     # Subtest: %s\n", name[i]
					printf "[    1.000000]     1..%d\n", cnt[i]
					for (k = 1; k <= cnt[i]; k++)
						printf "[    1.000000]     ok %d case_%d\n", k, k
					printf "[    1.000000] ok %d %s\n", i, name[i]
				}
			}' "$dir/kunit-suites" >> "$dir/$m.run/console.log"
	done
	rm "$dir/kunit-suites"
	for m in "${!seen[@]}"; do
		echo "[    2.000000] P2PDMA-CONSOLE-END" >> "$dir/$m.run/console.log"
	done
	# Both logs come from a serial port: CRLF.
	for m in "${!seen[@]}"; do
		sed -i 's/$/\r/' "$dir/$m.run/output.log" "$dir/$m.run/console.log"
	done
}

# copy_run SRC DIR: a self-contained copy of a real run's logs.
copy_run() {
	local src=$1 dir=$2 out m rdir f
	mkdir -p "$dir"
	[ ! -f "$src/machines" ] || cp "$src/machines" "$dir/"
	for out in "$src"/*.out; do
		m=$(basename "$out" .out)
		cp "$src/$m.out" "$dir/"
		cp "$src/$m.rc" "$src/$m.secs" "$dir/" 2>/dev/null
		rdir=$(run_dir "$src" "$m")
		mkdir -p "$dir/$m.run"
		for f in output.log console.log expected-skips; do
			[ ! -f "$rdir/$f" ] || cp "$rdir/$f" "$dir/$m.run/"
		done
	done
}

# edit FILE AWK-ARG...: rewrite FILE through awk, without the carriage
# returns of the serial port.
edit() {
	local f=$1
	shift
	tr -d '\r' < "$f" | awk "$@" > "$f.new" && mv "$f.new" "$f"
}

# ere STRING: STRING as a literal in an extended regular expression.
ere() {
	sed 's/[][\.*^$+?(){}|/]/\\&/g' <<< "$1"
}

# expect LABEL BASE WANT-EXIT PATTERN [--partial] -- MUTATION...: judge a copy
# of BASE after MUTATION (run in the copy); the judge must exit as WANT-EXIT
# (0 or 1) and print a line matching PATTERN (grep -E).
expect() {
	local label=$1 base=$2 want=$3 pat=$4 got rc
	local -a opts=()
	shift 4
	[ "${1:-}" = --partial ] && { opts+=(--partial); shift; }
	[ "${1:-}" = -- ] && shift
	rm -rf "$tmp/case"
	cp -a "$base" "$tmp/case"
	if [ $# -gt 0 ] && ! (cd "$tmp/case" && "$@"); then
		result notok "$label" "the mutation failed"
		return
	fi
	got=$("$judge" "${opts[@]}" "$tmp/case" 2>&1)
	rc=$?
	[ "$rc" -le 1 ] || { result notok "$label" "judge exit $rc"; echo "$got" | tail -n 5 | sed 's/^/#   /'; return; }
	if [ "$rc" != "$want" ]; then
		result notok "$label" "judge exit $rc, wanted $want"
		grep '^not ok\|passed,' <<< "$got" | head -n 10 | sed 's/^/#   /'
	elif ! grep -qE "$pat" <<< "$got"; then
		result notok "$label" "no line matches /$pat/"
		grep '^not ok\|passed,' <<< "$got" | head -n 10 | sed 's/^/#   /'
	elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' <<< "$(tail -n 1 <<< "$got")"; then
		result notok "$label" "the last line is not 'N passed, N failed, N skipped'"
	else
		result ok "$label"
	fi
}

# The machines of a run directory, in order.
machines() { # DIR
	if [ -f "$1/machines" ]; then
		awk '!/^#/ && NF { print $1 }' "$1/machines"
	else
		for f in "$1"/*.out; do basename "$f" .out; done
	fi
}

# kcsan_report A B: a KCSAN report of a race between functions A and B.
kcsan_report() {
	printf '[  99.000000] %s\n' "$(printf '=%.0s' {1..66})" "BUG: KCSAN: data-race in $1 / $2" "" \
		"write to 0xffff888003a1c0c8 of 8 bytes by task 5 on cpu 1:" " $1+0x1/0x2" " f+0x1/0x2" " g+0x1/0x2" "" \
		"read to 0xffff888003a1c0c8 of 8 bytes by task 6 on cpu 0:" " $2+0x1/0x2" "" \
		"Reported by Kernel Concurrency Sanitizer on:" "$(printf '=%.0s' {1..66})"
}
export -f kcsan_report
# kcsan_race "A [CALLER...]" "B [CALLER...]": the same, with the given
# frames under each access.
kcsan_race() {
	local f
	printf '[  99.000000] %s\n' "$(printf '=%.0s' {1..66})" "BUG: KCSAN: data-race in ${1%% *} / ${2%% *}" "" \
		"write to 0xffff888003a1c0c8 of 8 bytes by task 5 on cpu 1:"
	for f in $1; do printf '[  99.000000]  %s+0x1/0x2\n' "$f"; done
	printf '[  99.000000] %s\n' "" "read to 0xffff888003a1c0c8 of 8 bytes by task 6 on cpu 0:"
	for f in $2; do printf '[  99.000000]  %s+0x1/0x2\n' "$f"; done
	printf '[  99.000000] %s\n' "" "Reported by Kernel Concurrency Sanitizer on:" "$(printf '=%.0s' {1..66})"
}
export -f kcsan_race

# Mutations of one run: must pass as it is, and fail each way.
mutate() { # LABEL DIR
	local label=$1 base=$2 m km="" s scn n knr kname ksuite kcase m2 f
	for f in $(machines "$base"); do
		grep -q '^P2PDMA-SUITE .*/' "$base/$f.run/output.log" 2>/dev/null && { m=$f; break; }
	done
	for f in $(machines "$base"); do
		grep -q '# Subtest: ' "$base/$f.run/console.log" 2>/dev/null && { km=$f; break; }
	done
	[ -n "${m:-}" ] || { result notok "$label: a machine with scenario suites"; return; }
	s=$(tr -d '\r' < "$base/$m.run/output.log" | sed -n 's/^P2PDMA-SUITE \(.*\/.*\)/\1/p' | head -n 1)
	scn=${s%%/*}
	n=$(tr -d '\r' < "$base/$m.run/output.log" |
		awk -v s="$s" '$0 == "P2PDMA-SUITE " s { on = 1; next } on && /^1\.\./ { sub(/^1\.\./, ""); print $1 + 0; exit }')
	m2=$(machines "$base" | grep -vx "$m" | head -n 1)
	local out=$m.run/output.log

	expect "$label: the run as it is passes" "$base" 0 '^0 failed|, 0 failed,'
	expect "$label: $m/$s dropped" "$base" 1 "^not ok [0-9]+ - plan: $m/$s ran" -- \
		edit "$out" -v s="$s" '$0 == "P2PDMA-SUITE " s { skip = 1 } !skip { print } $0 ~ "^P2PDMA-END " s " " { skip = 0 }'
	expect "$label: a case line of $m/$s dropped" "$base" 1 "^not ok [0-9]+ - $m/$s: 1 planned case\\(s\\) did not report" -- \
		edit "$out" -v s="$s" '$0 == "P2PDMA-SUITE " s { on = 1 } on && /^(not )?ok / && !done { done = 1; next } { print }'
	expect "$label: $m/$s plans one case fewer" "$base" 1 "^not ok [0-9]+ - plan: $m/$s has $n cases: it has $((n - 1)); .*plan line is: $m +$s +$((n - 1))" -- \
		edit "$out" -v s="$s" -v n="$n" '$0 == "P2PDMA-SUITE " s { on = 1 } on && /^1\.\./ { print "1.." n - 1; next } on && /^(not )?ok / && ++k == n { next } /^P2PDMA-END / { on = 0 } { print }'
	expect "$label: scenario $scn renamed" "$base" 1 "^not ok [0-9]+ - plan: $m/${scn}_renamed/.* is in tests/plan: .*add the line: $m +${scn}_renamed/" -- \
		edit "$out" -v scn="$scn" '/^P2PDMA-(SUITE|END) / && index($2, scn "/") == 1 { $2 = scn "_renamed/" substr($2, length(scn) + 2) } { print }'
	expect "$label: scenario $scn renamed, the old one missing" "$base" 1 "^not ok [0-9]+ - plan: $m/$s ran" -- \
		edit "$out" -v scn="$scn" '/^P2PDMA-(SUITE|END) / && index($2, scn "/") == 1 { $2 = scn "_renamed/" substr($2, length(scn) + 2) } { print }'
	expect "$label: a suite the plan does not list" "$base" 1 "^not ok [0-9]+ - plan: $m/$scn/unplanned is in tests/plan" -- \
		edit "$out" -v scn="$scn" '/^P2PDMA-EXIT / { print "P2PDMA-SUITE " scn "/unplanned"; print "1..1"; print "ok 1 - x"; print "P2PDMA-END " scn "/unplanned 0 0" } { print }'
	expect "$label: an undeclared guest skip" "$base" 1 "^not ok [0-9]+ - $m/$s: .*skipped \\(synthetic\\), but the topology" -- \
		edit "$out" -v s="$s" '$0 == "P2PDMA-SUITE " s { on = 1 } on && /^ok / && !done { done = 1; $0 = $0 " # SKIP synthetic" } { print }'
	if [ -n "$m2" ]; then
		expect "$label: machine $m2 not booted" "$base" 1 "^not ok [0-9]+ - plan: $m2 booted" -- \
			sh -c 'rm -rf "$1".* && if [ -f machines ]; then grep -v "^$1 " machines > m.new; mv m.new machines; fi' - "$m2"
	fi
	# Issue #22: a machine booted alone whose log holds only e2e, two
	# p2pdma_test cases and kmemleak.
	expect "$label: $m alone with e2e, two p2pdma_test cases and kmemleak" "$base" 1 "^not ok [0-9]+ - plan: $m/" --partial -- \
		sh -c 'for f in *.out; do [ "$f" = "$1.out" ] || rm -rf "${f%.out}".*; done
		       if [ -f machines ]; then grep "^$1 " machines > m.new; mv m.new machines; fi
		       awk -v scn="$2" '\''
			/^P2PDMA-SUITE / { keep = ($2 == scn "/e2e" || $2 == "kmemleak") }
			/^P2PDMA-SUITE / && $2 == scn "/p2pdma_test" {
				print; print "1..2"; print "ok 1 p2pmem.a"; print "ok 2 p2pmem.b"
				print "P2PDMA-END " $2 " 0 1"; next }
			keep || /^P2PDMA-EXIT / { print }
			/^P2PDMA-END / { keep = 0 }'\'' "$1.run/output.log" > o.new && mv o.new "$1.run/output.log"' - "$m" "$scn"
	expect "$label: an RCU stall in $m's console" "$base" 1 "^not ok [0-9]+ - $m: console clean" -- \
		sh -c 'echo "[  99.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" >> "$1.run/console.log.x"
		       cat "$1.run/console.log" "$1.run/console.log.x" > c.new && mv c.new "$1.run/console.log"; rm "$1.run/console.log.x"' - "$m"
	expect "$label: $m's console cut short before the end-of-boot marker" "$base" 1 "^not ok [0-9]+ - $m: console complete" -- \
		edit "$m.run/console.log" '!/P2PDMA-CONSOLE-END/ { print }'
	expect "$label: a task left blocked at the end of $m's boot" "$base" 1 "^not ok [0-9]+ - $m: console clean" -- \
		sh -c 'printf "[  99.000000] task:sh              state:D stack:0     pid:99    tgid:99    ppid:1      flags:0x00004002\r\n" >> "$1.run/console.log"' - "$m"
	# The DMA-API report on two devices mapping one P2P page is excused
	# where the test importer had the NVMe read into it (imp_ioctl() in
	# the call trace), and only there.
	eexist='printf "[  99.000000] %s\r\n" "DMA-API: nvme 0000:01:00.1: cacheline tracking EEXIST, overlapping mappings aren'"'"'t supported" \
		"WARNING: CPU: 0 PID: 981 at kernel/dma/debug.c:601 add_dma_entry+0x3ac/0x550" "Call Trace:" " nvme_prep_rq+0x43b/0x2e90" \
		" $2+0x1986/0x29e0" "---[ end trace 0000000000000000 ]---" "DMA-API: Mapped at:" >> "$1.run/console.log"'
	expect "$label: DMA-API's cacheline EEXIST on the test importer's page in $m's console" "$base" 0 "^ok [0-9]+ - $m: console clean" -- \
		sh -c "$eexist" - "$m" imp_ioctl
	expect "$label: DMA-API's cacheline EEXIST elsewhere in $m's console" "$base" 1 "^not ok [0-9]+ - $m: console clean" -- \
		sh -c "$eexist" - "$m" blkdev_ioctl
	# 6.12's pciehp lockdep report on a removal, and lockdep off after it,
	# are excused; the same report about another lock is not.
	pciehp='printf "[  99.000000] %s\r\n" "WARNING: possible circular locking dependency detected" \
		"6.12.117 #11 Not tainted" "------------------------------------------------------" \
		"irq/24-pciehp/39 is trying to acquire lock:" \
		"ffff88800658cb00 (&ctrl->reset_lock){.+.+}-{3:3}, at: pciehp_unconfigure_device+0x1bf/0x2b0" "" \
		"but task is already holding lock:" \
		"ffffffff8283f8c8 ($2){+.+.}-{3:3}, at: pciehp_unconfigure_device+0xcd/0x2b0" \
		"P2PDMA-DEBUG-LOCKS 0" >> "$1.run/console.log"'
	expect "$label: 6.12 pciehp's lockdep report on a removal in $m's console" "$base" 0 "^ok [0-9]+ - $m: console clean" -- \
		sh -c "$pciehp" - "$m" pci_rescan_remove_lock
	expect "$label: a pciehp lockdep report about another lock in $m's console" "$base" 1 "^not ok [0-9]+ - $m: console clean" -- \
		sh -c "$pciehp" - "$m" p2p_setup_lock
	# Checkers that reported, or that could have missed a report.
	for line in "P2PDMA-DEBUG-LOCKS 0" \
		"INFO: trying to register non-static key." \
		"** 12 printk messages dropped **" \
		"DMA-API: nvme 0000:01:00.0: device driver has pending DMA allocations while released from device [count=1]" \
		"ODEBUG: free active (active state 0) object: 00000000deadbeef object type: work_struct hint: f+0x0/0x10"; do
		expect "$label: \"${line%% [[(]*}\" in $m's console" "$base" 1 "^not ok [0-9]+ - $m: console clean" -- \
			sh -c 'printf "[  99.000000] %s\r\n" "$2" >> "$1.run/console.log"' - "$m" "$line"
	done
	expect "$label: a KCSAN report about our code in $m's console" "$base" 1 \
		"^not ok [0-9]+ - $m: KCSAN: data-race in p2p_take / tick_do: write by task 5 on cpu 1: p2p_take\+0x1/0x2" -- \
		bash -c 'echo p2p_take > ours-symbols; kcsan_report p2p_take tick_do >> "$1.run/console.log"' - "$m"
	expect "$label: a KCSAN report about other code in $m's console" "$base" 0 \
		"^#   $m +data-race in p2p_take / tick_do: write by task 5 on cpu 1: p2p_take\+0x1/0x2 < f\+0x1/0x2 < g\+0x1/0x2; read by" -- \
		bash -c 'echo other > ours-symbols; kcsan_report p2p_take tick_do >> "$1.run/console.log"' - "$m"
	expect "$label: a KCSAN report about other code below ours in $m's console, not listed" "$base" 1 \
		"^not ok [0-9]+ - $m: KCSAN: data-race in gen_pool_x / tick_do \(reached through our code; gen_pool_x tick_do is not a pair" -- \
		bash -c 'echo p2p_take > ours-symbols; kcsan_report gen_pool_x tick_do | sed "s/ g+0x1/ p2p_take+0x1/" >> "$1.run/console.log"' - "$m"
	# Issue #35's made-up report: genalloc's destroy under our release
	# against its free under ours, the shape of a use-after-free race.
	expect "$label: gen_pool_destroy under our release against gen_pool_free_owner under ours" "$base" 1 \
		"^not ok [0-9]+ - $m: KCSAN: data-race in gen_pool_destroy / gen_pool_free_owner \(reached through our code" -- \
		bash -c 'printf "p2p_provider_release\np2p_run_add\n" > ours-symbols
			 kcsan_race "gen_pool_destroy p2p_provider_release devres_release_all" \
				    "gen_pool_free_owner p2p_run_add pci_free_p2pmem" >> "$1.run/console.log"' - "$m"
	printf 'gen_pool_first_fit gen_pool_free_owner %s p2p_alloc,p2p_pool_put genalloc, listed\n' "$m" > "$tmp/benign"
	P2P_KCSAN_BENIGN=$tmp/benign expect "$label: a pair listed for $m in $m's console" "$base" 0 \
		"^#   $m +data-race in bitmap_clear_ll / _find_next_zero_bit \(reached through our code; benign: genalloc, listed\)" -- \
		bash -c 'echo p2p_alloc > ours-symbols
			 kcsan_race "bitmap_clear_ll gen_pool_free_owner p2p_pool_put" \
				    "_find_next_zero_bit bitmap_find_next_zero_area_off gen_pool_first_fit gen_pool_alloc_algo_owner p2p_alloc" \
				    | sed "s/ p2p_pool_put+/ p2p_alloc+/" >> "$1.run/console.log"' - "$m"
	P2P_KCSAN_BENIGN=$tmp/benign expect "$label: a listed pair reached through a call site not listed" "$base" 1 \
		"^not ok [0-9]+ - $m: KCSAN: data-race in bitmap_clear_ll / _find_next_zero_bit \(reached through our code at p2p_alloc,p2p_other; tests/kcsan-benign lists gen_pool_first_fit gen_pool_free_owner for $m only at p2p_alloc,p2p_pool_put\)" -- \
		bash -c 'printf "p2p_alloc\np2p_other\n" > ours-symbols
			 kcsan_race "bitmap_clear_ll gen_pool_free_owner p2p_other" \
				    "_find_next_zero_bit gen_pool_first_fit gen_pool_alloc_algo_owner p2p_alloc" >> "$1.run/console.log"' - "$m"
	if [ -n "$m2" ]; then
		P2P_KCSAN_BENIGN=$tmp/benign expect "$label: the pair listed for $m in $m2's console" "$base" 1 \
			"^not ok [0-9]+ - $m2: KCSAN: data-race in bitmap_clear_ll / _find_next_zero_bit \(reached through our code; gen_pool_first_fit gen_pool_free_owner is not a pair" -- \
			bash -c 'echo p2p_alloc > ours-symbols
				 kcsan_race "bitmap_clear_ll gen_pool_free_owner p2p_alloc" \
					    "_find_next_zero_bit gen_pool_first_fit p2p_alloc" >> "$1.run/console.log"' - "$m2"
	fi
	# kunit.py's one-CPU run (tests/run-all.sh starts it beside the boots).
	local kall
	kall=$(awk -v k="kernel=${KERNEL:-}" '!/^#/ && $2 ~ /^kunit:/ {
		for (i = 4; i <= NF; i++)
			if ($i ~ /^kernel=/ && $i != k)
				next
		n += $3
	} END { print n + 0 }' "$top/tests/plan")
	expect "$label: kunit.py started, nothing reported" "$base" 1 "^not ok [0-9]+ - kunit.py: every case .*: kunit.py exit none" -- \
		touch kunitpy.expected
	expect "$label: kunit.py ran every case, with the listed skips" "$base" 0 "^ok [0-9]+ - kunit.py: no skip on one CPU" -- \
		sh -c 'touch kunitpy.expected; echo 0 > kunitpy.rc; echo "[    1.000000] clean" > kunitpy.console
		       printf "[00:00:01] [SKIPPED] p2pmem_bar_claimed_bar_test\n[00:00:02] Testing complete. Ran %s tests: passed: %s, skipped: 1\n" "$1" "$(($1 - 1))" > kunitpy.out' - "$kall"
	expect "$label: kunit.py ran one case fewer" "$base" 1 "^not ok [0-9]+ - kunit.py: every case .*: kunit.py exit 0, ran $((kall - 1)) tests" -- \
		sh -c 'touch kunitpy.expected; echo 0 > kunitpy.rc; echo "[    1.000000] clean" > kunitpy.console
		       printf "[00:00:02] Testing complete. Ran %s tests: passed: %s\n" "$(($1 - 1))" "$(($1 - 1))" > kunitpy.out' - "$kall"
	expect "$label: kunit.py skipped a case it may not" "$base" 1 "^not ok [0-9]+ - kunit.py: no skip on one CPU .*: skipped: db_x_test" -- \
		sh -c 'touch kunitpy.expected; echo 0 > kunitpy.rc; echo "[    1.000000] clean" > kunitpy.console
		       printf "[00:00:01] [SKIPPED] db_x_test\n[00:00:02] Testing complete. Ran %s tests: passed: %s, skipped: 1\n" "$1" "$(($1 - 1))" > kunitpy.out' - "$kall"
	# A KCSAN boot must show that KCSAN worked.
	expect "$label: a KCSAN boot of $m without KCSAN's selftest and counters" "$base" 1 \
		"^not ok [0-9]+ - $m: KCSAN ran .*: no 'kcsan: selftest: N/N tests passed' line; no non-zero setup_watchpoints" -- \
		sed -i 's/kernel debug/kernel kcsan/' "$m.out"
	expect "$label: a KCSAN boot of $m with KCSAN's selftest and counters" "$base" 0 "^ok [0-9]+ - $m: KCSAN ran" -- \
		sh -c 'sed -i "s/kernel debug/kernel kcsan/" "$1.out"
		       printf "[    1.000000] kcsan: selftest: 3/3 tests passed\r\n" >> "$1.run/console.log"
		       printf "KCSAN counters:\r\n  enabled: 1\r\n  setup_watchpoints: 238129\r\n" >> "$1.run/output.log"' - "$m"
	expect "$label: a KCSAN boot of $m that set up no watchpoint" "$base" 1 "^not ok [0-9]+ - $m: KCSAN ran .*: no non-zero setup_watchpoints" -- \
		sh -c 'sed -i "s/kernel debug/kernel kcsan/" "$1.out"
		       printf "[    1.000000] kcsan: selftest: 3/3 tests passed\r\n" >> "$1.run/console.log"
		       printf "KCSAN counters:\r\n  enabled: 1\r\n  setup_watchpoints: 0\r\n" >> "$1.run/output.log"' - "$m"

	[ -n "$km" ] || { result notok "$label: a machine with KUnit results"; return; }
	local con=$km.run/console.log
	# The first leaf of the KTAP (a case, or a parameter of one): an
	# "ok" line no deeper than the line before it; its line number and
	# its name as tests/kunit-results.py gives it (suite.case[.param]).
	read -r knr kname < <(tr -d '\r' < "$base/$con" | awk '
		{ l = $0; sub(/^\[ *[0-9]*\.[0-9]*\] /, "", l); match(l, /^ */); d = RLENGTH / 4 }
		l ~ /^ *# Subtest: / { sub(/^ *# Subtest: /, "", l); name[d] = l; prev = d; next }
		l ~ /^ *1\.\.[0-9]/ { prev = d; next }
		l ~ /^ *(not )?ok [0-9]+ / {
			if (d >= 1 && prev <= d) {
				sub(/^ *(not )?ok [0-9]+ (- )?/, "", l); sub(/ #.*/, "", l)
				p = name[1]
				for (i = 2; i <= d; i++) p = p "." name[i]
				print NR, p "." l
				exit
			}
			prev = d
		}')
	ksuite=${kname%%.*} kcase=${kname#*.}
	expect "$label: an undeclared KUnit skip ($kname)" "$base" 1 "^not ok [0-9]+ - kunit: $(ere "$kname"): skipped \\(synthetic\\)" -- \
		edit "$con" -v n="$knr" 'NR == n { $0 = $0 " # SKIP synthetic" } { print }'
	awk -v m="$km" -v s="kunit:$ksuite" -v c="$kcase" '$1 == m && $2 == s { $0 = $0 " skip=" c } { print }' \
		"$top/tests/plan" > "$tmp/plan-skip"
	P2P_PLAN=$tmp/plan-skip expect "$label: the same KUnit skip declared in the plan" "$base" 0 "^ok [0-9]+ - kunit: $(ere "$kname") # SKIP synthetic" -- \
		edit "$con" -v n="$knr" 'NR == n { $0 = $0 " # SKIP synthetic" } { print }'
	# A plan line of another kernel (kernel=K) plans nothing here; one of
	# this kernel plans its suite.
	{ cat "$top/tests/plan"; echo "$km fake/other_kernel 3 kernel=not-${KERNEL:-}"; } > "$tmp/plan-other"
	P2P_PLAN=$tmp/plan-other expect "$label: a plan line of another kernel is no plan" "$base" 0 \
		"^ok [0-9]+ - $km: suites and case counts as tests/plan says"
	{ cat "$top/tests/plan"; echo "$km fake/this_kernel 3 kernel=${KERNEL:-}"; } > "$tmp/plan-this"
	P2P_PLAN=$tmp/plan-this expect "$label: a plan line of this kernel whose suite did not run" "$base" 1 \
		"^not ok [0-9]+ - plan: $km/fake/this_kernel ran"
	expect "$label: KUnit suite $ksuite dropped" "$base" 1 "^not ok [0-9]+ - kunit: plan: $km/kunit:$ksuite ran" -- \
		edit "$con" -v s="$ksuite" '/^(\[[ 0-9.]*\] )?    # Subtest: / { cut = ($NF == s) } !cut { print } cut && /^(\[[ 0-9.]*\] )?ok [0-9]+ / { cut = 0 }'
}

synth "$tmp/synthetic"
mutate synthetic "$tmp/synthetic"
if [ $# -gt 0 ]; then
	copy_run "$1" "$tmp/real"
	mutate "$(basename "$(cd "$1" && pwd)")" "$tmp/real"
fi
echo "judge-selftest: $npass passed, $nfail failed"
[ "$nfail" = 0 ]
