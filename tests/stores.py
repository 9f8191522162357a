# SPDX-License-Identifier: Apache-2.0
"""Stores for tests, opened the way the command line opens them (store/api.py locate): a
store file or an experiment folder. Analysis is handed the reader as its derived cache too,
as a report is."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TypeVar

from tlsbench.analysis.derive.dataset import Dataset

from tlsbench.analysis.derive.load import load
from tlsbench.store.api import Store, StoreReader
from tlsbench.store.locator import locate

T = TypeVar("T")


def reader(path: str | Path) -> StoreReader:
    """Checked and read-only (close it, or use it in a `with`)."""
    return locate(path).reader()


def writer(path: str | Path, create: bool = True) -> Store:
    """Opened for writing (created with `create`), as a run opens it."""
    return locate(path).writer(create)


def load_path(path: str | Path, **options: Any) -> Dataset:
    """load() of the store at `path` (its reader is closed after: the dataset opens it again
    for what it reads later)."""
    with reader(path) as store:
        return load(store, store, **options)


def on(path: str | Path, fn: Callable[..., T], *args: Any, **options: Any) -> T:
    """fn(reader, cache, ...) of the store at `path` (an analysis function that takes a
    reader and a derived cache: the reader is both, as for a report)."""
    with reader(path) as store:
        return fn(store, store, *args, **options)
