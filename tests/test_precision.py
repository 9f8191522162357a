# SPDX-License-Identifier: Apache-2.0
"""The precision the controller steers by, checked against a plain resampling bootstrap
over the stored data of a real experiment."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analysis_support import GOLDEN_DB
from conftest import small_plan
from tlsbench.analysis.stats import precision
from stores import load_path, on
from tlsbench.analysis.pipeline import analyze
from tlsbench.app.run import run_experiment
from tlsbench.store.sqlite import DB_FILE, testing
from tlsbench.analysis.derive.measures import METRIC, measures
from tlsbench.analysis.derive.samples import split_samples


def round_bootstrap_half_width_pct(x: np.ndarray, rounds: np.ndarray, seed: int, resamples: int = 4000) -> float:
    """Textbook bootstraps: the cluster one (draw as many rounds as there are, with
    replacement, pool their values, take the lower median), its interval widened for few
    clusters (√(G/(G−1)), Student's t with G − 1 degrees of freedom), and the plain one
    (resample the values); the interval spans both."""
    rng = np.random.default_rng(seed)
    ids = np.unique(rounds)
    medians = []
    for _ in range(resamples):
        pooled = np.sort(np.concatenate([x[rounds == r] for r in rng.choice(ids, len(ids))]))
        medians.append(pooled[(len(pooled) + 1) // 2 - 1])
    plain = np.median(x[rng.integers(0, len(x), size=(resamples, len(x)))], axis=1)
    g, med = len(ids), np.median(x)
    widen = stats.t.ppf(0.975, g - 1) / stats.norm.ppf(0.975) * np.sqrt(g / (g - 1))  # few clusters
    lo, hi = med - widen * (med - np.percentile(medians, 2.5)), med + widen * (np.percentile(medians, 97.5) - med)
    plain_lo, plain_hi = np.percentile(plain, [2.5, 97.5])
    return 100 * (max(hi, plain_hi) - min(lo, plain_lo)) / 2 / med


def test_precision_of_stored_experiment_matches_a_round_bootstrap():
    measured = on(GOLDEN_DB, precision.measure, seed=7)
    ds = load_path(GOLDEN_DB)
    samples = split_samples(ds, measures(ds))
    for config_id, config in ds.configs.items():
        widths = [round_bootstrap_half_width_pct(np.asarray(v, float), samples.rounds[key], seed=config_id)
                  for key, v in samples.values.items()
                  if key[0] == config_id and key[2] == METRIC[precision.TARGET_METRIC]]
        assert len(widths) == 2  # both peers
        assert measured[config.key].half_width_pct == pytest.approx(max(widths), rel=0.15)
        assert measured[config.key].stored == int((ds.reps.config_id == config_id).sum())


def shown_half_widths(source, seed: int) -> dict[str, float]:
    """What the report shows: per configuration, the widest of its peers' handshake-processing
    intervals (± % of the median); where it shows no interval (too few usable repetitions), the
    rule's "not met yet" (inf)."""
    res = analyze(load_path(source), seed).results
    widths = {res.configs[cid].key: max(r.summary.median_ci_pct for r in res.rows
                                        if r.config_id == cid and r.metric == precision.TARGET_METRIC)
              for cid in res.configs}
    return {key: w if math.isfinite(w) else math.inf for key, w in widths.items()}


def test_the_stopping_rule_decides_on_the_interval_the_report_shows():
    """One seed, one key, one function: not "about the same", the same number."""
    measured = on(GOLDEN_DB, precision.measure, seed=7)
    assert {k: p.half_width_pct for k, p in measured.items()} == shown_half_widths(GOLDEN_DB, 7)


def test_a_run_stops_exactly_where_its_report_says_the_target_is_met(tmp_path, agent_path):
    """A real run with a precision target: each configuration either shows an interval
    within the target in the report or reached the maximum; and the rule's last measurement
    (on the final store) is the report's figure exactly."""
    target, most = 1.0, 30
    loaded = small_plan(repetitions=10, rounds=2,
                        extra=f"[precision]\ntarget_ci_percent = {target}\nmax_repetitions = {most}\n")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    db = summary.folder / DB_FILE
    measured = on(db, precision.measure, loaded.plan.seed)
    shown = shown_half_widths(db, loaded.plan.seed)
    assert {k: p.half_width_pct for k, p in measured.items()} == shown
    for key, p in measured.items():
        assert shown[key] <= target or p.stored == most, (key, shown[key], p)


def test_needing_more_respects_target_and_cap():
    p = {"a": precision.Precision(2.0, 10, 10), "b": precision.Precision(0.5, 10, 10),
         "c": precision.Precision(3.0, 40, 40)}
    assert precision.needing_more(p, target_pct=1.0, max_repetitions=40) == ["a"]


def test_a_sample_too_small_has_unknown_precision(tmp_path):
    from fixtures import synth

    db = synth.make_store(tmp_path / "s.db", reps=2, suites=synth.SUITES[:1])
    (p,) = on(db, precision.measure, seed=1).values()
    assert p.half_width_pct == float("inf") and p.stored == 2
    testing.update(db, "repetition", {"status": "HANDSHAKE_FAILED"})  # nothing usable: still unknown, still counted
    (p,) = on(db, precision.measure, seed=1).values()
    assert p.half_width_pct == float("inf") and p.used == 0 and p.stored == 2


def test_measuring_some_configurations_gives_their_figures_alone():
    everything = on(GOLDEN_DB, precision.measure, seed=7)
    key = sorted(everything)[0]
    assert on(GOLDEN_DB, precision.measure, seed=7, only=[key]) == {key: everything[key]}


def budget_plan(budget: float):
    return small_plan(repetitions=10, rounds=2, extra="[precision]\ntarget_ci_percent = 0.001\n"
                                                      f"max_repetitions = 1000\ntime_budget_s = {budget}\n")


def test_a_spent_time_budget_stops_the_precision_rounds_and_says_how_precise(tmp_path, agent_path):
    """A budget spent by the planned rounds: they all run, no precision round starts, and
    the run says where it stopped and which configurations are still above the target."""
    from rich.console import Console

    from tlsbench.analysis.questions.coverage import read_coverage
    from tlsbench.report.terminal import print_summary

    loaded = budget_plan(0.001)
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    planned = loaded.plan.repetitions
    assert summary.stored == summary.planned and not summary.interrupted
    stop = summary.budget
    assert stop is not None and stop.round == loaded.plan.rounds and stop.budget_s == 0.001
    assert stop.above and stop.configs == summary.planned // planned
    measured = on(summary.folder / DB_FILE, precision.measure, loaded.plan.seed)
    assert all(p.stored == planned for p in measured.values())  # no extra round ran
    assert stop.above == {k: p.half_width_pct for k, p in measured.items() if p.half_width_pct > 0.001}
    console = Console(record=True, width=400)
    print_summary(console, summary, "tlsbench run --resume", on(summary.folder / DB_FILE, read_coverage))
    text = console.export_text()
    assert "time budget (0.001 s" in text and f"{len(stop.above)} of {stop.configs} configuration(s) above" in text


def test_the_time_budget_is_not_part_of_what_is_measured():
    """Another budget resumes the same store: the plan hash leaves it out."""
    assert budget_plan(1.0).plan.hash() == budget_plan(500.0).plan.hash()
    assert budget_plan(1.0).plan.precision.time_budget_s == 1.0
