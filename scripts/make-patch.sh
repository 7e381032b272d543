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
#   build/patches        the series, after its cover letter (0000, from
#                        scripts/cover-letter.txt)
#   build/patch-check    fresh worktree of the pristine commit, for git am
#   build/patch-out      its build directory (allnoconfig + config/base.config
#                        + config/<CHECK_FLAVOUR>.config; drivers/pci/ only)
#
# Usage: scripts/make-patch.sh [--no-check]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
kneeds_target "make patch"
tarball=$ktarball
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
gitb show base:Documentation/userspace-api/ioctl/ioctl-number.rst >"$stages/ioctl-number.rst.pristine"
gitb show base:Documentation/admin-guide/index.rst >"$stages/admin-index.rst.pristine"
gitb show base:Documentation/admin-guide/kernel-parameters.txt >"$stages/kernel-parameters.txt.pristine"
# The mm patch's files (mm/hmm-p2p.diff), patched from the base's own.
mkdir -p "$stages/mm-patched"
sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$top/mm/hmm-p2p.diff" | while read -r f; do
	mkdir -p "$stages/mm-patched/$(dirname "$f")"
	gitb show "base:$f" >"$stages/mm-patched/$f"
done
patch -s -p1 -d "$stages/mm-patched" <"$top/mm/hmm-p2p.diff"
# Our files as this kernel gets them: a copy with its backport applied.
src=$top
if [ -n "$kbackport" ]; then
	src=$stages/src
	rsync -a --exclude=/build --exclude=/.git "$top/" "$src/"
	patch -s -p1 -d "$src" --no-backup-if-mismatch -r - <"$kbackport" ||
		{ echo "make-patch: ${kbackport#"$top"/} does not apply to our files" >&2; exit 1; }
fi
python3 "$top/scripts/patch-stages.py" "$src" "$stages" "$stages"

