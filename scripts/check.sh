#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel conventions gate ('make check'). Runs on the project's own
# files only and fails on any finding:
#   checkpatch  scripts/checkpatch.pl --strict on our .c/.h files
#   build       sparse (C=2) and W=1 build of drivers/pci/ (debug flavour, so the
#               KUnit code is built too) and of the benchmark's object, in
#               build/out-$KERNEL-check;
#               any warning in one of our files fails
#   callers     every in-tree caller of the P2PDMA API compiled against our
#               files with modules on, and p2pmem-bar linked as a module
#               against our core's exports, modpost clean
#               (scripts/check-callers.sh, in build/out-$KERNEL-callers)
#   kernel-doc  scripts/kernel-doc -none -Wall on our .c/.h files
#   sphinx      Documentation/driver-api/pci/p2pdma.rst and
#               Documentation/admin-guide/p2pdma/, together (their :doc:
#               and :ref: links between them resolve), with the kernel's
#               kernel-doc extension, warnings as errors
#   abi         Documentation/ABI/ of ours, by the kernel's get_abi.pl
#   shell       shellcheck on every shell script in the repository
#   layers      no circle of calls between the core's files
#               (scripts/check-layers.py; p2pdma.h gives the order), nor
#               between the route tool's (tools/pci/p2pdma/)
#   tool        the route tool's test against a fake sysfs tree
#               (tools/pci/p2pdma/test.sh)
#   judge       the judge of `make test` against tests/plan, on synthetic
#               logs and their mutations (tests/judge-selftest.sh), and
#               the verdicts of make test-upstream on synthetic logs
#               (tests/upstream-compare.py --selftest)
#   readme      README.md: at most 100 lines, every path and make target
#               it names exists (scripts/check-readme.py)
#   mutants     every patch of tests/mutants (both kernels') applies to the
#               tree, names a guard, a suite and cases to kill, every case
#               it names exists in our tests, and on each kernel it runs on
#               one of them is that kernel's (make test-mutants runs them;
#               this keeps them from rotting between its runs)
# Prints "check: N passed, N failed" last and exits non-zero on a failure.
#
# Usage: scripts/check.sh [step...]   (default: all steps)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
tree=$ktree
out=$(kout check)
sphinx_dir=$top/build/sphinx-check
log_dir=$out/logs

"$top/scripts/prepare-tree.sh" || exit 1
mkdir -p "$log_dir"

# Our C sources and headers, as paths relative to $top.
mapfile -t c_files < <(cd "$top" && ls drivers/pci/p2pdma/*.[ch] drivers/pci/p2pmem-bar.c \
	include/linux/pci-p2pdma.h include/uapi/linux/p2pmem.h drivers/pci/p2pdma/tests/*.[ch] tools/pci/p2pdma/*.[ch] \
	tools/testing/selftests/p2pdma/p2pmem_export.c tools/testing/selftests/p2pdma/hmm_p2p.c 2>/dev/null)
# Our shell scripts: tracked ones plus new ones not yet added.
mapfile -t sh_files < <(cd "$top" && git ls-files --cached --others --exclude-standard '*.sh')

passed=0
failed=0
failed_names=""

step_checkpatch() {
	(cd "$tree" && scripts/checkpatch.pl --strict --no-tree --quiet \
		--show-types -f "${c_files[@]/#/$top/}")
}

step_build() {
	local blog=$log_dir/build.log
	# Force our objects to be compiled again so that W=1 sees them; C=2
	# runs sparse on every file of the directory anyway.
	rm -f "$out"/drivers/pci/p2pdma/*.o "$out/drivers/pci/p2pmem-bar.o" \
		"$out"/drivers/pci/p2pdma/tests/*.o
	# Then the benchmark (make bench's, which no flavour selects: it binds
	# every ivshmem), as an object of its own (kbuild takes a single object
	# only alone), so that it cannot rot unbuilt between two make bench.
	# -j1: under an outer make (make check) kbuild compiled that single
	# object twice at once with -j2, and one fixdep lost its .d file.
	if ! { "$top/scripts/build-kernel.sh" debug "$out" C=2 W=1 drivers/pci/ &&
	       "$top/scripts/build-kernel.sh" debug "$out" -j1 W=1 \
		       drivers/pci/p2pdma/tests/p2pdma-bench.o; } >"$blog" 2>&1; then
		cat "$blog"
		echo "build failed"
		return 1
	fi
	# Findings in the tree's own files are not ours to fix; ours fail.
	# (p2pdma/FILE: the core's files, p2pdma/tests/FILE its tests; p2pdma[^/]*: p2pdma.h.)
	if grep -E '(p2pdma[^/: ]*\.[ch]|p2pdma/[^/: ]+\.[ch]|p2pmem-bar\.c|pci-p2pdma\.h|linux/p2pmem\.h|p2pdma/tests/[^/: ]+\.[ch]):[0-9]+(:[0-9]+)?: (warning|error)' "$blog"; then
		return 1
	fi
	local f
	for f in "$top"/drivers/pci/p2pdma/*.c; do
		f=${f##*/}
		[ -f "$out/drivers/pci/p2pdma/${f%.c}.o" ] || { echo "p2pdma/${f%.c}.o was not built"; return 1; }
	done
	[ -f "$out/drivers/pci/p2pmem-bar.o" ] || { echo "p2pmem-bar.o was not built"; return 1; }
	[ -f "$out/drivers/pci/p2pdma/tests/p2pdma-bench.o" ] || { echo "p2pdma-bench.o was not built"; return 1; }
	echo "$(grep -cE ': (warning|error)' "$blog") findings in the tree's own drivers/pci files ignored"
	# 7.3's checker-valid.sh wants __typeof_unqual__, which Debian's
	# sparse (0.6.4, the newest it packages) does not parse: kbuild then
	# skips sparse. Said, not hidden; 6.12's make check runs it.
	if grep -q 'C=2 specified, but sparse is not available or not up to date' "$blog"; then
		echo "build: W=1 clean; sparse skipped by this tree (sparse $(sparse --version 2>/dev/null) is too old for it)"
	else
		echo "build: W=1 and sparse clean"
	fi
}

