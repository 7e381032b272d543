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

# Without the debugfs file (the versioned routes file) and what only it
# uses: the map type names.
c = Carve(c_no_tests, 'p2pdma.c (debugfs)')
c.cut_from_to(BANNER + '/* debugfs: /sys/kernel/debug/p2pdma/routes', debugfs_end,
              include_end=True)
c.replace('#include <linux/debugfs.h>\n')
c.replace('#include <linux/seq_file.h>\n')
c.cut_from_to('static __maybe_unused const char *p2p_map_type_name(',
              '/*\n * Explain the verdict @r')
c_no_debugfs = c.text.rstrip('\n') + '\n'

# Without the userspace interface (sysfs p2pmem group and its mmap).
c = Carve(c_no_debugfs, 'p2pdma.c (sysfs)')
c.cut_from_to(BANNER + '/* sysfs: /sys/bus/pci/devices/.../p2pmem/',
              BANNER + '/* configfs helpers')
c.replace(' * goes into a genalloc pool from which orchestrators and userspace allocate.\n',
          ' * goes into a genalloc pool from which orchestrators allocate.\n')
c.replace(' * Lifetime: everything a provider registers is device-managed. Each\n'
          ' * allocation, and each page mapped to userspace, holds a reference on the\n'
          ' * dev_pagemap of its range, so unbinding the provider first revokes the\n'
          ' * userspace mappings and then waits until every user has let go.\n',
          ' * Lifetime: everything a provider registers is device-managed. Each\n'
          ' * allocation holds a reference on the dev_pagemap of its range, so\n'
          ' * unbinding the provider waits until every user has let go.\n')
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
          ' * group (Documentation/ABI/testing/sysfs-bus-pci). A device may register\n'
          ' * several ranges. The memory is not offered to other drivers until the\n'
          ' * provider calls pci_p2pmem_publish().\n',
          ' * adds it to the provider\'s pool, where pci_alloc_p2pmem() finds it. A\n'
          ' * device may register several ranges. The memory is not offered to other\n'
          ' * drivers until the provider calls pci_p2pmem_publish().\n')
c.replace(' * Everything is device-managed: when the driver unbinds, userspace\n'
          ' * mappings are revoked (later accesses get SIGBUS), the unbind waits for\n'
          ' * in-kernel allocations to be freed, and the pages are removed.\n',
          ' * Everything is device-managed: when the driver unbinds, the unbind\n'
          ' * waits for in-kernel allocations to be freed, and the pages are removed.\n')
c.replace(' * physical range cannot be given struct pages). Nothing stays registered\n'
          ' * after a failure, but the p2pmem sysfs group created by a first call\n'
          ' * remains.\n',
          ' * physical range cannot be given struct pages). Nothing stays registered\n'
          ' * after a failure.\n')
c.replace(' * pci_has_p2pmem() reports; the sysfs file p2pmem/published shows the\n'
          ' * state. Withdrawing does not affect memory already allocated.\n',
          ' * pci_has_p2pmem() reports. Withdrawing does not affect memory already\n'
          ' * allocated.\n')
for inc in ('file', 'pagemap', 'sizes', 'sysfs', 'task_work'):
    c.replace(f'#include <linux/{inc}.h>\n')
c_no_sysfs = c.text

# Without routes through host bridges, and so without the built-in host
# bridge table, the CPU rule and the pci_p2pdma.host_bridges override (its
# moduleparam, seqlock, DENIED refusal, override flag and cache flush):
# only routes below a common upstream bridge, everything through the root
# complex is refused.
c = Carve(c_no_sysfs, 'p2pdma.c (host bridges)')
# From the built-in table through the policy section to
# p2p_host_bridge_verdict(): all of it host bridge knowledge.
c.cut_from_to('/*\n * Intel root complexes known to forward peer-to-peer requests between',
              '/*\n * Does @pdev redirect or block peer requests')
c.cut_from_to('/*\n * Extra distance for each host bridge a route goes through',
              BANNER + '/* Route:')
c.cut_from_to('/*\n * Drop every cached verdict of every provider, after the host bridge',
              '/*\n * The route from @provider to @client, or to the closest')
c.replace('#include <linux/moduleparam.h>\n')
c.replace('#include <linux/seqlock.h>\n')
c.replace('\tP2P_HOST_BRIDGES_DIFFER,\t/* host bridge routes P2P only within itself */\n'
          '\tP2P_HOST_BRIDGE_DENIED,\t\t/* a pci_p2pdma.host_bridges rule denies it */\n')
