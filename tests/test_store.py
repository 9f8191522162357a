# SPDX-License-Identifier: Apache-2.0
"""The SQLite store (store/sqlite/): what is particular to it (its file, pragmas, migrations,
lock file); what every store must do is tests/store_contract/."""
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from tlsbench.core import spec
from tlsbench.schema import ConfigRow, Experiment, RepetitionRow
from tlsbench.store.api import PlanMismatch, StoreBusy, StoreDamaged, StoreError
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import errors, lock, testing
from tlsbench.store.sqlite import store as store_mod
from tlsbench.store.sqlite.schema import latest

GOLDEN_DB = Path(__file__).parent / "fixtures" / "golden.db"

S = spec.load()
OK = S.status.name(S.status.OK)


def experiment(plan_hash: str = "h1") -> Experiment:
    return Experiment("exp", "name = 'exp'", "{}", plan_hash, 7, "{}")


def config(key: str = "k1") -> ConfigRow:
    return ConfigRow(key, "mbedtls", 0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "ECDHE", "ECDSA",
                     "AES-128-GCM", "SHA256", "TLS1.2", "TLS1.2", "default", "ecdsa-p256", "memory", "none",
                     0, 1024, 10)


def rep(config_id: int, idx: int, agent_id: int, status: str = OK, n: int = 3) -> RepetitionRow:
    return RepetitionRow(config_id, idx, 0, agent_id, status, None, 0, None, 0, 10, 20, 1, 2, 3, n, 0)


def test_schema_version_pragmas_and_round_trip(tmp_path):
    with locate(tmp_path / "exp").writer() as st:
        assert testing.pragma(st, "user_version") == latest()
        assert testing.pragma(st, "journal_mode") == "wal"
        assert testing.pragma(st, "foreign_keys") == 1
        st.init_experiment(experiment())
        agent = st.add_agent("mbedtls", "tlsbench-agent-mbedtls", 123, "{}", "{}")
        cid = st.upsert_config(config())
        assert st.upsert_config(config()) == cid  # same key, same row
        records = bytes(range(96))
        st.add_repetition(rep(cid, 0, agent), records)
        st.add_repetition(rep(cid, 1, agent, S.status.name(S.status.HANDSHAKE_FAILED)), bytes(96))
    with locate(tmp_path / "exp").writer(create=False) as st:  # reopened: nothing re-migrated
        row, blob = st.repetition(cid, 0)
        assert blob == records and row["status"] == OK and row["agent_id"] == agent
        assert st.stored_indices() == {"k1": {0, 1}}
        assert st.repetition_counts(OK) == {cid: {"stored": 2, "failed": 1, "flagged": 0}}
        assert st.experiment().seed == 7
        assert st.integrity_check() == "ok"


def test_a_repetition_is_stored_exactly_once(tmp_path):
    with locate(tmp_path).writer() as st:
        st.init_experiment(experiment())
        cid = st.upsert_config(config())
        st.add_repetition(rep(cid, 0, None), b"")
        with pytest.raises(sqlite3.IntegrityError):
            st.add_repetition(rep(cid, 0, None), b"x" * 32)
        assert len(st.traces()) == 1  # rolled back as a whole


def test_another_plan_is_refused(tmp_path):
    with locate(tmp_path).writer() as st:
        st.init_experiment(experiment("h1"))
        assert st.init_experiment(experiment("h1")).plan_hash == "h1"
        with pytest.raises(PlanMismatch, match="another plan"):
            st.init_experiment(experiment("h2"))


def test_unwritable_output_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot write the store"):
        locate(blocker / "exp").writer()


def test_missing_store_is_not_created_by_readers(tmp_path):
    with pytest.raises(StoreError, match="no experiment store"):
        locate(tmp_path / "absent").writer(create=False)
    assert not (tmp_path / "absent").exists()


def test_full_disk_loses_nothing_stored(tmp_path):
    with locate(tmp_path).writer() as st:
        st.init_experiment(experiment())
        cid = st.upsert_config(config())
        st.add_repetition(rep(cid, 0, None), bytes(32))
        testing.nearly_full(st)  # the "disk" is now nearly full
        with pytest.raises(StoreError, match="full.*safe"):
            for i in range(1, 50):
                st.add_repetition(rep(cid, i, None), random.randbytes(32 * 1000))  # random: zstd cannot shrink it
        stored = st.stored_indices()["k1"]
    with locate(tmp_path).writer(create=False) as st:
        assert st.stored_indices()["k1"] == stored and 0 in stored
        assert st.integrity_check() == "ok"


def _counts(st) -> tuple[int, int]:
    cols = st.repetition_columns()
    return len(cols), int(cols.n_events.sum())


def test_a_store_of_an_older_schema_is_migrated_and_keeps_its_data(tmp_path):
    old = shutil.copy(GOLDEN_DB, tmp_path / "tlsbench.db")
    assert testing.pragma(old, "user_version") == 1  # as stores written before migration 002
    assert "packets_c2s" not in {c[1] for c in testing.schema(old)["repetition"]["columns"]}
    with locate(old).reader() as st:
        before = _counts(st)
    with locate(old).writer(create=False) as st:
        assert testing.pragma(st, "user_version") == latest()
        cols = {c[1] for c in testing.schema(st)["repetition"]["columns"]}
        assert {"packets_c2s", "packets_s2c", "retransmissions", "role", "repetition_wall_ns"} <= cols
        assert _counts(st) == before


