# SPDX-License-Identifier: Apache-2.0
"""Measured energy in the experiment's store (schema/tables.py ENERGY_CAPTURE, ENERGY): one
capture per experiment and the energy of each of its windows. Written in one transaction
by `tlsbench energy import` (analysis/models/energy/stored.py decides what to write)."""
from __future__ import annotations

import sqlite3
from dataclasses import astuple, fields

from tlsbench.schema import StoredCapture, WindowEnergies, WindowEnergy
from tlsbench.schema.columns import field_names

CAPTURE_COLUMNS = field_names(StoredCapture)[1:-1]  # without id and imported_at
INSERT_CAPTURE = (f"INSERT INTO energy_capture ({', '.join(CAPTURE_COLUMNS)}, imported_at) "
                  f"VALUES ({', '.join('?' * (len(CAPTURE_COLUMNS) + 1))})")
INSERT_ENERGY = (f"INSERT INTO energy ({', '.join(field_names(WindowEnergy))}) "
                 f"VALUES ({', '.join('?' * len(field_names(WindowEnergy)))})")


def read_capture(conn: sqlite3.Connection) -> StoredCapture | None:
    """The experiment's capture, None when there is none (or the store predates energy)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'energy_capture'").fetchone():
        return None
    row = conn.execute("SELECT * FROM energy_capture ORDER BY id DESC LIMIT 1").fetchone()
    return StoredCapture(**{f.name: row[f.name] for f in fields(StoredCapture)}) if row else None


def read_energies(conn: sqlite3.Connection, capture_id: int) -> WindowEnergies:
    rows = conn.execute(f"SELECT {', '.join(field_names(WindowEnergies))} FROM energy WHERE capture_id = ?",
                        (capture_id,)).fetchall()
    columns = [list(c) for c in zip(*rows)] if rows else [[] for _ in fields(WindowEnergies)]
    return WindowEnergies(*columns)


def write_capture(conn: sqlite3.Connection, capture: StoredCapture, energies: WindowEnergies, imported_at: str) -> int:
    """Replaces the stored capture (its energies cascade) with this one, inside the caller's
    transaction; returns the new capture id."""
    conn.execute("DELETE FROM energy_capture")  # one capture per experiment
    cur = conn.execute(INSERT_CAPTURE, astuple(capture)[1:-1] + (imported_at,))
    capture_id = int(cur.lastrowid)  # type: ignore[arg-type]
    conn.executemany(INSERT_ENERGY, zip([capture_id] * len(energies.repetition_id), *astuple(energies)))
    return capture_id
