#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-upstream`: the differential oracle. Builds a KUnit kernel with
# kunit/blackbox.kunitconfig twice from the prepared tree, each with the
# kernel's own runner (tools/testing/kunit/kunit.py) and a build directory
# of its own, and runs the black-box suite (kunit/p2pdma-blackbox.c, public
# API only) on each:
#
#   ours  our drivers/pci/p2pdma/ and pci-p2pdma.h (the tree as
#         prepare-tree.sh leaves it),
#         build/kunit-bb-ours
#   6.12  the tree's own p2pdma.c/pci-p2pdma.h, put back for the build by
#         prepare-tree.sh --pristine (copies from build/pristine, never into
#         this repository) and replaced by ours again right after; our
#         Kconfig stays, so the suite's symbol exists; build/kunit-bb-upstream
#
# The 6.12 build directory starts as a copy of ours, so that only what the
# two files touch is rebuilt. Then it prints one table: case | ours | 6.12,
# with totals per column, and what each kernel logged for every case whose
# result differs or whose observed values (cases marked "*" log values the
# contract leaves open) differ. Logs and the table: build/test-upstream/.
#
# The black-box objects include the route fuzzing (kunit/p2pdma-fuzz.c),
# which runs on both kernels twice, under QEMU's default CPU and under an
# AMD Zen one; the seeds whose normalised results differ are listed.
#
# Then scripts/test-upstream-guest.sh does the same for the guest suites of
# `make test` (end-to-end checks and kselftests) on two debug kernels.
#
# Usage: scripts/test-upstream.sh [-n] [-k | -g]
#   -n  no build: run the kernels built last time
#   -k  the KUnit suite only;  -g  the guest suites only
# Exits 0 when both kernels ran the suites to their end, whatever the cases
# said; 1 when a build or a run failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux-source-6.12
outdir=$top/build/test-upstream
kunitconfig=$top/kunit/blackbox.kunitconfig
bd_ours=$top/build/kunit-bb-ours
bd_up=$top/build/kunit-bb-upstream
build=1 kunit=1 guest=1
while getopts nkg opt; do
	case $opt in
	n) build=0 ;;
	k) guest=0 ;;
	g) kunit=0 ;;
	*) exit 2 ;;
	esac
done
# The second part: the guest suites (scripts/test-upstream-guest.sh).
guest_part() {
	if [ "$build" = 1 ]; then
		exec "$top/scripts/test-upstream-guest.sh"
	fi
	exec "$top/scripts/test-upstream-guest.sh" -n
}
[ "$kunit" = 1 ] || guest_part

