#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Harness efficiency: handshakes/s of a controller sweep of one suite (frames, validation,
SQLite store, progress) over handshakes/s of the agent's own standalone loop
(`tlsbench-agent-mbedtls run --suite S --reps N`) for the same suite. Both include the
agent's start-up; both run handshake-only repetitions without warm-up. Target ≥ 0.9.

    .venv/bin/python bench/harness_efficiency.py [--suite NAME] [--reps N] [--tries K]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

import numpy as np  # noqa: E402

from tlsbench import plan
from tlsbench.core import spec
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.run import agents  # noqa: E402


def standalone(agent: Path, suite: str, reps: int) -> float:
    none = spec.load().directions.name(0)
    started = time.perf_counter()
    subprocess.run([str(agent), "run", "--suite", suite, "--reps", str(reps), "--warmup", "0",
                    "--direction", none, "--bytes", "0"], check=True, capture_output=True)
    return reps / (time.perf_counter() - started)


def swept(agent: Path, suite: str, reps: int, rounds: int) -> float:
    loaded = plan.parse(f'name = "harness"\nrepetitions = {reps}\nrounds = {rounds}\nwarmup = 0\n'
                        f'suites = ["{suite}"]\n', "harness.toml")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = run_experiment(loaded, tmp, agent_dir=agent.parent)
        elapsed = time.perf_counter() - started
    assert summary.stored == reps and summary.failed == 0
    return reps / elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256")
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--tries", type=int, default=7, help="alternating runs of each; medians are compared")
    args = ap.parse_args()
    agent = agents.find_agent("mbedtls")
    alone, harness = [], []
    for _ in range(args.tries):  # alternate, so drift hits both alike
        alone.append(standalone(agent, args.suite, args.reps))
        harness.append(swept(agent, args.suite, args.reps, args.rounds))
    # Medians over alternating tries: the machine's speed drifts (other jobs, the host), and
    # alternation makes the drift hit both sides alike; best-of would reward one lucky try.
    a, h = float(np.median(alone)), float(np.median(harness))
    ratio = h / a
    paired = float(np.median(np.array(harness) / np.array(alone)))
    print(f"harness efficiency {args.suite}: controller {h:.1f} hs/s, standalone {a:.1f} hs/s, "
          f"ratio of medians {ratio:.3f}, median of paired ratios {paired:.3f} (target ≥ 0.9); tries: standalone {[round(x, 1) for x in alone]}, "
          f"controller {[round(x, 1) for x in harness]}")
    update_section("Harness efficiency", f"""
Machine: {machine()}; {today()}.

| suite | repetitions | controller sweep | agent standalone loop | ratio | median of paired ratios | target |
|---|---:|---:|---:|---:|---:|---:|
| {args.suite} | {args.reps} ({args.rounds} rounds) | {h:.1f} handshakes/s | {a:.1f} handshakes/s | {ratio:.3f} | {paired:.3f} | ≥ 0.9 |

Medians of {args.tries} alternating tries each (all tries: standalone {', '.join(f'{x:.1f}' for x in alone)};
controller {', '.join(f'{x:.1f}' for x in harness)}). Both include agent start-up and run
handshake-only repetitions without warm-up; the controller also validates every REP and
stores it in SQLite in its own transaction.
Rerun: `.venv/bin/python bench/harness_efficiency.py`.
""")
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
