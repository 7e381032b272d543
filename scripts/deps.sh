#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the harness needs, or, when not root, name
# the missing ones and stop. QEMU comes from Debian's bookworm-backports
# (10.x: ACS on pcie-root-port, x-max-bounce-buffer-size); everything else
# from bookworm itself. Then fetch mainline's source, which is not
# installed: linux-source-7.3 from trixie-backports, unpacked to
# build/src/linux-source-7.3.tar.xz. Nothing is fetched from outside the
# Debian archive.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

# fetch_source: Debian's linux-source-7.3 (trixie-backports), with an apt
# sources list and state of its own under build/apt-7.3 on the machine's
# own Debian mirror (apt checks the package against the suite's signed
# index), unpacked with dpkg-deb; once. A fetch that fails is a warning,
# not an error: 6.12's targets do not need 7.3, and a 7.3 target stops at
# the missing tarball, naming make deps.
fetch_source() {
	fetch_mainline || echo "deps: WARNING: no linux-source-7.3 (only a 7.3 build needs it)" >&2
}
fetch_mainline() {
	local src=$top/build/src/linux-source-7.3.tar.xz apt=$top/build/apt-7.3 mirror deb
	[ -s "$src" ] && return 0
	# The first Debian archive the machine's own sources name.
	mirror=$(sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\{0,1\}[[:space:]]*$/\1/p' \
		-e 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\/debian\)\/\{0,1\}[[:space:]].*/\2/p' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1)
	mirror=${mirror:-http://deb.debian.org/debian}
	echo "deps: fetching linux-source-7.3 from $mirror trixie-backports"
	rm -rf "$apt"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$top/build/src"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie-backports main" \
		> "$apt/sources.list"
	local opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		    -o APT::Sandbox::User=root)
	apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; echo "deps: apt-get update of trixie-backports failed" >&2; return 1; }
	(cd "$apt" && apt-get "${opts[@]}" download linux-source-7.3 >"$apt/download.log" 2>&1) ||
		{ cat "$apt/download.log" >&2; echo "deps: linux-source-7.3 not fetched" >&2; return 1; }
	# Called where errexit is off: every step says whether it worked.
	deb=$(ls "$apt"/linux-source-7.3_*.deb) || return 1
	if ! dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-7.3.tar.xz > "$src.new" ||
	   [ ! -s "$src.new" ]; then
		rm -f "$src.new"
		return 1
	fi
	mv "$src.new" "$src" || return 1
	rm -f "$deb"
	echo "deps: build/src/linux-source-7.3.tar.xz ($(du -m "$src" | cut -f1) MB) from $(basename "$deb")"
}

pkgs="linux-source-6.12 busybox-static fio nvme-cli pciutils
      gcc make bc bison flex libelf-dev libssl-dev dwarves cpio xz-utils kmod
      rsync python3 perl sparse shellcheck python3-sphinx gnuplot-nox
      python3-ply libcap-dev"
# The QEMU we need, and the lowest version that has what the topologies use.
qemu_pkg=qemu-system-x86
qemu_min=1:10.0
backports=/etc/apt/sources.list.d/p2pdma-bookworm-backports.sources

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'
}

qemu_ok() {
	local v
	v=$(dpkg-query -W -f='${Version}' "$qemu_pkg" 2>/dev/null) || return 1
	installed "$qemu_pkg" && dpkg --compare-versions "$v" ge "$qemu_min"
}

missing=$(for p in $pkgs; do installed "$p" || echo "$p"; done)
missing=${missing//$'\n'/ }
qemu_ok && need_qemu="" || need_qemu=$qemu_pkg
if [ -z "$missing" ] && [ -z "$need_qemu" ]; then
	fetch_source
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages: $missing $need_qemu" >&2
	echo "deps: install them as root: apt-get install $missing" \
	     "and $qemu_pkg (>= $qemu_min) from bookworm-backports" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$need_qemu" ] && [ ! -f "$backports" ]; then
	cat > "$backports" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
echo "deps: installing $missing $need_qemu"
apt-get update -qq
# shellcheck disable=SC2086
[ -z "$missing" ] || apt-get install -y -qq --no-install-recommends $missing >/dev/null
if [ -n "$need_qemu" ]; then
	apt-get install -y -qq --no-install-recommends -t bookworm-backports \
		"$qemu_pkg" >/dev/null
	qemu_ok || { echo "deps: $qemu_pkg >= $qemu_min not installed" >&2; exit 1; }
fi
fetch_source
