#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The verdicts of `make test-upstream` (scripts/test-upstream.sh).

  upstream-compare.py kunit OURS.log UPSTREAM.log DIFFERENCES
      The black-box suite (p2pdma_blackbox) on both kernels: one table,
      then a failure for every case that did not report on either kernel,
      that failed on ours, whose result differs, or whose observed values
      differ without lines of DIFFERENCES (tests/upstream-differences for
      6.12, tests/upstream-differences-7.3) naming the case, the row of
      the cover letter's "Differences from Linux 6.12" (or 7.3) that
      explains it and the values each kernel logs; a listed
      case whose values no longer differ, or differ from the listed ones
      on either kernel, fails too (the list must say what is true).

  upstream-compare.py fuzz CPU OURS.log UPSTREAM.log
      The route fuzzing (p2pdma_fuzz): a failure for every seed whose
      normalised line differs, every seed that reported on one kernel
      only or on neither (1..N), and every "not ok" of the suite.

  upstream-compare.py guest OURS.tsv UPSTREAM.tsv DIFFERENCES
      The guest suites of `make test` (end-to-end checks, kselftests) on
      both debug kernels (scripts/test-upstream-guest.sh): one table, then
      a failure for every case that failed on ours, or whose result
      differs (a case that reported on one kernel only differs), unless
      a pattern of DIFFERENCES
      (tests/upstream-guest-differences[-7.3]) under a row or section of
      p2pdma.rst's that explains it covers the case; a pattern that covers
      no such case fails too.

  upstream-compare.py same OURS.tsv UPSTREAM.tsv
      The kernel's own kselftests that reach our core (scripts/test-
      upstream-kselftests.sh), third-party suites: one table, then a
      failure for every case whose result differs between the kernels
      (a case that reported on one kernel only differs), and one if no
      case reported at all. A case that fails on both is the suite's
      verdict on this machine, shown, not a difference of the cores.

  upstream-compare.py --selftest
      Each way the comparison must fail, on synthetic logs: a seed that
      differs, a seed missing on one kernel, a "not ok" of the fuzzing, a
      fuzzing that never finished, a black-box case that failed on ours,
      did not report upstream, or whose values differ unlisted, a listed
      difference that no longer differs or whose values on either kernel
      are not the listed ones, a guest case that differs
      unlisted or fails on ours, a guest pattern that covers nothing, a
      kselftest case whose result differs or that reported on one kernel
      only, no kselftest case at all; and the logs that must pass.

Each prints its table and "N passed, N failed" and exits 1 on a failure.
"""
import fnmatch
import os
import re
import sys

RESULT = re.compile(r"^(\s*)(not ok|ok) \d+ (\S+)(.*)$")


def strip(raw):
    """A console line without its timestamp."""
    return re.sub(r"^\[[^]]*\] ", "", raw.rstrip("\n"))


def kunit_cases(path, suite):
    """Case name -> (status, lines the case logged), and the suite's own
    result ("ok", "not ok" or None when it did not finish)."""
    cases, pending, inside, verdict = {}, [], False, None
    with open(path, errors="replace") as f:
        for raw in f:
            line = strip(raw)
            if re.match(r"^\s*# Subtest: " + suite + r"$", line):
                inside, pending = True, []
                continue
            if not inside:
                continue
            m = RESULT.match(line)
            if m:
                if m.group(3) == suite:
                    verdict = m.group(2)
                    break
                if "# SKIP" in m.group(4):
                    status = "skip"
                else:
                    status = "pass" if m.group(2) == "ok" else "fail"
                # A parameterised case reports each parameter, then itself.
                if status == "fail" or cases.get(m.group(3), ("",))[0] != "fail":
                    cases[m.group(3)] = (status, pending)
                pending = []
            elif re.match(r"^ {4,}\S", line):
                pending.append(line.strip())
    return cases, verdict


def seen(case):
    """The observed values a case logged, without the case's name."""
    return [l.split(": observed: ", 1)[1] for l in case[1] if ": observed: " in l]


GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                     "Documentation", "driver-api", "pci", "p2pdma.rst")
# The series' cover letter holds "Differences from Linux 6.12" (or 7.3),
# one row a "* TITLE" (wrapped by two spaces) above its "6.12:", "New:",
# "Gain:"
# and "Test:" lines.
# The kernel whose own core is compared (P2P_UPSTREAM, "6.12" or "7.3")
# and its series' cover letter (P2P_COVER): scripts/test-upstream.sh sets
# both from scripts/kernel.sh.
UP = os.environ.get("P2P_UPSTREAM", "6.12")
COVER = os.environ.get("P2P_COVER") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "cover-letter.txt")


def cover_rows():
    """The row titles of the cover letter's "Differences from Linux UP"."""
    rows, cur = [], None
    with open(COVER) as f:
        for line in f:
            if line.startswith("* "):
                cur = [line[2:].strip()]
                rows.append(cur)
            elif cur is not None and line.startswith("  ") and not \
                    re.match(r"  (" + re.escape(UP) + r"|New|Gain|Test):", line):
                cur.append(line.strip())
            else:
                cur = None
    return {" ".join(" ".join(r).split()) for r in rows}


def differences(path):
    """Case -> {"row": the row of the cover letter's "Differences from
    Linux UP" that explains its observed values, "ours": [values],
    UP: [values]}: the values each kernel must log, one line each, in
    order. A row the cover letter does not have, a field that is not one
    of those three, and a case without a row or without the values of
    both kernels are errors."""
    rows = cover_rows()
    listed = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            case, field, value = (line.split(None, 2) + ["", ""])[:3]
            value = " ".join(value.split())
            entry = listed.setdefault(case, {"row": None, "ours": [], UP: []})
            if field == "row":
                if value not in rows:
                    sys.exit(f"{path}: {case}: {COVER} has no row \"{value}\"")
                entry["row"] = value
            elif field in ("ours", UP) and value:
                entry[field].append(value)
            else:
                sys.exit(f"{path}: {case}: \"{field}\" is not row, ours or {UP} with a value")
    for case, entry in listed.items():
        if not entry["row"] or not entry["ours"] or not entry[UP]:
            sys.exit(f"{path}: {case}: needs a row and the values of ours and of {UP}")
    return listed


def kunit(ours_log, up_log, diff_file):
    suite = "p2pdma_blackbox"
    ours, v_ours = kunit_cases(ours_log, suite)
    up, v_up = kunit_cases(up_log, suite)
    listed = differences(diff_file)
    names = list(ours) + [n for n in up if n not in ours]
    failed = []
    print(f"| case | ours | {UP} |")
    print("| --- | --- | --- |")
    for n in names:
        a, b = ours.get(n, ("-", [])), up.get(n, ("-", []))
        why = []
        if a[0] == "-" or b[0] == "-":
            why.append("did not report on " + ("ours" if a[0] == "-" else UP))
        elif a[0] != b[0]:
            why.append(f"result differs ({a[0]} / {b[0]})")
        if a[0] == "fail":
            why.append("fails on ours")
        values_differ = seen(a) != seen(b)
        if values_differ and n not in listed:
            why.append(f"observed values differ and {os.path.basename(diff_file)} "
                       "does not list the case")
        if not values_differ and n in listed:
            why.append(f"listed in {os.path.basename(diff_file)}, but its observed "
                       "values no longer differ")
        if values_differ and n in listed:
            for label, c in (("ours", a), (UP, b)):
                if seen(c) != listed[n][label]:
                    why.append(f"observed on {label}: {' / '.join(seen(c)) or 'nothing'}; "
                               f"{os.path.basename(diff_file)} lists "
                               f"{' / '.join(listed[n][label])}")
        note = " (observed values differ: " + listed[n]["row"] + ")" if values_differ and n in listed else ""
        print(f"| {n}{note}{' **' + '; '.join(why) + '**' if why else ''} | {a[0]} | {b[0]} |")
        if why:
            failed.append(n)
    for n in listed:
        if n not in names:
            print(f"| {n} **listed in {os.path.basename(diff_file)}, ran on neither kernel** | - | - |")
            failed.append(n)
    for label, v in (("ours", v_ours), (UP, v_up)):
        if v is None:
            print(f"{suite} did not finish on {label}")
            failed.append(f"{label}: {suite}")
    print()
    print("What each kernel logged for a case that failed or whose values differ:")
    for n in names:
        a, b = ours.get(n, ("-", [])), up.get(n, ("-", []))
        if n not in failed and seen(a) == seen(b):
            continue
        print()
        print(f"{n}:")
        for label, c in (("ours", a), (UP, b)):
            for l in c[1]:
                print(f"  {label}: {l}")
    print(f"{len(names) - len(set(failed) & set(names))} passed, {len(failed)} failed")
    return 1 if failed else 0


