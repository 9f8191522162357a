#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trace blobs raw vs zstd (store/sqlite/blobs.py, issue 18): the same store's repetitions in two
copies, every blob RAW in one (as stores before migration 012) and ZSTD in the other, both
vacuumed; bytes per repetition of each, and the time `analysis.load` takes to read each,
interleaved (raw, zstd, raw, zstd...) on this shared machine; the median of each.

Target: ≤ 60 MB for the default plan's store, loading no slower than raw.

    .venv/bin/python bench/store_blobs.py STORE [--runs 5]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, reader, today, update_section, writer  # noqa: E402

from tlsbench.store.sqlite import testing  # noqa: E402


def copy_as(store: Path, folder: Path, compressed: bool) -> Path:
    """A vacuumed copy of the store (migrated) with every blob raw or compressed."""
    folder.mkdir(parents=True)
    target = folder / "tlsbench.db"
    testing.backup(store, target)
    writer(target, create=False).close()  # migrated: the encoding columns exist
    testing.recode_traces(target, encode=compressed)
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tlsbench-blobs-"))
    try:
        copies = {"raw": copy_as(args.store, work / "raw", False), "zstd": copy_as(args.store, work / "zstd", True)}
        with reader(copies["raw"]) as st:
            reps = len(st.repetition_columns())
        trace_raw, trace_zstd = (testing.blob_bytes(copies[name]) for name in ("raw", "zstd"))
        seconds: dict[str, list[float]] = {name: [] for name in copies}
        for _ in range(args.runs):
            for name, db in copies.items():  # interleaved: the machine's load hits both alike
                started = time.perf_counter()
                load_path(db)
                seconds[name].append(time.perf_counter() - started)
        size = {name: db.stat().st_size for name, db in copies.items()}
        med = {name: float(np.median(v)) for name, v in seconds.items()}
    finally:
        shutil.rmtree(work)
    body = f"""
Script: `bench/store_blobs.py` ({today()}; {machine()}; shared with other work). One store of the default
plan ({reps} repetitions), every trace blob RAW (as before migration 012) in one copy and ZSTD in the other,
both vacuumed; `analysis.load` of each, {args.runs} times interleaved, median.

| blobs | store | bytes per repetition (file) | trace blob bytes per repetition | load (median of {args.runs}) | load rate |
|---|---:|---:|---:|---:|---:|
| raw (before) | {size['raw'] / 1e6:.1f} MB | {size['raw'] / reps:,.0f} | {trace_raw / reps:,.0f} | {med['raw']:.2f} s | {reps / med['raw']:,.0f} reps/s |
| zstd (after) | {size['zstd'] / 1e6:.1f} MB | {size['zstd'] / reps:,.0f} | {trace_zstd / reps:,.0f} | {med['zstd']:.2f} s | {reps / med['zstd']:,.0f} reps/s |

Store {size['raw'] / size['zstd']:.1f}× smaller; load time zstd/raw {med['zstd'] / med['raw']:.2f}.
At this size the issue's 43,450-repetition run would have left {43450 * size['zstd'] / reps / 1e6:.0f} MB instead of 548 MB.
Rerun: `.venv/bin/python bench/store_blobs.py results/default/tlsbench.db`.
"""
    print(body)
    update_section("Trace blobs: raw vs zstd", body)
    return 0 if med["zstd"] <= med["raw"] * 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