# Subject and body of each patch, by stage name.
message() {
	case $1 in
	hmm-p2p) cat <<-'EOF'
		mm/hmm: Let the owner of device-private memory hand out P2PDMA pages

		A GPU driver migrates application memory into device memory as
		MEMORY_DEVICE_PRIVATE pages. A device that mirrors the process with
		hmm_range_fault() (an RDMA NIC with on-demand paging, another
		accelerator) cannot DMA such a page: hmm_range_fault() faults it,
		and the owner's migrate_to_ram() copies it back to system RAM
		first, so every transfer of GPU-resident data goes through RAM.
		The owner may well have the same data in a BAR that peers can reach
		with P2PDMA.

		As proposed in "GPU Direct RDMA (P2P DMA) for Device Private
		Pages" (RFC, Yonatan Maman, Dec 2024), add a dev_pagemap_ops
		callback, p2p_page(), by which the owner names the
		MEMORY_DEVICE_PCI_P2PDMA page that holds a device-private page's
		data, and an hmm_range_fault() request flag, HMM_PFN_REQ_P2P. With
		the flag, a device-private page of another owner whose owner names
		such a page is reported as that page, flagged HMM_PFN_P2P, valid
		and writable as the entry is, and is not migrated. The caller maps
		it with the DMA API, where the P2PDMA route decides whether the
		peer can reach it, and calls again without the flag where it
		cannot. Without the flag, when the owner names no page, or when the
		caller requires write access to a read-only entry, nothing changes.

		The new flag takes a bit of the pfn flags: the map order field
		moves down by one bit (HMM_PFN_ORDER_SHIFT, HMM_PFN_FLAGS), which
		every user reaches through hmm_pfn_to_map_order() and
		hmm_pfn_to_page().
		EOF
		;;
	host-bridge) cat <<-'EOF'
		PCI/P2PDMA: Add host bridge rules for a new P2PDMA core

		Start a new P2PDMA core in drivers/pci/p2pdma/, one file per role,
		to replace drivers/pci/p2pdma.c. It is written from the PCIe
		specification and the contract of the existing callers (nvme-pci as
		provider, nvmet and RDMA as orchestrators, dma-direct and dma-iommu
		as mappers); the files are added one role at a time and built only
		once all are in place, so every step of the series builds.

		p2pdma.h is the private header the files share. host-bridge.c
		decides whether traffic may go up through a host bridge, which PCIe
		r6.0 sec 1.3.1 leaves optional for a root complex: allowed on AMD
		Zen (family 17h) and later, and on the Intel Xeon root complexes of
		a built-in table, some of which forward only between their own
		root ports. A PCI bus notifier records each host bridge's
		identifying function in process context, so that working out a
		route, which dma_map_sg() may do in atomic context, only looks it
		up. An administrator's rule (next patch) for a host bridge
		overrides the built-in policy for it; an allow rule for a host
		bridge the built-in policy does not vouch for is warned about once.
		EOF
		;;
	host-bridge-policy) cat <<-'EOF'
		PCI/P2PDMA: Add pci_p2pdma.host_bridges= for the new core

		host-bridge-policy.c adds pci_p2pdma.host_bridges=, comma-separated
		allow:SEL and deny:SEL rules (first match wins; SEL is "all",
		DDDD:BB or VVVV:DDDD) on the command line or in
		/sys/module/pci_p2pdma/parameters/host_bridges. No list of root
		complexes is complete, and some platforms claim P2P support and
		corrupt the traffic: this lets an operator decide without waiting
		for a new kernel. A malformed value is refused with a log line
		naming the bad rule; every change is logged and drops the cached
		route verdicts. The rules are parsed into fixed storage, since the
		command line is parsed before the slab allocator exists, and read
		under a seqlock from any context.
		EOF
		;;
	route) cat <<-'EOF'
		PCI/P2PDMA: Add route calculation for the new core

		route.c works out how a client reaches a provider. Below a common
		upstream bridge the client uses the PCI bus address (PCIe r6.0 sec
		1.3.3), unless ACS P2P Request Redirect, Completion Redirect or
		Egress Control on a bridge of the path, or on the provider or
		client function itself (sec 6.12), sends the traffic to the root
		complex; there host-bridge.c decides. The distance counts links,
		plus 1024 per host bridge crossed, so a provider below a common
		switch always wins. Verdicts are cached per provider and client,
		and a verdict resting on an all-ones config read is not cached.
		pci_p2pdma_map_segment() gives dma-direct and dma-iommu the map
		type and, for bus addresses, the DMA address. A refused route's log
		line names the bridge with ACS redirect and the host bridge that
		refuses, with the rule that would allow it.
		EOF
		;;
	pool) cat <<-'EOF'
		PCI/P2PDMA: Add the P2P memory pool for the new core

		pool.c owns a provider's free P2P memory: a genalloc pool of its
		registered ranges, a per-CPU cache of small kernel allocations,
		and the allocation API (pci_alloc_p2pmem() and friends,
		alloc_sgl, virt_to_bus). Every allocation holds a reference on
		its range's dev_pagemap, which is what lets an unbind wait for its
		users. clear.c owns a bitmap per range of pages that may hold
		someone's data, and the clearing of such pages, verified by a
		read-back, before they are handed out to a process; it is the
		only code of the core that writes device memory.
		EOF
		;;
	provider) cat <<-'EOF'
		PCI/P2PDMA: Add provider registration and lifetime for the new core

		provider.c registers part of a memory BAR as P2P memory
		(ZONE_DEVICE pages of type MEMORY_DEVICE_PCI_P2PDMA added to the
		pool), publishes it, and lets an orchestrator find the closest
		published provider for a set of clients, breaking ties at random.
		Everything is device-managed: an unbind stops handing out memory,
		revokes userspace mappings, waits for a grace period so that no
		publisher or allocator that missed the start of the unbind is left,
		then waits for in-kernel users through the pgmap references.
		EOF
		;;
	sysfs) cat <<-'EOF'
		PCI/P2PDMA: Add the p2pmem sysfs files for the new core

		Give each provider the p2pmem/ group of
		Documentation/ABI/testing/sysfs-bus-pci: "size", "available" and
		"published", and "allocate", whose mmap() gives userspace fresh P2P
		memory, cleared, for O_DIRECT I/O. The mapping must be MAP_SHARED
		at offset 0 (EINVAL otherwise) and fails with ENOMEM when the pool
		is short. Each page holds its own reference and returns to the pool
		once unmapped and unpinned; an unbind revokes every mapping (SIGBUS
		on the next access).
		EOF
		;;
	configfs) cat <<-'EOF'
		PCI/P2PDMA: Add the nvmet configfs helpers for the new core

		pci_p2pdma_enable_store() and pci_p2pdma_enable_show() parse and
		format nvmet's "p2pmem" namespace attribute: the name of a PCI
		device that published P2P memory, or a boolean read as 6.12 reads
		it, with -ENODEV and one log line for anything else.
		EOF
		;;
	debugfs) cat <<-'EOF'
		PCI/P2PDMA: Add a debugfs file of route verdicts

		/sys/kernel/debug/p2pdma/routes has one line per provider and PCI
		function with the verdict a driver would get, in a versioned format
		("# p2pdma routes v2", then provider, client, map type, distance,
		policy, acs, host_bridge and reason). It answers "why does this
		pair not do P2P" without adding a driver.
		EOF
		;;
	build) cat <<-'EOF'
		PCI/P2PDMA: Build the new core in place of p2pdma.c

		Switch drivers/pci/Makefile to drivers/pci/p2pdma/, one object
		(pci-p2pdma.o, so the parameters live in /sys/module/pci_p2pdma/),
		remove p2pdma.c, and replace the PCI_P2PDMA Kconfig entry by
		drivers/pci/p2pdma/Kconfig. The entry now depends on 64BIT (the bus
		address flag lives in the scatterlist DMA flags) and selects
		NEED_SG_DMA_FLAGS. include/linux/pci-p2pdma.h keeps every 6.12
		signature, with kernel-doc for callers.
		EOF
		;;
	dmabuf) cat <<-'EOF'
		PCI/P2PDMA: Export P2P memory as a revocable dma-buf

		RDMA NICs and GPUs take device memory from other drivers as
		dma-bufs, but P2P memory of a provider's pool could not be handed
		to them as one. pci_p2pmem_export() (CONFIG_PCI_P2PDMA_DMABUF)
		allocates pool memory and exports it as a dma-buf that dynamic
		importers accepting peer-to-peer memory attach to, if their device
		reaches the provider, and map through the DMA API. What could not
		be revoked is refused: a static importer cannot attach, and
		dma_buf_pin() fails, since a pinned importer of this kernel may
		have a move_notify that only warns (RDMA's pinned memory
		regions) and nothing tells it apart; the export therefore depends
		on DMABUF_MOVE_NOTIFY, without which the dma-buf core pins every
		map. When the provider unbinds, each buffer is revoked with
		dma_buf_move_notify() under its reservation lock, later maps fail
		with -ENODEV, and the unbind waits, with no timer, for every
		importer to unmap, then for the reservation object's fences of every usage, then for
		every pin of the pages, before the memory returns to the pool,
		without waiting for the dma-buf's release. A buffer lives by a
		reference count of its own, not by the dma-buf's file, which its
		dentry (and so the release) can outlive; the release gives the
		memory back once its fences signalled and no page is pinned,
		from a work item if it must wait.

		Every buffer is cleared when it is handed out. The CPU maps it
		with mmap() (uncached, a page with its reference at a time, zapped
		at revocation, SIGBUS after); block O_DIRECT may pin those pages
		(FOLL_PCI_P2PDMA), any other pin fails with -EREMOTEIO. vmap()
		fails, since the 6.12 dma-buf core hands a live vmap's address to
		later callers without asking the exporter, so it could not be
		revoked.

		Userspace gets one from the misc device /dev/p2pmem (mode 0600)
		with the P2PMEM_IOC_EXPORT ioctl of include/uapi/linux/p2pmem.h,
		which names the provider by PCI address and accepts only one that
		published its memory (-EACCES otherwise); RDMA applications then
		register it with ibv_reg_dmabuf_mr(). The ABI is in
		Documentation/ABI/testing/dev-p2pmem; ioctl number 0xB9 is
		claimed in ioctl-number.rst.
		EOF
		;;
	kunit) cat <<-'EOF'
		PCI/P2PDMA: Add KUnit tests

		Add KUnit suites (CONFIG_PCI_P2PDMA_KUNIT_TEST) that build fake PCI
		hierarchies in memory, served by a fake pci_ops, and check the
		routes, the pci_p2pdma.host_bridges rules, distances, the route
		cache, provider choice, the pool and the configfs parsing without
		touching hardware. Each file of the core already includes its
		suites at its end (tests/<name>-kunit.h, as mm/damon does); a suite
		reaches that file's static functions, and the other files'
		internals that p2pdma.h declares as VISIBLE_IF_KUNIT. The fake
		hierarchies (tests/fake-pci.c) are an object of their own.

		Add a black-box suite (CONFIG_PCI_P2PDMA_BLACKBOX_KUNIT_TEST), an
		object of its own that uses only the exported API, so that it runs
		unchanged against any implementation of it.
		EOF
		;;
	test-importer) cat <<-'EOF'
		PCI/P2PDMA: Add a test importer of P2PDMA dma-bufs

		The dma-buf exporter's contract is about importers: a dynamic
		importer is told to unmap and must be gone before the memory is,
		one that ignores move_notify holds the unbind, a pinned one is
		refused. Add a test importer (CONFIG_PCI_P2PDMA_TEST_IMPORTER, a
		debugfs file for root with the ioctls of p2pdma_importer.h) that
		attaches to a dma-buf for a named PCI function, maps it and reports
		its DMA segments and IOVA translations, counts move_notify calls,
		has a block device read into the buffer and QEMU's edu device DMA
		with the mapping's own addresses, and can play a buggy, a pinned or
		a P2P-refusing importer, so that selftests can drive every case
		from userspace. Never for a production kernel.
		EOF
		;;
	test-hmm) cat <<-'EOF'
		PCI/P2PDMA: Add a test owner and mirror of device-private P2P memory

		HMM P2P (the mm patch) lets a mirror map another device's
		device-private pages through the P2P pages behind them. Add the two
		sides for tests (CONFIG_PCI_P2PDMA_TEST_HMM): an owner that backs
		MEMORY_DEVICE_PRIVATE pages with P2P memory of an ivshmem BAR and
		migrates process ranges into them, and a mirror that maps such a
		range with hmm_range_fault() and HMM_PFN_REQ_P2P for QEMU's edu DMA
		engine, falling back to migration where the route refuses the
		BAR. Both use only the public P2PDMA API. Never for a production
		kernel.
		EOF
		;;
	bench) cat <<-'EOF'
		PCI/P2PDMA: Add a benchmark of the P2PDMA API

		As kernel/dma/map_benchmark.c does for the DMA API, add a built-in
		benchmark (CONFIG_PCI_P2PDMA_BENCH) of allocation, scatterlists,
		DMA mapping, distances, provider lookup and metadata memory. It uses
		only <linux/pci-p2pdma.h> and the DMA API, so the same file builds
		against any implementation of the 6.12 API and two kernels can be
		compared on one machine. Runs are started and read through
		debugfs. Never for a production kernel: it binds every
		ivshmem-plain device.
		EOF
		;;
	docs) cat <<-'EOF'
		Documentation: PCI/P2PDMA: Rewrite the P2PDMA guide, add an operator's guide

		Describe the new implementation for driver writers: the provider,
		orchestrator and client roles with a short example of each, the
		lifecycle from registration to unbind, the map types and distance
		rules with the PCI hierarchies they apply to, how the host bridge
		policy decides and the known limitations (the differences from the
		old core are in the cover letter). The API reference comes from the
		kernel-doc comments of
		each file. The operator's side goes to a guide of its own in
		Documentation/admin-guide/p2pdma/, one file per task: the host
		bridge policy, overriding it and verifying a host bridge first;
		the sysfs and O_DIRECT interface with its error numbers;
		/dev/p2pmem and its dma-bufs; the debugfs routes file and the route
		tool; p2pmem-bar; the nvmet p2pmem attribute. The
		pci_p2pdma.host_bridges= parameter gets its entry in
		kernel-parameters.txt.
		EOF
		;;
	p2pmem-bar) cat <<-'EOF'
		PCI/P2PDMA: Add p2pmem-bar, a P2P memory provider for any memory BAR

		Some devices expose plain memory through a BAR (memory cards, FPGAs
		with BAR RAM, an emulated ivshmem device) and have no driver that
		registers it as P2P memory. p2pmem-bar is a PCI driver without a
		device ID table: an administrator binds it with driver_override or
		new_id, and it registers the largest 64-bit prefetchable memory BAR
		(or the BAR and range the bar=, offset= and size= parameters choose)
		with pci_p2pdma_add_resource() and publishes it (publish=). It checks
		the BAR, range and alignment itself, so that a refusal names the
		parameter to change, and shows what it registered in the device's
		p2pmem_bar/ sysfs directory, whose publish file withdraws or offers
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
	done < <(find "$stages/$dir" -type f ! -name .name ! -name .remove -print0)
	while IFS= read -r path; do
		gitb update-index --force-remove "$path"
	done < "$stages/$dir/.remove"
	tree_id=$(gitb write-tree)
	parent=$(message "$name" | GIT_AUTHOR_NAME=$author_name \
		GIT_AUTHOR_EMAIL=$author_email GIT_COMMITTER_NAME=$author_name \
		GIT_COMMITTER_EMAIL=$author_email \
		git -C "$base" commit-tree "$tree_id" -p "$parent")
