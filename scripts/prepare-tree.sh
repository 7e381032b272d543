#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack the Debian linux-source tarball of $KERNEL (scripts/kernel.sh)
# into build/ (once) and put the project's files in place of the tree's
# own p2pdma files as symlinks, so that editing one of ours makes the next
# kernel build recompile it.
#
# Our core is the directory drivers/pci/p2pdma/ (one file per role), built
# in place of the tree's p2pdma.c, which stays in the tree unbuilt.
#
# Usage: scripts/prepare-tree.sh [--pristine]
#   --pristine  build the tree's own p2pdma.c/pci-p2pdma.h again (for
#               benchmarks and the differential tests)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
tarball=$ktarball
tree=$ktree
mode=${1:-}
# Files of ours that replace the tree's own, as paths inside the tree.
overlay="include/linux/pci-p2pdma.h"
# Files of ours that the backport to this kernel patches (is_backported)
# get patched copies in the tree (at the end), not links.
# The tree's own files, kept aside when it is unpacked.
pristine="drivers/pci/p2pdma.c include/linux/pci-p2pdma.h"

if [ ! -f "$tree/.unpacked" ]; then
	[ -r "$tarball" ] || { echo "prepare-tree: $tarball missing (run 'make deps')" >&2; exit 1; }
	echo "prepare-tree: unpacking $(basename "$tarball")"
	rm -rf "$tree"
	mkdir -p "$top/build"
	tar -xJf "$tarball" -C "$top/build"
	# Keep the tree's own files aside, for 'make bench' and for reference
	# builds; nothing of ours reads them.
	for f in $pristine; do
		mkdir -p "$kpristine/$(dirname "$f")"
		cp -p "$tree/$f" "$kpristine/$f"
	done
	touch "$tree/.unpacked"
fi

for f in $overlay; do
	if [ "$mode" = --pristine ]; then
		# Ours is a link, or a backported copy.
		[ -L "$tree/$f" ] || ! cmp -s "$kpristine/$f" "$tree/$f" || continue
		rm -f "$tree/$f"
		cp -p "$kpristine/$f" "$tree/$f"
		touch "$tree/$f"
	elif is_backported "$f"; then
		continue
	elif [ -f "$top/$f" ] && [ "$(readlink "$tree/$f" 2>/dev/null)" != "$top/$f" ]; then
		ln -sfn "$top/$f" "$tree/$f"
		# Newer than every object built from the file it replaces.
		touch "$top/$f"
	fi
done

# A tree prepared before the core became a directory links p2pdma.c to a
# file that is gone: put the tree's own back.
if [ -L "$tree/drivers/pci/p2pdma.c" ]; then
	rm -f "$tree/drivers/pci/p2pdma.c"
	cp -p "$kpristine/drivers/pci/p2pdma.c" "$tree/drivers/pci/p2pdma.c"
fi

