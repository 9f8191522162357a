# SPDX-License-Identifier: Apache-2.0
"""The SQLite store of one experiment: `<output>/<experiment name>/tlsbench.db`. It implements
every role of store/api.py (Sink, StoreReader, DerivedCache, EnergyWrites).

Schema: schema/tables.py, created or brought up to date by schema.py here. WAL +
synchronous=NORMAL: a commit costs no fsync, yet a crash of the controller (kill -9) never
corrupts the file and loses at most the batch in flight, because every batch of repetitions
is written in one transaction with its traces."""
from __future__ import annotations

import contextlib
import sqlite3
from collections import defaultdict
from dataclasses import astuple, fields, replace
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from tlsbench.schema import (AgentRow, ConfigRow, DerivedBatch, DeviceFacts, Experiment, LinkTraffic, PeerRepetition,
                             PeerTrace, RepetitionColumns, RepetitionRow, SchedBatch, SchedTables, SkippedCell,
                             StoredCapture, StoredConfig, StoredRepetition, StoredStats, TraceCounts, WindowEnergies)
from tlsbench.schema.columns import field_names
from tlsbench.schema.kinds import COLUMNS, SELECTIONS, Is
from tlsbench.store.api import RUN_RETRY, DeviceImage, Kind, Location, StoreError, device_image, plan_mismatch
from tlsbench.store.rows import now_iso, values as _values, who_measured, words as _words
from tlsbench.store.sqlite.sched import read_tables, start_capture, write_batch
from tlsbench.store.sqlite.blobs import counts_values, decode_records, encode_records, raw_counts
from tlsbench.store.sqlite.energy import read_capture, read_energies, write_capture
from tlsbench.store.sqlite.errors import cannot_write, damaged
from tlsbench.store.sqlite.files import experiment_row


def _insert(table: str, columns: Sequence[str], verb: str = "INSERT") -> str:
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


_INSERT_PEER = _insert("peer_repetition", ["repetition_id", *field_names(PeerRepetition), "encoding"])
_RECORDS_AT = field_names(PeerRepetition).index("records")
_INSERT_TRACE = "INSERT INTO trace (repetition_id, records, encoding) VALUES (?, ?, ?)"
_INSERT_COUNTS = _insert("trace_counts", ["repetition_id", *field_names(TraceCounts)])
_INSERT_LINK = (f"INSERT OR REPLACE INTO link_traffic (repetition_id, {', '.join(field_names(LinkTraffic))}) "
                f"SELECT id, {', '.join('?' * len(field_names(LinkTraffic)))} FROM repetition "
                "WHERE config_id = ? AND idx = ?")
_INSERT_CONFIG = _insert("config", field_names(ConfigRow))
_INSERT_REP = _insert("repetition", [*field_names(RepetitionRow), "stored_at"])
_INSERT_EXPERIMENT = _insert("experiment", ["id", *field_names(Experiment)])


# Which configurations a kind covers (a fixed condition, never a value), per schema: handshakes
# on the host, on a device (its counting image) and the device's memory image (footprint,
# migration 007); experiments (004). Older schemas lack the columns: what they cannot hold is "0".
_IDS_PER_QUERY = 500  # below every SQLite build's limit of bound parameters
_REPETITIONS_PER_READ = 250_000  # a read's text per column: a few MB


def _test_sql(column: str, test: Is) -> str:
    if test.value is None:
        return f"{column} IS {'NOT ' if test.negate else ''}NULL"
    assert "'" not in str(test.value)  # a constant of schema/kinds.py
    return f"{column} {'IS NOT' if test.negate else '='} '{test.value}'"


def _all_of(tests: Mapping[str, Is], columns: set[str]) -> str | None:
    """The SQL of a kind's column tests (None: no row can hold it). A column an older schema
    lacks reads as NULL: a test it passes drops out, one it fails rules the kind out."""
    parts = []
    for column, test in tests.items():
        if column in columns:
            parts.append(_test_sql(column, test))
        elif not test.holds(None):
            return None
    return " AND ".join(parts)


def _any_of(conditions: Sequence[str | None]) -> str:
    found = [c for c in conditions if c is not None]
    if "" in found:
        return ""
    return " OR ".join(f"({c})" for c in found) if len(found) > 1 else (found[0] if found else "0")


def _peer_trace(row: Sequence[Any]) -> PeerTrace:
    """A PeerTrace from (repetition id, agent id, role, blob, encoding)."""
    return PeerTrace(row[0], row[1], row[2], decode_records(row[3], row[4]))


