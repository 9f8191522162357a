# SPDX-License-Identifier: Apache-2.0
"""REFERENCE ONLY: a frozen copy of stats.summarize() and everything it calls, as they were
before they were made faster (commit 48a3929). test_stats.py checks that the current
implementation returns the same floats, bit for bit, for the same inputs and seeded
generator. Do not edit or "fix" this file: it is the yardstick."""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import bdtrc, gammaln, ndtri, stdtrit, xlog1py, xlogy

from tlsbench.analysis.stats.stats import CI_NONE, CI_REPETITIONS, CI_ROUNDS, CONFIDENCE, MAX_RESAMPLED, MIN_CI_VALUES, MIN_ROUNDS, N_BOOT, N_BOOT_MEAN, N_BOOT_ROUNDS, NAN2, Summary

_COUNT_WINDOW = 64


def tukey_counts(x: np.ndarray) -> tuple[int, int]:
    """(mild, severe) outlier counts by Tukey's fences on the sample's quartiles."""
    if len(x) < 4:
        return 0, 0
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    beyond = np.maximum(q1 - x, x - q3)  # distance outside the box (≤ 0 inside)
    severe = int(np.count_nonzero(beyond > 3.0 * iqr))
    return int(np.count_nonzero(beyond > 1.5 * iqr)) - severe, severe



@functools.lru_cache(maxsize=256)  # samples of one experiment share a few sizes
def _order_stat_cdf(n: int, k: int) -> np.ndarray:
    """CDF of the rank of the k-th order statistic (1-based) of a bootstrap resample:
    element j (0-based) is P(X*₍ₖ₎ ≤ x₍ⱼ₊₁₎) = P(Binom(n, (j+1)/n) ≥ k)."""
    p = np.arange(1, n + 1) / n
    cdf = bdtrc(k - 1, n, p)  # P(Binom(n, p) > k − 1)
    cdf[-1] = 1.0
    cdf = np.maximum.accumulate(cdf)
    cdf.setflags(write=False)  # cached: shared by every caller
    return cdf



