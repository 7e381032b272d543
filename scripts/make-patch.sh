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

		Forwarding peer-to-peer requests between root ports, or between host
		bridges, is optional for a root complex (PCIe r6.0 sec 1.3.1), so a
		device cannot say whether it works. Allow such a route, with an
		ordinary DMA mapping (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE), where the
		CPU is an AMD Zen (family 17h) or later, or where the function that
		identifies the root complex (the first device of the root bus, if
		it is at 00.0 or is a root port) has one of a list of Intel Xeon
		device IDs; some of those forward only between their own root
		ports. A PCI bus notifier records each host bridge's identifying
		function and verdict in process context, so that working out a
		route, which dma_map_sg() may do in atomic context, only looks it
		up.

		Also add the pci_p2pdma.host_bridges parameter, which overrides that
		built-in policy for the host bridges it names: comma-separated
		allow:SEL and deny:SEL rules, first match wins, where SEL is "all",
		a host bridge by PCI domain and root bus (DDDD:BB) or by the vendor
		and device ID of its identifying function (VVVV:DDDD). A deny
		refuses routes through that host bridge even on AMD Zen; an allow
		permits them through a root complex the built-in table does not
		know or marks as routing only within itself. No list of root
		complexes is ever complete, and some platforms claim P2P support
		and corrupt or drop the traffic: this lets an operator with an
		unknown root complex, or with a broken one, decide without waiting
		for a new kernel. It is set on the kernel command line or at runtime
		in /sys/module/pci_p2pdma/parameters/host_bridges. A malformed value
		is rejected with a log line naming the bad rule, a policy from the
		command line and every change are logged, and a change at runtime
		flushes the route verdicts cached under the old policy (a seqlock
		keeps a verdict computed during the change from being cached).

		A route through the root complex costs 1024 per host bridge on top
		of its link count, so a provider below a common switch is always
		preferred. A refused route's log line names the bridge with ACS
		redirect and the host bridge that refuses, with the rule that would
		allow it, or the pci_p2pdma.host_bridges rule that denied it.
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
		function, with the verdict a driver would get. The format is
		versioned so that tools can parse it: a "# p2pdma routes v2" line
		and a header line naming the fields come first, then 8
		space-separated fields per route: provider, client, map type,
		distance, policy, acs, host_bridge and reason. The policy column
		says what decided a route through the root complex, the built-in
		host bridge policy ("builtin") or a pci_p2pdma.host_bridges rule
		("override"); acs names the function whose ACS redirect forces the
		root complex path; host_bridge (DDDD:BB) names the host bridge that
		refuses. The reason, last so that it may contain spaces, explains a
		refusal and names the knob: the pci_p2pdma.host_bridges rule that
		would allow the route, or the rule that denied it. Fields absent
		for a route are "-". A later version only adds fields before the
		reason. Reading the file works every route out again and refreshes
		the cached verdicts. It answers "why does this pair not do P2P"
		without adding a driver.
		EOF
		;;
	tests) cat <<-'EOF'
		PCI/P2PDMA: Add KUnit tests

		Add KUnit suites (CONFIG_PCI_P2PDMA_KUNIT_TEST) that build fake PCI
		hierarchies in memory, served by a fake pci_ops, and check the
		routing decisions, the pci_p2pdma.host_bridges rules, distances,
		the route cache, provider choice, the allocator and the configfs
		parsing without touching hardware.

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
	p2pmem-pci) cat <<-'EOF'
		PCI/P2PDMA: Add p2pmem-pci, a P2P memory provider for any memory BAR

		Some devices expose plain memory through a BAR (memory cards, FPGAs
		with BAR RAM, an emulated ivshmem device) and have no driver that
		registers it as P2P memory. p2pmem-pci is a PCI driver without a
		device ID table: an administrator binds it with driver_override or
		new_id, and it registers the largest 64-bit prefetchable memory BAR
		(or the BAR and range the bar=, offset= and size= parameters choose)
		with pci_p2pdma_add_resource() and publishes it (publish=). It checks
		the BAR, range and alignment itself, so that a refusal names the
		parameter to change, and shows what it registered in the device's
		p2pmem_pci/ sysfs directory, whose publish file withdraws or offers
		the memory again. Everything is device-managed.
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
	if [ -f "$check/drivers/pci/p2pmem-pci.c" ] && [ ! -f "$out/drivers/pci/p2pmem-pci.o" ]; then
		echo "make-patch: FAIL: p2pmem-pci.c not built after $(basename "$p")" >&2
		exit 1
	fi
	if grep -E '(p2pdma[^/: ]*\.[ch]|p2pmem-pci\.c|pci-p2pdma\.h):[0-9]+:[0-9]+: (warning|error)' "$out/build.log" >&2; then
		echo "make-patch: FAIL: warnings in our files after $(basename "$p")" >&2
		exit 1
	fi
	echo "  $(basename "$p"): applies, drivers/pci/ builds ($(( $(date +%s) - start )) s)"
done
echo "make-patch: series OK"
