# SPDX-License-Identifier: Apache-2.0
"""Experiment stores with a known cost model (tests/fixtures/synth_experiments.py): REP
frames with DISCARDED repetitions through the decoder and the store, then analysis,
report and exports. The same code paths with the real agents: test_primitives_e2e.py."""
import csv
import io
import json
import math

import numpy as np
import pytest

from fixtures import synth_experiments as se
from tlsbench.core import spec
from tlsbench.run import protocol
from stores import load_path, on
from tlsbench.analysis.questions.primitives import analyze_store, merged_order
from tlsbench.analysis.pipeline import analyze
from tlsbench.export import exporter
from tlsbench.report.html import build_html
from tlsbench.report.primitives import summary_table

S = spec.load()
DISCARDED = S.status.name(S.status.DISCARDED)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return se.make_store(tmp_path_factory.mktemp("prim"), reps=30, discard_every=10)


@pytest.fixture(scope="module")
def analysis(store):
    return analyze(load_path(store))


def test_a_discarded_rep_is_decoded_and_stored_as_such(tmp_path):
    blob = se.records(se.SHA256, 16, 1.0, 10**9, np.random.default_rng(0))
    frame = se.rep_frame(7, 3, S.status.DISCARDED, blob, 10**9)
    (decoded,) = protocol.decode_frames(frame)
    rep = protocol.decode_rep(decoded)
    assert rep.header.status == S.status.DISCARDED and rep.header.error_code == 2 and rep.records == blob


def test_discarded_repetitions_are_stored_counted_and_excluded(store, analysis):
    ds = load_path(store, experiments=True)
    assert np.count_nonzero(ds.reps.status == DISCARDED) == 8 * 3  # every 10th of 30, 8 configurations
    p = analysis.results.primitives
    assert p.discarded == 24 and all(c.discarded == 3 and c.used == 27 for c in p.counts)
    assert all(r.summary.n == 27 and r.summary.excluded == 3 for r in p.results)
    assert any("24 experiment repetitions were DISCARDED" in w for w in analysis.results.warnings)


def test_time_per_operation_is_the_group_span_minus_the_tracer_cost(analysis):
    p = analysis.results.primitives
    for r in p.results:
        model = se.EXPERIMENTS[0] if r.experiment == "sha256" else se.EXPERIMENTS[1]
        expected = model.cost(r.group_index, r.size, se.SPEED[r.library])
        assert r.summary.median == pytest.approx(expected, rel=0.01)
        assert r.summary.median_ci[0] <= r.summary.median <= r.summary.median_ci[1]
        assert r.marks == 1
    sha = p.find("openssl", "sha256", 64, "hash")
    assert sha.throughput == pytest.approx(64 / sha.summary.median * 1e9)
    assert sha.throughput_ci[0] <= sha.throughput <= sha.throughput_ci[1]
    assert math.isnan(p.find("openssl", "ecdsa-p256", 0, "sign").throughput)


def test_libraries_are_compared_with_the_fastest(analysis):
    p = analysis.results.primitives
    assert p.libraries == ["mbedtls", "openssl", "wolfssl"] and [m.name for m in p.experiments] == ["sha256", "ecdsa-p256"]
    assert [(c.experiment, c.size, c.group) for c in p.cells] == [
        ("sha256", 16, "hash"), ("sha256", 64, "hash"), ("ecdsa-p256", 0, "sign"), ("ecdsa-p256", 0, "verify")]
    for cell in p.cells:
        assert cell.fastest == "openssl"
        mbed = cell.vs_fastest["mbedtls"]
        assert mbed.ratio == pytest.approx(2.0, rel=0.02) and mbed.verdict == "slower" and mbed.ci[0] > 1
    assert p.missing == {"ecdsa-p256": ["wolfssl"]}


def test_handshake_analysis_never_sees_experiment_configurations(store, analysis):
    assert not analysis.results.configs and not analysis.results.rows and not analysis.results.winners
    assert len(load_path(store).reps) == 0 and len(load_path(store, experiments=True).reps) == 8 * 30


def test_a_store_from_before_experiments_has_none():
    from analysis_support import GOLDEN_DB
    assert on(GOLDEN_DB, analyze_store) is None and len(load_path(GOLDEN_DB, experiments=True).configs) == 0


def test_report_shows_the_primitives_section_and_no_empty_handshake_sections(analysis):
    html = build_html(analysis, figures=[])
    assert 'id="primitives"' in html and 'id="winners"' not in html and 'id="suites"' not in html
    assert 'id="fig-primitives_throughput"' in html and 'id="fig-primitives_asymmetric"' in html
    assert "240 experiment repetitions of 8 configurations" in html
    assert "×2.0" in html and "slower" in html and "Not offered: ecdsa-p256 by wolfssl" in html
    assert "DISCARDED</th>" in html and "<td>3</td>" in html


def test_exports_carry_the_primitives(analysis):
    rows = list(csv.DictReader(io.StringIO(exporter("csv").export(analysis))))
    mine = [r for r in rows if r["metric"] == "experiment_group"]
    assert len(mine) == 10 and {r["label"] for r in mine} == {"hash", "sign", "verify"}
    assert any(r["config"] == "openssl sha256 64" and r["n"] == "27" for r in mine)
    assert {(r["library"], r["experiment"], r["total_bytes"], r["kind"]) for r in mine} >= {
        ("openssl", "sha256", "64", "experiment"), ("mbedtls", "ecdsa-p256", "0", "experiment")}
    doc = json.loads(exporter("json").export(analysis))
    assert len(doc["primitives"]["results"]) == 10 and doc["primitives"]["missing"] == {"ecdsa-p256": ["wolfssl"]}
    md = exporter("markdown").export(analysis)
    assert "## Crypto primitives and experiments" in md and "| sha256 | 64 B | hash |" in md


def test_summary_table_lists_one_row_per_group_at_the_largest_payload(analysis):
    table = summary_table(analysis.results.primitives)
    assert [c.header for c in table.columns] == ["experiment", "group", "payload", "mbedtls", "openssl", "wolfssl"]
    assert table.row_count == 3  # sha256 at 64 B, ecdsa-p256 sign and verify


def test_merged_order_keeps_every_librarys_order():
    assert merged_order([["a", "c"], ["a", "b", "c", "d"], ["b", "e"]]) == ["a", "b", "e", "c", "d"]
