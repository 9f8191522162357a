# SPDX-License-Identifier: Apache-2.0
"""Report generation time for a store of ~1.2 million trace events (target ≤ 10 s).

Default: a synthetic store (tests/fixtures/synth.py: the agent's trace structure, 4 suites).
--real: a real store instead, run by the mbed TLS agent through the host tool (needs the
agent built). Times `tlsbench report` end to end in a fresh process (imports included),
then the phases in-process. Updates the "Report generation" section of docs/benchmarks.md.

    .venv/bin/python bench/report_speed.py [--real] [--events 1200000] [--no-update]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import machine, reader, today, update_section  # noqa: E402

TARGET_S = 10.0
SYNTH_EVENTS_PER_REP = 171  # tests/fixtures/synth.py with 4 records of 1000 B
REAL_PLAN = """name = "bench"
library = "mbedtls"
suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256",
          "TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]
repetitions = {reps}
rounds = 10
warmup = 1
seed = 1
[payload]
total_bytes = 4096
record_size = 1024
direction = "both"
"""


def synthetic_store(folder: Path, events: int) -> Path:
    from fixtures import synth

    reps = max(1, round(events / SYNTH_EVENTS_PER_REP / len(synth.SUITES)))
    return synth.make_store(folder / "tlsbench.db", reps=reps, seed=1, fail_every=101, retransmit_every=211)


def real_store(folder: Path, events: int) -> Path:
    per_rep = 257  # measured: handshake + 8 records (4 each way) with the mbed TLS agent
    plan = folder / "bench.toml"
    plan.write_text(REAL_PLAN.format(reps=max(10, round(events / per_rep / 4 / 10) * 10)))
    subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(folder)], check=True)
    return folder / "bench" / "tlsbench.db"


def count(store: Path) -> tuple[int, int]:
    with reader(store) as st:
        cols = st.repetition_columns()
    return int(cols.n_events.sum()), len(cols)


def phases(store: Path) -> dict[str, float]:
    from _common import load_path
    from tlsbench.analysis.pipeline import analyze
    from tlsbench.report.html import build_html

    t = {}
    t0 = time.perf_counter()
    ds = load_path(store)
    t["load + slices"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    a = analyze(ds)
    t["measures + statistics"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_html(a)
    t["figures + HTML"] = time.perf_counter() - t0
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_200_000)
    ap.add_argument("--real", action="store_true", help="a real agent store instead of the synthetic one")
    ap.add_argument("--no-update", action="store_true", help="do not write docs/benchmarks.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = real_store(folder, args.events) if args.real else synthetic_store(folder, args.events)
        n_ev, n_rep = count(store)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tlsbench.cli", "report", str(store), "--out", str(folder / "r.html")],
                       check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        size = (folder / "r.html").stat().st_size
        ph = phases(store)
    kind = "real (mbed TLS agent, 4 suites, 4 records of 1 KiB each way)" if args.real else "synthetic (4 suites)"
    print(f"{kind}: {n_ev} events, {n_rep} repetitions: report in {wall:.2f} s (target ≤ {TARGET_S:.0f} s); "
          + ", ".join(f"{k} {v:.2f} s" for k, v in ph.items()))
    if not args.no_update:
        row = (f"| {kind} | {n_ev} | {n_rep} | {wall:.2f} s | " + " | ".join(f"{v:.2f} s" for v in ph.values())
               + f" | {size / 1e6:.1f} MB | ≤ {TARGET_S:.0f} s |")
        update_section("Report generation" + (" (real store)" if args.real else ""), f"""
Machine: {machine()}; {today()}.

| store | events | repetitions | `tlsbench report` (fresh process) | load + slices | measures + statistics | figures + HTML | HTML size | target |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
{row}

The end-to-end time includes Python start-up and imports (numpy, scipy, matplotlib); the
phases are measured again in-process. The store holds no derived summaries: load derives
them in memory a batch at a time (`tlsbench derive` would store them: "Analysis at scale").
Rerun: `.venv/bin/python bench/report_speed.py{' --real' if args.real else ''}`.
""")
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
