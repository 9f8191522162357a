# SPDX-License-Identifier: Apache-2.0
"""The tables a shared store adds for a fleet (docs/fleet.md): the schedule handed out to
workers a batch at a time, and the workers themselves. Only a store shared by several
processes has them (store/postgres/); a SQLite store is written by one run at a time.

`work` is keyed by experiment like every table of tables.py; `worker` is the fleet's (a
worker takes batches of any experiment its device and libraries can run). Times a lease is
compared with are the database's clock in seconds since the epoch, so hosts whose clocks
differ agree on when a lease ran out."""
from __future__ import annotations

from dataclasses import dataclass

from tlsbench.schema.columns import Index, Table, column, key_column


@dataclass(frozen=True)
class WorkRow:
    """A `work` row: one batch of an experiment's schedule (the rounds a plan would run, in
    the same order), and who holds it."""

    config_id: int = column("The configuration the batch runs.", references="config")
    round: int = column("Its round.")
    first_idx: int = column("The first repetition index it runs.")
    count: int = column("How many repetitions it runs.")
    seq: int = column("Its place in the plan's schedule: workers take the lowest first.")
    target: str | None = column("The device target it must run on (plan [device]); none: a host agent.")
    libraries: str = column("The agent libraries it needs, comma-separated (a pair names both).")
    worker_id: int | None = column("The worker that holds it, or held it last.", default=None)
    leased_until: float | None = column("When its lease runs out (the database's clock, s since the epoch): "
                                        "then another worker may take it. None: never handed out.", default=None)
    attempts: int = column("How often it was handed out (more than once: a worker died or fell silent).",
                           default=0, store_default=0)
    done_at: str | None = column("When its last repetition was stored (ISO-8601 UTC); none: still to do.",
                                 default=None)


WORK = Table("work", "An experiment's schedule, handed out to workers a batch at a time (shared stores).", WorkRow,
             extra=(key_column("id", "The batch's id."),),
             unique=(("config_id", "round", "first_idx"),),
             indexes=(Index("work_to_do", ("done_at", "seq")),))


@dataclass(frozen=True)
class WorkerRow:
    """A `worker` row: one `tlsbench worker` process, what it can run and how it is doing."""

    id: int = column("The worker's id (a restart is a new row).", primary_key=True)
    name: str = column("Its name (`--name`, default host:pid).")
    host: str = column("The machine it runs on.")
    pid: int = column("Its process id there.")
    device: str = column("What it measures on: a device target, or the host's name for host agents.")
    target: str | None = column("The device target it runs (`--device`); none: host agents.")
    libraries: str = column("The agent libraries it offers, comma-separated.")
    tool_version: str = column("Its tlsbench version and commit.")
    started_at: str = column("When it started (ISO-8601 UTC).")
    heartbeat_at: float = column("Its last heartbeat (the database's clock, s since the epoch).")
    ended_at: str | None = column("When it ended; none while it runs, or when it was killed.", default=None)
    exit_reason: str | None = column("Why it ended (no more work, interrupted, an error).", default=None)
    work_id: int | None = column("The batch it runs now.", default=None)
    batches: int = column("Batches it finished.", default=0, store_default=0)
    stored: int = column("Repetitions it stored.", default=0, store_default=0)
    failed: int = column("Of those, failed ones (a status other than OK).", default=0, store_default=0)


WORKER = Table("worker", "The fleet's workers (shared stores).", WorkerRow, per_experiment=False)

FLEET_TABLES: tuple[Table, ...] = (WORK, WORKER)
