# SPDX-License-Identifier: Apache-2.0
"""Every device target at once (docs/benchmarks.md "Device matrix: every core"): one plan with
[device] target = [every target of spec/targets.toml] and, with --library, library = [the device
builds named, or all of spec/libraries.toml [device]], every suite of each build's firmware once
over TLS and DTLS, both peers on the device, 1 KiB each way, through `tlsbench run` (the lanes'
QEMUs in parallel, one per host CPU). Without --library, each target's own build (mbed TLS 2.28).

Measured per target × build: configurations completed, or why the lane did not run (an image
that does not fit the target's flash, a build not made for its core: stored as such),
instructions counted in the repetitions, instructions emulated per wall second of that lane's
boots (QEMU boot to QUIT: the agent rows' start and end), and for mbed TLS 2.28 one repetition
of three reference suites (handshake, 1 KiB each way, close) in M instructions; for the whole
matrix: wall time, and values differing between two runs (0 expected on every core). With
--sequential the matrix runs a third time on one CPU, for the speed-up of the parallel lanes.

    .venv/bin/python bench/device_cores.py [--library all | BUILD...] [--target T...] [--suites S...]
                                           [--protocols tls dtls] [--sequential] [--no-update]

--target and --suites (names, patterns or IANA ids such as 0xC0A8; each must match in every
build) make a smaller matrix for a check. The machine is shared (2 cores, other jobs running):
wall times and rates are noisy, counts are not."""
from __future__ import annotations

import argparse
import copy
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
from tlsbench.core import libraries, spec, targets  # noqa: E402

OK = spec.load().status.name(spec.load().status.OK)
REFERENCE = {"PSK-AES128-CCM8": "TLS-PSK-WITH-AES-128-CCM-8",
             "ECDHE-ECDSA-AES128-GCM": "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
             "ECDHE-RSA-AES128-GCM": "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"}
REFERENCE_BUILD = "mbedtls@2.28"  # the reference suites are its names (and the targets' own build)
Lane = tuple[str, str]  # (target, the build's label): one lane of the matrix


def builds(names: list[str] | None) -> list[libraries.DeviceBuild] | None:
    """The device builds named (`all`: every one), None for each target's own."""
    if not names:
        return None
    declared = libraries.load()
    if "all" in names:
        return list(declared.device)
    found = [declared.device_build(name) for name in names]
    unknown = [name for name, build in zip(names, found) if build is None]
    if unknown:
        sys.exit(f"unknown device build(s) {', '.join(unknown)}; declared (spec/libraries.toml [device]): "
                 f"{', '.join(b.name for b in declared.device)}")
    return [b for b in found if b is not None]


def suite_refs(names: list[str] | None) -> list[str | int] | None:
    """--suites as plan references: an IANA id (0xC0A8) as a number, a name or pattern as it is."""
    return [int(n, 16) if n.lower().startswith("0x") else n for n in names] if names else None


def matrix_plan(names: list[str], protocols: list[str], library: list[libraries.DeviceBuild] | None = None,
                suites: list[str | int] | None = None) -> plan.LoadedPlan:
    # No warm-up, as in the device plan (src/tlsbench/plans/device.toml): a count is exact from the
    # first repetition, and a warm-up would emulate every handshake twice.
    text = ('name = "cores"\nrepetitions = 1\nwarmup = 0\n' + (f"suites = {json.dumps(suites)}\n" if suites else "")
            + '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
            f'[device]\ntarget = {json.dumps(names)}\nprotocols = {json.dumps(protocols)}\n'
            + (f"library = {json.dumps([b.name for b in library])}\n" if library else ""))
    return plan.parse(text, "cores.toml")


def lanes_of(names: list[str], library: list[libraries.DeviceBuild] | None) -> list[Lane]:
    """The plan's lanes in its order (targets × builds); a target's own build without --library."""
    if library:
        return [(t, b.label) for b in library for t in names]
    declared, emulated = libraries.load(), targets.load().emulated
    return [(t, declared.device_build(emulated[t].library).label) for t in names]  # type: ignore[union-attr]


def build_all(lanes: list[Lane]) -> None:
    """Every lane's images before any clock starts (tlsbench run would build a missing one); a
    lane without an image (too large, not for its core) is named here and stored by the run."""
    for target, label in lanes:
        try:
            firmware.ensure_firmware(firmware.FirmwareRequest.of_target(target, library=label),
                                     lambda m: print(f"  {m}", file=sys.stderr))
        except firmware.NoFirmware as exc:
            print(f"  {exc}", file=sys.stderr)


LOADS: list[float] = []  # the machine's 5-minute load average at the end of each run (it is shared)


def run_once(loaded: plan.LoadedPlan, folder: Path, cpus: set[int] | None = None) -> tuple[float, Path]:
    """One matrix run (on `cpus` only, when given); its wall time and store."""
    before = os.sched_getaffinity(0)
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        started = time.monotonic()
        summary = run_experiment(loaded, folder)
        seconds = time.monotonic() - started
        LOADS.append(os.getloadavg()[1])  # over the last 5 minutes of the run
    finally:
        os.sched_setaffinity(0, before)
    print(f"  {summary.stored} stored, {summary.failed} failed, {summary.agent_deaths} agent deaths in {seconds:.1f} s",
          file=sys.stderr)
    return seconds, folder / "cores" / "tlsbench.db"


