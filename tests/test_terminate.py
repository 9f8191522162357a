# SPDX-License-Identifier: Apache-2.0
"""SIGTERM (a CI's timeout, a scheduler's stop, `kill PID`) ends a plain `tlsbench run` as
Ctrl-C does: after the batch under way, its agents gone, what it stored valid, one line
that says how to resume, and a resume that completes the plan. About 15 s."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from stores import reader
from tlsbench.store.api import StoreError

# Long enough (about 7 s here) that the SIGTERM, sent once 5 repetitions are stored, falls
# within the run: 40 repetitions of a PSK and an ECDHE suite were all stored before it on the CI machine.
REPETITIONS = 1000
PLAN = f"""name = "term"
repetitions = {REPETITIONS}
rounds = 100
warmup = 0
suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]
"""


def tlsbench(*args: str, agent_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, TLSBENCH_AGENT_DIR=str(agent_dir), COLUMNS="200")
    return subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def stored(store: Path) -> int:
    try:
        with reader(store) as st:
            return sum(len(idx) for idx in st.stored_indices().values())
    except StoreError:  # not yet created, or no experiment in it yet
        return 0


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (its agents while it runs)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def test_sigterm_ends_a_run_as_ctrl_c_does_and_it_resumes(tmp_path, agent_path):
    plan = tmp_path / "term.toml"
    plan.write_text(PLAN)
    args = ("run", str(plan), "--output", str(tmp_path / "out"), "--no-report")
    store = tmp_path / "out" / "term" / "tlsbench.db"
    run = tlsbench(*args, agent_dir=agent_path.parent)
    deadline = time.monotonic() + 120
    while stored(store) < 5 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.poll() is None, run.communicate()[0]
    agents = children(run.pid)
    assert agents, "the run started no agent"
    run.send_signal(signal.SIGTERM)
    out = run.communicate(timeout=120)[0]
    assert run.returncode == 130 and "Traceback" not in out, out
    assert "tlsbench run" in out and "--resume" in out, out  # the line that says how to go on
    assert not [pid for pid in agents if Path(f"/proc/{pid}").exists()], "agents outlived the run"
    first = stored(store)
    assert 5 <= first < 2 * REPETITIONS
    with reader(store) as st:
        assert {a.exit_reason for a in st.agent_rows()} == {"interrupted"}
    again = tlsbench(*args, "--resume", agent_dir=agent_path.parent)
    out = again.communicate(timeout=300)[0]
    assert again.returncode == 0, out
    with reader(store) as st:
        assert sorted(len(idx) for idx in st.stored_indices().values()) == [REPETITIONS, REPETITIONS]
