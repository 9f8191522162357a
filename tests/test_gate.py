# SPDX-License-Identifier: Apache-2.0
"""The regression gate `tlsbench compare A B --fail-above PCT` on two real runs, one of them
slower: a PSK handshake (A) against an ECDHE-RSA one (B), configuration against
configuration (--config), as a firmware's CI compares a baseline with a candidate."""
from __future__ import annotations

import dataclasses
import math

import pytest
from click.testing import CliRunner

from conftest import small_plan
from tlsbench.analysis.compare import CompareRow, Comparison, worse_beyond
from tlsbench.analysis.stats import Ratio
from tlsbench.cli import main
from tlsbench.cli.run import run_experiment
from tlsbench.cli.report import GATE_EXIT

PSK = '["TLS-PSK-WITH-AES-128-GCM-SHA256"]'
RSA = '["TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]'


@pytest.fixture(scope="module")
def stores(tmp_path_factory, agent_path):
    root = tmp_path_factory.mktemp("gate")
    for name, suites in (("baseline", PSK), ("candidate", RSA)):
        run_experiment(small_plan(name, repetitions=12, rounds=3, suites=suites), root, agent_dir=agent_path.parent)
    return root / "baseline", root / "candidate"


def gate(*args: str):
    return CliRunner().invoke(main, ["compare", *args])


def test_a_slower_candidate_fails_the_gate_and_names_the_rows(stores):
    baseline, candidate = stores
    res = gate(str(baseline), str(candidate), "--config", "1", "1", "--fail-above", "1%", "--include-flagged",
               "--metric", "handshake_processing")
    assert res.exit_code == GATE_EXIT["worse"] == 1, res.output
    worse = [line for line in res.output.splitlines() if line.startswith("WORSE")]
    assert sorted(peer for line in worse for peer in ("client", "server") if f"  {peer}  " in line) == ["client", "server"]
    assert len(worse) == 2
    assert all("handshake_processing" in line and "95% CI" in line for line in worse)
    assert "2 worse by more than 1%" in res.output


def test_a_faster_candidate_and_an_unchanged_one_pass(stores):
    baseline, candidate = stores
    res = gate(str(candidate), str(baseline), "--config", "1", "1", "--fail-above", "1%", "--include-flagged",
               "--metric", "handshake_processing")
    assert res.exit_code == GATE_EXIT["passed"], res.output
    assert "WORSE" not in res.output and "0 worse" in res.output
    same = gate(str(baseline), str(baseline), "--fail-above", "1%", "--include-flagged")  # every measure, identical values
    assert same.exit_code == 0 and "0 worse" in same.output, same.output


def test_what_cannot_be_compared_exits_2(stores, tmp_path):
    baseline, candidate = stores
    missing = gate(str(baseline), str(tmp_path / "nothing-here"), "--fail-above", "1%")
    assert missing.exit_code == GATE_EXIT["cannot compare"] == 2
    assert "cannot compare" in missing.output and "Traceback" not in missing.output
    unmatched = gate(str(baseline), str(candidate), "--fail-above", "1%")  # no configuration in common
    assert unmatched.exit_code == 2 and "nothing to compare" in unmatched.output
    bad = gate(str(baseline), str(candidate), "--fail-above", "a lot")
    assert bad.exit_code == 2 and "not a percentage" in bad.output


def _row(median_a: float, median_b: float, ci: tuple[float, float], exact: bool) -> CompareRow:
    ratio = median_b / median_a
    return CompareRow("c", "client", "handshake_processing", "", 5, 5, median_a, median_b,
                      Ratio(ratio, ci, "slower", True), exact)


def test_exact_counts_need_no_interval():
    """Deterministic counts (every value identical on each side) fail on the ratio alone;
    measured times only when the whole interval lies beyond the threshold."""
    exact = _row(1000, 1011, (math.nan, math.nan), exact=True)
    exact_within = dataclasses.replace(exact, median_b=1009, ratio=Ratio(1.009, (math.nan, math.nan), "slower", True))
    timed_unsure = _row(1000, 1030, (1.005, 1.06), exact=False)
    timed_sure = _row(1000, 1030, (1.015, 1.05), exact=False)
    cmp_ = Comparison("A", "B", 0.01, [exact, exact_within, timed_unsure, timed_sure], [])
    assert worse_beyond(cmp_, 0.01) == [exact, timed_sure]
