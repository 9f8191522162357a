# SPDX-License-Identifier: Apache-2.0
"""The fleet's work queue (docs/fleet.md): an experiment's schedule as `work` rows that
workers take with `FOR UPDATE SKIP LOCKED`, under a lease they renew by heartbeat. Plain SQL on
the store's own tables rather than a queue library: a batch belongs to the experiment it
measures (its rows join config and repetition, its progress is a query of status), and the
guarantee that matters, each repetition stored once, is the repetition table's unique key,
not the queue's. A batch whose lease ran out (its worker was killed or fell silent) is handed
out again; whatever its first worker stored is kept, the rest is run.

Times are the database's clock (seconds since the epoch), so hosts with other clocks agree."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tlsbench.schema.columns import field_names
from tlsbench.schema.fleet import WorkRow, WorkerRow
from tlsbench.store.postgres.connection import Connected, bring_up_to_date, connect, display
from tlsbench.store.postgres.store import _insert
from tlsbench.store.rows import now_iso

NOW = "extract(epoch FROM clock_timestamp())"
WORKER_RETRY = "start the worker again: a batch it held goes back to the queue when its lease runs out"
CLAIMS = 0x746C7371  # the advisory lock claims take turns under (class; the experiments' writer locks are another)


@dataclass(frozen=True)
class Claimed:
    """A batch a worker holds: which experiment, configuration and repetitions."""

    work_id: int
    experiment_id: int
    experiment: str
    config_key: str
    round: int
    first_idx: int
    count: int
    attempts: int


@dataclass(frozen=True)
class WorkerState:
    """A worker as `tlsbench status --store` shows it."""

    id: int
    name: str
    host: str
    device: str
    libraries: str
    running: str  # "experiment: configuration key round r" or ""
    state: str  # running, silent (no heartbeat for a lease), or why it ended
    batches: int
    stored: int
    failed: int
    seconds: float  # from its start to its last heartbeat
    retaken: int  # batches it holds now or held that were handed out more than once

    @property
    def rate(self) -> float:
        """Repetitions stored per second over its life."""
        return self.stored / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class QueueState:
    """An experiment's queue: batches and repetitions done and to do."""

    experiment: str
    target: str  # its batches' targets, comma-separated ("host": host agents)
    batches: int
    batches_done: int
    repetitions: int
    stored: int
    failed: int
    handed_again: int  # batches handed out more than once


