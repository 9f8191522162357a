#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sizes the embedded default plan: runs it (or reads a finished run), and reports the sweep's
duration and, per suite and peer, the 95% CI half-width of the median handshake processing.

Handshake processing of one peer in one repetition = sum over that peer's step spans of
(duration − the I/O spans nested inside the step). CI: percentile bootstrap of the median
(2000 resamples, seeded). Target: worst half-width ≤ 1% and the sweep ≤ ~3.5 minutes.

    .venv/bin/python bench/default_plan.py [--output DIR] [--reuse]
"""
from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench import plan, spec  # noqa: E402
from tlsbench.analysis.slices import slices_of_blob  # noqa: E402

N_BOOT = 2000


def processing_per_peer(blob: bytes) -> dict[int, int]:
    """peer code -> handshake processing ns of one repetition."""
    s = spec.load()
    sl = slices_of_blob(blob)
    step_ids, io_ids = np.array(sorted(s.label_ids("step"))), np.array(sorted(s.label_ids("io")))
    is_step, is_io = np.isin(sl.label, step_ids), np.isin(sl.label, io_ids)
    # The step each slice is nested in (walking up the parents), −1 when none.
    owner = np.where(is_step, np.arange(len(sl)), -1)
    cur = sl.parent.copy()
    for _ in range(int(sl.depth.max(initial=0)) + 1):
        hit = (owner < 0) & (cur >= 0) & is_step[np.maximum(cur, 0)]
        owner[hit] = cur[hit]
        cur = np.where(cur >= 0, sl.parent[np.maximum(cur, 0)], -1)
    nested_io = is_io & (owner >= 0) & ~is_step
    out = {}
    for peer in np.unique(sl.peer[is_step]).tolist():
        mine = sl.peer == peer
        out[peer] = int(sl.dur[is_step & mine].sum() - sl.dur[nested_io & mine].sum())
    return out


def median_ci_half_pct(x: np.ndarray, rng: np.random.Generator) -> float:
    draws = np.median(rng.choice(x, size=(N_BOOT, len(x)), replace=True), axis=1)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return 100 * (hi - lo) / 2 / np.median(x)


# A repetition whose handshake wall time exceeds its thread CPU time by more than this was
# descheduled (other processes on the machine): its wall-clock processing is inflated.
PREEMPTED = 1.02


def analyse(db: Path, unpreempted: bool = False) -> list[tuple[str, str, int, float, float]]:
    """(suite, peer, n, median µs, CI half-width %) per suite and peer, worst first."""
    s = spec.load()
    conn = sqlite3.connect(db)
    extra = f" AND r.handshake_wall_ns <= {PREEMPTED} * r.handshake_cpu_ns" if unpreempted else ""
    rows = conn.execute("SELECT c.suite_name, t.records FROM repetition r JOIN config c ON c.id = r.config_id "
                        "JOIN trace t ON t.repetition_id = r.id WHERE r.status = ? AND r.flags = 0" + extra,
                        (s.status.name(s.status.OK),))
    per: dict[tuple[str, int], list[int]] = {}
    for suite, blob in rows:
        for peer, ns in processing_per_peer(blob).items():
            per.setdefault((suite, peer), []).append(ns)
    rng = np.random.default_rng(1)
    out = [(suite, s.peers.name(peer), len(v), float(np.median(v)) / 1e3, median_ci_half_pct(np.array(v, float), rng))
           for (suite, peer), v in per.items()]
    return sorted(out, key=lambda r: -r[4])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the run (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="analyse a finished run in --output, do not run")
    ap.add_argument("--seconds", type=float, help="with --reuse: the measured sweep duration (updates the docs)")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-default-"))
    loaded = plan.load()
    seconds = args.seconds if args.seconds else float("nan")
    if not args.reuse:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", "--output", str(output)], check=True)
        seconds = time.monotonic() - started
    db = output / loaded.plan.name / "tlsbench.db"
    rows = analyse(db)
    worst = rows[0]
    over = [r for r in rows if r[4] > 1.0]
    quiet = analyse(db, unpreempted=True)
    q_over = [r for r in quiet if r[4] > 1.0]
    q_n = [r[2] for r in quiet]
    with sqlite3.connect(db) as conn:
        preempted = conn.execute(f"SELECT AVG(handshake_wall_ns > {PREEMPTED} * handshake_cpu_ns) "
                                 "FROM repetition").fetchone()[0]
    print(f"default plan: {loaded.plan.repetitions} repetitions × {len(rows) // 2} suites, "
          f"{loaded.plan.rounds} rounds, sweep {seconds:.0f} s")
    print(f"worst median CI half-width: {worst[4]:.2f}% ({worst[0]}, {worst[1]}, median {worst[3]:.0f} µs)")
    print(f"suite×peer over 1%: {len(over)} of {len(rows)}")
    for r in rows[:5]:
        print(f"  {r[4]:.2f}%  {r[0]:<48} {r[1]:<7} n={r[2]} median {r[3]:.1f} µs")
    print(f"preempted repetitions (handshake wall > {PREEMPTED} × CPU): {100 * preempted:.0f}%; without them: "
          f"worst {quiet[0][4]:.2f}% ({quiet[0][0]}, {quiet[0][1]}, n={quiet[0][2]}), "
          f"{len(q_over)} of {len(quiet)} over 1%, n {min(q_n)}..{max(q_n)}")
    if not args.reuse or args.seconds:
        update_section("Default plan: duration and precision", f"""
Machine: {machine()}; {today()}.

| repetitions | rounds | warm-up per batch | suites | sweep duration | worst 95% CI half-width of the median handshake processing (suite, peer) | suite×peer over 1% |
|---:|---:|---:|---:|---:|---|---:|
| {loaded.plan.repetitions} | {loaded.plan.rounds} | {loaded.plan.warmup} | {len(rows) // 2} | {seconds:.0f} s | {worst[4]:.2f}% ({worst[0]}, {worst[1]}) | {len(over)} of {len(rows)} |

Load on the machine during the run: {100 * preempted:.0f}% of the repetitions were descheduled during
the handshake (handshake wall time > {PREEMPTED} × thread CPU time), which inflates wall-clock
processing. Keeping only the others (n = {min(q_n)}..{max(q_n)} per suite and peer): worst half-width
{quiet[0][4]:.2f}% ({quiet[0][0]}, {quiet[0][1]}), {len(q_over)} of {len(quiet)} over 1%.

Handshake processing of a peer = sum over its step spans of (duration − nested I/O).
CI: percentile bootstrap of the median, 2000 resamples, seeded.
Rerun: `.venv/bin/python bench/default_plan.py` (runs `tlsbench run` with the default plan into a temporary folder).
""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
