#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the p2pdma tool against a fake sysfs tree
# (P2PDMA_SYSFS): providers, driver links, the kernel's routes file v2, the
# host bridge policy and the p2pmem-bar module parameters. A background
# "fake kernel" serves bus/pci/drivers_probe (a FIFO) as the PCI core would:
# it records the p2pmem-bar parameters at probe time and binds the device.
# Checks list (with the bytes in use and whether /dev/p2pmem exports each
# provider: class/misc/p2pmem and p2pmem/published), routes (matrix, the mark of a route
# allowed by override, footnotes, knobs, -l), route (one pair explained,
# with the export and the attach of an importer on the client),
# the knob over two host bridges (a tree whose devices lie below their host
# bridge's pciDDDD:BB directory), bind and unbind, and every exit status. Needs no guest and no root (the permission checks run
# only as root, with setpriv). Prints "N passed, N failed" last; exits 1 on
# a failure.
#
# Usage: tools/pci/p2pdma/test.sh [P2PDMA_BINARY]   (default: build one)
set -u

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/p2pdma-tool-test.XXXXXX)
chmod 755 "$tmp"
fake_pid=""
cleanup() {
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

tool=${1:-}
if [ -z "$tool" ]; then
	make -s -C "$here" OUTPUT="$tmp/" >"$tmp/build.log" 2>&1 || {
		cat "$tmp/build.log"
		echo "0 passed, 1 failed"
		exit 1
	}
	tool=$tmp/p2pdma
fi
tool=$(realpath "$tool")

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "not ok - $1${2:+: $2}"; }
# expect NAME WANT GOT
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi; }
# contains NAME NEEDLE HAYSTACK
contains() {
	if [[ $3 == *"$2"* ]]; then pass "$1"; else fail "$1" "no '$2' in: $3"; fi
}
# lacks NAME NEEDLE HAYSTACK
lacks() {
	if [[ $3 != *"$2"* ]]; then pass "$1"; else fail "$1" "'$2' in: $3"; fi
}

# run [ARG...]: the tool on the fake tree $S; sets out (stdout and stderr) and rc.
run() {
	out=$(P2PDMA_SYSFS=$S "$tool" "$@" 2>&1)
	rc=$?
}

routes_v2='# p2pdma routes v2
# provider client map_type distance policy acs host_bridge reason
0000:03:00.0 0000:03:00.0 bus-address 0 - - - -
0000:03:00.0 0000:04:00.0 bus-address 4 - - - -
0000:03:00.0 0000:00:02.0 refused - builtin - 0000:00 host bridge pci0000:00 is not known to route P2P (allow with pci_p2pdma.host_bridges=allow:0000:00)
0000:03:00.0 0000:00:05.0 refused - override - 0000:00 host bridge pci0000:00 is denied by pci_p2pdma.host_bridges rule deny:0000:00
0000:04:00.0 0000:03:00.0 bus-address 4 - - - -
0000:04:00.0 0000:04:00.0 bus-address 0 - - - -
0000:04:00.0 0000:00:1f.2 refused - - - - the client is not a PCI device
0000:80:00.0 0000:00:02.0 through-host-bridge 2052 builtin - - -
0000:80:00.0 0000:00:03.0 through-host-bridge 2052 override - - allowed by pci_p2pdma.host_bridges
0000:80:00.0 0000:80:00.0 bus-address 0 - - - -
0000:01:00.1 0000:01:00.0 refused - builtin 0000:00:07.0 0000:00 ACS redirect on 0000:00:07.0 forces the host bridge path; host bridge pci0000:00 is not known to route P2P
0000:01:00.1 0000:01:00.1 bus-address 0 - - - -'

