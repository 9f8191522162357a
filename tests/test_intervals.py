# SPDX-License-Identifier: Apache-2.0
"""No interval pretends (issue 17): too few values say so, configurations left without data
stay in every table as "no data: N excluded (why)", heavy load is reported per configuration,
descheduling is seen in two-process runs through the agents' run-queue wait, and a machine
that changes speed between rounds is reported."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from fixtures import synth
from tlsbench.analysis.stats.exclusions import DESCHEDULED
from stores import load_path
from tlsbench.analysis.pipeline import analyze
from tlsbench.export.csv import CsvExporter
from tlsbench.export.json import JsonExporter
from tlsbench.export.markdown import MarkdownExporter
from tlsbench.report.html import build_html
from tlsbench.store.sqlite import testing

REPS = 12


def failed(db: Path, config_id: int, from_idx: int = 0) -> Path:
    """Marks a configuration's repetitions from `from_idx` on failed."""
    for r in testing.rows(db, "repetition", {"config_id": config_id}):
        if r["idx"] >= from_idx:
            testing.update(db, "repetition", {"status": "HANDSHAKE_FAILED"}, {"id": r["id"]})
    return db


@pytest.fixture(scope="module")
def thin(tmp_path_factory) -> Path:
    """Suite 2: every repetition failed; suite 3: one usable repetition left."""
    db = synth.make_store(tmp_path_factory.mktemp("thin") / "tlsbench.db", reps=REPS, seed=5)
    failed(db, 2)
    return failed(db, 3, from_idx=1)


@pytest.fixture(scope="module")
def thin_analysis(thin):
    return analyze(load_path(thin))


def test_a_configuration_without_data_stays_and_says_why(thin_analysis):
    res = thin_analysis.results
    name = synth.SUITES[1].name
    assert res.no_data == {2: f"no data: {REPS} excluded (HANDSHAKE_FAILED {REPS})"}
    html = build_html(thin_analysis, figures=[])
    start = html.index(f'<tr><td class="l">{name}')
    assert f"no data: {REPS} excluded (HANDSHAKE_FAILED {REPS})" in html[start:html.index("</tr>", start)]
    csv_rows = list(csv.DictReader(io.StringIO(CsvExporter().export(thin_analysis))))
    mine = [r for r in csv_rows if r["config_id"] == "2"]
    assert len(mine) == 1 and mine[0]["n"] == "0" and mine[0]["note"].startswith("no data: 12 excluded")
    assert f"| {res.config_labels[2]} | no data: {REPS} excluded" in MarkdownExporter().export(thin_analysis)
    doc = json.loads(JsonExporter().export(thin_analysis))
    assert doc["no_data"]["2"].startswith("no data") and doc["exclusions"]["2"]["used"] == 0


def test_winners_name_what_they_could_not_consider(thin_analysis):
    handshake = [w for w in thin_analysis.results.winners if w.question.metric == "handshake_processing"]
    assert handshake and all(2 in w.not_considered for w in handshake)
    assert all(2 not in {p.config_id for p in w.places} for w in handshake)
    assert "not considered: " in build_html(thin_analysis, figures=[])


def test_one_repetition_has_no_interval_anywhere(thin_analysis):
    res = thin_analysis.results
    one = [r for r in res.rows if r.config_id == 3 and r.metric == "handshake_processing"]
    assert one and all(r.summary.n == 1 and not r.summary.has_interval for r in one)
    html = build_html(thin_analysis, figures=[])
    start = html.index(f'<tr><td class="l name">{synth.SUITES[2].name}')
    handshake_cells = html[start:html.index("</tr>", start)].split("</td>")[2:5]  # client, server, stop–start
    assert all("n = 1: no interval" in cell and "±" not in cell for cell in handshake_cells), handshake_cells
    for r in csv.DictReader(io.StringIO(CsvExporter().export(thin_analysis))):
        if r["config_id"] == "3" and r["n"] == "1":
            assert r["median_ci_lo"] == r["median_ci_pct"] == "" and r["note"] == "n = 1: no interval"
    assert "n = 1: no interval" in MarkdownExporter().export(thin_analysis)


