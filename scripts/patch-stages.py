#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Write the files of each patch of the series, as they stand after that
# patch, for scripts/make-patch.sh. The last stage is the project's files
# unchanged; earlier stages are carved out of them by the edits below, each
# of which must match exactly once, so a change to p2pdma.c that moves an
# anchor stops the series here instead of producing a patch that does not
# build.
#
# Usage: patch-stages.py TOP PRISTINE_PCI_KCONFIG OUTDIR
# With kunit/Makefile, the pristine drivers/pci/Makefile must sit next to
# PRISTINE_PCI_KCONFIG as Makefile.pristine.
# Writes OUTDIR/<n>/<path in the kernel tree> for every file a stage
# changes, and OUTDIR/<n>/.name with the stage name.

import os
import re
import sys

top, pristine_kconfig, outdir = sys.argv[1:4]


def read(path):
    with open(os.path.join(top, path)) as f:
        return f.read()


class Carve:
    """Text edits that each have to match exactly once."""

    def __init__(self, text, what):
        self.text = text
        self.what = what

    def _once(self, old):
        n = self.text.count(old)
        if n != 1:
            sys.exit(f"patch-stages: {self.what}: anchor found {n} times:\n{old}")

    def replace(self, old, new=''):
        self._once(old)
        self.text = self.text.replace(old, new)
        return self

    def cut_from_to(self, start, end, include_end=False):
        """Remove from start (inclusive) up to end (exclusive unless told)."""
        self._once(start)
        self._once(end)
        i, j = self.text.index(start), self.text.index(end)
        if j <= i:
            sys.exit(f"patch-stages: {self.what}: '{end[:40]}' before '{start[:40]}'")
        if include_end:
            j += len(end)
        self.text = self.text[:i] + self.text[j:]
        return self


BANNER = '/* ------------------------------------------------------------------ */\n'

# --- drivers/pci/p2pdma.c ------------------------------------------------

full_c = read('drivers/pci/p2pdma.c')

# Anything after the debugfs section (KUnit hooks) belongs to the tests patch.
debugfs_end = '#endif /* CONFIG_DEBUG_FS */\n'
if full_c.count(debugfs_end) != 1:
    sys.exit('patch-stages: p2pdma.c: debugfs section end not found once')
c_no_tests = full_c[:full_c.index(debugfs_end) + len(debugfs_end)]
c_tail = full_c[len(c_no_tests):]
# KUnit hooks inside the code go with the tests patch as well.
c_no_tests, n_hooks = re.subn(r'#ifdef CONFIG_PCI_P2PDMA_KUNIT_TEST\n.*?#endif[^\n]*\n',
                              '', c_no_tests, flags=re.S)
c_no_tests = re.sub(r'\n\n\n+', '\n\n', c_no_tests)
has_c_tests = n_hooks > 0 or c_tail.strip() != ''

# Without the debugfs file.
c = Carve(c_no_tests, 'p2pdma.c (debugfs)')
c.cut_from_to(BANNER + '/* debugfs: /sys/kernel/debug/p2pdma/routes', debugfs_end,
              include_end=True)
c.replace('#include <linux/debugfs.h>\n')
c.replace('#include <linux/seq_file.h>\n')
# The map type names only serve debugfs.
c.cut_from_to('static __maybe_unused const char *p2p_map_type_name(',
              '/* Describe a refused route in @buf;')
c_no_debugfs = c.text.rstrip('\n') + '\n'

# Without the userspace interface (sysfs p2pmem group and its mmap).
c = Carve(c_no_debugfs, 'p2pdma.c (sysfs)')
c.cut_from_to(BANNER + '/* sysfs: /sys/bus/pci/devices/.../p2pmem/',
              BANNER + '/* configfs helpers')
c.replace('\tbool sysfs_added;\t/* the p2pmem attribute group exists */\n')
c.replace('static const struct attribute_group p2pmem_group;\n\n')
c.replace(' * runs before any range is unmapped): stop handing out memory, and revoke\n'
          ' * userspace mappings by removing the sysfs group, which makes kernfs unmap\n'
          ' * every mmap of "allocate". In-kernel users are then waited for by\n'
          ' * memunmap_pages() through the pgmap references they hold.\n',
          ' * runs before any range is unmapped): stop handing out memory. In-kernel\n'
          ' * users are then waited for by memunmap_pages() through the pgmap\n'
          ' * references they hold.\n')
