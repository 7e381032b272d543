#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the harness needs, or, when not root, name
# the missing ones and stop.
set -euo pipefail

pkgs="linux-source-6.12 qemu-system-x86 busybox-static fio nvme-cli pciutils
      gcc make bc bison flex libelf-dev libssl-dev dwarves cpio xz-utils kmod
      rsync python3 perl sparse shellcheck python3-sphinx gnuplot-nox"
missing=$(for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"
done)
[ -z "$missing" ] && exit 0
missing=${missing//$'\n'/ }
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages: $missing" >&2
	echo "deps: install them as root: apt-get install $missing" >&2
	exit 1
fi
echo "deps: installing $missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
