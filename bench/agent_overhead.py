#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tracer's cost: ns per event, and handshake CPU time traced / untraced.

Both agent builds (`tlsbench-agent-mbedtls` and `-notrace`, the same code with tracing
compiled out) run the same suite in alternating blocks, so drift on this shared machine
hits both alike. The handshake CPU time comes from the runner's own clock reads, which the
untraced build makes too. The "corrected" ratio subtracts the calibrated cost of the events
the traced build recorded inside the handshake: it checks that the overhead analysis
subtracts is the overhead there is.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench import protocol, spec  # noqa: E402
from tlsbench.agents import find_agent  # noqa: E402
from tlsbench.analysis.slices import decode  # noqa: E402

ECDSA_SUITE = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
BLOCKS = 10          # alternating blocks per build
REPS_PER_BLOCK = {ECDSA_SUITE: 30}
PSK_REPS_PER_BLOCK = 400
TARGET = 1.01


def run_block(agent: Path, suite: str, reps: int, workdir: Path) -> tuple[dict, list[protocol.Rep]]:
    out = workdir / "block.tb"
    subprocess.run([str(agent), "run", "--suite", suite, "--reps", str(reps), "--warmup", "5",
                    "--direction", "none", "--out", str(out)], check=True, capture_output=True)
    frames = protocol.decode_frames(out.read_bytes())
    hello = json.loads(frames[0].payload)
    reps = [protocol.decode_rep(f) for f in frames if f.type == spec.load().frames.REP]
    return hello, reps


def handshake_events(rep: protocol.Rep) -> int:
    """Records emitted between the HANDSHAKE phase's START and STOP (both included)."""
    rec = decode(rep.records)
    hs = np.flatnonzero(rec["label"] == spec.load().label_by_name["HANDSHAKE"].id)
    return int(hs[-1] - hs[0] + 1)


def measure(suite: str, reps: int, agents: dict[str, Path], workdir: Path) -> dict:
    cpu = {"traced": [], "notrace": []}
    events, costs = [], []
    for block in range(BLOCKS):
        order = ["traced", "notrace"] if block % 2 == 0 else ["notrace", "traced"]
        for build in order:
            hello, shipped = run_block(agents[build], suite, reps, workdir)
            cpu[build] += [r.header.handshake_cpu_ns for r in shipped]
            if build == "traced":
                costs.append(hello["tracer"]["event_cost_ns"])
                events += [handshake_events(r) for r in shipped]
    traced, untraced = statistics.median(cpu["traced"]), statistics.median(cpu["notrace"])
    cost = statistics.median(costs)
    n_events = statistics.median(events)
    return {"suite": suite, "reps": len(cpu["traced"]), "traced_us": traced / 1e3, "notrace_us": untraced / 1e3,
            "ratio": traced / untraced, "events": n_events, "event_cost_ns": cost,
            "corrected_ratio": (traced - n_events * cost) / untraced}


def fastest_psk_suite(agent: Path, workdir: Path) -> str:
    listing = json.loads(subprocess.run([str(agent), "suites", "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    psk = [s["name"] for s in listing["suites"] if s["key_exchange"] == "PSK" and s["authentication"] == "PSK"]
    medians = {}
    for name in psk:
        _, shipped = run_block(agent, name, 200, workdir)
        medians[name] = statistics.median(r.header.handshake_cpu_ns for r in shipped)
    return min(medians, key=medians.get)


def main() -> int:
    agents = {"traced": find_agent("mbedtls"), "notrace": find_agent("mbedtls-notrace")}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        psk = fastest_psk_suite(agents["notrace"], workdir)
        results = [measure(ECDSA_SUITE, REPS_PER_BLOCK[ECDSA_SUITE], agents, workdir),
                   measure(psk, PSK_REPS_PER_BLOCK, agents, workdir)]
    rows = "\n".join(
        f"| {r['suite']} | {r['reps']} | {r['traced_us']:.1f} | {r['notrace_us']:.1f} | {r['ratio']:.4f} "
        f"| {r['events']:.0f} | {r['corrected_ratio']:.4f} |" for r in results)
    cost = statistics.median(r["event_cost_ns"] for r in results)
    body = f"""Script: `bench/agent_overhead.py` ({today()}; {machine()}).
Median handshake thread-CPU time (both peers, in memory) of the traced agent and of the same
code built with tracing compiled out, {BLOCKS} alternating blocks per build. "Corrected" subtracts
the calibrated cost of the events recorded inside the handshake.

Cost of one trace event (start-up calibration, median): **{cost:.1f} ns** (target ≤ 40 ns).

| suite | reps per build | traced µs | untraced µs | ratio (target ≤ {TARGET}) | events in handshake | corrected ratio |
|---|---:|---:|---:|---:|---:|---:|
{rows}
"""
    update_section("Agent tracer overhead", body)
    print(body)
    return 0 if cost <= 40 and results[0]["ratio"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
