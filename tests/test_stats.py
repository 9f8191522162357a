# SPDX-License-Identifier: Apache-2.0
"""Statistics: properties (hypothesis) and known values."""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlsbench.analysis.stats import stats as S

samples = st.lists(st.floats(1, 1e7, allow_nan=False), min_size=1, max_size=200)


@settings(max_examples=60, deadline=None)
@given(samples, st.integers(0, 2**32 - 1))
def test_ci_contains_the_estimate(xs, seed):
    s = S.summarize(np.array(xs), np.random.default_rng(seed))
    assert s.min <= s.q1 <= s.median <= s.q3 <= s.max and s.p95 <= s.max
    if len(xs) < S.MIN_CI_VALUES:  # too few values for an interval: none, and it says so
        assert not s.has_interval and math.isnan(s.median_ci_pct) and math.isnan(s.mean_ci[0])
        assert s.interval_note == f"n = {len(xs)}: no interval"
        return
    assert s.median_ci[0] <= s.median <= s.median_ci[1]
    assert s.mean_ci[0] <= s.mean * (1 + 1e-9) and s.mean * (1 - 1e-9) <= s.mean_ci[1]


def test_one_value_has_no_interval_and_no_spread():
    s = S.summarize(np.array([5.0]), np.random.default_rng(0))
    assert s.n == 1 and s.median == 5.0 and s.ci_method == S.CI_NONE
    assert math.isnan(s.sd) and math.isnan(s.median_ci[0]) and s.interval_note == "n = 1: no interval"


def lower_weighted_median_of_resampled_rounds(x, rounds, picks):
    """The reference: pool the picked rounds' values, take the lower median."""
    ids = np.unique(rounds)
    out = []
    for draw in picks:
        pooled = np.sort(np.concatenate([x[rounds == ids[i]] for i in draw]))
        out.append(pooled[math.ceil(len(pooled) / 2) - 1])
    return np.array(out)


@pytest.mark.parametrize("n,k", [(7, 3), (60, 12), (41, 5)])
def test_round_bootstrap_resamples_whole_rounds(n, k):
    rng = np.random.default_rng(n)
    x, rounds = rng.lognormal(size=n), np.r_[np.arange(k), rng.integers(0, k, n - k)]
    draws = S.boot_medians_by_round(x, rounds, np.random.default_rng(3), n_boot=300)
    picks = np.random.default_rng(3).integers(0, k, size=(300, k))  # the same picks, pooled by hand
    assert np.array_equal(draws, lower_weighted_median_of_resampled_rounds(x, rounds, picks))


def test_drift_between_rounds_widens_the_interval():
    """Twelve rounds of 20, the machine 10% slower in three of them: resampling repetitions
    pretends the median is known to a fraction of a percent; resampling rounds says what the
    run supports (how many slow rounds a run like it catches moves its median)."""
    rng = np.random.default_rng(8)
    rounds = np.repeat(np.arange(12), 20)
    x = 100 * rng.lognormal(0, 0.01, 240) * np.where(np.isin(rounds, [2, 5, 9]), 1.10, 1.0)
    by_rounds = S.summarize(x, np.random.default_rng(1), mean_ci=False, rounds=rounds)
    by_reps = S.summarize(x, np.random.default_rng(1), mean_ci=False)
    assert by_rounds.ci_method == S.CI_ROUNDS and by_reps.ci_method == S.CI_REPETITIONS
    assert by_rounds.median_ci_pct > 2 * by_reps.median_ci_pct
    assert by_rounds.rounds == 12 and by_rounds.round_spread_pct == pytest.approx(10, abs=2)


@pytest.mark.parametrize("k", [3, 4, 12])
def test_rounds_never_narrow_the_interval(k):
    """Three rounds give a coarse cluster bootstrap, narrow by chance: the interval still
    spans at least what resampling the repetitions gives."""
    rng = np.random.default_rng(k)
    rounds = np.repeat(np.arange(k), 10)
    x = rng.lognormal(0, 0.05, 10 * k)
    by_rounds = S.summarize(x, np.random.default_rng(2), mean_ci=False, rounds=rounds)
    by_reps = S.summarize(x, np.random.default_rng(2), mean_ci=False)
    assert by_rounds.median_ci[0] <= by_reps.median_ci[0] and by_rounds.median_ci[1] >= by_reps.median_ci[1]


@pytest.mark.parametrize("g", [3, 5, 12, 40])
def test_few_clusters_widen_by_students_t_and_the_degrees_of_freedom(g):
    from scipy import stats
    want = stats.t.ppf(0.975, g - 1) / stats.norm.ppf(0.975) * math.sqrt(g / (g - 1))
    assert S.few_clusters_factor(g) == pytest.approx(want, rel=1e-9)


