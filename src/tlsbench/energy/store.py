# SPDX-License-Identifier: Apache-2.0
"""Measured energy in the experiment's store (schema: store/migrations/005_energy.sql).

One capture per experiment: importing the same file with the same options again changes
nothing; another capture replaces the stored one only when asked (--replace). Everything
is written in one transaction, after the capture has been checked against the trace.
"""
from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from ..analysis.load import connect_ro
from ..analysis.measures import NO_LABEL
from ..analysis.vocab import vocab
from ..store.sqlite import Store, now_iso
from . import EnergyError
from .measure import ImportOptions, Measurement
from .table import EnergyTable, Rows, group_sum

NEW, UNCHANGED, REPLACE = "new", "unchanged", "replace"
# How to go on when the store cannot be written (the end of the error message).
RETRY = "copy the experiment folder to a writable disk with room and import there"


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


def file_sha256(path: str | Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise EnergyError(f"cannot read the capture {path}: {exc.strerror}") from None


def stored_capture(db: sqlite3.Connection) -> StoredCapture | None:
    """The experiment's capture, None when there is none (or the store predates energy)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'energy_capture'").fetchone():
        return None
    row = db.execute("SELECT * FROM energy_capture ORDER BY id DESC LIMIT 1").fetchone()
    return StoredCapture(**{f.name: row[f.name] for f in fields(StoredCapture)}) if row else None


def read_capture(store_path: Path) -> StoredCapture | None:
    db = connect_ro(store_path)
    try:
        return stored_capture(db)
    finally:
        db.close()


def prior(store_path: Path, sha256: str, opts: ImportOptions, replace: bool) -> str:
    """NEW, UNCHANGED (this file with these options is already imported) or REPLACE; refuses
    to replace another capture unless asked."""
    old = read_capture(store_path)
    if old is None:
        return NEW
    if old.sha256 == sha256 and old.options_json == opts.to_json():
        return UNCHANGED
    if not replace:
        what = "this capture with other options" if old.sha256 == sha256 else f"capture {old.file_name}"
        raise EnergyError(f"{store_path.parent.name} already holds {what} (imported {old.imported_at}); "
                          "pass --replace to replace it")
    return REPLACE


def save(store_path: Path, m: Measurement, opts: ImportOptions) -> int:
    """Writes the capture and its energies in one transaction (replacing a stored capture);
    returns the new capture id."""
    voc = vocab()
    c, f, w = m.capture, m.fit, m.windows
    row = (c.file_name, c.format, c.sha256, opts.to_json(), m.channel, len(c.t), c.sample_period, float(c.t[0]),
           float(c.t[-1]), m.voltage_source, m.voltage_v, m.baseline_a, m.baseline_source, f.ref_ns, f.offset_s,
           f.rate, f.residual_rms_s, f.residual_max_s, f.edges, f.edges_skipped, now_iso())
    cols = [x.name for x in fields(StoredCapture)][1:]
    with Store.open(store_path, create=False, retry=RETRY) as st, st.transaction() as db:
        db.execute("DELETE FROM energy_capture")  # one capture per experiment; its energies cascade
        cur = db.execute(f"INSERT INTO energy_capture ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", row)
        capture_id = int(cur.lastrowid)  # type: ignore[arg-type]
        db.executemany("INSERT INTO energy (capture_id, repetition_id, peer, label, group_index, energy_j, "
                       "duration_ns, occurrences) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       zip([capture_id] * len(w.rep), w.rep.tolist(), [voc.peer_name(p) for p in w.peer],
                           w.label.tolist(), w.group.tolist(), w.energy_j.tolist(), w.duration_ns.tolist(),
                           w.occurrences.tolist()))
    return capture_id


def measured_table(store_path: Path) -> tuple[StoredCapture, EnergyTable] | None:
    """The stored measured energies as an EnergyTable: steps, each peer's handshake (the sum
    of its steps), the HANDSHAKE and REPETITION windows. None without a capture."""
    db = connect_ro(store_path)
    try:
        cap = stored_capture(db)
        rows = db.execute("SELECT repetition_id, peer, label, energy_j FROM energy WHERE capture_id = ?",
                          (cap.id,)).fetchall() if cap else []
    finally:
        db.close()
    if cap is None:
        return None
    voc = vocab()
    rep = np.array([r[0] for r in rows], np.int64)
    peer = np.array([voc.peers.get(r[1], -1) for r in rows], np.int64)
    label = np.array([r[2] for r in rows], np.int64)
    value = np.array([r[3] for r in rows], np.float64)
    out = Rows(cap.label)
    step = voc.category_code[label] == voc.role_cat("step") if len(label) else np.zeros(0, bool)
    out.add("step", rep[step], peer[step], label[step], value[step])
    (r, p), total = group_sum([rep[step], peer[step]], value[step])
    out.add("handshake", r, p, NO_LABEL, total)
    for kind, role in (("handshake_window", "handshake"), ("repetition", "repetition")):
        sel = label == voc.role_label(role)
        out.add(kind, rep[sel], peer[sel], NO_LABEL, value[sel])
    return cap, out.table()


def measured_groups(store_path: Path) -> tuple[StoredCapture, dict[tuple[int, int], float]] | None:
    """The stored energy of every experiment group: (repetition id, group index) -> J. None
    without a capture."""
    db = connect_ro(store_path)
    try:
        cap = stored_capture(db)
        rows = db.execute("SELECT repetition_id, group_index, energy_j FROM energy WHERE capture_id = ? AND label = ?",
                          (cap.id, vocab().role_label("user_group"))).fetchall() if cap else []
    finally:
        db.close()
    return None if cap is None else (cap, {(r[0], r[1]): r[2] for r in rows})
