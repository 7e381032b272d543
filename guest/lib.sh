# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Shell helpers for guest scripts: find devices by NVMe serial, never by
# nvmeN name (enumeration order changes with the CPU model), the route
# between two functions, the providers, a bounded sysfs write, and
# binding p2pmem-bar.

# nvme_ctrl, nvme_bdf, nvme_blk and ivshmem_bdf: the selftests' own
# (tools/testing/selftests/p2pdma/p2pdma_lib.sh), one copy for both. Every
# caller sets top, the checkout.
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "${top:?guest/lib.sh: top (the checkout) is not set}/tools/testing/selftests/p2pdma/p2pdma_lib.sh"

# route PROVIDER_BDF CLIENT_BDF: "map_type distance reason" from debugfs
route() {
	[ -r /sys/kernel/debug/p2pdma/routes ] ||
		{ echo "(no /sys/kernel/debug/p2pdma/routes: not our core)"; return; }
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
