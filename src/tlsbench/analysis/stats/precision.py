# SPDX-License-Identifier: Apache-2.0
"""How precisely each configuration is known so far, measured on the store with the
report's own analysis: what adaptive precision (run/precision.py) decides on.

A handshake configuration by the worst of its peers' median handshake processing, an
experiment configuration by the worst of its groups: the 95% CI half-width of the median,
% of it; flagged and descheduled repetitions excluded, fewer than MIN_SAMPLE usable values
counting as unknown. The interval is the report's own, with the same seed and key
(samples.summarize_group), so the run stops exactly when the report's interval meets the
target."""
from __future__ import annotations

import math
from typing import Collection

from tlsbench.run.precision import MIN_SAMPLE, Precision, needing_more
from tlsbench.store.api import DerivedReads, StoreReader

from tlsbench.analysis.derive.dataset import Dataset

from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.measures import METRIC, measures
from tlsbench.analysis.questions.primitives import analyze_dataset
from tlsbench.analysis.derive.samples import split_samples, summarize_group

# The measure the target applies to: the network-invariant cost users compare first.
TARGET_METRIC = "handshake_processing"

__all__ = ["MIN_SAMPLE", "Precision", "TARGET_METRIC", "measure", "needing_more"]


def measure(store: StoreReader, cache: DerivedReads, seed: int,
            only: Collection[str] | None = None) -> dict[str, Precision]:
    """Configuration key -> its precision, from everything stored so far; with `only`, just
    those configurations (only their traces are decoded: the rest of the store is not read)."""
    rep_ids = None if only is None else store.repetition_ids(list(only))
    handshakes = load(store, cache, rep_ids=rep_ids)
    experiments = load(store, cache, rep_ids=rep_ids, experiments=True) if store.has_experiments() else None
    found = _handshakes(handshakes, seed) | (_experiments(experiments, seed) if experiments else {})
    return {key: p for key, p in found.items() if only is None or key in only}


def _known(n: int, half_width_pct: float) -> float:
    """One value has a zero-width interval but says nothing about precision."""
    return half_width_pct if n >= MIN_SAMPLE and math.isfinite(half_width_pct) else math.inf


def _handshakes(ds: Dataset, seed: int) -> dict[str, Precision]:
    samples = split_samples(ds, measures(ds))
    metric = METRIC[TARGET_METRIC]
    worst: dict[int, float] = {}
    for key in samples.values:
        config_id, _peer, m, _label = key
        if m != metric:
            continue
        summary = summarize_group(samples, key, seed)  # the report's own interval
        worst[config_id] = max(worst.get(config_id, 0.0), _known(summary.n, summary.median_ci_pct))
    stored = {c: int((ds.reps.config_id == c).sum()) for c in ds.configs}
    return {cfg.key: Precision(worst.get(cid, math.inf), samples.used_reps.get(cid, 0), stored[cid])
            for cid, cfg in ds.configs.items()}


def _experiments(ds: Dataset, seed: int) -> dict[str, Precision]:
    """The worst of each experiment configuration's groups."""
    found = analyze_dataset(ds, seed)
    worst: dict[int, float] = {}
    for r in found.results:
        worst[r.config_id] = max(worst.get(r.config_id, 0.0), _known(r.summary.n, r.summary.median_ci_pct))
    return {ds.configs[c.config_id].key: Precision(worst.get(c.config_id, math.inf), c.used, c.stored)
            for c in found.counts}
