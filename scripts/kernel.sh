# SPDX-License-Identifier: GPL-2.0
#
# Which kernel a target builds against, sourced by every script that
# touches a kernel tree (after it set $top). KERNEL (make's variable,
# exported to every recipe) names it; everything that depends on it is
# set here, and nowhere else:
#   ktree      the unpacked tree, build/linux-source-$KERNEL
#   ktarball   Debian's linux-source tarball it is unpacked from
#   kpristine  the tree's own files we replace, kept aside at unpacking
#   kmmdiff    the mm patch of the series for this kernel, or empty
#   kfixes     fixes to the kernel's own code outside P2PDMA that our tests
#              need (fixes/$KERNEL/*.diff, one upstream patch each, not
#              part of the series), or empty
#   kcover     the cover letter of make patch's series for this kernel
#   kbackport  the diff that backports our files to this kernel
#              (backport/$KERNEL.diff), or empty for mainline's API
#   kmachines  the machines of tests/machines that make test boots on it
#              by default, or empty for all of them
#   kcpuflags  QEMU CPU properties every guest of this kernel gets after
#              its CPU model (qemu/run.sh: -cpu MODEL$kcpuflags), or empty
#   kupdiff, kupguestdiff  the differences from the kernel's own core that
#              make test-upstream expects: black-box KUnit cases, guest cases
#              (tests/upstream-compare.py)
#   krefused   the errno of an O_DIRECT I/O whose P2P memory the disk
#              cannot reach (the block layer's choice, not the core's);
#              qemu/run.sh gives it to the guest as P2P_REFUSED_ERRNO
#   kselftests the kernel's own kselftest targets make selftests builds
#              beside ours, for the guests to run (a third-party check of
#              the paths that reach our core), or empty
#   is_backported PATH: the backport patches our file PATH (so the tree
#              has a patched copy of it, not a link)
#   kbackport_to DIR: those files, patched, in DIR
#   kout       kout FLAVOUR: the build directory of a kernel flavour
#   kfrags     kfrags NAME...: configuration fragments, see below
# config/$KERNEL/ holds the configuration lines only one kernel knows
# (scripts/build-kernel.sh merges them after the flavour's fragment).
#
# Both kernels build our core and our tests, and every target runs on
# both (a mutant of one kernel's form of a guard says so: tests/mutants).
# shellcheck shell=bash
# The scripts that source this file read what it sets, and set $top.
# shellcheck disable=SC2034,SC2154

KERNEL=${KERNEL:-7.3}
case $KERNEL in
6.12)
	ktarball=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
	kmmdiff=$top/mm/6.12/hmm-p2p.diff
	kfixes=
	kcover=$top/scripts/cover-letter.txt
	kbackport=$top/backport/6.12.diff
	kmachines=
	kupdiff=$top/tests/upstream-differences
	kupguestdiff=$top/tests/upstream-guest-differences
	krefused=EREMOTEIO
	kcpuflags=
	kselftests=
	;;
7.3)
	ktarball=${LINUX_TARBALL:-$top/build/src/linux-source-7.3.tar.xz}
	kmmdiff=$top/mm/7.3/hmm-p2p.diff
	kfixes=$(echo "$top"/fixes/7.3/*.diff)
	kcover=$top/scripts/cover-letter-7.3.txt
	kbackport=
	kmachines=
	kupdiff=$top/tests/upstream-differences-7.3
	kupguestdiff=$top/tests/upstream-guest-differences-7.3
	# blk_rq_dma_map_iter_start(): BLK_STS_INVAL.
	krefused=EINVAL
	# vfio-pci exports BARs as dma-bufs through our core (7.3 only).
	kselftests="vfio iommu"
	# QEMU's "-cpu max" has LA57. One 7.3 boot in 23 (intel-switch) had
	# KASAN report a wild-memory-access at 0.005 s, before any initcall:
	# an IRQ's descriptor lock (a 5-level direct-map address) taken while
	# identify_cpu() cleared and refilled its cached CPUID table
	# (__cpuid_reset_table()), so, it seems, with LA57 briefly read as
	# off; the report turns lockdep off for the whole boot. The guests'
	# CPU has no LA57 (4-level paging). Not the kernel's no5lvl: only the
	# decompressor reads it, and the kernel hands it to init as argv.
	kcpuflags=,la57=off
	;;
*)
	echo "KERNEL=$KERNEL: no such kernel (6.12 or 7.3)" >&2
	exit 2
	;;
esac
ktree=$top/build/linux-source-$KERNEL
kbackported=" "
[ -z "$kbackport" ] ||
	kbackported+="$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$kbackport" | tr '\n' ' ')"
is_backported() { [[ "$kbackported" == *" $1 "* ]]; }
# kbackport_to DIR: our backported files, copied into DIR and patched;
# fails (saying so) if the backport does not apply.
kbackport_to() {
	local f
	for f in $kbackported; do
		mkdir -p "$1/$(dirname "$f")"
		cp "$top/$f" "$1/$f"
	done
	patch -s -p1 -d "$1" --no-backup-if-mismatch -r - <"$kbackport" && return 0
	echo "${kbackport#"$top"/} does not apply to our files" >&2
	return 1
}
kpristine=$top/build/pristine-$KERNEL
kout() { echo "$top/build/out-$KERNEL-$1"; }
# kfrags NAME...: the configuration fragments config/NAME.config, each
# followed by config/$KERNEL/NAME.config where there is one.
kfrags() {
	local f
	for f; do
		echo "$top/config/$f.config"
		[ ! -f "$top/config/$KERNEL/$f.config" ] || echo "$top/config/$KERNEL/$f.config"
	done
}
export KERNEL

# kunitpy ARGS...: the tree's own tools/testing/kunit/kunit.py, run in the
# tree. Its QEMU must use TCG: 7.3's asks for KVM first, and a host whose
# /dev/kvm opens without running guests (no nested virtualization) leaves
# the guest silent until the timeout. A private mount namespace lays
# /dev/null over /dev/kvm for kunit.py alone; QEMU says "falling back to
# tcg".
kunitpy() {
	if [ -e /dev/kvm ]; then
		(cd "$ktree" && unshare -m --propagation private sh -c \
			'mount --bind /dev/null /dev/kvm && exec ./tools/testing/kunit/kunit.py "$@"' \
			kunit.py "$@")
	else
		(cd "$ktree" && ./tools/testing/kunit/kunit.py "$@")
	fi
}
