#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# make check's "readme" step: README.md stays short and true. It has at
# most 100 lines; every path it names in `code` exists, and every
# `make TARGET` it names is a target of the Makefile.
#
# A path is a code span with a "/" or a file name with an extension. It
# is looked up from the top of the repository, then under include/,
# drivers/pci/ and drivers/pci/p2pdma/ (the README names headers as
# they are included and tests from the core's folder), then in the
# kernel tree of build/ (the tree's own files it replaces); a name without
# a "/" may be any tracked file's. Paths under build/ are generated and
# absolute ones are the machine's: neither is looked up.
#
# Usage: scripts/check-readme.py [README]
# Ends with "N passed, N failed"; exits 1 on any failure.

import fnmatch
import glob
import os
import re
import subprocess
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, 'README.md')
MAX_LINES = 100
BASES = ['', 'include', 'drivers/pci', 'drivers/pci/p2pdma', 'build/linux-source-6.12']
FILE_NAME = re.compile(r'^[\w.*-]+\.(c|h|sh|py|rst|diff|txt|md)$')

text = open(readme).read()
tracked = subprocess.run(['git', '-C', top, 'ls-files'], capture_output=True, text=True,
                         check=True).stdout.split()
names = {os.path.basename(f) for f in tracked}
makefile = open(os.path.join(top, 'Makefile')).read()
targets = set()
for m in re.finditer(r'(?m)^([\w%. -]+?):(?!=)', makefile):
    targets.update(m.group(1).split())
for m in re.finditer(r'(?m)^\.PHONY:(.*(?:\\\n.*)*)', makefile):
    targets.update(m.group(1).replace('\\\n', ' ').split())

passed = failed = 0


def verdict(ok, what, why=''):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f'readme: {what}: {why}')


def exists(path):
    for base in BASES:
        if glob.glob(os.path.join(top, base, path)):
            return True
    return '/' not in path.rstrip('/') and any(fnmatch.fnmatch(n, path) for n in names)


def is_target(name):
    return name in targets or any('%' in t and re.fullmatch(re.escape(t).replace('%', '.+'), name)
                                  for t in targets)


n = text.count('\n')
verdict(n <= MAX_LINES, f'{n} lines', f'more than {MAX_LINES}')
for span in sorted(set(re.findall(r'`([^`\n]+)`', text))):
    words = span.split()
    if words[0] == 'make' and len(words) > 1:
        for t in words[1].rstrip(':').split('|'):
            verdict(is_target(t), f'`{span}`', f'no target {t} in the Makefile')
        continue
    word = words[0]
    if word.startswith('/') or word.startswith('build/'):
        continue
    if '/' in word or FILE_NAME.match(word):
        verdict(exists(word), f'`{span}`', f'no {word}')
print(f'{passed} passed, {failed} failed')
sys.exit(1 if failed else 0)
