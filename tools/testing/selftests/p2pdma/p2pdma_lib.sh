# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for the P2PDMA shell selftests: find NVMe devices by serial,
# the ivshmem, and the host bridge a device sits below. The project's
# guest scripts (guest/lib.sh) use the device helpers too: they stay
# POSIX sh, with local.

# nvme_ctrl SERIAL: /sys/class/nvme/nvmeN of the controller
nvme_ctrl() {
	local c
	local sn
	for c in /sys/class/nvme/nvme*; do
		read -r sn < "$c/serial" 2>/dev/null || continue
		[ "$sn" = "$1" ] && { echo "$c"; return 0; }
	done
	return 1
}

# nvme_bdf SERIAL: PCI address
nvme_bdf() {
	local c
	c=$(nvme_ctrl "$1") || return 1
	basename "$(readlink -f "$c/device")"
}

# nvme_blk SERIAL: /dev node of the first namespace
nvme_blk() {
	local c ns
	c=$(nvme_ctrl "$1") || return 1
	for ns in "$c"/nvme*n*; do
		[ -e "$ns/size" ] && { echo "/dev/${ns##*/}"; return 0; }
	done
	return 1
}

# ivshmem_bdf [VENDOR:DEVICE]: PCI address of the one ivshmem device
# (default: P2P_IVSHMEM, else 1af4:1110); it has no serial number.
ivshmem_bdf() {
	local id=${1:-${P2P_IVSHMEM:-1af4:1110}} d v dv
	for d in /sys/bus/pci/devices/*; do
		{ read -r v < "$d/vendor" && read -r dv < "$d/device"; } || continue
		[ "${v#0x}:${dv#0x}" = "$id" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# p2p_check NAME STATUS [MESSAGE]: one KTAP result, a pass when STATUS is 0;
# MESSAGE explains a failure.
p2p_check() {
	if [ "$2" = 0 ]; then
		ktap_test_pass "$1"
	else
		[ -n "${3:-}" ] && ktap_print_msg "$3"
		ktap_test_fail "$1"
	fi
}

# root_bus BDF: DDDD:BB of the root bus above the device, which names its
# host bridge (sysfs puts every function below /sys/devices/pciDDDD:BB)
root_bus() {
	local p
	p=$(readlink -f "/sys/bus/pci/devices/$1")
	p=${p#/sys/devices/pci}
	echo "${p%%/*}"
}
