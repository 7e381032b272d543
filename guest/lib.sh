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

# write_bounded SECONDS VALUE FILE: write VALUE to FILE (a sysfs unbind,
# bind or remove) from a child process, and wait at most SECONDS for it.
# Returns 0 when written, 1 when the write failed, 124 when it did not end
# in time: the child is left behind (it may be stuck in the kernel, where
# no signal reaches it) and the caller reports the hang instead of hanging.
write_bounded() {
	_wb_secs=$1
	(echo "$2" > "$3") 2>/dev/null &
	_wb_pid=$!
	# Whole seconds: each check costs a sleep(1) exec, which under a busy
	# emulator takes far longer than 0.1 s, so a finer loop would stretch
	# the bound by its own overhead many times over.
	_wb_t=0
	while kill -0 "$_wb_pid" 2>/dev/null; do
		if [ "$_wb_t" -ge "$_wb_secs" ]; then
			echo "write_bounded: '$2' > $3 still blocked after $_wb_secs s" >&2
			return 124
		fi
		sleep 1
		_wb_t=$((_wb_t + 1))
	done
	wait "$_wb_pid"
}

# ivshmem_bdf [VENDOR:DEVICE]: PCI address of the machine's one ivshmem
# device (default: P2P_IVSHMEM, else 1af4:1110); it has no serial number.
ivshmem_bdf() {
	_id=${1:-${P2P_IVSHMEM:-1af4:1110}}
	for d in /sys/bus/pci/devices/*; do
		{ read -r _v < "$d/vendor" && read -r _d < "$d/device"; } || continue
		[ "${_v#0x}:${_d#0x}" = "$_id" ] && { basename "$d"; return 0; }
	done
	echo "no PCI device $_id (ivshmem)" >&2
	return 1
}

# bind_p2pmem_bar BDF: bind the generic provider driver to BDF the
# administrator's way (driver_override, then drivers_probe), printing each
# command; succeeds once the device has P2P memory.
bind_p2pmem_bar() {
	echo "  # echo p2pmem-bar > /sys/bus/pci/devices/$1/driver_override"
	echo p2pmem-bar > "/sys/bus/pci/devices/$1/driver_override" || return 1
	echo "  # echo $1 > /sys/bus/pci/drivers_probe"
	write_bounded 60 "$1" /sys/bus/pci/drivers_probe || return 1
	[ -d "/sys/bus/pci/devices/$1/p2pmem" ]
}