def _trace_row(rep_id: int, records: bytes) -> tuple[int, bytes, int]:
    return (rep_id, *encode_records(records))


def _peer_row(rep_id: int, peer: PeerRepetition) -> tuple[Any, ...]:
    """A peer_repetition row, its records encoded (blobs.py) and their encoding last."""
    values = list(_values(peer))
    values[_RECORDS_AT], encoding = encode_records(peer.records)
    return (rep_id, *values, encoding)


class SqliteStore:
    """One open experiment database (store/api.py: a Store opened for writing, or a
    StoreReader opened read-only), opened by its location (location.py)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, location: Location, retry: str = RUN_RETRY):
        self.conn = conn
        self.path = path
        self.location = location
        self.retry = retry  # what to do after a failed write (the end of its error message)
        self.worker: str | None = None  # the fleet worker writing through it (agent.worker), if any

    def reopened(self) -> "SqliteStore":
        """For reading only, without checking the file again (the check reads all of it)."""
        return self.location.reader(check=False)  # type: ignore[return-value]

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN ... COMMIT, or ROLLBACK on any exception (also KeyboardInterrupt)."""
        try:
            self.conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise cannot_write(exc, self.path, self.retry) from exc
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException as exc:
            # SQLite may have rolled back already; and a Ctrl-C that lands in the `with` machinery
            # leaves this generator to be closed after the connection: nothing to roll back then.
            with contextlib.suppress(sqlite3.Error):
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise cannot_write(exc, self.path, self.retry) from exc
            raise

    # ------------------------------------------------------------------ writing
    def experiment(self) -> Experiment | None:
        return experiment_row(self.conn)

    def init_experiment(self, exp: Experiment) -> Experiment:
        """Creates the experiment row, or checks that the stored one has the same plan."""
        stored = self.experiment()
        if stored is not None:
            if stored.plan_hash != exp.plan_hash:
                raise plan_mismatch(self.path.parent, stored, exp.plan_hash)
            return stored
        with self.transaction() as c:
            c.execute(_INSERT_EXPERIMENT, (1, *_values(replace(exp, created_at=now_iso()))))
        return self.experiment()  # type: ignore[return-value]

    def add_agent(self, library: str, executable: str, pid: int | None, hello_json: str, suites_json: str,
                  device: DeviceFacts | None = None, placement_json: str = "") -> int:
        """An agent process, or a boot of a firmware on a device (with what it is: 007), and
        where it ran (008)."""
        facts = astuple(device) if device else (None,) * len(fields(DeviceFacts))
        with self.transaction() as c:
            cur = c.execute("INSERT INTO agent (library, executable, pid, hello_json, suites_json, started_at, target,"
                            " counter_unit, firmware_sha256, firmware_json, placement_json, host, worker, tool_version)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (library, executable, pid, hello_json, suites_json, now_iso(), *facts,
                             placement_json or None, *who_measured(self.worker)))
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def set_agent_clock(self, agent_id: int, clock_json: str) -> None:
        """What the agent's clock checks after its RUNs said so far (run/topologies/single.py ClockRecord)."""
        with self.transaction() as c:
            c.execute("UPDATE agent SET clock_json = ? WHERE id = ?", (clock_json, agent_id))

    def end_agent(self, agent_id: int, reason: str) -> None:
        """Best effort: when the disk refuses (full), the row stays open and the next run
        closes it (close_stale_agents); the repetitions already stored are what counts."""
        try:
            with self.transaction() as c:
                c.execute("UPDATE agent SET ended_at = ?, exit_reason = ? WHERE id = ?", (now_iso(), reason, agent_id))
        except StoreError:
            pass

    def close_stale_agents(self, reason: str) -> int:
        """Ends the agent rows a host left open (killed before it could close them); only
        the holder of the writer lock may call it, so no open row belongs to a live host."""
        with self.transaction() as c:
            return c.execute("UPDATE agent SET ended_at = ?, exit_reason = ? WHERE ended_at IS NULL",
                             (now_iso(), reason)).rowcount

    def upsert_config(self, row: ConfigRow) -> int:
        """The id of the config with this key, inserting it if new."""
        found = self.conn.execute("SELECT id FROM config WHERE key = ?", (row.key,)).fetchone()
        if found:
            return int(found[0])
        with self.transaction() as c:
            cur = c.execute(_INSERT_CONFIG, _values(row)[:len(field_names(ConfigRow))])
        return int(cur.lastrowid)  # type: ignore[arg-type]

    def set_skip_reason(self, config_id: int, reason: str | None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE config SET skip_reason = ? WHERE id = ?", (reason, config_id))

    def set_skipped_cells(self, cells: Sequence[SkippedCell]) -> None:
        """The matrix cells the plan's resolution left out, replacing those stored (a resume
        resolves the same plan again), in one transaction."""
        with self.transaction() as c:
            c.execute("DELETE FROM skipped_cell")
            c.executemany("INSERT OR REPLACE INTO skipped_cell (cell, reason) VALUES (?, ?)",
                          [(s.cell, s.reason) for s in cells])

    def add_repetition(self, rep: RepetitionRow, records: bytes) -> int:
        """Stores one repetition and its raw trace records in one transaction."""
        with self.transaction() as c:
            cur = c.execute(_INSERT_REP, astuple(rep) + (now_iso(),))
            rep_id = cur.lastrowid
            c.execute(_INSERT_TRACE, _trace_row(rep_id, records))  # type: ignore[arg-type]
        return int(rep_id)  # type: ignore[arg-type]

    def add_repetitions(self, reps: Sequence[StoredRepetition]) -> None:
        """A batch's repetitions (each with its trace, and its peer's REP in a two-process run)
        in one transaction: a kill loses the batch being stored, never part of it."""
        stored_at = now_iso()
        with self.transaction() as c:
            c.executemany(_INSERT_REP, [_values(rep.row) + (stored_at,) for rep in reps])
            ids = {}
            for config_id in {rep.row.config_id for rep in reps}:
                idx = [rep.row.idx for rep in reps if rep.row.config_id == config_id]
                ids.update(((config_id, i), rep_id) for i, rep_id in c.execute(
                    "SELECT idx, id FROM repetition WHERE config_id = ? AND idx BETWEEN ? AND ?",
                    (config_id, min(idx), max(idx))))
            rep_ids = [ids[(rep.row.config_id, rep.row.idx)] for rep in reps]
            c.executemany(_INSERT_TRACE, [_trace_row(rep_id, rep.records) for rep_id, rep in zip(rep_ids, reps)])
            c.executemany(_INSERT_PEER, [_peer_row(rep_id, rep.peer) for rep_id, rep in zip(rep_ids, reps)
                                         if rep.peer is not None])
            counted = [(rep_id, *counts_values(rep.counts)) for rep_id, rep in zip(rep_ids, reps)
                       if rep.counts is not None]
            if counted:  # a run without the cycle model's plugin never touches its table (a store before 018)
                c.executemany(_INSERT_COUNTS, counted)

    def add_link_traffic(self, config_id: int, traffic: Mapping[int, LinkTraffic]) -> None:
        """A batch's link traffic by repetition index, in one transaction; a repeat replaces."""
        with self.transaction() as c:
            c.executemany(_INSERT_LINK, [astuple(t) + (config_id, idx) for idx, t in sorted(traffic.items())])

    def start_sched_capture(self, missing: str | None, facts_json: str) -> int:
        """A run's scheduler capture (sched.py), or why there is none."""
        with self.transaction() as c:
            return start_capture(c, now_iso(), missing, facts_json)

    def add_sched(self, capture_id: int, batch: SchedBatch, facts_json: str) -> None:
        """A batch's scheduler figures, in one transaction."""
        with self.transaction() as c:
            write_batch(c, capture_id, batch, facts_json)

    def save_capture(self, capture: StoredCapture, energies: WindowEnergies) -> int:
        """An energy capture and its window energies, replacing the stored one, in one
        transaction (energy.py); returns the capture id."""
        with self.transaction() as c:
            return write_capture(c, capture, energies, now_iso())

    # ------------------------------------------------------------------ reading
    def stored_indices(self) -> dict[str, set[int]]:
        """config key -> repetition indices already stored: what a resume skips."""
        out: dict[str, set[int]] = defaultdict(set)
        for key, idx in self.conn.execute("SELECT c.key, r.idx FROM repetition r JOIN config c ON c.id = r.config_id"):
            out[key].add(idx)
        return dict(out)

    def repetition_counts(self, ok_status: str) -> dict[int, dict[str, int]]:
        """Per config: stored, failed (status other than ok_status), flagged (flags != 0)."""
        rows = self.conn.execute(
            "SELECT config_id, COUNT(*), SUM(status != ?), SUM(flags != 0) FROM repetition GROUP BY config_id",
            (ok_status,))
        return {r[0]: {"stored": r[1], "failed": r[2], "flagged": r[3]} for r in rows}

    def stored_per_round(self) -> dict[int, int]:
        return dict(self.conn.execute("SELECT round, COUNT(*) FROM repetition GROUP BY round").fetchall())

    def repetition(self, config_id: int, idx: int) -> tuple[Mapping[str, Any], bytes] | None:
        """One repetition row (by column name) and its raw trace records."""
        row = self.conn.execute(
            f"SELECT r.*, t.records, {self._encoding('trace', 't')} AS encoding FROM repetition r"
            " LEFT JOIN trace t ON t.repetition_id = r.id WHERE r.config_id = ? AND r.idx = ?",
            (config_id, idx)).fetchone()
        if row is None:
            return None
        return row, decode_records(row["records"], row["encoding"])

    def repetition_rows(self, config_id: int | None = None) -> list[tuple[int, RepetitionRow]]:
        """(id, row) of every repetition (of one configuration), by id; an older store's
        missing columns read as their defaults."""
        columns = self._columns("repetition")
        names = [n if n in columns else "NULL" for n in field_names(RepetitionRow)]
        where, params = (" WHERE config_id = ?", (config_id,)) if config_id is not None else ("", ())
        return [(r[0], RepetitionRow(*r[1:])) for r in self.conn.execute(
            f"SELECT id, {', '.join(names)} FROM repetition{where} ORDER BY id", params)]

    def sched_tables(self) -> SchedTables:
        return read_tables(self.conn)

    # ------------------------------------------------------------------ StoreReader (store/api.py)
    def _columns(self, table: str) -> set[str]:
        return {col["name"] for col in self.conn.execute("SELECT name FROM pragma_table_info(?)", (table,))}

    def _encoding(self, table: str, alias: str) -> str:
        """The blob encoding column of a table (blobs.py); 0 (RAW) before migration 010."""
        return f"{alias}.encoding" if "encoding" in self._columns(table) else "0"

    def _kind_filter(self, kind: Kind) -> str:
        """A fixed condition on `config` for a selection of kinds (schema/kinds.py: never a value,
        a choice among constants); "" holds for every row, "0" for none."""
        if kind == "all":
            return ""
        columns = self._columns("config")
        return _any_of([_all_of(COLUMNS[k], columns) for k in SELECTIONS[kind]])

    def agent_rows(self) -> list[AgentRow]:
        """Older stores lack later columns: they keep their defaults."""
        names = [f.name for f in fields(AgentRow)]
        return [AgentRow(**{n: r[n] for n in names if n in r.keys()})
                for r in self.conn.execute("SELECT * FROM agent ORDER BY id")]

    def devices(self) -> list[DeviceImage]:
        """The firmware images the experiment ran, one per (target, image), with how often
        each was booted; none for a host experiment (or a store from before 007)."""
        if "firmware_sha256" not in self._columns("agent"):
            return []
        rows = self.conn.execute(
            "SELECT target, counter_unit, firmware_sha256, firmware_json, COUNT(*) AS boots FROM agent"
            " WHERE target IS NOT NULL GROUP BY target, counter_unit, firmware_sha256, firmware_json ORDER BY MIN(id)")
        return [device_image(r["target"], r["counter_unit"], r["firmware_sha256"], r["firmware_json"], r["boots"])
                for r in rows]

    def skipped_cells(self) -> list[SkippedCell]:
        """The matrix cells the run left out, and why (none in a store from before migration 016)."""
        if not self._columns("skipped_cell"):
            return []
        return [SkippedCell(*r) for r in self.conn.execute("SELECT cell, reason FROM skipped_cell ORDER BY cell")]

    def config_rows(self, kind: Kind = "all") -> list[StoredConfig]:
        """Older stores lack later columns: they keep their defaults."""
        where = self._kind_filter(kind)
        rows = self.conn.execute("SELECT * FROM config" + (f" WHERE {where}" if where else "") + " ORDER BY id")
        names = [f.name for f in fields(StoredConfig)]
        return [StoredConfig(**{n: r[n] for n in names if n in r.keys()}) for r in rows]

    def _of_kind(self, kind: Kind, column: str) -> str:
        where = self._kind_filter(kind)
        return f" WHERE {column} IN (SELECT id FROM config WHERE {where})" if where else ""

    def repetition_columns(self, kind: Kind = "all") -> RepetitionColumns:
        """SQLite writes each column of a chunk of rows as one text that numpy parses (in C):
        a Python row per repetition cost 10 µs, 4 s for a long run's 430,000."""
        names = [f.name for f in fields(RepetitionColumns)]
        texts = [f"group_concat(coalesce({n}, -1))" if n != "status" else "group_concat(status)" for n in names]
        where = self._of_kind(kind, "+config_id")  # "+": a scan in id order, not the (config_id, idx) index and a sort
        query = (f"SELECT count(*), max(id), {', '.join(texts)} FROM (SELECT {', '.join(names)} FROM repetition"
                 + (where + " AND" if where else " WHERE") + " id > ? ORDER BY id LIMIT ?)")
        chunks: list[list[np.ndarray]] = []
        after = -1
        while True:
            n, after, *columns = self.conn.execute(query, (after, _REPETITIONS_PER_READ)).fetchone()
            if not n:
                break
            chunk = [_words(text) if name == "status" else np.fromstring(text, dtype=np.int64, sep=",")
                     for name, text in zip(names, columns)]
            if any(len(column) != n for column in chunk):
                raise damaged(self.path, "its repetition table holds values tlsbench does not write")
            chunks.append(chunk)
        merged = [np.concatenate([c[i] for c in chunks]) if chunks else np.empty(0, object if name == "status" else np.int64)
                  for i, name in enumerate(names)]
        order = np.argsort(merged[0], kind="stable")  # group_concat's order is its rows' in practice, not by contract
        return RepetitionColumns(*(column[order] for column in merged))

    def traces(self, kind: Kind = "all", rep_ids: Sequence[int] | None = None) -> list[tuple[int, bytes]]:
        """(repetition id, raw records) in id order; with `rep_ids`, only those."""
        mine = self._of_kind(kind, "config_id")
        query = (f"SELECT t.repetition_id, t.records, {self._encoding('trace', 't')} FROM trace t"
                 " JOIN repetition r ON r.id = t.repetition_id" + mine.replace("config_id", "r.config_id"))
        if rep_ids is None:
            return [(r[0], decode_records(r[1], r[2])) for r in self.conn.execute(query + " ORDER BY t.repetition_id")]
        wanted = sorted({int(r) for r in rep_ids})
        joiner = " AND " if mine else " WHERE "
        out: list[tuple[int, bytes]] = []
        for start in range(0, len(wanted), _IDS_PER_QUERY):  # bound parameters, a chunk at a time
            chunk = wanted[start:start + _IDS_PER_QUERY]
            out += [(r[0], decode_records(r[1], r[2])) for r in self.conn.execute(
                query + joiner + f"t.repetition_id IN ({', '.join('?' * len(chunk))}) ORDER BY t.repetition_id",
                chunk)]
        return out

    def repetition_ids(self, config_keys: Sequence[str]) -> list[int]:
        return [row[0] for key in config_keys for row in self.conn.execute(
            "SELECT r.id FROM repetition r JOIN config c ON c.id = r.config_id WHERE c.key = ?", (key,))]

    def has_experiments(self) -> bool:
        return self.has("experiments")

    def has(self, kind: Kind) -> bool:
        """Whether the store holds configurations of a kind (none a schema cannot hold)."""
        where = self._kind_filter(kind)
        if where == "0":
            return False
        return self.conn.execute("SELECT 1 FROM config" + (f" WHERE {where}" if where else "")
                                 + " LIMIT 1").fetchone() is not None

    def link_traffic(self) -> dict[int, LinkTraffic]:
        """repetition id -> what the link carried (none in a store from before 003_network.sql)."""
        if not self._columns("link_traffic"):
            return {}
        names = [f.name for f in fields(LinkTraffic)]
        return {r[0]: LinkTraffic(*r[1:]) for r in self.conn.execute(
            f"SELECT repetition_id, {', '.join(names)} FROM link_traffic ORDER BY repetition_id")}

    def trace_counts(self) -> dict[int, TraceCounts]:
        """Each device repetition's class counts of its records (or why it has none), by
        repetition id, the counts raw (none in a store from before 018_trace_counts.sql)."""
        if not self._columns("trace_counts"):
            return {}
        return {r[0]: TraceCounts(r[1], r[2], raw_counts(r[3], r[2]), r[4]) for r in self.conn.execute(
            f"SELECT repetition_id, {', '.join(field_names(TraceCounts))} FROM trace_counts ORDER BY repetition_id")}

    def peer_traces(self, rep_ids: Sequence[int] | None = None) -> list[PeerTrace]:
        """The peer agents' traces of two-process repetitions, in repetition order (none in a
        store from before 003_network.sql); with `rep_ids`, only those."""
        if not self._columns("peer_repetition"):
            return []
        query = f"SELECT repetition_id, agent_id, role, records, {self._encoding('peer_repetition', 'p')} FROM peer_repetition p"
        if rep_ids is None:
            return [_peer_trace(r) for r in self.conn.execute(query + " ORDER BY repetition_id")]
        wanted = sorted({int(r) for r in rep_ids})
        out: list[PeerTrace] = []
        for start in range(0, len(wanted), _IDS_PER_QUERY):  # bound parameters, a chunk at a time
            chunk = wanted[start:start + _IDS_PER_QUERY]
            out += [_peer_trace(r) for r in self.conn.execute(
                query + f" WHERE repetition_id IN ({', '.join('?' * len(chunk))}) ORDER BY repetition_id", chunk)]
        return out

    def derived_batches(self, kind: Kind = "all", version: int | None = None, config_id: int | None = None,
                        measures: bool = True) -> Iterator[DerivedBatch]:
        """The derived batches (migrations 012, 013) of a kind of configurations, by first
        repetition; with `version`, only those that version wrote, with `config_id` only that
        configuration's (none in an older store); without `measures`, their measure blobs
        empty (not even read)."""
        columns = self._columns("derived_batch")
        if not columns:
            return
        names = ["X'' AS measures" if f.name == "measures" and not measures else
                 f.name if f.name in columns else f"NULL AS {f.name}" for f in fields(DerivedBatch)]
        where, params = ["kind = ?"], [kind]
        for column, value in (("version", version), ("config_id", config_id)):  # indexed (migration 013)
            if value is not None:
                if column not in columns:
                    return
                where.append(f"{column} = ?")
                params.append(value)
        yield from (DerivedBatch(*r) for r in self.conn.execute(
            f"SELECT {', '.join(names)} FROM derived_batch WHERE {' AND '.join(where)} ORDER BY first_rep", params))

    def derived_stats(self, kind: Kind) -> dict[int, StoredStats]:
        """Each configuration's stored statistics (migration 014; none in an older store)."""
        if not self._columns("derived_stats"):
            return {}
        return {r[0]: StoredStats(*r) for r in self.conn.execute(
            "SELECT config_id, digest, n_rows, rows FROM derived_stats WHERE kind = ?", (kind,))}

    def put_derived_stats(self, kind: Kind, stats: Sequence[StoredStats]) -> None:
        """Stores configurations' statistics in one transaction (replacing what they had)."""
        with self.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO derived_stats (kind, config_id, digest, n_rows, rows) "
                             "VALUES (?, ?, ?, ?, ?)", [(kind, *_values(s)) for s in stats])

    def add_derived_batches(self, batches: Sequence[DerivedBatch]) -> None:
        """Stores derived batches in one transaction; a batch of the same kind, version,
        configuration and first repetition is replaced, never doubled (migration 015)."""
        names = [f.name for f in fields(DerivedBatch)]
        with self.transaction() as conn:
            conn.executemany(_insert("derived_batch", names, "INSERT OR REPLACE"), [_values(b) for b in batches])

    def drop_derived(self, keep_version: int | None = None, kind: Kind | None = None) -> None:
        """Drops the derived batches (but those `keep_version` wrote; with `kind`, only that
        kind's), and without `keep_version` the statistics computed from them: rebuilt from
        the records."""
        of_kind, params = (" AND kind = ?", [kind]) if kind else ("", [])
        with self.transaction() as conn:
            conn.execute("DELETE FROM derived_batch WHERE version IS NOT ?" + of_kind, [keep_version, *params])
            if keep_version is None:
                conn.execute("DELETE FROM derived_stats WHERE 1" + of_kind, params)

    def energy_capture(self) -> StoredCapture | None:
        return read_capture(self.conn)

    def window_energies(self, capture_id: int) -> WindowEnergies:
        return read_energies(self.conn, capture_id)

    def integrity_check(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    def __enter__(self) -> "SqliteStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
