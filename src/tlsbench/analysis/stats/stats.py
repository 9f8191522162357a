# SPDX-License-Identifier: Apache-2.0
"""Small, cited statistics for benchmark samples (numpy/scipy, vectorised).

- Summary: n, median, mean, σ, IQR, min, p95, max, 95% bootstrap CIs of median and mean.
- Outliers: Tukey fences (Tukey 1977, *Exploratory Data Analysis*): mild beyond 1.5 IQR,
  severe beyond 3 IQR; counted, never dropped (cf. hyperfine src/outlier_detection.rs,
  which counts and warns rather than removing).
- Bootstrap of the median: the percentile bootstrap resamples the data; the resampled
  median's distribution is known in closed form (Efron 1982, *The Jackknife, the
  Bootstrap and Other Resampling Plans*, §5.2): P(X*₍ₖ₎ ≤ x₍ⱼ₎) = P(Binom(n, j/n) ≥ k).
  We draw B seeded medians from that distribution (inverse CDF), which is the same
  distribution as resampling B times, at O(n + B log n) instead of O(B n). For even n the
  median is the mean of X*₍ₖ₎ and X*₍ₖ₊₁₎ (k = n/2): X*₍ₖ₎ is drawn as above, then
  X*₍ₖ₊₁₎ from its exact law given X*₍ₖ₎ (see _upper_middle_coincides), again without
  resampling.
- Bootstrap of the mean: seeded resampling (percentile interval; cf. asv asv/_stats.py,
  which also uses resampling for its confidence intervals). Above 2·10⁶ draws (n > 2000 at
  1000 resamples) the resampled mean is drawn from its normal limit N(x̄, σ̂²/n).
- Intervals of a median hold up within a run: by default whole rounds are resampled too (a
  cluster bootstrap, boot_medians_by_round), since the repetitions of one round share the
  machine's state at the time, and the interval spans both: drift between the rounds of a
  run widens it, and a few rounds (a coarse cluster bootstrap, narrow by chance) cannot
  narrow it below what the repetitions say. The rounds' interval is widened for their few
  number (few_clusters_factor: √(G/(G−1)) and Student's t, ×1.17 for 12 rounds), since a
  percentile cluster bootstrap of a dozen clusters covers less than it claims. With fewer
  than MIN_ROUNDS rounds only the repetitions are resampled (the interval then says nothing
  about drift); with fewer than MIN_CI_VALUES values there is no interval at all. A run of
  more than MAX_CLUSTERS rounds is resampled in MAX_CLUSTERS blocks of consecutive rounds
  (a block bootstrap, Künsch 1989, "The jackknife and the bootstrap for general stationary
  observations", Ann. Statist. 17(3)): neighbouring rounds share the machine's slow drift,
  so blocks of them are nearer to independent than single rounds are, and the cost of a
  draw (it grows with the clusters) stays the same however long the run.
- Ratios of medians (comparisons, winners): independent bootstrap draws of both medians; between
  two experiments the interval is widened by their rounds as a median's is (ratio_of_medians_by_round).
- Repetitions needed: CI half-widths shrink as 1/√n.
"""
from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import bdtrc, gammaln, ndtri, stdtrit, xlog1py, xlogy  # scipy.stats costs ~2 s to import

CONFIDENCE = 0.95
N_BOOT = 4000          # bootstrap draws (medians are cheap: see module docstring)
N_BOOT_MEAN = 1000     # resamples for the mean (each costs n draws)
MAX_RESAMPLED = 2_000_000  # n × resamples above which the mean's bootstrap uses its normal limit
NOISE_FLOOR = 0.01     # a ratio within ±1% of 1 is "no difference", whatever its CI
N_BOOT_ROUNDS = 2000   # draws of the round (cluster) bootstrap
MIN_CI_VALUES = 3      # fewer values: no interval ("n = 2: no interval"), never a "±0%"
MIN_ROUNDS = 3         # fewer rounds with values: the repetitions are resampled instead
MAX_CLUSTERS = 16      # more rounds: the round bootstrap resamples this many blocks of them

# How a median's interval was made (Summary.ci_method).
CI_ROUNDS, CI_REPETITIONS, CI_NONE = "rounds", "repetitions", "none"