def boot_medians(x: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT) -> np.ndarray:
    """n_boot draws of the bootstrap median of x (same distribution as resampling)."""
    xs = np.sort(np.asarray(x, dtype=np.float64))
    n = len(xs)
    if n == 0:
        return np.full(n_boot, math.nan)
    u = rng.random(n_boot)
    lo = np.searchsorted(_order_stat_cdf(n, (n + 1) // 2), u)
    if n % 2:
        return xs[lo]
    hi = lo + _upper_middle_offset(n, lo, rng)
    return (xs[lo] + xs[hi]) / 2



@functools.lru_cache(maxsize=256)
def _upper_middle_coincides(n: int, k: int) -> np.ndarray:
    """P(X*₍ₖ₊₁₎ = x₍ⱼ₎ | X*₍ₖ₎ = x₍ⱼ₎) for j = 1..n, n values resampled n times.
    With C(j) the count of resampled values ≤ x₍ⱼ₎: X*₍ₖ₎ = x₍ⱼ₎ iff C(j−1) < k ≤ C(j), and
    the upper middle coincides iff C(j) > k. C(j−1) ~ Binom(n, (j−1)/n), and given it the
    draws equal to x₍ⱼ₎ are Binom(n − C(j−1), 1/(n−j+1))."""
    coincide = np.ones(n)
    # Only positions X*₍ₖ₎ can take (non-zero mass in float64); the rest are never drawn.
    j = 1 + np.flatnonzero(np.diff(_order_stat_cdf(n, k), prepend=0.0) > 0)[:, None]
    c = np.arange(max(0, k - _COUNT_WINDOW), k)[None, :]
    p = (j - 1) / n
    pmf = np.exp(gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1) + xlogy(c, p) + xlog1py(n - c, -p))
    q = 1.0 / (n - j + 1)
    reach = (pmf * bdtrc(k - c - 1, n - c, q)).sum(axis=1)  # P(C(j−1) < k ≤ C(j))
    beyond = (pmf * bdtrc(k - c, n - c, q)).sum(axis=1)     # P(C(j−1) < k < C(j))
    coincide[j[:, 0] - 1] = np.divide(beyond, reach, out=np.ones(len(reach)), where=reach > 0)
    coincide.setflags(write=False)  # cached: shared by every caller
    return coincide



def _upper_middle_offset(n: int, lo: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draws of J₂ − J₁ (positions of the two middle order statistics of a resample, n even)
    given J₁ = lo + 1: 0 with the probability above; otherwise exactly k values of the
    resample are ≤ x₍ⱼ₎ and the other n − k are uniform over the n − j larger ones, so the
    offset is the least of n − k uniform draws from 1..n−j (inverse CDF)."""
    k = n // 2
    coincide = _upper_middle_coincides(n, k)[lo]
    above = n - (lo + 1)
    u_same, u_min = rng.random(len(lo)), rng.random(len(lo))
    least = np.ceil(above * -np.expm1(np.log1p(-u_min) / (n - k)))
    offset = np.clip(least, 1, np.maximum(above, 1)).astype(np.int64)
    return np.where((u_same < coincide) | (above == 0), 0, offset)



def boot_means(x: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT_MEAN) -> np.ndarray:
    """n_boot resampled means of x (chunked so memory stays ~ 8 MB)."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.full(n_boot, math.nan)
    if n * n_boot > MAX_RESAMPLED:
        # Normal limit of the resampled mean (its skewness is skew(x)/√n: negligible here).
        return rng.normal(x.mean(), x.std(ddof=0) / math.sqrt(n), n_boot)
    chunk = max(1, 1_000_000 // n)
    out = np.empty(n_boot)
    for s in range(0, n_boot, chunk):
        m = min(chunk, n_boot - s)
        out[s:s + m] = x[rng.integers(0, n, size=(m, n), dtype=np.int64)].mean(axis=1)
    return out



def percentile_ci(draws: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    a = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(draws, [a, 100 - a])
    return float(lo), float(hi)



def summarize(x: np.ndarray, rng: np.random.Generator, mean_ci: bool = True,
              excluded: int = 0, rounds: np.ndarray | None = None) -> Summary:
    """Summary of one sample; ``mean_ci`` False skips the (costlier) resampling of the mean.
    With ``rounds`` (the round of each value) the median's interval resamples whole rounds
    when there are at least MIN_ROUNDS of them (see the module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    keep = np.isfinite(x)
    x = x[keep]
    rounds = None if rounds is None else np.asarray(rounds)[keep]
    n = len(x)
    if n == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, NAN2, NAN2, 0, 0, excluded, CI_NONE)
    q1, med, q3, p95 = np.percentile(x, [25, 50, 75, 95])
    mild, severe = tukey_counts(x)
    n_rounds = len(np.unique(rounds)) if rounds is not None else 0
    method = CI_NONE if n < MIN_CI_VALUES else CI_ROUNDS if n_rounds >= MIN_ROUNDS else CI_REPETITIONS
    median_ci = percentile_ci(boot_medians(x, rng)) if method != CI_NONE else NAN2
    if method == CI_ROUNDS:  # drift may widen the interval, never narrow it (few rounds would)
        lo, hi = percentile_ci(boot_medians_by_round(x, rounds, rng))
        k = few_clusters_factor(n_rounds)
        by_rounds = (med - k * (med - lo), med + k * (hi - med))
        median_ci = (min(median_ci[0], by_rounds[0]), max(median_ci[1], by_rounds[1]))
    return Summary(
        n=n, median=float(med), mean=float(x.mean()), sd=float(x.std(ddof=1)) if n > 1 else math.nan,
        q1=float(q1), q3=float(q3), iqr=float(q3 - q1), min=float(x.min()), p95=float(p95),
        max=float(x.max()), median_ci=median_ci,
        mean_ci=percentile_ci(boot_means(x, rng)) if mean_ci and method != CI_NONE else NAN2,
        mild=mild, severe=severe, excluded=excluded, ci_method=method, rounds=n_rounds,
        round_spread_pct=round_spread_pct(x, rounds) if n_rounds >= 2 else math.nan,
    )



@functools.lru_cache(maxsize=64)
def few_clusters_factor(clusters: int, confidence: float = CONFIDENCE) -> float:
    """How much wider a cluster bootstrap's interval is made for its few clusters: with G of
    them, the resampled spread is (G − 1)/G of the true variance and the normal quantile
    is too small; the usual correction (Cameron & Miller 2015, "A practitioner's guide to
    cluster-robust inference", J. Human Resources 50(2)) scales by √(G/(G − 1)) and uses
    Student's t with G − 1 degrees of freedom: ×1.17 for 12 rounds, ×1.58 for 5, ×2.7 for 3."""
    q = (1 + confidence) / 2
    return float(stdtrit(clusters - 1, q) / ndtri(q) * math.sqrt(clusters / (clusters - 1)))



def round_medians(x: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """The median of each round's values, in round order: one sort for all rounds (the mean
    of the two middle values, as np.median takes it, so the same to the last bit)."""
    x, rounds = np.asarray(x, float), np.asarray(rounds)
    order = np.lexsort((x, rounds))
    xs, rs = x[order], rounds[order]
    starts = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]]) if len(rs) else np.empty(0, np.int64)
    counts = np.diff(np.r_[starts, len(xs)])
    return (xs[starts + (counts - 1) // 2] + xs[starts + counts // 2]) / 2



def round_spread_pct(x: np.ndarray, rounds: np.ndarray) -> float:
    """How far apart the medians of the rounds lie: (max − min) as % of the overall median."""
    medians = round_medians(x, rounds)
    overall = float(np.median(x))
    return 100.0 * float(medians.max() - medians.min()) / abs(overall) if overall else math.nan



def boot_medians_by_round(x: np.ndarray, rounds: np.ndarray, rng: np.random.Generator,
                          n_boot: int = N_BOOT_ROUNDS) -> np.ndarray:
    """Bootstrap medians resampling whole rounds (a cluster bootstrap): repetitions of one
    round share the machine's state at the time, so rounds are the independent units. Each
    draw weights every value by how often its round was picked; its median is the lower
    weighted median, found by a binary search over the sorted values (per draw, the weighted
    count of values up to a position is the picks times each round's count there)."""
    order = np.argsort(x, kind="stable")
    xs = np.asarray(x, float)[order]
    n = len(xs)
    if n == 0:
        return np.full(n_boot, math.nan)
    ids, cluster = np.unique(np.asarray(rounds)[order], return_inverse=True)
    k = len(ids)
    # Each draw picks k rounds with replacement: how often each was picked, (B, k). Counting
    # uniform picks is the multinomial draw, at a tenth of rng.multinomial's cost.
    picked = rng.integers(0, k, size=(n_boot, k)) + k * np.arange(n_boot)[:, None]
    picks = np.bincount(picked.ravel(), minlength=n_boot * k).reshape(n_boot, k).astype(np.float64)
    upto = np.zeros((n, k))  # values of each round among xs[:j + 1]
    upto[np.arange(n), cluster.reshape(-1)] = 1
    np.cumsum(upto, axis=0, out=upto)
    half = picks @ upto[-1] / 2
    lo, hi = np.zeros(n_boot, dtype=np.int64), np.full(n_boot, n - 1, dtype=np.int64)
    while (lo < hi).any():  # the first position whose weighted count reaches half the total
        mid = (lo + hi) // 2
        reached = np.einsum("bk,bk->b", picks, upto[mid]) >= half
        hi, lo = np.where(reached, mid, hi), np.where(reached, lo, mid + 1)
    return xs[lo]

