# SPDX-License-Identifier: Apache-2.0
"""Where a SQLite store is (store/api.py Location): one file per experiment, `tlsbench.db` in
the experiment's folder, next to its writer lock and its report."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tlsbench.schema import Experiment
from tlsbench.store.api import RUN_RETRY, StoreError
from tlsbench.store.sqlite.files import DB_FILE, stored_experiment
from tlsbench.store.sqlite.lock import FolderLock
from tlsbench.store.sqlite.store import SqliteStore


def find(path: Path, output: str | Path | None = None) -> Path:
    """The store file a path names: a file as it is (a `.db` name too when it does not exist
    yet), else the `tlsbench.db` of a folder; with `output` (reading), the folder may also be
    an experiment's name under it, and must hold a store."""
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

    def reader(self) -> SqliteStore:
        return SqliteStore.open_readonly(self.path)

    def writer(self, create: bool = True, retry: str = RUN_RETRY) -> SqliteStore:
        return SqliteStore.open(self.path, create, retry)