c.replace('\tif (p2p->sysfs_added) {\n'
          '\t\tsysfs_remove_group(&pdev->dev.kobj, &p2pmem_group);\n'
          '\t\tp2p->sysfs_added = false;\n'
          '\t}\n')
c.replace('\tret = sysfs_create_group(&pdev->dev.kobj, &p2pmem_group);\n'
          '\tif (ret)\n'
          '\t\tpci_warn(pdev, "P2PDMA: no p2pmem sysfs files (%d)\\n", ret);\n'
          '\telse\n'
          '\t\tp2p->sysfs_added = true;\n')
c.cut_from_to('/* pgmap callback: the last reference to a page mapped to userspace went. */',
              'struct p2p_span {')
c.replace('\tregion->pgmap.ops = &p2p_pgmap_ops;\n')
c.replace(' * adds it to the provider\'s pool, where pci_alloc_p2pmem() and the sysfs\n'
          ' * "allocate" file find it. The first call also creates the p2pmem sysfs\n'
          ' * group (Documentation/ABI/testing/sysfs-bus-pci). A device may register\n',
          ' * adds it to the provider\'s pool, where pci_alloc_p2pmem() finds it.\n'
          ' * A device may register\n')
c.replace(' * Everything is device-managed: when the driver unbinds, userspace\n'
          ' * mappings are revoked (later accesses get SIGBUS), the unbind waits for\n'
          ' * in-kernel allocations to be freed, and the pages are removed.\n',
          ' * Everything is device-managed: when the driver unbinds, the unbind\n'
          ' * waits for in-kernel allocations to be freed, and the pages are removed.\n')
c.replace('#include <linux/sysfs.h>\n')
c.replace('#include <linux/pagemap.h>\n')
c_no_sysfs = c.text

# Without the host bridge policy: only routes below a common upstream
# bridge, everything through the root complex is refused.
c = Carve(c_no_sysfs, 'p2pdma.c (host bridges)')
c.cut_from_to('/*\n * Intel root complexes known to forward peer-to-peer requests between',
              '/*\n * Does @pdev redirect or block peer requests')
c.cut_from_to('/*\n * Extra distance for each host bridge a route goes through',
              BANNER + '/* Route:')
c.replace('\tP2P_HOST_BRIDGES_DIFFER,\t/* host bridge routes P2P only within itself */\n')
c.replace('\tcase P2P_HOST_BRIDGES_DIFFER:\n'
          '\t\tscnprintf(buf + n, len - n, "host bridge %s routes P2P only within itself",\n'
          '\t\t\t  dev_name(&r.host_bridge->dev));\n'
          '\t\tbreak;\n')
c.replace(' * without using any link, whatever its ACS settings. A route through the\n'
          ' * root complex climbs all the way from both ends (one more link each, into\n'
          ' * the host bridge) and adds P2P_HOST_BRIDGE_COST for each host bridge it\n'
          ' * uses.\n',
          ' * without using any link, whatever its ACS settings. A route through the\n'
          ' * root complex is refused: no host bridge is known to forward peer-to-peer\n'
          ' * requests.\n')
c.replace('\tstruct pci_host_bridge *hb_p, *hb_c;\n')
c.replace('\thb_p = pci_find_host_bridge(provider->bus);\n'
          '\thb_c = pci_find_host_bridge(client->bus);\n'
          '\tr->distance = depth_p + depth_c + 2 +\n'
          '\t\t      (hb_p == hb_c ? 1 : 2) * P2P_HOST_BRIDGE_COST;\n'
          '\tr->why = p2p_host_bridge_verdict(hb_p, hb_c, &r->host_bridge);\n'
          '\tr->map = r->why == P2P_REACHABLE ? PCI_P2PDMA_MAP_THRU_HOST_BRIDGE :\n'
          '\t\t\t\t\t   PCI_P2PDMA_MAP_NOT_SUPPORTED;\n',
          '\tr->host_bridge = pci_find_host_bridge(provider->bus);\n'
          '\tr->why = P2P_HOST_BRIDGE_UNKNOWN;\n'
          '\tr->map = PCI_P2PDMA_MAP_NOT_SUPPORTED;\n')
