# SPDX-License-Identifier: Apache-2.0
"""Trace decoding and START/STOP pairing into nested slices."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis_support import TraceBuilder, golden, golden_csv  # noqa: F401
from fixtures import synth
from tlsbench.analysis.derive import slices as S
from tlsbench.analysis.vocab import vocab


def _tree():
    b = TraceBuilder()
    b.ev("HANDSHAKE", "START", "none", 0)
    b.ev("SERVER_KEY_EXCHANGE", "START", "client", 10)
    b.ev("PK_VERIFY", "START", "client", 20)
    b.ev("PK_VERIFY", "STOP", "client", 1020, 0)
    b.ev("RECV", "START", "client", 1030)
    b.ev("RECV", "STOP", "client", 1130, 329)
    b.ev("SERVER_KEY_EXCHANGE", "STOP", "client", 1150, 0)
    b.ev("HANDSHAKE", "STOP", "none", 1200)
    return b


def test_decode_rejects_partial_records():
    with pytest.raises(ValueError, match="multiple of 32"):
        S.decode(b"\0" * 33)


def test_decode_roundtrip():
    rec = S.decode(_tree().blob())
    assert len(rec) == 8 and S.encode(rec) == _tree().blob()
    assert rec["t_ns"][3] == 1020 and rec["value"][5] == 329


def test_nesting_parents_and_durations():
    sl = S.slices_of_blob(_tree().blob(), 5)
    v = vocab()
    names = [v.name(x) for x in sl.label]
    assert names == ["HANDSHAKE", "SERVER_KEY_EXCHANGE", "PK_VERIFY", "RECV"]
    assert sl.dur.tolist() == [1200, 1140, 1000, 100]
    assert sl.depth.tolist() == [0, 0, 1, 1]           # depth is per peer
    assert sl.parent.tolist() == [-1, -1, 1, 1]
    assert sl.value[3] == 329 and not sl.open.any() and set(sl.rep.tolist()) == {5}


def test_failed_handshake_leaves_open_spans_closed_at_last_timestamp():
    b = _tree()
    b.rows = b.rows[:3]  # SKE and PK_VERIFY started, trace ends (the handshake failed)
    b.ev("RECV", "START", "server", 500).ev("RECV", "STOP", "server", 700, 0)
    sl = S.slices_of_blob(b.blob(), 1)
    opened = {vocab().name(lab): bool(o) for lab, o in zip(sl.label, sl.open)}
    assert opened == {"HANDSHAKE": True, "SERVER_KEY_EXCHANGE": True, "PK_VERIFY": True, "RECV": False}
    pk = np.flatnonzero(sl.label == vocab().label_id["PK_VERIFY"])[0]
    assert sl.ts[pk] + sl.dur[pk] == 700  # the latest timestamp of the repetition
    assert 1 in sl.unbalanced_reps
    assert "OPEN" in S.format_tree(sl, 1)


def test_dropped_start_is_an_orphan_and_dropped_stop_is_closed_by_its_parent():
    b = _tree()
    rows = b.rows
    b.rows = [rows[0], rows[1], rows[2], rows[4], rows[5], rows[6], rows[7]]  # PK_VERIFY STOP lost
    sl = S.slices_of_blob(b.blob(), 2)
    pk = np.flatnonzero(sl.label == vocab().label_id["PK_VERIFY"])[0]
    assert sl.open[pk] and sl.ts[pk] + sl.dur[pk] == 1150  # closed at SKE's STOP
    b.rows = [rows[0], rows[1], rows[3], rows[4], rows[5], rows[6], rows[7]]  # PK_VERIFY START lost
    sl = S.slices_of_blob(b.blob(), 3)
    assert sl.orphan_stops == {3: 1}
    assert "without a START" in S.format_tree(sl, 3)


def test_vectorised_pairing_equals_the_stack_machine():
    rng = np.random.default_rng(0)
    blob = synth.trace(synth.SUITES[0], rng, 10**9)
    ev = S.decode_many([blob], [1])
    fast = S.build_slices(ev)
    assert not fast.unbalanced_reps
    # Force the stack machine on the same records: pair group by group.
    gid = ev.rec["peer"].astype(int)
    out = []
    for g in np.unique(gid):
        pairs, orphans = S._stack_pairs(ev, np.flatnonzero(gid == g), vocab().kinds, len(ev.rec) - 1)
        assert orphans == 0
        out += pairs
    slow = sorted((s, t, d) for s, t, d, _, o in out)
    got = sorted(zip(ev.pos[np.searchsorted(ev.pos, fast.start_pos)].tolist(), fast.stop_pos.tolist(), fast.depth.tolist()))
    assert slow == got


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 30))
def test_random_drops_never_crash_and_keep_every_start(seed, n_drop):
    rng = np.random.default_rng(seed)
    rec = S.decode(synth.trace(synth.SUITES[1], rng, 10**9))
    keep = np.sort(rng.choice(len(rec), len(rec) - min(n_drop, len(rec) - 1), replace=False))
    sub = rec[keep]
    sl = S.slices_of_blob(S.encode(sub), 9)
    starts = int(np.count_nonzero(sub["kind"] == vocab().kinds["START"]))
    assert len(sl) == starts
    assert (sl.dur >= 0).all()
    assert ((sl.parent < np.arange(len(sl))) ).all()  # parents precede children (pre-order)
    S.format_tree(sl, 9)


def test_golden_slices_of_one_repetition(golden):  # noqa: F811
    sl = golden.ds.slices
    rep = int(golden.ds.reps.id[0])
    idx = np.flatnonzero(sl.rep == rep)
    v = vocab()
    lines = ["label,peer,depth,parent_label,dur_ns,value,processing_ns"]
    for i in idx.tolist():
        p = sl.parent[i]
        lines.append(f"{v.name(sl.label[i])},{v.peer_name(sl.peer[i])},{sl.depth[i]},"
                     f"{v.name(sl.label[p]) if p >= 0 else ''},{sl.dur[i]},{sl.value[i]},"
                     f"{golden.costs.processing[i]:.1f}")
    text = "\n".join(lines) + "\n"
    assert text == golden_csv("slices_rep_first.csv", text)
