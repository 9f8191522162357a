# SPDX-License-Identifier: Apache-2.0
"""The controller against the REAL agent: end to end, resume, agent deaths, refusals."""
from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from conftest import small_plan
from tlsbench import plan
from tlsbench.core import spec
from tlsbench.run import controller, schedule
from tlsbench.app.run import run_experiment
from tlsbench.plan.configs import Configuration
from tlsbench.run.placement import AGENT_NICE
from tlsbench.run.session import start
from tlsbench.run.topologies.single import ONE
from tlsbench.run.timeouts import Timeouts
from tlsbench.store.api import PlanMismatch
from tlsbench.store.locator import locate

S = spec.load()
OK = S.status.name(S.status.OK)
DIED = S.status.name(S.status.AGENT_DIED)


def stored(folder: Path) -> Counter:
    """(config key, idx) -> how many times stored."""
    with locate(folder).reader() as st:
        keys = {c.id: c.key for c in st.config_rows()}
        return Counter((keys[r.config_id], r.idx) for _, r in st.repetition_rows())


def assert_complete(folder: Path, loaded: plan.LoadedPlan) -> Counter:
    counts = stored(folder)
    with locate(folder).reader() as st:
        keys = [r.key for r in st.config_rows() if not r.skip_reason]
        assert st.integrity_check() == "ok"
    expected = {(k, i) for k in keys for i in range(loaded.plan.repetitions)}
    assert set(counts) >= expected and set(counts.values()) == {1}
    return counts


def test_small_plan_end_to_end(tmp_path, agent_path):
    loaded = small_plan(extra='groups = ["default", "x25519"]\n')
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    folder = tmp_path / "small"
    assert summary.folder == folder and not summary.interrupted
    # 3 suites; x25519 applies to the two ECDHE suites only (reported, not silently dropped)
    assert summary.planned == 5 * 4 and summary.stored == 20 and summary.failed == 0
    with locate(folder).reader() as st:  # named with the experiment
        assert [c.reason for c in st.skipped_cells()] == ["group x25519 does not apply to PSK key exchange"]
    assert_complete(folder, loaded)
    with locate(folder).reader() as st:
        records = dict(st.traces())  # decoded (store/sqlite/blobs.py)
        reps = [(i, r) for i, r in st.repetition_rows() if i in records]
        assert {r.status for _, r in reps} == {OK}
        assert all(len(records[i]) == 32 * r.n_events > 0 for i, r in reps)
        assert all(r.round == schedule.round_of(r.idx, 4, 2) for _, r in reps)
        assert all(r.handshake_wall_ns > 0 and r.bytes_c2s > 0 for _, r in reps)
        # protocol 2's counters: one agent plays both peers in memory, nothing is resent
        assert {r.role for _, r in reps} == {"both"} and {r.retransmissions for _, r in reps} == {0}
        assert all(r.packets_c2s > 0 and r.packets_s2c > 0 for _, r in reps)
        assert all(r.repetition_wall_ns >= r.handshake_wall_ns for _, r in reps)
        (agent,) = st.agent_rows()
        assert agent.exit_reason.startswith("quit") and agent.executable == agent_path.name
        creds = {r.suite_name: r.credential for r in st.config_rows()}
        assert "auto" not in creds.values()  # resolved to the agent's pick
        # the stored order follows the seeded schedule: round 0 of every config first
        order = [r.round for _, r in st.repetition_rows()]
        assert order == sorted(order)

    # Running the same plan again resumes: nothing left, nothing stored twice.
    again = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert again.stored == 0 and again.already == 20
    assert_complete(folder, loaded)


def test_other_plan_into_same_folder_is_refused(tmp_path, agent_path):
    run_experiment(small_plan(repetitions=2, rounds=1), tmp_path, agent_dir=agent_path.parent)
    with pytest.raises(PlanMismatch, match="another plan"):
        run_experiment(small_plan(repetitions=3, rounds=1), tmp_path, agent_dir=agent_path.parent)