class Queue(Connected):
    """The queue of a store (its URL); one connection, autocommit."""

    def __init__(self, url: str):
        super().__init__(connect(url), display(url), WORKER_RETRY)
        bring_up_to_date(self.conn, url)

    # ------------------------------------------------------------------ the schedule
    def enqueue(self, experiment_id: int, rows: Sequence[WorkRow]) -> int:
        """The batches not queued yet (by configuration, round, first index): how many were added."""
        names = field_names(WorkRow)
        query = _insert("work", names, "ON CONFLICT (experiment_id, config_id, round, first_idx) DO NOTHING", "id")
        added = 0
        with self.transaction() as c, c.cursor() as cur:
            for row in rows:
                added += cur.execute(query, (experiment_id, *(getattr(row, n) for n in names))).fetchone() is not None
        return added

    def claim(self, worker_id: int, target: str | None, libraries: Sequence[str], lease_s: float) -> Claimed | None:
        """The lowest batch of the schedule no live worker holds whose target is the worker's,
        whose libraries it offers, and whose stream (experiment and target) no worker of another
        device took a batch of (a configuration is measured on one device: its statistics never
        pool two; a plan over several targets has a stream per target); leased to the worker.
        Claims take turns (a transaction lock) so that two workers of different devices never
        bind one stream at once; the batches themselves are row-locked (SKIP LOCKED: a batch
        another claim holds is passed over)."""
        with self.transaction() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s, 0)", (CLAIMS,))
            row = c.execute(
                f"""UPDATE work w SET worker_id = %(w)s, leased_until = {NOW} + %(lease)s, attempts = w.attempts + 1
                    FROM (SELECT experiment_id, id FROM work q
                          WHERE done_at IS NULL AND (leased_until IS NULL OR leased_until < {NOW})
                            AND target IS NOT DISTINCT FROM %(t)s
                            AND string_to_array(libraries, ',') <@ %(libs)s::text[]
                            AND NOT EXISTS (SELECT 1 FROM work o JOIN worker k ON k.id = o.worker_id
                                            WHERE o.experiment_id = q.experiment_id
                                              AND o.target IS NOT DISTINCT FROM q.target AND k.device <>
                                                (SELECT device FROM worker WHERE id = %(w)s))
                          ORDER BY experiment_id, seq LIMIT 1 FOR UPDATE SKIP LOCKED) pick,
                         experiment e, config c
                    WHERE w.experiment_id = pick.experiment_id AND w.id = pick.id AND e.id = w.experiment_id
                      AND c.experiment_id = w.experiment_id AND c.id = w.config_id
                    RETURNING w.id, w.experiment_id, e.name, c.key, w.round, w.first_idx, w.count, w.attempts""",
                {"w": worker_id, "lease": lease_s, "t": target, "libs": list(libraries)}).fetchone()
            if row is None:
                return None
            c.execute("UPDATE worker SET work_id = %s WHERE id = %s", (row[0], worker_id))
        return Claimed(*row)

    def held(self, target: str | None, libraries: Sequence[str]) -> int:
        """Batches a worker of this kind could run that others hold under a lease: a worker
        that found nothing to claim waits for them (finished, or handed out again when the
        lease of a dead worker runs out) before it calls the queue empty."""
        with self.transaction() as c:
            return int(c.execute(
                f"""SELECT count(*) FROM work WHERE done_at IS NULL AND leased_until >= {NOW}
                      AND target IS NOT DISTINCT FROM %(t)s AND string_to_array(libraries, ',') <@ %(libs)s::text[]""",
                {"t": target, "libs": list(libraries)}).fetchone()[0])

    def heartbeat(self, worker_id: int, claimed: Claimed | None, lease_s: float) -> bool:
        """Renews the worker's heartbeat and its batch's lease; False: the batch went to another
        worker (this one was silent longer than a lease)."""
        with self.transaction() as c:
            c.execute(f"UPDATE worker SET heartbeat_at = {NOW} WHERE id = %s", (worker_id,))
            if claimed is None:
                return True
            return c.execute(f"UPDATE work SET leased_until = {NOW} + %s WHERE experiment_id = %s AND id = %s "
                             "AND worker_id = %s AND done_at IS NULL",
                             (lease_s, claimed.experiment_id, claimed.work_id, worker_id)).rowcount == 1

    def finish(self, worker_id: int, claimed: Claimed, stored: int, failed: int) -> None:
        """The batch is done (every repetition of it is stored, by this worker or an earlier one)."""
        with self.transaction() as c:
            c.execute("UPDATE work SET done_at = %s, leased_until = NULL WHERE experiment_id = %s AND id = %s",
                      (now_iso(), claimed.experiment_id, claimed.work_id))
            c.execute(f"UPDATE worker SET work_id = NULL, batches = batches + 1, stored = stored + %s, "
                      f"failed = failed + %s, heartbeat_at = {NOW} WHERE id = %s", (stored, failed, worker_id))

    # ------------------------------------------------------------------ workers
    def register(self, row: WorkerRow) -> int:
        names = [n for n in field_names(WorkerRow) if n not in ("id", "heartbeat_at")]
        return int(self.conn.execute(
            f"INSERT INTO worker ({', '.join(names)}, heartbeat_at) VALUES ({', '.join(['%s'] * len(names))}, {NOW}) "
            "RETURNING id", [getattr(row, n) for n in names]).fetchone()[0])

    def end(self, worker_id: int, reason: str) -> None:
        """The worker ends: its batch (if any) goes back to the queue at once."""
        with self.transaction() as c:
            c.execute("UPDATE work SET leased_until = NULL WHERE (experiment_id, id) IN (SELECT w.experiment_id, w.id "
                      "FROM work w JOIN worker k ON k.work_id = w.id AND w.worker_id = k.id WHERE k.id = %s) "
                      "AND done_at IS NULL", (worker_id,))
            c.execute(f"UPDATE worker SET ended_at = %s, exit_reason = %s, work_id = NULL, heartbeat_at = {NOW} "
                      "WHERE id = %s", (now_iso(), reason, worker_id))

    # ------------------------------------------------------------------ status
    def workers(self, lease_s: float) -> list[WorkerState]:
        """Every worker, the running ones first."""
        rows = self.conn.execute(
            f"""SELECT k.id, k.name, k.host, k.device, k.libraries,
                       coalesce(e.name || ': ' || c.key || ' round ' || (w.round + 1), ''),
                       CASE WHEN k.ended_at IS NOT NULL THEN k.exit_reason
                            WHEN k.heartbeat_at < {NOW} - %(lease)s THEN 'silent' ELSE 'running' END,
                       k.batches, k.stored, k.failed,
                       k.heartbeat_at - extract(epoch FROM k.started_at::timestamptz),
                       (SELECT count(*) FROM work x WHERE x.worker_id = k.id AND x.attempts > 1)
                FROM worker k LEFT JOIN work w ON w.id = k.work_id AND w.worker_id = k.id
                LEFT JOIN experiment e ON e.id = w.experiment_id
                LEFT JOIN config c ON c.experiment_id = w.experiment_id AND c.id = w.config_id
                ORDER BY k.ended_at IS NOT NULL, k.id""", {"lease": lease_s}).fetchall()
        return [WorkerState(*r[:10], float(r[10] or 0.0), int(r[11])) for r in rows]

    def experiments(self) -> list[QueueState]:
        """Every queued experiment's progress."""
        rows = self.conn.execute(
            """SELECT e.name, coalesce(string_agg(DISTINCT w.target, ', '), 'host'), count(*), count(w.done_at), sum(w.count),
                      (SELECT count(*) FROM repetition r WHERE r.experiment_id = e.id),
                      (SELECT count(*) FROM repetition r WHERE r.experiment_id = e.id AND r.status <> 'OK'),
                      count(*) FILTER (WHERE w.attempts > 1)
               FROM work w JOIN experiment e ON e.id = w.experiment_id GROUP BY e.id, e.name ORDER BY e.name""").fetchall()
        return [QueueState(*r) for r in rows]
