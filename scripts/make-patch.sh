#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make patch': turn the project into a git format-patch series against the
# pristine Linux source of $KERNEL (scripts/kernel.sh), in
# build/patches/$KERNEL/, then prove that it applies with git am to a fresh
# pristine tree, that drivers/pci/ builds after every patch and that the
# tree's own checkpatch.pl --strict passes every patch. On 7.3 that is the
# series to send; on 6.12 its backport (our files with backport/6.12.diff,
# the commit messages too).
#
#   build/patch-base-K   git repo of the unpacked tarball (made once, reused)
#   build/patch-stages-K each patch's files, from scripts/patch-stages.py
#   build/patches/K      the series, after its cover letter (0000, from
#                        kcover: scripts/cover-letter[-7.3].txt); the
#                        messages are scripts/patch-messages.txt
#   build/patch-check-K  fresh worktree of the pristine commit, for git am
#   build/patch-out-K    its build directory (allnoconfig + config/base.config
#                        + config/<CHECK_FLAVOUR>.config; drivers/pci/ only)
#
# Usage: scripts/make-patch.sh [--no-check]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
tarball=$ktarball
flavour=${CHECK_FLAVOUR:-debug}
base=$top/build/patch-base-$KERNEL
stages=$top/build/patch-stages-$KERNEL
series=$top/build/patches/$KERNEL
check=$top/build/patch-check-$KERNEL
out=$top/build/patch-out-$KERNEL
author=${PATCH_AUTHOR:-$(git -C "$top" config user.name) <$(git -C "$top" config user.email)>}
export GIT_AUTHOR_DATE=${GIT_AUTHOR_DATE:-$(git -C "$top" log -1 --format=%aD)}
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
gitb() { git -C "$base" -c user.name=p2pdma -c user.email=p2pdma@localhost "$@"; }

# --- the pristine base -------------------------------------------------------
if ! gitb rev-parse -q --verify refs/heads/base >/dev/null 2>&1; then
	[ -r "$tarball" ] || { echo "make-patch: $tarball missing (run 'make deps')" >&2; exit 1; }
	echo "make-patch: unpacking $(basename "$tarball") into ${base#"$top"/} (once)"
	rm -rf "$base" "$base.tmp"
	mkdir -p "$base.tmp"
	tar -xJf "$tarball" -C "$base.tmp" --strip-components=1
	git -C "$base.tmp" init -q -b base .
	# -f: the Debian tree's .gitignore ignores its own top level.
	git -C "$base.tmp" add -A -f
	git -C "$base.tmp" -c user.name=p2pdma -c user.email=p2pdma@localhost \
		commit -q -m "Linux $KERNEL (Debian linux-source-$KERNEL)"
	mv "$base.tmp" "$base"
fi

# --- each patch's files -------------------------------------------------------
rm -rf "$stages"
mkdir -p "$stages"
gitb show base:drivers/pci/Kconfig >"$stages/Kconfig.pristine"
gitb show base:drivers/pci/Makefile >"$stages/Makefile.pristine"
gitb show base:MAINTAINERS >"$stages/MAINTAINERS.pristine"
gitb show base:Documentation/userspace-api/ioctl/ioctl-number.rst >"$stages/ioctl-number.rst.pristine"
gitb show base:Documentation/admin-guide/index.rst >"$stages/admin-index.rst.pristine"
gitb show base:Documentation/admin-guide/kernel-parameters.txt >"$stages/kernel-parameters.txt.pristine"
# The mm patch's files (kmmdiff: mm/$KERNEL/hmm-p2p.diff), patched from the
# base's own.
mkdir -p "$stages/mm-patched"
sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$kmmdiff" | while read -r f; do
	mkdir -p "$stages/mm-patched/$(dirname "$f")"
	gitb show "base:$f" >"$stages/mm-patched/$f"
done
patch -s -p1 -d "$stages/mm-patched" <"$kmmdiff"
# Our files as this kernel gets them: a copy with its backport applied.
src=$top
if [ -n "$kbackport" ]; then
	src=$stages/src
	rsync -a --exclude=/build --exclude=/.git "$top/" "$src/"
	patch -s -p1 -d "$src" --no-backup-if-mismatch -r - <"$kbackport" ||
		{ echo "make-patch: ${kbackport#"$top"/} does not apply to our files" >&2; exit 1; }
fi
python3 "$top/scripts/patch-stages.py" "$src" "$stages" "$stages"

# Subject and body of each patch, by stage name: scripts/patch-messages.txt
# of our files as this kernel gets them.
message() {
	awk -v want="$1" '/^== / { on = ($2 == want); seen += on; next }
		on { print } END { exit !seen }' "$src/scripts/patch-messages.txt" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' || {
		echo "make-patch: no message for stage $1" >&2
		exit 1
	}
	printf '\nSigned-off-by: %s\n' "$author"
}

