#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build one kernel flavour out of tree:
#   build/out-$KERNEL-<flavour>/arch/x86/boot/bzImage
# The configuration is x86_64 allnoconfig plus config/base.config plus
# config/<flavour>.config, each followed by the lines only the kernel being
# built knows (config/$KERNEL/<same name>, where there are any); every line
# of the fragments must survive Kconfig,
# or the build stops and names the lines that did not. A flavour whose
# fragment says "# flavour-of: PARENT" gets config/PARENT.config first, so
# that it states only what differs (kcsan: debug without KASAN, with KCSAN).
#
# Usage: scripts/build-kernel.sh release|debug|kcsan|callers [OUTDIR [MAKE-ARGS...]]
#   OUTDIR defaults to build/out-$KERNEL-<flavour>; MAKE-ARGS (default: bzImage)
#   let scripts/check.sh build just drivers/pci/ with C=2 W=1 in its own dir;
#   the callers flavour (modules on) is scripts/check-callers.sh's.
# Environment (scripts/bench.sh): KERNEL_TREE builds another source tree,
# EXTRA_CONFIG names one more fragment merged after the flavour's.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
flavour=${1:?usage: build-kernel.sh release|debug [OUTDIR [MAKE-ARGS...]]}
tree=${KERNEL_TREE:-$ktree}
out=${2:-$(kout "$flavour")}
shift $(( $# < 2 ? $# : 2 ))
[ $# -gt 0 ] || set -- bzImage
[ -f "$top/config/$flavour.config" ] || { echo "build-kernel: no flavour '$flavour' (release, debug, kcsan, callers)" >&2; exit 2; }
parent=$(sed -n 's/^# flavour-of: *\([a-z0-9-]*\)$/\1/p' "$top/config/$flavour.config")
# shellcheck disable=SC2086  # no parent: no word
mapfile -t frags < <(kfrags base $parent "$flavour")
frags+=(${EXTRA_CONFIG:+"$EXTRA_CONFIG"})
"$top/scripts/prepare-tree.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)	# kbuild needs an absolute O=

# Reconfigure only when a fragment changed, so a rebuild stays incremental.
merged=$out/fragments.config
if ! cat "${frags[@]}" | cmp -s - "$merged" || [ ! -f "$out/.config" ]; then
	rm -f "$merged"
	cat "${frags[@]}" > "$merged.new"
	make -s -C "$tree" O="$out" KCONFIG_ALLCONFIG="$merged.new" allnoconfig
	missing=""
	while IFS= read -r line; do
		sym=${line%%=*}
		if [ "${line#*=}" = n ]; then
			if grep -q "^$sym=" "$out/.config"; then missing+="$line"$'\n'; fi
		elif ! grep -qx "$line" "$out/.config"; then
			missing+="$line"$'\n'
		fi
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$merged.new" | awk -F= '
		# A later fragment may override an earlier one (a flavour that
		# makes modules of base.config built-ins): check the last line
		# of each symbol, the one Kconfig used, in first-seen order.
		{ if (!($1 in last)) order[n++] = $1; last[$1] = $0 }
		END { for (i = 0; i < n; i++) print last[order[i]] }')
	if [ -n "$missing" ]; then
		printf 'build-kernel: Kconfig did not accept these fragment lines:\n%s' "$missing" >&2
		exit 1
	fi
	mv "$merged.new" "$merged"
fi

start=$(date +%s)
make -s -C "$tree" O="$out" -j"$(nproc)" "$@"
echo "build-kernel: $KERNEL $flavour $* ready in $(( $(date +%s) - start )) s"