# fake_dev SYSFS BDF VENDOR DEVICE DRIVER [SIZE AVAILABLE PUBLISHED]
fake_dev() {
	local d=$1/bus/pci/devices/$2
	mkdir -p "$d"
	echo "0x$3" > "$d/vendor"
	echo "0x$4" > "$d/device"
	echo "(null)" > "$d/driver_override"
	if [ "$5" != - ]; then
		mkdir -p "$1/bus/pci/drivers/$5"
		: > "$1/bus/pci/drivers/$5/unbind"
		ln -s "../../drivers/$5" "$d/driver"
	fi
	[ $# -gt 5 ] || return 0
	mkdir -p "$d/p2pmem"
	echo "$6" > "$d/p2pmem/size"
	echo "$7" > "$d/p2pmem/available"
	echo "$8" > "$d/p2pmem/published"
}

# make_tree DIR: a fresh fake /sys
make_tree() {
	local s=$1 p
	rm -rf "$s"
	fake_dev "$s" 0000:03:00.0 1b36 0010 nvme 67108864 67108864 1
	fake_dev "$s" 0000:04:00.0 1b36 0010 nvme 67108864 62914560 0
	fake_dev "$s" 0000:80:00.0 1b36 0010 nvme 16777216 16777216 1
	fake_dev "$s" 0000:01:00.1 1b36 0010 nvme 2097152 1048576 1
	fake_dev "$s" 0000:01:00.0 1b36 0010 nvme
	fake_dev "$s" 0000:00:02.0 1b36 0010 nvme
	fake_dev "$s" 0000:00:03.0 1b36 0010 nvme
	fake_dev "$s" 0000:00:05.0 8086 29c0 -
	fake_dev "$s" 0000:00:1f.2 8086 2922 ahci
	fake_dev "$s" 0000:00:06.0 1af4 1110 -
	mkdir -p "$s/bus/pci/drivers/p2pmem-bar" "$s/kernel/debug/p2pdma" \
		"$s/module/pci_p2pdma/parameters" "$s/module/p2pmem_bar/parameters"
	: > "$s/bus/pci/drivers/p2pmem-bar/unbind"
	# /dev/p2pmem, a misc device (CONFIG_PCI_P2PDMA_DMABUF).
	mkdir -p "$s/class/misc/p2pmem"
	echo "$routes_v2" > "$s/kernel/debug/p2pdma/routes"
	echo "allow:0000:80" > "$s/module/pci_p2pdma/parameters/host_bridges"
	for p in bar:-1 offset:0 size:0 publish:Y; do
		echo "${p#*:}" > "$s/module/p2pmem_bar/parameters/${p%%:*}"
	done
	: > "$s/bus/pci/drivers_probe"
}

# fake_kernel SYSFS: serve writes to bus/pci/drivers_probe (a FIFO) as the
# PCI core does: probe with the driver named by driver_override, p2pmem-bar
# reading its parameters at probe time (logged to SYSFS/probe.log). A probe
# with bar=5 fails, as on a device without that BAR. "quit" ends it.
fake_kernel() {
	local s=$1 bdf dev prm=$1/module/p2pmem_bar/parameters
	while :; do
		bdf=""
		read -r bdf < "$s/bus/pci/drivers_probe" || [ -n "$bdf" ] || continue
		[ "$bdf" = quit ] && return 0
		dev=$s/bus/pci/devices/$bdf
		echo "$bdf bar=$(<"$prm/bar") offset=$(<"$prm/offset") size=$(<"$prm/size") publish=$(<"$prm/publish")" >> "$s/probe.log"
		[ "$(<"$dev/driver_override")" = p2pmem-bar ] || continue
		[ "$(<"$prm/bar")" = 5 ] && continue
		mkdir -p "$dev/p2pmem"
		echo 4194304 > "$dev/p2pmem/size"
		echo 4194304 > "$dev/p2pmem/available"
		if [ "$(<"$prm/publish")" = Y ]; then echo 1; else echo 0; fi > "$dev/p2pmem/published"
		ln -sfn ../../drivers/p2pmem-bar "$dev/driver"
	done
}
start_fake_kernel() {
	rm -f "$S/bus/pci/drivers_probe"
	mkfifo "$S/bus/pci/drivers_probe"
	fake_kernel "$S" &
	fake_pid=$!
}
stop_fake_kernel() {
	[ -n "$fake_pid" ] || return 0
	echo quit | timeout 5 tee "$S/bus/pci/drivers_probe" >/dev/null
	wait "$fake_pid" 2>/dev/null
	fake_pid=""
}
params() { # the p2pmem-bar module parameters of the fake tree, one line
	local p v=""
	for p in bar offset size publish; do
		v+="$p=$(<"$S/module/p2pmem_bar/parameters/$p") "
	done
	echo "${v% }"
}

S=$tmp/sys
make_tree "$S"

# --- usage -------------------------------------------------------------------
run --help
expect "help_exit_0" 0 "$rc"
contains "help_documents_P2PDMA_SYSFS" P2PDMA_SYSFS "$out"
contains "help_documents_exit_codes" "3 permission denied" "$out"
run --version
expect "version_exit_0" 0 "$rc"
contains "version_names_routes_v2" "routes v2" "$out"
run
expect "no_command_exit_2" 2 "$rc"
run frobnicate
expect "unknown_command_exit_2" 2 "$rc"
run --frobnicate list
expect "unknown_option_exit_2" 2 "$rc"
run routes 0000:03:00
expect "bad_address_exit_2" 2 "$rc"
run list --bar 1
expect "bind_option_elsewhere_exit_2" 2 "$rc"
run bind 0000:00:06.0 --size 12Q
expect "bad_byte_count_exit_2" 2 "$rc"
run bind 0000:00:06.0 --bar 6
expect "bad_bar_exit_2" 2 "$rc"
run bind
expect "bind_without_device_exit_2" 2 "$rc"

# --- list ----------------------------------------------------------------------
run -l list
expect "list_l_exit_0" 0 "$rc"
# The in-use bytes (size - available, 1.1), then export (1.2) come last:
# the fields of 1.0 stay. A published provider exports, an unpublished not.
expect "list_l_lines_in_use_then_export_last" "0000:01:00.1 2097152 1048576 yes nvme 1b36:0010 1048576 yes
0000:03:00.0 67108864 67108864 yes nvme 1b36:0010 0 yes
0000:04:00.0 67108864 62914560 no nvme 1b36:0010 4194304 unpublished
0000:80:00.0 16777216 16777216 yes nvme 1b36:0010 0 yes" "$out"
run list
expect "list_exit_0" 0 "$rc"
expect "list_header" "provider      size                     available                in use                   published  export               driver        vendor:device" \
	"$(head -n 1 <<< "$out")"
expect "list_human_export_unpublished" "0000:04:00.0  67108864 (64.0 MiB)      62914560 (60.0 MiB)      4194304 (4.0 MiB)        no         no (unpublished)     nvme          1b36:0010" \
	"$(grep '^0000:04:00.0 ' <<< "$out")"
expect "list_human_export_yes" "0000:03:00.0  67108864 (64.0 MiB)      67108864 (64.0 MiB)      0 (0.0 MiB)              yes        yes                  nvme          1b36:0010" \
	"$(grep '^0000:03:00.0 ' <<< "$out")"
# A kernel without the exporter (6.12's own): no class/misc/p2pmem.
rmdir "$S/class/misc/p2pmem"
run -l list
expect "list_l_export_no_dev" "no-dev no-dev no-dev no-dev" "$(awk '{ printf "%s%s", s, $8; s = " " }' <<< "$out")"
run list
expect "list_human_export_no_dev" "0000:03:00.0  67108864 (64.0 MiB)      67108864 (64.0 MiB)      0 (0.0 MiB)              yes        no (no /dev/p2pmem)  nvme          1b36:0010" \
	"$(grep '^0000:03:00.0 ' <<< "$out")"
run route 0000:03:00.0 0000:04:00.0
expect "route_export_no_dev" "  export:       no: no /dev/p2pmem (a kernel without CONFIG_PCI_P2PDMA_DMABUF)" \
	"$(sed -n 2p <<< "$out")"
mkdir "$S/class/misc/p2pmem"
# One byte in use, and a kernel whose available exceeds size: never negative.
echo 67108863 > "$S/bus/pci/devices/0000:03:00.0/p2pmem/available"
echo 16777217 > "$S/bus/pci/devices/0000:80:00.0/p2pmem/available"
run -l list
expect "list_in_use_one_byte_and_never_negative" "0000:03:00.0 1 0000:80:00.0 0" \
	"$(awk '$1 == "0000:03:00.0" || $1 == "0000:80:00.0" { printf "%s%s %s", s, $1, $7; s = " " }' <<< "$out")"
echo 67108864 > "$S/bus/pci/devices/0000:03:00.0/p2pmem/available"
echo 16777216 > "$S/bus/pci/devices/0000:80:00.0/p2pmem/available"

# --- routes --------------------------------------------------------------------
run routes
expect "routes_exit_0" 0 "$rc"
while IFS= read -r line; do echo "# $line"; done <<< "$out"
row() { awk -v p="$1" '$1 == p' <<< "$out"; }
col_start() { # the column of client $1 in the header row
	awk -v c="$1" 'NR == 1 { print index($0, c) }' <<< "$out"
}
cell() { # PROVIDER CLIENT: the matrix cell, by the header's columns
	local at
	at=$(col_start "$2")
	row "$1" | cut -c"$at"- | sed -E 's/  .*//; s/ +$//'
}
expect "routes_cell_bus" "bus 4" "$(cell 0000:03:00.0 0000:04:00.0)"
expect "routes_cell_self" "bus 0" "$(cell 0000:03:00.0 0000:03:00.0)"
expect "routes_cell_hb_builtin" "hb 2052" "$(cell 0000:80:00.0 0000:00:02.0)"
expect "routes_cell_hb_override_marked" "hb 2052*" "$(cell 0000:80:00.0 0000:00:03.0)"
expect "routes_legend_override" "*: allowed by override:
   an allow rule of pci_p2pdma.host_bridges allows it, not the kernel's built-in
   list of host bridges: nothing vouches that the root complex forwards peer-to-
   peer requests, and if it does not, DMA on the route can lose or corrupt data.
   See Documentation/admin-guide/p2pdma/host-bridges.rst, \"Verifying a host bridge before allowing it\"." \
	"$(sed -n '/^\*: /,/^   See /p' <<< "$out")"
contains "routes_legend_refused_is_minus_1" "REFUSED[n]: refused, footnote n (the kernel API's distance for it is -1: refused, not a negative distance)" "$out"
expect "routes_cell_refused" "REFUSED[1]" "$(cell 0000:01:00.1 0000:01:00.0)"
expect "routes_cell_missing" "?" "$(cell 0000:80:00.0 0000:04:00.0)"
expect "routes_rows_are_providers" "0000:01:00.1 0000:03:00.0 0000:04:00.0 0000:80:00.0" \
	"$(awk 'NR > 1 && /^0000:/ { printf "%s%s", s, $1; s = " " }' <<< "$out")"
expect "routes_columns_are_clients" "provider\\client 0000:00:02.0 0000:00:03.0 0000:00:05.0 0000:00:1f.2 0000:01:00.0 0000:01:00.1 0000:03:00.0 0000:04:00.0 0000:80:00.0" \
	"$(head -n 1 <<< "$out" | tr -s ' ')"
hbp=/sys/module/pci_p2pdma/parameters/host_bridges
contains "routes_note_builtin_reason" "[2] 0000:03:00.0 -> 0000:00:02.0: host bridge pci0000:00 is not known to route P2P (allow with pci_p2pdma.host_bridges=allow:0000:00)" "$out"
contains "routes_knob_builtin_prepends_rule" "    allow it: echo 'allow:0000:00,allow:0000:80' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00,allow:0000:80)" "$out"
contains "routes_knob_acs" "    or turn off ACS P2P redirect on 0000:00:07.0: boot with pci=config_acs=00xx@0000:00:07.0 (this can merge IOMMU groups)" "$out"
contains "routes_knob_override" "[3] 0000:03:00.0 -> 0000:00:05.0: host bridge pci0000:00 is denied by pci_p2pdma.host_bridges rule deny:0000:00
    a deny rule of pci_p2pdma.host_bridges refuses it (now: allow:0000:80)
    allow it: echo 'allow:0000:00,allow:0000:80' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00,allow:0000:80)" "$out"
