# SPDX-License-Identifier: Apache-2.0
"""Compare two runs (two experiments, or two configurations of one): per suite and per
step, the ratio of medians B/A with its bootstrap CI and a verdict beyond a noise floor.
Within one experiment both sides ran interleaved in the same rounds, so repetitions are
resampled; between two experiments whole rounds are (see stats.boot_medians_by_round)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import bdtrc

from .measures import METRIC, METRICS, label_text
from .samples import Measured
from .stats import NOISE_FLOOR, Ratio, ratio_of_medians, ratio_of_medians_by_round, rng_for
from .vocab import vocab

# Measures compared: network-invariant handshake and step costs, records, stop–start time.
COMPARED = ("handshake_processing", "step", "crypto", "handshake_time", "write_processing",
            "write_processing_post", "write_total", "read_processing", "read_processing_pre", "read_total")


@dataclass(frozen=True)
class CompareRow:
    """B/A for one measure of one matched configuration."""

    config: str       # display name (A's)
    peer: str
    metric: str
    label: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: Ratio      # median(B) / median(A)
    exact: bool = False  # every value of A the same, and every value of B (deterministic counts): no CI needed
    config_a: int = -1  # the configuration ids compared (exports name their key columns)
    config_b: int = -1


@dataclass(frozen=True)
class Comparison:
    name_a: str
    name_b: str
    noise_floor: float
    rows: list[CompareRow]
    unmatched: list[str]   # configurations present on one side only
    warnings: list[str] = field(default_factory=list)


def _pairs(a: Measured, b: Measured, config_a: int | None, config_b: int | None
           ) -> tuple[list[tuple[int, int, str]], list[str]]:
    """Matched (config A, config B, display name): by config key, or the two given ids."""
    if config_a is not None and config_b is not None:
        return [(config_a, config_b, f"{a.labels[config_a]} vs {b.labels[config_b]}")], []
    kb = {c.key: cid for cid, c in b.ds.configs.items()}
    ka = {c.key for c in a.ds.configs.values()}
    pairs = [(cid, kb[c.key], a.labels[cid]) for cid, c in a.ds.configs.items() if c.key in kb]
    unmatched = sorted(ka ^ set(kb))
    return pairs, unmatched


def compare(a: Measured, b: Measured, seed: int = 0, noise_floor: float = NOISE_FLOOR,
            config_a: int | None = None, config_b: int | None = None,
            metrics: tuple[str, ...] = COMPARED) -> Comparison:
    pairs, unmatched = _pairs(a, b, config_a, config_b)
    return compare_pairs(a, b, pairs, seed, noise_floor, metrics, unmatched)


def compare_pairs(a: Measured, b: Measured, pairs: list[tuple[int, int, str]], seed: int = 0,
                  noise_floor: float = NOISE_FLOOR, metrics: tuple[str, ...] = COMPARED,
                  unmatched: list[str] | None = None, names: tuple[str, str] | None = None) -> Comparison:
    """B/A per measure for given (config of A, config of B, display name) pairs; A and B may
    be the same analysis (two configurations, or two libraries, of one experiment)."""
    voc = vocab()
    wanted = {METRIC[m] for m in metrics}
    rows = []
    for ca, cb, name in pairs:
        of_a, of_b = a.samples.of_config(ca), b.samples.of_config(cb)
        for _, peer, metric, label in sorted(k for k in of_a if k[2] in wanted):
            va, rounds_a = of_a[(ca, peer, metric, label)]
            vb, rounds_b = of_b.get((cb, peer, metric, label), (None, None))
            if vb is None or not len(va) or not len(vb):
                continue
            rng = rng_for(seed, "compare", ca, cb, peer, metric, label)
            if a is b:  # one experiment: both sides ran interleaved in the same rounds
                r = ratio_of_medians(va, vb, rng, noise_floor)
            else:       # two experiments: each has its own machine states, round by round
                r = ratio_of_medians_by_round(va, rounds_a, vb, rounds_b, rng, noise_floor)
            rows.append(CompareRow(name, voc.peer_name(peer), METRICS[metric].name,
                                   label_text(METRICS[metric].name, label), len(va), len(vb),
                                   _median(va), _median(vb), r, bool(np.ptp(va) == 0 and np.ptp(vb) == 0), ca, cb))
    name_a, name_b = names or (a.ds.name, b.ds.name)
    warnings = [] if a is b else _whole_run_shift(rows, noise_floor)
    return Comparison(name_a, name_b, noise_floor, rows, unmatched or [], warnings)


# A sign test this unlikely under "each configuration moved up or down by chance" calls
# a shift common to the whole run.
COMMON_MODE_P = 0.01


def _whole_run_shift(rows: list[CompareRow], noise_floor: float) -> list[str]:
    """Two experiments whose configurations mostly moved the same way, by about as much,
    most likely ran on a machine of different speed: the verdicts then describe the machine."""
    ratios = np.array([r.ratio.ratio for r in rows if r.metric == "handshake_processing"])
    ratios = ratios[np.isfinite(ratios) & (ratios != 1)]
    if len(ratios) < 5:
        return []
    shift = float(np.median(ratios))
    up = int(np.sum(ratios > 1))
    same_way = max(up, len(ratios) - up)
    p_value = float(bdtrc(same_way - 1, len(ratios), 0.5))  # P(at least that many, by chance)
    if abs(shift - 1) < noise_floor / 2 or p_value > COMMON_MODE_P:
        return []
    lo, hi = np.percentile(ratios, [10, 90])
    return [f"{same_way} of the {len(ratios)} handshake-processing ratios moved the same way "
            f"(sign test p = {p_value:.1g}; median ×{shift:.3f}, 10–90% ×{lo:.3f}–×{hi:.3f}): a whole-run "
            "shift, as when the machine's speed differed between the two runs. Measure both sides in "
            "one plan (interleaved rounds) to tell it from a real difference."]


def _median(x: np.ndarray) -> float:
    return float(np.median(x))


def worse_beyond(comparison: Comparison, threshold: float) -> list[CompareRow]:
    """The regression gate (`tlsbench compare A B --fail-above 1%`): rows whose B/A exceeds
    1 + threshold with confidence, i.e. the whole 95% CI of the ratio above it; where both
    sides are exact (every value identical, as deterministic counts are), the ratio itself.
    Every compared measure costs more when it grows, so larger is worse."""
    limit = 1 + threshold
    return [r for r in comparison.rows if (r.exact and r.ratio.ratio > limit) or r.ratio.ci[0] > limit]
