# SPDX-License-Identifier: Apache-2.0
"""Read an experiment store (read-only) into arrays: the input of every analysis.

Analysis never writes to the store and never re-runs anything: a report is a pure function
of the file. Slices are derived in memory on each load (≈ 0.5 s per million events, see
docs/benchmarks.md), so no derived table can go stale and no migration is needed.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tlsbench.store.sqlite import ConfigRow, open_readonly

from .slices import Events, Slices, build_slices, decode_many
from .vocab import vocab


@dataclass(frozen=True)
class Calibration:
    """Tracer self-calibration from an agent's HELLO (docs/protocol.md)."""

    event_cost_ns: float   # mean cost of recording one event
    empty_span_ns: float   # what an empty START/STOP pair measures
    known: bool            # False: the HELLO had none, nothing is subtracted


@dataclass(frozen=True)
class Config(ConfigRow):
    """One measured configuration: a row of the `config` table with its id."""

    id: int = -1

    @property
    def label(self) -> str:
        """Short display name: the suite, plus group/credential when they vary."""
        return f"{self.suite_name} [{self.grp}, {self.credential}]"


@dataclass
class Reps:
    """The `repetition` table as arrays (one index per repetition, ordered by id)."""

    id: np.ndarray
    config_id: np.ndarray
    idx: np.ndarray
    round: np.ndarray
    agent_id: np.ndarray     # −1 when unknown
    status: np.ndarray       # spec [status] names (object array)
    flags: np.ndarray
    error_code: np.ndarray
    bytes_c2s: np.ndarray    # −1 when unknown
    bytes_s2c: np.ndarray
    dropped: np.ndarray
    handshake_wall_ns: np.ndarray
    handshake_cpu_ns: np.ndarray

    def __len__(self) -> int:
        return len(self.id)


@dataclass
class Dataset:
    """Everything one report needs from one store."""

    path: Path
    experiment: dict            # the experiment row (host_json parsed into "host")
    agents: dict[int, dict]     # agent id -> row with "hello" parsed
    configs: dict[int, Config]
    reps: Reps
    events: Events
    slices: Slices
    calib: dict[int, Calibration] = field(default_factory=dict)  # agent id -> calibration

    @property
    def name(self) -> str:
        return str(self.experiment.get("name", self.path.stem))

    def rep_index(self, rep_ids: np.ndarray) -> np.ndarray:
        """Positions in `reps` of repetition ids."""
        return np.searchsorted(self.reps.id, rep_ids)

    def start_values(self, spans: np.ndarray) -> np.ndarray:
        """The START record's value of each slice (a slice keeps its STOP's): a USER_GROUP's
        group index."""
        ev, sl = self.events, self.slices
        first = ev.rep_first[np.searchsorted(ev.rep_ids, sl.rep[spans])]
        return ev.rec["value"][first + sl.start_pos[spans]].astype(np.int64)

    def excluded_mask(self, include_flagged: bool = False) -> np.ndarray:
        """Per repetition: True when excluded from statistics (status != OK, a
        TRACE_OVERFLOW/RETRANSMITTED flag, or descheduled), unless include_flagged."""
        if include_flagged:
            return np.zeros(len(self.reps), dtype=bool)
        flagged = (self.reps.status != ok_status()) | ((self.reps.flags & excluding_flags()) != 0)
        return flagged | self.descheduled_mask()

    def descheduled_mask(self) -> np.ndarray:
        """Per repetition: True when its wall time exceeds its thread CPU time by more than
        DESCHEDULED_FRACTION (and DESCHEDULED_MIN_NS): another process or the hypervisor ran
        in the middle, so its step times hold someone else's work. Only meaningful where
        both peers run in the agent's one thread (in-memory transport), where a repetition
        never waits for anything else."""
        sl = self.slices
        in_thread = np.array([self.configs[c].transport == IN_THREAD_TRANSPORT if c in self.configs else False
                              for c in self.reps.config_id], dtype=bool)
        sel = np.flatnonzero((sl.label == vocab().role_label("repetition")) & (sl.cpu >= 0))
        lost = sl.dur[sel] - sl.cpu[sel]
        late = lost > np.maximum(DESCHEDULED_FRACTION * sl.dur[sel], DESCHEDULED_MIN_NS)
        mask = np.zeros(len(self.reps), dtype=bool)
        mask[self.rep_index(sl.rep[sel][late])] = True
        return mask & in_thread


# Timer interrupts steal a few µs per tick; a preemption steals a scheduler slice (ms).
DESCHEDULED_FRACTION = 0.02
DESCHEDULED_MIN_NS = 50_000
IN_THREAD_TRANSPORT = "memory"


def ok_status() -> str:
    """The status name a successful repetition has (value 0 in spec [status])."""
    return next(k for k, v in vocab().status.items() if v == 0)


