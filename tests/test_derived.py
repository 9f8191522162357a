# SPDX-License-Identifier: Apache-2.0
"""Derived per-repetition summaries (analysis/derive/derived.py): a report from them gives the
numbers a report from every decoded record gives, bit for bit; they are versioned, rebuilt
by `tlsbench derive`, and a report never writes them."""
from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis_support import GOLDEN_DB
from conftest import small_plan
from stores import load_path, reader, writer
from tlsbench.analysis.derive import derived, statcache
from tlsbench.analysis.derive.cache import derive_summaries
from tlsbench.analysis.pipeline import analyze, representative_rep
from tlsbench.app.run import run_experiment
from tlsbench.store.sqlite import DB_FILE, testing


def reference(path: Path):
    """The pipeline as it was: every trace decoded and paired at once, measures over all slices."""
    with reader(path) as store:
        ids = store.repetition_columns().id.tolist()
    ds = load_path(path, rep_ids=ids)
    return analyze(ds)


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_same_numbers(ref, new) -> None:
    """Every Results row (every statistic, every interval), the context and the winners."""
    assert len(ref.results.rows) == len(new.results.rows) > 0
    for r, n in zip(ref.results.rows, new.results.rows):
        assert (r.config_id, r.peer, r.metric, r.label, r.unit) == (n.config_id, n.peer, n.metric, n.label, n.unit)
        for f in dataclasses.fields(r.summary):
            a, b = getattr(r.summary, f.name), getattr(n.summary, f.name)
            if isinstance(a, tuple):
                assert all(same_float(x, y) for x, y in zip(a, b)), (r.metric, r.label, f.name)
            elif isinstance(a, float):
                assert same_float(a, b), (r.metric, r.label, f.name, a, b)
            else:
                assert a == b, (r.metric, r.label, f.name)
    assert ref.results.context == new.results.context
    assert [(w.question, w.places) for w in ref.results.winners] == [(w.question, w.places) for w in new.results.winners]
    assert ref.results.warnings == new.results.warnings
    assert representative_rep(ref) == representative_rep(new)
    for metric in np.unique(ref.table.metric):  # each measure's rows in the same order
        a, b = ref.table.metric == metric, new.table.metric == metric
        assert np.array_equal(ref.table.rep[a], new.table.rep[b])
        assert np.array_equal(ref.table.value[a], new.table.value[b], equal_nan=True)


def derived_copy(src: Path, folder: Path) -> Path:
    path = folder / DB_FILE
    shutil.copy(src, path)
    with writer(path, create=False) as store:
        derive_summaries(store, store)
    return path


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, agent_path) -> Path:
    """A real run of the mbed TLS agent: 3 suites, 4 records of 500 bytes each way."""
    folder = tmp_path_factory.mktemp("real")
    loaded = small_plan("derived", repetitions=8, rounds=4,
                        extra='[payload]\ntotal_bytes = 2000\nrecord_size = 500\ndirection = "both"\n')
    return run_experiment(loaded, folder, agent_dir=agent_path.parent).folder / DB_FILE


def test_golden_store_numbers_match_the_whole_trace_pipeline(tmp_path, monkeypatch):
    monkeypatch.setattr(derived, "BATCH_RECORDS", 700)  # many batches of a few repetitions
    stored = derived_copy(GOLDEN_DB, tmp_path)
    assert len(testing.rows(stored, "derived_batch")) > 5
    ref = reference(GOLDEN_DB)
    assert_same_numbers(ref, analyze(load_path(stored)))
    assert_same_numbers(ref, analyze(load_path(GOLDEN_DB)))  # no summaries stored: derived in memory


def test_a_real_run_stores_its_summaries_and_reports_the_same_numbers(small_run):
    """`tlsbench run` derives what it stored when the sweep ends."""
    ds = load_path(small_run)
    assert ds.derived_now == 0 and len(ds.reps) == 24
    assert_same_numbers(reference(small_run), analyze(ds))


def test_derive_adds_only_what_is_missing_and_a_report_derives_the_rest(small_run, tmp_path, monkeypatch):
    monkeypatch.setattr(derived, "BATCH_RECORDS", 1000)
    path = tmp_path / DB_FILE
    shutil.copy(small_run, path)
    with writer(path, create=False) as store:  # as a derive killed after its second batch
        derive_summaries(store, store, rebuild=True)
    batches = testing.rows(path, "derived_batch", order="id")
    for batch in batches[:1] + batches[2:]:  # all but the second
        testing.delete(path, "derived_batch", {"id": batch["id"]})
    ds = load_path(path)
    assert 0 < ds.derived_now < len(ds.reps)
    assert_same_numbers(reference(small_run), analyze(ds))
    with writer(path, create=False) as store:
        n, _ = derive_summaries(store, store)
    assert n == ds.derived_now
    assert load_path(path).derived_now == 0


