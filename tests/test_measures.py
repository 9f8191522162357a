# SPDX-License-Identifier: Apache-2.0
"""Processing, I/O, tracer overhead and the record latency types, on hand-computed traces."""
from __future__ import annotations

import numpy as np
import pytest

from analysis_support import TraceBuilder, golden, store_with_trace, synth_analysis, synth_db  # noqa: F401
from stores import load_path
from tlsbench.analysis.derive.measures import METRIC, measures, slice_costs
from tlsbench.analysis.vocab import vocab

E, C = 10.0, 5.0  # empty span, per-event cost


def _one(table, metric, peer=None):
    sel = table.metric == METRIC[metric]
    if peer is not None:
        sel &= table.peer == vocab().peers[peer]
    return table.value[sel]


@pytest.fixture()
def handshake(tmp_path):
    b = TraceBuilder()
    b.ev("HANDSHAKE", "START", "none", 0)
    b.ev("SERVER_KEY_EXCHANGE", "START", "client", 100)
    b.ev("RECV", "START", "client", 110).ev("RECV", "STOP", "client", 410, 147)      # 300 ns I/O
    b.ev("PK_VERIFY", "START", "client", 420).ev("PK_VERIFY", "STOP", "client", 1420)  # 1000 ns
    b.ev("SERVER_KEY_EXCHANGE", "STOP", "client", 1500)
    b.ev("HANDSHAKE", "STOP", "none", 2000)
    ds = load_path(store_with_trace(tmp_path / "t.db", b.blob(), C, E))
    return ds, measures(ds)


def test_step_processing_subtracts_io_and_tracer_overhead(handshake):
    ds, mt = handshake
    # SKE: 1400 ns; 4 records inside -> overhead E + 4C = 30; RECV true I/O = 300 − E = 290.
    assert _one(mt, "step", "client").tolist() == [1400 - 30 - 290]
    assert _one(mt, "step_io", "client").tolist() == [290]
    assert _one(mt, "handshake_processing", "client").tolist() == [1080]
    assert _one(mt, "handshake_overhead", "client").tolist() == [30]
    assert _one(mt, "crypto", "client").tolist() == [1000 - E]
    # HANDSHAKE: 2000 ns with 6 records inside.
    assert _one(mt, "handshake_time").tolist() == [2000 - E - 6 * C]
    assert _one(mt, "handshake_io", "client").tolist() == [290]
    assert _one(mt, "io_share") == pytest.approx([290 / 1960])
    assert _one(mt, "handshake_bytes").size == 0  # no SEND


def test_decomposition_identity_on_real_traces(golden):  # noqa: F811
    k, sl = golden.costs, golden.ds.slices
    assert np.allclose(k.processing + k.io + k.overhead, sl.dur)
    steps = sl.category == vocab().role_cat("step")
    assert (k.processing[steps] <= sl.dur[steps]).all()


def test_no_calibration_subtracts_nothing(tmp_path):
    b = TraceBuilder()
    b.ev("CLIENT_HELLO", "START", "client", 0).ev("SEND", "START", "client", 50)
    b.ev("SEND", "STOP", "client", 80, 120).ev("CLIENT_HELLO", "STOP", "client", 100)
    ds = load_path(store_with_trace(tmp_path / "t.db", b.blob(), 0.0, 0.0))
    assert _one(measures(ds), "step", "client").tolist() == [70]


def _records(tmp_path):
    b = TraceBuilder()
    # write: L1 = 0, SEND at 400..500 (L2 = 400), L3 = 600
    b.ev("RECORD_WRITE", "START", "client", 0)
    b.ev("SEND", "START", "client", 400).ev("SEND", "STOP", "client", 500, 541)
    b.ev("RECORD_WRITE", "STOP", "client", 600, 512)
    # read: a first call finds nothing (WANT_READ), the second reads header + body.
    b.ev("RECORD_READ", "START", "server", 1000)
    b.ev("RECV", "START", "server", 1010).ev("RECV", "STOP", "server", 1020, 0)
    b.ev("RECORD_READ", "STOP", "server", 1030, 0)
    b.ev("RECORD_READ", "START", "server", 2000)
    b.ev("RECV", "START", "server", 2010).ev("RECV", "STOP", "server", 2050, 5)
    b.ev("RECV", "START", "server", 2060).ev("RECV", "STOP", "server", 2100, 536)  # L2' = 2100
    b.ev("RECORD_READ", "STOP", "server", 2900, 512)                                 # L3' = 2900
    return load_path(store_with_trace(tmp_path / "r.db", b.blob(), C, E))


def test_record_write_latency_types(tmp_path):
    mt = measures(_records(tmp_path))
    # processing only: L2 − L1 − overhead of [L1, L2] (no record inside: E) = 390
    assert _one(mt, "write_processing").tolist() == [400 - E]
    # incl. post: 600 − overhead (E + 2C) − SEND true I/O (100 − E)
    assert _one(mt, "write_processing_post").tolist() == [600 - (E + 2 * C) - (100 - E)]
    # total: L3 − L1 − tracer overhead in the call
    assert _one(mt, "write_total").tolist() == [600 - (E + 2 * C)]


