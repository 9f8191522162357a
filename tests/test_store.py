# SPDX-License-Identifier: Apache-2.0
import random
import sqlite3

import pytest

from tlsbench.core import spec
from tlsbench.store import sqlite as store_mod
from tlsbench.store.sqlite import ConfigRow, Experiment, PlanMismatch, RepetitionRow, Store, StoreError

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
    with Store.in_folder(tmp_path / "exp") as st:
        assert st.conn.execute("PRAGMA user_version").fetchone()[0] == store_mod.migrations()[-1][0]
        assert st.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert st.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        st.init_experiment(experiment())
        agent = st.add_agent("mbedtls", "tlsbench-agent-mbedtls", 123, "{}", "{}")
        cid = st.upsert_config(config())
        assert st.upsert_config(config()) == cid  # same key, same row
        records = bytes(range(96))
        st.add_repetition(rep(cid, 0, agent), records)
        st.add_repetition(rep(cid, 1, agent, S.status.name(S.status.HANDSHAKE_FAILED)), bytes(96))
    with Store.in_folder(tmp_path / "exp", create=False) as st:  # reopened: nothing re-migrated
        row, blob = st.repetition(cid, 0)
        assert blob == records and row["status"] == OK and row["agent_id"] == agent
        assert st.done() == {cid: {0, 1}}
        assert st.repetition_counts(OK) == {cid: {"stored": 2, "failed": 1, "flagged": 0}}
        assert st.experiment().seed == 7
        assert st.integrity_check() == "ok"


def test_a_repetition_is_stored_exactly_once(tmp_path):
    with Store.in_folder(tmp_path) as st:
        st.init_experiment(experiment())
        cid = st.upsert_config(config())
        st.add_repetition(rep(cid, 0, None), b"")
        with pytest.raises(sqlite3.IntegrityError):
            st.add_repetition(rep(cid, 0, None), b"x" * 32)
        assert st.conn.execute("SELECT COUNT(*) FROM trace").fetchone()[0] == 1  # rolled back as a whole


def test_another_plan_is_refused(tmp_path):
    with Store.in_folder(tmp_path) as st:
        st.init_experiment(experiment("h1"))
        assert st.init_experiment(experiment("h1")).plan_hash == "h1"
        with pytest.raises(PlanMismatch, match="another plan"):
            st.init_experiment(experiment("h2"))


def test_unwritable_output_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot write the store"):
        Store.in_folder(blocker / "exp")


def test_missing_store_is_not_created_by_readers(tmp_path):
    with pytest.raises(StoreError, match="no experiment store"):
        Store.in_folder(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()


def test_full_disk_loses_nothing_stored(tmp_path):
    with Store.in_folder(tmp_path) as st:
        st.init_experiment(experiment())
        cid = st.upsert_config(config())
        st.add_repetition(rep(cid, 0, None), bytes(32))
        pages = st.conn.execute("PRAGMA page_count").fetchone()[0]
        st.conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # the "disk" is now nearly full
        with pytest.raises(StoreError, match="full.*safe"):
            for i in range(1, 50):
                st.add_repetition(rep(cid, i, None), random.randbytes(32 * 1000))  # random: zstd cannot shrink it
        stored = st.done()[cid]
    with Store.in_folder(tmp_path, create=False) as st:
        assert st.done()[cid] == stored and 0 in stored
        assert st.integrity_check() == "ok"


def test_a_store_of_an_older_schema_is_migrated_and_keeps_its_data(tmp_path):
    import shutil
    from pathlib import Path

    old = tmp_path / "tlsbench.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "golden.db", old)
    with sqlite3.connect(old) as conn:
        before = conn.execute("SELECT count(*), sum(n_events) FROM repetition").fetchone()
        conn.execute("PRAGMA user_version = 1")  # as stores written before migration 002
        assert "packets_c2s" not in {r[1] for r in conn.execute("PRAGMA table_info(repetition)")}
    with Store.open(old, create=False) as st:
        assert st.conn.execute("PRAGMA user_version").fetchone()[0] == store_mod.migrations()[-1][0]
        cols = {r[1] for r in st.conn.execute("PRAGMA table_info(repetition)")}
        assert {"packets_c2s", "packets_s2c", "retransmissions", "role", "repetition_wall_ns"} <= cols
        assert tuple(st.conn.execute("SELECT count(*), sum(n_events) FROM repetition").fetchone()) == tuple(before)


def test_a_damaged_file_is_refused_and_never_written(tmp_path):
    db = tmp_path / "tlsbench.db"
    with Store.open(db) as st:
        st.init_experiment(experiment())
    data = db.read_bytes()
    db.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))  # every page after the header page
    with pytest.raises(store_mod.StoreDamaged, match=r"\.recover"):
        Store.open(db)
    with pytest.raises(store_mod.StoreDamaged, match="left untouched"):
        store_mod.open_readonly(db)
    assert db.read_bytes() == data[:4096] + b"\xff" * (len(data) - 4096)