note4=$(sed -n '/^\[4\]/,$p' <<< "$out")
expect "routes_note_without_knob_then_caveat" "[4] 0000:04:00.0 -> 0000:00:1f.2: the client is not a PCI device
An allow rule makes a route allowed by override: use one only for a host
bridge known to forward P2P requests (see Documentation/admin-guide/p2pdma/host-bridges.rst, \"Verifying a host bridge before allowing it\")." "$note4"
expect "routes_one_note_per_refusal" 4 "$(grep -c '^\[[0-9]*\] ' <<< "$out")"
contains "routes_shows_policy" "pci_p2pdma.host_bridges: allow:0000:80" "$out"
contains "routes_legend_missing" "?: not in the kernel's table" "$out"

run -l routes
expect "routes_l_exit_0" 0 "$rc"
expect "routes_l_is_the_kernels_lines" "$(grep -v '^#' <<< "$routes_v2")" "$out"

run routes 0000:03:00.0 04:00.0
expect "routes_devs_exit_0" 0 "$rc"
expect "routes_devs_restrict_both" "provider\\client 0000:03:00.0 0000:04:00.0
0000:03:00.0 bus 0 bus 4
0000:04:00.0 bus 4 bus 0" "$(sed -n 1,3p <<< "$out" | tr -s ' ')"
lacks "routes_devs_no_other_notes" "REFUSED" "$out"
lacks "routes_devs_no_missing_legend" "?:" "$out"
lacks "routes_devs_no_override_legend" "allowed by override" "$out"
lacks "routes_devs_no_refused_legend" "REFUSED[n]" "$out"
run -l routes 0000:01:00.1
expect "routes_l_devs" "0000:01:00.1 0000:01:00.1 bus-address 0 - - - -" "$out"
run routes 0000:42:00.0
expect "routes_unknown_dev_exit_1" 1 "$rc"

# The deny rule for the same host bridge goes; the others stay, in order.
echo "deny:0000:00,deny:8086:29c0,allow:0000:80" > "$S/module/pci_p2pdma/parameters/host_bridges"
run routes
contains "routes_knob_replaces_deny_rule" "    allow it: echo 'allow:0000:00,deny:8086:29c0,allow:0000:80' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00,deny:8086:29c0,allow:0000:80)" "$out"
: > "$S/module/pci_p2pdma/parameters/host_bridges"
run routes
contains "routes_knob_builtin_no_rules" "allow it: echo 'allow:0000:00' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00)" "$out"
contains "routes_knob_override_no_rules" "(now: empty)" "$out"
echo "allow:0000:80" > "$S/module/pci_p2pdma/parameters/host_bridges"

# --- route: one pair ------------------------------------------------------
run route 0000:01:00.1 01:00.0
expect "route_refused_exit_0" 0 "$rc"
expect "route_refused_explained" "0000:01:00.1 -> 0000:01:00.0: refused
  distance:     -1 in the kernel API (pci_p2pdma_distance()): refused, not a negative distance
  reason:       ACS redirect on 0000:00:07.0 forces the host bridge path; host bridge pci0000:00 is not known to route P2P
  ACS redirect: 0000:00:07.0
  host bridge:  0000:00
  decided by:   the kernel's built-in host bridge list
  export:       yes, as a dma-buf by /dev/p2pmem; an importer on 0000:01:00.0 cannot attach it (EREMOTEIO, the route is refused)
  allow it: echo 'allow:0000:00,allow:0000:80' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00,allow:0000:80)
  or turn off ACS P2P redirect on 0000:00:07.0: boot with pci=config_acs=00xx@0000:00:07.0 (this can merge IOMMU groups)
  An allow rule makes a route allowed by override: use one only for a host
  bridge known to forward P2P requests (see Documentation/admin-guide/p2pdma/host-bridges.rst, \"Verifying a host bridge before allowing it\")." "$out"
run route 0000:03:00.0 0000:00:05.0
expect "route_refused_by_deny_rule" "0000:03:00.0 -> 0000:00:05.0: refused
  distance:     -1 in the kernel API (pci_p2pdma_distance()): refused, not a negative distance
  reason:       host bridge pci0000:00 is denied by pci_p2pdma.host_bridges rule deny:0000:00
  ACS redirect: none
  host bridge:  0000:00
  decided by:   a deny rule of pci_p2pdma.host_bridges
  export:       yes, as a dma-buf by /dev/p2pmem; an importer on 0000:00:05.0 cannot attach it (EREMOTEIO, the route is refused)
  a deny rule of pci_p2pdma.host_bridges refuses it (now: allow:0000:80)
  allow it: echo 'allow:0000:00,allow:0000:80' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:00,allow:0000:80)" \
	"$(head -n 9 <<< "$out")"