def per_lane(db: Path, ds, lanes: list[Lane]) -> dict[Lane, dict]:
    """Per lane: configurations (all, OK), why it did not run (if it did not), instructions
    counted, boot seconds, reference counts (`ds`: the store `db` loaded)."""
    out: dict[Lane, dict] = defaultdict(lambda: {"configs": 0, "ok": set(), "instructions": 0, "reference": {},
                                                 "not_run": ""})
    for cid, config in ds.configs.items():
        row = out[(config.target, config.library)]
        row["configs"] += 1
    with reader(db) as st:
        status = {(r.config_id, r.idx): r.status for _, r in st.repetition_rows()}
        ran = {cid for cid, _ in status}
        for config in st.config_rows("all"):  # a lane without an image: its configurations say why
            if config.skip_reason and config.id not in ran and config.target:
                out[(config.target, config.library)]["not_run"] = config.skip_reason
        several = len({library for _, library in lanes}) > 1
        for cell in st.skipped_cells():  # a lane whose configurations are not known: one cell
            for target, library in lanes:
                if cell.cell == (f"{target} {library}" if several else target):
                    out[(target, library)]["not_run"] = cell.reason.removeprefix(f"{cell.cell}: ")
        for agent in st.agent_rows():
            boot = (datetime.datetime.fromisoformat(agent.ended_at) - datetime.datetime.fromisoformat(agent.started_at))
            out[(agent.target, agent.library)].setdefault("boot_s", 0.0)
            out[(agent.target, agent.library)]["boot_s"] += boot.total_seconds()
    names = {v: k for k, v in REFERENCE.items()}
    for pos, (cid, idx) in enumerate(zip(ds.reps.config_id.tolist(), ds.reps.idx.tolist())):
        config = ds.configs[cid]
        row = out[(config.target, config.library)]
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
    ap.add_argument("--library", nargs="+", help="device builds (spec/libraries.toml [device]) or `all`; default: "
                    "each target's own (mbed TLS 2.28)")
    ap.add_argument("--target", nargs="+", choices=list(targets.load().emulated), help="default: every target")
    ap.add_argument("--suites", nargs="+", help="suite names, patterns or IANA ids (0xC0A8); default: every suite")
    ap.add_argument("--protocols", nargs="+", default=["tls", "dtls"])
    ap.add_argument("--sequential", action="store_true", help="also run the matrix on one CPU (the speed-up)")
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    names = args.target or list(targets.load().emulated)
    library = builds(args.library)
    loaded = matrix_plan(names, args.protocols, library, suite_refs(args.suites))
    lanes = lanes_of(names, library)
    build_all(lanes)
    with tempfile.TemporaryDirectory(prefix="tlsbench-cores-") as tmp:
        runs = []
        for run in ("a", "b"):
            print(f"matrix run {run} ({len(lanes)} lanes: {len(names)} targets × "
                  f"{len({lib for _, lib in lanes})} builds, in parallel)", file=sys.stderr)
            runs.append(run_once(loaded, Path(tmp) / run))
        sequential = None
        if args.sequential:
            print("matrix run on one CPU", file=sys.stderr)
            sequential = run_once(loaded, Path(tmp) / "seq", {min(os.sched_getaffinity(0))})[0]
        loaded_a, loaded_b = (load_path(db) for _, db in runs)
        same = identity(loaded_a, loaded_b)
        a, b = per_lane(runs[0][1], loaded_a, lanes), per_lane(runs[1][1], loaded_b, lanes)
        by_lane = {lane: identity_of(loaded_a, loaded_b, lane) for lane in lanes}
    body = render(names, lanes, a, b, runs, sequential, same, by_lane, args.protocols, args.suites,
                  library is not None)
    print(body)
    if not args.no_update:
        update_section("Device matrix: every core", body)
    return 0


def identity_of(a, b, lane: Lane) -> tuple[int, int]:
    """Values compared and differing between the two runs (datasets `a`, `b`), on one lane's
    configurations."""
    parts = []
    for ds in (a, b):
        part = copy.copy(ds)
        part.configs = {cid: c for cid, c in ds.configs.items() if (c.target, c.library) == lane}
        parts.append(part)
    same = identity(*parts)
    return same.values, same.differing


def build_phrase(label: str) -> str:
    build = libraries.load().device_build(label)
    return f"{build.meaning.split(' (')[0].split(':')[0]} (`{label}`, `{build.config.name}`)" if build else label


