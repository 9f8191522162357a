#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make run` on a busy 2-core laptop (issue 18): the embedded default plan run by `tlsbench
run` (sweep, precision rounds within the plan's time budget, then its report) while two busy
loops (`python -c 'while 1: pass'`) take both cores' spare time; its wall time, the precision
it reached, the store's size and bytes per repetition, and the report's first paint (HTML
bytes before the first figure, of the total).

Targets: ≤ 300 s, a store ≤ 60 MB.

    .venv/bin/python bench/busy_laptop.py [--loops 2] [--output DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, on, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.stats import precision  # noqa: E402
from tlsbench.store.sqlite import DB_FILE  # noqa: E402

TARGET_SECONDS, TARGET_MB = 300, 60
BUSY_LOOP = [sys.executable, "-c", "while 1: pass"]


def store_bytes(folder: Path) -> int:
    """The store as it stays on disk (its write-ahead log included)."""
    return sum(p.stat().st_size for p in folder.glob(DB_FILE + "*"))


def first_paint(report: Path) -> tuple[int, int, int]:
    """(HTML bytes up to the end of the summary, the first screen; bytes before the first
    figure; total bytes) of a report."""
    html = report.read_bytes()
    summary = html.find(b"</section>", html.find(b'<section id="summary">'))
    first = re.search(rb"<figure", html)
    return summary + len(b"</section>"), (first.start() if first else len(html)), len(html)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loops", type=int, default=2, help="busy loops beside the run (default 2)")
    ap.add_argument("--output", type=Path, help="parent folder of the run (default: a temporary folder)")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-laptop-"))
    loaded = plan.load()
    folder = output / loaded.plan.name
    loops = [subprocess.Popen(BUSY_LOOP) for _ in range(args.loops)]
    try:
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", "--output", str(output)],
                             capture_output=True, text=True, env=dict(os.environ, COLUMNS="400"))
        seconds = time.monotonic() - started
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    sys.stdout.write(run.stdout[-3000:])
    if run.returncode:
        sys.stderr.write(run.stderr)
        return 1
    budget_line = next((line for line in run.stdout.splitlines() if "stopped the extra rounds" in line), "")
    swept = re.search(r"stored \d+ repetitions in ([0-9.]+) s", run.stdout)
    measured = on(folder / DB_FILE, precision.measure, loaded.plan.seed)
    widths = np.array([p.half_width_pct for p in measured.values()])
    stored = int(sum(p.stored for p in measured.values()))
    target = loaded.plan.precision.target_ci_percent
    size = store_bytes(folder)
    screen, before, total = first_paint(folder / "report.html")
    body = f"""
Script: `bench/busy_laptop.py` ({today()}; {machine()}; the machine was shared with other work besides
the {args.loops} busy loops). `tlsbench run` of the embedded default plan ({loaded.plan.repetitions} repetitions in
{loaded.plan.rounds} rounds, precision rounds up to {loaded.plan.precision.max_repetitions} within a time budget of
{loaded.plan.precision.time_budget_s:g} s), its report included, beside {args.loops} busy loops.

| wall time (target ≤ {TARGET_SECONDS} s) | of which sweep + precision rounds | repetitions stored | suites within ±{target:g}% | median / worst half-width | store (target ≤ {TARGET_MB} MB) | bytes per repetition | report: first screen (summary) / before the first figure / total |
|---:|---:|---:|---:|---|---:|---:|---:|
| {seconds:.0f} s | {swept.group(1) if swept else "?"} s | {stored} | {int((widths <= target).sum())} of {len(widths)} | {np.median(widths):.2f}% / {widths.max():.2f}% | {size / 1e6:.1f} MB | {size / max(stored, 1):,.0f} | {screen / 1e3:.0f} kB / {before / 1e3:.0f} kB / {total / 1e3:.0f} kB |

{("The run said: “" + budget_line.strip() + "”") if budget_line else "The precision rounds ended before the budget."}
Rerun: `.venv/bin/python bench/busy_laptop.py`.
"""
    print(body)
    update_section("Default plan on a busy laptop", body)
    return 0 if seconds <= TARGET_SECONDS and size <= TARGET_MB * 1e6 else 1


if __name__ == "__main__":
    sys.exit(main())