run route 0000:04:00.0 0000:00:1f.2
expect "route_refused_without_knob" "0000:04:00.0 -> 0000:00:1f.2: refused
  distance:     -1 in the kernel API (pci_p2pdma_distance()): refused, not a negative distance
  reason:       the client is not a PCI device
  ACS redirect: none
  host bridge:  none
  decided by:   no host bridge policy (see the reason)
  export:       no: the provider did not publish its memory (EACCES)
  no knob: no host bridge refused it, no setting allows it" "$out"
run route 0000:03:00.0 0000:04:00.0
expect "route_bus_address_exports" "0000:03:00.0 -> 0000:04:00.0: allowed by PCI bus address, distance 4
  export:       yes, as a dma-buf by /dev/p2pmem; an importer on 0000:04:00.0 can attach it" "$out"
run route 0000:04:00.0 0000:03:00.0
expect "route_unpublished_no_export" "0000:04:00.0 -> 0000:03:00.0: allowed by PCI bus address, distance 4
  export:       no: the provider did not publish its memory (EACCES)" "$out"
run route 0000:80:00.0 0000:00:02.0
expect "route_builtin" "0000:80:00.0 -> 0000:00:02.0: allowed through the host bridge, distance 2052
  decided by:   the kernel's built-in host bridge list
  export:       yes, as a dma-buf by /dev/p2pmem; an importer on 0000:00:02.0 can attach it" "$out"