step_kernel_doc() {
	local msgs
	msgs=$(cd "$top" && "$tree/scripts/kernel-doc" -none -Wall "${c_files[@]}" 2>&1) || {
		echo "$msgs"
		return 1
	}
	[ -z "$msgs" ] || { echo "$msgs"; return 1; }
}

# Our ABI files, parsed by the kernel's own reader (a malformed entry,
# a duplicate What: or a missing field is an error).
step_abi() {
	local msgs
	# 6.12 has the Perl reader, 7.3 its Python successor (same checks).
	if [ -f "$tree/tools/docs/get_abi.py" ]; then
		msgs=$(python3 "$tree/tools/docs/get_abi.py" --dir "$top/Documentation/ABI" validate 2>&1)
	else
		msgs=$(perl "$tree/scripts/get_abi.pl" validate --dir "$top/Documentation/ABI" 2>&1)
	fi
	[ -z "$msgs" ] || { echo "$msgs"; return 1; }
}

step_sphinx() {
	local py=/usr/bin/python3
	"$py" -c 'import sphinx' 2>/dev/null || {
		echo "python3-sphinx is not installed (run 'make deps')"
		return 1
	}
	rm -rf "$sphinx_dir"
	# Both guides at their paths under Documentation/, so that the links
	# between them resolve as in the kernel's own build.
	mkdir -p "$sphinx_dir/src/driver-api/pci" "$sphinx_dir/src/admin-guide"
	ln -s "$top/Documentation/driver-api/pci/p2pdma.rst" "$sphinx_dir/src/driver-api/pci/p2pdma.rst"
	ln -s "$top/Documentation/admin-guide/p2pdma" "$sphinx_dir/src/admin-guide/p2pdma"
	cat >"$sphinx_dir/src/index.rst" <<-EOF
		.. Generated by scripts/check.sh: the root of the two P2PDMA guides.

		P2PDMA
		======

		.. toctree::
		   :hidden:

		   driver-api/pci/p2pdma
		   admin-guide/p2pdma/index
	EOF
	cat >"$sphinx_dir/conf.py" <<-EOF
		# Generated by scripts/check.sh: build the two P2PDMA guides with
		# the kernel's kernel-doc extension.
		import sys
		sys.path.insert(0, '$tree/Documentation/sphinx')
		project = 'p2pdma'
		root_doc = master_doc = 'index'
		extensions = ['kerneldoc']
		kerneldoc_bin = '$tree/scripts/kernel-doc'
		kerneldoc_srctree = '$tree'
		# Attributes kernel-doc leaves in prototypes (as the kernel's conf.py).
		c_id_attributes = ['__init', '__exit', '__must_check', '__rcu',
				   '__iomem', '__user', '__force', '__percpu']
		html_theme = 'alabaster'
	EOF
	# 7.3's extension finds its Python library through srctree.
	srctree=$tree "$py" -m sphinx -b html -W --keep-going -q -E \
		-c "$sphinx_dir" -d "$sphinx_dir/doctrees" "$sphinx_dir/src" "$sphinx_dir/html"
}

