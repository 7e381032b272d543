#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw lines of scripts/bench.sh into the `make bench` report.

Usage: report.py RAW OUTDIR

RAW has one line per result: "<kernel> <rep> <key> <value>", kernel being
"bench" (ours) or "bench-intree" (the tree's own). Writes OUTDIR/results.csv,
OUTDIR/results.json and OUTDIR/ratios.png (gnuplot), and prints a Markdown
table: the median over the repetitions of each kernel and the ratio, oriented
so that > 1 means ours is better (in-tree/ours for times and bytes,
ours/in-tree for throughput), and the lowest and highest ratio of one boot
pair (the boots alternate, ours first: pair N is the Nth of each), which
shows how far this run's noise moves a row; the control rows run the same
code in both kernels, so their spread is the noise alone. Then issue 11's goals (a ratio each row must
reach) and, as information, where the no-touch mmap time goes: the mmap()
and munmap() calls ('#' lines of RAW). Goals are reported, not enforced.
"""
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# metric number, key, description, unit, True if higher is better
ROWS = [(1, f'alloc_free_{s}k_{c}_{p}pct',
         f'alloc+free {s} KiB, {"1 CPU" if c == "1cpu" else "all vCPUs"}, pool {p}% full',
         'ns', False)
        for s in (4, 64) for c in ('1cpu', 'allcpus') for p in (0, 50, 90)] + [
    (2, 'sgl_1m', 'alloc_sgl+free_sgl 1 MiB', 'ns', False),
    (3, 'map_sg_p2p_256', 'dma_map_sg+unmap 256 P2P pages', 'ns', False),
    (3, 'map_sg_ram_256', 'dma_map_sg+unmap 256 RAM pages', 'ns', False),
    (3, 'map_sg_p2p_over_ram', 'P2P map cost / RAM map cost', 'x', False),
] + [(4, f'distance_{n}_{w}', f'distance_many, {n} client{"s" if n > 1 else ""}, {w}',
      'ns', False) for w in ('first', 'cached') for n in (1, 4, 16)] + [
    (5, 'find_many_8', 'find_many among 8 providers (4 clients)', 'ns', False),
    (6, 'mmap_touch_2m', 'mmap+touch+munmap 2 MiB', 'us', False),
    (6, 'mmap_touch_64m', 'mmap+touch+munmap 64 MiB', 'us', False),
    (6, 'mmap_notouch_64m', 'mmap+munmap 64 MiB, no touch', 'us', False),
    (6, 'mmap_notouch_1g', 'mmap+munmap 1 GiB, no touch', 'us', False),
    (6, 'mmap_notouch_after_dirty_64m', 'mmap+munmap 64 MiB, no touch, after a writer', 'us', False),
    (7, 'read_p2p_mbps', 'O_DIRECT NVMe -> P2P memory', 'MB/s', True),
    (7, 'read_ram_mbps', 'O_DIRECT NVMe -> RAM (control)', 'MB/s', True),
    (8, 'meta_bytes_per_mib', 'metadata per MiB registered', 'B', False),
    (8, 'route_cache_bytes', 'route caches after 136 routes (whole pages)', 'B', False),
]
KERNELS = ('bench', 'bench-intree')

# Issue 11: the ratio (as in the table, > 1: ours better) each row must reach.
GOALS = {f'alloc_free_{s}k_allcpus_{p}pct': 2.0 for s in (4, 64) for p in (0, 90)}
GOALS.update(mmap_notouch_64m=5.0, mmap_notouch_1g=20.0, mmap_touch_64m=1.0)

# Information lines ("<kernel> <rep> # <key> <value>"): key, description, unit.
INFO = [(f'mmap_notouch_{s}_{c}_us', f'the {c}() call alone, {d}, no touch', 'us')
        for s, d in (('64m', '64 MiB'), ('1g', '1 GiB')) for c in ('mmap', 'munmap')]


def load(path):
    runs = {}    # (kernel, rep) -> {key: value}
    info = {}    # the same for the information keys of INFO
    info_keys = {i[0] for i in INFO}
    for line in open(path):
        f = line.split()
        if len(f) == 5 and f[2] == '#' and f[3] in info_keys:
            info.setdefault((f[0], f[1]), {})[f[3]] = float(f[4])
        if len(f) < 4 or f[2] == '#':
            continue
        runs.setdefault((f[0], f[1]), {})[f[2]] = float(f[3])
    for vals in runs.values():
        if 'map_sg_p2p_256' in vals and vals.get('map_sg_ram_256'):
            vals['map_sg_p2p_over_ram'] = vals['map_sg_p2p_256'] / vals['map_sg_ram_256']
    return runs, info


def machine():
    cpu = 'unknown CPU'
    for line in open('/proc/cpuinfo'):
        if line.startswith('model name'):
            cpu = line.split(':', 1)[1].strip()
            break
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        accel = open(os.path.join(top, 'build', 'accel')).read().strip()
    except OSError:
        accel = 'unknown'
    qemu = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True,
                          text=True).stdout.splitlines()[0]
    return (f'{cpu}, {os.cpu_count()} host CPUs, {qemu}, accel {accel}, guest q35 2 vCPUs 1 GiB, '
            f'{platform.system()} {platform.release()}, {time.strftime("%Y-%m-%d")}')


def fmt(v, unit):
    if v is None:
        return 'n/a'
    return f'{v:.2f}' if unit == 'x' else f'{v:.0f}'


def medians(runs, reps, key):
    """{kernel: median of key over its repetitions, or None}"""
    med = {}
    for k in KERNELS:
        vals = [runs[(k, r)][key] for r in reps[k] if key in runs.get((k, r), {})]
        med[k] = statistics.median(vals) if vals else None
    return med


def ratio_of(ours, intree, higher):
    if ours is None or intree is None:
        return None
    num, den = (ours, intree) if higher else (intree, ours)
    return num / den if den > 0 else (1.0 if num == den else None)


def pair_range(runs, reps, key, higher):
    """(lowest, highest) ratio of one boot pair, or (None, None)"""
    pairs = [ratio_of(runs.get(('bench', r), {}).get(key),
                      runs.get(('bench-intree', r), {}).get(key), higher)
             for r in reps['bench']]
    pairs = [x for x in pairs if x is not None]
    return (min(pairs), max(pairs)) if pairs else (None, None)


def main():
    raw, outdir = sys.argv[1:3]
    runs, info = load(raw)
    reps = {k: sorted(r for (kk, r) in runs if kk == k) for k in KERNELS}
    rows, missing = [], []
    for metric, key, desc, unit, higher in ROWS:
        med = medians(runs, reps, key)
        missing += [f'{key} ({k})' for k in KERNELS if med[k] is None]
        ours, intree = med['bench'], med['bench-intree']
        ratio = ratio_of(ours, intree, higher)
        goal = GOALS.get(key)
        lo, hi = pair_range(runs, reps, key, higher)
        rows.append(dict(metric=metric, key=key, description=desc, unit=unit,
                         higher_is_better=higher, ours=ours, intree=intree, ratio=ratio,
                         ratio_min=lo, ratio_max=hi, goal=goal,
                         goal_met=None if goal is None or ratio is None else ratio >= goal))
    info_rows = []
    for key, desc, unit in INFO:
        med = medians(info, reps, key)
        info_rows.append(dict(key=key, description=desc, unit=unit, ours=med['bench'],
                              intree=med['bench-intree'],
                              ratio=ratio_of(med['bench'], med['bench-intree'], False)))

    mach = machine()
    with open(os.path.join(outdir, 'results.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        # goal and goal_met are empty for rows without a goal.
        w.writerow(['metric', 'key', 'description', 'unit', 'ours', 'intree', 'ratio',
                    'ratio_min', 'ratio_max', 'goal', 'goal_met'])
        for r in rows:
            w.writerow([r['metric'], r['key'], r['description'], r['unit'],
                        r['ours'], r['intree'], r['ratio'], r['ratio_min'], r['ratio_max'],
                        r['goal'], r['goal_met']])
    with open(os.path.join(outdir, 'results.json'), 'w') as f:
        json.dump(dict(machine=mach, repetitions={k: len(v) for k, v in reps.items()},
                       rows=rows, info=info_rows), f, indent=1)
    with open(os.path.join(outdir, 'ratios.dat'), 'w') as f:
        for r in rows:
            if r['ratio']:
                f.write(f'"{r["metric"]}: {r["key"]}" {r["ratio"]:.4f}\n')
    plot = os.path.join(outdir, 'ratios.png')
    gp = f'''set terminal pngcairo size 1400,700 noenhanced
set output "{plot}"
set title "make bench: in-tree time / our time (> 1: ours faster; throughput: ours / in-tree)"
set style fill solid 0.8
set boxwidth 0.7
set logscale y 2
set grid ytics
set xtics rotate by -60 left font ",8"
set bmargin 12
set rmargin 10
unset key
plot "{os.path.join(outdir, 'ratios.dat')}" using 0:2:xtic(1) with boxes lc rgb "#3070b0", \\
     1 with lines lw 2 lc rgb "#c03030"
'''
    try:
        subprocess.run(['gnuplot'], input=gp, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'bench: no chart ({e}); run make deps for gnuplot-nox', file=sys.stderr)

    print(f'\nmake bench: medians of {len(reps["bench"])} (ours) and '
          f'{len(reps["bench-intree"])} (in-tree) boots; machine: {mach}\n')
    print('| # | what | unit | ours | in-tree | ratio | boot pairs |')
    print('| --- | --- | --- | ---: | ---: | ---: | ---: |')
    for r in rows:
        print(f'| {r["metric"]} | {r["description"]} | {r["unit"]} | {fmt(r["ours"], r["unit"])} | '
              f'{fmt(r["intree"], r["unit"])} | {fmt(r["ratio"], "x")} | '
              f'{fmt(r["ratio_min"], "x")}-{fmt(r["ratio_max"], "x")} |')
    print('\nratio: in-tree/ours (ours/in-tree for MB/s); > 1 means ours is better.'
          '\nboot pairs: the lowest and highest ratio of one boot of each kernel;'
          ' the control rows\' spread is the noise alone.')

    print('\nIssue 11 goals (ratio as above):\n')
    print('| what | unit | ours | in-tree | ratio | goal | met |')
    print('| --- | --- | ---: | ---: | ---: | ---: | --- |')
    for r in rows:
        if r['goal'] is not None:
            met = 'n/a' if r['goal_met'] is None else ('yes' if r['goal_met'] else 'NO')
            print(f'| {r["description"]} | {r["unit"]} | {fmt(r["ours"], r["unit"])} | '
                  f'{fmt(r["intree"], r["unit"])} | {fmt(r["ratio"], "x")} | '
                  f'>= {r["goal"]:.1f} | {met} |')
    print(f'goals: {sum(1 for r in rows if r["goal_met"])} of {len(GOALS)} met')

    print('\nInformation: the two calls alone (the fastest of each, per boot):\n')
    print('| what | unit | ours | in-tree | ratio |')
    print('| --- | --- | ---: | ---: | ---: |')
    for r in info_rows:
        print(f'| {r["description"]} | {r["unit"]} | {fmt(r["ours"], r["unit"])} | '
              f'{fmt(r["intree"], r["unit"])} | {fmt(r["ratio"], "x")} |')
    print(f'files: {outdir}/results.csv, results.json, ratios.png')
    if missing:
        print('bench: not measured: ' + ', '.join(missing), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