# Our core and its tests/: real directories of per-file links, so that
# "../pci.h" resolves inside the tree and a backported file (below) can be
# a copy; links to files we no longer have are dropped.
link_files() { # OURS TREE-DIR
	local f rel
	[ -L "$2" ] && rm -f "$2"
	mkdir -p "$2"
	for f in "$1"/* "$1"/.kunitconfig; do
		[ -f "$f" ] || continue
		rel=${f#"$top"/}
		is_backported "$rel" && continue
		[ "$(readlink "$2/${f##*/}" 2>/dev/null)" = "$f" ] || ln -sfn "$f" "$2/${f##*/}"
	done
	for f in "$2"/* "$2"/.kunitconfig; do
		[ -L "$f" ] && [ ! -e "$f" ] && rm -f "$f"
	done
	return 0
}
core=$tree/drivers/pci/p2pdma
link_files "$top/drivers/pci/p2pdma" "$core"
link_files "$top/drivers/pci/p2pdma/tests" "$core/tests"

# drivers/pci/Makefile builds either our directory or the tree's p2pdma.o.
# The Makefile is replaced, not edited in place: scripts/test-upstream.sh
# shares it through hard links.
mk=$tree/drivers/pci/Makefile
if [ "$mode" = --pristine ]; then
	from='p2pdma/' to='p2pdma.o'
else
	from='p2pdma.o' to='p2pdma/'
fi
if grep -q "^obj-\$(CONFIG_PCI_P2PDMA)[[:space:]]*+= $from\$" "$mk"; then
	sed "s|^\(obj-\$(CONFIG_PCI_P2PDMA)[[:space:]]*+= \)$from\$|\1$to|" "$mk" > "$mk.new"
	mv "$mk.new" "$mk"
fi
grep -q "^obj-\$(CONFIG_PCI_P2PDMA)[[:space:]]*+= $to\$" "$mk" ||
	{ echo "prepare-tree: drivers/pci/Makefile does not build $to" >&2; exit 1; }

# The tests (drivers/pci/p2pdma/tests/, linked with the core above): the
# white-box KUnit suites, each included at the end of the file it tests,
# and the objects of tests/Makefile (the black-box suite, the test
# importer, the HMM test owner and mirror, the benchmark), which use only
# public interfaces:
# drivers/pci/Makefile descends into tests/ itself, so that they build
# with --pristine too. A tree prepared when they lived elsewhere, under
# other names, loses those links and lines.
stale='p2pdma-kunit/|p2pdma-importer/|p2pdma-hmm/|p2pdma-bench/|BLACKBOX_KUNIT_TEST\)[[:space:]]*\+= p2pdma/tests/'
rm -f "$tree/drivers/pci/p2pdma-kunit" "$tree/drivers/pci/p2pdma-importer" \
	"$tree/drivers/pci/p2pdma-hmm" "$tree/drivers/pci/p2pdma-bench"
if grep -Eq "$stale" "$mk"; then
	grep -Ev "$stale" "$mk" > "$mk.new"
	mv "$mk.new" "$mk"
fi
if ! grep -q 'p2pdma/tests/' "$mk"; then
	{ cat "$mk"; echo "obj-\$(CONFIG_PCI_P2PDMA)	+= p2pdma/tests/"; } > "$mk.new"
	mv "$mk.new" "$mk"
fi

# The generic provider driver (PCI_P2PMEM_BAR, in our Kconfig), a file the
# tree does not have. It uses only the public P2PDMA API, so it stays in
# place with --pristine too; a tree whose Kconfig lacks the symbol (bench's
# linux-intree) sees "obj- +=" and builds nothing.
ln -sfn "$top/drivers/pci/p2pmem-bar.c" "$tree/drivers/pci/p2pmem-bar.c"
if ! grep -q 'p2pmem-bar\.o' "$mk"; then
	{ cat "$mk"; echo "obj-\$(CONFIG_PCI_P2PMEM_BAR)	+= p2pmem-bar.o"; } > "$mk.new"
	mv "$mk.new" "$mk"
fi

# The uAPI header of /dev/p2pmem (PCI_P2PDMA_DMABUF), a file the tree does
# not have; with --pristine nothing includes it.
ln -sfn "$top/include/uapi/linux/p2pmem.h" "$tree/include/uapi/linux/p2pmem.h"

# The mm patch of the series (mm/$KERNEL/hmm-p2p.diff: HMM P2P for device-private
# pages), applied to copies of the tree's own files (kept in
# $kpristine the first time) whenever the diff changes. A file is
# replaced only if its patched text differs, never edited in place (the
# trees share hard links): a change to mm/hmm.c alone does not rebuild
# what includes the headers. It stays with --pristine: it changes nothing
# for a caller that does not ask for it, as no 6.12 caller does, and
# taking it out would rebuild every object that includes memremap.h.
# The fixes our tests need to the kernel's own code (kfixes, not part of
# the series) go with it, the same way.
mmdiff=$(mktemp)
trap 'rm -f "$mmdiff"' EXIT
# shellcheck disable=SC2086  # kfixes: a list of paths without spaces
[ -z "$kmmdiff$kfixes" ] || cat $kmmdiff $kfixes >"$mmdiff"
stamp=$tree/.hmm-p2p.applied
sum=$([ ! -s "$mmdiff" ] || sha1sum <"$mmdiff")
if [ -s "$mmdiff" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
	work=$(mktemp -d)
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$mmdiff" > "$work/.files"
	while read -r f; do
		if [ ! -f "$kpristine/$f" ]; then
			mkdir -p "$kpristine/$(dirname "$f")"
			if [ -f "$stamp" ]; then
				# A file new to the diffs, in a tree patched before:
				# its own text from the tarball, which no diff touched.
				tar -xJOf "$tarball" "${tree#"$top/build/"}/$f" >"$kpristine/$f"
			else
				cp -p "$tree/$f" "$kpristine/$f"
			fi
		fi
		mkdir -p "$work/$(dirname "$f")"
		cp "$kpristine/$f" "$work/$f"
	done < "$work/.files"
	patch -s -p1 -d "$work" --no-backup-if-mismatch <"$mmdiff"
	while read -r f; do
		cmp -s "$work/$f" "$tree/$f" || mv "$work/$f" "$tree/$f"
	done < "$work/.files"
	rm -rf "$work"
	echo "$sum" >"$stamp"
fi

# Replace the tree's PCI_P2PDMA Kconfig entry by a 'source' of ours
# (drivers/pci/p2pdma/Kconfig; a tree prepared earlier sourced another name).
kc=$tree/drivers/pci/Kconfig
rm -f "$tree/drivers/pci/Kconfig.p2pdma"
if grep -q 'drivers/pci/Kconfig.p2pdma' "$kc"; then
	sed 's|drivers/pci/Kconfig.p2pdma|drivers/pci/p2pdma/Kconfig|' "$kc" > "$kc.new"
	mv "$kc.new" "$kc"
fi
if ! grep -q 'drivers/pci/p2pdma/Kconfig' "$kc"; then
	awk '
		/^config PCI_P2PDMA$/ { skip = 1; print "source \"drivers/pci/p2pdma/Kconfig\""; next }
		skip && /^(config|menuconfig|endmenu|source|if|endif) / { skip = 0 }
		skip && /^(endmenu|endif)$/ { skip = 0 }
		!skip { print }
	' "$kc" > "$kc.new"
	mv "$kc.new" "$kc"
fi

# A tree prepared when the test modules lived elsewhere sources their
# Kconfig files under other names: the entries are in ours now.
if grep -Eq 'drivers/pci/p2pdma-(importer|hmm|bench)/Kconfig' "$kc"; then
	grep -Ev 'drivers/pci/p2pdma-(importer|hmm|bench)/Kconfig' "$kc" > "$kc.new"
	mv "$kc.new" "$kc"
fi

# Our kselftests, built with make -C tools/testing/selftests TARGETS=p2pdma.
# A real directory of per-file links, so that ../lib.mk resolves in the tree.
st=$tree/tools/testing/selftests/p2pdma
[ -L "$st" ] && rm -f "$st"
mkdir -p "$st"
for f in "$top"/tools/testing/selftests/p2pdma/*; do
	ln -sfn "$f" "$st/${f##*/}"
done

# The backport of our files to this kernel ($kbackport), applied to copies
# of them whenever they or the diff change. A copy is replaced only if its
# patched text differs, so that a build stays incremental. With --pristine
# the tree's own header stays: only the other files are patched.
if [ "$kbackported" != " " ]; then
	work=$(mktemp -d)
	kbackport_to "$work" || { rm -rf "$work"; exit 1; }
	for f in $kbackported; do
		if [ "$mode" = --pristine ] && [[ " $overlay " == *" $f "* ]]; then
			continue
		fi
		# What the kernel build reads; the rest (documents, the patch
		# messages) is backported for make patch, which patches its own copy.
		case $f in drivers/* | include/* | mm/* | tools/*) ;; *) continue ;; esac
		if [ -L "$tree/$f" ] || ! cmp -s "$work/$f" "$tree/$f"; then
			rm -f "$tree/$f"
			mv "$work/$f" "$tree/$f"
		fi
	done
	rm -rf "$work"
fi