run route 0000:80:00.0 0000:00:03.0
expect "route_by_override" "0000:80:00.0 -> 0000:00:03.0: allowed by override, through the host bridge, distance 2052
  decided by:   pci_p2pdma.host_bridges (now: allow:0000:80)
  export:       yes, as a dma-buf by /dev/p2pmem; an importer on 0000:00:03.0 can attach it
  an allow rule of pci_p2pdma.host_bridges allows it, not the kernel's built-in
  list of host bridges: nothing vouches that the root complex forwards peer-to-
  peer requests, and if it does not, DMA on the route can lose or corrupt data.
  See Documentation/admin-guide/p2pdma/host-bridges.rst, \"Verifying a host bridge before allowing it\"." "$out"
run -l route 0000:03:00.0 0000:00:02.0
expect "route_l_is_the_kernels_line" "$(grep '^0000:03:00.0 0000:00:02.0 ' <<< "$routes_v2")" "$out"
run route 0000:00:02.0 0000:03:00.0
expect "route_not_a_provider_exit_1" "1 p2pdma: no route from 0000:00:02.0 to 0000:03:00.0 in the kernel's table (0000:00:02.0 is not a P2P memory provider)" "$rc $out"
run route 0000:03:00.0 0000:42:00.0
expect "route_unknown_dev_exit_1" 1 "$rc"
run route 0000:03:00.0
expect "route_one_address_exit_2" 2 "$rc"
run route 0000:03:00.0 0000:04:00.0 0000:80:00.0
expect "route_three_addresses_exit_2" 2 "$rc"

