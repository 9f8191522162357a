# SPDX-License-Identifier: Apache-2.0
"""Every device target at once (docs/benchmarks.md "Device matrix: every core"): one plan with
[device] target = [every target of spec/targets.toml], every suite of the firmware's mbed TLS
2.28 build once over TLS and DTLS, both peers on the device, 1 KiB each way, through
`tlsbench run` (the targets' QEMUs in parallel, one per host CPU).

Measured per target: configurations completed, instructions counted in the repetitions,
instructions emulated per wall second of that target's boots (QEMU boot to QUIT: the agent
rows' start and end), one repetition of three reference suites (handshake, 1 KiB each way,
close) in M instructions; for the whole matrix: wall time, and values differing between two
runs (0 expected on every core). With --sequential the matrix runs a third time on one CPU,
for the speed-up of the parallel lanes.

    .venv/bin/python bench/device_cores.py [--protocols tls dtls] [--sequential] [--no-update]

The machine is shared (2 cores, other jobs running): wall times and rates are noisy, counts
are not."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.questions.device import _records, identity  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.builder import firmware  # noqa: E402
from tlsbench.core import spec, targets  # noqa: E402

OK = spec.load().status.name(spec.load().status.OK)
REFERENCE = {"PSK-AES128-CCM8": "TLS-PSK-WITH-AES-128-CCM-8",
             "ECDHE-ECDSA-AES128-GCM": "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
             "ECDHE-RSA-AES128-GCM": "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"}


def matrix_plan(names: list[str], protocols: list[str]) -> plan.LoadedPlan:
    text = ('name = "cores"\nrepetitions = 1\n'
            '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
            f'[device]\ntarget = {json.dumps(names)}\nprotocols = {json.dumps(protocols)}\n')
    return plan.parse(text, "cores.toml")


def run_once(loaded: plan.LoadedPlan, folder: Path, cpus: set[int] | None = None) -> tuple[float, Path]:
    """One matrix run (on `cpus` only, when given); its wall time and store."""
    before = os.sched_getaffinity(0)
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        started = time.monotonic()
        summary = run_experiment(loaded, folder)
        seconds = time.monotonic() - started
    finally:
        os.sched_setaffinity(0, before)
    print(f"  {summary.stored} stored, {summary.failed} failed, {summary.agent_deaths} agent deaths in {seconds:.1f} s",
          file=sys.stderr)
    return seconds, folder / "cores" / "tlsbench.db"


def per_target(db: Path) -> dict[str, dict]:
    """Per target: configurations (all, OK), instructions counted, boot seconds, reference counts."""
    ds = load_path(db)
    out: dict[str, dict] = defaultdict(lambda: {"configs": 0, "ok": set(), "instructions": 0, "reference": {}})
    for cid, config in ds.configs.items():
        out[config.target]["configs"] += 1
    with reader(db) as st:
        status = {(r.config_id, r.idx): r.status for _, r in st.repetition_rows()}
        for agent in st.agent_rows():
            boot = (datetime.datetime.fromisoformat(agent.ended_at) - datetime.datetime.fromisoformat(agent.started_at))
            out[agent.target].setdefault("boot_s", 0.0)
            out[agent.target]["boot_s"] += boot.total_seconds()
    names = {v: k for k, v in REFERENCE.items()}
    for pos, (cid, idx) in enumerate(zip(ds.reps.config_id.tolist(), ds.reps.idx.tolist())):
        config, row = ds.configs[cid], out[ds.configs[cid].target]
        if status.get((cid, idx)) != OK:
            continue
        row["ok"].add(cid)  # a configuration completed: its repetitions OK
        t = _records(ds, pos)["t_ns"]
        counted = int(t.max() - t.min()) if len(t) else 0
        row["instructions"] += counted
        if config.suite_name in names and not config.key.count("|dtls"):
            row["reference"][names[config.suite_name]] = counted
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocols", nargs="+", default=["tls", "dtls"])
    ap.add_argument("--sequential", action="store_true", help="also run the matrix on one CPU (the speed-up)")
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    names = list(targets.load().emulated)
    loaded = matrix_plan(names, args.protocols)
    for name in names:  # built before any clock starts (tlsbench run would build a missing one)
        firmware.ensure_firmware(firmware.FirmwareRequest.of_target(name), lambda m: print(f"  {m}", file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="tlsbench-cores-") as tmp:
        runs = []
        for run in ("a", "b"):
            print(f"matrix run {run} ({len(names)} targets in parallel)", file=sys.stderr)
            runs.append(run_once(loaded, Path(tmp) / run))
        sequential = None
        if args.sequential:
            print("matrix run on one CPU", file=sys.stderr)
            sequential = run_once(loaded, Path(tmp) / "seq", {min(os.sched_getaffinity(0))})[0]
        same = identity(load_path(runs[0][1]), load_path(runs[1][1]))
        a, b = per_target(runs[0][1]), per_target(runs[1][1])
        by_target = {name: identity_of(runs, name) for name in names}
    body = render(names, a, b, runs, sequential, same, by_target, args.protocols)
    print(body)
    if not args.no_update:
        update_section("Device matrix: every core", body)
    return 0


def identity_of(runs: list[tuple[float, Path]], target: str) -> tuple[int, int]:
    """Values compared and differing between the two runs, on one target's configurations."""
    a, b = (load_path(db) for _, db in runs)
    for ds in (a, b):
        ds.configs = {cid: c for cid, c in ds.configs.items() if c.target == target}
    same = identity(a, b)
    return same.values, same.differing