def test_fewer_than_three_rounds_resample_repetitions():
    rounds = np.repeat([0, 1], 10)
    s = S.summarize(np.arange(20.0), np.random.default_rng(1), mean_ci=False, rounds=rounds)
    assert s.ci_method == S.CI_REPETITIONS and s.rounds == 2


@settings(max_examples=40, deadline=None)
@given(samples, st.randoms(use_true_random=False))
def test_median_and_its_ci_invariant_to_permutation(xs, rnd):
    ys = list(xs)
    rnd.shuffle(ys)
    a = S.summarize(np.array(xs), np.random.default_rng(1), mean_ci=False)
    b = S.summarize(np.array(ys), np.random.default_rng(1), mean_ci=False)
    assert a.median == b.median and a.median_ci == b.median_ci


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 100), min_size=8, max_size=100), st.floats(1e4, 1e6))
def test_outliers_are_counted_not_dropped(xs, far):
    x = np.array(xs + [far + 200])
    s = S.summarize(x, np.random.default_rng(0), mean_ci=False)
    assert s.n == len(x) and s.max == far + 200
    assert s.severe >= 1  # the far value lies beyond 3 IQR (IQR ≤ 100 here)


def test_tukey_known_values():
    x = np.r_[np.arange(1, 21, dtype=float), 40.0, 100.0]  # q1=6.25, q3=16.75, IQR=10.5
    mild, severe = S.tukey_counts(x)
    assert (mild, severe) == (1, 1)   # 40 is beyond 1.5 IQR (32.5), 100 beyond 3 IQR (48.25)


def test_exact_median_bootstrap_matches_resampling():
    rng = np.random.default_rng(5)
    for n in (7, 10, 41):
        x = rng.lognormal(size=n)
        exact = S.boot_medians(x, np.random.default_rng(1), 100_000)
        idx = np.random.default_rng(2).integers(0, n, (100_000, n))
        resampled = np.median(x[idx], axis=1)
        assert np.percentile(exact, [2.5, 50, 97.5]) == pytest.approx(np.percentile(resampled, [2.5, 50, 97.5]), rel=0.03)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_even_median_law_equals_enumeration_of_every_resample(n):
    """P(J1 = a, J2 = b) for the middle order statistics' positions, against all n**n resamples."""
    k = n // 2
    p_lo = np.diff(np.r_[0, S._order_stat_cdf(n, k)])
    same = S._upper_middle_coincides(n, k)
    counts = Counter()
    for picks in itertools.product(range(n), repeat=n):
        s = sorted(picks)
        counts[(s[k - 1], s[k])] += 1
    for (a, b), count in counts.items():
        above = n - a - 1
        if a == b:
            law = p_lo[a] * same[a]
        else:  # the least of n − k uniform draws from the `above` larger values is b − a
            m = b - a
            law = p_lo[a] * (1 - same[a]) * ((above - m + 1) ** (n - k) - (above - m) ** (n - k)) / above ** (n - k)
        assert law == pytest.approx(count / n ** n, abs=1e-12)


def test_seeded_and_reproducible():
    x = np.random.default_rng(0).normal(100, 10, 300)
    a = S.summarize(x, S.rng_for(7, "cfg", "metric"))
    b = S.summarize(x, S.rng_for(7, "cfg", "metric"))
    c = S.summarize(x, S.rng_for(8, "cfg", "metric"))
    assert a == b and a.mean_ci != c.mean_ci


def test_ci_half_width_shrinks_like_one_over_sqrt_n():
    rng = np.random.default_rng(3)
    w = [np.diff(S.summarize(rng.normal(100, 10, n), rng, mean_ci=False).median_ci)[0] for n in (400, 6400)]
    assert w[0] / w[1] == pytest.approx(4, rel=0.3)


def test_ratio_verdicts_and_noise_floor():
    rng = np.random.default_rng(0)
    a = rng.normal(100, 1, 400)
    assert S.ratio_of_medians(a, a * 1.10, rng).verdict == "slower"
    assert S.ratio_of_medians(a, a * 0.90, rng).verdict == "faster"
    tiny = S.ratio_of_medians(a, a * 1.005, rng)  # CI may exclude 1, but within the 1% floor
    assert tiny.verdict == "no difference" and not tiny.significant
    r = S.ratio_of_medians(a, a * 1.10, rng)
    assert r.ci[0] <= r.ratio <= r.ci[1]


