#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make check' step "callers": build the tree's own users of the P2PDMA API
# against our files the way a distribution builds them, with modules on.
# Our kernels are built with CONFIG_MODULES=n, so nothing else sees a
# missing export or a module that does not link.
#
#   1. Configure build/out-$KERNEL-callers: allnoconfig + config/base.config +
#      config/callers.config (modules and modversions on, the callers as
#      modules, p2pmem-bar =m); scripts/build-kernel.sh stops if Kconfig
#      dropped any line. Then modules_prepare.
#   2. Find the callers by grepping the tree for the API; the list must be
#      the one below, so that a new (or vanished) caller is noticed.
#   3. Compile every caller object as a single-object target, and the
#      drivers/pci/ directory (our core, wherever prepare-tree.sh lays it,
#      and p2pmem-bar.o); fail on a warning that mentions p2pdma/p2pmem
#      or sits in a caller file. Every P2PDMA symbol a caller object uses
#      must be defined by our core and, if the object is part of a module,
#      exported by it (checked last, against 4's Module.symvers).
#   4. Link our modules (drivers/pci/modules.order) as .ko with kbuild's
#      own modpost and final link, against a partial vmlinux.o: the whole
#      of drivers/pci/built-in.a plus the few kernel objects that export
#      what else the modules import (found by grepping for their
#      EXPORT_SYMBOL). modpost must be clean and every undefined symbol of
#      each .ko must be a vmlinux export; our core's exports must all be
#      EXPORT_SYMBOL_GPL. That is ten more objects, where vmlinux.o of
#      even this small configuration is a release build's minutes.
#
# Prints "callers: ..." summary lines; exits non-zero on any failure.
# Build output goes to build/out-$KERNEL-check/logs/callers-build.log (LOG_DIR).
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
tree=$ktree
out=$(kout callers)
log_dir=${LOG_DIR:-$(kout check)/logs}
blog=$log_dir/callers-build.log
start=$(date +%s)

# The P2PDMA API as callers spell it (the functions of pci-p2pdma.h, the
# enum and state of dma-map-ops.h, the page test and pgmap type of
# memremap.h, the GUP flag), plus the tree's inline wrappers that reach it
# through another header: ib_dma_pci_p2p_dma_supported() (rdma),
# blk_queue_pci_p2pdma() (block, which then asks GUP for P2P pages) and
# zone_device_pages_compatible() (block/blk.h).
api_re='pci_p2pdma_|pci_p2pmem_|pci_alloc_p2pmem|pci_free_p2pmem|is_pci_p2pdma_page|pci_has_p2pmem|PCI_P2PDMA_MAP|FOLL_PCI_P2PDMA|MEMORY_DEVICE_PCI_P2PDMA|pcim_p2pdma_|p2pdma_provider|pci-p2pdma\.h'
wrap_re='ib_dma_pci_p2p_dma_supported|blk_queue_pci_p2pdma|zone_device_pages_compatible'

# What the grep must find: config/$KERNEL/callers.list (one path a line,
# '#' comments). A .c file is compiled as its object; a header must be
# compiled by at least one of those objects. A path followed by a word
# (why: arm64-only) is found and not compiled.
expected=$(grep -v '^#' "$top/config/$KERNEL/callers.list" | awk '{ print $1 }')
uncompiled=$(grep -v '^#' "$top/config/$KERNEL/callers.list" | awk 'NF > 1 { print $1 }')

# Where the kernel objects that export what our modules import live; an
# import no EXPORT_SYMBOL here provides fails the check by name.
exporter_dirs=(arch/x86 block drivers/base fs init kernel lib mm security virt)

fail() { echo "callers: FAIL: $*"; exit 1; }
kmake() { make -s -C "$tree" O="$out" -j"$(nproc)" "$@"; }

mkdir -p "$log_dir"
: >"$blog"

