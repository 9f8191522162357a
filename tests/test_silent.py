# SPDX-License-Identifier: Apache-2.0
"""Nothing silent (issue 27): every planned cell that was not applicable, skipped, or left
without a usable repetition is named, with why, in the run's closing lines, in `tlsbench
status` (with the repetitions excluded by reason, descheduled included) and in the report's
first section; planned work that produced no data exits non-zero; an empty matrix and a
`primitives --size` above what the agents take are refused before anything runs.

Real runs through the command line. What a run cannot measure is produced honestly: a PSK
suite with a plan whose groups are all elliptic curves (a group the suite cannot take), a
payload of 40,000 one-byte records (more records than the agent's trace buffer holds: every
repetition is flagged TRACE_OVERFLOW and excluded), the example agent refusing a size its
experiment's setup cannot take, and busy processes above the agents' priority on their CPUs
(descheduled repetitions)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from stores import load_path
from tlsbench.run import agents
from tlsbench.run.placement import choose
from tlsbench.store.sqlite import DB_FILE

TRACEBACK = "Traceback (most recent call last)"
PSK = "TLS-PSK-WITH-AES-128-GCM-SHA256"
ECDSA = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
OVERFLOW_PAYLOAD = '{direction = "c2s", total_bytes = 40000, record_size = 1}'  # > the trace buffer's 8192 records
REPS = 10
PLAN = f'''name = "silent"
repetitions = {REPS}
rounds = 2
warmup = 0
groups = ["secp256r1"]
suites = ["{ECDSA}", "{PSK}"]
payload = [{{direction = "c2s", total_bytes = 1024, record_size = 1024}}, {OVERFLOW_PAYLOAD}]
'''
PSK_CELL = f"mbedtls|{PSK}|secp256r1"
PSK_WHY = "group secp256r1 does not apply to PSK key exchange"
OVERFLOW_KEY = f"mbedtls|{ECDSA}|secp256r1|ecdsa-p256|memory|c2s|40000|1"
OVERFLOW_WHY = f"no data: {REPS} excluded (TRACE_OVERFLOW {REPS})"


@dataclass
class Outcome:
    rc: int
    out: str
    err: str


def cli(*args: str | Path, agent_dir: Path | None = None) -> Outcome:
    env = dict(os.environ, COLUMNS="400")
    if agent_dir:
        env["TLSBENCH_AGENT_DIR"] = str(agent_dir)
    done = subprocess.run([sys.executable, "-m", "tlsbench.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert TRACEBACK not in done.stdout + done.stderr, done.stdout + done.stderr
    return Outcome(done.returncode, done.stdout, done.stderr)


def one_line(outcome: Outcome) -> str:
    """The one error line of a refused command (exit 1)."""
    lines = outcome.err.strip().splitlines()
    assert outcome.rc == 1 and len(lines) == 1 and lines[0].startswith("error: "), outcome
    return lines[0]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def summary_section(report: Path) -> str:
    """The report's first section (before the winners), as text."""
    html = report.read_text()
    start = html.index('<section id="summary">')
    return flat(re.sub(r"<[^>]+>", " ", html[start:html.index("</section>", start)]))


@pytest.fixture(scope="module")
def silent(tmp_path_factory, agent_path) -> tuple[Path, Outcome]:
    """`tlsbench run` of the plan above: a cell not applicable, a configuration without data."""
    tmp = tmp_path_factory.mktemp("silent")
    plan = tmp / "silent.toml"
    plan.write_text(PLAN)
    return tmp / "out" / "silent", cli("run", plan, "--output", tmp / "out", agent_dir=agent_path.parent)


def used(folder: Path) -> int:
    """Repetitions left for the statistics (a busy machine may deschedule every one of the
    other configuration's: then nothing is)."""
    return int((~load_path(folder / DB_FILE).excluded_mask()).sum())


def test_the_run_names_what_it_did_not_measure(silent):
    folder, run = silent
    text = flat(run.out)
    assert f"not measured ({PSK_WHY}): {PSK_CELL}" in text
    assert f"not measured ({OVERFLOW_WHY}): {OVERFLOW_KEY}" in text
    assert "excluded from statistics: " in text and f"TRACE_OVERFLOW {REPS}" in text
    if used(folder):
        assert run.rc == 0, run.err
    else:
        assert "the run produced no data" in one_line(run) and f"no data: {REPS} excluded (descheduled {REPS})" in text


def test_status_names_them_after_the_run(silent):
    folder, _ = silent
    status = cli("status", folder)
    assert status.rc == 0
    text = flat(status.out)
    ds = load_path(folder / DB_FILE)
    excluded, descheduled = int(ds.excluded_mask().sum()), int(ds.descheduled_mask().sum())
    unmeasured = 2 + (not used(folder))
    # configs, not measured, stored, planned, failed, flagged, excluded
    # in a pipe: plain aligned lines (report/terminal.py show), the header's last column then the row
    assert f"excluded 2 {unmeasured} {2 * REPS} {2 * REPS} 0 {REPS} {excluded} " in text, text
    assert f"{PSK_CELL} {PSK_WHY}" in text
    assert f"{OVERFLOW_KEY} {OVERFLOW_WHY}" in text
    assert "excluded from statistics: " in text and f"TRACE_OVERFLOW {REPS}" in text
    assert (f"descheduled {descheduled}" in text) == bool(descheduled)


