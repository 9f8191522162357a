# SPDX-License-Identifier: Apache-2.0
"""Where a SQLite store is (store/api.py Location), and how it is opened: one file per
experiment, `tlsbench.db` in the experiment's folder, next to its writer lock and report."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tlsbench.schema import Experiment
from tlsbench.store.api import RUN_RETRY, StoreError
from tlsbench.store.sqlite.errors import cannot_write
from tlsbench.store.sqlite.files import DB_FILE, connect_ro, open_checked, stored_experiment
from tlsbench.store.sqlite.lock import FolderLock
from tlsbench.store.sqlite.schema import bring_up_to_date
from tlsbench.store.sqlite.store import SqliteStore


def find(path: Path, output: str | Path | None = None) -> Path:
    """The store file a path names: a file as it is, else the `tlsbench.db` of a folder (a new
    store: a `.db` name is a file); with `output` (reading), the folder may also be an
    experiment's name under it, and must hold a store."""
    if path.is_file():
        return path
    if output is None:
        return path if path.suffix == ".db" and not path.exists() else path / DB_FILE
    if path.name == DB_FILE:
        path = path.parent
    for candidate in (path, Path(output) / path):
        if (candidate / DB_FILE).exists():
            return candidate / DB_FILE
    raise StoreError(f"no experiment {str(path)!r} (looked for {DB_FILE} in {path} and "
                     f"{Path(output) / path}); `tlsbench run` creates it")


@dataclass(frozen=True)
class SqliteLocation:
    """A SQLite store file."""

    path: Path

    def __str__(self) -> str:
        return str(self.path)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def lock(self) -> FolderLock:
        return FolderLock(self.folder)

    def exists(self) -> bool:
        return self.path.exists()

    def stored_experiment(self) -> Experiment | None:
        return stored_experiment(self.path) if self.exists() else None

    def queued_batches(self) -> int:
        return 0  # a SQLite store is written by one run at a time: no queue

    def reader(self, check: bool = True) -> SqliteStore:
        """Read-only; checked first, and holding an experiment, unless `check` is off (a store
        read before: the check reads all of it)."""
        if check:
            return SqliteStore(open_checked(self.path), self.path, self)
        try:
            return SqliteStore(connect_ro(self.path), self.path, self)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from None

    def writer(self, create: bool = True, retry: str = RUN_RETRY) -> SqliteStore:
        """Opens (and with `create`, creates) the file and brings it up to date. An existing
        file is checked first (read-only): a damaged one is never written to."""
        path = self.path
        if path.exists() or not create:
            stored_experiment(path)  # raises for a missing (not create), damaged or foreign file
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # autocommit mode: transactions are explicit (BEGIN ... COMMIT) in the store.
            conn = sqlite3.connect(path, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            store = SqliteStore(conn, path, self, retry)
            bring_up_to_date(conn)
        except (OSError, sqlite3.Error) as exc:
            raise cannot_write(exc, path, retry) from exc
        return store
