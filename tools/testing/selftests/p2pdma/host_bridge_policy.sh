#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host bridge policy override, pci_p2pdma.host_bridges: its runtime
# knob, its boot-time form, malformed values, and what it does to a route
# that crosses host bridges, seen in the debugfs routes file and by the
# DMA mapping path (O_DIRECT into P2P memory, bytes compared).
#
# A topology whose provider-to-source route is refused by default (the
# "hostbridge" one: the q35 host bridge is not known to route P2P) is
# allowed with allow rules, by domain:bus and by vendor:device; one whose
# route goes through the host bridge by default ("hostbridge-amd": AMD
# Zen) is refused with deny rules. Every change is undone at the end.
# A machine that boots with a deny rule for a host bridge that only one
# NVMe sits below (P2P_BOOT_DENIED) shows what the boot-time rule does:
# that route is refused by the override, a copy over it fails, and it
# goes through the host bridge once the rule is gone.
# Environment: P2P_MEM, P2P_SRC (NVMe serials), P2P_EXPECT_SRC (the
# default map type from the provider to the source), P2P_BOOT_DENIED
# (optional: serial of the NVMe the boot rule cuts off), P2P_BIN
# (directory of p2pcopy; default: the checkout's build/bin).
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$dir/../kselftest/ktap_helpers.sh"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

knob=/sys/module/pci_p2pdma/parameters/host_bridges
routes=/sys/kernel/debug/p2pdma/routes
p2pcopy=${P2P_BIN:-$dir/../../../../build/bin}/p2pcopy

ktap_print_header
mem=$(nvme_bdf "${P2P_MEM:-}") && src=$(nvme_bdf "${P2P_SRC:-}") &&
	own=$(nvme_blk "$P2P_MEM") && src_blk=$(nvme_blk "$P2P_SRC")
if [ -z "${own:-}" ] || [ -z "${src_blk:-}" ] || [ ! -e "$knob" ] ||
   [ ! -r "$routes" ] || [ ! -x "$p2pcopy" ]; then
	ktap_skip_all "needs NVMe P2P_MEM and P2P_SRC, $knob, $routes and $p2pcopy"
	exit "$KSFT_SKIP"
fi
case ${P2P_EXPECT_SRC:-} in
refused | through-host-bridge) ;;
*)
	ktap_skip_all "the route to the source does not cross a host bridge (${P2P_EXPECT_SRC:-unset})"
	exit "$KSFT_SKIP"
	;;
esac
if [ -n "${P2P_BOOT_DENIED:-}" ]; then
	denied=$(nvme_bdf "$P2P_BOOT_DENIED") && denied_blk=$(nvme_blk "$P2P_BOOT_DENIED")
	if [ -z "${denied_blk:-}" ]; then
		ktap_skip_all "no NVMe $P2P_BOOT_DENIED (P2P_BOOT_DENIED)"
		exit "$KSFT_SKIP"
	fi
fi
plan=20
[ "$P2P_EXPECT_SRC" = refused ] && plan=22
[ -n "${P2P_BOOT_DENIED:-}" ] && plan=$((plan + 5))
ktap_set_plan $plan

# result NAME WANT GOT
result() {
	if [ "$2" = "$3" ]; then
		ktap_test_pass "$1"
	else
		ktap_print_msg "expected '$2', got '$3'"
		ktap_test_fail "$1"
	fi
}

# field N [CLIENT]: field N of the routes line from the provider to the
# source, or to CLIENT (3 map_type, 4 distance, 5 policy, 8 reason: the
# rest of the line)
field() {
	awk -v p="$mem" -v c="${2:-$src}" -v n="$1" '$1 == p && $2 == c {
		if (n < 8) { print $n; exit }
		for (i = 1; i < 8; i++) sub(/^[^ ]* /, "")
		print; exit }' "$routes"
}

# id_of DDDD:BB: vendor:device of the function at 00.0 of that root bus,
# the one that identifies its host bridge in our topologies
id_of() {
	local d=/sys/bus/pci/devices/$1:00.0 v dv
	v=$(cat "$d/vendor" 2>/dev/null) && dv=$(cat "$d/device" 2>/dev/null) || return 1
	echo "${v#0x}:${dv#0x}"
}

# set_knob VALUE: write it; prints the error of a failed write
set_knob() {
	{ echo "$1" > "$knob"; } 2>&1
}

