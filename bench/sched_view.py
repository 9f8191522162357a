#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The scheduler's view (issue 16 items 4, 5): IoTST's figures for a representative part of
the default plan (mbed TLS, its payload; PSK, ECDHE-ECDSA and ECDHE-RSA), what tracing
costs, and one CPU against two.

Every try runs three arms back to back, in an order that rotates from try to try, so drift
on this shared machine hits all of them alike:
  traced, {1}     metrics = ["time", "sched"], cpus = [the last CPU];
  untraced, {1}   the same plan without "sched";
  traced, {0,1}   cpus = every CPU (the controller then shares them).
Figures: per configuration, the traced {1} arm's CPU usage, idle share, switches, runnable
wait and longest uninterrupted run (median over tries); the cost of tracing as the ratio of
the median handshake wall time (REP headers) traced ÷ untraced per try, median over tries;
the same scheduler figures on {0,1}.

    .venv/bin/python bench/sched_view.py [--tries K] [--reps N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.questions import sched as sched_view  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402

SUITES = '["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", ' \
         '"TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]'
ALL_CPUS = sorted(os.sched_getaffinity(0))
ARMS = {"traced-1": (True, [ALL_CPUS[-1]]), "untraced-1": (False, [ALL_CPUS[-1]]), "traced-all": (True, ALL_CPUS)}
FIGURES = ("busy_share", "idle_share", "voluntary", "involuntary", "preempted_share", "wait_us", "longest_run_us",
           "shortest_longest_run_us", "steps_interrupted_share")


def arm_plan(name: str, traced: bool, cpus: list[int], reps: int) -> plan.LoadedPlan:
    metrics = 'metrics = ["time", "sched"]\n' if traced else ""
    return plan.parse(f'name = "{name}"\nlibrary = "mbedtls"\nsuites = {SUITES}\nrepetitions = {reps}\nrounds = 4\n'
                      f'warmup = 1\ncpus = {cpus}\n{metrics}[payload]\ntotal_bytes = 10000\nrecord_size = 1000\n'
                      'direction = "both"\n', f"{name}.toml")


def wall_medians(db: Path) -> dict[str, float]:
    with reader(db) as st:
        suites = {c.id: c.suite_name for c in st.config_rows()}
        got: dict[str, list[int]] = {}
        for _, r in st.repetition_rows():
            if r.status == "OK":
                got.setdefault(suites[r.config_id], []).append(r.handshake_wall_ns)
    return {suite: statistics.median(v) for suite, v in got.items()}


def sched_figures(db: Path) -> dict[str, dict[str, float]]:
    analysis = analyze(load_path(db), include_flagged=True)
    res = sched_view.collect(analysis)
    assert res is not None and res.measured, f"{db}: nothing traced ({res and res.missing})"
    names = {cid: c.suite_name for cid, c in analysis.ds.configs.items()}
    return {names[c.config_id]: {f: getattr(c, f) for f in FIGURES} for c in res.configs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--reps", type=int, default=40)
    args = ap.parse_args()
    walls: dict[str, list[dict[str, float]]] = {arm: [] for arm in ARMS}
    figures: dict[str, list[dict[str, dict[str, float]]]] = {arm: [] for arm in ARMS if ARMS[arm][0]}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.tries):
            order = list(ARMS)[t % len(ARMS):] + list(ARMS)[:t % len(ARMS)]
            for arm in order:
                traced, cpus = ARMS[arm]
                summary = run_experiment(arm_plan(f"{arm}-{t}", traced, cpus, args.reps), tmp)
                db = summary.folder / "tlsbench.db"
                walls[arm].append(wall_medians(db))
                if traced:
                    figures[arm].append(sched_figures(db))
                print(f"try {t + 1} {arm} done", file=sys.stderr)
    suites = sorted(walls["traced-1"][0])
    cost = {s: statistics.median(w[s] / u[s] for w, u in zip(walls["traced-1"], walls["untraced-1"])) for s in suites}

    def med(arm: str, suite: str, f: str) -> float:
        return statistics.median(x[suite][f] for x in figures[arm])

    head = ("| suite | CPU usage | idle share | voluntary / rep | involuntary / rep | reps preempted | runnable wait, "
            "median µs | longest run, median µs | least longest run, µs | steps interrupted |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")

    def table(arm: str) -> str:
        return head + "".join(
            f"| {s} | {med(arm, s, 'busy_share'):.3f} | {med(arm, s, 'idle_share'):.3f} | "
            f"{med(arm, s, 'voluntary'):.2f} | {med(arm, s, 'involuntary'):.2f} | {med(arm, s, 'preempted_share'):.3f} | "
            f"{med(arm, s, 'wait_us'):.1f} | {med(arm, s, 'longest_run_us'):,.0f} | "
            f"{med(arm, s, 'shortest_longest_run_us'):,.0f} | {med(arm, s, 'steps_interrupted_share'):.4f} |\n"
            for s in suites)

    cost_rows = "".join(f"| {s} | {statistics.median(u[s] for u in walls['untraced-1']) / 1e3:,.1f} | "
                        f"{', '.join(f'{w[s] / u[s]:.3f}' for w, u in zip(walls['traced-1'], walls['untraced-1']))} | "
                        f"{cost[s]:.3f} |\n" for s in suites)
    body = f"""Script: `bench/sched_view.py` ({today()}; {machine()}).
mbed TLS, the default plan's payload (10 000 bytes both ways in 1000-byte records), three
suites, {args.reps} repetitions in 4 rounds per arm; {args.tries} tries of three arms in rotating
order: traced on CPU {{{ALL_CPUS[-1]}}}, untraced on CPU {{{ALL_CPUS[-1]}}}, traced on CPUs
{{{", ".join(map(str, ALL_CPUS))}}} (plan `cpus`). Medians over tries. The machine is shared with other engineers'
builds, so the idle share is low and preemption is their doing. CPU usage: the agent's
running time ÷ the repetition's wall time; idle share: its CPUs idle ÷ (wall × CPUs);
longest run: the longest stretch the agent ran without being switched away within a
repetition (the smallest quantum the repetition tolerates uncut).

Agent on one CPU ({{{ALL_CPUS[-1]}}}, the controller on another):

{table("traced-1")}
Agent on every CPU ({{{", ".join(map(str, ALL_CPUS))}}}, shared with the controller):

{table("traced-all")}
Cost of tracing: median handshake wall time traced ÷ untraced, per try, on CPU {{{ALL_CPUS[-1]}}}:

| suite | untraced median µs | per try | median |
|---|---:|---|---:|
{cost_rows}
A try far from 1 (0.5) is one whose untraced arm other users' builds slowed down; the
median over tries is the figure: tracing costs less than this machine's drift between arms.
Rerun: `.venv/bin/python bench/sched_view.py` (as root, tracefs mounted).
"""
    update_section("The scheduler's view", body)
    print(body)


if __name__ == "__main__":
    main()
