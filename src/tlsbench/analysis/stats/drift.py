# SPDX-License-Identifier: Apache-2.0
"""Round-level shifts: a machine that changes speed between states (another workload comes
and goes, a frequency or a noisy neighbour changes) makes whole batches slower while no
repetition was descheduled: the agent ran, only slower, so neither the run-queue wait nor
wall against CPU time sees it. Seen here: phases about 50% apart.

Every batch (a configuration's repetitions of one round) is reduced to its median over its
configuration's median (a speed factor: 1 = typical), and the factors are split into two
states by the best two-group split of their logarithms (one-dimensional k-means, exact by
scanning the sorted values). A shift is reported when the two states lie at least SHIFT_GAP
apart, MIN_SEPARATION times further apart than the factors spread within a state, and the
smaller state holds at least MIN_SLOW_SHARE of the batches: a run that merely drifts a
little does not qualify. Intervals resample whole rounds, so a shift widens them; it is
reported so a reader knows why, and which rounds ran in which state."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tlsbench.analysis.derive.runs import runs

SHIFT_GAP = 0.20        # the states' typical speeds differ by at least 20%
MIN_SEPARATION = 4.0    # ... and by at least 4 within-state standard deviations
MIN_SLOW_SHARE = 0.10   # ... and the smaller state holds at least 10% of the batches
MIN_BATCH_VALUES = 1    # a batch of one repetition still has a speed factor
MIN_BATCHES = 6


@dataclass(frozen=True)
class RoundShift:
    """Two speed states of the machine, seen in the batches' speed factors."""

    batches: int
    slow_batches: int       # in the slower state
    gap_pct: float          # how much slower, % of the faster state's speed
    slow_rounds: tuple[int, ...]  # rounds (1-based) whose batches were mostly slow

    def text(self, what: str) -> str:
        rounds = ", ".join(map(str, self.slow_rounds)) or "none as a whole"
        return (f"Round-level shift ({what}): {self.slow_batches} of {self.batches} batches ran about "
                f"{self.gap_pct:.0f}% slower than the rest (rounds mostly slow: {rounds}): the machine changed "
                "speed between states, which the descheduling rules cannot see (the agent ran, only slower). "
                "Intervals resample whole rounds, so they include it; configurations compared within this run "
                "share it (their rounds are interleaved); for absolute numbers, run again on a quieter machine "
                "and compare the two runs (tlsbench compare).")


def speed_factors(config: np.ndarray, rounds: np.ndarray, order: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per batch with enough values: its median over its configuration's median, its round and
    its position in time (the smallest `order`, e.g. repetition id). Returned in time order.
    One sort serves every median (a batch's values, then its configuration's, are runs of it)."""
    by_batch = np.lexsort((values, rounds, config))
    batch_cfg, batch_round, batch_values = config[by_batch], rounds[by_batch], values[by_batch]
    starts, ends = runs(batch_cfg, batch_round)
    medians = _medians(batch_values, starts, ends)
    by_config = np.lexsort((values, config))
    cfg_starts, cfg_ends = runs(config[by_config])
    typical = dict(zip(config[by_config][cfg_starts].tolist(), _medians(values[by_config], cfg_starts, cfg_ends)))
    cfg_of = batch_cfg[starts]
    keep = (ends - starts >= MIN_BATCH_VALUES) & (np.array([typical[c] for c in cfg_of.tolist()]) > 0)
    factor = medians / np.array([typical[c] for c in cfg_of.tolist()])
    first = np.minimum.reduceat(order[by_batch], starts) if len(starts) else np.empty(0, order.dtype)
    factor, round_of, first = factor[keep], batch_round[starts][keep].astype(np.int64), first[keep]
    at = np.argsort(first, kind="stable")
    return factor[at], round_of[at], first[at]


def _medians(sorted_values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The median of each run of sorted values: the mean of its two middle values, as
    np.median takes it, so the same to the last bit."""
    return (sorted_values[(starts + ends - 1) // 2] + sorted_values[(starts + ends) // 2]) / 2


def two_states(factors: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """The best split of the factors' logarithms into a low and a high group: (mask of the
    high group, log gap between the group means, pooled within-group standard deviation)."""
    logs = np.log(factors[factors > 0])
    if len(logs) < MIN_BATCHES:
        return None
    s = np.sort(logs)
    n = len(s)
    csum, csq = np.cumsum(s), np.cumsum(s * s)
    k = np.arange(1, n)  # sizes of the low group
    low_mean, high_mean = csum[:-1] / k, (csum[-1] - csum[:-1]) / (n - k)
    within = (csq[:-1] - k * low_mean ** 2) + ((csq[-1] - csq[:-1]) - (n - k) * high_mean ** 2)
    best = int(np.argmin(within))
    threshold = s[best]
    sd = math.sqrt(max(within[best], 0.0) / max(n - 2, 1))
    return np.log(factors) > threshold, float(high_mean[best] - low_mean[best]), sd


def round_shift(config: np.ndarray, rounds: np.ndarray, order: np.ndarray, values: np.ndarray) -> RoundShift | None:
    """A two-state shift of the machine's speed across the run, or None (see the module)."""
    if len(values) == 0:
        return None
    factors, round_of, _ = speed_factors(config, rounds, order, values)
    split = two_states(factors)
    if split is None:
        return None
    slow, gap, sd = split
    smaller = min(int(slow.sum()), int((~slow).sum()))
    if (math.expm1(gap) < SHIFT_GAP or gap < MIN_SEPARATION * sd or smaller < MIN_SLOW_SHARE * len(factors)):
        return None
    mostly = tuple(int(r) + 1 for r in np.unique(round_of) if slow[round_of == r].mean() > 0.5)
    return RoundShift(len(factors), int(slow.sum()), 100 * math.expm1(gap), mostly)