# mark: put a numbered marker into the kernel log (KUnit, which runs at
# boot, logs the same kind of lines); logged_since PATTERN: how many
# lines since the last marker contain PATTERN (a fixed string).
marks=0
mark() {
	marks=$((marks + 1))
	echo "host_bridge_policy.sh: mark $marks" > /dev/kmsg
}
logged_since() {
	dmesg | sed -n "/host_bridge_policy.sh: mark $marks\$/,\$p" | grep -cF "$1"
}

# copy [SOURCE]: O_DIRECT from the source (or the block device SOURCE)
# into the provider's P2P memory, then to the provider's own namespace;
# prints "ok", "refused" (P2P_REFUSED_ERRNO on the read) or what went wrong. Each
# copy moves a fresh random pattern into a destination zeroed first, so
# that a leg that writes nothing cannot pass on an earlier copy's bytes,
# and a refused copy must leave the destination zero.
copy() {
	local src=${1:-$src_blk} rc
	dd if=/dev/urandom of=/tmp/policy.pattern bs=1M count=4 status=none
	dd if=/tmp/policy.pattern of="$src" bs=1M seek=40 oflag=direct conv=fsync status=none
	dd if=/dev/zero of=/tmp/policy.zero bs=1M count=4 status=none
	dd if=/tmp/policy.zero of="$own" bs=1M seek=40 oflag=direct conv=fsync status=none
	"$p2pcopy" -m "$mem" -s "$src" -d "$own" -n $((4 << 20)) -c 1048576 \
		-S $((40 << 20)) -D $((40 << 20)) -E "${P2P_REFUSED_ERRNO:-EREMOTEIO}" \
		>/dev/null 2>/tmp/p2pcopy.err
	rc=$?
	dd if="$own" of=/tmp/policy.back bs=1M skip=40 count=4 iflag=direct status=none
	case $rc in
	0)
		if cmp -s /tmp/policy.pattern /tmp/policy.back; then echo ok; else echo "bytes differ"; fi
		;;
	3)
		if cmp -s /tmp/policy.zero /tmp/policy.back; then
			echo refused
		else
			echo "refused, but the destination changed"
		fi
		;;
	*) echo "p2pcopy exit $rc: $(head -n 1 /tmp/p2pcopy.err)" ;;
	esac
}

# --- the knob and the command line ---------------------------------------
boot=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^pci_p2pdma\.host_bridges=//p' | tail -n 1)
result knob_is_root_writable "644 root" "$(stat -c '%a %U' "$knob")"
result knob_reads_command_line_value "$boot" "$(cat "$knob")"
if [ -n "$boot" ]; then
	want=1
else
	want=0
fi
result boot_policy_logged_once "$want" \
	"$(dmesg | grep -c "host bridge policy from the command line: $boot\$")"

# --- what the boot-time rule decides ---------------------------------------
# The copy first, as below: the routes file would work the route out again.
if [ -n "${P2P_BOOT_DENIED:-}" ]; then
	result boot_rule_copy_refused_eremoteio refused "$(copy "$denied_blk")"
	result boot_rule_route_refused_by_override "refused override" \
		"$(field 3 "$denied") $(field 5 "$denied")"
	result boot_rule_named_in_reason 1 \
		"$(field 8 "$denied" | grep -c "denied by pci_p2pdma.host_bridges rule $boot\$")"
	set_knob "" >/dev/null
	result without_boot_rule_copy_bytes_match ok "$(copy "$denied_blk")"
	set_knob "$boot" >/dev/null
	result boot_rule_back_copy_refused_eremoteio refused "$(copy "$denied_blk")"
fi

# --- malformed values: EINVAL, a reason in dmesg, nothing changed ----------
bad=0
for v in permit:all allow:0000:8 allow:zz:00 'allow:all,' allow:8086:29c00; do
	mark
	err=$(set_knob "$v")
	n=$(logged_since "pci_p2pdma.host_bridges: '$v' rejected")
	if [[ $err != *"Invalid argument"* ]] || [ "$n" != 1 ] ||
	   [ "$(cat "$knob")" != "$boot" ]; then
		ktap_print_msg "'$v': write said '$err', $n dmesg lines, knob now '$(cat "$knob")'"
		bad=1
	fi
done
result malformed_values_einval_and_unchanged 0 "$bad"