@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one sample (ns unless stated)."""

    n: int                       # values used (after exclusions)
    median: float
    mean: float
    sd: float                    # sample standard deviation (ddof=1; NaN for n < 2)
    q1: float
    q3: float
    iqr: float                   # q3 − q1
    min: float
    p95: float
    max: float
    median_ci: tuple[float, float]  # 95% bootstrap CI of the median (NaN: no interval)
    mean_ci: tuple[float, float]    # 95% bootstrap CI of the mean (NaN if not computed)
    mild: int                    # Tukey mild outliers (1.5–3 IQR beyond the quartiles)
    severe: int                  # Tukey severe outliers (> 3 IQR beyond the quartiles)
    excluded: int = 0            # flagged repetitions left out (set by the caller)
    ci_method: str = CI_REPETITIONS  # CI_ROUNDS, CI_REPETITIONS or CI_NONE (too few values)
    rounds: int = 0              # rounds the values came from (0: not known)
    round_spread_pct: float = math.nan  # (max − min) of the round medians, % of the median

    @property
    def median_ci_pct(self) -> float:
        """CI half-width as ± % of the median (as papers quote it)."""
        return _half_pct(self.median_ci, self.median)

    @property
    def mean_ci_pct(self) -> float:
        return _half_pct(self.mean_ci, self.mean)

    @property
    def has_interval(self) -> bool:
        return self.ci_method != CI_NONE

    @property
    def interval_note(self) -> str:
        """What a table shows instead of an interval: "n = 1: no interval" ("" when there is one)."""
        return "" if self.has_interval else f"n = {self.n}: no interval"


def _half_pct(ci: tuple[float, float], est: float) -> float:
    return 100.0 * (ci[1] - ci[0]) / 2 / abs(est) if est else math.nan


NAN2 = (math.nan, math.nan)


def tukey_counts(x: np.ndarray) -> tuple[int, int]:
    """(mild, severe) outlier counts by Tukey's fences on the sample's quartiles."""
    if len(x) < 4:
        return 0, 0
    q1, q3 = np.percentile(x, [25, 75])
    return _tukey_counts(x, q1, q3)


def _tukey_counts(x: np.ndarray, q1: float, q3: float) -> tuple[int, int]:
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
    return _boot_medians_sorted(np.sort(np.asarray(x, dtype=np.float64)), rng, n_boot)


def _boot_medians_sorted(xs: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    n = len(xs)
    if n == 0:
        return np.full(n_boot, math.nan)
    u = rng.random(n_boot)
    lo = np.searchsorted(_order_stat_cdf(n, (n + 1) // 2), u)
    if n % 2:
        return xs[lo]
    hi = lo + _upper_middle_offset(n, lo, rng)
    return (np.take(xs, lo) + np.take(xs, hi)) / 2


# C(j−1), the resample's count of values below x₍ⱼ₎, lies within this many of k−1 whenever
# P(X*₍ₖ₎ = x₍ⱼ₎) is not negligible: the values equal to x₍ⱼ₎ number ~1 on average, so
# needing 64 of them has probability < 1e-80.
_COUNT_WINDOW = 64


@functools.lru_cache(maxsize=256)
def _upper_middle_coincides(n: int, k: int) -> np.ndarray:
    """P(X*₍ₖ₊₁₎ = x₍ⱼ₎ | X*₍ₖ₎ = x₍ⱼ₎) for j = 1..n, n values resampled n times.
    With C(j) the count of resampled values ≤ x₍ⱼ₎: X*₍ₖ₎ = x₍ⱼ₎ iff C(j−1) < k ≤ C(j), and
    the upper middle coincides iff C(j) > k. C(j−1) ~ Binom(n, (j−1)/n), and given it the
    draws equal to x₍ⱼ₎ are Binom(n − C(j−1), 1/(n−j+1))."""
    coincide = np.ones(n)
    # Only positions a draw can reach (_reachable) with non-zero mass in float64: about
    # 8√n around the middle; each position's sums are its own, so the same as for all.
    cdf = _order_stat_cdf(n, k)
    j = 1 + np.flatnonzero((np.diff(cdf, prepend=0.0) > 0) & _reachable(cdf))[:, None]
    c = np.arange(max(0, k - _COUNT_WINDOW), k)[None, :]
    p = (j - 1) / n
    pmf = np.exp(gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1) + xlogy(c, p) + xlog1py(n - c, -p))
    q = 1.0 / (n - j + 1)
    reach = (pmf * bdtrc(k - c - 1, n - c, q)).sum(axis=1)  # P(C(j−1) < k ≤ C(j))
    beyond = (pmf * bdtrc(k - c, n - c, q)).sum(axis=1)     # P(C(j−1) < k < C(j))
    coincide[j[:, 0] - 1] = np.divide(beyond, reach, out=np.ones(len(reach)), where=reach > 0)
    coincide.setflags(write=False)  # cached: shared by every caller
    return coincide


_U_STEPS = 2.0 ** 53  # Generator.random() draws multiples of 2⁻⁵³ in [0, 1)


def _reachable(cdf: np.ndarray) -> np.ndarray:
    """Positions searchsorted(cdf, u) can return for a u of Generator.random(): those whose
    interval (cdf[i − 1], cdf[i]] holds a multiple of 2⁻⁵³ below 1 (position 0 holds 0)."""
    first_above = np.floor(cdf[:-1] * _U_STEPS) + 1  # the least multiple above cdf[i − 1], in steps
    return np.r_[True, (first_above < _U_STEPS) & (first_above / _U_STEPS <= cdf[1:])]


def _upper_middle_offset(n: int, lo: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draws of J₂ − J₁ (positions of the two middle order statistics of a resample, n even)
    given J₁ = lo + 1: 0 with the probability above; otherwise exactly k values of the
    resample are ≤ x₍ⱼ₎ and the other n − k are uniform over the n − j larger ones, so the
    offset is the least of n − k uniform draws from 1..n−j (inverse CDF)."""
    k = n // 2
    coincide = np.take(_upper_middle_coincides(n, k), lo)
    above = (n - 1) - lo
    u_same, u_min = rng.random(len(lo)), rng.random(len(lo))
    # ceil(above · −expm1(log1p(−u) / (n − k))) clipped to 1..above (0 when above is 0), in
    # place; the same float operations as ever, so the same offsets.
    least = np.negative(u_min)
    np.log1p(least, out=least)
    least /= n - k
    np.expm1(least, out=least)
    np.negative(least, out=least)
    least *= above
    np.ceil(least, out=least)
    np.minimum(np.maximum(least, 1, out=least), above, out=least)
    np.copyto(least, 0, where=u_same < coincide)
    return least.astype(np.int64)


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
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 1 or len(draws) == 0:
        lo, hi = np.percentile(draws, [a, 100 - a])
        return float(lo), float(hi)
    # np.percentile without its overhead: select just the order statistics it interpolates
    # (a partition, as np.percentile does; the last one too, so a NaN shows as it does there).
    n = len(draws)
    kth = sorted({i for q in (a, 100 - a) for i in _percentile_positions(n, q)} | {n - 1})
    part = np.partition(draws, kth)
    if np.isnan(part[-1]):
        return float(part[-1]), float(part[-1])
    return float(_percentile_sorted(part, a)), float(_percentile_sorted(part, 100 - a))