step_callers() {
	LOG_DIR=$log_dir "$top/scripts/check-callers.sh"
}

# No circle of calls between the core's files (p2pdma.h says who calls whom).
step_layers() {
	"$top/scripts/check-layers.py" &&
		"$top/scripts/check-layers.py" "$top/tools/pci/p2pdma"
}

# The route tool against a fake sysfs tree (no guest needed).
step_tool() {
	"$top/tools/pci/p2pdma/test.sh"
}

# The judge of `make test` on logs made from tests/plan, each way a run can
# lose a suite or a case, and the verdicts of `make test-upstream` on
# synthetic logs (no kernel, no guest).
step_judge() {
	"$top/tests/judge-selftest.sh" && "$top/tests/upstream-compare.py" --selftest
}

# README.md: at most 100 lines, every path and make target it names exists.
step_readme() {
	"$top/scripts/check-readme.py"
}

# mutant_case KERNEL CASE: CASE is one of KERNEL's tests (REPORT: the
# console's reports, on both). A guest case FIXTURE.TEST by its test's name;
# 6.12's KUnit cases are the tree's, as the backport renames them.
mutant_case() {
	local k=${2##*.} bp=$top/backport/6.12.diff
	[ "$2" = REPORT ] && return 0
	if [ "$1" = 6.12 ]; then
		grep -q -- "^+static void $k(" "$bp" && return 0
		grep -q -- "^-static void $k(" "$bp" && return 1
	fi
	(cd "$top" && grep -rqw -- "$k" drivers/pci/p2pdma/tests \
		tools/testing/selftests tests/guest)
}

step_mutants() {
	local p k kern only kills bad=0
	for p in "$top"/tests/mutants/*.patch; do
		if ! git -C "$top" apply --check "$p"; then
			echo "mutants: ${p#"$top"/} does not apply"
			bad=1
		fi
		for k in Guard Suite Kills; do
			sed -n '/^---/q;p' "$p" | grep -q "^$k: ." ||
				{ echo "mutants: ${p#"$top"/} has no $k:"; bad=1; }
		done
		only=$(sed -n 's/^Kernel: //p;/^---/q' "$p")
		read -ra kills < <(sed -n 's/^Kills: //p;/^---/q' "$p")
		for k in "${kills[@]}"; do
			mutant_case 7.3 "$k" || mutant_case 6.12 "$k" ||
				{ echo "mutants: ${p#"$top"/}: no case $k"; bad=1; }
		done
		# On each kernel it runs on, one of the cases it names must exist.
		for kern in 6.12 7.3; do
			[ -z "$only" ] || [ "$only" = "$kern" ] || continue
			for k in "${kills[@]}"; do
				mutant_case "$kern" "$k" && continue 2
			done
			echo "mutants: ${p#"$top"/}: none of its cases is one of $kern's"
			bad=1
		done
	done
	return "$bad"
}

step_shellcheck() {
	command -v shellcheck >/dev/null || {
		echo "shellcheck is not installed (run 'make deps')"
		return 1
	}
	(cd "$top" && shellcheck -x -f gcc "${sh_files[@]}")
}

steps=(checkpatch build callers kernel_doc abi sphinx shellcheck layers tool judge readme mutants)
[ $# -eq 0 ] || steps=("$@")
for step in "${steps[@]}"; do
	step=${step//-/_}
	start=$(date +%s)
	if "step_$step" >"$log_dir/$step.out" 2>&1; then
		passed=$((passed + 1))
		verdict=ok
	else
		failed=$((failed + 1))
		failed_names+=" $step"
		verdict=FAIL
	fi
	printf 'check: %-10s %-4s (%d s)\n' "$step" "$verdict" $(( $(date +%s) - start ))
	# Show what a step found; a passing step shows only its summary
	# lines ("<step>: ..."), if it prints any.
	if [ "$verdict" = ok ]; then
		grep "^$step: " "$log_dir/$step.out" | sed 's/^/    /'
	else
		sed 's/^/    /' "$log_dir/$step.out"
	fi
done

[ -z "$failed_names" ] || echo "check: failed:$failed_names (logs in ${log_dir#"$top"/})"
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
