# SPDX-License-Identifier: Apache-2.0
"""Interruptions of a real sweep through the CLI: kill -9 of the controller, Ctrl-C;
then resume. Every (config, idx) must end up stored exactly once, the store intact."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stores import reader
from tlsbench import plan
from tlsbench.store.api import StoreError
from tlsbench.store.sqlite import DB_FILE

PLAN = '''
name = "interrupt"
repetitions = 40
rounds = 4
warmup = 0
suites = ["TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
          "TLS-PSK-WITH-AES-128-GCM-SHA256"]
'''
PLANNED = 3 * 40


def cli(*args: str, agent_dir: Path, **kw) -> subprocess.Popen:
    env = dict(os.environ, TLSBENCH_AGENT_DIR=str(agent_dir), COLUMNS="120")
    return subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def count(db: Path) -> int:
    """Repetitions stored (0 while the store is not created yet)."""
    try:
        with reader(db) as store:
            return len(store.repetition_columns())
    except StoreError:
        return 0


def wait_for(db: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while count(db) < n:
        assert proc.poll() is None, f"the run ended early: {proc.stdout.read()}"
        assert time.monotonic() < deadline, "the sweep did not make progress"
        time.sleep(0.02)


def agent_pids(db: Path) -> list[int]:
    with reader(db) as store:
        return [a.pid for a in store.agent_rows()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        return state != "Z"
    except OSError:
        return False


def check_exactly_once(db: Path) -> None:
    with reader(db) as store:
        assert store.integrity_check() == "ok"
        rows = store.repetition_rows()
        assert len({(r.config_id, r.idx) for _, r in rows}) == len(rows) == PLANNED
        assert {i for i, _ in rows} == {i for i, _ in store.traces()}  # each with its trace


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "interrupt.toml"
    path.write_text(PLAN)
    plan.load(path)  # valid
    return path


def test_kill_9_of_the_controller_then_resume(tmp_path, plan_file, agent_path):
    out = tmp_path / "out"
    db = out / "interrupt" / DB_FILE
    proc = cli("run", str(plan_file), "--output", str(out), agent_dir=agent_path.parent)
    wait_for(db, 25, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10  # the kernel ends the agent with its host (PR_SET_PDEATHSIG)
    while any(alive(pid) for pid in agent_pids(db)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in agent_pids(db)), "the agent outlived the killed controller"
    before = count(db)
    assert 25 <= before < PLANNED

    resumed = cli("run", str(plan_file), "--resume", "--output", str(out), agent_dir=agent_path.parent)
    text = resumed.communicate(timeout=120)[0]
    assert resumed.returncode == 0, text
    assert f"resuming: {before} of {PLANNED}" in text
    check_exactly_once(db)


def stored_rows(db: Path) -> dict[tuple[int, int], tuple]:
    """(config, idx) -> everything stored about the repetition, its trace included."""
    with reader(db) as store:
        traces = dict(store.traces())
        return {(r.config_id, r.idx): (i, r, traces[i]) for i, r in store.repetition_rows() if i in traces}


@pytest.mark.parametrize("pin", ["--pin", "--no-pin"])
def test_kill_9_at_any_moment_keeps_every_stored_repetition_once(tmp_path, plan_file, agent_path, pin):
    """Killed again and again at random moments (while a batch runs, while the one before is
    stored, with the next batch's RUN queued: --pin), then resumed: what was stored stays
    exactly as it was, and the end holds every repetition once."""
    out = tmp_path / "out"
    db = out / "interrupt" / DB_FILE
    rng = random.Random(17)
    before: dict[tuple[int, int], tuple] = {}
    for kill in range(5):
        proc = cli("run", str(plan_file), "--output", str(out), "--no-report", pin, agent_dir=agent_path.parent)
        wait_for(db, len(before) + 1, proc)  # a batch of this run is stored ...
        time.sleep(rng.uniform(0.0, 0.08))   # ... and the next one is somewhere
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = stored_rows(db)
        assert {k: now.get(k) for k in before} == before, f"kill {kill} changed what was stored"
        assert len(now) < PLANNED
        before = now
    resumed = cli("run", str(plan_file), "--output", str(out), "--no-report", pin, agent_dir=agent_path.parent)
    text = resumed.communicate(timeout=120)[0]
    assert resumed.returncode == 0, text
    after = stored_rows(db)
    assert {k: after.get(k) for k in before} == before
    check_exactly_once(db)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path, plan_file, agent_path):
    out = tmp_path / "out"
    db = out / "interrupt" / DB_FILE
    proc = cli("run", str(plan_file), "--output", str(out), agent_dir=agent_path.parent)
    wait_for(db, 10, proc)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=30)[0]
    assert proc.returncode == 130, text
    assert "interrupted" in text and "--resume" in text
    with reader(db) as store:
        (agent,) = store.agent_rows()
        assert agent.exit_reason == "interrupted"
        assert store.integrity_check() == "ok"
    assert not any(alive(pid) for pid in agent_pids(db)), "the agent outlived the controller"
    assert count(db) < PLANNED

    resumed = cli("run", str(plan_file), "--resume", "--output", str(out), agent_dir=agent_path.parent)
    text = resumed.communicate(timeout=120)[0]
    assert resumed.returncode == 0, text
    check_exactly_once(db)
