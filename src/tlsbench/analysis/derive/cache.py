# SPDX-License-Identifier: Apache-2.0
"""Deriving: the explicit step between a run and its reports (`tlsbench derive`, and the end
of `tlsbench run`). It reads the records through a store's reader and keeps what it derives
in the store's derived cache (store/api.py): every repetition's summaries (derived.py), then
every configuration's statistics (statcache.py). Reports read them back and derive in memory
what is missing; nothing here is a source of truth."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from tlsbench.store.api import DerivedCache, StoreReader

from tlsbench.analysis.derive import derived as derivation
from tlsbench.analysis.derive.derived import STORED_KINDS, derive_missing, stored_rep_ids, stored_twice, to_stored
from tlsbench.analysis.derive.load import load_tables
from tlsbench.analysis.derive.runs import runs
from tlsbench.analysis.derive.statcache import store_stats


@dataclass(frozen=True)
class Derivation:
    """What a derive stored."""

    repetitions: int  # repetitions whose summaries were derived
    batches: int  # derived batches written
    configurations: int  # configurations whose statistics were computed


def derive(store: StoreReader, cache: DerivedCache, rebuild: bool = False) -> Derivation:
    """Stores every repetition's summaries that the cache lacks for this version of the
    derivation (all of them with `rebuild`), then the statistics a report with the defaults
    shows. A batch per transaction: a killed derive keeps what it wrote."""
    derived, batches = derive_summaries(store, cache, rebuild)
    return Derivation(derived, batches, store_stats(store, cache))


def _by_config(config_ids: np.ndarray, todo: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(configuration, positions of its repetitions in `todo`, ascending) for each configuration."""
    positions = np.flatnonzero(todo)
    order = np.argsort(config_ids[positions], kind="stable")
    cfg = config_ids[positions[order]]
    for start, end in zip(*runs(cfg)):
        yield int(cfg[start]), positions[order[start:end]]


def derive_summaries(store: StoreReader, cache: DerivedCache, rebuild: bool = False) -> tuple[int, int]:
    """The summaries of every repetition that has none of this version (all of them with
    `rebuild`); returns (repetitions derived, batches written)."""
    cache.drop_derived(keep_version=None if rebuild else derivation.DERIVE_VERSION)
    derived = written = 0
    for kind in STORED_KINDS:
        if not store.has(kind):
            continue
        ds = load_tables(store, cache, kind)
        stored = stored_rep_ids(cache, kind)
        if stored_twice(stored):
            cache.drop_derived(kind=kind)
            stored = stored[:0]
        todo = ~np.isin(ds.reps.id, stored)
        for cid, positions in _by_config(ds.reps.config_id, todo):
            for part in derive_missing(ds, positions, lambda ids, k=kind: store.traces(k, ids), ds.reps.n_events):
                cache.add_derived_batches([to_stored(part, kind, cid)])
                written += 1
        derived += int(np.count_nonzero(todo))
    return derived, written
