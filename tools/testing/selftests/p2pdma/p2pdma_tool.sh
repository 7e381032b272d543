#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The p2pdma route tool (tools/pci/p2pdma) on a live kernel: its list
# agrees with sysfs, its routes (one line per pair, and the matrix) with
# the kernel's debugfs routes file, every refusal has a footnote with the
# knob that would change it; "route P C" explains a refused pair, and the
# knob it prints, applied, allows that route, which the matrix then marks
# as allowed by override (the policy is restored exactly as found); the
# in-use bytes of list grow by exactly what a mapping of p2pmem/allocate
# takes and come back when it is unmapped; an unprivileged user gets exit
# status 3, and bind/unbind of the machine's ivshmem device (1af4:1110)
# through p2pmem-bar make a provider that list shows, published or not.
# The export column of list is checked against the kernel, not against
# sysfs: P2PMEM_IOC_EXPORT (p2pmem_hold export) must succeed from every
# provider shown "yes" and fail with EACCES from every one shown
# "unpublished", with the ivshmem bound published and unpublished too.
# The ivshmem is left as it was found.
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
ktap_set_plan 21
exporter=$dir/p2pmem_hold

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

# export_diff: every provider whose export field (-l list, the 8th) is not
# what /dev/p2pmem does: a page exported, then closed. The test kernels
# have /dev/p2pmem, so "no-dev" is always wrong. Nothing when they agree.
export_diff() {
	local bdf word got want
	[ -x "$exporter" ] || { echo "no $exporter (make selftests)"; return; }
	while read -r bdf _ _ _ _ _ _ word; do
		got=$("$exporter" export "$bdf" 4096 2>&1)
		case $got in
		"export ok") want=yes ;;
		"export error EACCES") want=unpublished ;;
		*) want="(the kernel: $got)" ;;
		esac
		[ "$word" = "$want" ] || echo "$bdf: the tool says '$word', the export: $got"
	done < <("$tool" -l list)
}
bad=$(export_diff)
yes=$("$tool" -l list | awk '$8 == "yes"' | wc -l)
ok=0
[ -z "$bad" ] && [ "$yes" -gt 0 ] && ok=1
check list_export_matches_kernel $ok "$bad" "$yes provider(s) shown exporting" "$("$tool" -l list)"

# --- routes ----------------------------------------------------------------
kernel=$(grep -v '^#' "$routes")
# The one line per pair: the kernel's lines, field for field.
got=$("$tool" -l routes 2>&1)
ok=0
[ -n "$kernel" ] && [ "$(sort <<< "$kernel")" = "$(sort <<< "$got")" ] && ok=1
check routes_list_matches_kernel $ok "kernel:" "$kernel" "p2pdma -l routes:" "$got"

# matrix_cells: "provider client cell" for every cell of $matrix, by the
# header's columns.
matrix_cells() {
	awk 'NR == 1 {
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
	}' <<< "$matrix"
}
# matrix_diff: how the cells of $matrix differ from the kernel's $kernel
# (nothing when they agree): a route an allow rule allowed is "hb N*".
matrix_diff() {
	local want got
	want=$(awk '{
			m = $3 " " $4
			if ($3 == "bus-address") m = "bus " $4
			if ($3 == "through-host-bridge") m = "hb " $4
			if ($3 != "refused" && $5 == "override") m = m "*"
			if ($3 == "refused") m = "REFUSED"
			print $1, $2, m
		}' <<< "$kernel" | sort)
	got=$(matrix_cells | sed -E 's/REFUSED\[[0-9]+\]$/REFUSED/' | sort)
	[ -n "$want" ] || echo "the kernel's table is empty"
	diff <(echo "$want") <(echo "$got") | grep '^[<>]' |
		sed 's/^</kernel:/; s/^>/matrix:/' | head -n 20
}
matrix=$("$tool" routes 2>&1)
cells=$(matrix_cells)
bad=$(matrix_diff)
ok=0
[ -z "$bad" ] && ok=1
check routes_matrix_matches_kernel $ok "$bad"

