# SPDX-License-Identifier: Apache-2.0
"""Adaptive precision: which configurations still need repetitions.

After the planned rounds, a configuration whose median handshake processing (of either
peer) has a 95% CI half-width above the plan's target gets another round, until it meets
the target or reaches the plan's maximum. The check is the analysis the report uses, run
on the store, so an extension that is interrupted resumes like the rest of the sweep."""
from __future__ import annotations

import math
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

from tlsbench.analysis.load import connect_ro, load
from tlsbench.analysis.measures import METRIC, measures
from tlsbench.analysis.results import split_samples
from tlsbench.analysis.stats import rng_for, summarize

# The measure the target applies to: the network-invariant cost users compare first.
TARGET_METRIC = "handshake_processing"
MIN_SAMPLE = 3  # fewer usable repetitions (e.g. most were descheduled): precision unknown


@dataclass(frozen=True)
class Precision:
    """How precisely one configuration's handshake processing is known."""

    half_width_pct: float  # worst (largest) 95% CI half-width of the median over the peers, % of it
    used: int              # repetitions in the statistics (flagged and descheduled excluded)
    stored: int            # repetitions stored, excluded ones included


def measure(store: Path, seed: int, only: Collection[str] | None = None) -> dict[str, Precision]:
    """Configuration key -> its precision, from everything stored so far; with `only`, just
    those configurations (only their traces are decoded: the rest of the store is not read)."""
    ds = load(store, rep_ids=None if only is None else _repetitions_of(store, only))
    samples = split_samples(ds, measures(ds))
    metric = METRIC[TARGET_METRIC]
    worst: dict[int, float] = {}
    for (config_id, peer, m, _label), values in samples.values.items():
        if m != metric:
            continue
        summary = summarize(values, rng_for(seed, "precision", config_id, peer), mean_ci=False)
        # One value has a zero-width interval but says nothing about precision.
        known = summary.n >= MIN_SAMPLE and math.isfinite(summary.median_ci_pct)
        worst[config_id] = max(worst.get(config_id, 0.0), summary.median_ci_pct if known else math.inf)
    stored = {c: int((ds.reps.config_id == c).sum()) for c in ds.configs}
    return {cfg.key: Precision(worst.get(cid, math.inf), samples.used_reps.get(cid, 0), stored[cid])
            for cid, cfg in ds.configs.items() if only is None or cfg.key in only}


def _repetitions_of(store: Path, keys: Collection[str]) -> list[int]:
    with closing(connect_ro(store)) as db:
        return [row[0] for key in keys for row in db.execute(
            "SELECT r.id FROM repetition r JOIN config c ON c.id = r.config_id WHERE c.key = ?", (key,))]


def needing_more(precision: dict[str, Precision], target_pct: float, max_repetitions: int) -> list[str]:
    """Keys of the configurations above the target that may still grow, sorted."""
    return sorted(key for key, p in precision.items()
                  if p.half_width_pct > target_pct and p.stored < max_repetitions)
