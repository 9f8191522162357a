# SPDX-License-Identifier: Apache-2.0
"""The locator: what a user names (`sqlite:PATH`, a store file, an experiment folder, an
experiment's name under the output folder) as a store's Location (store/api.py). The one
place that knows which implementation a name means; `postgresql://` is recognised and
refused until a store implements it."""
from __future__ import annotations

from pathlib import Path

from tlsbench.store.api import Location, StoreError
from tlsbench.store.sqlite.location import SqliteLocation, find

SQLITE = "sqlite:"
UNSUPPORTED = ("postgresql://", "postgres://")


def names_a_scheme(name: str | Path) -> bool:
    """Whether a store is named by its scheme (`sqlite:PATH`, `postgresql://...`), not a path."""
    return str(name).startswith((SQLITE, *UNSUPPORTED))


def locate(name: str | Path, output: str | Path | None = None) -> Location:
    """A store from what a user names: `sqlite:PATH`, a store file, an experiment folder
    (its tlsbench.db, existing or to be created), or with `output` an experiment's name under
    that folder. `postgresql://...` is recognised and refused: not supported yet."""
    text = str(name)
    if text.startswith(UNSUPPORTED):
        raise StoreError(f"{text.split('://')[0]}:// stores are not supported yet: name a store file or an "
                         "experiment folder (or sqlite:PATH)")
    if text.startswith(SQLITE):
        return SqliteLocation(Path(text[len(SQLITE):]))
    return SqliteLocation(find(Path(text), output))
