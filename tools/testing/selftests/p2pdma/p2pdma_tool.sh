#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The p2pdma route tool (tools/pci/p2pdma) on a live kernel: its list
# agrees with sysfs, its routes (one line per pair, and the matrix) with
# the kernel's debugfs routes file, every refusal has a footnote with the
# knob that would change it, an unprivileged user gets exit status 3, and
# bind/unbind of the machine's ivshmem device (1af4:1110) through
# p2pmem-bar make a provider that list shows, published or not. The
# ivshmem is left as it was found.
# Environment: P2PDMA_TOOL, the tool (default: build/bin/p2pdma of the
# checkout); P2P_MEM, the serial of an NVMe bound to nvme (optional);
# P2P_IVSHMEM, the ivshmem's vendor:device (default 1af4:1110).
dir=$(dirname "$0")
helpers=$dir/../kselftest/ktap_helpers.sh
# Run from the checkout rather than an installed kselftest tree.
[ -f "$helpers" ] ||
	helpers=$dir/../../../../build/linux-source-6.12/tools/testing/selftests/kselftest/ktap_helpers.sh
# shellcheck source=/dev/null
. "$helpers"
# shellcheck source=tools/testing/selftests/p2pdma/p2pdma_lib.sh
. "$dir/p2pdma_lib.sh"

routes=/sys/kernel/debug/p2pdma/routes
hbp=/sys/module/pci_p2pdma/parameters/host_bridges
params=/sys/module/p2pmem_bar/parameters
devs=/sys/bus/pci/devices
tool=${P2PDMA_TOOL:-}
for t in "$dir/../../../bin/p2pdma" "$dir/../../../../build/bin/p2pdma"; do
	[ -n "$tool" ] || [ ! -x "$t" ] || tool=$t
done

ktap_print_header
if [ -z "$tool" ] || [ ! -x "$tool" ] || [ ! -r "$routes" ]; then
	ktap_skip_all "needs the p2pdma tool (make tools; P2PDMA_TOOL) and $routes"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 11

# check NAME OK [MESSAGE...]: a result; the messages explain a failure.
check() {
	local name=$1 ok=$2
	shift 2
	if [ "$ok" = 1 ]; then
		ktap_test_pass "$name"
	else
		local m
		for m in "$@"; do
			while IFS= read -r l; do ktap_print_msg "$l"; done <<< "$m"
		done
		ktap_test_fail "$name"
	fi
}
# bounded ARG...: the tool, at most 120 s (bind and unbind can hang).
bounded() { timeout 120 "$tool" "$@"; }

# --- help ------------------------------------------------------------------
out=$("$tool" --help 2>&1)
rc=$?
ok=0
[ "$rc" = 0 ] && [[ $out == *"Exit status"* ]] && ok=1
check tool_help_exits_0 $ok "exit status $rc" "$out"

# --- list ------------------------------------------------------------------
# address size available published, from sysfs and from the tool.
sysfs_providers() {
	local d
	for d in "$devs"/*; do
		[ -d "$d/p2pmem" ] || continue
		printf '%s %s %s %s\n' "${d##*/}" "$(<"$d/p2pmem/size")" \
			"$(<"$d/p2pmem/available")" "$(<"$d/p2pmem/published")"
	done | sed 's/ 1$/ yes/; s/ 0$/ no/' | sort
}
want=$(sysfs_providers)
got=$("$tool" -l list 2>&1 | cut -d' ' -f1-4 | sort)
ok=0
[ -n "$want" ] && [ "$want" = "$got" ] && ok=1
check list_matches_sysfs $ok "sysfs:" "$want" "p2pdma -l list:" "$got"

# --- routes ----------------------------------------------------------------
kernel=$(grep -v '^#' "$routes")
# The one line per pair: the kernel's lines, field for field.
got=$("$tool" -l routes 2>&1)
ok=0
[ -n "$kernel" ] && [ "$(sort <<< "$kernel")" = "$(sort <<< "$got")" ] && ok=1
check routes_list_matches_kernel $ok "kernel:" "$kernel" "p2pdma -l routes:" "$got"

