#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tracer's cost: ns per event, and handshake CPU time traced / untraced, per library.

Both agent builds (`tlsbench-agent-mbedtls` and `-notrace`, the same code with tracing
compiled out) run the same suite in alternating blocks, so drift on this shared machine
hits both alike. The event cost is also read with the vDSO clock (TLSBENCH_CLOCK=monotonic).
The handshake CPU time comes from the runner's own clock reads, which the untraced build
makes too. The "corrected" ratio subtracts the calibrated cost of the events the traced build
recorded inside the handshake: it checks that the overhead analysis subtracts is the overhead
there is.
"""
from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench.core import spec  # noqa: E402
from tlsbench.run import protocol  # noqa: E402
from tlsbench.run.agents import find_agent  # noqa: E402
from tlsbench.analysis.derive.slices import decode  # noqa: E402

ECDSA_SUITE = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
TLS13_FASTEST = ("TLS_AES_128_GCM_SHA256", ["--group", "x25519", "--credential", "ecdsa-p256"])
BLOCKS = 40          # alternating blocks per build
TARGET = 1.01


@dataclass(frozen=True)
class Case:
    library: str
    suite: str
    args: list[str]       # extra `run` options (group, credential)
    reps: int             # per block


def run_block(agent: Path, suite: str, reps: int, workdir: Path, args: list[str] = (),
              env: dict | None = None) -> tuple[dict, list[protocol.Rep]]:
    out = workdir / "block.tb"
    subprocess.run([str(agent), "run", "--suite", suite, "--reps", str(reps), "--warmup", "5",
                    "--direction", "none", "--out", str(out), *args], check=True, capture_output=True,
                   env={**os.environ, **(env or {})})
    frames = protocol.decode_frames(out.read_bytes())
    hello = json.loads(frames[0].payload)
    reps = [protocol.decode_rep(f) for f in frames if f.type == spec.load().frames.REP]
    return hello, reps


def handshake_events(rep: protocol.Rep) -> int:
    """Records emitted between the HANDSHAKE phase's START and STOP (both included)."""
    rec = decode(rep.records)
    hs = np.flatnonzero(rec["label"] == spec.load().label_by_name["HANDSHAKE"].id)
    return int(hs[-1] - hs[0] + 1)


def measure(case: Case, workdir: Path) -> dict:
    """Median over adjacent (traced, untraced) block pairs of the ratio of their medians:
    the machine's speed drifts on a time scale of blocks, a pair sees the same state."""
    agents = {"traced": find_agent(case.library), "notrace": find_agent(f"{case.library}-notrace")}
    ratios, medians, events, costs, vdso = [], {"traced": [], "notrace": []}, [], [], []
    for block in range(BLOCKS):
        order = ["traced", "notrace"] if block % 2 == 0 else ["notrace", "traced"]
        pair = {}
        for build in order:
            hello, shipped = run_block(agents[build], case.suite, case.reps, workdir, case.args)
            pair[build] = statistics.median(r.header.handshake_cpu_ns for r in shipped)
            medians[build].append(pair[build])
            if build == "traced":
                costs.append(hello["tracer"]["event_cost_ns"])
                clock = hello["clock"]["source"]
                events += [handshake_events(r) for r in shipped]
        ratios.append(pair["traced"] / pair["notrace"])
        if block % 8 == 0:  # the same tracer on the vDSO clock, for comparison
            hello, _ = run_block(agents["traced"], case.suite, 1, workdir, case.args, {"TLSBENCH_CLOCK": "monotonic"})
            vdso.append(hello["tracer"]["event_cost_ns"])
    traced, untraced = statistics.median(medians["traced"]), statistics.median(medians["notrace"])
    cost, n_events, ratio = statistics.median(costs), statistics.median(events), statistics.median(ratios)
    return {"library": case.library, "suite": case.suite, "reps": BLOCKS * case.reps, "clock": clock,
            "traced_us": traced / 1e3, "notrace_us": untraced / 1e3, "ratio": ratio,
            "events": n_events, "event_cost_ns": cost, "vdso_event_cost_ns": statistics.median(vdso),
            "corrected_ratio": ratio - n_events * cost / untraced}



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
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        cases = [Case("mbedtls", ECDSA_SUITE, ["--group", "secp256r1"], 15),
                 Case("mbedtls", fastest_psk_suite(find_agent("mbedtls-notrace"), workdir), [], 300),
                 Case("openssl", *TLS13_FASTEST, 100),
                 Case("wolfssl", *TLS13_FASTEST, 100)]
        results = [measure(case, workdir) for case in cases]
    rows = "\n".join(
        f"| {r['library']} | {r['suite']} | {r['reps']} | {r['traced_us']:.1f} | {r['notrace_us']:.1f} | {r['ratio']:.4f} "
        f"| {r['events']:.0f} | {r['event_cost_ns']:.1f} ({r['clock']}) | {r['vdso_event_cost_ns']:.1f} "
        f"| {100 * r['events'] * r['event_cost_ns'] / (r['notrace_us'] * 1e3):.2f}% | {r['corrected_ratio']:.4f} |"
        for r in results)
    cost = statistics.median(r["event_cost_ns"] for r in results)
    vdso = statistics.median(r["vdso_event_cost_ns"] for r in results)
    met = [r for r in results if r["ratio"] <= TARGET]
    body = f"""Script: `bench/agent_overhead.py` ({today()}; {machine()}).
Median handshake thread-CPU time (both peers, in memory) of each traced agent and of the same
code built with tracing compiled out, in {BLOCKS} alternating block pairs; the ratio is the median
over pairs of the ratio of the pair's medians (the machine's speed drifts between blocks, a pair
sees one state). "Corrected" subtracts the calibrated cost of the events recorded inside the
handshake. TLS 1.3 rows: x25519, ECDSA P-256. The posix port's clock is the invariant TSC
converted to CLOCK_MONOTONIC's time line (src/posix/posix_clock.c); the vDSO column is the same
agent with TLSBENCH_CLOCK=monotonic (CLOCK_MONOTONIC read directly, the clock before issue 17).

Cost of one trace event (start-up calibration, median over the agents): **{cost:.1f} ns** with the
TSC (target ≤ 10 ns), {vdso:.1f} ns on the vDSO clock.

| library | suite | reps per build | traced µs | untraced µs | ratio (target ≤ {TARGET}) | events in handshake | event cost ns (clock) | event cost ns, vDSO | events × cost, % of untraced | corrected ratio |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{rows}

**Reading it.** The tracer's own cost is events × event cost (the "events × cost" column):
what analysis subtracts (the corrected ratio). Traced ÷ untraced ≤ {TARGET} holds for {len(met)} of
{len(results)} handshakes. A ~50 µs PSK handshake records about 150 events: at ~9 ns each that
is ~1.4 µs, 2–3% of it, so its raw ratio cannot reach {TARGET} on this machine without
fewer events; its corrected ratio is what the report's numbers carry. Where the corrected
ratio differs from 1 by more than the noise, the two binaries differ by more than the
tracer: they are linked separately, so the TLS library's code lands at other addresses, and
hot loops run up to a few % faster or slower by alignment alone (Mytkowicz et al., ASPLOS
2009); repeated runs move these ratios by about ±1%.
"""
    update_section("Agent tracer overhead", body)
    print(body)
    return 0 if cost <= 10 and len(met) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
