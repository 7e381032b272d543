#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Write the files of each patch of the series for scripts/make-patch.sh.
# The series falls out of the files: each patch adds whole files of the
# project, one role at a time, in dependency order (STAGES below). Only
# these files of the tree are edited, structurally: drivers/pci/Makefile
# (build our directory, then the tests and p2pmem-bar), drivers/pci/Kconfig
# (source ours in place of the PCI_P2PDMA entry), our Kconfig, which
# grows by whole "config" blocks, the ioctl number table (one line for
# /dev/p2pmem's ioctl), the kernel parameters' list (one entry), the
# admin guide's index (one line for ours) and MAINTAINERS (the P2PDMA
# entry's file patterns). A project file that no stage names stops the
# series, so a new file cannot be left out silently.
#
# Usage: patch-stages.py TOP PRISTINE_DIR OUTDIR
# PRISTINE_DIR holds the tree's drivers/pci/{Kconfig,Makefile} as
# Kconfig.pristine and Makefile.pristine, its ioctl number table as
# ioctl-number.rst.pristine, Documentation/admin-guide/index.rst as
# admin-index.rst.pristine, the kernel parameters' list as
# kernel-parameters.txt.pristine, MAINTAINERS as MAINTAINERS.pristine
# and, under mm-patched/, the files that the kernel's mm patch
# (mm/hmm-p2p[-7.3].diff) changes, changed.
# Writes OUTDIR/<n>/<path in the kernel tree> for every file a stage adds
# or changes, OUTDIR/<n>/.name with the stage name, and OUTDIR/<n>/.remove
# with the paths a stage deletes.

import glob
import os
import re
import sys

top, pristine, outdir = sys.argv[1:4]
CORE = 'drivers/pci/p2pdma'
TESTS = f'{CORE}/tests'
UAPI = 'include/uapi/linux/p2pmem.h'
# The ioctl number table gets the line of /dev/p2pmem's ioctl with its
# header, after the last line of the number before it.
IOCTL_RST = 'Documentation/userspace-api/ioctl/ioctl-number.rst'
IOCTL_LINE = ('0xB9  00     uapi/linux/p2pmem.h                                       '
              'PCI P2PDMA dma-buf export (/dev/p2pmem)\n')
# The admin guide's index gets the operator's guide, before "perf-security"
# in its alphabetical toctree.
ADMIN_GUIDE = 'Documentation/admin-guide/p2pdma/index.rst'
ADMIN_GUIDE_FILES = sorted(glob.glob('Documentation/admin-guide/p2pdma/*.rst', root_dir=top))
ADMIN_INDEX = 'Documentation/admin-guide/index.rst'
# The kernel parameters' list gets pci_p2pdma.host_bridges= (registered
# in route.c, parsed in host-bridge-policy.c) in its alphabetical place,
# before pcie_aspm=, with the guides.
KPARAMS = 'Documentation/admin-guide/kernel-parameters.txt'
KPARAMS_ENTRY = '''\tpci_p2pdma.host_bridges=
\t\t\t[PCI] Allow or deny PCI peer-to-peer DMA through named
\t\t\thost bridges, over the built-in policy.
\t\t\tFormat: <rule>[,<rule>...], at most 16, each
\t\t\tallow:<sel> or deny:<sel>; the first rule that names
\t\t\ta host bridge decides for it. <sel> is
\t\t\t<domain>:<bus> (hex, e.g. 0000:80: the host bridge
\t\t\tof that root bus), <vendor>:<device> (four hex
\t\t\tdigits each, e.g. 8086:29c0: every host bridge
\t\t\tidentified by that ID) or all.
\t\t\tAlso /sys/module/pci_p2pdma/parameters/host_bridges.
\t\t\tSee Documentation/admin-guide/p2pdma/host-bridges.rst.

'''
# MAINTAINERS: the P2PDMA entry's file patterns, as the stages add files
# (each in its sorted place in the entry); 'build', which removes the old
# core, removes its pattern.
MAINTAINERS = 'MAINTAINERS'
MAINT_ENTRY = 'PCI PEER-TO-PEER DMA (P2PDMA)\n'
MAINT_OLD = 'drivers/pci/p2pdma.c'
MAINT_ADD = {
    'host-bridge': [f'{CORE}/'],
    'build': [],
    'dmabuf': ['Documentation/ABI/testing/dev-p2pmem', UAPI],
    'docs': ['Documentation/admin-guide/p2pdma/'],
    'p2pmem-bar': ['Documentation/ABI/testing/sysfs-bus-pci-drivers-p2pmem-bar',
                   'drivers/pci/p2pmem-bar.c'],
}

# The mm patch (mm/$KERNEL/hmm-p2p.diff): a diff against files of the
# tree, whose stage takes them as scripts/make-patch.sh patched them, from
# PRISTINE_DIR/mm-patched/. This name stands for it in the stage list.
MM_DIFF = 'mm/hmm-p2p.diff'


