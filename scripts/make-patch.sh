#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make patch': turn the project into a git format-patch series against the
# pristine Linux 6.12 source, in build/patches/, then prove that it applies
# with git am to a fresh pristine tree and that drivers/pci/ builds after
# every patch.
#
#   build/patch-base     git repo of the unpacked tarball (made once, reused)
#   build/patch-stages   each patch's files, from scripts/patch-stages.py
#   build/patches        the series
#   build/patch-check    fresh worktree of the pristine commit, for git am
#   build/patch-out      its build directory (allnoconfig + config/base.config
#                        + config/<CHECK_FLAVOUR>.config; drivers/pci/ only)
#
# Usage: scripts/make-patch.sh [--no-check]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
flavour=${CHECK_FLAVOUR:-debug}
base=$top/build/patch-base
stages=$top/build/patch-stages
series=$top/build/patches
check=$top/build/patch-check
out=$top/build/patch-out
author=${PATCH_AUTHOR:-$(git -C "$top" config user.name) <$(git -C "$top" config user.email)>}
export GIT_AUTHOR_DATE=${GIT_AUTHOR_DATE:-$(git -C "$top" log -1 --format=%aD)}
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
gitb() { git -C "$base" -c user.name=p2pdma -c user.email=p2pdma@localhost "$@"; }

# --- the pristine base -------------------------------------------------------
if ! gitb rev-parse -q --verify refs/heads/base >/dev/null 2>&1; then
	[ -r "$tarball" ] || { echo "make-patch: $tarball missing (run 'make deps')" >&2; exit 1; }
	echo "make-patch: unpacking $(basename "$tarball") into build/patch-base (once)"
	rm -rf "$base" "$base.tmp"
	mkdir -p "$base.tmp"
	tar -xJf "$tarball" -C "$base.tmp" --strip-components=1
	git -C "$base.tmp" init -q -b base .
	# -f: the Debian tree's .gitignore ignores its own top level.
	git -C "$base.tmp" add -A -f
	git -C "$base.tmp" -c user.name=p2pdma -c user.email=p2pdma@localhost \
		commit -q -m "Linux 6.12 (Debian linux-source-6.12)"
	mv "$base.tmp" "$base"
fi

# --- each patch's files -------------------------------------------------------
rm -rf "$stages"
mkdir -p "$stages"
gitb show base:drivers/pci/Kconfig >"$stages/Kconfig.pristine"
gitb show base:drivers/pci/Makefile >"$stages/Makefile.pristine"
python3 "$top/scripts/patch-stages.py" "$top" "$stages/Kconfig.pristine" "$stages"

# Subject and body of each patch, by stage name.
message() {
	case $1 in
	core) cat <<-'EOF'
		PCI/P2PDMA: Replace the peer-to-peer DMA core

		Replace the P2PDMA core with a new implementation of the same
		interface, written from the PCIe specification and the existing
		callers (the NVMe PCI driver as provider, nvmet as orchestrator,
		dma-direct and dma-iommu as mappers).

		A provider registers part of a memory BAR; the range gets
		ZONE_DEVICE pages of type MEMORY_DEVICE_PCI_P2PDMA and goes into a
		genalloc pool. Each allocation holds a reference on the range's
		dev_pagemap, so an unbind waits for in-kernel users to free their
		memory before the pages go away. All state is device-managed.

		This patch allows peer-to-peer only between devices below a common
		upstream bridge with no ACS P2P Request Redirect, Completion
		Redirect or Egress Control on the path (PCIe r6.0 sec 6.12), where
		the client is programmed with the PCI bus address. Route verdicts
		are cached per provider and client. pci_p2pmem_find_many() picks
		the closest published provider and breaks ties at random.

		The Kconfig entry now depends on 64BIT (the bus address flag lives
		in the scatterlist DMA flags) and selects NEED_SG_DMA_FLAGS.
		EOF
		;;
	topology) cat <<-'EOF'
		PCI/P2PDMA: Allow routes through host bridges known to forward P2P

		Forwarding peer-to-peer requests between root ports, or between
		host bridges, is optional for a root complex (PCIe r6.0 sec 1.3.1),
		so a device cannot say whether it works. Allow such a route, with
		an ordinary DMA mapping (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE), where
		the CPU is an AMD Zen (family 17h) or later, or where the function
		that identifies the root complex (the first device of the root
		bus, if it is at 00.0 or is a root port) has one of a list of
		Intel Xeon device IDs; some of those forward only between their
		own root ports. A PCI bus notifier records each host bridge's
		verdict in process context, so that working out a route, which
		dma_map_sg() may do in atomic context, only looks it up.

		A route through the root complex costs 1024 per host bridge on top
		of its link count, so a provider below a common switch is always
		preferred. A refused route's log line names the bridge with ACS
		redirect and the host bridge that refuses.
		EOF
		;;
	userspace) cat <<-'EOF'
		PCI/P2PDMA: Let userspace allocate P2P memory through sysfs

		Give each provider a p2pmem/ sysfs group: "size", "available" and
		"published" describe its pool, and an mmap() of "allocate" gets
		fresh P2P memory, which can then be the buffer of O_DIRECT I/O to a
		block device that accepts P2P pages.

		The mapping must be MAP_SHARED at offset 0 (EINVAL otherwise) and
		fails with ENOMEM when the pool is short. Each page holds its own
		dev_pagemap reference and goes back to the pool when it is
		unmapped and no I/O pins it. The mapping is not inherited across
		fork() and cannot grow. On unbind the group is removed first,
		which revokes every mapping (later accesses get SIGBUS), before
		the pages are taken away.
		EOF
		;;
	debugfs) cat <<-'EOF'
		PCI/P2PDMA: Show route verdicts in debugfs

		Add /sys/kernel/debug/p2pdma/routes: one line per provider and PCI
		function with the map type and distance a driver would get, and for
		a refused route the reason (the bridge with ACS redirect, the host
		bridge that does not forward peer-to-peer traffic). It answers "why
		does this pair not do P2P" without adding a driver.
		EOF
		;;
	tests) cat <<-'EOF'
		PCI/P2PDMA: Add KUnit tests

		Add KUnit suites (CONFIG_PCI_P2PDMA_KUNIT_TEST) that build fake PCI
		hierarchies in memory, served by a fake pci_ops, and check the
		routing decisions, distances, the route cache, provider choice,
		the allocator and the configfs parsing without touching hardware.

		Add a black-box suite (CONFIG_PCI_P2PDMA_BLACKBOX_KUNIT_TEST), an
		object of its own that uses only the exported API, so that it
		runs unchanged against any implementation of it.
		EOF
		;;
	docs) cat <<-'EOF'
		Documentation: PCI/P2PDMA: Rewrite the P2PDMA guide

		Describe the new implementation: the provider, orchestrator and
		client roles with a short example of each, the lifecycle from
		registration to unbind, the map types and distance rules with the
		PCI hierarchies they apply to, the host bridge policy, the sysfs
		and O_DIRECT interface with its error numbers, the debugfs file,
		the nvmet p2pmem attribute and the known limitations. The API
		reference comes from the kernel-doc comments.
		EOF
		;;
	*) echo "make-patch: no message for stage $1" >&2; exit 1 ;;
	esac
	printf '\nSigned-off-by: %s\n' "$author"
}