def test_a_foreign_sqlite_file_is_not_a_store(tmp_path):
    db = tmp_path / "tlsbench.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(store_mod.StoreDamaged, match="without an experiment table.*notes"):
        Store.open(db)


def test_an_empty_file_is_an_empty_store(tmp_path):
    """A 0-byte file (a start that stored nothing) holds no experiment: readers say so, a
    writer may start in it."""
    db = tmp_path / "tlsbench.db"
    db.write_bytes(b"")
    assert store_mod.stored_experiment(db) is None
    with pytest.raises(StoreError, match="holds no experiment yet"):
        store_mod.open_readonly(db)
    with Store.open(db) as st:
        assert st.init_experiment(experiment()).name == "exp"


def test_readers_do_not_migrate(tmp_path):
    import shutil
    from pathlib import Path

    old = tmp_path / "tlsbench.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "golden.db", old)
    with sqlite3.connect(old) as conn:
        conn.execute("PRAGMA user_version = 1")
    with Store.open_readonly(old) as st:
        assert st.experiment() is not None
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1


def test_stale_agent_rows_are_closed(tmp_path):
    with Store.in_folder(tmp_path) as st:
        st.init_experiment(experiment())
        done = st.add_agent("mbedtls", "a", 1, "{}", "{}")
        st.end_agent(done, "quit (exit code 0)")
        st.add_agent("mbedtls", "a", 2, "{}", "{}")  # its host was killed
        assert st.close_stale_agents("host ended without closing it") == 1
        reasons = [r["exit_reason"] for r in st.agents()]
        assert reasons == ["quit (exit code 0)", "host ended without closing it"]
        assert all(r["ended_at"] for r in st.agents())


def test_one_writer_per_folder(tmp_path):
    """The lock is per open file: a second holder, even in this process, is refused with the
    first one's PID; the lock goes with the first holder and a leftover file blocks nobody."""
    import os

    from tlsbench.store import lock

    assert lock.writer(tmp_path) is None
    with lock.writer_lock(tmp_path):
        assert (tmp_path / lock.LOCK_FILE).read_text().strip() == str(os.getpid())
        assert lock.writer(tmp_path) is None  # this process's own reads are no other writer's
        lock._HELD.clear()  # as seen from another process
        assert lock.writer(tmp_path) == str(os.getpid())
        with pytest.raises(lock.StoreBusy, match=f"PID {os.getpid()}"):
            lock.refuse_if_busy(tmp_path)
        with pytest.raises(lock.StoreBusy, match="another tlsbench"):
            with lock.writer_lock(tmp_path):
                pass
    assert (tmp_path / lock.LOCK_FILE).exists() and lock.writer(tmp_path) is None
    with lock.writer_lock(tmp_path):
        pass


def test_write_errors_name_the_cause(tmp_path):
    import errno

    full = store_mod.cannot_write(OSError(errno.ENOSPC, "No space left on device"), tmp_path / "x.db")
    read_only = store_mod.cannot_write(OSError(errno.EROFS, "Read-only file system"), tmp_path / "x.db")
    assert "disk is full" in str(full) and "run the same command again" in str(full)
    assert "read-only" in str(read_only) and "--output" in str(read_only)
    corrupt = sqlite3.DatabaseError("database disk image is malformed")
    corrupt.sqlite_errorname = "SQLITE_CORRUPT"  # as SQLite sets it
    assert isinstance(store_mod.cannot_write(corrupt, tmp_path / "x.db"), store_mod.StoreDamaged)


def test_repetition_columns_are_the_rows_in_id_order_across_reads(tmp_path, monkeypatch):
    """Columns read as text chunks hold each row's values, NULL as −1, in id order."""
    monkeypatch.setattr(store_mod, "_REPETITIONS_PER_READ", 4)  # several reads, the last one short
    with Store.in_folder(tmp_path / "exp") as st:
        st.init_experiment(experiment())
        agent = st.add_agent("mbedtls", "tlsbench-agent-mbedtls", 123, "{}", "{}")
        cids = [st.upsert_config(config(f"k{i}")) for i in range(2)]
        for idx in (3, 0, 2, 1, 4):  # ids in storing order, configurations interleaved
            for cid in cids:
                failed = S.status.name(S.status.HANDSHAKE_FAILED)
                st.add_repetition(rep(cid, idx, agent if idx % 2 else None, OK if idx != 2 else failed, n=idx), b"")
        cols = st.repetition_columns()
        rows = st.conn.execute("SELECT id, config_id, idx, agent_id, status, n_events FROM repetition ORDER BY id").fetchall()
    assert cols.id.tolist() == [r["id"] for r in rows] and len(rows) == 10
    assert cols.config_id.tolist() == [r["config_id"] for r in rows] and cols.idx.tolist() == [r["idx"] for r in rows]
    assert cols.agent_id.tolist() == [-1 if r["agent_id"] is None else r["agent_id"] for r in rows]
    assert cols.status.tolist() == [r["status"] for r in rows] and cols.n_events.tolist() == [r["n_events"] for r in rows]
    assert cols.id.dtype == "int64" and -1 in cols.agent_id