c.replace('\tbool override;\t\t/* a pci_p2pdma.host_bridges rule decided */\n')
c.replace('#define P2P_PACK_OVERRIDE\tBIT(5)\n'
          '#define P2P_PACK_DIST_SHIFT\t6\n',
          '#define P2P_PACK_DIST_SHIFT\t5\n')
# p2p_route_compute()
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
          '\tr->why = p2p_host_bridge_verdict(hb_p, hb_c, r);\n'
          '\tr->map = r->why == P2P_REACHABLE ? PCI_P2PDMA_MAP_THRU_HOST_BRIDGE :\n'
          '\t\t\t\t\t   PCI_P2PDMA_MAP_NOT_SUPPORTED;\n',
          '\tr->host_bridge = pci_find_host_bridge(provider->bus);\n'
          '\tr->why = P2P_HOST_BRIDGE_UNKNOWN;\n'
          '\tr->map = PCI_P2PDMA_MAP_NOT_SUPPORTED;\n')
# p2p_route_get_pci(): no policy sequence to watch, no override bit.
c.replace('\tunsigned int policy_seq;\n')
c.replace('\t/*\n'
          '\t * A policy change while we work makes this verdict uncacheable. A\n'
          '\t * cache hit needs no such check: the change drops every entry.\n'
          '\t */\n'
          '\tpolicy_seq = read_seqbegin(&p2p_policy_lock);\n')
c.replace('\t\tr->override = v & P2P_PACK_OVERRIDE;\n')
c.replace('\t\t\t\t  (r->override ? P2P_PACK_OVERRIDE : 0) |\n')
c.replace('\t\t/*\n'
          '\t\t * Best effort: a verdict that fails to cache is recomputed.\n'
          '\t\t * Checked under the lock p2p_routes_forget_all() takes after\n'
          '\t\t * a policy change, so no verdict of the old policy survives.\n'
          '\t\t */\n'
          '\t\txa_lock_irqsave(&p2p->routes, flags);\n'
          '\t\tif (r->unsure || read_seqretry(&p2p_policy_lock, policy_seq))\n',
          '\t\t/* Best effort: a verdict that fails to cache is recomputed. */\n'
          '\t\txa_lock_irqsave(&p2p->routes, flags);\n'
          '\t\tif (r->unsure)\n')
# p2p_route_explain(): only an unknown host bridge refuses, and there is
# no rule to name or suggest.
c.replace(' * bridge that refuses, with the rule that would allow it; for a route a\n'
          ' * pci_p2pdma.host_bridges rule allowed, that; otherwise "-".\n',
          ' * bridge that refuses; otherwise "-".\n')
c.replace('\tstruct p2p_hb_policy pol;\n'
          '\tstruct p2p_hb_rule rule;\n')
c.replace('\t\tscnprintf(buf, len, "%s", r->override ?\n'
          '\t\t\t  "allowed by pci_p2pdma.host_bridges" : "-");\n',
          '\t\tscnprintf(buf, len, "-");\n')
c.replace('\t\t\t  "host bridge %s is not known to route P2P (allow with pci_p2pdma.host_bridges=allow:%04x:%02x)",\n'
          '\t\t\t  dev_name(&hb->dev), pci_domain_nr(hb->bus),\n'
          '\t\t\t  hb->bus->number);\n',
          '\t\t\t  "host bridge %s is not known to route P2P",\n'
          '\t\t\t  dev_name(&hb->dev));\n')
c.cut_from_to('\tcase P2P_HOST_BRIDGES_DIFFER:\n',
              '\tdefault:\n\t\tscnprintf(buf + n, len - n, "no route");\n')
# pci_p2pdma_distance_many()
c.replace(' * sec 6.12). Otherwise the traffic has to go through the root\n'
          ' * complex, which is allowed only where the host bridge is known to route\n'
          ' * peer-to-peer requests (PCIe r6.0 sec 1.3.1 makes it optional) or the\n'
          ' * administrator\'s pci_p2pdma.host_bridges rules allow it; a deny rule\n'
          ' * refuses it even where it would be known to work. Every\n',
          ' * sec 6.12). Otherwise the traffic would have to go through the root\n'
          ' * complex, which is refused for now (PCIe r6.0 sec 1.3.1 makes routing\n'
          ' * peer-to-peer requests optional for a root complex). Every\n')
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
entries_all = ours[ours.index('config PCI_P2PDMA'):]  # drop our file's header
# The generic provider driver (PCI_P2PMEM_PCI) comes in a patch of its own,
# the last one; the earlier patches do not have its entry.
m = re.search(r'^config PCI_P2PMEM_PCI\n.*?(?=^(?:config|menuconfig) |\Z)',
              entries_all, re.M | re.S)