def test_reps_needed_to_separate():
    rng = np.random.default_rng(1)
    a = S.summarize(rng.normal(100, 10, 50), rng, mean_ci=False)
    b = S.summarize(rng.normal(101, 10, 50), rng, mean_ci=False)
    need = S.reps_to_separate(a, b)
    msg = S.separation_advice("A", a, "B", b)
    assert S.cis_overlap(a.median_ci, b.median_ci) and need > 50
    assert msg and f"about {int(need)} repetitions" in msg
    same = S.summarize(np.ones(10), rng, mean_ci=False)
    assert math.isinf(S.reps_to_separate(same, same))


def test_empty_and_single_samples():
    s = S.summarize(np.array([]), np.random.default_rng(0))
    assert s.n == 0 and math.isnan(s.median)
    assert s.interval_note == "n = 0: no interval"


def test_round_bootstrap_widens_the_interval_when_rounds_differ():
    rng = np.random.default_rng(4)
    rounds = np.repeat(np.arange(8), 30)
    same = rng.normal(100, 1, rounds.size)
    shifted = same + np.repeat(rng.normal(0, 3, 8), 30)  # each round in its own machine state
    width = lambda d: np.subtract(*S.percentile_ci(d)[::-1])
    by_rep = width(S.boot_medians(shifted, np.random.default_rng(1)))
    by_round = width(S.boot_medians_by_round(shifted, rounds, np.random.default_rng(1)))
    assert by_round > 2 * by_rep
    # rounds alike: about the ordinary bootstrap's width
    alike = width(S.boot_medians_by_round(same, rounds, np.random.default_rng(1)))
    assert alike == pytest.approx(width(S.boot_medians(same, np.random.default_rng(1))), rel=0.5)


def test_round_bootstrap_is_seeded_and_its_draws_are_sample_values():
    x, rounds = np.arange(20.0), np.repeat(np.arange(4), 5)
    a = S.boot_medians_by_round(x, rounds, np.random.default_rng(9), 500)
    assert np.array_equal(a, S.boot_medians_by_round(x, rounds, np.random.default_rng(9), 500))
    assert set(a.tolist()) <= set(x.tolist())


