# SPDX-License-Identifier: Apache-2.0
"""Analysis as the store grows: time and peak memory of `tlsbench derive`, `report` and
`export` on stores of 1×, 4×, 10× and 16× the default experiment's records (16 M), and the
slope of peak memory against records. `derive` stores every repetition's summaries and
every configuration's statistics (what `tlsbench run` does when a sweep ends); `report` and
`export` read them; the last column is a report that computes every statistic itself (the
stored statistics dropped from the store first), as one with other inputs would.

The stores are grown from a real one (the default plan run by the mbed TLS agent, or
--base): its repetitions are replicated with new ids, indices and rounds (rounds after
its last, as a longer run would add), their traces copied as they are; so every trace is
a real one. Each command runs in a fresh process; its peak memory is the largest PSS of it
and its analysis workers together (sampled), at least wait4's ru_maxrss. `report` and
`export` run twice, timed alone and then sampled: sampling costs CPU; `derive` and the
report computing its statistics run once, sampled.
Targets (docs/benchmarks.md): report of 16 M records ≤ 10 s and ≤ 1 GB; 160 M ≤ 60 s and
≤ 2 GB. Updates the "Analysis at scale" section.

    .venv/bin/python bench/analysis_scale.py [--base STORE] [--factors 1 4 10 16] [--work DIR]
        [--before SRC] [--no-update]

--before SRC also times `report` at 1× with another source tree's tlsbench (e.g. an export
of the commit before derived summaries: `git archive <commit> src spec | tar -x -C SRC`).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench.store.sqlite import testing  # noqa: E402

DEFAULT_RECORDS = 16_000_000  # the default experiment's records on a busy machine (issue 20)
TARGETS = {16_000_000: (10.0, 1 << 30), 160_000_000: (60.0, 2 << 30)}  # records -> (s, bytes)


@dataclass
class Measured:
    seconds: float     # wall
    cpu_seconds: float  # user + system: what a shared machine's wall time hides
    peak_bytes: int
    ok: bool


def tree_pss(pid: int) -> int:
    """The proportional set size of a process and its children (its analysis workers), in
    bytes: a page the forked workers share with their parent counts once, not once each."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total = int(line.split()[1]) * 1024
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += sum(tree_pss(int(c)) for c in (task / "children").read_text().split())
    except (OSError, ValueError):
        pass  # it ended meanwhile
    return total


def child(args: list[str], env: dict | None = None, sampled: bool = True) -> Measured:
    """Runs a command in a fresh process: wall and CPU time (its workers' too) and its peak
    memory: the largest PSS of it and its workers together (`sampled` every 20 ms), at least
    the RSS high-water mark of the largest of them (wait4)."""
    started = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]

    def sample() -> None:
        while sampled and proc.returncode is None and os.path.exists(f"/proc/{proc.pid}/task"):
            peak[0] = max(peak[0], tree_pss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.join()
    err = " ".join((proc.stderr.read().decode(errors="replace") if proc.stderr else "").split())
    if proc.returncode:
        print(f"  {' '.join(args[2:4])}: exit {proc.returncode}: {err[-300:]}", file=sys.stderr)
    return Measured(seconds, usage.ru_utime + usage.ru_stime, max(peak[0], usage.ru_maxrss * 1024), proc.returncode == 0)


def timed_then_sized(args: list[str], env: dict | None = None) -> Measured:
    """A command that writes nothing, run twice: timed alone, then sampled for its peak memory
    (reading the page tables of three processes every 20 ms costs CPU the command then lacks)."""
    timed = child(args, env, sampled=False)
    sized = child(args, env)
    print(f"  {' '.join(args[3:5])}: {timed.seconds:.1f} s alone, {sized.seconds:.1f} s sampled", file=sys.stderr)
    return Measured(timed.seconds, timed.cpu_seconds, sized.peak_bytes, timed.ok and sized.ok)


def tlsbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "tlsbench.cli", *args]


def default_store(work: Path) -> Path:
    """The default plan, run by `tlsbench run` (minutes)."""
    subprocess.run(tlsbench("run", "--output", str(work / "base")), check=True)
    return work / "base" / "default" / "tlsbench.db"


def as_schema_of(tree: Path, store: Path, dest: Path) -> Path:
    """A copy of `store` an earlier tlsbench (source tree `tree`) opens: the migrations it
    does not know (only derived summaries here) undone."""
    found = [*(tree / "src" / "tlsbench" / "store").glob("migrations/[0-9]*.sql"),
             *(tree / "src" / "tlsbench" / "store").glob("sqlite/migrations/[0-9]*.sql")]
    return testing.before_derived(store, dest, max(int(f.name[:3]) for f in found))