# The test modules of tests/, each a patch of its own after the KUnit
# suites; the KUnit patch has the rest of tests/.
TEST_IMPORTER = [f'{TESTS}/{f}' for f in ('edu.h', 'p2pdma_importer.h', 'p2pdma-importer.c')]
TEST_HMM = [f'{TESTS}/{f}' for f in ('hmm-p2p.h', 'hmm_p2p_test.h', 'hmm-p2p-owner.c',
                                     'hmm-p2p-mirror.c')]
BENCH = [f'{TESTS}/p2pdma-bench.c']
KUNIT_FILES = [f for f in sorted(glob.glob(f'{TESTS}/*', root_dir=top) +
                                 glob.glob(f'{TESTS}/.kunitconfig', root_dir=top))
               if f not in TEST_IMPORTER + TEST_HMM + BENCH and
               not f.endswith('p2pmem-bar-kunit.h')]
# tests/Makefile has a line per object, "obj-$(CONFIG_<symbol>) += ...":
# each patch has the lines of the symbols the series has by then.
TESTS_MAKEFILE = f'{TESTS}/Makefile'

# name, project files (tree path = project path), Kconfig symbols,
# Makefile lines, removals.
STAGES = [
    ('hmm-p2p', [MM_DIFF], [], [], []),
    ('host-bridge', [f'{CORE}/p2pdma.h', f'{CORE}/host-bridge.c'], [], [], []),
    ('host-bridge-policy', [f'{CORE}/host-bridge-policy.c'], [], [], []),
    ('route', [f'{CORE}/route.c'], [], [], []),
    ('pool', [f'{CORE}/pool.c', f'{CORE}/clear.c'], [], [], []),
    ('provider', [f'{CORE}/provider.c'], [], [], []),
    ('sysfs', [f'{CORE}/mmap.c', f'{CORE}/sysfs.c'], [], [], []),
    ('configfs', [f'{CORE}/configfs.c'], [], [], []),
    ('debugfs', [f'{CORE}/debugfs.c'], [], [], []),
    ('build', [f'{CORE}/Makefile', 'include/linux/pci-p2pdma.h'],
     ['PCI_P2PDMA'], ['switch'], ['drivers/pci/p2pdma.c']),
    ('dmabuf', [f'{CORE}/dmabuf.c', f'{CORE}/dmabuf-revoke.c', f'{CORE}/chardev.c', UAPI,
                'Documentation/ABI/testing/dev-p2pmem'],
     ['PCI_P2PDMA_DMABUF'], [], []),
    ('kunit', KUNIT_FILES,
     ['PCI_P2PDMA_KUNIT_TEST', 'PCI_P2PDMA_BLACKBOX_KUNIT_TEST'],
     ['obj-$(CONFIG_PCI_P2PDMA)\t+= p2pdma/tests/'], []),
    ('test-importer', TEST_IMPORTER, ['PCI_P2PDMA_TEST_IMPORTER'], [], []),
    ('test-hmm', TEST_HMM, ['PCI_P2PDMA_TEST_HMM'], [], []),
    ('bench', BENCH, ['PCI_P2PDMA_BENCH'], [], []),
    ('docs', ['Documentation/driver-api/pci/p2pdma.rst'] + ADMIN_GUIDE_FILES, [], [], []),
    ('p2pmem-bar', ['drivers/pci/p2pmem-bar.c', f'{TESTS}/p2pmem-bar-kunit.h',
                    'Documentation/ABI/testing/sysfs-bus-pci-drivers-p2pmem-bar'],
     ['PCI_P2PMEM_BAR'], ['obj-$(CONFIG_PCI_P2PMEM_BAR)\t+= p2pmem-bar.o'], []),
]


def read(path):
    with open(path) as f:
        return f.read()


def tree_path(path):
    return path


# Every file of the core and of its tests/ must be in some stage.
named = {f for stage in STAGES for f in stage[1]} | {f'{CORE}/Kconfig', TESTS}
present = set(glob.glob(f'{CORE}/*', root_dir=top) + glob.glob(f'{TESTS}/*', root_dir=top) +
              glob.glob(f'{TESTS}/.kunitconfig', root_dir=top))
if present - named:
    sys.exit('patch-stages: in no stage: ' + ' '.join(sorted(present - named)))

# Our Kconfig: a header, then one block per "config" entry.
kconfig = read(os.path.join(top, CORE, 'Kconfig'))
parts = re.split(r'(?m)^(?=config )', kconfig)
header, blocks = parts[0], {}
for b in parts[1:]:
    blocks[b.split()[1]] = b
wanted = {s for stage in STAGES for s in stage[2]}
if set(blocks) != wanted:
    sys.exit(f'patch-stages: Kconfig symbols {sorted(blocks)} differ from the stages\' {sorted(wanted)}')

# The tree's PCI_P2PDMA entry, replaced by a source of ours: from its
# "config" line to the next top-level keyword.
pci_kconfig, out, skip = read(os.path.join(pristine, 'Kconfig.pristine')), [], False
for line in pci_kconfig.splitlines(keepends=True):
    if line == 'config PCI_P2PDMA\n':
        skip = True
        out.append(f'source "{CORE}/Kconfig"\n')
        continue
    if skip and re.match(r'(config|menuconfig|endmenu|source|if|endif)\b', line):
        skip = False
    if not skip:
        out.append(line)
