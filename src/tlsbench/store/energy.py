# SPDX-License-Identifier: Apache-2.0
"""Measured energy in the experiment's store (schema: migrations/005_energy.sql): one
capture per experiment and the energy of each of its windows. Written in one transaction
by `tlsbench energy import` (analysis/models/energy/stored.py decides what to write)."""
from __future__ import annotations

import sqlite3
from dataclasses import astuple, dataclass, fields


@dataclass(frozen=True)
class StoredCapture:
    """The `energy_capture` row."""

    id: int
    file_name: str
    format: str
    sha256: str
    options_json: str
    marker: str
    samples: int
    sample_period_s: float
    start_s: float
    end_s: float
    voltage_source: str
    voltage_v: float
    baseline_a: float
    baseline_source: str
    ref_ns: int
    offset_s: float
    rate: float
    residual_rms_s: float
    residual_max_s: float
    edges: int
    edges_skipped: int
    imported_at: str

    @property
    def label(self) -> str:
        """How every measured energy is labelled in tables, figures and exports."""
        return f"measured (capture {self.file_name})"

    @property
    def drift_ppm(self) -> float:
        return (self.rate - 1.0) * 1e6


@dataclass(frozen=True)
class WindowEnergies:
    """The `energy` rows of a capture, as columns: per (repetition, peer, label, group)."""

    rep: list[int]
    peer: list[str]  # spec peer name
    label: list[int]  # spec label id: a step, a phase or USER_GROUP
    group: list[int]  # a USER_GROUP's index in its experiment's groups, else -1
    energy_j: list[float]
    duration_ns: list[float]
    occurrences: list[int]


CAPTURE_COLUMNS = [f.name for f in fields(StoredCapture)][1:-1]  # without id and imported_at
INSERT_CAPTURE = (f"INSERT INTO energy_capture ({', '.join(CAPTURE_COLUMNS)}, imported_at) "
                  f"VALUES ({', '.join('?' * (len(CAPTURE_COLUMNS) + 1))})")
INSERT_ENERGY = ("INSERT INTO energy (capture_id, repetition_id, peer, label, group_index, energy_j, duration_ns, "
                 "occurrences) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")


def read_capture(conn: sqlite3.Connection) -> StoredCapture | None:
    """The experiment's capture, None when there is none (or the store predates energy)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'energy_capture'").fetchone():
        return None
    row = conn.execute("SELECT * FROM energy_capture ORDER BY id DESC LIMIT 1").fetchone()
    return StoredCapture(**{f.name: row[f.name] for f in fields(StoredCapture)}) if row else None


def read_energies(conn: sqlite3.Connection, capture_id: int) -> WindowEnergies:
    rows = conn.execute("SELECT repetition_id, peer, label, group_index, energy_j, duration_ns, occurrences "
                        "FROM energy WHERE capture_id = ?", (capture_id,)).fetchall()
    columns = [list(c) for c in zip(*rows)] if rows else [[] for _ in fields(WindowEnergies)]
    return WindowEnergies(*columns)


def write_capture(conn: sqlite3.Connection, capture: StoredCapture, energies: WindowEnergies, imported_at: str) -> int:
    """Replaces the stored capture (its energies cascade) with this one, inside the caller's
    transaction; returns the new capture id."""
    conn.execute("DELETE FROM energy_capture")  # one capture per experiment
    capture_id = int(conn.execute(INSERT_CAPTURE, astuple(capture)[1:-1] + (imported_at,)).lastrowid)  # type: ignore[arg-type]
    conn.executemany(INSERT_ENERGY, zip([capture_id] * len(energies.rep), *astuple(energies)))
    return capture_id