# run_one NAME BUILD_DIR [KUNIT.PY-ARGS...]: the suites on one kernel; the
# console in $outdir/NAME.log. Without a build (-n), or with arguments,
# the kernel built last is booted again.
run_one() {
	local name=$1 bdir=$2 rc=0 suite=p2pdma_blackbox
	local args=(run --kunitconfig="$kunitconfig")
	shift 2
	[ "$build" = 1 ] && [ $# = 0 ] || args=(exec)
	[ $# = 0 ] || suite=p2pdma_fuzz
	echo "test-upstream: kunit.py ${args[0]}, $name ($bdir)"
	(cd "$tree" && nice -n 19 ./tools/testing/kunit/kunit.py "${args[@]}" --arch=x86_64 \
		--build_dir="$bdir" --raw_output=all --timeout=3600 "$@") > "$outdir/$name.log" 2>&1 || rc=$?
	if ! grep -Eq "^[[:space:]]*(\[[^]]*\] )?(not )?ok [0-9]+ $suite" "$outdir/$name.log"; then
		echo "test-upstream: the $name kernel did not finish $suite (status $rc); see $outdir/$name.log" >&2
		tail -n 30 "$outdir/$name.log" >&2
		return 1
	fi
}

mkdir -p "$outdir"
"$top/scripts/prepare-tree.sh"
run_one ours "$bd_ours"
if [ "$build" = 1 ]; then
	[ -d "$bd_up" ] || { echo "test-upstream: seeding $bd_up from $bd_ours"; cp -a "$bd_ours" "$bd_up"; }
	# Our files go back whatever happens to the 6.12 run.
	trap '"$top/scripts/prepare-tree.sh"' EXIT
	"$top/scripts/prepare-tree.sh" --pristine
fi
run_one 6.12 "$bd_up"
if [ "$build" = 1 ]; then
	"$top/scripts/prepare-tree.sh"
	trap - EXIT
fi
# The route fuzzing (kunit/p2pdma-fuzz.c) ran above under QEMU's default
# CPU, which is not AMD Zen; once more on a Zen guest, fuzzing only, both
# kernels side by side (one vCPU each).
zen=(--qemu_args=-cpu --qemu_args=EPYC --kernel_args=kunit.filter_glob=p2pdma_fuzz)
run_one ours-zen "$bd_ours" "${zen[@]}" &
zen_ours=$!
rc=0
run_one 6.12-zen "$bd_up" "${zen[@]}" || rc=1
wait "$zen_ours" || rc=1
[ "$rc" = 0 ] || exit 1

# The two kernels must have been built from the two P2PDMA cores: only
# ours has p2p_policy_seq_begin() (drivers/pci/p2pdma/host-bridge-policy.c).
if ! grep -qw p2p_policy_seq_begin "$bd_ours/System.map" ||
   grep -qw p2p_policy_seq_begin "$bd_up/System.map"; then
	echo "test-upstream: the two kernels are not built from the two P2PDMA cores" >&2
	exit 1
fi

python3 - "$outdir/ours.log" "$outdir/6.12.log" <<'EOF' | tee "$outdir/table.md"
import re
import sys

SUITE = "p2pdma_blackbox"
result = re.compile(r"^(\[[^]]*\] )?(\s*)(not ok|ok) \d+ (\S+)(.*)$")


def parse(path):
    """Case name -> (status, lines the case logged)."""
    cases, pending, inside = {}, [], False
    with open(path, errors="replace") as f:
        for raw in f:
            line = re.sub(r"^\[[^]]*\] ", "", raw.rstrip("\n"))
            if re.match(r"^\s*# Subtest: " + SUITE + r"$", line):
                inside, pending = True, []
                continue
            if not inside:
                continue
            m = result.match(line)
            if m:
                name = m.group(4)
                if name == SUITE:
                    break
                if "# SKIP" in m.group(5):
                    status = "skip"
                else:
                    status = "pass" if m.group(3) == "ok" else "fail"
                cases[name] = (status, pending)
                pending = []
            elif re.match(r"^ {4,}\S", line):
                # What KUnit printed for the case (indented as a subtest:
                # "# case: ...", failed expectations), not the kernel log.
                pending.append(line.strip())
    return cases


ours, up = parse(sys.argv[1]), parse(sys.argv[2])
names = list(ours) + [n for n in up if n not in ours]
observed = {n for n in names
            for c in (ours, up) if n in c
            for l in c[n][1] if ": observed: " in l}


def seen(cases, n):
    """The observed values a case logged, without the case's name."""
    return [l.split(": observed: ", 1)[1] for l in cases.get(n, ("-", []))[1]
            if ": observed: " in l]


print("| case | ours | 6.12 |")
print("| --- | --- | --- |")
tot = {k: {"pass": 0, "fail": 0, "skip": 0, "-": 0} for k in ("ours", "6.12")}
for n in names:
    a = ours.get(n, ("-", []))[0]
    b = up.get(n, ("-", []))[0]
    tot["ours"][a] += 1
    tot["6.12"][b] += 1
    mark = " *" if n in observed else ""
    diff = " (differs)" if a != b else ""
    if n in observed and a == b and seen(ours, n) != seen(up, n):
        diff = " (observed values differ)"
    print(f"| {n}{mark}{diff} | {a} | {b} |")


def total(t):
    return f"{t['pass']} pass, {t['fail']} fail, {t['skip']} skip"


print(f"| total ({len(names)} cases) | {total(tot['ours'])} | {total(tot['6.12'])} |")
print()
print("* logs an observed value where the contract leaves it open; below, what")
print("  each kernel logged for every case whose result or observed values differ")
for n in names:
    a, b = ours.get(n, ("-", [])), up.get(n, ("-", []))
    if a[0] == b[0] and seen(ours, n) == seen(up, n):
        continue
    print()
    print(f"{n}:")
    for label, c in (("ours", a), ("6.12", b)):
        for l in c[1]:
            print(f"  {label}: {l}")
EOF

# The route fuzzing: one "seed S calls N crc X" line per seed and kernel;
# a seed whose line differs is a difference that the normalisation of
# kunit/p2pdma-fuzz.c does not explain (rerun it with
# --kernel_args=p2pdma_fuzz.dump=S on both kernels to see the calls).
fuzz_compare() { # CPU OURS-LOG 6.12-LOG
	python3 - "$@" <<'PY' | tee -a "$outdir/table.md"
import re
import sys

line = re.compile(r"fuzz: seed (\d+) calls (\d+) crc ([0-9a-f]+)")


def seeds(path):
    out = {}
    with open(path, errors="replace") as f:
        for l in f:
            m = line.search(l)
            if m:
                out[int(m.group(1))] = (int(m.group(2)), m.group(3))
    return out


cpu, ours, up = sys.argv[1], seeds(sys.argv[2]), seeds(sys.argv[3])
both = sorted(set(ours) & set(up))
differ = [s for s in both if ours[s] != up[s]]
only = len(set(ours) ^ set(up))
calls = sum(ours[s][0] for s in both)
print(f"route fuzzing, {cpu}: {len(both)} seeds on both kernels, "
      f"{calls} calls each; {len(differ)} seeds differ"
      + (f" (first: {', '.join(map(str, differ[:10]))})" if differ else "")
      + (f"; {only} seeds ran on one kernel only" if only else ""))
PY
}
echo
fuzz_compare "QEMU's default CPU (not AMD Zen)" "$outdir/ours.log" "$outdir/6.12.log"
fuzz_compare "AMD Zen (EPYC)" "$outdir/ours-zen.log" "$outdir/6.12-zen.log"

[ "$guest" = 0 ] || guest_part
