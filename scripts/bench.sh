#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: build two release kernels with the P2PDMA benchmark
# (drivers/pci/p2pdma/tests/p2pdma-bench.c, CONFIG_PCI_P2PDMA_BENCH; bench/
# holds its guest side and report) from one tree and one configuration,
# one with our drivers/pci/p2pdma/ and pci-p2pdma.h (build/out-$KERNEL-bench) and
# one with the tree's own (build/out-$KERNEL-bench-intree, from
# build/linux-intree-$KERNEL, a hard-link copy of the shared tree in which
# only those files and drivers/pci/Kconfig are replaced), boot each REPS
# times on the bench topology, in ABBA pairs, and report the medians with
# each row's verdict from the pairs (bench/report.py): a table on stdout,
# build/bench-$KERNEL/results.{csv,json}, build/bench-$KERNEL/ratios.png.
#
# Usage: scripts/bench.sh [-r REPS] [-n | -b]
#   -r  boots per kernel (default $BENCH_REPS, else 10: the control rows
#       of 5 pairs once read "faster", of 10 "tie")
#   -n  no build: reuse the two kernels;  -b  build them only
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
tarball=$ktarball
shared=$ktree
intree=$top/build/linux-intree-$KERNEL
outdir=$top/build/bench-$KERNEL
reps=${BENCH_REPS:-10} build=1 runs=1
while getopts r:nb opt; do
	case $opt in
	r) reps=$OPTARG ;;
	n) build=0 ;;
	b) runs=0 ;;
	*) exit 2 ;;
	esac
done

# Add LINE to the end of $1/Makefile, unless PATTERN ($2) is there; and
# source drivers/pci/FILE ($2 of kconfig_source) before the closing
# "endif" of "if PCI" in $1/Kconfig, once. Files are replaced, never
# edited: the trees share hard links.
makefile_line() {
	grep -q "$2" "$1/Makefile" && return
	{ cat "$1/Makefile"; echo "$3"; } > "$1/Makefile.new"
	mv "$1/Makefile.new" "$1/Makefile"
}
kconfig_source() {
	grep -q "$2" "$1/Kconfig" && return
	awk -v last="$(grep -n '^endif' "$1/Kconfig" | tail -n 1 | cut -d: -f1)" \
		-v src="source \"drivers/pci/$2\"" 'NR == last { print src } { print }' \
		"$1/Kconfig" > "$1/Kconfig.new"
	mv "$1/Kconfig.new" "$1/Kconfig"
}

# The tree's own Kconfig in $1 lacks the generic provider's entry, which
# config/base.config enables: give it that one entry of ours (p2pmem-bar.c,
# linked by prepare-tree.sh, uses only the public P2PDMA API, so it builds
# on the tree's own core), and its Makefile line.
hook_p2pmem_bar() {
	local pci=$1/drivers/pci
	ln -sfn "$top/drivers/pci/p2pmem-bar.c" "$pci/p2pmem-bar.c"
	rm -f "$pci/Kconfig.p2pmem-bar"
	awk '/^config PCI_P2PMEM_BAR$/ { p = 1; print; next }
		p && /^(config|menuconfig|endmenu|source|if|endif)( |$)/ { p = 0 }
		p' "$top/drivers/pci/p2pdma/Kconfig" > "$pci/Kconfig.p2pmem-bar"
	kconfig_source "$pci" Kconfig.p2pmem-bar
	makefile_line "$pci" 'p2pmem-bar\.o' "obj-\$(CONFIG_PCI_P2PMEM_BAR)	+= p2pmem-bar.o"
}

# Drop the lines of file $1 that match the extended regex $2 (a tree
# prepared when bench/ and the test modules were linked in under other
# names); the file is replaced, never edited.
drop_lines() {
	grep -Eq "$2" "$1" || return 0
	grep -Ev "$2" "$1" > "$1.new"
	mv "$1.new" "$1"
}

# The benchmark and the HMM P2P test owner and mirror (metric 9) are
# objects of drivers/pci/p2pdma/tests/ that use only the public P2PDMA
# API and the mm patch, which both trees have. Our tree builds them as
# they are (scripts/prepare-tree.sh); the in-tree kernel $1 gets that
# directory alone, their two Kconfig entries and the Makefile line that
# descends into it, all as our tree has them: for 6.12 backported (a
# link to our own files would give it 7.3's test code).
hook_tests() {
	local pci=$1/drivers/pci
	rm -f "$pci/p2pdma-bench" "$pci/p2pdma-hmm" "$pci/p2pdma-importer"
	drop_lines "$pci/Makefile" 'p2pdma-(bench|hmm)/'
	drop_lines "$pci/Kconfig" 'p2pdma-(bench|hmm)/Kconfig'
	mkdir -p "$pci/p2pdma"
	ln -sfn "$shared/drivers/pci/p2pdma/tests" "$pci/p2pdma/tests"
	rm -f "$pci/Kconfig.p2pdma-tests"
	awk '/^config PCI_P2PDMA_(BENCH|TEST_HMM)$/ { p = 1; print; next }
		p && /^(config|menuconfig|endmenu|source|if|endif)( |$)/ { p = 0 }
		p' "$shared/drivers/pci/p2pdma/Kconfig" > "$pci/Kconfig.p2pdma-tests"
	kconfig_source "$pci" Kconfig.p2pdma-tests
	makefile_line "$pci" 'p2pdma/tests/' "obj-\$(CONFIG_PCI_P2PDMA)	+= p2pdma/tests/"
}