# --- the knob over two host bridges ---------------------------------------
# A tree as the kernel's: bus/pci/devices/BDF links to the device below its
# host bridge's pciDDDD:BB directory. A route between two host bridges
# needs both allowed: the knob names the one that refused first.
T=$tmp/sys-hb
mkdir -p "$T/devices/pci0000:00/0000:00:1c.0/0000:01:00.0" \
	"$T/devices/pci0000:80/0000:80:00.0/0000:81:00.0" "$T/bus/pci/devices" \
	"$T/kernel/debug/p2pdma" "$T/module/pci_p2pdma/parameters"
ln -s ../../../devices/pci0000:00/0000:00:1c.0/0000:01:00.0 "$T/bus/pci/devices/0000:01:00.0"
ln -s ../../../devices/pci0000:80/0000:80:00.0/0000:81:00.0 "$T/bus/pci/devices/0000:81:00.0"
echo '# p2pdma routes v2
0000:01:00.0 0000:01:00.0 bus-address 0 - - - -
0000:01:00.0 0000:81:00.0 refused - builtin - 0000:80 host bridge pci0000:80 is not known to route P2P (allow with pci_p2pdma.host_bridges=allow:0000:80)' \
	> "$T/kernel/debug/p2pdma/routes"
echo "deny:all,allow:0000:00" > "$T/module/pci_p2pdma/parameters/host_bridges"
out=$(P2PDMA_SYSFS=$T "$tool" routes 2>&1)
contains "routes_knob_two_host_bridges" "    allow it: echo 'allow:0000:80,allow:0000:00,deny:all' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:80,allow:0000:00,deny:all)" "$out"
echo "deny:0000:80" > "$T/module/pci_p2pdma/parameters/host_bridges"
sed -i 's/builtin - 0000:80 .*/override - 0000:80 host bridge pci0000:80 is denied by pci_p2pdma.host_bridges rule deny:0000:80/' \
	"$T/kernel/debug/p2pdma/routes"