FUZZ = re.compile(r"fuzz: seed (\d+) calls (\d+) crc ([0-9a-f]+)")
SEEDS = re.compile(r"fuzz: seeds (\d+)-(\d+), ")


def fuzz_log(path):
    """Seed -> (calls, crc), the last seed the suite planned, its "not ok"
    lines (a missing end of the suite is one)."""
    out, planned, bad, inside, done = {}, 0, [], False, False
    with open(path, errors="replace") as f:
        for raw in f:
            line = strip(raw)
            if re.match(r"^\s*# Subtest: p2pdma_fuzz$", line):
                inside = True
            m = FUZZ.search(line)
            if m:
                out[int(m.group(1))] = (int(m.group(2)), m.group(3))
            m = SEEDS.search(line)
            if m:
                planned = max(planned, int(m.group(2)))
            m = RESULT.match(line)
            if inside and m:
                if m.group(2) == "not ok":
                    bad.append(line.strip())
                if m.group(3) == "p2pdma_fuzz":
                    inside, done = False, True
    if not done:
        bad.append("p2pdma_fuzz did not finish")
    return out, planned, bad


def fuzz(cpu, ours_log, up_log):
    ours, p_ours, bad_ours = fuzz_log(ours_log)
    up, p_up, bad_up = fuzz_log(up_log)
    planned = max(p_ours, p_up)
    every = set(range(1, planned + 1)) | set(ours) | set(up)
    differ = sorted(s for s in every if s in ours and s in up and ours[s] != up[s])
    missing = sorted(s for s in every if s not in ours or s not in up)
    calls = sum(ours[s][0] for s in ours)
    print(f"route fuzzing, {cpu}: {planned} seeds planned; {len(ours)} reported on ours, "
          f"{len(up)} on {UP}; {calls} calls on ours; {len(differ)} seeds differ"
          + (f" (first: {', '.join(map(str, differ[:10]))})" if differ else "")
          + (f"; {len(missing)} seeds missing on a kernel (first: "
             f"{', '.join(map(str, missing[:10]))})" if missing else ""))
    for label, bad in (("ours", bad_ours), (UP, bad_up)):
        for line in bad:
            print(f"  {label}: {line}")
    failed = len(differ) + len(missing) + len(bad_ours) + len(bad_up)
    if not planned:
        print("  no seed range reported: the suite did not run")
        failed += 1
    print(f"{len(every) - len(set(differ) | set(missing))} passed, {failed} failed")
    return 1 if failed else 0


def guide_titles(guide):
    """The section titles of a text (a line underlined by = or -)."""
    lines = guide.splitlines()
    return {a.strip() for a, b in zip(lines, lines[1:])
            if a.strip() and re.fullmatch(r"[=-]{3,}", b.strip() or "x")}


def guest_differences(path):
    """[(pattern, row)]: "row: TEXT" lines name a row of the cover letter's
    "Differences from Linux UP" (or a section title of it or of
    p2pdma.rst, for what UP lacks altogether); the patterns (fnmatch)
    below it are the guest cases it explains. A row neither has is an
    error."""
    rows, titles = cover_rows(), set()
    for doc in (GUIDE, COVER):
        with open(doc) as f:
            titles |= guide_titles(f.read())
    out, row = [], None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("row: "):
                row = " ".join(line[5:].split())
                if row not in rows and row not in titles:
                    sys.exit(f"{path}: no row or section \"{row}\" in {COVER} or {GUIDE}")
            elif row is None:
                sys.exit(f"{path}: pattern \"{line}\" before any \"row: \" line")
            else:
                out.append((line, row))
    return out


