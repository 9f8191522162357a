# SPDX-License-Identifier: Apache-2.0
"""Metrics beyond time (docs/metrics.md), end to end with the real agents: instruction counts
under the tbcount valgrind tool identical across two runs for all three libraries, heap and
stack values that hold together, and the one warning when valgrind is missing."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tlsbench.core import spec as specmod
from stores import load_path, on, reader
from tlsbench.analysis.questions.metrics import analyze_metrics
from tlsbench.run import agents

LIBRARIES = ("mbedtls", "openssl", "wolfssl")
# One suite each that every build has: ECDHE-ECDSA (public-key steps, allocations, random).
SUITES = '["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]'


def _plan(tmp: Path, name: str, metrics: str, libraries=LIBRARIES) -> Path:
    text = (f'name = "{name}"\nlibraries = {list(libraries)!r}\nsuites = {SUITES}\nrepetitions = 2\nrounds = 1\n'
            f'warmup = 0\nmetrics = {metrics}\nmetric_repetitions = 3\n').replace("'", '"')
    path = tmp / f"{name}.toml"
    path.write_text(text)
    return path


def _run(plan: Path, out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    agent_dir = agents.find_agent("mbedtls").parent
    return subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(out), "--no-report",
                           "--agent-dir", str(agent_dir)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=1800)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (scripts/install-deps.sh)")
def test_instruction_counts_are_identical_in_two_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "icount", '["instructions"]')
    stores = []
    for run in ("a", "b"):
        done = _run(plan, tmp_path / run)
        assert done.returncode == 0, done.stdout + done.stderr
        stores.append(tmp_path / run / "icount" / "tlsbench.db")
    a, b = (_traces(s) for s in stores)
    assert set(a) == set(b) and len(a) == len(LIBRARIES) * 3
    assert sorted({key.split("|")[0] for key, _ in a}) == sorted(LIBRARIES)
    differing = sum(1 for k in a for x, y in zip(a[k], b[k]) if x != y)
    assert differing == 0
    res = on(stores[0], analyze_metrics)
    assert res.instructions_unit.startswith("instructions (x86-64, valgrind tbcount")
    handshakes = [r for r in res.of("instructions") if r.slice == "handshake"]
    assert len(handshakes) == 2 * len(LIBRARIES) and all(r.summary.median > 100_000 for r in handshakes)


def _traces(store: Path) -> dict[tuple[str, int], list[tuple]]:
    """Every record of every instruction repetition, as (label, kind, peer, seq, counter,
    cpu, value) tuples, by (configuration key, index): what must not differ between runs."""
    ds = load_path(store, kind="instructions")
    ok = ds.reps.status == "OK"
    where = {rid: (ds.configs[cid].key, idx) for rid, cid, idx, good
             in zip(ds.reps.id.tolist(), ds.reps.config_id.tolist(), ds.reps.idx.tolist(), ok.tolist()) if good}
    out: dict[tuple[str, int], list[tuple]] = {}
    for rep, record in zip(ds.events.rep.tolist(), ds.events.rec.tolist()):
        if rep in where:
            out.setdefault(where[rep], []).append(tuple(record))
    return out


def test_heap_and_stack_hold_together(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "memory", '["heap", "stack"]')
    done = _run(plan, tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    res = on(tmp_path / "out" / "memory" / "tlsbench.db", analyze_metrics)
    for library in LIBRARIES:
        for peer in ("client", "server"):
            def value(metric: str, slice_: str) -> float:
                row = next(r for r in res.rows if (r.library, r.peer, r.metric, r.slice) == (library, peer, metric, slice_))
                return row.summary.median
            peak, kept = value("heap_peak", "handshake"), value("heap_kept", "handshake")
            assert peak > 0 and kept > 0 and peak >= kept, (library, peer, peak, kept)
            assert value("heap_allocated", "handshake") >= peak
            assert 1024 < value("stack_peak", "repetition") < 8 * 1024 * 1024
        steps = [r for r in res.rows if r.library == library and r.metric == "heap_peak"
                 and r.slice in specmod.load().label_by_name and specmod.load().label_by_name[r.slice].category == "step"]
        assert steps, f"{library}: no per-step heap values"
    assert not res.missing


def test_no_valgrind_is_one_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "novg", '["instructions", "heap"]', libraries=("mbedtls",))
    python_only = tmp_path / "bin"
    python_only.mkdir()
    done = _run(plan, tmp_path / "out", env={"PATH": str(python_only)})
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert output.count("warning: instructions: valgrind is not available here") == 1, output
    assert "not measured (instructions: valgrind is not available here" in output  # the twin, named at the end
    assert "Traceback" not in output
    store = tmp_path / "out" / "novg" / "tlsbench.db"
    with reader(store) as st:
        collects = Counter(c.collect or "time" for c in st.config_rows())
    assert collects == {"time": 1, "memory": 1}  # no instruction configuration, not even an empty one
    res = on(store, analyze_metrics)
    assert "instructions" in res.missing and not res.of("instructions") and res.of("heap_peak")


def test_every_metric_is_declared_once_with_labels_that_exist() -> None:
    spec = specmod.load()
    assert spec.metric_choices == ["time", "instructions", "heap", "stack"]
    assert spec.collects_for(["time", "heap"]) == ["time", "memory"]
    carried = [label for m in spec.metrics.values() for label in m.labels]
    assert len(carried) == len(set(carried))  # one metric per record label
    assert all(spec.label_by_name[label].category == "memory" for label in carried)
    assert {m.aggregation for m in spec.metrics.values()} <= {"delta", "peak", "sum", "instant"}


def test_a_plan_chooses_metrics_and_time_stays() -> None:
    from tlsbench import plan
    from tlsbench.core.errors import UserError
    chosen = plan.parse('name = "m"\nrepetitions = 3\nmetrics = ["stack", "instructions"]\n', "m.toml").plan
    assert chosen.metrics == ["time", "stack", "instructions"] and chosen.metric_repetitions == 20
    plain = plan.parse('name = "m"\nrepetitions = 3\n', "m.toml").plan
    assert "metric" not in plain.resolved_json()  # stores of plans before `metrics` still resume
    with pytest.raises(UserError, match="'joules' is not a metric; allowed: time, instructions, heap, stack, sched"):
        plan.parse('name = "m"\nrepetitions = 3\nmetrics = ["joules"]\n', "m.toml")