c.replace(' * route through the root complex adds 1024 per host bridge it uses), or\n',
          ' * route through the root complex is always refused for now), or\n')
c.replace(' *  - Forwarding between root ports, or between host bridges, is optional\n'
          ' *    for a root complex (sec 1.3.1), so a path through the host bridge is\n'
          ' *    used only where the host bridge is known to do it, with a normal DMA\n'
          ' *    mapping (CPU physical address or IOVA).\n',
          ' *  - Forwarding between root ports, or between host bridges, is optional\n'
          ' *    for a root complex (sec 1.3.1); such paths are not used yet.\n')
c_core = c.text

# --- Kconfig ---------------------------------------------------------------


def kconfig_with(entry_text):
    """drivers/pci/Kconfig with its PCI_P2PDMA entry replaced by ours."""
    with open(pristine_kconfig) as f:
        lines = f.read().split('\n')
    out, skip, done = [], False, False
    for line in lines:
        if line == 'config PCI_P2PDMA':
            skip, done = True, True
            out.extend(entry_text.rstrip('\n').split('\n'))
            out.append('')
            continue
        if skip and re.match(r'^(config|menuconfig|endmenu|source|if|endif|comment|menu)\b', line):
            skip = False
        if not skip:
            out.append(line)
    if not done:
        sys.exit('patch-stages: no PCI_P2PDMA entry in drivers/pci/Kconfig')
    return '\n'.join(out)


ours = read('Kconfig')
entries = ours[ours.index('config PCI_P2PDMA'):]  # drop our file's header
m = re.search(r'^(config|menuconfig) (?!PCI_P2PDMA\n)', entries, re.M)
kconfig_core = entries[:m.start()] if m else entries
kconfig_tests = entries

# --- stages ------------------------------------------------------------------

header = read('include/linux/pci-p2pdma.h')
stages = [
    ('core', {
        'drivers/pci/p2pdma.c': c_core,
        'include/linux/pci-p2pdma.h': header,
        'drivers/pci/Kconfig': kconfig_with(kconfig_core),
    }),
    ('topology', {'drivers/pci/p2pdma.c': c_no_sysfs}),
    ('userspace', {'drivers/pci/p2pdma.c': c_no_debugfs}),
    ('debugfs', {'drivers/pci/p2pdma.c': c_no_tests}),
]

tests = {}
if has_c_tests:
    tests['drivers/pci/p2pdma.c'] = full_c
if kconfig_tests != kconfig_core:
    tests['drivers/pci/Kconfig'] = kconfig_with(kconfig_tests)
kunit_dir = os.path.join(top, 'kunit')
if os.path.isdir(kunit_dir):
    for name in sorted(os.listdir(kunit_dir)):
        if name.endswith(('.c', '.h')) or name == 'Makefile':
            tests['drivers/pci/p2pdma-kunit/' + name] = read('kunit/' + name)
# The black-box suite is an object of its own (kunit/Makefile): make
# drivers/pci/Makefile descend into its directory, as prepare-tree.sh does.
if 'drivers/pci/p2pdma-kunit/Makefile' in tests:
    pristine_makefile = os.path.join(os.path.dirname(pristine_kconfig),
                                     'Makefile.pristine')
    with open(pristine_makefile) as f:
        tests['drivers/pci/Makefile'] = (
            f.read() +
            'obj-$(CONFIG_PCI_P2PDMA_BLACKBOX_KUNIT_TEST)\t+= p2pdma-kunit/\n')
if tests:
    stages.append(('tests', tests))

stages.append(('docs', {
    'Documentation/driver-api/pci/p2pdma.rst':
        read('Documentation/driver-api/pci/p2pdma.rst'),
}))

for n, (name, files) in enumerate(stages, 1):
    d = os.path.join(outdir, str(n))
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), 'w') as f:
            f.write(text)
    with open(os.path.join(d, '.name'), 'w') as f:
        f.write(name + '\n')
