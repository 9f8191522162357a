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
from tlsbench.store.sqlite import PlanMismatch, Store

S = spec.load()
OK = S.status.name(S.status.OK)
DIED = S.status.name(S.status.AGENT_DIED)


def stored(folder: Path) -> Counter:
    """(config key, idx) -> how many times stored."""
    with Store.in_folder(folder, create=False) as st:
        rows = st.conn.execute("SELECT c.key, r.idx FROM repetition r JOIN config c ON c.id = r.config_id")
        return Counter((k, i) for k, i in rows)


def assert_complete(folder: Path, loaded: plan.LoadedPlan) -> Counter:
    counts = stored(folder)
    with Store.in_folder(folder, create=False) as st:
        keys = [r["key"] for r in st.configs() if not r["skip_reason"]]
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
    with Store.in_folder(folder, create=False) as st:  # named with the experiment
        assert [c.reason for c in st.skipped_cells()] == ["group x25519 does not apply to PSK key exchange"]
    assert_complete(folder, loaded)
    with Store.in_folder(folder, create=False) as st:
        reps = st.conn.execute("SELECT r.* FROM repetition r JOIN trace t ON t.repetition_id = r.id").fetchall()
        assert {r["status"] for r in reps} == {OK}
        records = dict(st.traces())  # decoded (store/blobs.py)
        assert all(len(records[r["id"]]) == 32 * r["n_events"] > 0 for r in reps)
        assert all(r["round"] == schedule.round_of(r["idx"], 4, 2) for r in reps)
        assert all(r["handshake_wall_ns"] > 0 and r["bytes_c2s"] > 0 for r in reps)
        # protocol 2's counters: one agent plays both peers in memory, nothing is resent
        assert {r["role"] for r in reps} == {"both"} and {r["retransmissions"] for r in reps} == {0}
        assert all(r["packets_c2s"] > 0 and r["packets_s2c"] > 0 for r in reps)
        assert all(r["repetition_wall_ns"] >= r["handshake_wall_ns"] for r in reps)
        (agent,) = st.agents()
        assert agent["exit_reason"].startswith("quit") and agent["executable"] == agent_path.name
        creds = {r["suite_name"]: r["credential"] for r in st.configs()}
        assert "auto" not in creds.values()  # resolved to the agent's pick
        # the stored order follows the seeded schedule: round 0 of every config first
        order = st.conn.execute("SELECT round FROM repetition ORDER BY id").fetchall()
        assert [o[0] for o in order] == sorted(o[0] for o in order)

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
    with Store.in_folder(tmp_path / "small", create=False) as st:
        died = st.conn.execute("SELECT * FROM repetition WHERE status = ?", (DIED,)).fetchall()
        assert len(died) == 1 and "SIGKILL" in died[0]["error_text"]
        agents = st.agents()
        assert len(agents) == 2 and agents[0]["pid"] == killer.killed_pid
        assert agents[0]["exit_reason"].startswith("died") and died[0]["agent_id"] == agents[0]["id"]
        assert st.conn.execute("SELECT COUNT(*) FROM repetition WHERE status = ?", (OK,)).fetchone()[0] == 17


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
    with Store.in_folder(tmp_path / "small") as st:
        observer = KillOnBatch(target="")
        ctl = start(loaded, st, agent_path, observer)
        observer.controller = ctl
        ctl.prepare()
        observer.target = sorted(ctl.configs)[0]
        summary = ctl.run()
        assert list(summary.skipped_configs) == [observer.target]
        assert "consecutive agent deaths" in summary.skipped_configs[observer.target]
        target_id = ctl.config_ids[observer.target]
        rows = st.conn.execute("SELECT status FROM repetition WHERE config_id = ?", (target_id,)).fetchall()
        assert [r[0] for r in rows] == [DIED] * controller.MAX_CONSECUTIVE_DEATHS
        assert st.conn.execute("SELECT skip_reason FROM config WHERE id = ?", (target_id,)).fetchone()[0]
        others = st.conn.execute("SELECT COUNT(*) FROM repetition WHERE config_id != ? AND status = ?",
                                 (target_id, OK)).fetchone()[0]
        assert others == 2 * 6


def test_agent_error_frame_skips_and_reports_the_config(tmp_path, agent_path):
    """A configuration the agent refuses (here: a credential the suite cannot use, which
    the plan resolver would never produce) is skipped with the agent's message."""
    loaded = small_plan(repetitions=2, rounds=1)
    with Store.in_folder(tmp_path / "small") as st:
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
    with Store.in_folder(tmp_path / "small") as st:
        summary = start(loaded, st, agent_path, freezer, timeouts=Timeouts(silence=1.0)).run()
        died = st.conn.execute("SELECT error_text FROM repetition WHERE status = ?", (DIED,)).fetchall()
    assert summary.agent_deaths == 1 and len(died) == 1
    assert "killed as hung" in died[0][0]
    assert summary.stored == 12


def test_run_options_reach_the_agent_and_the_config_key(tmp_path, agent_path):
    names = S.options.names
    if not names:
        pytest.skip("spec/protocol.toml declares no [options]")
    loaded = small_plan(repetitions=2, rounds=1, extra=f"options = {names[:1]!r}\n")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert summary.stored == 6 and summary.failed == 0
    with Store.in_folder(tmp_path / "small", create=False) as st:
        rows = st.configs()
        assert all(r["options"] == S.options.value(names[0]) and r["key"].endswith("|" + names[0]) for r in rows)


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
    with Store.in_folder(tmp_path / "small", create=False) as st:
        rounds = {r[0] for r in st.conn.execute("SELECT round FROM repetition")}
    assert max(rounds) == (3 if repetitions < expected else 1)  # 2 planned rounds, then 2 of 2 more


@pytest.mark.parametrize("pin", [True, False])
def test_agents_and_controller_on_cpus_of_their_own(tmp_path, agent_path, pin):
    """With two CPUs or more the agents run on CPUs the controller keeps away from, at
    nice −20 where permitted (root here); each agent row says what the agent got. The
    controller's thread has its own CPUs back afterwards."""
    before = os.sched_getaffinity(0)
    run_experiment(small_plan(repetitions=2, rounds=1), tmp_path, agent_dir=agent_path.parent, pin=pin)
    assert os.sched_getaffinity(0) == before
    with Store.in_folder(tmp_path / "small", create=False) as st:
        placements = [json.loads(a["placement_json"]) for a in st.agents()]
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
    with Store.in_folder(tmp_path / "small", create=False) as st:
        rows = [(json.loads(a["hello_json"])["clock"], json.loads(a["clock_json"])) for a in st.agents()]
    for hello, checked in rows:
        assert checked["source"] == hello["source"] and checked["max_drift_ppm"] < 1000
