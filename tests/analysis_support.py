# SPDX-License-Identifier: Apache-2.0
"""Fixtures shared by the analysis/report/export tests (imported by those test modules)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fixtures import synth
from stores import load_path
from tlsbench.analysis.pipeline import analyze
from tlsbench.analysis.derive.slices import RECORD_DTYPE
from tlsbench.analysis.vocab import vocab

HERE = Path(__file__).parent
GOLDEN_DB = HERE / "fixtures" / "golden.db"
GOLDEN_DIR = HERE / "golden"
REGEN = os.environ.get("TLSBENCH_REGEN_GOLDEN") == "1"


@pytest.fixture(scope="session")
def golden():
    """The analysis of the committed real store (mbed TLS agent + host tool)."""
    return analyze(load_path(GOLDEN_DB))


@pytest.fixture(scope="session")
def synth_db(tmp_path_factory) -> Path:
    """A synthetic store with failed and retransmitted repetitions."""
    return synth.make_store(tmp_path_factory.mktemp("synth") / "tlsbench.db", reps=15, seed=3,
                            fail_every=9, retransmit_every=13)


@pytest.fixture(scope="session")
def synth_analysis(synth_db):
    return analyze(load_path(synth_db))


class TraceBuilder:
    """Hand-written traces with exact timestamps, for unit tests."""

    def __init__(self):
        self.rows: list[tuple] = []
        self.v = vocab()

    def ev(self, label: str, kind: str, peer: str, t: int, value: int = 0, cpu: int = 0) -> "TraceBuilder":
        self.rows.append((self.v.label_id[label], self.v.kinds[kind], self.v.peers[peer], len(self.rows),
                          t, cpu, value & (2**64 - 1)))
        return self

    def blob(self) -> bytes:
        return np.array(self.rows, dtype=RECORD_DTYPE).tobytes()


def golden_csv(name: str, text: str) -> str:
    """The expected CSV (written when TLSBENCH_REGEN_GOLDEN=1)."""
    path = GOLDEN_DIR / name
    if REGEN:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text)
    return path.read_text()


def store_with_trace(path: Path, blob: bytes, event_cost_ns: float = 5.0, empty_span_ns: float = 10.0) -> Path:
    """A one-repetition store (schema as the host writes it) holding a hand-written trace."""
    import json

    from tlsbench.store.sqlite import testing

    synth.make_store(path, reps=1, suites=synth.SUITES[:1])
    hello = dict(synth.HELLO, tracer=dict(synth.HELLO["tracer"], event_cost_ns=event_cost_ns,
                                          empty_span_ns=empty_span_ns))
    testing.update(path, "trace", {"records": blob, "encoding": 0})  # stored as it came (uncompressed)
    testing.update(path, "repetition", {"n_events": len(blob) // 32})
    testing.update(path, "agent", {"hello_json": json.dumps(hello)})
    return path
