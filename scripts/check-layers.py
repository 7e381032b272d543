#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check's "layers" step: no circle of calls between core files.

Reads every .c file of drivers/pci/p2pdma/ (or of CORE_DIR: make check
also gives it the route tool, tools/pci/p2pdma/; the KUnit suites a file
includes at its end are not read), finds the functions each defines
(kernel style: the name and
its opening parenthesis on the line of the return type) and the calls each
makes to a function another file defines, prints that graph, and fails if
it has a cycle: p2pdma.h says which file may call which, and a call
against that order would close a circle.

Usage: check-layers.py [CORE_DIR]
"""
import glob
import os
import re
import sys

core = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', 'drivers', 'pci', 'p2pdma')
files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(core, '*.c')))
DEF = re.compile(r'^(?:[a-z_][\w]*[ \*]+)+\**([a-z_]\w*)\(', re.M)
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof'}


def text(f):
    with open(os.path.join(core, f)) as fh:
        return re.sub(r'/\*.*?\*/', '', fh.read(), flags=re.S)


owner = {}
for f in files:
    for name in DEF.findall(text(f)):
        if name not in KEYWORDS:
            owner.setdefault(name, f)
calls = {f: set() for f in files}
for f in files:
    for name in re.findall(r'\b([a-z_]\w*)\(', text(f)):
        o = owner.get(name)
        if o and o != f:
            calls[f].add(o)
for f in files:
    print(f'{f} -> {", ".join(sorted(calls[f])) or "(none)"}')

# Depth-first search for a back edge.
state, cycle = {}, []


def visit(f, path):
    state[f] = 'open'
    for g in sorted(calls[f]):
        if state.get(g) == 'open':
            cycle.append(path[path.index(g):] + [g])
        elif g not in state:
            visit(g, path + [g])
    state[f] = 'done'


for f in files:
    if f not in state:
        visit(f, [f])
for c in cycle:
    print('circle: ' + ' -> '.join(c))
if not files:
    sys.exit(f'check-layers: no .c files in {core}')
sys.exit(1 if cycle else 0)
