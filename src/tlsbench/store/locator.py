# SPDX-License-Identifier: Apache-2.0
"""The locator: what a user names (`sqlite:PATH`, a store file, an experiment folder, an
experiment's name under the output folder, an experiment in a PostgreSQL database:
`postgresql://...#NAME`) as a store's Location (store/api.py). The one place that knows which
implementation a name means."""
from __future__ import annotations

from pathlib import Path

from tlsbench.store.api import Location, StoreError
from tlsbench.store.sqlite.location import SqliteLocation, find

SQLITE = "sqlite:"
POSTGRES = ("postgresql://", "postgres://")


def locate(name: str | Path, output: str | Path | None = None) -> Location:
    """A store from what a user names: `sqlite:PATH`, a store file, an experiment folder
    (its tlsbench.db, existing or to be created), or with `output` an experiment's name under
    that folder; `postgresql://...#NAME`: the experiment NAME in that database (its report goes
    to `output`/NAME)."""
    text = str(name)
    if text.startswith(POSTGRES):
        from tlsbench.store.postgres.location import PgLocation
        from tlsbench.store.postgres.connection import display, split  # psycopg: shared stores only

        url, experiment = split(text)
        if not experiment:
            raise StoreError(f"{display(url)} names a database, not an experiment in it: add #NAME (or give "
                             "--store URL and the experiment's name)")
        return PgLocation(url, experiment, Path(output) if output is not None else None)
    if text.startswith(SQLITE):
        return SqliteLocation(Path(text[len(SQLITE):]))
    return SqliteLocation(find(Path(text), output))


def in_store(experiment: str, store: str | None, output: str | Path | None = None) -> Location:
    """An experiment named in a store given apart (`--store URL NAME`); without a store, the
    experiment as locate() reads it."""
    if store:
        if not store.startswith(POSTGRES):
            raise StoreError(f"--store takes a postgresql:// URL, not {store!r}: a SQLite store is named by its "
                             "file or experiment folder")
        return locate(f"{store.partition('#')[0]}#{experiment}", output)
    return locate(experiment, output)
