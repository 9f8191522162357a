# SPDX-License-Identifier: Apache-2.0
"""The scheduler's tables (migration 009, run/tracefs.py): written per batch, read by
analysis/questions/sched.py. Kept apart from the repetition tables so that a store without them
reads as before."""
from __future__ import annotations

import sqlite3
from dataclasses import astuple, fields

from tlsbench.run.tracefs import AgentTotals, RepetitionRow, SchedBatch, StepRow

SCHED_TABLES = ("sched_capture", "sched_repetition", "sched_step", "sched_agent")


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


REP_COLUMNS = tuple(f.name for f in fields(RepetitionRow))
STEP_COLUMNS = tuple(f.name for f in fields(StepRow))
AGENT_COLUMNS = tuple(f.name for f in fields(AgentTotals))


def start_capture(conn: sqlite3.Connection, started_at: str, missing: str | None, facts_json: str) -> int:
    cur = conn.execute("INSERT INTO sched_capture (started_at, missing, facts_json) VALUES (?, ?, ?)",
                       (started_at, missing, facts_json))
    return int(cur.lastrowid)  # type: ignore[arg-type]


def write_batch(conn: sqlite3.Connection, capture_id: int, batch: SchedBatch, facts_json: str) -> None:
    """A batch's rows (a repeat replaces) and the capture's running facts, in the caller's transaction."""
    conn.executemany(_insert("sched_repetition", REP_COLUMNS + ("capture_id",)),
                     [astuple(r) + (capture_id,) for r in batch.repetitions])
    conn.executemany(_insert("sched_step", STEP_COLUMNS), [astuple(s) for s in batch.steps])
    conn.executemany(_insert("sched_agent", AGENT_COLUMNS), [astuple(a) for a in batch.agents])
    conn.execute("UPDATE sched_capture SET facts_json = ? WHERE id = ?", (facts_json, capture_id))


def has_tables(conn: sqlite3.Connection) -> bool:
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return set(SCHED_TABLES) <= names


def read_table(conn: sqlite3.Connection, table: str) -> list[sqlite3.Row]:
    """Every row of one of the scheduler's tables ([] in a store that predates them)."""
    assert table in SCHED_TABLES
    if not has_tables(conn):
        return []
    conn.row_factory = sqlite3.Row
    return conn.execute(f"SELECT * FROM {table}").fetchall()
