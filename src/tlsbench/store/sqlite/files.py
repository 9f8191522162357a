# SPDX-License-Identifier: Apache-2.0
"""A store file checked before anything opens it: only a healthy tlsbench store is read or
written, and checking it never writes."""
from __future__ import annotations

import sqlite3
from dataclasses import fields
from pathlib import Path

from tlsbench.core import inputs
from tlsbench.schema import Experiment
from tlsbench.store.api import StoreError
from tlsbench.store.sqlite.errors import DAMAGED, damaged, error_name
from tlsbench.store.sqlite.lock import writer
from tlsbench.store.sqlite.schema import latest

DB_FILE = "tlsbench.db"
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection. A WAL reader needs a shared-memory file next to the store; in
    a read-only folder or on a full disk SQLite cannot create it, and the store is then
    opened immutable, which is exact as long as nobody writes it and its write-ahead log
    holds nothing (else one line says what to do)."""
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(uri + "?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if not error_name(exc).startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR")):
            raise
        wal = path.with_name(path.name + "-wal")
        pid = writer(path.parent)
        if pid is not None or (wal.exists() and wal.stat().st_size):
            why = f"tlsbench PID {pid} is writing it" if pid else f"its write-ahead log {wal.name} holds commits"
            raise StoreError(f"cannot read {path}: SQLite cannot create its shared-memory file next to it (a "
                             f"read-only folder or a full disk) and {why}; free space, or copy the experiment "
                             "folder somewhere writable and read it there") from None
        conn = sqlite3.connect(uri + "?immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def experiment_row(conn: sqlite3.Connection) -> Experiment | None:
    row = conn.execute("SELECT * FROM experiment WHERE id = 1").fetchone()
    return Experiment(**{f.name: row[f.name] for f in fields(Experiment)}) if row else None


def _verify(conn: sqlite3.Connection, path: Path) -> Experiment | None:
    """The experiment row of a checked store (None: none yet); raises StoreDamaged."""
    problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise damaged(path, "SQLite finds: " + "; ".join(p.replace("\n", " ") for p in problems))
    found = tables(conn)
    if not found:  # an empty database: a start that failed before creating the schema
        return None
    if "experiment" not in found:
        raise damaged(path, f"a SQLite file without an experiment table (its tables: {', '.join(sorted(found))})")
    version, known = conn.execute("PRAGMA user_version").fetchone()[0], latest()
    if version > known:
        raise StoreError(f"{path} was written by a newer tlsbench (schema {version}, this one knows up to {known}): "
                         "upgrade tlsbench to read it")
    return experiment_row(conn)


def checked(path: Path) -> tuple[sqlite3.Connection | None, Experiment | None]:
    """A read-only connection to a checked store and its experiment (None for both: an
    empty file). Raises StoreError when there is no file, StoreDamaged for anything that is
    not a healthy tlsbench store; never writes."""
    if path.exists() and not path.is_file():  # a FIFO would block the read below for ever
        raise StoreError(f"{path} {inputs.what_is(path)}, not an experiment store: name an experiment folder, or "
                         f"the {DB_FILE} file in one")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise StoreError(f"no experiment store at {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if not head:
        return None, None
    if head != SQLITE_HEADER:
        raise damaged(path, "not a SQLite file: its first bytes are not the SQLite header")
    conn = None
    try:
        conn = connect_ro(path)
        return conn, _verify(conn, path)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        if error_name(exc).startswith(DAMAGED):
            raise damaged(path, str(exc)) from None
        raise StoreError(f"cannot read {path}: {exc}") from None
    except StoreError:
        if conn is not None:
            conn.close()
        raise


def stored_experiment(path: Path) -> Experiment | None:
    """The experiment a store file holds, None when it holds none yet (an empty file, or a
    start that failed before writing its experiment). Only reads; raises StoreDamaged for a
    file that is not a healthy tlsbench store."""
    conn, exp = checked(path)
    if conn is not None:
        conn.close()
    return exp


def open_checked(path: Path) -> sqlite3.Connection:
    """A checked read-only connection to a store that holds an experiment (readers: status,
    report, export...). Works while a run writes it, and in a read-only folder."""
    conn, exp = checked(path)
    if exp is None:
        if conn is not None:
            conn.close()
        raise StoreError(f"{path} holds no experiment yet (an empty store, left by a start that stored "
                         "nothing): `tlsbench run` starts it")
    assert conn is not None
    return conn