# The matrix: "provider client cell" for every cell, by the header's columns.
matrix=$("$tool" routes 2>&1)
cells=$(awk 'NR == 1 {
		for (i = 2; i <= NF; i++) { c[i - 1] = $i; p[i - 1] = index($0, $i) }
		n = NF - 1; next
	}
	/^$/ { exit }
	{
		for (j = 1; j <= n; j++) {
			cell = j < n ? substr($0, p[j], p[j + 1] - p[j]) : substr($0, p[j])
			sub(/ +$/, "", cell)
			print $1, c[j], cell
		}
	}' <<< "$matrix")
want=$(awk '{
		m = $3 " " $4
		if ($3 == "bus-address") m = "bus " $4
		if ($3 == "through-host-bridge") m = "hb " $4
		if ($3 == "refused") m = "REFUSED"
		print $1, $2, m
	}' <<< "$kernel" | sort)
got=$(sed -E 's/REFUSED\[[0-9]+\]$/REFUSED/' <<< "$cells" | sort)
ok=0
[ -n "$want" ] && [ "$want" = "$got" ] && ok=1
check routes_matrix_matches_kernel $ok "$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' |
	sed 's/^</kernel:/; s/^>/matrix:/' | head -n 20)"

# Every refusal: a footnote "[n] provider -> client: reason" and its knob.
rules=$(<"$hbp")
bad=""
nref=0
while read -r p c map _ policy acs hb reason; do
	[ "$map" = refused ] || continue
	nref=$((nref + 1))
	n=$(awk -v p="$p" -v c="$c" '$1 == p && $2 == c { print $3 }' <<< "$cells")
	n=${n#REFUSED[}
	n=${n%]}
	note=$(awk -v h="[$n] $p -> $c: " 'index($0, h) == 1 { f = 1; print; next }
		f && /^    / { print; next } f { exit }' <<< "$matrix")
	[ -n "$note" ] || { bad+="no footnote [$n] for $p -> $c"$'\n'; continue; }
	[[ $note == *": $reason"* ]] || bad+="footnote [$n] lacks the reason '$reason'"$'\n'
	[ "$hb" = - ] && continue
	case $policy in
	builtin) knob="allow it: echo 'allow:$hb${rules:+,$rules}' > $hbp (at boot: pci_p2pdma.host_bridges=allow:$hb)" ;;
	override) knob="a deny rule of pci_p2pdma.host_bridges refuses it (now: ${rules:-empty}); remove it" ;;
	*) knob="policy $policy" ;;
	esac
	[[ $note == *"$knob"* ]] || bad+="footnote [$n] lacks the knob \"$knob\""$'\n'
	[ "$acs" = - ] || [[ $note == *"pci=config_acs=00xx@$acs"* ]] ||
		bad+="footnote [$n] lacks the ACS knob for $acs"$'\n'
done <<< "$kernel"
# Every machine that runs this has a refused route: the check must see one.
[ "$nref" -gt 0 ] || bad+="no refused route on this machine: nothing was checked"$'\n'
ok=0
[ -z "$bad" ] && ok=1
[ "$ok" = 1 ] && ktap_print_msg "$nref refused route(s), each with a footnote"
check routes_refusals_have_footnote_and_knob $ok "$bad" "$matrix"

# --- permissions -------------------------------------------------------------
# A copy that nobody may run: the checkout need not be world-readable.
priv=$(mktemp -d)
cp "$tool" "$priv/p2pdma"
chmod 755 "$priv" "$priv/p2pdma"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$priv/p2pdma" routes 2>&1)
rc=$?
rm -rf "$priv"
ok=0
[ "$rc" = 3 ] && [[ $out == *"run as root"* ]] && ok=1
check routes_unprivileged_exits_3 $ok "exit status $rc" "$out"