out=$(P2PDMA_SYSFS=$T "$tool" route 0000:01:00.0 0000:81:00.0 2>&1)
contains "route_knob_two_host_bridges_drops_deny" "  allow it: echo 'allow:0000:80,allow:0000:00' > $hbp (at boot: pci_p2pdma.host_bridges=allow:0000:80,allow:0000:00)" "$out"

sed -i 1s/v2/v3/ "$S/kernel/debug/p2pdma/routes"
run routes
expect "routes_v3_exit_4" 4 "$rc"
contains "routes_v3_says_version" "version 2" "$out"
printf '# p2pdma routes v2\n0000:03:00.0 0000:03:00.0 bus-address 0 - -\n' > "$S/kernel/debug/p2pdma/routes"
run routes
expect "routes_malformed_exit_1" 1 "$rc"
rm "$S/kernel/debug/p2pdma/routes"
run routes
expect "routes_no_file_exit_4" 4 "$rc"
contains "routes_no_file_hints_debugfs" "CONFIG_DEBUG_FS" "$out"
rm -r "$S/module/pci_p2pdma"
run routes
expect "routes_no_module_dir_exit_4" 4 "$rc"
contains "routes_no_module_dir_names_it" "pci_p2pdma/parameters/host_bridges" "$out"

# --- bind, unbind ----------------------------------------------------------
make_tree "$S"
start_fake_kernel
run bind 0000:03:00.0
expect "bind_bound_elsewhere_exit_1" 1 "$rc"
contains "bind_bound_elsewhere_says_force" "bound to nvme" "$out"
expect "bind_bound_elsewhere_writes_nothing" "bar=-1 offset=0 size=0 publish=Y (null) no-probe" \
	"$(params) $(<"$S/bus/pci/devices/0000:03:00.0/driver_override") $([ -e "$S/probe.log" ] && echo probed || echo no-probe)"