def render(names: list[str], a: dict, b: dict, runs: list, sequential: float | None, same, by_target: dict,
           protocols: list[str]) -> str:
    all_targets = targets.load().emulated
    lines = [f"Script: `bench/device_cores.py` ({today()}; {machine()}). One plan with `[device] target = "
             f"[{', '.join(names)}]`: every suite of the firmware's mbed TLS 2.28 build (`device-mps2.h`) once over "
             f"{' and '.join(p.upper() for p in protocols)}, both peers on the device, 1 KiB each way, through "
             "`tlsbench run`; the targets' QEMUs (Debian's QEMU 7.2, `-icount shift=0`) run in parallel, one per "
             "host CPU. Counts are instructions (QEMU icount), never times. **Measured on a busy shared machine** "
             "(2 cores, other engineers' builds and tests running): wall times and rates are noisy, counts are not.",
             "",
             "| target | core (ISA) | configurations completed | instructions counted | instructions emulated per "
             "second of its boots | values differing, run a vs b |",
             "|---|---|---:|---:|---:|---:|"]
    for name in names:
        t, row = all_targets[name], a[name]
        rate = row["instructions"] / row["boot_s"] / 1e6 if row.get("boot_s") else 0
        values, differing = by_target[name]
        lines.append(f"| {name} | {t.cpu} ({t.isa}) | {len(row['ok'])} of {row['configs']} (run b: {len(b[name]['ok'])}) | "
                     f"{row['instructions'] / 1e9:.2f} G | {rate:.0f} M/s | {differing} of {values:,} |")
    (wall_a, _), (wall_b, _) = runs
    lines += ["",
              f"**Wall time of the whole matrix** ({sum(r['configs'] for r in a.values())} configurations, "
              f"{len(names)} targets; firmware already built, QEMU boots and greetings included): "
              f"{wall_a:.0f} s and {wall_b:.0f} s in two runs"
              + (f"; {sequential:.0f} s with the lanes on one CPU (speed-up {sequential / min(wall_a, wall_b):.2f}×)"
                 if sequential else "") + ".",
              f"**Determinism: {same.values:,} values compared between the two runs (every REP header field and "
              f"every record field), {same.differing} differ.**",
              "",
              "One repetition (handshake, 1 KiB each way, close; both peers), TLS, M instructions:",
              "",
              "| target | " + " | ".join(REFERENCE) + " | ECDHE-RSA ÷ ECDHE-ECDSA |",
              "|---|" + "---:|" * (len(REFERENCE) + 1)]
    for name in names:
        ref = a[name]["reference"]
        ratio = (f"{ref['ECDHE-RSA-AES128-GCM'] / ref['ECDHE-ECDSA-AES128-GCM']:.2f}"
                 if {"ECDHE-RSA-AES128-GCM", "ECDHE-ECDSA-AES128-GCM"} <= set(ref) else "–")
        lines.append(f"| {name} | " + " | ".join(f"{ref[k] / 1e6:.2f}" if k in ref else "–" for k in REFERENCE)
                     + f" | {ratio} |")
    lines += ["", "The ranking changes with the core: an ECDHE-RSA-2048 handshake costs about what an "
              "ECDHE-ECDSA P-256 one costs on the cores with Arm's DSP extension (M4, M7, M33, M55), but more "
              "on the others. mbed TLS 2.28's bignum inner loop (bn_mul.h) is one UMAAL per word there, UMLAL "
              "on the M3, 16-bit partial products on ARMv6-M (no long multiply) and plain C on RV32IMAC."]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
