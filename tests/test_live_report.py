# SPDX-License-Identifier: Apache-2.0
"""`tlsbench run --live-report MINUTES`: a report of the rounds so far appears next to the
store while the run goes on, says it is partial, and a report of the finished store does not."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PLAN = """name = "live"
repetitions = 6
rounds = 3
warmup = 0
suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]
[precision]
target_ci_percent = 0.0001
max_repetitions = 100000
time_budget_s = 200
"""


def tlsbench(*args: str, agent_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, TLSBENCH_AGENT_DIR=str(agent_dir), COLUMNS="160")
    return subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_live_report_shows_the_rounds_so_far_while_the_run_goes_on(tmp_path, agent_path):
    plan = tmp_path / "live.toml"
    plan.write_text(PLAN)
    report = tmp_path / "out" / "live" / "report.html"
    run = tlsbench("run", str(plan), "--output", str(tmp_path / "out"), "--no-report", "--live-report", "0.01",
                   agent_dir=agent_path.parent)
    try:
        deadline = time.monotonic() + 180  # a busy shared machine: minutes
        while not report.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert report.exists(), "no live report while the run went on"
        html = report.read_text()  # replaced atomically: always a whole file
        assert html.rstrip().endswith("</html>")
        assert "Partial results: the rounds so far." in html and f"The run (PID {run.pid})" in html
        assert html.index('id="partial"') < html.index('id="summary"')
    finally:
        run.send_signal(signal.SIGINT)  # the store stays consistent: a resume would go on
        out = run.communicate(timeout=120)[0]
    assert run.returncode == 130, out
    final = tlsbench("report", str(report.parent), agent_dir=agent_path.parent)
    assert final.wait(timeout=300) == 0, final.stdout.read()
    assert "Partial results" not in report.read_text()  # planned rounds stored, nobody writing
