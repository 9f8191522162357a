# SPDX-License-Identifier: Apache-2.0
"""The store contract: every implementation of store/api.py's protocols passes the same tests
(tests/store_contract/test_contract_*.py, with the rows of samples.py), written against the
protocols only. An implementation joins by adding itself to IMPLEMENTATIONS: how to make a
new store's location, how to damage one (what "damaged" means is the implementation's) and
how to tell that nothing was written."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tlsbench.store.api import Location

from tlsbench.store.locator import locate


@dataclass(frozen=True)
class Implementation:
    name: str
    new: Callable[[Path], Location]  # a location where no store is yet
    damage: Callable[[Location], None]  # breaks a store with an experiment so that it must be refused
    snapshot: Callable[[Location], object]  # equal snapshots: nothing was written


def _sqlite_damage(where: Location) -> None:
    path = Path(str(where))
    data = path.read_bytes()
    path.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))  # every page after the header page


def _postgres_new(tmp: Path) -> Location:
    from pg_server import database

    return locate(f"{database('contract')}#contract", tmp)


def _postgres_damage(where: Location) -> None:
    from tlsbench.store.postgres.testing import raw

    raw(where.url, "DROP TABLE trace CASCADE")  # type: ignore[attr-defined]


def _postgres_snapshot(where: Location) -> object:
    from tlsbench.store.postgres.testing import dump

    return dump(where.url)  # type: ignore[attr-defined]


IMPLEMENTATIONS = [
    Implementation("sqlite", lambda tmp: locate(f"sqlite:{tmp / 'store' / 'tlsbench.db'}"), _sqlite_damage,
                   lambda where: Path(str(where)).read_bytes()),
    Implementation("postgresql", _postgres_new, _postgres_damage, _postgres_snapshot),
]


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda i: i.name)
def implementation(request) -> Implementation:
    return request.param


@pytest.fixture
def where(implementation, tmp_path) -> Location:
    """A location with no store yet."""
    return implementation.new(tmp_path)