def test_another_version_is_ignored_then_rebuilt(small_run, tmp_path, monkeypatch):
    path = tmp_path / DB_FILE
    shutil.copy(small_run, path)
    monkeypatch.setattr(derived, "DERIVE_VERSION", derived.DERIVE_VERSION + 1)
    assert load_path(path).derived_now == 24  # the stored batches are of another version
    with writer(path, create=False) as store:
        assert derive_summaries(store, store)[0] == 24
    assert {b["version"] for b in testing.rows(path, "derived_batch")} == {derived.DERIVE_VERSION}


def test_a_report_never_writes_the_store(tmp_path):
    path = tmp_path / DB_FILE
    shutil.copy(GOLDEN_DB, path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = subprocess.run([sys.executable, "-m", "tlsbench.cli", "export", str(path), "--format", "csv"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.count("\n") > 100
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_derive_command_rebuilds_and_says_what_it_did(tmp_path):
    path = tmp_path / DB_FILE
    shutil.copy(GOLDEN_DB, path)
    cli = [sys.executable, "-m", "tlsbench.cli", "derive", str(path)]
    first = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    again = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    rebuilt = subprocess.run(cli + ["--rebuild"], capture_output=True, text=True, check=True).stdout
    assert "derived: 36 repetition(s)" in first and "derived: 0 repetition(s)" in again
    assert "derived: 36 repetition(s)" in rebuilt
    missing = subprocess.run([sys.executable, "-m", "tlsbench.cli", "derive", str(tmp_path / "none.db")],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_stored_statistics_are_those_a_report_computes(small_run):
    """`tlsbench run` stored every configuration's statistics and the group-bys; a report
    that takes them shows what one that computes them shows."""
    ds = load_path(small_run)
    seed = int(ds.experiment["seed"])
    current = statcache.digests(ds, ds.excluded_mask(), seed)
    assert statcache.known(ds, current).keys() == set(current) and len(current) == 3
    assert statcache.known_groups(ds, current) is not None
    cached = analyze(ds)
    computed = analyze(dataclasses.replace(load_path(small_run), stats={}))
    assert_same_numbers(computed, cached)
    assert repr(computed.results.groups) == repr(cached.results.groups)  # repr: every float exactly, NaN too


def test_stored_statistics_hold_only_for_their_own_inputs(small_run):
    ds = load_path(small_run)
    seed = int(ds.experiment["seed"])
    current = statcache.digests(ds, ds.excluded_mask(), seed)
    assert not statcache.known(ds, statcache.digests(ds, ds.excluded_mask(), seed + 1))
    other = ds.excluded_mask().copy()
    other[0] = not other[0]  # one repetition left out or taken in: its configuration is computed again
    assert len(statcache.known(ds, statcache.digests(ds, other, seed))) == len(current) - 1
    assert statcache.known_groups(ds, statcache.digests(ds, other, seed)) is None
    flagged = analyze(load_path(small_run), include_flagged=True)  # other inputs: computed, never written
    assert [r.summary.n for r in flagged.results.rows] == [r.summary.n for r in analyze(
        dataclasses.replace(load_path(small_run), stats={}), include_flagged=True).results.rows]


@pytest.mark.parametrize("last_ids", [[6, 7], [3, 6]], ids=["disjoint", "overlapping"])
def test_stored_batches_read_one_at_a_time_are_what_combine_gives(last_ids):
    """A configuration's stored batches, in any order, some repetitions not asked for."""
    rng = np.random.default_rng(5)

    def part(ids: list[int]) -> derived.Derived:
        facts = derived.RepFacts(**{name: np.asarray(ids if name == "id" else np.zeros(len(ids)), dtype=dt)
                                    for name, dt in derived.FACT_COLUMNS})
        rep = np.repeat(ids, 3)
        cols = {"rep": rep, "peer": rng.integers(0, 3, len(rep)), "metric": np.tile([4, 2, 9], len(ids)),
                "label": rng.integers(-1, 5, len(rep)), "value": rng.random(len(rep))}
        table = derived.MeasureTable(**{name: cols[name].astype(dt) for name, dt in derived.MEASURE_COLUMNS},
                                     incomplete_records=len(ids))
        return derived.Derived(facts, table)

    parts = [part([1, 2, 3]), part([4, 5]), part(last_ids)]
    rep_ids = np.array([1, 3, 4, 6])
    combined = derived.combine(parts, rep_ids).table
    read = derived.stored_table([derived.to_stored(p, "handshakes", 7) for p in reversed(parts)], rep_ids)
    assert len(read) == len(combined) == 12 + 3 * (last_ids[0] == 3)
    for name, _ in derived.MEASURE_COLUMNS:
        assert np.array_equal(getattr(read, name), getattr(combined, name)), name
    assert read.incomplete_records == combined.incomplete_records == 7
