# SPDX-License-Identifier: Apache-2.0
"""Group-by: pool configurations sharing a suite property (key exchange, authentication,
bulk cipher, MAC/hash) and summarise a measure per group, e.g. "median record-write
processing by hash, coloured by cipher"."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.parallel import map_ordered
from tlsbench.analysis.questions.answers import QUESTIONS, Answers, Question
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize

# Suite properties one can group by (columns of the `config` table).
PROPERTIES = ("key_exchange", "authentication", "cipher", "mac")


@dataclass(frozen=True)
class GroupRow:
    key: tuple[str, ...]     # values of `by`, e.g. ("SHA256", "AES-128-GCM")
    configs: tuple[int, ...]
    summary: Summary


@dataclass(frozen=True)
class GroupTable:
    question: Question        # the measure grouped
    by: tuple[str, ...]       # properties; the first is the bar axis, the second the colour
    rows: list[GroupRow]


def group_by(ds: Dataset, answers: Answers, q: Question, by: tuple[str, ...], seed: int) -> GroupTable:
    assert answers.keep is None, "a group pools the answers of every configuration"
    vals = answers.values_of(q, answers.values[q])
    keyed: dict[tuple[str, ...], list[int]] = {}
    for cid in vals:
        keyed.setdefault(tuple(str(getattr(ds.configs[cid], p)) for p in by), []).append(cid)
    rows = []
    for key, cids in sorted(keyed.items()):
        pooled = np.concatenate([vals[c] for c in cids])
        rows.append(GroupRow(key, tuple(cids), summarize(pooled, rng_for(seed, "group", q.title, *key), mean_ci=False)))
    return GroupTable(q, by, rows)


def default_group_tables(ds: Dataset, answers: Answers, seed: int) -> list[GroupTable]:
    """Each winners question grouped by each property, coloured by the cipher (or the MAC
    when grouping by cipher), skipping groupings with a single group (on every CPU: the
    pooled samples are large)."""
    groupings = [(q, (p, "mac" if p == "cipher" else "cipher")) for q in QUESTIONS for p in PROPERTIES]
    tables = map_ordered(_group_by, (ds, answers, seed), groupings)
    return [t for t in tables if len({r.key[0] for r in t.rows}) > 1]


def _group_by(shared: tuple[Dataset, Answers, int], grouping: tuple[Question, tuple[str, ...]]) -> GroupTable:
    ds, answers, seed = shared
    return group_by(ds, answers, grouping[0], grouping[1], seed)