# allow_value HOST_BRIDGE PROVIDER CLIENT RULES: the knob of a refusal, as
# the tool documents it: an allow rule for every host bridge on the path
# first, then RULES without the rules for those host bridges. Sets
# allow_v (no subshell: see the footnotes below); root buses are looked
# up once per device.
declare -A rbus
allow_value() {
	local hbs=("$1") h t v="" r d
	for d in "$2" "$3"; do
		[ -n "${rbus[$d]:-}" ] || rbus[$d]=$(root_bus "$d")
		h=${rbus[$d]}
		[[ " ${hbs[*]} " == *" $h "* ]] || hbs+=("$h")
	done
	for h in "${hbs[@]}"; do v+="${v:+,}allow:$h"; done
	IFS=, read -ra r <<< "$4"
	for t in "${r[@]}"; do
		[[ " ${hbs[*]} " == *" ${t#*:} "* ]] || v+=",$t"
	done
	allow_v=$v
}

# Every refusal: a footnote "[n] provider -> client: reason" and its knob.
# The matrix's cells and footnotes are read once, in the shell: a process
# per refusal costs most of this suite's time in a debug guest.
declare -A cell foot
while read -r a b v; do cell["$a $b"]=$v; done <<< "$cells"
fn=""
while IFS= read -r line; do
	if [[ $line =~ ^\[([0-9]+)\]\  ]]; then
		fn=${BASH_REMATCH[1]}
		foot[$fn]=$line
	elif [ -n "$fn" ] && [[ $line == "    "* ]]; then
		foot[$fn]+=$'\n'$line
	else
		fn=""
	fi
done <<< "$matrix"
rules=$(<"$hbp")
bad=""
nref=0
while read -r p c map _ policy acs hb reason; do
	[ "$map" = refused ] || continue
	nref=$((nref + 1))
	n=${cell["$p $c"]:-}
	n=${n#REFUSED[}
	n=${n%]}
	note=""
	[ -n "$n" ] && [[ ${foot[$n]:-} == "[$n] $p -> $c: "* ]] && note=${foot[$n]}
	[ -n "$note" ] || { bad+="no footnote [$n] for $p -> $c"$'\n'; continue; }
	[[ $note == *": $reason"* ]] || bad+="footnote [$n] lacks the reason '$reason'"$'\n'
	[ "$hb" = - ] && continue
	allow_value "$hb" "$p" "$c" "$rules"
	v=$allow_v
	knob="    allow it: echo '$v' > $hbp (at boot: pci_p2pdma.host_bridges=$v)"
	case $policy in
	builtin) ;;
	override) knob="    a deny rule of pci_p2pdma.host_bridges refuses it (now: ${rules:-empty})"$'\n'"$knob" ;;
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

# --- route: one refused pair, explained; its knob applied -------------------
# A refusal by a host bridge, between two host bridges if there is one.
pick=""
while read -r p c map _ policy acs hb reason; do
	if [ "$map" != refused ] || [ "$hb" = - ]; then continue; fi
	[ -n "$pick" ] || pick="$p $c"
	[ "$(root_bus "$p")" = "$(root_bus "$c")" ] || { pick="$p $c"; break; }
