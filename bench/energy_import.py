#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What importing a power capture costs: `tlsbench energy import` wall time and peak memory
over capture size. A real experiment (the mbed TLS agent, its marker edges recorded by the
posix port) gets synthetic Joulescope captures of growing length (idle lead before and after
the run, as a capture started early and stopped late has), each imported in a fresh process.

Targets: at least 1 M samples/s, and at most 200 bytes of memory per sample above the
process's start-up (docs/energy.md states both).

    .venv/bin/python bench/energy_import.py
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
from _common import load_path, machine, today, update_section  # noqa: E402
from energy_support import Model, run_marked, synthesize, write_joulescope  # noqa: E402


RATE = 2e6
LEADS_S = (0.05, 0.5, 2.0)  # idle capture on each side of the run: 0.2 M to 8 M samples
PLAN = ('name = "energy-bench"\nrepetitions = 20\nrounds = 1\nwarmup = 1\n'
        'suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n')
MIN_SAMPLES_PER_S = 1e6
MAX_BYTES_PER_SAMPLE = 200
# Peak RSS of a child process that imports a capture, or only starts the CLI (the baseline).
# VmHWM, not getrusage: Linux carries ru_maxrss over fork and exec, so a child would report
# this script's own size (its synthetic arrays) as its peak.
PEAK_RSS = ("import re, sys\nfrom pathlib import Path\nfrom tlsbench.cli import main\n"
            "if sys.argv[1:]:\n    main(sys.argv[1:], standalone_mode=False)\n"
            "kb = re.search(r'VmHWM:\\s*(\\d+)', Path('/proc/self/status').read_text())[1]\n"
            "print(int(kb) * 1024, file=sys.stderr)")


def peak_rss(args: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of the CLI run with `args` in a fresh process."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], check=True, capture_output=True, text=True)
    return time.monotonic() - started, int(done.stderr.strip().splitlines()[-1])


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="tlsbench-energy-"))
    folder, edges = run_marked(PLAN, root, Path(sys.executable).parent)  # agents sit next to the interpreter
    ds = load_path(folder / "tlsbench.db")
    start_s, baseline = peak_rss([])
    rows, worst_rate, worst_bytes = [], float("inf"), 0.0
    for lead in LEADS_S:
        s = synthesize(ds, Model(sample_rate_hz=RATE, lead_s=lead), marker_ns=edges)
        capture = write_joulescope(s, root / f"capture-{lead:g}.csv")
        seconds, rss = peak_rss(["energy", "import", str(capture), "--experiment", str(folder), "--replace"])
        samples = len(s.t)
        rate, per_sample = samples / (seconds - start_s), (rss - baseline) / samples
        worst_rate, worst_bytes = min(worst_rate, rate), max(worst_bytes, per_sample)
        rows.append(f"| {samples / 1e6:.2f} M | {capture.stat().st_size / 1e6:.0f} MB | {seconds:.2f} s | "
                    f"{rate / 1e6:.2f} M/s | {rss / 1e6:.0f} MB | {per_sample:.0f} B |")
    body = f"""
Script: `bench/energy_import.py` ({today()}; {machine()}).
`tlsbench energy import` of synthetic Joulescope CSV captures at {RATE / 1e6:g} MS/s of a real run
({len(ds.reps)} repetitions of ECDHE-ECDSA, mbed TLS agent, its own marker edges), longer captures
holding more idle time around the run. Each import runs in a fresh process; the process's
start-up ({start_s:.2f} s, {baseline / 1e6:.0f} MB: Python, numpy and the CLI) is subtracted from the rate
and the memory per sample.

| samples | file | wall (incl. start-up) | samples/s | peak RSS | RSS per sample above start-up |
|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

Targets: ≥ {MIN_SAMPLES_PER_S / 1e6:g} M samples/s and ≤ {MAX_BYTES_PER_SAMPLE} B per sample. Rerun:
`.venv/bin/python bench/energy_import.py`.
"""
    shutil.rmtree(root)  # the captures are hundreds of MB
    print(body)
    update_section("Energy import", body)
    return 0 if worst_rate >= MIN_SAMPLES_PER_S and worst_bytes <= MAX_BYTES_PER_SAMPLE else 1


if __name__ == "__main__":
    sys.exit(main())