def lane_table(names: list[str], label: str, a: dict, b: dict, by_lane: dict) -> list[str]:
    """One build's lanes, a row per target, as the matrix of one build always read."""
    all_targets = targets.load().emulated
    lines = ["| target | core (ISA) | configurations completed | instructions counted | instructions emulated per "
             "second of its boots | values differing, run a vs b |",
             "|---|---|---:|---:|---:|---:|"]
    for name in names:
        t, row = all_targets[name], a[(name, label)]
        if row["not_run"]:
            stored = f"{row['configs']} stored, " if row["configs"] else ""
            lines.append(f"| {name} | {t.cpu} ({t.isa}) | {stored}not run: {row['not_run']} | – | – | – |")
            continue
        rate = row["instructions"] / row["boot_s"] / 1e6 if row.get("boot_s") else 0
        values, differing = by_lane[(name, label)]
        lines.append(f"| {name} | {t.cpu} ({t.isa}) | {len(row['ok'])} of {row['configs']} "
                     f"(run b: {len(b[(name, label)]['ok'])}) | {row['instructions'] / 1e9:.2f} G | {rate:.0f} M/s | "
                     f"{differing} of {values:,} |")
    return lines


def render(names: list[str], lanes: list[Lane], a: dict, b: dict, runs: list, sequential: float | None, same,
           by_lane: dict, protocols: list[str], suites: list[str] | None, named: bool) -> str:
    """The section: one table per build (the targets' own, mbed TLS 2.28, as it always read when
    alone), the whole matrix's wall time and determinism, mbed TLS 2.28's reference suites.
    `named`: the plan names its builds (--library)."""
    labels = list(dict.fromkeys(label for _, label in lanes))
    suites_phrase = f"the suites {', '.join(suites)}" if suites else "every suite"
    what = (f"{suites_phrase} of the firmware's mbed TLS 2.28 build (`device-mps2.h`)"
            if labels == [libraries.load().device_build(REFERENCE_BUILD).label] else
            f"{suites_phrase} of each build's firmware")
    lines = [f"Script: `bench/device_cores.py` ({today()}; {machine()}). One plan with `[device] target = "
             f"[{', '.join(names)}]`" + (f" and `library = [{', '.join(labels)}]`" if named else "")
             + f": {what} once over "
             f"{' and '.join(p.upper() for p in protocols)}, both peers on the device, 1 KiB each way, through "
             "`tlsbench run`; the lanes' QEMUs (Debian's QEMU 7.2, `-icount shift=0`) run in parallel, one per "
             "host CPU. Counts are instructions (QEMU icount), never times. The machine is shared: its 5-minute "
             f"load average at the end of each run was {', '.join(f'{x:.1f}' for x in LOADS)} (2 CPUs; 2 is "
             "the two QEMUs alone): wall times and rates move with it, counts do not.",
             ""]
    for label in labels:  # one table per build, in the order given (`all`: mbed TLS 2.28 first, as it always read)
        if len(labels) > 1:
            lines += [f"**{build_phrase(label)}**", ""]
        lines += lane_table(names, label, a, b, by_lane) + [""]
    run_configs = sum(r["configs"] for r in a.values() if not r["not_run"])
    not_run = sum(r["configs"] for r in a.values() if r["not_run"])
    (wall_a, _), (wall_b, _) = runs
    lines += [f"**Wall time of the whole matrix** ({run_configs} configurations run"
              + (f", {not_run} stored as not run" if not_run else "")
              + f"; {len(names)} targets × {len(labels)} build(s); firmware already built, QEMU boots and greetings "
              f"included): {wall_a:.0f} s and {wall_b:.0f} s in two runs"
              + (f"; {sequential:.0f} s with the lanes on one CPU (speed-up {sequential / min(wall_a, wall_b):.2f}×)"
                 if sequential else "") + ".",
              f"**Determinism: {same.values:,} values compared between the two runs (every REP header field and "
              f"every record field), {same.differing} differ.**"]
    reference = libraries.load().device_build(REFERENCE_BUILD).label
    if reference not in labels or not any(a[(name, reference)]["reference"] for name in names):
        return "\n".join(lines)
    lines += ["",
              "One repetition (handshake, 1 KiB each way, close; both peers), TLS, mbed TLS 2.28, M instructions:",
              "",
              "| target | " + " | ".join(REFERENCE) + " | ECDHE-RSA ÷ ECDHE-ECDSA |",
              "|---|" + "---:|" * (len(REFERENCE) + 1)]
    both = {"ECDHE-RSA-AES128-GCM", "ECDHE-ECDSA-AES128-GCM"}
    for name in names:
        ref = a[(name, reference)]["reference"]
        ratio = f"{ref['ECDHE-RSA-AES128-GCM'] / ref['ECDHE-ECDSA-AES128-GCM']:.2f}" if both <= set(ref) else "–"
        lines.append(f"| {name} | " + " | ".join(f"{ref[k] / 1e6:.2f}" if k in ref else "–" for k in REFERENCE)
                     + f" | {ratio} |")
    if not all(both <= set(a[(name, reference)]["reference"]) for name in names):
        return "\n".join(lines)
    lines += ["", "The ranking changes with the core: an ECDHE-RSA-2048 handshake costs about what an "
              "ECDHE-ECDSA P-256 one costs on the cores with Arm's DSP extension (M4, M7, M33, M55), but more "
              "on the others. mbed TLS 2.28's bignum inner loop (bn_mul.h) is one UMAAL per word there, UMLAL "
              "on the M3, 16-bit partial products on ARMv6-M (no long multiply) and plain C on RV32IMAC."]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
