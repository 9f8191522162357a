#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What `make run` costs: the embedded default plan's sweep and report times, and the
precision it reaches (per suite, the 95% CI half-width of the median handshake processing
of each peer, as the report computes it: flagged and descheduled repetitions excluded).

Targets: every suite within ±1% (the plan's precision section adds rounds where needed)
and `make run` within 5 minutes including the build (the build is timed by the caller:
see docs/benchmarks.md).

    .venv/bin/python bench/default_plan.py [--output DIR] [--reuse]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, on, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.stats import precision  # noqa: E402


def timed(args: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "tlsbench.cli", *args], check=True)
    return time.monotonic() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the run (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="analyse a finished run in --output, do not run")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-default-"))
    loaded = plan.load()
    folder = output / loaded.plan.name
    sweep = report = float("nan")
    if not args.reuse:
        sweep = timed(["run", "--no-report", "--output", str(output)])
        report = timed(["report", str(folder)])
    measured = on(folder / "tlsbench.db", precision.measure, loaded.plan.seed)
    ds = load_path(folder / "tlsbench.db")
    worst_key, worst = max(measured.items(), key=lambda kv: kv[1].half_width_pct)
    widths = np.array([p.half_width_pct for p in measured.values()])
    stored = np.array([p.stored for p in measured.values()])
    target = loaded.plan.precision.target_ci_percent
    descheduled = int(ds.descheduled_mask().sum())
    suite = worst_key.split("|")[1]
    body = f"""
Script: `bench/default_plan.py` ({today()}; {machine()}).
The embedded default plan ({loaded.plan.repetitions} repetitions in {loaded.plan.rounds} rounds, then
extra rounds up to {loaded.plan.precision.max_repetitions} for suites above ±{target:g}%), run by `tlsbench run`.

| suites | sweep | report | repetitions stored | suites that needed extra rounds | worst 95% CI half-width (median handshake processing, worst peer) | suites over ±{target:g}% | descheduled repetitions excluded |
|---:|---:|---:|---:|---:|---|---:|---:|
| {len(measured)} | {sweep:.0f} s | {report:.0f} s | {int(stored.sum())} | {int((stored > loaded.plan.repetitions).sum())} | {worst.half_width_pct:.2f}% ({suite}, n = {worst.used}) | {int((widths > target).sum())} | {descheduled} of {len(ds.reps)} |

Median half-width over suites: {np.median(widths):.2f}%. Rerun: `.venv/bin/python bench/default_plan.py`.
"""
    print(body)
    if not args.reuse:
        update_section("Default plan: duration and precision", body)
    return 0 if worst.half_width_pct <= target else 1


if __name__ == "__main__":
    sys.exit(main())
