# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Shell helpers for guest scripts: find devices by NVMe serial, never by
# nvmeN name (enumeration order changes with the CPU model).

# nvme_ctrl SERIAL: the controller's sysfs directory, /sys/class/nvme/nvmeN
nvme_ctrl() {
	for c in /sys/class/nvme/nvme*; do
		# read strips the blanks that pad the serial; no exec per device
		read -r _sn < "$c/serial" 2>/dev/null || continue
		[ "$_sn" = "$1" ] && { echo "$c"; return 0; }
	done
	echo "no NVMe controller with serial $1" >&2
	return 1
}

# nvme_bdf SERIAL: PCI address of the controller
nvme_bdf() {
	c=$(nvme_ctrl "$1") || return 1
	basename "$(readlink -f "$c/device")"
}

# nvme_blk SERIAL: /dev path of the controller's first namespace
nvme_blk() {
	c=$(nvme_ctrl "$1") || return 1
	for ns in "$c"/nvme*n*; do
		[ -e "$ns/size" ] && { echo "/dev/$(basename "$ns")"; return 0; }
	done
	echo "controller $1 has no namespace" >&2
	return 1
}

# route PROVIDER_BDF CLIENT_BDF: "map_type distance reason" from debugfs
route() {
	awk -v p="$1" -v c="$2" '$1 == p && $2 == c {
		$1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' /sys/kernel/debug/p2pdma/routes
}

# p2p_providers: one line per P2P provider: address size available published
p2p_providers() {
	for d in /sys/bus/pci/devices/*; do
		[ -d "$d/p2pmem" ] || continue
		printf '%s size=%s available=%s published=%s\n' "$(basename "$d")" \
			"$(cat "$d/p2pmem/size")" "$(cat "$d/p2pmem/available")" \
			"$(cat "$d/p2pmem/published")"
	done
}