# --- commits, built without a checkout --------------------------------------
export GIT_INDEX_FILE=$stages/index
rm -f "$GIT_INDEX_FILE"
gitb read-tree base
parent=$(gitb rev-parse base)
author_name=${author% <*}
author_email=${author##*<}
author_email=${author_email%>*}
for ((dir = 1; ; dir++)); do
	[ -d "$stages/$dir" ] || break
	name=$(cat "$stages/$dir/.name")
	while IFS= read -r -d '' f; do
		path=${f#"$stages/$dir/"}
		blob=$(gitb hash-object -w "$f")
		gitb update-index --add --cacheinfo "100644,$blob,$path"
	done < <(find "$stages/$dir" -type f ! -name .name ! -name .remove -print0)
	while IFS= read -r path; do
		gitb update-index --force-remove "$path"
	done < "$stages/$dir/.remove"
	tree_id=$(gitb write-tree)
	parent=$(message "$name" | GIT_AUTHOR_NAME=$author_name \
		GIT_AUTHOR_EMAIL=$author_email GIT_COMMITTER_NAME=$author_name \
		GIT_COMMITTER_EMAIL=$author_email \
		git -C "$base" commit-tree "$tree_id" -p "$parent")
done
unset GIT_INDEX_FILE
gitb update-ref refs/heads/p2pdma "$parent"

rm -rf "$series"
gitb format-patch -q -B --cover-letter -o "$series" base..p2pdma >/dev/null
# The cover letter: subject and text from scripts/cover-letter.txt, the
# shortlog and diffstat git wrote below them (they cannot drift).
python3 - "$series/0000-cover-letter.patch" "$kcover" <<'PY'
import sys
path, tmpl = sys.argv[1:]
subject, _, blurb = open(tmpl).read().partition('\n\n')
text = open(path).read()
for old, new in (('*** SUBJECT HERE ***', subject.strip()), ('*** BLURB HERE ***', blurb.strip())):
    if old not in text:
        sys.exit(f'make-patch: no "{old}" in {path}')
    text = text.replace(old, new)
open(path, 'w').write(text)
PY
echo "make-patch: $(find "$series" -name '*.patch' ! -name 0000-cover-letter.patch | wc -l) patches and a cover letter in ${series#"$top"/}:"
for p in "$series"/*.patch; do
	echo "  $(basename "$p")"
done

[ "${1:-}" = --no-check ] && exit 0

# --- apply to a fresh pristine tree and build after each patch --------------
echo "make-patch: checking the series on a fresh pristine tree"
gitb worktree remove --force "$check" >/dev/null 2>&1 || rm -rf "$check"
gitb worktree prune
gitb worktree add -q --detach "$check" base
mkdir -p "$out"
# The benchmark too, which no test kernel builds (it binds every ivshmem).
echo 'CONFIG_PCI_P2PDMA_BENCH=y' >"$out/bench.config"
mapfile -t frags < <(kfrags base "$flavour")
frags+=("$out/bench.config")
for p in "$series"/*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
	start=$(date +%s)
	git -C "$check" -c user.name=p2pdma -c user.email=p2pdma@localhost am -q "$p" || {
		echo "make-patch: FAIL: $(basename "$p") does not apply" >&2
		git -C "$check" am --abort || true
		exit 1
	}
	cat "${frags[@]}" >"$out/fragments.config"
	make -s -C "$check" O="$out" KCONFIG_ALLCONFIG="$out/fragments.config" allnoconfig
	grep -qx 'CONFIG_PCI_P2PDMA=y' "$out/.config" || {
		echo "make-patch: FAIL: CONFIG_PCI_P2PDMA not set after $(basename "$p")" >&2
		exit 1
	}
	# The mm patch's own file too, once there (the configuration must
	# have HMM mirroring for it to be built).
	targets=(drivers/pci/)
	if git -C "$check" diff --quiet base -- mm/hmm.c; then
		:
	elif grep -qx 'CONFIG_HMM_MIRROR=y' "$out/.config"; then
		targets+=(mm/hmm.o)
	else
		echo "make-patch: FAIL: CONFIG_HMM_MIRROR not set: mm/hmm.c not built after $(basename "$p")" >&2
		exit 1
	fi
	if ! make -s -C "$check" O="$out" -j"$(nproc)" "${targets[@]}" >"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		echo "make-patch: FAIL: ${targets[*]} does not build after $(basename "$p")" >&2
		exit 1
	fi
	if [ -f "$check/drivers/pci/p2pmem-bar.c" ] && [ ! -f "$out/drivers/pci/p2pmem-bar.o" ]; then
		echo "make-patch: FAIL: p2pmem-bar.c not built after $(basename "$p")" >&2
		exit 1
	fi
	if [ -f "$check/drivers/pci/p2pdma/Makefile" ] && [ ! -f "$out/drivers/pci/p2pdma/built-in.a" ]; then
		echo "make-patch: FAIL: drivers/pci/p2pdma/ not built after $(basename "$p")" >&2
		exit 1
	fi
	for c in "$check"/drivers/pci/p2pdma/tests/*.c; do
		[ -f "$c" ] || continue
		c=${c#"$check"/}
		[ -f "$out/${c%.c}.o" ] || {
			echo "make-patch: FAIL: $c not built after $(basename "$p")" >&2
			exit 1
		}
	done
	if grep -E '(p2pdma/[^: ]+\.[ch]|p2pdma/tests/[^: ]+\.[ch]|p2pmem-bar\.c|pci-p2pdma\.h):[0-9]+:[0-9]+: (warning|error)' "$out/build.log" >&2; then
		echo "make-patch: FAIL: warnings in our files after $(basename "$p")" >&2
		exit 1
	fi
	# The tree's own checkpatch, as a maintainer runs it on the patch.
	# FILE_PATH_CHANGES asks of every patch that adds a file whether
	# MAINTAINERS needs updating: the series adds the P2PDMA entry's
	# patterns with the first file each covers. Its SPDX check runs
	# scripts/spdxcheck.py with the first python3 on PATH: Debian's, which
	# has python3-ply (make deps), not another one a user put first.
	if ! (cd "$check" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --quiet --show-types \
		--ignore FILE_PATH_CHANGES "$p") >"$out/checkpatch.log" 2>&1; then
		cat "$out/checkpatch.log" >&2
		echo "make-patch: FAIL: checkpatch.pl --strict on $(basename "$p")" >&2
		exit 1
	fi
	echo "  $(basename "$p"): applies, drivers/pci/ builds, checkpatch --strict clean ($(( $(date +%s) - start )) s)"
done
echo "make-patch: series OK"
