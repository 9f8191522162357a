# SPDX-License-Identifier: Apache-2.0
"""The scheduler's view (plan metrics "sched", run/tracefs.py) and the plan's `cpus`: real runs
of the mbed TLS agent, traced through tracefs when this is root with tracefs mounted, and
the one warning when tracefs is not there (TLSBENCH_TRACEFS pointed at an empty folder)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import small_plan
from stores import reader
from tlsbench.cli import main
from tlsbench.app.run import run_experiment
from tlsbench.plan.model import PlanError
from tlsbench.run import tracefs as sched
from tlsbench.run.controller import QuietObserver
from tlsbench.run.placement import PlacementError
from tlsbench.schema import AgentRow, RepetitionRow, SchedTables

SCHED = 'metrics = ["time", "sched"]\n'
LAST_CPU = max(os.sched_getaffinity(0))


def tracefs_usable() -> bool:
    return os.geteuid() == 0 and (sched.tracefs_root() / "instances").is_dir()


class Notes(QuietObserver):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)


def stored(db: Path) -> tuple[SchedTables, list[RepetitionRow], list[AgentRow]]:
    """The scheduler's tables, the repetitions and the agents of a store."""
    with reader(db) as st:
        return st.sched_tables(), [r for _, r in st.repetition_rows()], st.agent_rows()


def test_metrics_and_cpus_are_validated_and_absent_by_default():
    plain = small_plan()
    assert not plain.plan.measures("sched") and "metrics" not in plain.plan.resolved_json()  # old stores still resume
    assert small_plan(extra=SCHED + "cpus = [0]\n").plan.cpus == [0]
    with pytest.raises(PlanError) as bad:
        small_plan(extra='metrics = ["sched", "joules"]\ncpus = [1, 1]\n')
    assert "metrics[1]: 'joules' is not valid" in str(bad.value) and "cpus: [1, 1]" in str(bad.value)


def test_cpus_this_machine_lacks_are_refused_in_one_line(tmp_path, agent_path):
    with pytest.raises(PlacementError, match=r"cpus = \[4095\]: this machine offers CPUs .*; use a subset"):
        run_experiment(small_plan(extra="cpus = [4095]\n"), tmp_path, agent_dir=agent_path.parent)
    assert not (tmp_path / "small").exists()


def test_the_agents_run_on_the_plans_cpus(tmp_path, agent_path):
    run_experiment(small_plan(repetitions=2, rounds=1, extra=f"cpus = [{LAST_CPU}]\n"), tmp_path,
                   agent_dir=agent_path.parent)
    placements = [json.loads(a.placement_json) for a in stored(tmp_path / "small" / "tlsbench.db")[2]]
    assert placements and all(p["cpus"] == [LAST_CPU] and p["cpus_from_plan"] == [LAST_CPU] for p in placements)