# --- 1. configuration --------------------------------------------------------
"$top/scripts/build-kernel.sh" callers "$out" modules_prepare >>"$blog" 2>&1 || {
	grep -v 'override: reassigning' "$blog" | tail -20
	fail "configuring or preparing ${out#"$top"/} (log: ${blog#"$top"/})"
}
# build-kernel.sh checked every line when it configured; check again what
# this step relies on, in case .config was changed by hand since.
wanted=$( { echo CONFIG_PCI_P2PDMA=y; kfrags callers | xargs grep -hE '^CONFIG_[A-Z0-9_]+=[ym]$'; } )
for line in $wanted; do
	grep -qx "$line" "$out/.config" || fail "${out#"$top"/}/.config lacks $line"
done
echo "callers: config: $(echo "$wanted" | wc -l) symbols set as wanted (PCI_P2PDMA=y, MODULES=y, callers =m, PCI_P2PMEM_BAR=m)"

# --- 2. the callers ----------------------------------------------------------
# Our own files and other architectures are not callers; tools/ and
# Documentation/ are not kernel code.
mapfile -t grep_dirs < <(cd "$tree" && find . -mindepth 1 -maxdepth 1 -type d -printf '%P\n' |
	grep -vxE 'arch|Documentation|tools|samples|scripts|usr|LICENSES' | sort)
found=$(cd "$tree" && grep -rlE --include='*.[ch]' "$api_re|$wrap_re" \
		--exclude-dir=p2pdma arch/x86 "${grep_dirs[@]}" |
	grep -vE '^drivers/pci/p2p|^include/linux/pci-p2pdma\.h$' | sort)
if [ "$found" != "$(echo "$expected" | sed '/^$/d' | sort)" ]; then
	diff <(echo "$expected" | sed '/^$/d' | sort) <(echo "$found") | grep '^[<>]' |
		sed -e 's/^</    gone:/' -e 's/^>/    new: /'
	fail "the tree's P2PDMA callers differ from the list in ${0#"$top"/}; update it (and the config if a new subsystem needs one)"
fi
mapfile -t sources < <(echo "$found" | grep '\.c$' | grep -vxF -e "${uncompiled:-/}")
mapfile -t headers < <(echo "$found" | grep '\.h$')
objs=("${sources[@]/%.c/.o}")
echo "callers: $(echo "$found" | grep -c .) caller files and headers found, as listed;" \
	"${#sources[@]} .c files to compile${uncompiled:+, not here: $(grep -v '^#' "$top/config/$KERNEL/callers.list" | awk 'NF > 1 { print $1 " (" $2 ")" }' | paste -sd,)}"

# --- 3. compile them and drivers/pci/ ---------------------------------------
# Remove the objects, so that every warning is seen on every run.
for o in "${objs[@]}"; do rm -f "$out/$o"; done
find "$out/drivers/pci" -path '*p2p*' \( -name '*.o' -o -name '*.ko' \) -delete 2>/dev/null
stamp=$out/.callers-stamp
touch "$stamp"
clog=$out/compile.log
kmake "${objs[@]}" drivers/pci/ >"$clog" 2>&1
rc=$?
cat "$clog" >>"$blog"
if [ "$rc" != 0 ]; then
	grep -E 'error|Error' "$clog" | head -20
	fail "compiling the callers or drivers/pci/ (log: ${blog#"$top"/})"
fi
# A warning that names P2PDMA, or sits in a caller file: the tree builds
# these warning-free, so it comes from our header. Others are counted.
where=$(echo "$found" | sed 's/[.]/[.]/g' | paste -sd'|')
warns=$(grep -E 'warning:' "$clog")
ours_w=$(echo "$warns" | grep -iE "p2pdma|p2pmem|^($tree/)?($where):")
[ -z "$ours_w" ] || { echo "$ours_w"; fail "warnings from P2PDMA or in its callers"; }
nother=$(echo "$warns" | grep -c 'warning:')
nmod=0
for o in "${objs[@]}"; do
	if [ ! -f "$out/$o" ] || [ "$out/$o" -ot "$stamp" ]; then fail "$o was not built"; fi
	grep -qw -- -DMODULE "$out/$(dirname "$o")/.$(basename "$o").cmd" && nmod=$((nmod + 1))
