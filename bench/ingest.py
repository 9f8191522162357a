#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ingest rate of the store: 1.2 million trace events arriving as REP frames, decoded,
validated and stored one repetition per transaction (the controller's path).
Target: ≤ 3 s.

    .venv/bin/python bench/ingest.py [--events N] [--per-rep N]
"""
from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section, writer  # noqa: E402

from tlsbench.core import spec  # noqa: E402
from tlsbench.run import protocol  # noqa: E402
from tlsbench.schema import ConfigRow, Experiment, RepetitionRow  # noqa: E402


def frames(n_reps: int, per_rep: int, config_id: int) -> bytes:
    s = spec.load()
    records = bytes(range(256)) * (per_rep * protocol.RECORD_SIZE // 256 + 1)
    records = records[:per_rep * protocol.RECORD_SIZE]
    out = io.BytesIO()
    for i in range(n_reps):
        h = protocol.RepHeader(config_id, i, s.status.OK, s.peers.none, 0, 0, per_rep, 0, 1000, 2000, i, 5, 5)
        out.write(protocol.encode_rep(h, records))
    return out.getvalue()


def ingest(stream: bytes, folder: Path) -> tuple[float, float]:
    """Returns (seconds decode+store, seconds store only)."""
    s = spec.load()
    ok = s.status.name(s.status.OK)
    with writer(folder) as st:
        st.init_experiment(Experiment("bench", "", "{}", "x", 1, "{}"))
        cid = st.upsert_config(ConfigRow("k", "mbedtls", 1, "S", "K", "A", "C", "M", "V", "V", "default",
                                         "auto", "memory", "none", 0, 1, 1))
        store_time = 0.0
        started = time.perf_counter()
        expected = 0
        for frame in protocol.FrameReader(io.BytesIO(stream)):
            rep = protocol.decode_rep(frame)
            h = rep.header
            assert (h.config_id, h.index) == (cid, expected)
            t0 = time.perf_counter()
            st.add_repetition(RepetitionRow(cid, h.index, 0, None, ok, None, h.error_code, None, h.flags,
                                            h.bytes_c2s, h.bytes_s2c, h.start_ns, h.handshake_wall_ns,
                                            h.handshake_cpu_ns, h.n_records, h.dropped), rep.records)
            store_time += time.perf_counter() - t0
            expected += 1
        total = time.perf_counter() - started
        assert st.integrity_check() == "ok"
    return total, store_time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_200_000)
    ap.add_argument("--per-rep", type=int, default=300, help="events per repetition (a handshake has ~150-400)")
    args = ap.parse_args()
    n_reps = args.events // args.per_rep
    stream = frames(n_reps, args.per_rep, config_id=1)
    with tempfile.TemporaryDirectory() as tmp:
        total, store_only = ingest(stream, Path(tmp) / "bench")
    events = n_reps * args.per_rep
    print(f"ingest: {events} events in {n_reps} repetitions: {total:.2f} s decode+validate+store "
          f"({events / total / 1e6:.2f} M events/s), store alone {store_only:.2f} s; target ≤ 3 s")
    update_section("Store ingest", f"""
Machine: {machine()}; {today()}.

| events | repetitions (transactions) | decode + validate + store | store alone | rate | target |
|---:|---:|---:|---:|---:|---:|
| {events} | {n_reps} | {total:.2f} s | {store_only:.2f} s | {events / total / 1e6:.2f} M events/s | ≤ 3 s |

REP frames (72-byte header + {args.per_rep} × 32-byte records) decoded from a byte stream,
checked like the controller does, stored one repetition per transaction (WAL,
synchronous=NORMAL) with the raw records as one blob.
Rerun: `.venv/bin/python bench/ingest.py`.
""")
    return 0 if total <= 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())