def test_without_tracefs_one_warning_and_the_rest_is_measured(tmp_path, agent_path, monkeypatch):
    empty = tmp_path / "no-tracefs"
    empty.mkdir()
    monkeypatch.setenv(sched.TRACEFS_ENV, str(empty))
    notes = Notes()
    summary = run_experiment(small_plan(extra=SCHED), tmp_path, agent_dir=agent_path.parent, observer=notes)
    db = summary.folder / "tlsbench.db"
    warnings = [n for n in notes.notes if "sched" in n]
    assert len(warnings) == 1 and f"no tracefs at {empty}" in warnings[0] and "mount -t tracefs" in warnings[0]
    tables, reps, _ = stored(db)
    assert tables.repetitions == []  # nothing presented as a value
    assert [c.missing is not None for c in tables.captures] == [True]
    assert sum(r.status == "OK" for r in reps) == summary.planned
    assert sum(a.run_ns > 0 for a in tables.agents) >= 1  # /proc needs no tracefs
    report = CliRunner().invoke(main, ["report", str(summary.folder), "--out", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    assert "it is missing: no tracefs at" in (tmp_path / "r.html").read_text().replace("&#39;", "'")


@pytest.mark.skipif(not tracefs_usable(), reason="the scheduler's view needs root and a mounted tracefs")
def test_traced_repetitions_carry_the_schedulers_view(tmp_path, agent_path):
    notes = Notes()
    summary = run_experiment(small_plan(repetitions=6, rounds=2, extra=SCHED + f"cpus = [{LAST_CPU}]\n"), tmp_path,
                             agent_dir=agent_path.parent, observer=notes)
    db = summary.folder / "tlsbench.db"
    assert not [n for n in notes.notes if "sched" in n]
    tables, reps, _ = stored(db)
    assert [(c.missing, json.loads(c.facts_json).get("cpus")) for c in tables.captures] == [(None, [LAST_CPU])]
    ok = {(r.config_id, r.idx) for r in reps if r.status == "OK"}
    traced = [r for r in tables.repetitions if (r.config_id, r.idx) in ok]
    lost = json.loads(tables.captures[0].facts_json).get("lost")
    assert lost or len(traced) == len(ok)  # a batch in which the kernel lost events has no figures
    for r in traced:
        assert 0 < r.busy_ns <= r.wall_ns and 0 <= r.idle_ns <= r.wall_ns * r.cpus and 0 < r.longest_run_ns <= r.busy_ns
        assert r.runs >= 1 and r.steps > 0 and 0 <= r.steps_interrupted <= r.steps
    assert not [(s.label, s.peer) for s in tables.steps if s.peer not in ("client", "server")]
    csv = CliRunner().invoke(main, ["export", str(summary.folder), "--format", "csv"])
    assert csv.exit_code == 0 and "sched.busy_share" in csv.output and "sched.longest_run_us" in csv.output
    report = CliRunner().invoke(main, ["report", str(summary.folder), "--out", str(tmp_path / "r.html")])
    html = (tmp_path / "r.html").read_text()
    assert report.exit_code == 0 and "The scheduler" in html and "longest uninterrupted run" in html


def test_a_trace_becomes_runs_waits_and_switches():
    """The kernel's text lines as tracefs writes them: a wake-up, a switch in, a preemption,
    back in, a block; one switch-in missing (dated from the agent's records)."""
    text = "\n".join([
        " tlsbench-agent--7 [001] d..2. 10.000100: sched_wakeup: comm=tlsbench-agent- pid=7 prio=100 target_cpu=001",
        " <idle>-0 [001] d..2. 10.000150: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R"
        " ==> next_comm=tlsbench-agent- next_pid=7 next_prio=100",
        " tlsbench-agent--7 [001] d..2. 10.000400: sched_switch: prev_comm=tlsbench-agent- prev_pid=7 prev_prio=100"
        " prev_state=R+ ==> next_comm=cc1 next_pid=9 next_prio=120",
        " cc1-9 [001] d..2. 10.000500: sched_switch: prev_comm=cc1 prev_pid=9 prev_prio=120 prev_state=S"
        " ==> next_comm=tlsbench-agent- next_pid=7 next_prio=100",
        " tlsbench-agent--7 [001] d..2. 10.000900: sched_switch: prev_comm=tlsbench-agent- prev_pid=7 prev_prio=100"
        " prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
        "CPU:1 [LOST 3 EVENTS]",
        " tlsbench-agent--7 [001] d..2. 10.001500: sched_switch: prev_comm=tlsbench-agent- prev_pid=7 prev_prio=100"
        " prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
    ])
    events, lost = sched.parse(text)
    assert lost == 3 and len(events) == 6 and events[0].t == 10_000_100_000
    tl = sched.Timeline()
    for e in events:
        if e.name == "sched_wakeup":
            tl.woken(e.t)
        elif int(e.fields["prev_pid"]) == 7:
            tl.switched_out(e.t, e.fields["prev_state"], e.cpu)
        else:
            tl.switched_in(e.t, e.cpu)
    alive = [10_001_200_000, 10_001_300_000]  # the agent's records after its block
    view = sched.interval(tl, 10_000_000_000, 10_002_000_000, alive)
    assert (view.voluntary, view.involuntary, view.inferred) == (2, 1, 1)
    assert view.wait_ns == 50_000 + 100_000  # woken -> in, preempted -> back in
    assert view.busy_ns == 250_000 + 400_000 + 300_000 and view.longest_run_ns == 400_000
