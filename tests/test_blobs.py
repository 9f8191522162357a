# SPDX-License-Identifier: Apache-2.0
"""Trace blobs in the store (store/sqlite/blobs.py): compressed when written, read back
exactly, and stores written before the encoding existed read as they did."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from stores import load_path
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import testing
from tlsbench.store.sqlite.blobs import RAW, ZSTD, BlobError, decode_records, encode_records
from test_store import config, experiment, rep

GOLDEN = Path(__file__).parent / "fixtures" / "golden.db"  # written at schema 1: raw blobs, no encoding column


def record(label: int, seq: int, t_ns: int, cpu_ns: int, value: int = 0) -> bytes:
    return struct.pack("<HBBIQQQ", label, 1, 2, seq, t_ns, cpu_ns, value)


def test_records_round_trip_exactly_even_when_counters_wrap_or_go_back():
    top = 2**64 - 1
    records = b"".join(record(7, s, t, c, v) for s, t, c, v in
                       [(0, 5, top, 1), (2**32 - 1, top, 0, 2), (1, 0, 7, top), (0, 3, 2, 0), (9, top - 1, 1, 5)])
    blob, encoding = encode_records(records)
    assert encoding == ZSTD and blob != records
    assert decode_records(blob, encoding) == records


def test_what_is_not_whole_records_stays_raw():
    for odd in (b"", b"abc", bytes(33)):
        blob, encoding = encode_records(odd)
        assert (blob, encoding) == (odd, RAW) and decode_records(blob, encoding) == odd


def test_a_damaged_or_unknown_blob_is_one_clear_error():
    with pytest.raises(BlobError, match="damaged"):
        decode_records(b"not zstd at all", ZSTD)
    with pytest.raises(BlobError, match="upgrade tlsbench"):
        decode_records(b"x", 99)


def old_store(tmp_path: Path) -> Path:
    db = tmp_path / "old" / "tlsbench.db"
    db.parent.mkdir()
    shutil.copy(GOLDEN, db)
    return db


def test_an_old_store_reads_unmigrated_and_migrated(tmp_path):
    db = old_store(tmp_path)
    raw = {r["repetition_id"]: r["records"] for r in testing.rows(db, "trace")}
    with locate(db).reader() as st:  # never migrated: no encoding column
        assert "encoding" not in {c[1] for c in testing.schema(db)["trace"]["columns"]}
        assert dict(st.traces()) == raw
    with locate(db).writer(create=False) as st:  # migrated: every old row is RAW
        assert {r["encoding"] for r in testing.rows(st, "trace")} == {RAW}
        assert dict(st.traces()) == raw
        rep_id, first = st.repetition_rows()[0]
        row, records = st.repetition(first.config_id, first.idx)
        assert records == raw[row["id"]] and row["id"] == rep_id


def test_a_compressed_store_reads_back_the_same_records_and_analysis(tmp_path):
    """The golden store's repetitions written again through the store (compressed), beside
    the raw original: the same records, the same decoded dataset, a fraction of the bytes."""
    raw_db = old_store(tmp_path)
    packed_db = tmp_path / "packed" / "tlsbench.db"
    packed_db.parent.mkdir()
    shutil.copy(GOLDEN, packed_db)
    with locate(packed_db).writer(create=False) as st:
        traces = st.traces()
    testing.recode_traces(packed_db, encode=True)  # as add_repetitions writes them
    assert {r["encoding"] for r in testing.rows(packed_db, "trace")} == {ZSTD}
    assert testing.blob_bytes(packed_db) * 4 < sum(len(r) for _, r in traces)
    with locate(raw_db).reader() as a, locate(packed_db).reader() as b:
        assert a.traces() == b.traces()
    before, after = load_path(raw_db), load_path(packed_db)
    assert np.array_equal(before.slices.dur, after.slices.dur) and np.array_equal(before.slices.label, after.slices.label)


def test_add_repetitions_store_compressed_blobs(tmp_path):
    records = b"".join(record(3, i, 1000 * i, 900 * i) for i in range(200))
    with locate(tmp_path).writer() as st:
        st.init_experiment(experiment())
        cid = st.upsert_config(config())
        st.add_repetition(rep(cid, 0, None), records)
        (row,) = testing.rows(st, "trace")
        assert row["encoding"] == ZSTD and len(row["records"]) < len(records) // 4
        assert st.repetition(cid, 0)[1] == records