def test_heavy_load_is_reported_per_configuration(tmp_path):
    """A third of suite 1's repetitions waited for a CPU (its run-queue wait): they are left
    out, counted per configuration, and the report says what to do."""
    db = synth.make_store(tmp_path / "tlsbench.db", reps=REPS, seed=2,
                          wait_ns=lambda rid, cid: 5_000_000 if cid == 1 and rid % 3 == 0 else 1_000)
    analysis = analyze(load_path(db))
    res = analysis.results
    lost = res.exclusions[1].reasons.get(DESCHEDULED, 0)
    assert lost > 0 and all(DESCHEDULED not in res.exclusions[c].reasons for c in (2, 3, 4))
    heavy = [w for w in res.warnings if w.startswith("Heavy load")]
    assert heavy and f"{lost} of {REPS}" in heavy[0] and "What to do" in heavy[0]
    html = build_html(analysis, figures=[])
    assert "Exclusions per configuration" in html and f"{lost} excluded (descheduled {lost})" in html


def test_descheduling_is_seen_in_two_process_runs(tmp_path):
    """Over TCP a repetition's wall time also holds its peer's work, so wall against CPU time
    says nothing there; the agent's run-queue wait does."""
    waits = synth.make_store(tmp_path / "w.db", reps=REPS, wait_ns=lambda rid, cid: 900_000 if rid % 4 == 0 else 0)
    plain = synth.make_store(tmp_path / "p.db", reps=REPS)
    for db in (waits, plain):
        testing.update(db, "config", {"transport": "tcp"})
    flagged = load_path(waits).descheduled_mask()
    assert flagged.sum() == len([rid for rid in range(1, 4 * REPS + 1) if rid % 4 == 0])
    assert not load_path(plain).descheduled_mask().any()


def test_a_machine_that_changes_speed_between_rounds_is_reported(tmp_path):
    shifted = synth.make_store(tmp_path / "s.db", reps=REPS, seed=3, slow_rounds=(3, 4, 8), slow=1.5)
    steady = synth.make_store(tmp_path / "q.db", reps=REPS, seed=3)
    res = analyze(load_path(shifted)).results
    assert res.round_shift is not None and res.round_shift.slow_rounds == (4, 5, 9)
    assert 40 < res.round_shift.gap_pct < 60
    assert any(w.startswith("Round-level shift (handshakes)") for w in res.warnings)
    assert analyze(load_path(steady)).results.round_shift is None


def _speed_factors_one_batch_at_a_time(config, rounds, order, values):
    """The batches' speed factors as first written: a median per batch, one at a time."""
    batches, inverse = np.unique(np.stack([config, rounds]), axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    typical = {c: float(np.median(values[config == c])) for c in np.unique(config)}
    factor, round_of, first = [], [], []
    for b in range(batches.shape[1]):
        mine = inverse == b
        factor.append(float(np.median(values[mine])) / typical[batches[0, b]])
        round_of.append(int(batches[1, b]))
        first.append(int(order[mine].min()))
    at = np.argsort(first, kind="stable")
    return np.array(factor)[at], np.array(round_of, dtype=np.int64)[at], np.array(first)[at]


def test_speed_factors_are_the_batches_medians_found_in_one_sort():
    """One sort for every batch's median (the per-batch loop took minutes on a long run):
    the same factors to the last bit, in the same order."""
    from tlsbench.analysis.stats.drift import speed_factors

    g = np.random.default_rng(3)
    n = 5000
    config, rounds = g.integers(1, 9, n), g.integers(0, 60, n)
    values = np.round(g.lognormal(12, 0.2, n))  # integer ns: ties
    order = g.permutation(n)
    for got, want in zip(speed_factors(config, rounds, order, values),
                         _speed_factors_one_batch_at_a_time(config, rounds, order, values)):
        assert np.array_equal(got, want)