def test_resume_without_experiment_is_refused(tmp_path, agent_path):
    with pytest.raises(controller.ControllerError, match="nothing to resume"):
        run_experiment(small_plan(), tmp_path, resume=True, agent_dir=agent_path.parent)


class Killer(controller.QuietObserver):
    """Kills the real agent process (SIGKILL) after the n-th stored repetition."""

    def __init__(self, after: int):
        self.after, self.count, self.killed_pid = after, 0, None

    def stored(self, config, idx, status, agent):
        self.count += 1
        if self.count == self.after and self.killed_pid is None:
            self.killed_pid = agent.pid
            os.kill(agent.pid, signal.SIGKILL)


def test_agent_killed_mid_sweep_is_recorded_and_survived(tmp_path, agent_path):
    loaded = small_plan(repetitions=6, rounds=1)
    killer = Killer(after=2)
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent, observer=killer)
    assert killer.killed_pid and summary.agent_deaths == 1
    counts = assert_complete(tmp_path / "small", loaded)
    assert len(counts) == 18  # every (config, idx) exactly once, the dead one included
    with locate(tmp_path / "small").reader() as st:
        rows = [r for _, r in st.repetition_rows()]
        died = [r for r in rows if r.status == DIED]
        assert len(died) == 1 and "SIGKILL" in died[0].error_text
        agents = st.agent_rows()
        assert len(agents) == 2 and agents[0].pid == killer.killed_pid
        assert agents[0].exit_reason.startswith("died") and died[0].agent_id == agents[0].id
        assert sum(r.status == OK for r in rows) == 17


class KillOnBatch(controller.QuietObserver):
    """Kills the agent whenever it is about to run `target`: it can never finish it."""

    def __init__(self, target: str):
        self.target, self.controller = target, None

    def batch(self, config, round, first_index, count):
        running = self.controller.exchange_for(config).running.get(ONE) if config == self.target else None
        if running is not None:
            os.kill(running.endpoint.pid, signal.SIGKILL)


def test_config_is_given_up_after_consecutive_deaths(tmp_path, agent_path):
    loaded = small_plan(repetitions=6, rounds=2)
    with locate(tmp_path / "small").writer() as st:
        observer = KillOnBatch(target="")
        ctl = start(loaded, st, agent_path, observer)
        observer.controller = ctl
        ctl.prepare()
        observer.target = sorted(ctl.configs)[0]
        summary = ctl.run()
        assert list(summary.skipped_configs) == [observer.target]
        assert "consecutive agent deaths" in summary.skipped_configs[observer.target]
        target_id = ctl.config_ids[observer.target]
        assert [r.status for _, r in st.repetition_rows(target_id)] == [DIED] * controller.MAX_CONSECUTIVE_DEATHS
        assert next(c for c in st.config_rows() if c.id == target_id).skip_reason
        others = sum(r.config_id != target_id and r.status == OK for _, r in st.repetition_rows())
        assert others == 2 * 6


def test_agent_error_frame_skips_and_reports_the_config(tmp_path, agent_path):
    """A configuration the agent refuses (here: a credential the suite cannot use, which
    the plan resolver would never produce) is skipped with the agent's message."""
    loaded = small_plan(repetitions=2, rounds=1)
    with locate(tmp_path / "small").writer() as st:
        ctl = start(loaded, st, agent_path)
        ctl.prepare()
        key = next(k for k in ctl.configs if "PSK" in k)
        good = ctl.configs[key]
        ctl.configs[key] = Configuration(good.row, good.suite_id, good.group, S.credentials.value("ecdsa-p256"),
                                         good.direction, good.transport)
        summary = ctl.run()
    assert list(summary.skipped_configs) == [key]
    assert "unsupported" in summary.skipped_configs[key] and "ecdsa-p256" in summary.skipped_configs[key]
    assert summary.stored == 2 * 2 and summary.agent_deaths == 0


class Freezer(controller.QuietObserver):
    """Stops (SIGSTOP) the agent after the n-th stored repetition: a hung agent."""

    def __init__(self, after: int):
        self.after, self.count, self.frozen = after, 0, None

    def stored(self, config, idx, status, agent):
        self.count += 1
        if self.count == self.after:
            self.frozen = agent.pid
            os.kill(agent.pid, signal.SIGSTOP)