def test_the_report_names_them_first(silent):
    folder, run = silent
    if run.rc:  # no data at all: the run wrote no report; asked for, it is written
        assert cli("report", folder).rc == 0
    summary = summary_section(folder / "report.html")
    assert f"{PSK_CELL}: {PSK_WHY}" in summary
    assert OVERFLOW_WHY in summary and "40000" in summary
    assert f"TRACE_OVERFLOW {REPS}" in summary


def test_an_empty_matrix_is_refused_before_anything_runs(tmp_path, agent_path):
    plan = tmp_path / "empty.toml"
    plan.write_text(PLAN.replace(f'"{ECDSA}", ', "").replace('name = "silent"', 'name = "empty"'))
    line = one_line(cli("run", plan, "--output", tmp_path / "out", agent_dir=agent_path.parent))
    assert "nothing to measure" in line and f"{PSK_WHY} ({PSK_CELL})" in line
    assert not (tmp_path / "out").exists()


def test_primitives_above_every_size_an_experiment_takes_is_one_line(tmp_path, agent_path):
    line = one_line(cli("primitives", "--library", "mbedtls", "--experiment", "sha256", "--size", "99999999",
                        "--reps", "2", "--output", tmp_path, agent_dir=agent_path.parent))
    assert "size 99999999 is above the largest sha256 takes" in line and "mbedtls|experiment|sha256|99999999" in line
    assert not list(tmp_path.iterdir())


def test_a_run_that_produced_no_data_fails_and_keeps_what_it_stored(tmp_path, agent_path):
    plan = tmp_path / "nodata.toml"
    plan.write_text(f'name = "nodata"\nrepetitions = 2\nrounds = 1\nwarmup = 0\nsuites = ["{PSK}"]\n'
                    f"payload = [{OVERFLOW_PAYLOAD}]\n")
    run = cli("run", plan, "--output", tmp_path, agent_dir=agent_path.parent)
    line = one_line(run)
    assert "the run produced no data: all 2 stored repetitions were excluded (TRACE_OVERFLOW 2)" in line
    assert f"mbedtls|{PSK}|default|psk|memory|c2s|40000|1" in flat(run.out)
    assert len(load_path(tmp_path / "nodata" / DB_FILE).reps) == 2


def test_a_configuration_its_agent_refuses_is_named(tmp_path):
    """The example agent's sensor-json refuses 8 bytes (its setup needs more): the controller
    skips that configuration, and every view names it with the agent's reason."""
    try:
        example = agents.find_agent("example").parent
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the example agent (built with the others by cmake): {exc}")
    plan = tmp_path / "refused.toml"
    plan.write_text('name = "refused"\nlibraries = ["example"]\nrepetitions = 2\nrounds = 1\nwarmup = 0\n'
                    '[experiments]\ninclude = ["sensor-json"]\nsizes = [8, 64]\n')
    run = cli("run", plan, "--output", tmp_path, agent_dir=example)
    assert run.rc == 0, run.err
    key = "example|experiment|sensor-json|8"
    assert any(line.startswith("not measured (skipped: agent refused: unsupported: ") and line.endswith(key)
               for line in run.out.splitlines()), run.out
    status = flat(cli("status", tmp_path / "refused").out)
    assert f"{key} skipped: agent refused: unsupported: " in status, status
    assert "sensor-json at 8 B was not measured" in summary_section(tmp_path / "refused" / "report.html")


@pytest.mark.skipif(os.geteuid() != 0 or len(os.sched_getaffinity(0)) < 2,
                    reason="a process above the agents' priority needs root; CPUs of their own need two CPUs")
def test_descheduled_repetitions_are_counted_everywhere(tmp_path, agent_path):
    """Busy processes above the agents' priority on their CPUs: the repetitions they
    interrupted are excluded as descheduled, and the run, status and the report count them
    (the rule itself is analysis/stats/exclusions.py's, unchanged)."""
    cpus = choose(True).agent_cpus

    def hog() -> None:  # its own scheduling group, above the agents' (run/placement.py)
        os.sched_setaffinity(0, cpus)
        os.setpriority(os.PRIO_PROCESS, 0, -20)
        if os.path.exists("/proc/self/autogroup"):
            with open("/proc/self/autogroup", "w") as group:
                group.write("-20")

    plan = tmp_path / "busy.toml"
    plan.write_text(f'name = "busy"\nrepetitions = 6\nrounds = 2\nwarmup = 0\nsuites = ["{ECDSA}"]\n')
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=hog, start_new_session=True)
            for _ in cpus]
    try:
        run = cli("run", plan, "--output", tmp_path, agent_dir=agent_path.parent)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    folder = tmp_path / "busy"
    descheduled = int(load_path(folder / DB_FILE).descheduled_mask().sum())
    assert descheduled, "no repetition was descheduled: make the busy processes busier"
    assert f"descheduled {descheduled}" in flat(run.out)
    assert f"descheduled {descheduled}" in flat(cli("status", folder).out)
    if descheduled == 6:  # every repetition: the run produced no data, says so, and writes no report
        assert "the run produced no data: all 6 stored repetitions were excluded (descheduled 6)" in one_line(run)
        assert f"{ECDSA}" in flat(run.out) and "no data: 6 excluded (descheduled 6)" in flat(run.out)
        assert cli("report", folder).rc == 0  # asked for, it is written, and says the same
    else:
        assert run.rc == 0, run.err
    assert f"descheduled {descheduled}" in summary_section(folder / "report.html")
