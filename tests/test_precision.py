# SPDX-License-Identifier: Apache-2.0
"""The precision the controller steers by, checked against a plain resampling bootstrap
over the stored data of a real experiment."""
from __future__ import annotations

import numpy as np
import pytest

from analysis_support import GOLDEN_DB
from tlsbench.analysis import precision
from tlsbench.analysis.load import load
from tlsbench.analysis.measures import METRIC, measures
from tlsbench.analysis.samples import split_samples


def simple_bootstrap_half_width_pct(x: np.ndarray, seed: int, resamples: int = 20_000) -> float:
    """Textbook percentile bootstrap: resample, take medians, 2.5th and 97.5th percentiles."""
    rng = np.random.default_rng(seed)
    medians = np.median(x[rng.integers(0, len(x), size=(resamples, len(x)))], axis=1)
    lo, hi = np.percentile(medians, [2.5, 97.5])
    return 100 * (hi - lo) / 2 / np.median(x)


def test_precision_of_stored_experiment_matches_a_simple_bootstrap():
    measured = precision.measure(GOLDEN_DB, seed=7)
    ds = load(GOLDEN_DB)
    samples = split_samples(ds, measures(ds))
    for config_id, config in ds.configs.items():
        widths = [simple_bootstrap_half_width_pct(np.asarray(v, float), seed=config_id)
                  for (c, _peer, m, _label), v in samples.values.items()
                  if c == config_id and m == METRIC[precision.TARGET_METRIC]]
        assert len(widths) == 2  # both peers
        assert measured[config.key].half_width_pct == pytest.approx(max(widths), rel=0.15)
        assert measured[config.key].stored == int((ds.reps.config_id == config_id).sum())


def test_needing_more_respects_target_and_cap():
    p = {"a": precision.Precision(2.0, 10, 10), "b": precision.Precision(0.5, 10, 10),
         "c": precision.Precision(3.0, 40, 40)}
    assert precision.needing_more(p, target_pct=1.0, max_repetitions=40) == ["a"]


def test_a_sample_too_small_has_unknown_precision(tmp_path):
    import sqlite3

    from fixtures import synth

    db = synth.make_store(tmp_path / "s.db", reps=2, suites=synth.SUITES[:1])
    (p,) = precision.measure(db, seed=1).values()
    assert p.half_width_pct == float("inf") and p.stored == 2
    with sqlite3.connect(db) as conn:  # nothing usable at all: still unknown, still counted
        conn.execute("UPDATE repetition SET status = 'HANDSHAKE_FAILED'")
    (p,) = precision.measure(db, seed=1).values()
    assert p.half_width_pct == float("inf") and p.used == 0 and p.stored == 2


def test_measuring_some_configurations_gives_their_figures_alone():
    everything = precision.measure(GOLDEN_DB, seed=7)
    key = sorted(everything)[0]
    assert precision.measure(GOLDEN_DB, seed=7, only=[key]) == {key: everything[key]}