run bind 00:06.0 --bar 2 --offset 1M --size 0x400000 --no-publish
expect "bind_exit_0" 0 "$rc"
contains "bind_reports_provider" "0000:00:06.0: bound to p2pmem-bar: 4194304 (4.0 MiB) of P2P memory, published no" "$out"
expect "bind_probe_saw_parameters" "0000:00:06.0 bar=2 offset=1048576 size=4194304 publish=N" "$(cat "$S/probe.log")"
expect "bind_restores_parameters" "bar=-1 offset=0 size=0 publish=Y" "$(params)"
expect "bind_sets_driver_override" p2pmem-bar "$(<"$S/bus/pci/devices/0000:00:06.0/driver_override")"
run -l list
expect "list_shows_bound_provider" "0000:00:06.0 4194304 4194304 no p2pmem-bar 1af4:1110 0 unpublished" \
	"$(grep '^0000:00:06.0 ' <<< "$out")"

run bind 0000:00:06.0
expect "bind_already_bound_exit_1" 1 "$rc"
run unbind 0000:00:06.0
expect "unbind_exit_0" 0 "$rc"
expect "unbind_writes_driver_unbind" 0000:00:06.0 "$(<"$S/bus/pci/drivers/p2pmem-bar/unbind")"
expect "unbind_clears_driver_override" "" "$(<"$S/bus/pci/devices/0000:00:06.0/driver_override")"
run unbind 0000:00:1f.2
expect "unbind_other_driver_exit_1" 1 "$rc"

run bind 0000:04:00.0 --force
expect "bind_force_exit_0" 0 "$rc"
expect "bind_force_unbinds_first" 0000:04:00.0 "$(<"$S/bus/pci/drivers/nvme/unbind")"
expect "bind_force_probe_defaults" "0000:04:00.0 bar=-1 offset=0 size=0 publish=Y" "$(tail -n 1 "$S/probe.log")"

rm "$S/bus/pci/devices/0000:00:06.0/driver"
run bind 0000:00:06.0 --bar 5 --size 1G
expect "bind_probe_fails_exit_1" 1 "$rc"
contains "bind_probe_fails_says_dmesg" "see dmesg" "$out"
expect "bind_probe_fails_restores_parameters" "bar=-1 offset=0 size=0 publish=Y" "$(params)"
expect "bind_probe_fails_clears_override" "" "$(<"$S/bus/pci/devices/0000:00:06.0/driver_override")"
stop_fake_kernel

rm -f "$S/bus/pci/drivers_probe"
mkdir "$S/bus/pci/drivers_probe"
run bind 0000:00:06.0
expect "bind_probe_write_fails_exit_1" 1 "$rc"
contains "bind_probe_write_fails_says_errno" "Is a directory" "$out"
contains "bind_probe_write_fails_says_dmesg" "see dmesg" "$out"
expect "bind_probe_write_fails_restores_parameters" "bar=-1 offset=0 size=0 publish=Y" "$(params)"

run bind 0000:00:09.0
expect "bind_no_device_exit_1" 1 "$rc"
rm -r "$S/module/p2pmem_bar"
run bind 0000:00:06.0
expect "bind_no_driver_exit_4" 4 "$rc"
contains "bind_no_driver_names_it" "p2pmem_bar/parameters" "$out"

# --- permissions -----------------------------------------------------------
# As nobody: the routes file (debugfs is 0700) and every write need root.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	make_tree "$S"
	chmod -R go-w "$tmp"
	chmod 700 "$S/kernel/debug"
	nobody() {
		out=$(P2PDMA_SYSFS=$S setpriv --reuid=65534 --regid=65534 --clear-groups "$tool" "$@" 2>&1)
		rc=$?
	}
	nobody routes
	expect "routes_unprivileged_exit_3" 3 "$rc"
	contains "routes_unprivileged_says_root" "run as root" "$out"
	nobody bind 0000:00:06.0
	expect "bind_unprivileged_exit_3" 3 "$rc"
	expect "bind_unprivileged_leaves_parameters" "bar=-1 offset=0 size=0 publish=Y" "$(params)"
	nobody -l list
	expect "list_unprivileged_exit_0" 0 "$rc"
else
	echo "# not root or no setpriv: the permission checks do not run"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
