# SPDX-License-Identifier: Apache-2.0
"""A user experiment through the same pipeline: the shipped plan plans/example-experiment.toml
runs tlsbench-agent-example (mbed TLS + examples/experiment/sensor.c) through controller,
store and report; a size its setup refuses is skipped with the agent's reason."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tlsbench import plan
from tlsbench.app.run import run_experiment
from tlsbench.run import agents
from stores import load_path, reader
from tlsbench.analysis.pipeline import analyze
from tlsbench.report.html import build_html
from tlsbench.store.sqlite import DB_FILE

PLAN = Path(__file__).resolve().parents[1] / "plans" / "example-experiment.toml"
EXAMPLE = "example"


@pytest.fixture(scope="module")
def example_dir() -> Path:
    try:
        return agents.find_agent(EXAMPLE).parent
    except agents.AgentError as exc:
        pytest.fail(f"these tests need the example agent (built with the others by cmake): {exc}")


def shipped_plan(**changes) -> plan.LoadedPlan:
    """The shipped plan with fewer repetitions (or other changes), as a user would edit it."""
    raw = tomllib.loads(PLAN.read_text())
    raw.update({"repetitions": 6, "rounds": 2, **changes})
    return plan.parse(tomli_w.dumps(raw), PLAN.name)


def test_the_shipped_example_plan_runs_end_to_end(tmp_path, example_dir):
    loaded = shipped_plan()
    assert loaded.plan.libraries == [EXAMPLE] and loaded.plan.suites is None
    summary = run_experiment(loaded, tmp_path, agent_dir=example_dir)
    assert not summary.interrupted and not summary.skipped_configs and summary.stored == 8 * 6
    db = tmp_path / loaded.plan.name / DB_FILE
    with reader(db) as st:
        rows = {r.key: r for r in st.config_rows()}
    sensor = rows["example|experiment|sensor-json|1024"]
    assert json.loads(sensor.experiment_groups) == ["encode", "crc32"] and sensor.experiment_source == "user"
    assert rows["example|experiment|sha256|64"].experiment_source == "primitive"

    a = analyze(load_path(db))
    p = a.results.primitives
    assert p.libraries == [EXAMPLE] and {m.name for m in p.experiments} == {"sensor-json", "sha256"}
    groups = {(r.experiment, r.size, r.group) for r in p.results if r.summary.n}
    assert groups == ({("sensor-json", s, g) for s in (64, 256, 1024, 4096) for g in ("encode", "crc32")}
                      | {("sha256", s, "hash") for s in (64, 256, 1024, 4096)})
    crc = [p.find(EXAMPLE, "sensor-json", s, "crc32").summary.median for s in (256, 4096)]
    assert crc[1] > crc[0] > 0  # a CRC over 16× the bytes takes longer
    html = build_html(a, figures=[])
    assert "sensor-json" in html and "Serialize temperature readings" in html and "crc32" in html


def test_a_size_the_experiments_setup_refuses_is_skipped_with_its_reason(tmp_path, example_dir):
    loaded = shipped_plan(name="example-refusal", experiments={"include": ["sensor-json"], "sizes": [8, 64]})
    summary = run_experiment(loaded, tmp_path, agent_dir=example_dir)
    (key,) = summary.skipped_configs
    assert key == "example|experiment|sensor-json|8" and "unsupported" in summary.skipped_configs[key]
    assert summary.stored == 6  # the 64-byte configuration ran
    p = analyze(load_path(tmp_path / "example-refusal" / DB_FILE)).results.primitives
    (refused,) = [c for c in p.counts if c.skip_reason]
    assert refused.size == 8 and refused.stored == 0
    assert any("sensor-json at 8 B was not measured" in w for w in p.warnings)
