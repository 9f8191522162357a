# SPDX-License-Identifier: Apache-2.0
"""Comparisons B/A: verdicts against a noise floor."""
from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from analysis_support import GOLDEN_DB, golden  # noqa: F401
from fixtures import synth
from tlsbench.analysis.questions.compare import compare
from stores import load_path
from tlsbench.analysis.pipeline import analyze


def test_an_experiment_against_itself_shows_no_difference(golden):  # noqa: F811
    c = compare(golden, golden)
    assert c.rows and not c.not_compared
    assert all(r.ratio.ratio == 1 and r.ratio.verdict == "no difference" for r in c.rows)


def test_slower_records_are_detected(tmp_path):
    base = synth.SUITES[:2]
    slow = tuple(dataclasses.replace(s, record_us=s.record_us * 1.2) for s in base)
    a = analyze(load_path(synth.make_store(tmp_path / "a.db", reps=12, seed=1, suites=base)))
    b = analyze(load_path(synth.make_store(tmp_path / "b.db", reps=12, seed=2, suites=slow)))
    c = compare(a, b)
    rec = [r for r in c.rows if r.metric == "write_processing_post"]
    assert rec and all(r.ratio.verdict == "slower" and 1.1 < r.ratio.ratio < 1.3 for r in rec)
    hs = [r for r in c.rows if r.metric == "handshake_processing"]
    assert hs and all(r.ratio.verdict == "no difference" for r in hs)  # same handshake model


def test_two_configurations_of_one_experiment(golden):  # noqa: F811
    ids = sorted(golden.ds.configs)
    c = compare(golden, golden, config_a=ids[0], config_b=ids[1])
    assert c.rows and {r.config for r in c.rows} == {c.rows[0].config}


def test_cli_compare():
    from tlsbench.cli import main

    res = CliRunner().invoke(main, ["compare", str(GOLDEN_DB), str(GOLDEN_DB)])
    assert res.exit_code == 0, res.output
    assert "no difference" in res.output
    res = CliRunner().invoke(main, ["compare", str(GOLDEN_DB)])
    assert res.exit_code != 0


def test_a_shift_of_every_configuration_is_called_whole_run(tmp_path):
    """Nine configurations x two peers, all 8% slower in B: the run-to-run shift of handshake
    processing (the median ratio, with its interval) says the whole run moved; comparing an
    experiment with itself says nothing about runs."""
    base = tuple(dataclasses.replace(s, name=f"{s.name}-{i}", suite_id=s.suite_id + 0x100 * i)
                 for i in range(3) for s in synth.SUITES[:3])
    slow = tuple(dataclasses.replace(s, kex_us=s.kex_us * 1.08, sign_us=s.sign_us * 1.08) for s in base)
    a = analyze(load_path(synth.make_store(tmp_path / "a.db", reps=12, seed=1, suites=base)))
    b = analyze(load_path(synth.make_store(tmp_path / "b.db", reps=12, seed=2, suites=slow)))
    c = compare(a, b)
    shift = c.shifts["handshake_processing"]
    assert shift.rows == 18 and 1.05 < shift.ratio < 1.11 and shift.ci[0] > 1.02, shift
    (warning,) = c.warnings
    assert warning.startswith("the whole run moved: ") and "handshake_processing ×1.0" in warning and "one plan" in warning
    assert not compare(a, a).warnings and not compare(a, a).shifts


def test_records_only_change_is_not_a_whole_run_shift(tmp_path):
    base = synth.SUITES[:2]
    slow = tuple(dataclasses.replace(s, record_us=s.record_us * 1.2) for s in base)
    a = analyze(load_path(synth.make_store(tmp_path / "a.db", reps=12, seed=1, suites=base)))
    b = analyze(load_path(synth.make_store(tmp_path / "b.db", reps=12, seed=2, suites=slow)))
    assert not compare(a, b).warnings