done
for h in "${headers[@]}"; do
	n=0
	for o in "${objs[@]}"; do
		grep -qF "$tree/$h " "$out/$(dirname "$o")/.$(basename "$o").cmd" && n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "no caller object compiled $h"
done
echo "callers: ${#objs[@]} objects built ($nmod in modules, $(( ${#objs[@]} - nmod )) built-in), every header compiled, no warning from P2PDMA or in a caller ($nother elsewhere, ignored)"

# Our core: the members of drivers/pci/built-in.a that prepare-tree.sh
# laid in (drivers/pci/p2pdma.o, or the objects of drivers/pci/p2pdma/).
mapfile -t core < <(cd "$out" && ar t drivers/pci/built-in.a | grep -E '^drivers/pci/p2pdma[./]')
[ "${#core[@]}" -gt 0 ] || fail "no P2PDMA core object in drivers/pci/built-in.a"
core_defs=$(cd "$out" && nm -g --defined-only "${core[@]}" | awk 'NF == 3 { print $3 }' | sort -u)
pci_defs=$(cd "$out" && nm -g --defined-only drivers/pci/built-in.a | awk 'NF == 3 { print $3 }' | sort -u)

# --- 4. our modules, linked against a partial vmlinux.o ---------------------
mapfile -t mods < <(cat "$out/drivers/pci/modules.order" 2>/dev/null)
[ "${#mods[@]}" -gt 0 ] || fail "drivers/pci/ built no module (PCI_P2PMEM_BAR=m?)"
imports=$( { cd "$out" && nm -u "${mods[@]}" | awk 'NF == 2 { print $2 }'
	     grep -q '^CONFIG_MODVERSIONS=y' .config && echo module_layout; } |
	   grep -vx __this_module | sort -u)
outside=$(comm -23 <(echo "$imports") <(echo "$pci_defs"))
# Find an exporter for each import from outside drivers/pci/: a plain
# EXPORT_SYMBOL*(sym), a macro export of a prefix (EXPORT_SYMBOL(param_ops_##name)),
# or a file-scope macro invocation naming it (define_dev_printk_level(_dev_err, ...)).
# Prefer arch/x86 over generic code; never a 32-bit-only file.
exports=$(cd "$tree" && grep -rnoE --include='*.[cS]' --exclude='*_32.[cS]' \
	'EXPORT_SYMBOL[A-Z_]*\(\s*[A-Za-z0-9_]+\s*(##|[,)])' "${exporter_dirs[@]}" |
	sed -E 's/^([^:]+):[0-9]+:EXPORT_SYMBOL[A-Z_]*\(\s*([A-Za-z0-9_]+)\s*(##)?.*/\1 \2 \3/')
extra=()
for s in $outside; do
	f=$(echo "$exports" | awk -v s="$s" '$3 == "" && $2 == s { print $1 }' | sort | head -1)
	[ -n "$f" ] || f=$(echo "$exports" | awk -v s="$s" '$3 == "##" && index(s, $2) == 1 { print $1 }' |
		sort | head -1)
	[ -n "$f" ] || f=$(cd "$tree" && grep -rlE --include='*.c' --exclude='*_32.c' \
		"^[A-Za-z_][A-Za-z0-9_]*\(\s*$s\s*[,)]" "${exporter_dirs[@]}" | sort | head -1)
	[ -n "$f" ] || fail "no exporter of $s (imported by ${mods[*]}) under: ${exporter_dirs[*]}"
	extra+=("${f%.[cS]}.o")