pci_kconfig_ours = ''.join(out)
if pci_kconfig_ours.count(f'source "{CORE}/Kconfig"') != 1:
    sys.exit('patch-stages: drivers/pci/Kconfig has no single PCI_P2PDMA entry')

makefile = read(os.path.join(pristine, 'Makefile.pristine'))
maint = read(os.path.join(pristine, 'MAINTAINERS.pristine')).splitlines(keepends=True)
if maint.count(MAINT_ENTRY) != 1 or maint.count(f'F:\t{MAINT_OLD}\n') != 1:
    sys.exit(f'patch-stages: {MAINTAINERS}: no single P2PDMA entry with F:\t{MAINT_OLD}')


def maint_add(lines, pats, drop=None):
    """The P2PDMA entry's F: lines with pats added (and drop removed), sorted."""
    i = lines.index(MAINT_ENTRY) + 1
    j = i
    while j < len(lines) and lines[j].strip():
        j += 1
    entry = [line for line in lines[i:j] if line != f'F:\t{drop}\n']
    files = sorted([line for line in entry if line.startswith('F:\t')] +
                   [f'F:\t{p}\n' for p in pats])
    first = next(k for k, line in enumerate(entry) if line.startswith('F:\t'))
    rest = [line for line in entry if not line.startswith('F:\t')]
    return lines[:i] + rest[:first] + files + rest[first:] + lines[j:]
symbols = []
done = set()
for n, (name, files, syms, mk_lines, removed) in enumerate(STAGES, 1):
    d = os.path.join(outdir, str(n))
    os.makedirs(d)

    def put(path, text):
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'w') as f:
            f.write(text)

    for f in files:
        if f == MM_DIFF:
            mm = os.path.join(pristine, 'mm-patched')
            for root, _, names in os.walk(mm):
                for n in names:
                    put(os.path.relpath(os.path.join(root, n), mm),
                        read(os.path.join(root, n)))
            continue
        put(tree_path(f), read(os.path.join(top, f)))
    if syms:
        symbols += syms
        put(f'{CORE}/Kconfig',
            (header + ''.join(b for s, b in blocks.items() if s in symbols)).rstrip('\n') + '\n')
    if 'PCI_P2PDMA' in syms:
        put('drivers/pci/Kconfig', pci_kconfig_ours)
    for line in mk_lines:
        if line == 'switch':
            new = re.sub(r'(?m)^(obj-\$\(CONFIG_PCI_P2PDMA\)\s*\+= )p2pdma\.o$',
                         r'\1p2pdma/', makefile)
            if new == makefile:
                sys.exit('patch-stages: drivers/pci/Makefile does not build p2pdma.o')
            makefile = new
        else:
            makefile += line + '\n'
    if mk_lines:
        put('drivers/pci/Makefile', makefile)
    if name in MAINT_ADD:
        maint = maint_add(maint, MAINT_ADD[name], MAINT_OLD if name == 'build' else None)
        put(MAINTAINERS, ''.join(maint))
    if UAPI in files:
        lines = read(os.path.join(pristine, 'ioctl-number.rst.pristine')).splitlines(keepends=True)
        at = max((i for i, l in enumerate(lines) if l.startswith('0xB8 ')), default=None)
        if at is None or any(l.startswith('0xB9 ') for l in lines):
            sys.exit(f'patch-stages: {IOCTL_RST}: no 0xB8 line, or 0xB9 taken')
        lines.insert(at + 1, IOCTL_LINE)
        put(IOCTL_RST, ''.join(lines))
    if ADMIN_GUIDE in files:
        lines = read(os.path.join(pristine, 'kernel-parameters.txt.pristine')).splitlines(keepends=True)
        at = [i for i, l in enumerate(lines) if l.startswith('\tpcie_aspm=')]
        if len(at) != 1 or any('pci_p2pdma.' in l for l in lines):
            sys.exit(f'patch-stages: {KPARAMS}: no single pcie_aspm= entry, or pci_p2pdma. there')
        lines.insert(at[0], KPARAMS_ENTRY)
        put(KPARAMS, ''.join(lines))
    if ADMIN_GUIDE in files:
        lines = read(os.path.join(pristine, 'admin-index.rst.pristine')).splitlines(keepends=True)
        at = [i for i, l in enumerate(lines) if l == '   perf-security\n']
        if len(at) != 1 or any(l.startswith('   p2pdma') for l in lines):
            sys.exit(f'patch-stages: {ADMIN_INDEX}: no single perf-security entry, or p2pdma there')
        lines.insert(at[0], '   p2pdma/index\n')
        put(ADMIN_INDEX, ''.join(lines))
    if TESTS_MAKEFILE in files or (syms and TESTS_MAKEFILE in done):
        lines = [line for line in read(os.path.join(top, TESTS_MAKEFILE)).splitlines(keepends=True)
                 if not (m := re.match(r'obj-\$\(CONFIG_(\w+)\)', line)) or m.group(1) in symbols]
        put(TESTS_MAKEFILE, ''.join(lines))
    done |= set(files)
    put('.name', name + '\n')
    put('.remove', ''.join(r + '\n' for r in removed))
