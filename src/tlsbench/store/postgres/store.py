# SPDX-License-Identifier: Apache-2.0
"""An experiment in a PostgreSQL database: every role of store/api.py (Sink, StoreReader,
DerivedCache, EnergyWrites) over one connection, every statement bound to the experiment's id
(schema.py: every row is keyed by it). The same rows as the SQLite store, the same blob
encoding (store/sqlite/blobs.py), the same transactions: a batch of repetitions is stored
whole or not at all. A fleet's worker stores each repetition in its own transaction instead,
once (`add_repetition_once`), so a batch handed out twice never stores one twice."""
from __future__ import annotations

import contextlib
from dataclasses import astuple, fields, replace
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from tlsbench.schema import (AgentRow, ConfigRow, DerivedBatch, DeviceFacts, Experiment, LinkTraffic, PeerRepetition,
                             PeerTrace, RepetitionColumns, RepetitionRow, SchedAgent, SchedBatch, SchedCapture,
                             SchedRepetition, SchedStep, SchedTables, SkippedCell, StoredCapture, StoredConfig,
                             StoredRepetition, StoredStats, TraceCounts, WindowEnergies, WindowEnergy)
from tlsbench.schema.columns import field_names
from tlsbench.schema.kinds import COLUMNS, SELECTIONS, Is
from tlsbench.store.api import RUN_RETRY, DeviceImage, Kind, StoreError, device_image, plan_mismatch
from tlsbench.store.postgres.schema import ALL_TABLES, NEXT_ID, assigned_id
from tlsbench.store.postgres.connection import Connected, columns_of, experiment_row, version_of
from tlsbench.store.rows import now_iso, values, who_measured, words
from tlsbench.store.sqlite.blobs import counts_values, decode_records, encode_records, raw_counts

_REP = field_names(RepetitionRow)
_PEER = field_names(PeerRepetition)
_RECORDS_AT = _PEER.index("records")


def _columns(names: Sequence[str]) -> str:
    return ", ".join(names)


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


ASSIGNED = {t.name for t in ALL_TABLES if assigned_id(t) and t.keyed}  # ids counted per experiment


def _insert(table: str, names: Sequence[str], conflict: str = "", returning: str = "") -> str:
    """An INSERT of (experiment_id, *names); the tables whose id the store assigns get the
    experiment's next (schema.py NEXT_ID)."""
    if table in ASSIGNED:
        head = (f"WITH x AS (SELECT %s::bigint AS e) INSERT INTO {table} (experiment_id, id, {_columns(names)}) "
                f"SELECT e, {NEXT_ID}(e, '{table}'), {_marks(len(names))} FROM x")
    else:
        head = f"INSERT INTO {table} (experiment_id, {_columns(names)}) VALUES ({_marks(len(names) + 1)})"
    return head + (f" {conflict}" if conflict else "") + (f" RETURNING {returning}" if returning else "")


def _upsert(key: Sequence[str], names: Sequence[str]) -> str:
    """ON CONFLICT on the key: the other columns replaced (SQLite's INSERT OR REPLACE)."""
    rest = [n for n in names if n not in key]
    return (f"ON CONFLICT (experiment_id, {_columns(key)}) DO UPDATE SET "
            + ", ".join(f"{n} = EXCLUDED.{n}" for n in rest))


_INSERT_REP = _insert("repetition", [*_REP, "stored_at"], returning="id")
_INSERT_REP_ONCE = _insert("repetition", [*_REP, "stored_at"], "ON CONFLICT (experiment_id, config_id, idx) DO NOTHING",
                           "id")
_INSERT_TRACE = _insert("trace", ["repetition_id", "records", "encoding"])
_INSERT_PEER = _insert("peer_repetition", ["repetition_id", *_PEER, "encoding"])
_INSERT_COUNTS = _insert("trace_counts", ["repetition_id", *field_names(TraceCounts)])
_SCHED = {"sched_repetition": (field_names(SchedRepetition) + ("capture_id",), ("config_id", "idx")),
          "sched_step": (field_names(SchedStep), ("config_id", "idx", "peer", "label", "occurrence")),
          "sched_agent": (field_names(SchedAgent), ("agent_id",))}


