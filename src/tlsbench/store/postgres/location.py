# SPDX-License-Identifier: Apache-2.0
"""Where a PostgreSQL store is (store/api.py Location): a database, named by a libpq URL, and
an experiment in it, named after `#`: `postgresql://user@host:5432/lab#handshakes-m4`. One
database holds every experiment of a lab (docs/fleet.md). Passwords come from libpq's own
places (~/.pgpass, PGPASSWORD) and are never printed."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tlsbench.schema import Experiment
from tlsbench.store.api import ELSEWHERE, RUN_RETRY, StoreBusy, StoreError
from tlsbench.store.postgres.connection import (bring_up_to_date, columns_of, connect, display, experiment_row,
                                                version_of)
from tlsbench.store.postgres.store import PostgresStore
from tlsbench.store.sqlite.schema import latest


LOCK_CLASS = 0x746C7363  # the experiments' writer locks (advisory locks: released when their session ends)
_HELD: set[tuple[str, str]] = set()  # (database, experiment) whose writer lock this process holds


@dataclass(frozen=True)
class PgLock:
    """The writer lock of one experiment in a shared store: a session-level advisory lock,
    released by the server when its connection ends however the holder ends (kill -9 too).
    The holder is found by its connection's application name (`tlsbench PID`)."""

    url: str
    name: str

    def _key(self) -> str:
        return "hashtext(current_schema() || '/' || %s)"

    def holder(self) -> str | None:
        if (self.url, self.name) in _HELD:
            return None
        with contextlib.closing(connect(self.url)) as conn:
            row = conn.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s "
                f"AND l.objid::bigint = ({self._key()}::bigint & 4294967295) "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (LOCK_CLASS, self.name)).fetchone()
        if row is None:
            return None
        return row[0].removeprefix("tlsbench ") or "unknown"

    @contextlib.contextmanager
    def hold(self, retry: str = RUN_RETRY, instead: str = ELSEWHERE) -> Iterator[None]:
        conn = connect(self.url)
        try:
            taken = conn.execute(f"SELECT pg_try_advisory_lock(%s, {self._key()})", (LOCK_CLASS, self.name)).fetchone()[0]
            if not taken:
                raise self._busy(instead)
            _HELD.add((self.url, self.name))
            try:
                yield
            finally:
                _HELD.discard((self.url, self.name))
        finally:
            conn.close()  # the server releases the lock with the session

    def refuse_if_busy(self) -> None:
        if self.holder() is not None:
            raise self._busy(ELSEWHERE)

    def _busy(self, instead: str) -> StoreBusy:
        pid = self.holder() if (self.url, self.name) not in _HELD else None
        return StoreBusy(f"experiment {self.name!r} in {display(self.url)} is being written by another tlsbench "
                         f"(PID {pid or 'unknown'}): wait for it to end, or stop it (`kill -INT PID`: what it stored "
                         f"stays), {instead.replace('--output', 'experiment name')}")


@dataclass(frozen=True)
class PgLocation:
    """An experiment in a PostgreSQL database."""

    url: str
    name: str
    output: Path | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{display(self.url)}#{self.name}"

    @property
    def folder(self) -> Path:
        """Where files that go with the experiment are written (its report): the output folder's."""
        return (self.output or Path(".")) / self.name

    @property
    def lock(self) -> PgLock:
        return PgLock(self.url, self.name)

    def _checked(self, read_only: bool):  # -> (connection, version | None)
        conn = connect(self.url, read_only)
        try:
            return conn, version_of(conn, str(self), columns_of(conn))
        except BaseException:
            conn.close()
            raise

    def exists(self) -> bool:
        return self.stored_experiment() is not None

    def stored_experiment(self) -> Experiment | None:
        conn, version = self._checked(True)
        with contextlib.closing(conn):
            found = experiment_row(conn, self.name) if version is not None else None
        return found[1] if found else None

    def queued_batches(self) -> int:
        conn, version = self._checked(True)
        with contextlib.closing(conn):
            if version is None:
                return 0
            return int(conn.execute("SELECT count(*) FROM work w JOIN experiment e ON e.id = w.experiment_id "
                                    "WHERE e.name = %s AND w.done_at IS NULL", (self.name,)).fetchone()[0])

    def reader(self, check: bool = True):  # -> PostgresStore
        conn, version = self._checked(True)
        found = experiment_row(conn, self.name) if version is not None else None
        if found is None or version != latest():
            conn.close()
            if found is None:
                raise StoreError(f"no experiment {self.name!r} in {display(self.url)}: `tlsbench run --store` or "
                                 "`tlsbench store push` puts one there")
            raise StoreError(f"{self} has schema {version}, older than this tlsbench's {latest()}: a command that "
                             "writes it (run, worker, derive) brings it up to date")
        return PostgresStore(conn, self, found[0])

    def writer(self, create: bool = True, retry: str = RUN_RETRY):  # -> PostgresStore
        conn = connect(self.url)
        try:
            bring_up_to_date(conn, str(self))
            found = experiment_row(conn, self.name)
        except BaseException:
            conn.close()
            raise
        if found is None and not create:
            conn.close()
            raise StoreError(f"no experiment {self.name!r} in {display(self.url)}: `tlsbench run --store` puts one "
                             "there")
        return PostgresStore(conn, self, found[0] if found else None, retry)