# --- commits, built without a checkout --------------------------------------
export GIT_INDEX_FILE=$stages/index
rm -f "$GIT_INDEX_FILE"
gitb read-tree base
parent=$(gitb rev-parse base)
author_name=${author% <*}
author_email=${author##*<}
author_email=${author_email%>*}
for ((dir = 1; ; dir++)); do
	[ -d "$stages/$dir" ] || break
	name=$(cat "$stages/$dir/.name")
	while IFS= read -r -d '' f; do
		path=${f#"$stages/$dir/"}
		blob=$(gitb hash-object -w "$f")
		gitb update-index --add --cacheinfo "100644,$blob,$path"
	done < <(find "$stages/$dir" -type f ! -name .name -print0)
	tree_id=$(gitb write-tree)
	parent=$(message "$name" | GIT_AUTHOR_NAME=$author_name \
		GIT_AUTHOR_EMAIL=$author_email GIT_COMMITTER_NAME=$author_name \
		GIT_COMMITTER_EMAIL=$author_email \
		git -C "$base" commit-tree "$tree_id" -p "$parent")
done
unset GIT_INDEX_FILE
gitb update-ref refs/heads/p2pdma "$parent"

rm -rf "$series"
gitb format-patch -q -B -o "$series" base..p2pdma >/dev/null
echo "make-patch: $(find "$series" -name '*.patch' | wc -l) patches in ${series#"$top"/}:"
for p in "$series"/*.patch; do
	echo "  $(basename "$p")"
done

[ "${1:-}" = --no-check ] && exit 0

# --- apply to a fresh pristine tree and build after each patch --------------
echo "make-patch: checking the series on a fresh pristine tree"
gitb worktree remove --force "$check" >/dev/null 2>&1 || rm -rf "$check"
gitb worktree prune
gitb worktree add -q --detach "$check" base
mkdir -p "$out"
frags=("$top/config/base.config" "$top/config/$flavour.config")
for p in "$series"/*.patch; do
	start=$(date +%s)
	git -C "$check" -c user.name=p2pdma -c user.email=p2pdma@localhost am -q "$p" || {
		echo "make-patch: FAIL: $(basename "$p") does not apply" >&2
		git -C "$check" am --abort || true
		exit 1
	}
	cat "${frags[@]}" >"$out/fragments.config"
	make -s -C "$check" O="$out" KCONFIG_ALLCONFIG="$out/fragments.config" allnoconfig
	grep -qx 'CONFIG_PCI_P2PDMA=y' "$out/.config" || {
		echo "make-patch: FAIL: CONFIG_PCI_P2PDMA not set after $(basename "$p")" >&2
		exit 1
	}
	if ! make -s -C "$check" O="$out" -j"$(nproc)" drivers/pci/ >"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		echo "make-patch: FAIL: drivers/pci/ does not build after $(basename "$p")" >&2
		exit 1
	fi
	if grep -E '(p2pdma[^/: ]*\.[ch]|pci-p2pdma\.h):[0-9]+:[0-9]+: (warning|error)' "$out/build.log" >&2; then
		echo "make-patch: FAIL: warnings in our files after $(basename "$p")" >&2
		exit 1
	fi
	echo "  $(basename "$p"): applies, drivers/pci/ builds ($(( $(date +%s) - start )) s)"
done
echo "make-patch: series OK"