done <<< "$kernel"
read -r P C <<< "$pick"
line0=$(awk -v p="$P" -v c="$C" '$1 == p && $2 == c' <<< "$kernel")
read -r _ _ _ _ policy acs hb reason <<< "$line0"
allow_value "$hb" "$P" "$C" "$rules"
v=$allow_v
decided="the kernel's built-in host bridge list"
[ "$policy" = override ] && decided="a deny rule of pci_p2pdma.host_bridges"
want="$P -> $C: refused
  distance:     -1 in the kernel API (pci_p2pdma_distance()): refused, not a negative distance
  reason:       $reason
  ACS redirect: ${acs/#-/none}
  host bridge:  $hb
  decided by:   $decided"
# The provider exports (the kernel check is list_export_matches_kernel):
# an importer on the client is refused as the route is.
[ "$(<"$devs/$P/p2pmem/published")" = 1 ] &&
	want+=$'\n'"  export:       yes, as a dma-buf by /dev/p2pmem; an importer on $C cannot attach it (EREMOTEIO, the route is refused)"
[ "$policy" = override ] && want+=$'\n'"  a deny rule of pci_p2pdma.host_bridges refuses it (now: ${rules:-empty})"
want+=$'\n'"  allow it: echo '$v' > $hbp (at boot: pci_p2pdma.host_bridges=$v)"
ktap_print_msg "refused: $P -> $C, host bridge $hb, policy $policy; knob: $v"
out=$("$tool" route "$P" "$C" 2>&1)
rc=$?
ok=0
[ -n "$pick" ] && [ "$rc" = 0 ] && [ "$(head -n "$(wc -l <<< "$want")" <<< "$out")" = "$want" ] && ok=1
check route_explains_refused_pair $ok "route ${pick:-(no refusal by a host bridge)}: exit status $rc" \
	"expected:" "$want" "got:" "$out"

# Apply the knob the tool printed, exactly; put the policy back at the end.
restore_policy() { [ -z "${rules0+set}" ] || printf '%s\n' "$rules0" > "$hbp"; }
trap restore_policy EXIT
knob=$(sed -n "s|^  allow it: echo '\(.*\)' > $hbp (at boot: .*|\1|p" <<< "$out")
rules0=$rules
err=$( { printf '%s\n' "$knob" > "$hbp"; } 2>&1)
kernel=$(grep -v '^#' "$routes")
line=$(awk -v p="$P" -v c="$C" '$1 == p && $2 == c' <<< "$kernel")
read -r _ _ map dist policy _ _ reason <<< "$line"
out=$("$tool" route "$P" "$C" 2>&1)
ok=0
[ -n "$knob" ] && [ -z "$err" ] && [ "$map" = through-host-bridge ] && [ "$policy" = override ] &&
	[ "$reason" = "allowed by pci_p2pdma.host_bridges" ] &&
	[ "$(head -n 2 <<< "$out")" = "$P -> $C: allowed by override, through the host bridge, distance $dist
  decided by:   pci_p2pdma.host_bridges (now: $knob)" ] && ok=1
check route_knob_allows_the_route $ok "knob: '$knob' ${err:+(write: $err)}" "kernel: $line" "$out"

# The matrix under the knob: the route, and every other the rule allowed,
# is "hb N*", and the legend says what that means.
matrix=$("$tool" routes 2>&1)
bad=$(matrix_diff)
legend=$(sed -n '/^\*: allowed by override:$/,/^   See /p' <<< "$matrix")
ok=0
[ -z "$bad" ] && [[ $(matrix_cells) == *"$P $C hb $dist*"* ]] &&
	[ "$legend" = '*: allowed by override:
   an allow rule of pci_p2pdma.host_bridges allows it, not the kernel'"'"'s built-in
   list of host bridges: nothing vouches that the root complex forwards peer-to-
   peer requests, and if it does not, DMA on the route can lose or corrupt data.
   See Documentation/admin-guide/p2pdma/host-bridges.rst, "Verifying a host bridge before allowing it".' ] && ok=1
check routes_marks_route_allowed_by_override $ok "$bad" "$matrix"

printf '%s\n' "$rules0" > "$hbp"
now=$(<"$hbp")
line=$(grep "^$P $C " "$routes")
ok=0
[ "$now" = "$rules0" ] && [ "$line" = "$line0" ] && ok=1
check route_policy_restored_refused_again $ok "policy: '$now', was '$rules0'" "now: $line" "was: $line0"
unset rules0
trap - EXIT
kernel=$(grep -v '^#' "$routes")

# --- list: the bytes in use -------------------------------------------------
pbdf=""
[ -n "${P2P_MEM:-}" ] && pbdf=$(nvme_bdf "$P2P_MEM")
[ -n "$pbdf" ] && [ -d "$devs/$pbdf/p2pmem" ] || pbdf=$("$tool" -l list | awk 'NR == 1 { print $1 }')
in_use() { "$tool" -l list | awk -v a="$pbdf" '$1 == a { print $7 }'; }
size=$(<"$devs/$pbdf/p2pmem/size")
avail=$(<"$devs/$pbdf/p2pmem/available")
used0=$(in_use)
avail2=$(<"$devs/$pbdf/p2pmem/available")
ok=0
[ -n "$used0" ] && [ "$avail" = "$avail2" ] && [ "$used0" = $((size - avail)) ] && ok=1
check list_in_use_is_size_minus_available $ok "$pbdf: size $size, available $avail then $avail2, in use '$used0'"

# Map N bytes of p2pmem/allocate (nothing written) and hold the mapping;
# on a line, unmap it and stay until the next line: the bytes must come
# back by the munmap(), not by the holder's exit.
N=$((2 << 20))
hold='import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, int(sys.argv[2]), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)
print("mapped", flush=True)
sys.stdin.readline()
m.close()
print("unmapped", flush=True)
sys.stdin.readline()'
coproc HOLD { python3 -c "$hold" "$devs/$pbdf/p2pmem/allocate" "$N" 2>&1; }
hold_out=""
IFS= read -r -t 60 -u "${HOLD[0]}" hold_out
used1=$(in_use)
ok=0
[ "$hold_out" = mapped ] && [ "$used1" = $((used0 + N)) ] && ok=1
check list_in_use_grows_by_mapping $ok "$pbdf: in use $used0, with $N bytes mapped $used1 (want $((used0 + N))); holder: $hold_out"

echo >&"${HOLD[1]}"
hold_out=""
IFS= read -r -t 60 -u "${HOLD[0]}" hold_out
# The pages return as their last reference goes: allow them a moment.
for _ in $(seq 50); do
	used2=$(in_use)
	[ "$used2" = "$used0" ] && break
	sleep 0.1
done
# Let the holder go; one that did not answer is not waited for forever.
if [ "$hold_out" = unmapped ]; then echo >&"${HOLD[1]}"; else kill "$HOLD_PID"; fi 2>/dev/null
wait "$HOLD_PID" 2>/dev/null
ktap_print_msg "$pbdf: in use $used0, $used1 with $N bytes mapped, $used2 after the unmap"
ok=0
[ "$hold_out" = unmapped ] && [ "$used2" = "$used0" ] && ok=1
check list_in_use_back_after_unmap $ok "$pbdf: in use $used0, after the unmap $used2; holder: $hold_out"

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
		 list_export_matches_kernel_published_ivshmem \
		 bind_no_publish_makes_unpublished_provider \
		 list_export_matches_kernel_unpublished_ivshmem unbind_removes_provider; do
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
[ "$rc" = 0 ] && [ -n "$size" ] && [ "$line" = "$iv $size  yes p2pmem-bar $id 0 yes" ] && ok=1
check bind_ivshmem_makes_published_provider $ok "exit status $rc: $out" "list: $line"
after=$(cat "$params"/{bar,offset,size,publish})
ok=0
[ "$before" = "$after" ] && ok=1
check bind_restores_module_parameters $ok "before: $before" "after: $after"

bad=$(export_diff)
got=$("$exporter" export "$iv" 4096 2>&1)
ok=0
[ -z "$bad" ] && [ "$got" = "export ok" ] && ok=1
check list_export_matches_kernel_published_ivshmem $ok "$bad" "$iv: $got"

bounded unbind "$iv" >/dev/null
out=$(bounded bind "$iv" --no-publish 2>&1)
rc=$?
line=$(provider_line)
ok=0
[ "$rc" = 0 ] && [ "$line" = "$iv $size  no p2pmem-bar $id 0 unpublished" ] && ok=1
check bind_no_publish_makes_unpublished_provider $ok "exit status $rc: $out" "list: $line"

bad=$(export_diff)
got=$("$exporter" export "$iv" 4096 2>&1)
ok=0
[ -z "$bad" ] && [ "$got" = "export error EACCES" ] && ok=1
check list_export_matches_kernel_unpublished_ivshmem $ok "$bad" "$iv: $got"

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