def _percentile_positions(n: int, q: float) -> tuple[int, int]:
    """The two order statistics (0-based) np.percentile(·, q) interpolates between, n values."""
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        return n - 1, n - 1
    prev = math.floor(virtual)
    return prev, prev + 1


def _percentile_sorted(xs: np.ndarray, q: float) -> np.float64:
    """np.percentile(xs, q) of non-NaN values whose order statistics at
    _percentile_positions are in place (xs sorted, or partitioned there): numpy's 'linear'
    method step by step (numpy/lib/_function_base_impl.py _quantile, _get_indexes, _lerp),
    the same float operations in the same order, so the same bits as np.percentile."""
    n = len(xs)
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        prev = nxt = -1  # numpy takes the last value, and its gamma is then virtual − (−1)
    else:
        prev = math.floor(virtual)
        nxt = prev + 1
    gamma = virtual - prev
    a, b = xs[prev], xs[nxt]
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def rng_for(seed: int, *key: object) -> np.random.Generator:
    """A generator seeded by the experiment's seed and a stable key (the group's name), so
    each group's interval is reproducible and independent of evaluation order."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    words = [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF] + list(np.frombuffer(digest[:16], "<u4"))
    return np.random.default_rng(words)


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
    # One sort serves every order statistic below (percentiles, medians, the bootstraps),
    # with the values' rounds in the same order. Each result is the same selection of values
    # as the separate sorts made, so the same floats (for a sample mixing −0.0 and +0.0 the
    # sign of a zero may differ: which of two equal values a sort puts first is arbitrary).
    order = np.argsort(x)
    xs = x[order]
    q1, med, q3, p95 = (_percentile_sorted(xs, q) for q in (25, 50, 75, 95))
    mild, severe = _tukey_counts(x, q1, q3) if n >= 4 else (0, 0)
    n_rounds, cluster = (0, None) if rounds is None else _round_index(rounds)
    method = CI_NONE if n < MIN_CI_VALUES else CI_ROUNDS if n_rounds >= MIN_ROUNDS else CI_REPETITIONS
    median_ci = percentile_ci(_boot_medians_sorted(xs, rng, N_BOOT)) if method != CI_NONE else NAN2
    if cluster is not None:
        cluster = cluster[order]
    if method == CI_ROUNDS:  # drift may widen the interval, never narrow it (few rounds would)
        lo, hi = percentile_ci(_boot_medians_by_round_sorted(xs, cluster, n_rounds, rng, N_BOOT_ROUNDS))
        k = few_clusters_factor(min(n_rounds, MAX_CLUSTERS))
        by_rounds = (med - k * (med - lo), med + k * (hi - med))
        median_ci = (min(median_ci[0], by_rounds[0]), max(median_ci[1], by_rounds[1]))
    return Summary(
        n=n, median=float(med), mean=float(x.mean()), sd=float(x.std(ddof=1)) if n > 1 else math.nan,
        q1=float(q1), q3=float(q3), iqr=float(q3 - q1), min=float(xs[0]), p95=float(p95),
        max=float(xs[-1]), median_ci=median_ci,
        mean_ci=percentile_ci(boot_means(x, rng)) if mean_ci and method != CI_NONE else NAN2,
        mild=mild, severe=severe, excluded=excluded, ci_method=method, rounds=n_rounds,
        round_spread_pct=_round_spread_pct_sorted(xs, cluster, n_rounds) if n_rounds >= 2 else math.nan,
    )


def _round_index(rounds: np.ndarray) -> tuple[int, np.ndarray]:
    """(number of distinct rounds, each value's index into the sorted distinct rounds): what
    np.unique(rounds, return_inverse=True) gives, by counting when rounds are small integers."""
    rounds = np.asarray(rounds)
    if rounds.dtype.kind in "iu" and len(rounds):
        low = int(rounds.min())
        span = int(rounds.max()) - low + 1
        if span <= 4 * len(rounds) + 64:
            shifted = (rounds - low).astype(np.intp)
            present = np.bincount(shifted, minlength=span) > 0
            return int(np.count_nonzero(present)), (np.cumsum(present) - 1)[shifted]
    ids, cluster = np.unique(rounds, return_inverse=True)
    return len(ids), cluster.reshape(-1)


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


def _round_spread_pct_sorted(xs: np.ndarray, cluster: np.ndarray, k: int) -> float:
    """round_spread_pct from the sorted values and their rounds' indices (0..k−1): grouping
    the sorted values by round (a stable sort) orders each round's values, and a median is
    taken as round_medians and np.median take it (the mean of the two middle values)."""
    grouped = xs[np.argsort(cluster.astype(np.int16) if k < 2**15 else cluster, kind="stable")]
    counts = np.bincount(cluster, minlength=k)
    starts = np.cumsum(counts) - counts
    medians = (grouped[starts + (counts - 1) // 2] + grouped[starts + counts // 2]) / 2
    h = len(xs) // 2
    overall = float(np.mean(xs[h - 1 + len(xs) % 2:h + 1]))  # the middle value(s), as np.median
    return 100.0 * float(medians.max() - medians.min()) / abs(overall) if overall else math.nan


@dataclass(frozen=True)
class Ratio:
    """median(B) / median(A) with its bootstrap CI and a verdict."""

    ratio: float
    ci: tuple[float, float]
    verdict: str        # one of VERDICTS
    significant: bool   # CI excludes 1 and |ratio − 1| ≥ noise floor


# Verdict of a ratio B/A of times: below 1 means B takes less time.
VERDICTS = ("faster", "slower", "no difference")


def ratio_of_medians(a: np.ndarray, b: np.ndarray, rng: np.random.Generator,
                     noise_floor: float = NOISE_FLOOR, n_boot: int = N_BOOT) -> Ratio:
    """Ratio of medians B/A, percentile bootstrap CI from independent median draws."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0 or len(b) == 0:
        return Ratio(math.nan, NAN2, "no difference", False)
    ma, mb = np.median(a), np.median(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = mb / ma
        draws = boot_medians(b, rng, n_boot) / boot_medians(a, rng, n_boot)
    ci = percentile_ci(draws[np.isfinite(draws)]) if np.isfinite(draws).any() else NAN2
    sig = bool((ci[1] < 1 or ci[0] > 1) and abs(r - 1) >= noise_floor)
    return Ratio(float(r), ci, verdict(r, sig), sig)


def boot_medians_by_round(x: np.ndarray, rounds: np.ndarray, rng: np.random.Generator,
                          n_boot: int = N_BOOT_ROUNDS) -> np.ndarray:
    """Bootstrap medians resampling whole rounds (a cluster bootstrap): repetitions of one
    round share the machine's state at the time, so rounds are the independent units. Each
    draw weights every value by how often its round was picked; its median is the lower
    weighted median: the first position of the sorted values whose weighted count (the picks
    times each round's count of values up to there) reaches half the draw's total."""
    order = np.argsort(x, kind="stable")
    xs = np.asarray(x, float)[order]
    if len(xs) == 0:
        return np.full(n_boot, math.nan)
    k, cluster = _round_index(np.asarray(rounds))
    return _boot_medians_by_round_sorted(xs, cluster[order], k, rng, n_boot)


def round_blocks(cluster: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """The clusters a round bootstrap resamples, of values in rounds `cluster` (0..k−1, in
    round order): the rounds themselves while there are at most MAX_CLUSTERS of them, else
    MAX_CLUSTERS blocks of consecutive rounds whose numbers of rounds differ by one at most."""
    return (cluster, k) if k <= MAX_CLUSTERS else (cluster * MAX_CLUSTERS // k, MAX_CLUSTERS)


def _boot_medians_by_round_sorted(xs: np.ndarray, cluster: np.ndarray, k: int, rng: np.random.Generator,
                                  n_boot: int) -> np.ndarray:
    """boot_medians_by_round of sorted values xs whose rounds are cluster (0..k−1)."""
    cluster, k = round_blocks(cluster, k)
    n = len(xs)
    # Each draw picks k rounds with replacement: how often each was picked, (B, k). Counting
    # uniform picks is the multinomial draw, at a tenth of rng.multinomial's cost.
    picked = rng.integers(0, k, size=(n_boot, k))
    picked += k * np.arange(n_boot)[:, None]
    # Counts are integers: exact in int32 while a draw's total (≤ k·n) fits.
    dtype = np.int32 if k * n < 2**31 else np.int64
    picks = np.bincount(picked.ravel(), minlength=n_boot * k).reshape(n_boot, k).astype(dtype)
    # Every draw's median lies between the lowest and the highest of the rounds' own lower
    # medians (at the lowest, each round has < half its values up to it; at the highest,
    # ≥ half), so the search spans only the positions from first to last of those.
    counts = np.bincount(cluster, minlength=k)
    by_round = np.argsort(cluster.astype(np.int16) if k < 2**15 else cluster, kind="stable")
    medians_at = by_round[np.cumsum(counts) - counts + (counts - 1) // 2]
    first, last = int(medians_at.min()), int(medians_at.max())
    steps = (last - first).bit_length()
    # upto[i]: values of each round among xs[:first + i + 1], repeated past `last` (to a power
    # of two, so the search needs no bounds).
    upto = np.zeros((max(1, 1 << steps), k), dtype)
    span = last - first + 1
    upto[np.arange(span), cluster[first:last + 1]] = 1
    upto[0] += np.bincount(cluster[:first], minlength=k).astype(dtype)
    np.cumsum(upto[:span], axis=0, out=upto[:span])
    upto[span:] = upto[span - 1]
    need = (np.einsum("bk,k->b", picks, counts.astype(dtype)) + 1) // 2  # a weighted count ≥ half the draw's total
    # Binary search (by halving steps, so a fixed number of iterations): lo ends as the count of
    # positions whose weighted count is short of half, i.e. the first position that reaches it.
    lo = np.zeros(n_boot, np.intp)
    for step in (1 << np.arange(steps - 1, -1, -1)).tolist():
        short = np.einsum("bk,bk->b", picks, np.take(upto, lo + (step - 1), axis=0)) < need
        np.add(lo, step, out=lo, where=short)
    return xs[lo + first]


def ratio_of_medians_by_round(a: np.ndarray, rounds_a: np.ndarray, b: np.ndarray, rounds_b: np.ndarray,
                              rng: np.random.Generator, noise_floor: float = NOISE_FLOOR) -> Ratio:
    """Ratio of medians B/A of two separately run experiments. Its interval follows a median's
    rule (summarize): the repetitions' interval, widened to the one from resampling whole
    rounds where each side has MIN_ROUNDS rounds or more (widened for their few number, on the
    log scale of a ratio): drift between rounds may widen it, never narrow it."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0 or len(b) == 0:
        return Ratio(math.nan, NAN2, "no difference", False)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = float(np.median(b) / np.median(a))
        ci = _finite_ci(boot_medians(b, rng) / boot_medians(a, rng))
        clusters = min(_round_index(np.asarray(rounds_a))[0], _round_index(np.asarray(rounds_b))[0])
        if clusters >= MIN_ROUNDS and r > 0 and all(c > 0 for c in ci):
            lo, hi = _finite_ci(boot_medians_by_round(b, rounds_b, rng) / boot_medians_by_round(a, rounds_a, rng))
            k = few_clusters_factor(min(clusters, MAX_CLUSTERS))
            if lo > 0:
                ci = (min(ci[0], r * (lo / r) ** k), max(ci[1], r * (hi / r) ** k))
    sig = bool((ci[1] < 1 or ci[0] > 1) and abs(r - 1) >= noise_floor)
    return Ratio(r, ci, verdict(r, sig), sig)


def _finite_ci(draws: np.ndarray) -> tuple[float, float]:
    """The percentile interval of a ratio's bootstrap draws that are finite."""
    draws = draws[np.isfinite(draws)]
    return percentile_ci(draws) if len(draws) else NAN2


def verdict(ratio: float, significant: bool) -> str:
    if not significant:
        return VERDICTS[2]
    return VERDICTS[0] if ratio < 1 else VERDICTS[1]


def cis_overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return not (a[1] < b[0] or b[1] < a[0])


def reps_to_separate(a: Summary, b: Summary) -> float:
    """Repetitions per candidate after which the two medians' CIs would no longer overlap,
    assuming each half-width shrinks as 1/√n (inf when the medians are equal)."""
    gap = abs(a.median - b.median)
    if not gap or not a.n or not b.n:
        return math.inf
    hw = lambda s: (s.median_ci[1] - s.median_ci[0]) / 2 * math.sqrt(s.n)  # noqa: E731
    return float(math.ceil(((hw(a) + hw(b)) / gap) ** 2))


def separation_advice(name_a: str, a: Summary, name_b: str, b: Summary) -> str | None:
    """A warning that says what to do when two medians' CIs overlap, else None."""
    thin = [f"{name} has {s.n} value{'s' if s.n != 1 else ''}" for name, s in ((name_a, a), (name_b, b))
            if not all(map(math.isfinite, s.median_ci))]
    if thin:
        return f"{' and '.join(thin)}: too few for an interval (at least {MIN_CI_VALUES} are needed)"
    if not cis_overlap(a.median_ci, b.median_ci):
        return None
    gap = 100 * abs(a.median - b.median) / min(abs(a.median), abs(b.median) or 1)
    width = max(a.median_ci_pct, b.median_ci_pct)
    need = reps_to_separate(a, b)
    tail = ("the medians are equal: no number of repetitions separates them" if math.isinf(need)
            else f"about {int(need)} repetitions each would separate them")
    return (f"CI ±{width:.1f}% is wider than the {gap:.1f}% gap between {name_a} and {name_b}; "
            f"{tail}")


@dataclass
class Sample:
    """A sample with the count of values excluded before it was taken."""

    values: np.ndarray
    excluded: int = 0
    meta: dict = field(default_factory=dict)