def test_hung_agent_is_killed_by_the_watchdog(tmp_path, agent_path):
    loaded = small_plan(repetitions=4, rounds=1)
    freezer = Freezer(after=1)
    with locate(tmp_path / "small").writer() as st:
        summary = start(loaded, st, agent_path, freezer, timeouts=Timeouts(silence=1.0)).run()
        died = [r.error_text for _, r in st.repetition_rows() if r.status == DIED]
    assert summary.agent_deaths == 1 and len(died) == 1
    assert "killed as hung" in died[0]
    assert summary.stored == 12


def test_run_options_reach_the_agent_and_the_config_key(tmp_path, agent_path):
    names = S.options.names
    if not names:
        pytest.skip("spec/protocol.toml declares no [options]")
    loaded = small_plan(repetitions=2, rounds=1, extra=f"options = {names[:1]!r}\n")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert summary.stored == 6 and summary.failed == 0
    with locate(tmp_path / "small").reader() as st:
        rows = st.config_rows()
        assert all(r.options == S.options.value(names[0]) and r.key.endswith("|" + names[0]) for r in rows)


@pytest.mark.parametrize("target, repetitions, expected", [(1e-6, 4, 8), (100.0, 8, 8)])
def test_precision_target_adds_rounds_until_met_or_max(tmp_path, agent_path, target, repetitions, expected):
    """An unreachable target grows every configuration to max_repetitions in whole extra
    rounds; a target already met adds nothing."""
    loaded = small_plan(repetitions=repetitions,
                        extra=f"[precision]\ntarget_ci_percent = {target}\nmax_repetitions = 8\n")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert not summary.interrupted
    counts = stored(tmp_path / "small")
    per_config = Counter(key for key, _ in counts)
    assert set(per_config.values()) == {expected} and set(counts.values()) == {1}
    assert {i for _, i in counts} == set(range(expected))
    with locate(tmp_path / "small").reader() as st:
        rounds = {r.round for _, r in st.repetition_rows()}
    assert max(rounds) == (3 if repetitions < expected else 1)  # 2 planned rounds, then 2 of 2 more


@pytest.mark.parametrize("pin", [True, False])
def test_agents_and_controller_on_cpus_of_their_own(tmp_path, agent_path, pin):
    """With two CPUs or more the agents run on CPUs the controller keeps away from, at
    nice −20 where permitted (root here); each agent row says what the agent got. The
    controller's thread has its own CPUs back afterwards."""
    before = os.sched_getaffinity(0)
    run_experiment(small_plan(repetitions=2, rounds=1), tmp_path, agent_dir=agent_path.parent, pin=pin)
    assert os.sched_getaffinity(0) == before
    with locate(tmp_path / "small").reader() as st:
        placements = [json.loads(a.placement_json) for a in st.agent_rows()]
    assert placements
    for got in placements:
        if pin and len(before) >= 2:
            assert got["cpus"] and not set(got["cpus"]) & set(got["controller_cpus"])
            assert set(got["cpus"]) | set(got["controller_cpus"]) <= before
            assert got["nice"] == (AGENT_NICE if os.geteuid() == 0 else got["nice"])
            assert "nice_refused" in got or got["nice"] == AGENT_NICE
        else:
            assert set(got["cpus"]) == before and got["nice"] == os.getpriority(os.PRIO_PROCESS, 0)
            assert got["not_pinned"]


def test_clock_checks_after_runs_are_recorded(tmp_path, agent_path):
    """Each agent row holds the clock source its DONEs named and the largest drift checked."""
    run_experiment(small_plan(repetitions=4, rounds=2), tmp_path, agent_dir=agent_path.parent)
    with locate(tmp_path / "small").reader() as st:
        rows = [(json.loads(a.hello_json)["clock"], json.loads(a.clock_json)) for a in st.agent_rows()]
    for hello, checked in rows:
        assert checked["source"] == hello["source"] and checked["max_drift_ppm"] < 1000