def excluding_flags() -> int:
    """Flag bits that exclude a repetition from statistics by default."""
    f = vocab().flags
    return f["TRACE_OVERFLOW"] | f["RETRANSMITTED"]


def connect_ro(path: str | Path) -> sqlite3.Connection:
    """Open a store read-only, checked first (store/sqlite.py): a missing, empty, damaged or
    foreign file is one clear StoreError, and nothing is ever written to it."""
    return open_readonly(Path(path))


def _calibration(hello: dict) -> Calibration:
    tr = hello.get("tracer") or {}
    e, c = tr.get("empty_span_ns"), tr.get("event_cost_ns")
    if not tr.get("enabled", True) or e is None:
        return Calibration(0.0, 0.0, False)
    return Calibration(float(c if c is not None else e), float(e), True)


def _col(rows: list[sqlite3.Row], name: str, dtype, default=-1) -> np.ndarray:
    return np.array([default if r[name] is None else r[name] for r in rows], dtype=dtype)


ALL_ROWS = "1"  # an SQL condition every row meets


def _configs_where(db: sqlite3.Connection, experiments: bool | None) -> str:
    """SQL condition selecting handshake configurations, or experiment ones (the `experiment`
    column of migration 004); ALL_ROWS when the store holds only the kind asked for, or
    `experiments` is None (both kinds)."""
    if experiments is None:
        return ALL_ROWS
    if not any(col["name"] == "experiment" for col in db.execute("PRAGMA table_info(config)")):
        return "0" if experiments else ALL_ROWS  # a store from before experiments
    kind = f"experiment IS {'NOT ' if experiments else ''}NULL"
    other = db.execute(f"SELECT 1 FROM config WHERE NOT ({kind}) LIMIT 1").fetchone()
    return kind if other else ALL_ROWS


def load(path: str | Path, rep_ids: list[int] | None = None, experiments: bool | None = False) -> Dataset:
    """Load a store; ``rep_ids`` restricts the traces decoded (exports of a few reps).
    The handshake configurations and their repetitions, or with ``experiments`` those of the
    experiments (analysis/primitives.py): each analysis sees only its own kind. None loads
    both (aligning a power capture, whose marker pulses mark every repetition)."""
    db = connect_ro(path)
    where = _configs_where(db, experiments)
    mine = ALL_ROWS if where == ALL_ROWS else f"config_id IN (SELECT id FROM config WHERE {where})"
    exp = dict(db.execute("SELECT * FROM experiment").fetchone() or {})
    exp["host"] = json.loads(exp.get("host_json") or "{}")
    agents = {}
    for r in db.execute("SELECT * FROM agent ORDER BY id"):
        a = dict(r)
        a["hello"] = json.loads(a.get("hello_json") or "{}")
        agents[a["id"]] = a
    cfields = Config.__dataclass_fields__
    configs = {r["id"]: Config(**{k: r[k] for k in cfields if k in r.keys()})  # older stores lack later columns
               for r in db.execute(f"SELECT * FROM config WHERE {where} ORDER BY id")}
    rows = db.execute(f"SELECT * FROM repetition WHERE {mine} ORDER BY id").fetchall()
    reps = Reps(
        id=_col(rows, "id", np.int64), config_id=_col(rows, "config_id", np.int64),
        idx=_col(rows, "idx", np.int64), round=_col(rows, "round", np.int64),
        agent_id=_col(rows, "agent_id", np.int64),
        status=np.array([r["status"] for r in rows], dtype=object),
        flags=_col(rows, "flags", np.int64, 0), error_code=_col(rows, "error_code", np.int64, 0),
        bytes_c2s=_col(rows, "bytes_c2s", np.int64), bytes_s2c=_col(rows, "bytes_s2c", np.int64),
        dropped=_col(rows, "dropped_events", np.int64, 0),
        handshake_wall_ns=_col(rows, "handshake_wall_ns", np.int64),
        handshake_cpu_ns=_col(rows, "handshake_cpu_ns", np.int64),
    )
    traced = ALL_ROWS if mine == ALL_ROWS else f"repetition_id IN (SELECT id FROM repetition WHERE {mine})"
    q = f"SELECT repetition_id, records FROM trace WHERE {traced} ORDER BY repetition_id"
    if rep_ids is not None:
        wanted = sorted({int(r) for r in rep_ids})
        q = (f"SELECT repetition_id, records FROM trace WHERE {traced} AND "
             f"repetition_id IN ({','.join('?' * len(wanted))}) ORDER BY repetition_id")
        traces = db.execute(q, wanted).fetchall()
    else:
        traces = db.execute(q).fetchall()
    db.close()
    events = decode_many([t[1] for t in traces], [t[0] for t in traces])
    return Dataset(path=Path(path), experiment=exp, agents=agents, configs=configs, reps=reps,
                   events=events, slices=build_slices(events),
                   calib={aid: _calibration(a["hello"]) for aid, a in agents.items()})