# --- bind, unbind ------------------------------------------------------------
# A device bound to another driver is refused and left alone.
nvme=""
[ -n "${P2P_MEM:-}" ] && nvme=$(nvme_bdf "$P2P_MEM")
if [ -z "$nvme" ]; then
	for d in "$devs"/*; do
		[ "$(basename "$(readlink "$d/driver" 2>/dev/null)")" = nvme ] || continue
		nvme=${d##*/}
		break
	done
fi
out=$(bounded bind "$nvme" 2>&1)
rc=$?
ok=0
[ -n "$nvme" ] && [ "$rc" = 1 ] && [[ $out == *"--force"* ]] &&
	[ "$(basename "$(readlink "$devs/$nvme/driver")")" = nvme ] && ok=1
check bind_refuses_device_of_another_driver $ok "NVMe ${nvme:-(none found)}: exit status $rc" "$out"

id=${P2P_IVSHMEM:-1af4:1110}
iv=""
for d in "$devs"/*; do
	[ "$(<"$d/vendor"):$(<"$d/device")" = "0x${id%:*}:0x${id#*:}" ] && { iv=${d##*/}; break; }
done
drv0=""
[ -n "$iv" ] && drv0=$(basename "$(readlink "$devs/$iv/driver" 2>/dev/null)")
pub0=""
[ "$drv0" = p2pmem-bar ] && pub0=$(<"$devs/$iv/p2pmem/published")
if [ -z "$iv" ] || { [ -n "$drv0" ] && [ "$drv0" != p2pmem-bar ]; } || [ ! -d "$params" ]; then
	for t in bind_ivshmem_makes_published_provider bind_restores_module_parameters \
		 bind_no_publish_makes_unpublished_provider unbind_removes_provider; do
		ktap_test_skip "$t: needs an ivshmem ($id) bound to no driver or to p2pmem-bar, and p2pmem-bar"
	done
	ktap_finished
fi
[ "$drv0" = p2pmem-bar ] && bounded unbind "$iv" >/dev/null

# provider_line: the tool's list line of the ivshmem, without the available bytes.
provider_line() { "$tool" -l list | awk -v a="$iv" '$1 == a { $3 = ""; print }'; }
before=$(cat "$params"/{bar,offset,size,publish})
out=$(bounded bind "$iv" 2>&1)
rc=$?
size=$(cat "$devs/$iv/p2pmem/size" 2>/dev/null)
line=$(provider_line)
ok=0
[ "$rc" = 0 ] && [ -n "$size" ] && [ "$line" = "$iv $size  yes p2pmem-bar $id" ] && ok=1
check bind_ivshmem_makes_published_provider $ok "exit status $rc: $out" "list: $line"
after=$(cat "$params"/{bar,offset,size,publish})
ok=0
[ "$before" = "$after" ] && ok=1
check bind_restores_module_parameters $ok "before: $before" "after: $after"

bounded unbind "$iv" >/dev/null
out=$(bounded bind "$iv" --no-publish 2>&1)
rc=$?
line=$(provider_line)
ok=0
[ "$rc" = 0 ] && [ "$line" = "$iv $size  no p2pmem-bar $id" ] && ok=1
check bind_no_publish_makes_unpublished_provider $ok "exit status $rc: $out" "list: $line"

out=$(bounded unbind "$iv" 2>&1)
rc=$?
ok=0
[ "$rc" = 0 ] && [ ! -e "$devs/$iv/driver" ] && [ ! -d "$devs/$iv/p2pmem" ] &&
	[ -z "$(provider_line)" ] && [ "$(cat "$devs/$iv/driver_override")" = "(null)" ] && ok=1
check unbind_removes_provider $ok "exit status $rc: $out" "driver_override: $(cat "$devs/$iv/driver_override")"

# Leave the ivshmem as it was found.
if [ "$drv0" = p2pmem-bar ]; then
	if [ "$pub0" = 0 ]; then bounded bind "$iv" --no-publish; else bounded bind "$iv"; fi >/dev/null
fi
ktap_finished
