# SPDX-License-Identifier: Apache-2.0
"""Tidy exports (one row per repetition / per slice, Parquet and CSV), read back by DuckDB
and pandas and checked against the store and the analysis; the Python API of
docs/python-api.md, executed against a real run; full-precision statistics and compare."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from analysis_support import GOLDEN_DB, golden  # noqa: F401
from conftest import small_plan
from fixtures import synth_experiments
from stores import load_path, reader
from tlsbench.analysis.derive.measures import METRIC, measures
from tlsbench.analysis.pipeline import analyze
from tlsbench.analysis.vocab import vocab
from tlsbench.cli import main
from tlsbench.app.run import run_experiment
from tlsbench.export import tidy
from tlsbench.export.csv import COLUMNS, CsvExporter

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAYLOAD = '[payload]\ntotal_bytes = 2048\nrecord_size = 512\ndirection = "both"\n'


@pytest.fixture(scope="module")
def real_run(tmp_path_factory, agent_path) -> Path:
    """A small real experiment: three suites, 6 repetitions in 2 rounds, 4 records each way."""
    out = tmp_path_factory.mktemp("tidy")
    summary = run_experiment(small_plan("tidy", repetitions=6, rounds=2, extra=PAYLOAD), out,
                             agent_dir=agent_path.parent)
    assert summary.failed == 0
    return summary.folder


def export(store: Path, out: Path, level: str, fmt: str) -> Path:
    res = CliRunner().invoke(main, ["export", str(store), "--level", level, "--format", fmt, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def sql(query: str):
    """DuckDB's answer to a query over files (an in-memory database of its own)."""
    return duckdb.connect().execute(query)


def test_repetitions_as_parquet_read_by_duckdb_and_pandas_match_the_store(real_run, tmp_path):
    db = real_run / "tlsbench.db"
    path = export(real_run, tmp_path / "reps.parquet", "repetition", "parquet")
    with reader(db) as st:
        n = len(st.repetition_columns())
    assert sql(f"SELECT count(*) FROM '{path}'").fetchone()[0] == n == 18
    per_suite = dict(sql(f"SELECT suite_name, count(*) FROM '{path}' GROUP BY suite_name").fetchall())
    assert set(per_suite.values()) == {6} and len(per_suite) == 3
    frame = pd.read_parquet(path)
    ds = load_path(db)
    table = measures(ds)
    # Each repetition's measures are the analysis' own values, to the last bit.
    sel = (table.metric == METRIC["handshake_processing"]) & (table.peer == vocab().peers["server"])
    expected = dict(zip(table.rep[sel].tolist(), table.value[sel].tolist()))
    got = dict(zip(frame.repetition_id, frame.handshake_processing_server))
    assert got == expected
    stored = dict(zip(ds.reps.id.tolist(), ds.reps.handshake_wall_ns.tolist()))
    assert dict(zip(frame.repetition_id, frame.header_wall)) == stored
    assert set(frame.status) == {"OK"} and set(frame.library_version) == {"2.28.3"}
    assert set(frame["round"]) == {0, 1} and sorted(frame["index"].unique()) == list(range(6))
    # The statistics' median is the median of the repetitions kept.
    stats = CsvExporter().export(analyze(ds))
    rows = [r for r in csv.DictReader(io.StringIO(stats)) if r["metric"] == "handshake_processing"
            and r["peer"] == "client"]
    kept = frame[~frame.excluded]
    for r in rows:
        mine = kept[kept.config_id == int(r["config_id"])].handshake_processing_client
        assert float(r["median"]) == float(np.median(mine)) and int(r["n"]) == len(mine)


def test_slices_in_both_formats_sum_to_the_repetition_measures(real_run, tmp_path):
    db = real_run / "tlsbench.db"
    parquet = export(real_run, tmp_path / "slices.parquet", "slice", "parquet")
    text = export(real_run, tmp_path / "slices.csv", "slice", "csv")
    frame = pd.read_parquet(parquet)
    from_csv = sql(f"SELECT * FROM read_csv_auto('{text}')").df()
    assert len(from_csv) == len(frame) > 0
    assert np.allclose(from_csv.processing.fillna(-1), frame.processing.fillna(-1), rtol=0, atol=0)
    ds = load_path(db)
    voc = vocab()
    steps = (ds.slices.category == voc.role_cat("step")) & ~ds.slices.open
    assert (frame.slice_kind == "step").sum() == steps.sum()
    table = measures(ds)
    assert (frame.slice_kind == "record_write").sum() == (table.metric == METRIC["write_processing"]).sum() > 0
    # A peer's step processing summed over its occurrences is its handshake processing.
    sums = frame[frame.slice_kind == "step"].groupby(["repetition_id", "peer"], observed=True).processing.sum()
    reps = pd.read_parquet(export(real_run, tmp_path / "reps.parquet", "repetition", "parquet"))
    for peer in ("client", "server"):
        want = reps.set_index("repetition_id")[f"handshake_processing_{peer}"]
        assert np.allclose(sums.xs(peer, level="peer").loc[want.index], want, rtol=1e-12)
    # Records: the three latencies, aligned with the analysis' measure rows.
    sel = table.metric == METRIC["read_total"]
    assert sorted(frame[frame.slice_kind == "record_read"].total) == sorted(table.value[sel].tolist())
    assert (frame.slice_kind == "record_read").groupby(frame.repetition_id).sum().eq(8).all()  # 4 records x 2 peers


