# SPDX-License-Identifier: Apache-2.0
import sqlite3

import pytest

from tlsbench import spec
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
                st.add_repetition(rep(cid, i, None), bytes(32 * 1000))
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
