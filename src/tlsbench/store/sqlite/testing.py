# SPDX-License-Identifier: Apache-2.0
"""The few raw operations tests and benchmarks need of a SQLite store, which no command does:
read a table or a pragma for an assertion, change or drop rows to set up a case, damage or
age a file. Tables and columns are named, never written as SQL by the caller. Not for the
tool itself: what it reads and writes goes through store/api.py."""
from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any, Iterator, Mapping

from tlsbench.schema import BY_NAME
from tlsbench.store.rows import now_iso
from tlsbench.store.sqlite.blobs import decode_records, encode_records
from tlsbench.store.sqlite.schema import migrations
from tlsbench.store.sqlite.store import SqliteStore


@contextlib.contextmanager
def _connection(target: Any) -> Iterator[sqlite3.Connection]:
    """An open store's own connection, or a new one to a file (committed and closed after)."""
    if isinstance(target, SqliteStore):
        yield target.conn
        return
    conn = sqlite3.connect(Path(target), isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _known(table: str, columns: Any = ()) -> None:
    """Names are checked against the declaration (or the tables SQLite keeps itself)."""
    if table not in BY_NAME:
        raise ValueError(f"no table {table!r}")
    unknown = set(columns) - set(BY_NAME[table].names)
    if unknown:
        raise ValueError(f"{table} has no column {sorted(unknown)}")


def _where(where: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    if not where:
        return "", []
    return " WHERE " + " AND ".join(f"{k} IS ?" for k in where), list(where.values())


def rows(target: Any, table: str, where: Mapping[str, Any] | None = None, order: str = "rowid") -> list[dict]:
    """Every row of a table (those matching `where`: column -> value), as dicts, in `order`."""
    _known(table, [*(where or {}), *([order] if order != "rowid" else [])])
    clause, params = _where(where)
    with _connection(target) as conn:
        cur = conn.execute(f"SELECT * FROM {table}{clause} ORDER BY {order}", params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def update(target: Any, table: str, values: Mapping[str, Any], where: Mapping[str, Any] | None = None) -> int:
    """Sets columns of the rows matching `where`; returns how many changed."""
    _known(table, [*values, *(where or {})])
    clause, params = _where(where)
    with _connection(target) as conn:
        return conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in values)}{clause}",
                            [*values.values(), *params]).rowcount


def delete(target: Any, table: str, where: Mapping[str, Any] | None = None) -> int:
    """Drops the rows matching `where` (all without); returns how many."""
    _known(table, where or {})
    clause, params = _where(where)
    with _connection(target) as conn:
        return conn.execute(f"DELETE FROM {table}{clause}", params).rowcount


_PRAGMAS = {"user_version", "journal_mode", "foreign_keys", "page_count", "max_page_count", "integrity_check",
            "quick_check"}


def pragma(target: Any, name: str) -> Any:
    """A pragma's value (an open store's: its own connection's)."""
    assert name in _PRAGMAS, name
    with _connection(target) as conn:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]


def set_pragma(target: Any, name: str, value: int | str) -> None:
    assert name in _PRAGMAS and str(value).replace("_", "").isalnum(), (name, value)
    with _connection(target) as conn:
        conn.execute(f"PRAGMA {name} = {value}")


def nearly_full(store: SqliteStore, pages: int = 2) -> None:
    """The store's file may grow by `pages` pages more (a full disk, as SQLite sees it)."""
    set_pragma(store, "max_page_count", pragma(store, "page_count") + pages)


def single_file(path: str | Path) -> None:
    """Everything in the database file itself: the write-ahead log checkpointed, no -wal/-shm."""
    set_pragma(path, "journal_mode", "DELETE")