def gb(n: int) -> str:
    return f"{n / 2**30:.2f} GB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="a real store to grow (default: run the default plan first)")
    ap.add_argument("--factors", type=int, nargs="+", default=[1, 4, 10, 16])
    ap.add_argument("--work", type=Path, help="folder for the grown stores (default: a temporary folder)")
    ap.add_argument("--before", type=Path, help="a source tree of an earlier tlsbench: its `report` at 1× too")
    ap.add_argument("--keep", action="store_true", help="keep the grown stores")
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="tlsbench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    base = args.base or default_store(work)
    rows, points = [], []
    for factor in args.factors:
        store = work / f"x{factor}" / "tlsbench.db"
        free = shutil.disk_usage(work).free
        if free < 48 * DEFAULT_RECORDS * factor:  # records and their summaries, with room to spare
            rows.append((factor, f"| {factor}× | skipped: {gb(free)} free on disk | | | | | | | | |"))
            continue
        t0 = time.monotonic()
        records, reps = testing.grow(base, DEFAULT_RECORDS * factor, store)
        grown = time.monotonic() - t0
        raw = store.stat().st_size
        print(f"{factor}×: {records} records, {reps} repetitions ({grown:.0f} s to grow)", file=sys.stderr)
        before = None
        if args.before and factor == 1:
            env = {**os.environ, "PYTHONPATH": str(args.before / "src")}
            old = as_schema_of(args.before, store, work / "before" / "tlsbench.db")
            before = timed_then_sized(tlsbench("report", str(old), "--out", str(work / "before.html")), env)
            shutil.rmtree(old.parent)
        derive = child(tlsbench("derive", str(store)))
        report = timed_then_sized(tlsbench("report", str(store), "--out", str(work / f"x{factor}.html")))
        export = timed_then_sized(tlsbench("export", str(store), "--format", "csv", "--out", str(work / f"x{factor}.csv")))
        derived_bytes = store.stat().st_size - raw
        testing.delete(store, "derived_stats")  # what a report with other inputs computes itself
        cold = child(tlsbench("report", str(store), "--out", str(work / f"x{factor}-cold.html")))
        points.append((records, report.peak_bytes, export.peak_bytes, cold.peak_bytes))
        cell = lambda m: (f"{m.seconds:.1f} s ({m.cpu_seconds:.1f} s CPU), {gb(m.peak_bytes)}"  # noqa: E731
                          + ("" if m.ok else " (failed)"))
        rows.append((factor, f"| {factor}× | {records:,} | {reps:,} | {raw / 2**20:,.0f} MB + {derived_bytes / 2**20:,.0f} MB "
                             f"| {cell(derive)} | {cell(report)} | {cell(export)} | {cell(cold)} "
                             f"| {cell(before) if before else ''} |"))
        print(rows[-1][1], file=sys.stderr)
        if not args.keep:
            shutil.rmtree(store.parent)
    slope = ""
    if len(points) >= 2:
        import numpy as np

        r = np.array(points, dtype=float)
        per = [np.polyfit(r[:, 0], r[:, i], 1)[0] for i in (1, 2, 3)]
        slope = (f"Slope of peak memory against records (least squares over the rows above): report "
                 f"{per[0]:.2f} bytes per record, export {per[1]:.2f}, report computing its statistics {per[2]:.2f}.")
    body = "\n".join([
        f"Script: `bench/analysis_scale.py` ({today()}; {machine()}).",
        f"Stores grown from a real run of the default plan ({base.name}: its repetitions replicated with new ids, "
        "indices and rounds); each command in a fresh process. `derive` summarises every repetition and computes "
        "every configuration's statistics once (as `tlsbench run` does when a sweep ends); `report` and `export` "
        "then read them; the report computing its statistics is one with the stored statistics dropped (what a "
        "report with other inputs, e.g. --include-flagged, does).",
        "",
        "Each cell: wall time (CPU time: user + system, its worker processes included), peak memory (the largest "
        "PSS of the command and its forked workers together, sampled every 20 ms: pages they share count once; "
        "`report` and `export` are timed in a run of their own, unsampled). The machine is shared: wall times include waiting for a CPU; CPU times are what the command itself cost.",
        "",
        "| size | records | repetitions | store: records + derived | `derive` | `report` | `export` (csv) "
        "| `report` computing its statistics | `report` before (no summaries) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(row for _, row in sorted(rows)),  # by size, whatever order they ran in
        "",
        slope,
        "Targets: report of 16 M records ≤ 10 s and ≤ 1 GB; 160 M ≤ 60 s and ≤ 2 GB.",
        "Rerun: `.venv/bin/python bench/analysis_scale.py --base STORE`.",
    ])
    print(body)
    if not args.no_update:
        update_section("Analysis at scale", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