def _test_sql(column: str, test: Is) -> str:
    if test.value is None:
        return f"{column} IS {'NOT ' if test.negate else ''}NULL"
    assert "'" not in str(test.value)  # a constant of schema/kinds.py
    return f"{column} {'IS DISTINCT FROM' if test.negate else '='} '{test.value}'"


def kind_filter(kind: Kind) -> str:
    """A fixed condition on `config` for a selection of kinds (a choice among constants,
    never a value); "" holds for every row."""
    if kind == "all":
        return ""
    return " OR ".join("(" + " AND ".join(_test_sql(c, t) for c, t in COLUMNS[k].items()) + ")"
                       for k in SELECTIONS[kind])


def _peer_row(rep_id: int, peer: PeerRepetition) -> tuple[Any, ...]:
    row = list(values(peer))
    row[_RECORDS_AT], encoding = encode_records(peer.records)
    return (rep_id, *row, encoding)


class PostgresStore(Connected):
    """One experiment of a PostgreSQL store, opened for writing or (a read-only session) for
    reading, by its location (location.py). `experiment_id` is None until init_experiment."""

    def __init__(self, conn: Any, location: Any, experiment_id: int | None, retry: str = RUN_RETRY):
        super().__init__(conn, location, retry)
        self.experiment_id = experiment_id
        self.worker: str | None = None  # the fleet worker writing through it (agent.worker), if any

    @property
    def eid(self) -> int:
        """The experiment's id; before init_experiment none, and every read finds no row."""
        return -1 if self.experiment_id is None else self.experiment_id

    def reopened(self) -> "PostgresStore":
        return self.location.reader(check=False)

    def _all(self, query: str, *params: Any) -> list[tuple]:
        return self.conn.execute(query, params).fetchall()

    def _one(self, query: str, *params: Any) -> tuple | None:
        return self.conn.execute(query, params).fetchone()

    # ------------------------------------------------------------------ writing (Sink)
    def experiment(self) -> Experiment | None:
        found = experiment_row(self.conn, self.location.name)
        return found[1] if found else None

    def init_experiment(self, exp: Experiment) -> Experiment:
        """Creates the experiment row under the location's name, or checks that the stored
        one has the same plan."""
        stored = self.experiment()
        if stored is None:
            names = field_names(Experiment)
            with self.transaction() as c:
                c.execute(f"INSERT INTO experiment ({_columns(names)}) VALUES ({_marks(len(names))}) "
                          "ON CONFLICT (name) DO NOTHING",
                          values(replace(exp, name=self.location.name, created_at=now_iso())))
            stored = self.experiment()
        assert stored is not None
        if stored.plan_hash != exp.plan_hash:
            raise plan_mismatch(self.location, stored, exp.plan_hash)
        self.experiment_id = int(self._one("SELECT id FROM experiment WHERE name = %s", self.location.name)[0])
        return stored

    def add_agent(self, library: str, executable: str, pid: int | None, hello_json: str, suites_json: str,
                  device: DeviceFacts | None = None, placement_json: str = "") -> int:
        facts = astuple(device) if device else (None,) * len(fields(DeviceFacts))
        names = ["library", "executable", "pid", "hello_json", "suites_json", "started_at", *field_names(DeviceFacts),
                 "placement_json", "host", "worker", "tool_version"]
        with self.transaction() as c:
            return int(c.execute(_insert("agent", names, returning="id"),
                                 (self.eid, library, executable, pid, hello_json, suites_json, now_iso(), *facts,
                                  placement_json or None, *who_measured(self.worker))).fetchone()[0])

    def set_agent_clock(self, agent_id: int, clock_json: str) -> None:
        with self.transaction() as c:
            c.execute("UPDATE agent SET clock_json = %s WHERE id = %s AND experiment_id = %s",
                      (clock_json, agent_id, self.eid))

    def end_agent(self, agent_id: int, reason: str) -> None:
        with contextlib.suppress(StoreError):
            with self.transaction() as c:
                c.execute("UPDATE agent SET ended_at = %s, exit_reason = %s WHERE id = %s AND experiment_id = %s",
                          (now_iso(), reason, agent_id, self.eid))

    def close_stale_agents(self, reason: str) -> int:
        """Ends the agent rows this host's earlier runs left open (agents of other hosts and
        workers of the fleet are theirs to close)."""
        with self.transaction() as c:
            return c.execute("UPDATE agent SET ended_at = %s, exit_reason = %s WHERE experiment_id = %s AND "
                             "ended_at IS NULL AND host IS NOT DISTINCT FROM %s AND worker IS NOT DISTINCT FROM %s",
                             (now_iso(), reason, self.eid, who_measured(None)[0], self.worker)).rowcount

    def upsert_config(self, row: ConfigRow) -> int:
        names = field_names(ConfigRow)
        select = "SELECT id FROM config WHERE experiment_id = %s AND key = %s"
        found = self._one(select, self.eid, row.key)  # first: an insert that conflicts would spend an id
        if found is None:
            with self.transaction() as c:
                found = c.execute(_insert("config", names, "ON CONFLICT (experiment_id, key) DO NOTHING", "id"),
                                  (self.eid, *values(row))).fetchone() or c.execute(select, (self.eid, row.key)).fetchone()
        return int(found[0])

    def set_skip_reason(self, config_id: int, reason: str | None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE config SET skip_reason = %s WHERE id = %s AND experiment_id = %s",
                      (reason, config_id, self.eid))

    def set_skipped_cells(self, cells: Sequence[SkippedCell]) -> None:
        with self.transaction() as c:
            c.execute("DELETE FROM skipped_cell WHERE experiment_id = %s", (self.eid,))
            with c.cursor() as cur:
                cur.executemany(_insert("skipped_cell", ["cell", "reason"], "ON CONFLICT DO NOTHING"),
                                [(self.eid, s.cell, s.reason) for s in cells])

    def _store_one(self, c: Any, rep: StoredRepetition, stored_at: str, once: bool = False) -> int | None:
        found = c.execute(_INSERT_REP_ONCE if once else _INSERT_REP,
                          (self.eid, *values(rep.row), stored_at)).fetchone()
        if found is None:
            return None
        rep_id = int(found[0])
        c.execute(_INSERT_TRACE, (self.eid, rep_id, *encode_records(rep.records)))
        if rep.peer is not None:
            c.execute(_INSERT_PEER, (self.eid, *_peer_row(rep_id, rep.peer)))
        if rep.counts is not None:
            c.execute(_INSERT_COUNTS, (self.eid, rep_id, *counts_values(rep.counts)))
        return rep_id

    def add_repetition(self, rep: RepetitionRow, records: bytes) -> int:
        with self.transaction() as c:
            return self._store_one(c, StoredRepetition(rep, records), now_iso())  # type: ignore[return-value]

    def add_repetitions(self, reps: Sequence[StoredRepetition]) -> None:
        """A batch in one transaction: a repetition stored before refuses the whole batch."""
        stored_at = now_iso()
        with self.transaction() as c:
            for rep in reps:
                self._store_one(c, rep, stored_at)

    def add_repetition_once(self, rep: StoredRepetition) -> bool:
        """One repetition in its own transaction, unless it is stored already (another worker
        ran the same batch after this one's lease ran out): whether this call stored it."""
        with self.transaction() as c:
            return self._store_one(c, rep, now_iso(), once=True) is not None

    def add_link_traffic(self, config_id: int, traffic: Mapping[int, LinkTraffic]) -> None:
        names = field_names(LinkTraffic)
        query = (f"INSERT INTO link_traffic (experiment_id, repetition_id, {_columns(names)}) "
                 f"SELECT experiment_id, id, {_marks(len(names))} FROM repetition "
                 "WHERE experiment_id = %s AND config_id = %s AND idx = %s " + _upsert(["repetition_id"], names))
        with self.transaction() as c, c.cursor() as cur:
            cur.executemany(query, [(*astuple(t), self.eid, config_id, idx) for idx, t in sorted(traffic.items())])

    def start_sched_capture(self, missing: str | None, facts_json: str) -> int:
        with self.transaction() as c:
            return int(c.execute(_insert("sched_capture", ["started_at", "missing", "facts_json"], returning="id"),
                                 (self.eid, now_iso(), missing, facts_json)).fetchone()[0])

    def add_sched(self, capture_id: int, batch: SchedBatch, facts_json: str) -> None:
        rows = {"sched_repetition": [astuple(r) + (capture_id,) for r in batch.repetitions],
                "sched_step": [astuple(s) for s in batch.steps], "sched_agent": [astuple(a) for a in batch.agents]}
        with self.transaction() as c:
            with c.cursor() as cur:
                for table, (names, key) in _SCHED.items():
                    cur.executemany(_insert(table, names, _upsert(key, names)), [(self.eid, *r) for r in rows[table]])
            c.execute("UPDATE sched_capture SET facts_json = %s WHERE experiment_id = %s AND id = %s",
                      (facts_json, self.eid, capture_id))

    def save_capture(self, capture: StoredCapture, energies: WindowEnergies) -> int:
        names = field_names(StoredCapture)[1:]  # the store assigns the id
        with self.transaction() as c:
            c.execute("DELETE FROM energy_capture WHERE experiment_id = %s", (self.eid,))  # one per experiment
            capture_id = int(c.execute(_insert("energy_capture", names, returning="id"),
                                       (self.eid, *astuple(capture)[1:-1], now_iso())).fetchone()[0])
            with c.cursor() as cur:
                cur.executemany(_insert("energy", field_names(WindowEnergy)),
                                [(self.eid, capture_id, *r) for r in zip(*astuple(energies))])
        return capture_id

    # ------------------------------------------------------------------ reading (StoreReader)
    def _where_kind(self, kind: Kind, column: str = "config_id") -> str:
        where = kind_filter(kind)
        return f" AND {column} IN (SELECT id FROM config WHERE experiment_id = %(e)s AND ({where}))" if where else ""

    def stored_indices(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for key, idx in self._all("SELECT c.key, r.idx FROM repetition r JOIN config c ON c.experiment_id = r.experiment_id "
                                  "AND c.id = r.config_id WHERE r.experiment_id = %s", self.eid):
            out.setdefault(key, set()).add(idx)
        return out

    def repetition_counts(self, ok_status: str) -> dict[int, dict[str, int]]:
        rows = self._all("SELECT config_id, count(*), count(*) FILTER (WHERE status <> %s), "
                         "count(*) FILTER (WHERE flags <> 0) FROM repetition WHERE experiment_id = %s "
                         "GROUP BY config_id", ok_status, self.eid)
        return {r[0]: {"stored": r[1], "failed": r[2], "flagged": r[3]} for r in rows}

    def stored_per_round(self) -> dict[int, int]:
        return dict(self._all("SELECT round, count(*) FROM repetition WHERE experiment_id = %s GROUP BY round",
                              self.eid))

    def repetition(self, config_id: int, idx: int) -> tuple[Mapping[str, Any], bytes] | None:
        from psycopg.rows import dict_row

        with self.conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("SELECT r.*, t.records, t.encoding FROM repetition r LEFT JOIN trace t "
                              "ON t.experiment_id = r.experiment_id AND t.repetition_id = r.id WHERE r.experiment_id = %s AND r.config_id = %s AND r.idx = %s",
                              (self.eid, config_id, idx)).fetchone()
        if row is None:
            return None
        return row, decode_records(row["records"], row["encoding"])

    def repetition_rows(self, config_id: int | None = None) -> list[tuple[int, RepetitionRow]]:
        where, params = (" AND config_id = %s", (self.eid, config_id)) if config_id is not None else ("", (self.eid,))
        return [(r[0], RepetitionRow(*r[1:])) for r in self._all(
            f"SELECT id, {_columns(_REP)} FROM repetition WHERE experiment_id = %s{where} ORDER BY id", *params)]

    def sched_tables(self) -> SchedTables:
        def rows(table: str, row: type, order: str) -> list:
            names = field_names(row)
            return [row(*r) for r in self._all(f"SELECT {_columns(names)} FROM {table} WHERE experiment_id = %s "
                                               f"ORDER BY {order}", self.eid)]
        return SchedTables(rows("sched_capture", SchedCapture, "id"),
                           rows("sched_repetition", SchedRepetition, "config_id, idx"),
                           rows("sched_step", SchedStep, "config_id, idx, peer, label, occurrence"),
                           rows("sched_agent", SchedAgent, "agent_id"))

    def agent_rows(self) -> list[AgentRow]:
        names = field_names(AgentRow)
        return [AgentRow(*r) for r in self._all(f"SELECT {_columns(names)} FROM agent WHERE experiment_id = %s "
                                                "ORDER BY id", self.eid)]

    def devices(self) -> list[DeviceImage]:
        rows = self._all("SELECT target, counter_unit, firmware_sha256, firmware_json, count(*) FROM agent "
                         "WHERE experiment_id = %s AND target IS NOT NULL "
                         "GROUP BY target, counter_unit, firmware_sha256, firmware_json ORDER BY min(id)", self.eid)
        return [device_image(*r) for r in rows]

    def skipped_cells(self) -> list[SkippedCell]:
        return [SkippedCell(*r) for r in self._all("SELECT cell, reason FROM skipped_cell WHERE experiment_id = %s "
                                                   "ORDER BY cell", self.eid)]

    def config_rows(self, kind: Kind = "all") -> list[StoredConfig]:
        names = field_names(StoredConfig)
        where = kind_filter(kind)
        return [StoredConfig(*r) for r in self.conn.execute(
            f"SELECT {_columns(names)} FROM config WHERE experiment_id = %(e)s" + (f" AND ({where})" if where else "")
            + " ORDER BY id", {"e": self.eid})]

    def repetition_columns(self, kind: Kind = "all") -> RepetitionColumns:
        """Each column as one text the server writes and numpy parses (in C), as the SQLite
        store reads them: no Python object per repetition."""
        names = field_names(RepetitionColumns)
        texts = [f"coalesce(string_agg({n}, ',' ORDER BY id), '')" if n == "status" else
                 f"coalesce(string_agg(coalesce({n}, -1)::text, ',' ORDER BY id), '')" for n in names]
        n, *columns = self.conn.execute(f"SELECT count(*), {_columns(texts)} FROM repetition WHERE experiment_id = %(e)s"
                                        + self._where_kind(kind), {"e": self.eid}).fetchone()
        if not n:
            return RepetitionColumns(*(np.empty(0, object if name == "status" else np.int64) for name in names))
        return RepetitionColumns(*(words(text) if name == "status" else np.array(text.split(","), dtype=np.int64)
                                   for name, text in zip(names, columns)))

    def traces(self, kind: Kind = "all", rep_ids: Sequence[int] | None = None) -> list[tuple[int, bytes]]:
        query = ("SELECT t.repetition_id, t.records, t.encoding FROM trace t JOIN repetition r "
                 "ON r.experiment_id = t.experiment_id AND r.id = t.repetition_id WHERE t.experiment_id = %(e)s" + self._where_kind(kind, "r.config_id"))
        params: dict[str, Any] = {"e": self.eid}
        if rep_ids is not None:
            query += " AND t.repetition_id = ANY(%(ids)s)"
            params["ids"] = sorted({int(r) for r in rep_ids})
        return [(r[0], decode_records(r[1], r[2])) for r in self.conn.execute(query + " ORDER BY t.repetition_id",
                                                                               params)]

    def repetition_ids(self, config_keys: Sequence[str]) -> list[int]:
        return [row[0] for key in config_keys for row in self._all(
            "SELECT r.id FROM repetition r JOIN config c ON c.experiment_id = r.experiment_id AND c.id = r.config_id "
            "WHERE c.experiment_id = %s "
            "AND c.key = %s ORDER BY r.id", self.eid, key)]

    def has_experiments(self) -> bool:
        return self.has("experiments")

    def has(self, kind: Kind) -> bool:
        where = kind_filter(kind)
        return self._one("SELECT 1 FROM config WHERE experiment_id = %s" + (f" AND ({where})" if where else "")
                         + " LIMIT 1", self.eid) is not None

    def link_traffic(self) -> dict[int, LinkTraffic]:
        names = field_names(LinkTraffic)
        return {r[0]: LinkTraffic(*r[1:]) for r in self._all(
            f"SELECT repetition_id, {_columns(names)} FROM link_traffic WHERE experiment_id = %s "
            "ORDER BY repetition_id", self.eid)}

    def trace_counts(self) -> dict[int, TraceCounts]:
        return {r[0]: TraceCounts(r[1], r[2], raw_counts(r[3], r[2]), r[4]) for r in self._all(
            f"SELECT repetition_id, {_columns(field_names(TraceCounts))} FROM trace_counts WHERE experiment_id = %s "
            "ORDER BY repetition_id", self.eid)}

    def peer_traces(self, rep_ids: Sequence[int] | None = None) -> list[PeerTrace]:
        query = "SELECT repetition_id, agent_id, role, records, encoding FROM peer_repetition WHERE experiment_id = %(e)s"
        params: dict[str, Any] = {"e": self.eid}
        if rep_ids is not None:
            query += " AND repetition_id = ANY(%(ids)s)"
            params["ids"] = sorted({int(r) for r in rep_ids})
        return [PeerTrace(r[0], r[1], r[2], decode_records(r[3], r[4]))
                for r in self.conn.execute(query + " ORDER BY repetition_id", params)]

    def energy_capture(self) -> StoredCapture | None:
        names = field_names(StoredCapture)
        row = self._one(f"SELECT {_columns(names)} FROM energy_capture WHERE experiment_id = %s ORDER BY id DESC LIMIT 1",
                        self.eid)
        return StoredCapture(*row) if row else None

    def window_energies(self, capture_id: int) -> WindowEnergies:
        rows = self._all(f"SELECT {_columns(field_names(WindowEnergies))} FROM energy WHERE experiment_id = %s "
                         "AND capture_id = %s", self.eid, capture_id)
        return WindowEnergies(*([list(c) for c in zip(*rows)] if rows else [[] for _ in fields(WindowEnergies)]))

    def integrity_check(self) -> str:
        """What the server's catalog says of the tables (PostgreSQL checks every page it reads)."""
        try:
            version_of(self.conn, str(self.location), columns_of(self.conn))
        except StoreError as exc:
            return str(exc)
        return "ok"

    # ------------------------------------------------------------------ the derived cache
    def derived_batches(self, kind: Kind = "all", version: int | None = None, config_id: int | None = None,
                        measures: bool = True) -> Iterator[DerivedBatch]:
        names = ["''::bytea" if n == "measures" and not measures else n for n in field_names(DerivedBatch)]
        where, params = ["experiment_id = %s", "kind = %s"], [self.eid, kind]
        for column, value in (("version", version), ("config_id", config_id)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        yield from (DerivedBatch(*r) for r in self._all(
            f"SELECT {_columns(names)} FROM derived_batch WHERE {' AND '.join(where)} ORDER BY first_rep", *params))

    def derived_stats(self, kind: Kind) -> dict[int, StoredStats]:
        return {r[0]: StoredStats(*r) for r in self._all(
            "SELECT config_id, digest, n_rows, rows FROM derived_stats WHERE experiment_id = %s AND kind = %s",
            self.eid, kind)}

    def put_derived_stats(self, kind: Kind, stats: Sequence[StoredStats]) -> None:
        names = ["kind", *field_names(StoredStats)]
        with self.transaction() as c, c.cursor() as cur:
            cur.executemany(_insert("derived_stats", names, _upsert(["kind", "config_id"], names)),
                            [(self.eid, kind, *values(s)) for s in stats])

    def add_derived_batches(self, batches: Sequence[DerivedBatch]) -> None:
        names = field_names(DerivedBatch)
        key = ["kind", "version", "config_id", "first_rep"]
        with self.transaction() as c, c.cursor() as cur:
            cur.executemany(_insert("derived_batch", names, _upsert(key, names)), [(self.eid, *values(b)) for b in batches])

    def drop_derived(self, keep_version: int | None = None, kind: Kind | None = None) -> None:
        of_kind, params = (" AND kind = %s", [kind]) if kind else ("", [])
        with self.transaction() as c:
            c.execute("DELETE FROM derived_batch WHERE experiment_id = %s AND version IS DISTINCT FROM %s" + of_kind,
                      [self.eid, keep_version, *params])
            if keep_version is None:
                c.execute("DELETE FROM derived_stats WHERE experiment_id = %s" + of_kind, [self.eid, *params])
