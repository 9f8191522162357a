# SPDX-License-Identifier: Apache-2.0
"""Adaptive precision, the rule: which configurations still need repetitions.

After the planned rounds, a configuration whose median handshake processing (of either
peer; of any group for an experiment) has a 95% CI half-width above the plan's target gets
another round, until it meets the target or reaches the plan's maximum. How precisely each
is known is measured by the report's own analysis on the store (analysis/stats/precision.py); the
cli hands that measurement to the controller as a callable, so an interrupted extension
resumes like the rest of the sweep."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Mapping

MIN_SAMPLE = 3  # fewer usable repetitions (e.g. most were descheduled): precision unknown


@dataclass(frozen=True)
class Precision:
    """How precisely one configuration's handshake processing is known."""

    half_width_pct: float  # worst (largest) 95% CI half-width of the median over the peers, % of it
    used: int              # repetitions in the statistics (flagged and descheduled excluded)
    stored: int            # repetitions stored, excluded ones included


# Configuration keys (None: all) -> their precision, from everything stored so far.
MeasurePrecision = Callable[[Collection[str] | None], Mapping[str, Precision]]


def needing_more(precision: Mapping[str, Precision], target_pct: float, max_repetitions: int) -> list[str]:
    """Keys of the configurations above the target that may still grow, sorted."""
    return sorted(key for key, p in precision.items()
                  if p.half_width_pct > target_pct and p.stored < max_repetitions)