def guest_case(name):
    """The case a result is for: "machine/scenario/suite: case", without
    the reason a failed guest check appends (": expected ...") or the
    temporary path the checkout case names."""
    name = re.sub(r" \(/tmp/[^)]*\)", "", name)
    head, sep, rest = name.partition(": ")
    if sep and "/" in head:
        return head + sep + rest.partition(": ")[0], rest.partition(": ")[2]
    return name, ""


def guest_results(path):
    """Case -> (status, detail), in the order of the run; the rows that
    only make sense on our kernel (white-box KUnit, the build check) left
    out."""
    label = {"ok": "pass", "notok": "fail", "skip": "skip"}
    rows = {}
    with open(path, errors="replace") as f:
        for line in f:
            status, name, detail = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
            if name.startswith("kunit: ") or name.startswith("debug kernel is built"):
                continue
            key, why = guest_case(name)
            rows[key] = (label.get(status, status), "; ".join(x for x in (why, detail) if x))
    return rows


def guest(ours_tsv, up_tsv, diff_file):
    ours, up = guest_results(ours_tsv), guest_results(up_tsv)
    listed = guest_differences(diff_file)
    used = set()
    names = list(ours) + [n for n in up if n not in ours]
    failed = []
    print(f"| case | ours | {UP} |")
    print("| --- | --- | --- |")
    for n in names:
        a, b = ours.get(n, ("-", ""))[0], up.get(n, ("-", ""))[0]
        why, note = [], ""
        if a == "fail":
            why.append("fails on ours")
        if a != b:
            rows = [(p, r) for p, r in listed if fnmatch.fnmatchcase(n, p)]
            if rows:
                used.update(p for p, _ in rows)
                note = f" (differs: {rows[0][1]})"
            else:
                why.append(f"result differs and {os.path.basename(diff_file)} "
                           "does not cover the case")
        print(f"| {n}{note}{' **' + '; '.join(why) + '**' if why else ''} | {a} | {b} |")
        if why:
            failed.append(n)
    for p, r in listed:
        if p not in used:
            print(f"| {p} **a pattern of {os.path.basename(diff_file)} ({r}) that "
                  f"covers no differing case** | | |")
            failed.append(p)
    print()
    print("What each kernel reported for a case that failed or differs:")
    for n in names:
        a, b = ours.get(n, ("-", "no result")), up.get(n, ("-", "no result"))
        if a[0] == b[0] and n not in failed:
            continue
        print()
        print(f"{n}:")
        for label, (status, detail) in (("ours", a), (UP, b)):
            print(f"  {label}: {status}{': ' + detail if detail else ''}")
    passed = len(names) - len(set(failed) & set(names))
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0


def same(ours_tsv, up_tsv):
    ours, up = guest_results(ours_tsv), guest_results(up_tsv)
    names = list(ours) + [n for n in up if n not in ours]
    failed = []
    print(f"| case | ours | {UP} |")
    print("| --- | --- | --- |")
    for n in names:
        a, b = ours.get(n, ("-", ""))[0], up.get(n, ("-", ""))[0]
        print(f"| {n}{' **result differs**' if a != b else ''} | {a} | {b} |")
        if a != b:
            failed.append(n)
    for label, rows in (("ours", ours), (UP, up)):
        got = [r[0] for r in rows.values()]
        print(f"{label}: {got.count('pass')} pass, {got.count('fail')} fail, "
              f"{got.count('skip')} skip")
    if not names:
        print("no case reported on either kernel")
        failed.append("(none)")
    print(f"{len(names) - len(set(failed) & set(names))} passed, {len(failed)} failed")
    return 1 if failed else 0


