#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the harness needs, or, when not root, name
# the missing ones and stop. QEMU comes from Debian's bookworm-backports
# (10.x: ACS on pcie-root-port, x-max-bounce-buffer-size); everything else
# from bookworm itself. Nothing is fetched from outside the Debian archive.
set -euo pipefail

pkgs="linux-source-6.12 busybox-static fio nvme-cli pciutils
      gcc make bc bison flex libelf-dev libssl-dev dwarves cpio xz-utils kmod
      rsync python3 perl sparse shellcheck python3-sphinx gnuplot-nox"
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
[ -z "$missing" ] && [ -z "$need_qemu" ] && exit 0

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