done
unset GIT_INDEX_FILE
gitb update-ref refs/heads/p2pdma "$parent"

rm -rf "$series"
gitb format-patch -q -B --cover-letter -o "$series" base..p2pdma >/dev/null
# The cover letter: subject and text from scripts/cover-letter.txt, the
# shortlog and diffstat git wrote below them (they cannot drift).
python3 - "$series/0000-cover-letter.patch" "$top/scripts/cover-letter.txt" <<'PY'
import sys
path, tmpl = sys.argv[1:]
subject, _, blurb = open(tmpl).read().partition('\n\n')
text = open(path).read()
for old, new in (('*** SUBJECT HERE ***', subject.strip()), ('*** BLURB HERE ***', blurb.strip())):
    if old not in text:
        sys.exit(f'make-patch: no "{old}" in {path}')
    text = text.replace(old, new)
open(path, 'w').write(text)
PY
echo "make-patch: $(find "$series" -name '*.patch' ! -name 0000-cover-letter.patch | wc -l) patches and a cover letter in ${series#"$top"/}:"
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
# The benchmark too, which no test kernel builds (it binds every ivshmem).
echo 'CONFIG_PCI_P2PDMA_BENCH=y' >"$out/bench.config"
mapfile -t frags < <(kfrags base "$flavour")
frags+=("$out/bench.config")
for p in "$series"/*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
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
	# The mm patch's own file too, once there (the configuration must
	# have HMM mirroring for it to be built).
	targets=(drivers/pci/)
	if git -C "$check" diff --quiet base -- mm/hmm.c; then
		:
	elif grep -qx 'CONFIG_HMM_MIRROR=y' "$out/.config"; then
		targets+=(mm/hmm.o)
	else
		echo "make-patch: FAIL: CONFIG_HMM_MIRROR not set: mm/hmm.c not built after $(basename "$p")" >&2
		exit 1
	fi
	if ! make -s -C "$check" O="$out" -j"$(nproc)" "${targets[@]}" >"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		echo "make-patch: FAIL: ${targets[*]} does not build after $(basename "$p")" >&2
		exit 1
	fi
	if [ -f "$check/drivers/pci/p2pmem-bar.c" ] && [ ! -f "$out/drivers/pci/p2pmem-bar.o" ]; then
		echo "make-patch: FAIL: p2pmem-bar.c not built after $(basename "$p")" >&2
		exit 1
	fi
	if [ -f "$check/drivers/pci/p2pdma/Makefile" ] && [ ! -f "$out/drivers/pci/p2pdma/built-in.a" ]; then
		echo "make-patch: FAIL: drivers/pci/p2pdma/ not built after $(basename "$p")" >&2
		exit 1
	fi
	for c in "$check"/drivers/pci/p2pdma/tests/*.c; do
		[ -f "$c" ] || continue
		c=${c#"$check"/}
		[ -f "$out/${c%.c}.o" ] || {
			echo "make-patch: FAIL: $c not built after $(basename "$p")" >&2
			exit 1
		}
	done
	if grep -E '(p2pdma/[^: ]+\.[ch]|p2pdma/tests/[^: ]+\.[ch]|p2pmem-bar\.c|pci-p2pdma\.h):[0-9]+:[0-9]+: (warning|error)' "$out/build.log" >&2; then
		echo "make-patch: FAIL: warnings in our files after $(basename "$p")" >&2
		exit 1
	fi
	echo "  $(basename "$p"): applies, drivers/pci/ builds ($(( $(date +%s) - start )) s)"
done
echo "make-patch: series OK"