def test_record_overhead_is_sent_bytes_beyond_the_plaintext(tmp_path):
    b = TraceBuilder()
    # a write that first returned WANT_WRITE (nothing sent), then sent one record in two datagrams
    b.ev("RECORD_WRITE", "START", "client", 0).ev("RECORD_WRITE", "STOP", "client", 10, 0)
    b.ev("RECORD_WRITE", "START", "client", 100)
    b.ev("SEND", "START", "client", 110).ev("SEND", "STOP", "client", 120, 300)
    b.ev("SEND", "START", "client", 130).ev("SEND", "STOP", "client", 140, 229)
    b.ev("RECORD_WRITE", "STOP", "client", 200, 512)
    mt = measures(load_path(store_with_trace(tmp_path / "o.db", b.blob(), C, E)))
    assert _one(mt, "record_overhead", "client").tolist() == [300 + 229 - 512]
    assert _one(measures(_records(tmp_path)), "record_overhead").tolist() == [541 - 512]


def test_record_read_aggregates_calls(tmp_path):
    mt = measures(_records(tmp_path))
    # processing only: L3' − L2' − overhead of the window (E: no record inside)
    assert _one(mt, "read_processing").tolist() == [800 - E]
    # incl. pre: both calls' processing (call 1: 30 − (E+2C) − (10 − E); call 2: 900 − (E+4C) − (40−E) − (40−E))
    call1 = 30 - (E + 2 * C) - (10 - E)
    call2 = 900 - (E + 4 * C) - (40 - E) - (40 - E)
    assert _one(mt, "read_processing_pre").tolist() == [call1 + call2]
    # total: L3' of the last call − L1' of the first, minus the tracer time inside the calls
    assert _one(mt, "read_total").tolist() == [1900 - (E + 2 * C) - (E + 4 * C)]
    assert mt.incomplete_records == 0


def test_flagged_repetitions_are_excluded_and_counted(synth_analysis):  # noqa: F811
    a = synth_analysis
    excl = a.ds.excluded_mask()
    assert excl.sum() == a.results.context.excluded > 0
    used = sum(a.samples.used_reps.values())
    assert used + excl.sum() == len(a.ds.reps)
    row = a.results.find(1, "handshake_processing", "client")
    assert row.summary.n == a.samples.used_reps[1]
    assert row.summary.excluded == a.samples.excluded_reps[1]


@pytest.mark.parametrize("cpu_ns, descheduled", [
    (1_000_000, False),   # CPU time = wall time: ran undisturbed
    (995_000, False),     # 5 µs lost: a timer interrupt, under both thresholds
    (900_000, True),      # 100 µs lost: another process ran in the middle
])
def test_descheduled_repetitions_are_excluded_and_counted(tmp_path, cpu_ns, descheduled):
    b = TraceBuilder()
    cpu0 = 7_000_000  # the thread's CPU clock at the start (0 would mean "not read")
    b.ev("REPETITION", "START", "none", 0, cpu=cpu0)
    b.ev("HANDSHAKE", "START", "none", 10).ev("HANDSHAKE", "STOP", "none", 999_990)
    b.ev("REPETITION", "STOP", "none", 1_000_000, cpu=cpu0 + cpu_ns)
    ds = load_path(store_with_trace(tmp_path / "d.db", b.blob()))
    assert ds.descheduled_mask().tolist() == [descheduled]
    assert ds.excluded_mask().tolist() == [descheduled]
    assert ds.excluded_mask(include_flagged=True).tolist() == [False]


def test_slice_costs_vectorised_matches_a_loop(golden):  # noqa: F811
    sl, k = golden.ds.slices, slice_costs(golden.ds)
    io = vocab().role_cat("io")
    for i in range(0, len(sl), 97):  # a sample of slices: recompute by walking children
        kids = [j for j in range(len(sl)) if sl.parent[j] == i] if sl.category[i] != io else []
        direct_io = sum(sl.dur[j] - k.overhead[j] for j in kids if sl.category[j] == io)
        nested = sum(k.io[j] for j in kids if sl.category[j] != io)
        if sl.category[i] != io:
            assert k.io[i] == pytest.approx(direct_io + nested)


@pytest.mark.parametrize("target, warned", [(1e-9, True), (None, False)])
def test_configurations_above_the_plans_precision_target_are_named(tmp_path, target, warned):
    import json

    from fixtures import synth
    from tlsbench.analysis.pipeline import analyze
    from tlsbench.store.sqlite import testing

    db = synth.make_store(tmp_path / "p.db", reps=6, suites=synth.SUITES[:1])
    plan = {"precision": {"target_ci_percent": target, "max_repetitions": 6}} if target else {}
    testing.update(db, "experiment", {"plan_json": json.dumps(plan)})
    text = "\n".join(analyze(load_path(db)).results.warnings)
    assert ("above the plan's" in text and "medians of its rounds span" in text) == warned