entries = entries_all[:m.start()] + entries_all[m.end():] if m else entries_all
has_p2pmem_pci = bool(m) and os.path.exists(
    os.path.join(top, 'drivers/pci/p2pmem-pci.c'))
m = re.search(r'^(config|menuconfig) (?!PCI_P2PDMA\n)', entries, re.M)
kconfig_userspace = entries[:m.start()] if m else entries
kconfig_tests = entries
# The PCI_P2PDMA help text before the sysfs patch, and before the host
# bridge patch.
k = Carve(kconfig_userspace, 'Kconfig (sysfs)')
k.replace('\t  the ordinary DMA API. Userspace can map it through sysfs and use\n'
          '\t  it for O_DIRECT I/O.\n',
          '\t  the ordinary DMA API.\n')
kconfig_topology = k.text
k = Carve(kconfig_topology, 'Kconfig (host bridges)')
k.replace('\t  the path, exchange data using PCI bus addresses. A path that has\n'
          '\t  to cross the host bridge is used only where the host bridge is\n'
          '\t  known to forward peer-to-peer traffic, unless the administrator\n'
          '\t  allows or denies it with pci_p2pdma.host_bridges= (on the command\n'
          '\t  line or at runtime in /sys/module/pci_p2pdma/parameters/).\n',
          '\t  the path, exchange data using PCI bus addresses. A path that has\n'
          '\t  to cross the host bridge is refused.\n')
kconfig_core = k.text

# --- stages ------------------------------------------------------------------

header = read('include/linux/pci-p2pdma.h')
stages = [
    ('core', {
        'drivers/pci/p2pdma.c': c_core,
        'include/linux/pci-p2pdma.h': header,
        'drivers/pci/Kconfig': kconfig_with(kconfig_core),
    }),
    ('topology', {
        'drivers/pci/p2pdma.c': c_no_sysfs,
        'drivers/pci/Kconfig': kconfig_with(kconfig_topology),
    }),
    ('userspace', {
        'drivers/pci/p2pdma.c': c_no_debugfs,
        'drivers/pci/Kconfig': kconfig_with(kconfig_userspace),
    }),
    ('debugfs', {'drivers/pci/p2pdma.c': c_no_tests}),
]

tests = {}
if has_c_tests:
    tests['drivers/pci/p2pdma.c'] = full_c
if kconfig_tests != kconfig_userspace:
    tests['drivers/pci/Kconfig'] = kconfig_with(kconfig_tests)
kunit_dir = os.path.join(top, 'kunit')
if os.path.isdir(kunit_dir):
    for name in sorted(os.listdir(kunit_dir)):
        if name.endswith(('.c', '.h')) or name == 'Makefile':
            tests['drivers/pci/p2pdma-kunit/' + name] = read('kunit/' + name)
# The black-box suite is an object of its own (kunit/Makefile): make
# drivers/pci/Makefile descend into its directory, as prepare-tree.sh does.
pristine_makefile = os.path.join(os.path.dirname(pristine_kconfig),
                                 'Makefile.pristine')
with open(pristine_makefile) as f:
    makefile = f.read()
if 'drivers/pci/p2pdma-kunit/Makefile' in tests:
    makefile += 'obj-$(CONFIG_PCI_P2PDMA_BLACKBOX_KUNIT_TEST)\t+= p2pdma-kunit/\n'
    tests['drivers/pci/Makefile'] = makefile
if tests:
    stages.append(('tests', tests))

stages.append(('docs', {
    'Documentation/driver-api/pci/p2pdma.rst':
        read('Documentation/driver-api/pci/p2pdma.rst'),
}))

if has_p2pmem_pci:
    stages.append(('p2pmem-pci', {
        'drivers/pci/p2pmem-pci.c': read('drivers/pci/p2pmem-pci.c'),
        'drivers/pci/Kconfig': kconfig_with(entries_all),
        'drivers/pci/Makefile':
            makefile + 'obj-$(CONFIG_PCI_P2PMEM_PCI)\t+= p2pmem-pci.o\n',
    }))

for n, (name, files) in enumerate(stages, 1):
    d = os.path.join(outdir, str(n))
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), 'w') as f:
            f.write(text)
    with open(os.path.join(d, '.name'), 'w') as f:
        f.write(name + '\n')