def selftest():
    """Returns 0 if every synthetic log gets the verdict it must: 6.12's
    labels and cover letter, whatever the environment says."""
    import contextlib
    import io
    import tempfile

    global UP, COVER
    UP = "6.12"
    COVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "scripts", "cover-letter.txt")

    def bb(cases):
        lines = ["KTAP version 1", "    # Subtest: p2pdma_blackbox"]
        for i, (name, status, observed) in enumerate(cases, 1):
            if observed:
                lines.append(f"    # {name}: observed: {observed}")
            lines.append(f"    {'ok' if status == 'pass' else 'not ok'} {i} {name}")
        lines.append("ok 1 p2pdma_blackbox")
        return lines

    def fz(seeds, bad=False, end=True):
        lines = ["    # Subtest: p2pdma_fuzz", "    # Subtest: fz_routes"]
        lines += [f"    # fz_routes: fuzz: seed {s} calls {c} crc {x}" for s, c, x in seeds]
        lines.append("    # fz_routes: fuzz: seeds 1-4, 40 calls")
        lines.append(f"        {'not ok' if bad else 'ok'} 1 part 0")
        if end:
            lines.append(f"{'not ok' if bad else 'ok'} 2 p2pdma_fuzz")
        return lines

    seeds = [(s, 10, "00000001") for s in range(1, 5)]
    good = [("bb_a", "pass", None), ("bb_route_known_host_bridge", "pass", "d 1028")]
    good_up = [("bb_a", "pass", None), ("bb_route_known_host_bridge", "pass", "d 4")]
    cases = [
        # (what, ours log, 6.12 log, mode, must fail)
        ("identical logs", bb(good) + fz(seeds), bb(good_up) + fz(seeds), "both", False),
        ("a seed differs", bb(good) + fz(seeds),
         bb(good_up) + fz(seeds[:3] + [(4, 10, "00000002")]), "fuzz", True),
        ("a seed missing on 6.12", bb(good) + fz(seeds), bb(good_up) + fz(seeds[:3]),
         "fuzz", True),
        ("a part not ok on ours", bb(good) + fz(seeds, bad=True), bb(good_up) + fz(seeds),
         "fuzz", True),
        ("the fuzzing never ended", bb(good) + fz(seeds), bb(good_up) + fz(seeds, end=False),
         "fuzz", True),
        ("a case fails on ours", bb([("bb_a", "fail", None)] + good[1:]) + fz(seeds),
         bb(good_up) + fz(seeds), "kunit", True),
        ("a case missing on 6.12", bb(good) + fz(seeds), bb(good_up[1:]) + fz(seeds),
         "kunit", True),
        ("unlisted values differ", bb(good + [("bb_b", "pass", "x 1")]) + fz(seeds),
         bb(good_up + [("bb_b", "pass", "x 2")]) + fz(seeds), "kunit", True),
        ("a listed difference no longer differs", bb(good) + fz(seeds),
         bb(good_up[:1] + [good[1]]) + fz(seeds), "kunit", True),
        ("a listed difference with other values on 6.12", bb(good) + fz(seeds),
         bb(good_up[:1] + [("bb_route_known_host_bridge", "pass", "d 5")]) + fz(seeds),
         "kunit", True),
        ("a listed difference with other values on ours",
         bb(good[:1] + [("bb_route_known_host_bridge", "pass", "d 1029")]) + fz(seeds),
         bb(good_up) + fz(seeds), "kunit", True),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        diff = os.path.join(tmp, "differences")
        with open(diff, "w") as f:
            f.write("bb_route_known_host_bridge row  Distance of a route through the root complex\n"
                    "bb_route_known_host_bridge ours d 1028\n"
                    "bb_route_known_host_bridge 6.12 d 4\n")
        for what, a, b, mode, must_fail in cases:
            pa, pb = os.path.join(tmp, "ours.log"), os.path.join(tmp, "6.12.log")
            for path, lines in ((pa, a), (pb, b)):
                with open(path, "w") as f:
                    f.write("\n".join(f"[    1.000000] {l}" for l in lines) + "\n")
            rc = 0
            with contextlib.redirect_stdout(io.StringIO()):
                if mode in ("kunit", "both"):
                    rc |= kunit(pa, pb, diff)
                if mode in ("fuzz", "both"):
                    rc |= fuzz("selftest", pa, pb)
            ok = bool(rc) == must_fail
            failures += not ok
            print(f"{'ok' if ok else 'not ok'} {what}: "
                  f"{'fails' if rc else 'passes'}, as it {'must' if ok else 'must not'}")

    # The guest verdict: TSV rows "ok|notok|skip<TAB>case".
    def tsv(rows):
        return [f"{st}\t{name}" for st, name in rows]

    gd = [("ok", "intel/base/e2e: route_a"), ("ok", "intel/base/p2pmem: mremap"),
          ("ok", "kunit: p2pdma-map: ok"), ("ok", "debug kernel is built from our files")]
    gu = [("ok", "intel/base/e2e: route_a"), ("notok", "intel/base/p2pmem: mremap: expected x")]
    gcases = [
        # (what, ours rows, 6.12 rows, must fail)
        ("guest: a listed difference", gd, gu, False),
        ("guest: an unlisted difference", gd + [("ok", "amd/base/e2e: b")],
         gu + [("skip", "amd/base/e2e: b")], True),
        ("guest: a case fails on ours", gd + [("notok", "amd/base/e2e: c")],
         gu + [("notok", "amd/base/e2e: c")], True),
        ("guest: a case missing on 6.12", gd + [("ok", "amd/base/e2e: d")], gu, True),
        ("guest: a pattern covers nothing", gd, gd, True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        diff = os.path.join(tmp, "differences")
        with open(diff, "w") as f:
            f.write("row: Distance of a route through the root complex\n*/p2pmem: mremap\n")
        for what, a, b, must_fail in gcases:
            pa, pb = os.path.join(tmp, "ours.tsv"), os.path.join(tmp, "6.12.tsv")
            for path, rows in ((pa, a), (pb, b)):
                with open(path, "w") as f:
                    f.write("\n".join(tsv(rows)) + "\n")
            with contextlib.redirect_stdout(io.StringIO()):
                rc = guest(pa, pb, diff)
            ok = bool(rc) == must_fail
            failures += not ok
            print(f"{'ok' if ok else 'not ok'} {what}: "
                  f"{'fails' if rc else 'passes'}, as it {'must' if ok else 'must not'}")
    # The kselftest verdict: the same result on both kernels, whatever it is.
    ks = [("ok", "vfio/t: a"), ("notok", "vfio/t: b"), ("skip", "iommu/iommufd: c")]
    scases = [
        # (what, ours rows, upstream rows, must fail)
        ("kselftests: the same results, a failure on both", ks, ks, False),
        ("kselftests: a result differs", ks, ks[:2] + [("ok", "iommu/iommufd: c")], True),
        ("kselftests: a case on one kernel only", ks + [("ok", "vfio/t: d")], ks, True),
        ("kselftests: no case at all", [], [], True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for what, a, b, must_fail in scases:
            pa, pb = os.path.join(tmp, "ours.tsv"), os.path.join(tmp, "up.tsv")
            for path, rows in ((pa, a), (pb, b)):
                with open(path, "w") as f:
                    f.write("".join(line + "\n" for line in tsv(rows)))
            with contextlib.redirect_stdout(io.StringIO()):
                rc = same(pa, pb)
            ok = bool(rc) == must_fail
            failures += not ok
            print(f"{'ok' if ok else 'not ok'} {what}: "
                  f"{'fails' if rc else 'passes'}, as it {'must' if ok else 'must not'}")
    total = len(cases) + len(gcases) + len(scases)
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) == 5 and sys.argv[1] == "kunit":
        return kunit(*sys.argv[2:])
    if len(sys.argv) == 5 and sys.argv[1] == "fuzz":
        return fuzz(*sys.argv[2:])
    if len(sys.argv) == 5 and sys.argv[1] == "guest":
        return guest(*sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        return same(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