def test_a_damaged_file_is_refused_and_never_written(tmp_path):
    db = tmp_path / "tlsbench.db"
    with locate(db).writer() as st:
        st.init_experiment(experiment())
    data = db.read_bytes()
    db.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))  # every page after the header page
    with pytest.raises(StoreDamaged, match=r"\.recover"):
        locate(db).writer()
    with pytest.raises(StoreDamaged, match="left untouched"):
        locate(db).reader()
    assert db.read_bytes() == data[:4096] + b"\xff" * (len(data) - 4096)


def test_a_foreign_sqlite_file_is_not_a_store(tmp_path):
    db = tmp_path / "tlsbench.db"
    testing.foreign_database(db)
    with pytest.raises(StoreDamaged, match="without an experiment table.*notes"):
        locate(db).writer()


def test_an_empty_file_is_an_empty_store(tmp_path):
    """A 0-byte file (a start that stored nothing) holds no experiment: readers say so, a
    writer may start in it."""
    db = tmp_path / "tlsbench.db"
    db.write_bytes(b"")
    assert locate(db).stored_experiment() is None
    with pytest.raises(StoreError, match="holds no experiment yet"):
        locate(db).reader()
    with locate(db).writer() as st:
        assert st.init_experiment(experiment()).name == "exp"


def test_readers_do_not_migrate(tmp_path):
    old = shutil.copy(GOLDEN_DB, tmp_path / "tlsbench.db")
    assert testing.pragma(old, "user_version") == 1
    with locate(old).reader() as st:
        assert st.experiment() is not None
    assert testing.pragma(old, "user_version") == 1


def test_stale_agent_rows_are_closed(tmp_path):
    with locate(tmp_path).writer() as st:
        st.init_experiment(experiment())
        done = st.add_agent("mbedtls", "a", 1, "{}", "{}")
        st.end_agent(done, "quit (exit code 0)")
        st.add_agent("mbedtls", "a", 2, "{}", "{}")  # its host was killed
        assert st.close_stale_agents("host ended without closing it") == 1
        reasons = [r.exit_reason for r in st.agent_rows()]
        assert reasons == ["quit (exit code 0)", "host ended without closing it"]
        assert all(r.ended_at for r in st.agent_rows())


def test_one_writer_per_folder(tmp_path):
    """The lock is per open file: a second holder, even in this process, is refused with the
    first one's PID; the lock goes with the first holder and a leftover file blocks nobody."""
    import os

    assert lock.writer(tmp_path) is None
    with lock.writer_lock(tmp_path):
        assert (tmp_path / lock.LOCK_FILE).read_text().strip() == str(os.getpid())
        assert lock.writer(tmp_path) is None  # this process's own reads are no other writer's
        lock._HELD.clear()  # as seen from another process
        assert lock.writer(tmp_path) == str(os.getpid())
        with pytest.raises(StoreBusy, match=f"PID {os.getpid()}"):
            lock.refuse_if_busy(tmp_path)
        with pytest.raises(StoreBusy, match="another tlsbench"):
            with lock.writer_lock(tmp_path):
                pass
    assert (tmp_path / lock.LOCK_FILE).exists() and lock.writer(tmp_path) is None
    with lock.writer_lock(tmp_path):
        pass


def test_write_errors_name_the_cause(tmp_path):
    import errno

    full = errors.cannot_write(OSError(errno.ENOSPC, "No space left on device"), tmp_path / "x.db")
    read_only = errors.cannot_write(OSError(errno.EROFS, "Read-only file system"), tmp_path / "x.db")
    assert "disk is full" in str(full) and "run the same command again" in str(full)
    assert "read-only" in str(read_only) and "--output" in str(read_only)
    corrupt = sqlite3.DatabaseError("database disk image is malformed")
    corrupt.sqlite_errorname = "SQLITE_CORRUPT"  # as SQLite sets it
    assert isinstance(errors.cannot_write(corrupt, tmp_path / "x.db"), StoreDamaged)


def test_repetition_columns_are_the_rows_in_id_order_across_reads(tmp_path, monkeypatch):
    """Columns read as text chunks hold each row's values, NULL as −1, in id order."""
    monkeypatch.setattr(store_mod, "_REPETITIONS_PER_READ", 4)  # several reads, the last one short
    with locate(tmp_path / "exp").writer() as st:
        st.init_experiment(experiment())
        agent = st.add_agent("mbedtls", "tlsbench-agent-mbedtls", 123, "{}", "{}")
        cids = [st.upsert_config(config(f"k{i}")) for i in range(2)]
        for idx in (3, 0, 2, 1, 4):  # ids in storing order, configurations interleaved
            for cid in cids:
                failed = S.status.name(S.status.HANDSHAKE_FAILED)
                st.add_repetition(rep(cid, idx, agent if idx % 2 else None, OK if idx != 2 else failed, n=idx), b"")
        cols = st.repetition_columns()
        ids, rows = zip(*st.repetition_rows())
    assert cols.id.tolist() == list(ids) and len(rows) == 10
    assert cols.config_id.tolist() == [r.config_id for r in rows] and cols.idx.tolist() == [r.idx for r in rows]
    assert cols.agent_id.tolist() == [-1 if r.agent_id is None else r.agent_id for r in rows]
    assert cols.status.tolist() == [r.status for r in rows] and cols.n_events.tolist() == [r.n_events for r in rows]
    assert cols.id.dtype == "int64" and -1 in cols.agent_id