def _same_summary(a: S.Summary, b: S.Summary) -> bool:
    """Every field equal with == (NaN equal to NaN), intervals element by element."""
    def eq(u, v):
        if isinstance(u, tuple):
            return len(u) == len(v) and all(map(eq, u, v))
        return u == v or (isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v))
    return all(eq(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(S.Summary))


def _identity_cases():
    """Samples of every shape summarize() meets: odd/even n, n < 3, ties, zeros and
    negatives, NaN/inf (dropped), no rounds, one round, few and many rounds, rounds as
    sparse or negative integers and as strings, with and without the mean's interval."""
    g = np.random.default_rng(2024)
    sizes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 31, 50, 61, 100, 299, 300, 1000, 2001, 3000]
    for i in range(240):
        n = sizes[i % len(sizes)] if i < 2 * len(sizes) else int(g.integers(0, 700))
        shape = i % 5
        if shape == 0:
            x = g.lognormal(10, 0.1, n)                       # continuous, no ties
        elif shape == 1:
            x = np.round(g.lognormal(6, 0.05, n))             # integer ns: many ties
        elif shape == 2:
            x = g.integers(0, 4, n).astype(float)             # few distinct values, zeros
            if i % 3 == 0:  # −0.0 beside +0.0: equal (==), though a zero's sign may differ
                x *= g.choice([-1.0, 1.0], n)
        elif shape == 3:
            x = g.normal(0, 1, n)                             # negatives, NaN and inf to drop
            x[g.random(n) < 0.1] = np.nan
            x[g.random(n) < 0.03] = np.inf
        else:
            x = np.r_[g.lognormal(10, 0.05, n - n // 10), g.lognormal(11, 0.5, n // 10)]  # outliers
        k = int(g.choice([1, 2, 3, 5, 12, 22, 30]))
        rounds = g.integers(0, k, n)
        if i % 7 == 0:
            rounds = rounds * 5 - 7                           # sparse, negative round numbers
        if i % 11 == 0:
            rounds = np.array([f"r{r}" for r in rounds], dtype=object if n else str)
        yield x, (None if i % 6 == 0 else rounds), bool(i % 2), i


def _blocked(x: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """The clusters a run of more than MAX_CLUSTERS rounds is resampled in: blocks of
    consecutive rounds (stats.round_blocks), among the values summarize() keeps."""
    keep = np.isfinite(np.asarray(x, float))
    _, position = np.unique(np.asarray(rounds)[keep], return_inverse=True)
    out = np.zeros(len(x), dtype=np.int64)  # the dropped values' rounds do not count
    out[keep] = position.reshape(-1) * S.MAX_CLUSTERS // (position.max() + 1)
    return out


def _reference_summary(x, rounds, seed: int, mean_ci: bool, rng: np.random.Generator):
    """What the original summarize() (tests/stats_reference.py) returned; for more than
    MAX_CLUSTERS rounds, its interval from their blocks and its rounds' count and spread
    from the rounds themselves."""
    import stats_reference as ref
    old = ref.summarize(x, rng, mean_ci=mean_ci, excluded=seed % 3, rounds=rounds)
    if old.rounds <= S.MAX_CLUSTERS:
        return old
    rng.bit_generator.state = np.random.default_rng(seed).bit_generator.state
    blocked = ref.summarize(x, rng, mean_ci=mean_ci, excluded=seed % 3, rounds=_blocked(x, rounds))
    return dataclasses.replace(blocked, rounds=old.rounds, round_spread_pct=old.round_spread_pct)


def test_summarize_is_bit_identical_to_the_reference():
    """The faster summarize() returns what the original (tests/stats_reference.py) returned,
    float for float, consuming the same draws from the same seeded generator (a long run's
    rounds resampled in blocks, stats.MAX_CLUSTERS)."""
    for x, rounds, mean_ci, seed in _identity_cases():
        rng_new, rng_ref = np.random.default_rng(seed), np.random.default_rng(seed)
        new = S.summarize(x, rng_new, mean_ci=mean_ci, excluded=seed % 3, rounds=rounds)
        old = _reference_summary(x, rounds, seed, mean_ci, rng_ref)
        assert _same_summary(new, old), (seed, len(x), new, old)
        assert rng_new.random() == rng_ref.random()  # the same number of draws was taken


def test_a_long_run_is_resampled_in_blocks_of_consecutive_rounds():
    """60 rounds: 16 blocks of 3 or 4 consecutive rounds, the interval widened for 16
    clusters; the summary still counts 60 rounds."""
    g = np.random.default_rng(5)
    rounds = np.repeat(np.arange(60), 5)
    x = g.lognormal(10, 0.05, len(rounds)) * (1 + 0.002 * rounds)  # a slow drift
    s = S.summarize(x, np.random.default_rng(1), mean_ci=False, rounds=rounds)
    assert s.rounds == 60 and s.ci_method == S.CI_ROUNDS
    blocks = _blocked(x, rounds)
    assert np.unique(blocks).tolist() == list(range(S.MAX_CLUSTERS))
    assert sorted(set(np.bincount(blocks) // 5)) == [3, 4]
    assert np.all(np.diff(blocks) >= 0)  # consecutive rounds share a block
    assert s.median_ci == S.summarize(x, np.random.default_rng(1), mean_ci=False, rounds=blocks).median_ci


@pytest.mark.parametrize("n,k", [(1, 1), (2, 3), (7, 3), (60, 12), (301, 22), (3000, 22), (800, 30)])
def test_bootstraps_and_spread_are_bit_identical_to_the_reference(n, k):
    import stats_reference as ref
    g = np.random.default_rng(n * k)
    for x in (g.lognormal(size=n), np.round(g.lognormal(3, 0.3, n))):
        rounds = np.r_[np.arange(min(k, n)), g.integers(0, k, max(0, n - k))][:n]
        for name in ("boot_medians", "boot_means"):
            assert np.array_equal(getattr(S, name)(x, np.random.default_rng(1)),
                                  getattr(ref, name)(x, np.random.default_rng(1)))
        clusters = rounds if len(np.unique(rounds)) <= S.MAX_CLUSTERS else _blocked(x, rounds)
        assert np.array_equal(S.boot_medians_by_round(x, rounds, np.random.default_rng(2)),
                              ref.boot_medians_by_round(x, clusters, np.random.default_rng(2)))
        draws = g.normal(size=int(g.integers(1, 5000)))
        assert S.percentile_ci(draws) == ref.percentile_ci(draws)
        assert S.tukey_counts(x) == ref.tukey_counts(x)
        spread = (S.round_spread_pct(x, rounds), ref.round_spread_pct(x, rounds))
        assert spread[0] == spread[1] or all(map(math.isnan, spread))


@pytest.mark.parametrize("n", [2, 10, 300, 3000, 20000])
def test_upper_middle_law_is_the_reference_wherever_a_draw_can_land(n):
    """The law is computed only where Generator.random() can land (a few √n positions around
    the middle): there it equals the reference's, and the extreme draws land there."""
    import stats_reference as ref
    k = n // 2
    cdf = S._order_stat_cdf(n, k)
    reachable = S._reachable(cdf)
    assert np.array_equal(S._upper_middle_coincides(n, k)[reachable], ref._upper_middle_coincides(n, k)[reachable])
    extremes = np.searchsorted(cdf, [0.0, 2.0 ** -53, 0.5, 1 - 2.0 ** -53])
    assert reachable[extremes].all()
    assert np.count_nonzero(reachable) <= 2 + 10 * math.sqrt(n)