# --- the default route ----------------------------------------------------
result "default_route_is_$P2P_EXPECT_SRC" "$P2P_EXPECT_SRC builtin" "$(field 3) $(field 5)"
hb_mem=$(root_bus "$mem") hb_src=$(root_bus "$src")
rules_bus="allow:$hb_mem"
[ "$hb_src" != "$hb_mem" ] && rules_bus+=",allow:$hb_src"
id_mem=$(id_of "$hb_mem") && id_src=$(id_of "$hb_src")
rules_id="allow:$id_mem"
[ "$id_src" != "$id_mem" ] && rules_id+=",allow:$id_src"

if [ "$P2P_EXPECT_SRC" = refused ]; then
	result default_refusal_names_the_rule_that_allows_it 1 \
		"$(field 8 | grep -c "pci_p2pdma.host_bridges=allow:")"
	result default_copy_refused_eremoteio refused "$(copy)"

	# allow by domain:bus
	mark
	result allow_by_bus_accepted "" "$(set_knob "$rules_bus")"
	# The copy first: reading the routes file would work every route out
	# again and hide a policy change that left stale verdicts cached.
	result allow_by_bus_copy_bytes_match ok "$(copy)"
	result allow_by_bus_logged 1 "$(logged_since "host bridge policy changed to '$rules_bus'")"
	# The q35 host bridge is not on the built-in list: the rule's risk
	# is named once, with the rule.
	result allow_unlisted_host_bridge_warns 1 \
		"$(logged_since "host bridge pci$hb_mem ($id_mem) is not known to forward P2P requests, but rule allow:$hb_mem allows P2P DMA through it")"
	result allow_by_bus_route "through-host-bridge override allowed by pci_p2pdma.host_bridges" \
		"$(field 3) $(field 5) $(field 8)"
	# allow by vendor:device
	result allow_by_id_accepted "" "$(set_knob "$rules_id")"
	result allow_by_id_copy_bytes_match ok "$(copy)"
	result allow_by_id_route "through-host-bridge override" "$(field 3) $(field 5)"
	# Still allowed by the new rules, routes worked out again: no repeat.
	# One warning for each host bridge of the route, none since.
	nhb=1
	[ "$hb_src" != "$hb_mem" ] && nhb=2
	result allow_warned_once_per_host_bridge $nhb \
		"$(logged_since "is not known to forward P2P requests")"
	# a rule for another host bridge changes nothing
	result other_rule_accepted "" "$(set_knob "allow:ffff:ff")"
	result other_rule_route "refused builtin" "$(field 3) $(field 5)"
	# back to the command line's
	result restore_accepted "" "$(set_knob "$boot")"
	result restored_copy_refused_eremoteio refused "$(copy)"
	result restored_route_refused "refused builtin" "$(field 3) $(field 5)"
else
	result default_copy_bytes_match ok "$(copy)"
	result default_route_has_no_reason - "$(field 8)"

	# deny everything
	mark
	result deny_all_accepted "" "$(set_knob deny:all)"
	# The copy first: reading the routes file would work every route out
	# again and hide a policy change that left stale verdicts cached.
	result deny_all_copy_refused_eremoteio refused "$(copy)"
	result deny_all_logged 1 "$(logged_since "host bridge policy changed to 'deny:all'")"
	result deny_all_route "refused override" "$(field 3) $(field 5)"
	result deny_all_reason_names_rule 1 \
		"$(field 8 | grep -c 'denied by pci_p2pdma.host_bridges rule deny:all$')"
	# deny by vendor:device; allow rules first win
	result deny_by_id_accepted "" "$(set_knob "deny:$id_mem")"
	result deny_by_id_route "refused override" "$(field 3) $(field 5)"
	result allow_before_deny_wins "through-host-bridge override" \
		"$(set_knob "$rules_bus,deny:all"; field 3) $(field 5)"
	# AMD Zen routes P2P through every host bridge: an allow rule adds no risk.
	result allow_on_zen_no_warning 0 "$(logged_since "is not known to forward P2P requests")"
	# back to the command line's
	result restore_accepted "" "$(set_knob "$boot")"
	result restored_copy_bytes_match ok "$(copy)"
	result restored_route "through-host-bridge builtin" "$(field 3) $(field 5)"
fi
result knob_back_to_command_line_value "$boot" "$(cat "$knob")"
ktap_finished