def test_chunks_do_not_change_the_table(real_run):
    with reader(real_run / "tlsbench.db") as st:
        whole = pd.concat(b.to_pandas() for b in tidy.batches(st, "slice", size=1000))
        small = pd.concat(b.to_pandas() for b in tidy.batches(st, "slice", size=4))
    pd.testing.assert_frame_equal(whole.reset_index(drop=True).astype(str), small.reset_index(drop=True).astype(str))


def test_experiment_groups_are_slices_named_by_their_group(tmp_path):
    store = synth_experiments.make_store(tmp_path, libraries=("mbedtls", "openssl"), reps=5)
    with reader(store) as st:
        frame = tidy.read_table(st, "slice").to_pandas()
    groups = frame[frame.slice_kind == "group"]
    ds = load_path(store, experiments=True)
    spans = (ds.slices.label == vocab().role_label("user_group")) & ~ds.slices.open
    assert len(groups) == spans.sum() > 0
    assert set(groups.label) <= {g for c in ds.configs.values() for g in json.loads(c.experiment_groups)}
    assert set(groups.kind) == {"experiment"} and set(groups.library) == {"mbedtls", "openssl"}


def test_every_column_is_documented():
    doc = (DOCS / "export.md").read_text()
    for level in tidy.LEVELS:
        missing = [c.name for c in tidy.columns(level) if f"`{c.name}`" not in doc]
        assert not missing, f"docs/export.md does not describe {missing}"
    assert all(f"`{c}`" in doc for c in COLUMNS)


def test_the_python_api_example_runs(real_run, monkeypatch):
    """docs/python-api.md, its code blocks in order, against a real run."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "python-api.md").read_text(), re.S)
    assert len(blocks) >= 3
    monkeypatch.setattr("matplotlib.pyplot.show", lambda *a, **k: None)
    scope: dict = {}
    for block in blocks:
        exec(compile(block.replace('"results/device"', repr(str(real_run))), "python-api.md", "exec"), scope)
    e = scope["e"]
    assert len(e.repetitions) == 18 and len(e.configurations) == 3
    assert set(e.statistics.metric) >= {"handshake_processing", "step", "crypto", "write_processing"}


def test_statistics_are_exact_and_keyed(golden):  # noqa: F811
    rows = list(csv.DictReader(io.StringIO(CsvExporter().export(golden))))
    by_key = {(int(r["config_id"]), r["peer"], r["metric"], r["label"]): r for r in rows}
    for row in golden.results.rows:
        r = by_key[(row.config_id, row.peer, row.metric, row.label)]
        assert float(r["median"]) == row.summary.median and float(r["sd"] or "nan") == pytest.approx(
            row.summary.sd, rel=0, abs=0, nan_ok=True)
        c = golden.ds.configs[row.config_id]
        assert (r["suite_name"], r["credential"], r["group"], r["library_version"]) == (
            c.suite_name, c.credential, c.grp, "2.28.3")
        assert r["config"] == golden.results.config_labels[row.config_id]


def test_compare_as_csv_and_json(tmp_path):
    res = CliRunner().invoke(main, ["compare", str(GOLDEN_DB), "--config", "1", "2", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert rows and {"ratio", "ratio_ci_lo", "ratio_ci_hi", "verdict", "suite_name", "config_b_id"} <= rows[0].keys()
    for r in rows:
        assert float(r["ratio"]) == float(r["median_b"]) / float(r["median_a"])
        assert float(r["ratio_ci_lo"]) <= float(r["ratio_ci_hi"])
    res = CliRunner().invoke(main, ["compare", str(GOLDEN_DB), str(GOLDEN_DB), "--format", "json"])
    doc = json.loads(res.output)
    assert {r["verdict"] for r in doc["rows"]} == {"no difference"} and all(r["ratio"] == 1 for r in doc["rows"])


def test_parquet_needs_a_file_and_a_tidy_level(tmp_path):
    res = CliRunner().invoke(main, ["export", str(GOLDEN_DB), "--format", "parquet"])
    assert res.exit_code != 0 and "--out" in res.output
    res = CliRunner().invoke(main, ["export", str(GOLDEN_DB), "--level", "slice", "--format", "json"])
    assert res.exit_code != 0 and "parquet or csv" in res.output


def test_a_devices_footprint_is_exported_per_peer_and_value(golden):  # noqa: F811
    """Footprint rows: the most and least bytes per (configuration, peer, value), keyed."""
    import copy
    import dataclasses

    from tlsbench.analysis.questions.device import Bytes, DeviceResults, Footprint, FootprintRow
    from tlsbench.analysis.units import Unit

    cid = min(golden.ds.configs)
    fp = Footprint([FootprintRow(cid, "k", "x", "client", {"HEAP_PEAK_HANDSHAKE": Bytes(9000, 8800, 12)})], None)
    a = copy.copy(golden)
    a.results = dataclasses.replace(golden.results, device=DeviceResults("qemu", "cortex-m4", Unit("instructions"),
                                                                         [], fp))
    rows = [r for r in csv.DictReader(io.StringIO(CsvExporter().export(a))) if r["metric"] == "footprint"]
    assert [(r["config_id"], r["peer"], r["label"], r["unit"], r["n"], r["min"], r["max"]) for r in rows] == [
        (str(cid), "client", "HEAP_PEAK_HANDSHAKE", "B", "12", "8800", "9000")]
    assert rows[0]["suite_name"] == golden.ds.configs[cid].suite_name