done
mapfile -t extra < <(printf '%s\n' "${extra[@]}" | sort -u)
echo "== exporters of the modules' other imports: ${extra[*]}" >>"$blog"
kmake "${extra[@]}" >>"$blog" 2>&1 || fail "compiling the exporters ${extra[*]}"
# kbuild's vmlinux.a/vmlinux.o and .vmlinux.objs (CRCs) are made from these;
# the library archives only have to exist.
(
	cd "$out" || exit 1
	rm -f vmlinux.a vmlinux.o
	ar cDPrST vmlinux.a drivers/pci/built-in.a "${extra[@]}" &&
	for l in lib/lib.a arch/x86/lib/lib.a; do [ -e "$l" ] || ar cDPrST "$l"; done &&
	ld -m elf_x86_64 -z noexecstack -r -o vmlinux.o --whole-archive vmlinux.a --no-whole-archive
) >>"$blog" 2>&1 || fail "linking the partial vmlinux.o"
kos=("${mods[@]/%.o/.ko}")
echo "== modpost and final link of ${kos[*]}" >>"$blog"
kmake "${kos[@]}" >"$out/modpost.log" 2>&1
rc=$?
cat "$out/modpost.log" >>"$blog"
if [ "$rc" != 0 ] || grep -qE 'WARNING|ERROR' "$out/modpost.log"; then
	grep -E 'WARNING|ERROR' "$out/modpost.log"
	fail "modpost or the module link of ${kos[*]}"
fi
symvers=$out/Module.symvers
for ko in "${kos[@]}"; do
	if [ ! -f "$out/$ko" ] || [ "$out/$ko" -ot "$stamp" ]; then fail "$ko was not linked"; fi
	for s in $(nm -u "$out/$ko" | awk '{ print $2 }'); do
		awk -v s="$s" '$2 == s && $3 == "vmlinux" { f = 1 } END { exit !f }' "$symvers" ||
			fail "$ko imports $s, which no built-in object exports"
	done
done
# Everything our core exports is GPL-only.
ours=$(awk '$3 == "vmlinux" { print $2, $4 }' "$symvers" | sort |
	join - <(echo "$core_defs"))
[ -n "$ours" ] || fail "our core exports nothing"
nongpl=$(echo "$ours" | awk '$2 != "EXPORT_SYMBOL_GPL" { print $1 }')
[ -z "$nongpl" ] || fail "exported without _GPL: $(echo "$nongpl" | paste -sd' ')"
nimp=$(nm -u "${kos[@]/#/$out/}" | awk 'NF == 2' | sort -u -k2 | wc -l)
echo "callers: ${kos[*]##*/} linked, modpost clean: $nimp imports, all vmlinux exports (drivers/pci/ and ${#extra[@]} kernel objects)"

# --- the callers' P2PDMA symbols ----------------------------------------------
# Each symbol of our core (or named like the API) that a caller object
# imports must be defined by our core, and exported if the object is part
# of a module.
used=""
modused=""
for o in "${objs[@]}"; do
	ismod=$(grep -qw -- -DMODULE "$out/$(dirname "$o")/.$(basename "$o").cmd" && echo 1)
	for s in $(nm -u "$out/$o" | awk '{ print $2 }'); do
		echo "$core_defs" | grep -qx "$s" || [[ $s =~ ^($api_re) ]] || continue
		echo "$core_defs" | grep -qx "$s" || fail "$o uses $s, which our core does not define"
		used+="$s"$'\n'
		[ -n "$ismod" ] || continue
		awk -v s="$s" '$2 == s && $3 == "vmlinux" { f = 1 } END { exit !f }' "$symvers" ||
			fail "$o (part of a module) uses $s, which our core does not export"
		modused+="$s"$'\n'
	done
done
nused=$(printf '%s' "$used" | sort -u | grep -c .)
nmodused=$(printf '%s' "$modused" | sort -u | grep -c .)
echo "callers: the callers use $nused symbols of our core, all defined; the $nmodused used by modules are among its $(echo "$ours" | wc -l) exports, all EXPORT_SYMBOL_GPL"
echo "callers: done in $(( $(date +%s) - start )) s"