def foreign_database(path: str | Path) -> None:
    """A healthy SQLite file that is not a tlsbench store."""
    with _connection(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")


def at_migration(path: str | Path, version: int) -> None:
    """An empty store as migrations up to `version` left it (what an older tlsbench created)."""
    with _connection(path) as conn:
        for number, file in migrations():
            if number <= version:
                conn.executescript(f"BEGIN;\n{file.read_text()}\nPRAGMA user_version = {number};\nCOMMIT;")


def add_agent_before_017(store: SqliteStore, library: str, executable: str, pid: int | None, hello_json: str,
                         suites_json: str, device: Any = None, placement_json: str = "") -> int:
    """SqliteStore.add_agent as a tlsbench before migration 017 wrote it (no host, worker or
    version columns yet): for a test that runs a store at an older schema."""
    facts = (device.target, device.counter_unit, device.firmware_sha256, device.firmware_json) if device else (None,) * 4
    with store.transaction() as c:
        cur = c.execute("INSERT INTO agent (library, executable, pid, hello_json, suites_json, started_at, target,"
                        " counter_unit, firmware_sha256, firmware_json, placement_json)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (library, executable, pid, hello_json, suites_json, now_iso(), *facts, placement_json or None))
    return int(cur.lastrowid)  # type: ignore[arg-type]


@contextlib.contextmanager
def write_locked(path: str | Path) -> Iterator[None]:
    """Another connection holds a write transaction on the store (SQLite's own lock)."""
    with _connection(path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


def schema(target: Any) -> dict[str, Any]:
    """What SQLite says of every table: columns (PRAGMA table_info), indexes and their
    columns (index_list, index_info), foreign keys (foreign_key_list); and the version."""
    with _connection(target) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out: dict[str, Any] = {"user_version": conn.execute("PRAGMA user_version").fetchone()[0]}
        for t in names:
            indexes = {r[1]: (r[2], r[3], r[4], [c[2] for c in conn.execute("SELECT * FROM pragma_index_info(?)",
                                                                              (r[1],))])
                       for r in conn.execute("SELECT * FROM pragma_index_list(?)", (t,))}
            out[t] = {"columns": [tuple(r) for r in conn.execute("SELECT * FROM pragma_table_info(?)", (t,))],
                      "indexes": indexes,
                      "foreign_keys": sorted(tuple(r[2:]) for r in conn.execute(
                          "SELECT * FROM pragma_foreign_key_list(?)", (t,)))}
        return out


def recode_traces(path: str | Path, encode: bool) -> None:
    """Every trace and peer trace blob stored again, compressed (store/sqlite/blobs.py) or
    raw, as a store written before (or after) migration 010 holds them; the file vacuumed."""
    with _connection(path) as conn:
        conn.execute("BEGIN")
        for table in ("trace", "peer_repetition"):
            for rowid, blob, encoding in conn.execute(f"SELECT rowid, records, encoding FROM {table}").fetchall():
                raw = decode_records(blob, encoding)
                new, new_encoding = encode_records(raw) if encode else (raw, 0)
                conn.execute(f"UPDATE {table} SET records = ?, encoding = ? WHERE rowid = ?",
                             (new, new_encoding, rowid))
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")


def blob_bytes(target: Any, table: str = "trace") -> int:
    """The bytes a table's record blobs take as stored."""
    assert table in ("trace", "peer_repetition")
    with _connection(target) as conn:
        return int(conn.execute(f"SELECT coalesce(sum(length(records)), 0) FROM {table}").fetchone()[0])


def backup(source: str | Path, copy: str | Path) -> None:
    """A copy of a store made by SQLite's backup (the write-ahead log's commits included)."""
    with _connection(source) as src, _connection(copy) as dst:
        src.backup(dst)


def dump(path: str | Path) -> str:
    """The whole store as SQL text, its version first: equal dumps, equal stores."""
    with _connection(path) as conn:
        return f"{conn.execute('PRAGMA user_version').fetchone()[0]}\n" + "\n".join(conn.iterdump())


def grow(base: str | Path, target_records: int, dest: Path) -> tuple[int, int]:
    """A copy of `base` whose repetitions are replicated (new ids, indices and rounds after its
    last, their traces copied as they are) until it holds about `target_records` records;
    returns (records, repetitions). Its derived summaries are dropped."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(f"file:{base}?mode=ro", uri=True)) as src, \
            contextlib.closing(sqlite3.connect(dest)) as db:
        src.backup(db)
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'derived_batch'").fetchone():
            db.execute("DELETE FROM derived_batch")
        cols = [r[1] for r in db.execute("PRAGMA table_info(repetition)") if r[1] not in ("id", "idx", "round")]
        trace_cols = [r[1] for r in db.execute("PRAGMA table_info(trace)") if r[1] != "repetition_id"]
        max_id, max_idx, max_round = db.execute(
            "SELECT MAX(id), MAX(idx) + 1, MAX(round) + 1 FROM repetition").fetchone()
        sizes = db.execute("SELECT id, n_events FROM repetition ORDER BY id").fetchall()
        have, copy = sum(n for _, n in sizes), 1
        while have < target_records:
            need, cut = target_records - have, max_id
            if need < sum(n for _, n in sizes):  # the last copy: a prefix of the repetitions
                total = 0
                for rid, n in sizes:
                    total += n
                    if total >= need:
                        cut = rid
                        break
            shift = dict(id=copy * max_id, idx=copy * max_idx, round=copy * max_round, cut=cut)
            with db:
                db.execute(f"INSERT INTO repetition (id, idx, round, {', '.join(cols)}) SELECT id + :id, idx + :idx, "
                           f"round + :round, {', '.join(cols)} FROM repetition WHERE id <= :cut", shift)
                db.execute(f"INSERT INTO trace (repetition_id, {', '.join(trace_cols)}) SELECT repetition_id + :id, "
                           f"{', '.join(trace_cols)} FROM trace WHERE repetition_id <= :cut", shift)
            have += sum(n for rid, n in sizes if rid <= cut)
            copy += 1
        db.commit()
        records, reps = db.execute("SELECT SUM(n_events), COUNT(*) FROM repetition").fetchone()
    return int(records), int(reps)


def before_derived(store: str | Path, dest: Path, version: int) -> Path:
    """A copy of `store` as a tlsbench of schema `version` from before derived summaries
    opens it: their table dropped, its version set."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    backup(store, dest)
    with _connection(dest) as db:
        db.execute("DROP TABLE IF EXISTS derived_batch")
        db.execute(f"PRAGMA user_version = {int(version)}")
    return dest
