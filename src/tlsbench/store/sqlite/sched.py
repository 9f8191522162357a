# SPDX-License-Identifier: Apache-2.0
"""The scheduler's tables (schema/tables.py SCHED_*, run/tracefs.py): written per batch, read
by analysis/questions/sched.py. Kept apart from the repetition tables so that a store
without them reads as before."""
from __future__ import annotations

import sqlite3
from dataclasses import astuple

from tlsbench.schema import SchedAgent, SchedBatch, SchedCapture, SchedRepetition, SchedStep, SchedTables
from tlsbench.schema.columns import field_names

SCHED_TABLES = ("sched_capture", "sched_repetition", "sched_step", "sched_agent")


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def start_capture(conn: sqlite3.Connection, started_at: str, missing: str | None, facts_json: str) -> int:
    cur = conn.execute("INSERT INTO sched_capture (started_at, missing, facts_json) VALUES (?, ?, ?)",
                       (started_at, missing, facts_json))
    return int(cur.lastrowid)  # type: ignore[arg-type]


def write_batch(conn: sqlite3.Connection, capture_id: int, batch: SchedBatch, facts_json: str) -> None:
    """A batch's rows (a repeat replaces) and the capture's running facts, in the caller's transaction."""
    conn.executemany(_insert("sched_repetition", field_names(SchedRepetition) + ("capture_id",)),
                     [astuple(r) + (capture_id,) for r in batch.repetitions])
    conn.executemany(_insert("sched_step", field_names(SchedStep)), [astuple(s) for s in batch.steps])
    conn.executemany(_insert("sched_agent", field_names(SchedAgent)), [astuple(a) for a in batch.agents])
    conn.execute("UPDATE sched_capture SET facts_json = ? WHERE id = ?", (facts_json, capture_id))


def has_tables(conn: sqlite3.Connection) -> bool:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return set(SCHED_TABLES) <= names


def _rows(conn: sqlite3.Connection, table: str, row: type) -> list:
    names = field_names(row)
    return [row(*r) for r in conn.execute(f"SELECT {', '.join(names)} FROM {table}")]


def read_tables(conn: sqlite3.Connection) -> SchedTables:
    """Every row of the scheduler's tables (none in a store that predates them)."""
    if not has_tables(conn):
        return SchedTables([], [], [], [])
    return SchedTables(_rows(conn, "sched_capture", SchedCapture), _rows(conn, "sched_repetition", SchedRepetition),
                       _rows(conn, "sched_step", SchedStep), _rows(conn, "sched_agent", SchedAgent))
