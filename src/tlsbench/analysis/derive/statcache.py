# SPDX-License-Identifier: Apache-2.0
"""Each configuration's statistics computed once and kept in the store (migration 014), so a
report of a long experiment does not draw every bootstrap again.

A configuration's rows of statistics are a function of the repetitions its samples use and
their rounds (the values are those repetitions' derived summaries), of how many were
excluded, the seed and the counter's unit, and of this code (the derivation's, the
statistics' and tlsbench's versions). Their digest names a stored row: a report takes the
rows whose digest is the one its own inputs give, and computes the others; `tlsbench derive`
(and `tlsbench run` when a sweep ends) stores what the report's defaults give.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Callable

import numpy as np

from tlsbench import __version__
from tlsbench.schema import StoredStats
from tlsbench.store.api import DerivedCache, StoreReader

from tlsbench.analysis.derive.derived import DERIVE_VERSION, codec
from tlsbench.analysis.questions.groups import GroupRow, GroupTable, default_group_tables
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.runs import runs
from tlsbench.analysis.derive.samples import Row, summarize_dataset
from tlsbench.analysis.stats.stats import Summary
from tlsbench.analysis.questions.answers import Answers, Question

# Bump whenever stats.py or samples.py change what a row of statistics holds.
STATS_VERSION = 1
# The kinds of configuration whose statistics a report computes (analysis/pipeline.py).
CACHED_KINDS = ("handshakes", "device")

_SUMMARY_FIELDS = [f.name for f in dataclasses.fields(Summary)]
_TUPLES = {"median_ci", "mean_ci"}


def digests(ds: Dataset, excluded: np.ndarray, seed: int) -> dict[int, str]:
    """Per configuration with repetitions: the digest of what its statistics are computed from."""
    head = json.dumps([__version__, DERIVE_VERSION, STATS_VERSION, seed, ds.unit.name]).encode()
    order = np.lexsort((ds.reps.id, ds.reps.config_id))
    cfg = ds.reps.config_id[order]
    out = {}
    for start, end in zip(*(bound.tolist() for bound in runs(cfg))):
        mine = order[start:end]
        used = mine[~excluded[mine]]
        h = hashlib.sha256(head)
        for column in (cfg[start:start + 1], ds.reps.id[used], ds.reps.round[used], np.array([len(mine) - len(used)])):
            h.update(np.ascontiguousarray(column, dtype="<i8").tobytes())
        out[int(cfg[start])] = h.hexdigest()
    return out


def _plain(summary: Summary) -> list:
    return [getattr(summary, f) for f in _SUMMARY_FIELDS]  # JSON keeps every float exactly (repr)


def _summary(values: list) -> Summary:
    return Summary(**{f: tuple(v) if f in _TUPLES else v for f, v in zip(_SUMMARY_FIELDS, values)})


def encode(config_id: int, digest: str, rows: list[Row]) -> StoredStats:
    plain = [[r.peer, r.metric, r.label, r.unit, _plain(r.summary)] for r in rows]
    return StoredStats(config_id, digest, len(rows), codec()[0].compress(json.dumps(plain).encode()))


def decode(stored: StoredStats) -> list[Row]:
    rows = [Row(stored.config_id, peer, metric, label, unit, _summary(values))
            for peer, metric, label, unit, values in json.loads(codec()[1].decompress(stored.rows))]
    if len(rows) != stored.n_rows:
        raise ValueError(f"stored statistics of configuration {stored.config_id} hold {len(rows)} rows, "
                         f"not {stored.n_rows}")
    return rows


def known(ds: Dataset, current: dict[int, str]) -> dict[int, Callable[[], list[Row]]]:
    """The configurations whose stored statistics are those of the `current` digests, each
    read when called (by the worker that summarises its configuration)."""
    return {cid: functools.partial(decode, s) for cid, s in ds.stats.items()
            if cid != GROUPS and current.get(cid) == s.digest}


# The group-by tables (analysis/questions/groups.py) pool every configuration's values: one row of
# their own, under this configuration id, for the digest of all configurations'.
GROUPS = -1


def groups_digest(current: dict[int, str]) -> str:
    return hashlib.sha256(json.dumps(["groups", sorted(current.items())]).encode()).hexdigest()


def known_groups(ds: Dataset, current: dict[int, str]) -> list[GroupTable] | None:
    """The stored group-by tables when they are those of the `current` digests, else None."""
    stored = ds.stats.get(GROUPS)
    if stored is None or stored.digest != groups_digest(current):
        return None
    tables = []
    for (title, metric, peer), by, rows in json.loads(codec()[1].decompress(stored.rows)):
        tables.append(GroupTable(Question(title, metric, peer), tuple(by),
                                 [GroupRow(tuple(key), tuple(configs), _summary(values)) for key, configs, values in rows]))
    return tables


def encode_groups(current: dict[int, str], tables: list[GroupTable]) -> StoredStats:
    plain = [[[t.question.title, t.question.metric, t.question.peer], t.by,
              [[r.key, r.configs, _plain(r.summary)] for r in t.rows]] for t in tables]
    return StoredStats(GROUPS, groups_digest(current), len(tables), codec()[0].compress(json.dumps(plain).encode()))


def store_stats(store: StoreReader, cache: DerivedCache) -> int:
    """Computes and stores the statistics a report with the defaults (the experiment's seed,
    flagged repetitions excluded) shows, of every configuration whose stored ones are not
    those, and the group-by tables; returns how many configurations were computed."""
    done = 0
    for kind in CACHED_KINDS:
        if not store.has(kind):
            continue
        ds = load(store, cache, kind=kind)
        seed = int(ds.experiment.get("seed", 0) or 0)
        current = digests(ds, ds.excluded_mask(), seed)
        grouped = known_groups(ds, current) is not None
        summarized = summarize_dataset(ds, seed, False, known(ds, current), None if grouped else Answers(keep=None))
        stats = [encode(cid, current[cid], rows) for cid, rows in summarized.computed.items()]
        if not grouped:
            stats.append(encode_groups(current, default_group_tables(ds, summarized.samples.answers, seed)))
        cache.put_derived_stats(kind, stats)
        done += len(summarized.computed)
    return done