prepare_trees() {
	"$top/scripts/prepare-tree.sh"
	if [ ! -f "$intree/.bench-intree" ] || [ "$shared/.unpacked" -nt "$intree/.bench-intree" ]; then
		echo "bench: making $intree (hard-link copy, the tree's own P2PDMA)"
		rm -rf "$intree"
		cp -al "$shared" "$intree"
		for f in drivers/pci/p2pdma.c include/linux/pci-p2pdma.h; do
			rm -f "$intree/$f"
			cp "$kpristine/$f" "$intree/$f"
		done
		# Build the tree's p2pdma.o, not our directory (a new Makefile:
		# the old one is a hard link shared with the other tree).
		rm -rf "$intree/drivers/pci/p2pdma"
		# shellcheck disable=SC2016  # $(CONFIG_...) is make's, not ours
		sed 's|^\(obj-\$(CONFIG_PCI_P2PDMA)[[:space:]]*+= \)p2pdma/$|\1p2pdma.o|' \
			"$shared/drivers/pci/Makefile" > "$intree/drivers/pci/Makefile.new"
		mv "$intree/drivers/pci/Makefile.new" "$intree/drivers/pci/Makefile"
		rm -f "$intree/drivers/pci/Kconfig" "$intree/drivers/pci/Kconfig.p2pdma"
		tar -xJOf "$tarball" "linux-source-$KERNEL/drivers/pci/Kconfig" > "$intree/drivers/pci/Kconfig"
		touch "$intree/.bench-intree"
	fi
	hook_p2pmem_bar "$intree"
	hook_tests "$intree"
}

build_kernels() {
	local ours intree_out
	ours=$(kout bench) intree_out=$(kout bench-intree)
	EXTRA_CONFIG=$top/bench/bench.config \
		"$top/scripts/build-kernel.sh" release "$ours"
	KERNEL_TREE=$intree EXTRA_CONFIG=$top/bench/bench.config \
		"$top/scripts/build-kernel.sh" release "$intree_out"
	# Same fragments; only the two PCI_P2PDMA entries may select
	# differently. Sorted: the entries sourced from our Kconfig files sit
	# elsewhere in the two menus, which is no difference.
	diff <(grep -v '^#' "$ours/.config" | sort) \
		<(grep -v '^#' "$intree_out/.config" | sort) >&2 ||
		echo "bench: WARNING: the configurations differ (< ours, > in-tree)" >&2
	grep -q "$intree/drivers/pci/p2pdma.c" "$intree_out/drivers/pci/.p2pdma.o.cmd"
	grep -qw p2p_policy_seq_begin "$ours/System.map"
	! grep -qw p2p_policy_seq_begin "$intree_out/System.map"
}

if [ "$build" = 1 ]; then
	prepare_trees
	build_kernels
fi
[ "$runs" = 1 ] || exit 0

mkdir -p "$outdir"
raw=$outdir/raw.txt
: > "$raw"
# ABBA: pair r is the rth boot of each kernel, back to back, ours first
# in odd pairs and second in even ones, so that a drift of the host over
# the run (a neighbour's load, a warming cache) does not favour either.
for r in $(seq 1 "$reps"); do
	order="bench bench-intree"
	[ $((r % 2)) = 0 ] && order="bench-intree bench"
	for k in $order; do
		echo "bench: run $r/$reps, kernel $k"
		log=$outdir/run-$k-$r.log
		# A run counts when the guest script got to its end (BENCH-DONE),
		# even if the guest's exit line was lost; one retry otherwise.
		for try in 1 2; do
			rc=0
			"$top/qemu/run.sh" -k "$k" -t bench -T 900 -q -- "$top/bench/guest.sh" \
				> "$log" 2>&1 || rc=$?
			run=$top/$(sed -n 's|^qemu: .*run dir \(.*\)$|\1|p' "$log")
			grep -q '^BENCH-DONE' "$run/output.log" && break
			echo "bench: the $k run failed (attempt $try, status $rc):" >&2
			cat "$log" >&2
			[ "$try" = 2 ] && exit 1
		done
		[ "$rc" = 0 ] || echo "bench: $k run $r: complete output, but status $rc; kept"
		sed -n "s/^BENCH /$k $r /p" "$run/output.log" >> "$raw"
	done
done
python3 "$top/bench/report.py" "$raw" "$outdir"
