#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit results (KTAP) of a kernel console log, read by the kernel's
# own parser (tools/testing/kunit/kunit_parser.py of the build tree), as
# one TAP line per leaf test case ("ok N - suite.case[.param]"), then
# "kunit: P passed, F failed". A skipped case keeps its "# SKIP reason"
# (tests/judge.sh checks it against tests/plan). A suite or case that
# started but never reported (the kernel crashed or hung in it) counts as
# one failure, and so does every level that reported fewer results than
# its KTAP plan ("1..N"): a planned case that did not report is not a pass.
#
# Usage: tests/kunit-results.py CONSOLE_LOG
# KUNIT_DIR names the parser's directory (default: the 6.12 build tree's).
# Exit status: 0 if all passed, 1 on any failure or if the log holds no
# KUnit results, 2 on usage errors.

import os
import re
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.environ.get('KUNIT_DIR') or
                os.path.join(top, 'build/linux-source-6.12/tools/testing/kunit'))
import kunit_parser  # noqa: E402
from kunit_parser import TestStatus  # noqa: E402

SKIP = re.compile(r'# SKIP ?(.*)$')


def main():
    if len(sys.argv) != 2:
        print('usage: kunit-results.py CONSOLE_LOG', file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], errors='replace') as f:
            lines = [line.replace('\r', '') for line in f]
    except OSError as e:
        print(f'kunit-results: cannot read {sys.argv[1]}: {e.strerror}', file=sys.stderr)
        return 2

    # The parser keeps a result's status, not its directive: keep the
    # line it parsed, for the reason of a skip. Its own report goes nowhere.
    parse_result = kunit_parser.parse_test_result

    def keep_line(stream, test, expected_num):
        line = stream.peek() if stream else ''
        parsed = parse_result(stream, test, expected_num)
        if parsed:
            test.result_line = line
        return parsed
    kunit_parser.parse_test_result = keep_line
    kunit_parser.stdout._output = open(os.devnull, 'w')
    kunit_parser.stdout._use_color = False

    main_test = kunit_parser.parse_run_tests(lines)
    if main_test.status == TestStatus.FAILURE_TO_PARSE_TESTS:
        print('kunit: 0 passed, 0 failed')
        print('kunit: no KUnit results in the log', file=sys.stderr)
        return 1

    out = []
    counts = {'passed': 0, 'failed': 0}

    def emit(ok, text):
        out.append(f'{"ok" if ok else "not ok"} {len(out) + 1} - {text}')
        counts['passed' if ok else 'failed'] += 1

    def walk(test, path, level):
        # Missing subtests are nameless entries the parser adds.
        real = [t for t in test.subtests if t.name]
        for sub in real:
            name = f'{path}.{sub.name}' if path else sub.name
            if sub.subtests or sub.expected_count:
                walk(sub, name, level + 1)
                if not hasattr(sub, 'result_line'):
                    emit(False, f'{name} (no result: crashed or hung)')
                continue
            if sub.status == TestStatus.SKIPPED:
                m = SKIP.search(getattr(sub, 'result_line', ''))
                emit(True, f'{name} # SKIP {m.group(1) if m else ""}'.rstrip())
            elif sub.status == TestStatus.SUCCESS:
                emit(True, name)
            else:
                emit(False, name)
        if test.expected_count is not None and len(real) != test.expected_count:
            what = 'suites' if level == 0 else 'cases'
            emit(False, f'{path or "kunit"} (planned {test.expected_count} {what}, '
                        f'{len(real)} reported)')

    walk(main_test, '', 0)
    for line in out:
        print(line)
    print(f'kunit: {counts["passed"]} passed, {counts["failed"]} failed')
    if not out:
        print('kunit: no KUnit results in the log', file=sys.stderr)
        return 1
    return 1 if counts['failed'] else 0


if __name__ == '__main__':
    sys.exit(main())
