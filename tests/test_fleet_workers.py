# SPDX-License-Identifier: Apache-2.0
"""Workers of a fleet (docs/fleet.md) as real `tlsbench worker` processes sharing one queue in
the PostgreSQL server the tests share: several at once store every repetition once; a worker
killed with SIGKILL mid-batch loses its lease and another finishes the batch; a worker takes
only the batches it can run. Tiny plans; about 40 s in all."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from pg_server import database
from tlsbench.cli import main
from tlsbench.store.postgres.testing import table_rows

PLAN = ('name = "{name}"\nrepetitions = {reps}\nrounds = {rounds}\nwarmup = 0\n'
        'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n')


def enqueue(tmp, url: str, name: str, reps: int, rounds: int) -> None:
    plan = tmp / f"{name}.toml"
    plan.write_text(PLAN.format(name=name, reps=reps, rounds=rounds))
    out = CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output", str(tmp)],
                             catch_exceptions=False)
    assert out.exit_code == 0 and "queued" in out.output, out.output


def worker(url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "worker", "--store", url, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stored_once(url: str, name: str) -> tuple[int, int]:
    """(repetitions stored, distinct (configuration, index) among them)."""
    return table_rows(url, "SELECT count(*), count(DISTINCT (r.config_id, r.idx)) FROM repetition r "
                           "JOIN experiment e ON e.id = r.experiment_id WHERE e.name = %s", name)[0]


@pytest.fixture(scope="module")
def url(agent_path):
    os.environ.setdefault("TLSBENCH_AGENT_DIR", str(agent_path.parent))
    return database("workers")


def test_workers_share_the_queue_and_store_each_repetition_once(url, tmp_path):
    enqueue(tmp_path, url, "shared", reps=6, rounds=3)  # 2 configurations x 3 rounds: 6 batches of 2
    procs = [worker(url, "--name", f"w{i}") for i in range(3)]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert stored_once(url, "shared") == (12, 12)
    batches = table_rows(url, "SELECT sum(batches), sum(stored), count(*) FROM worker WHERE name LIKE 'w_'")[0]
    assert batches == (6, 12, 3)
    assert table_rows(url, "SELECT count(*) FROM work WHERE done_at IS NULL") == [(0,)]
    # who measured: every agent row names a worker of the fleet, its host and tlsbench version
    agents = table_rows(url, "SELECT DISTINCT a.worker, a.host IS NOT NULL, a.tool_version IS NOT NULL FROM agent a "
                             "JOIN repetition r ON r.experiment_id = a.experiment_id AND r.agent_id = a.id")
    assert agents and all(w in {"w0", "w1", "w2"} and host and version for w, host, version in agents)
    status = CliRunner().invoke(main, ["status", "--store", url], catch_exceptions=False)
    assert status.exit_code == 0 and "shared" in status.output and "12/12" in status.output


def test_a_killed_workers_batch_goes_to_another_after_its_lease(url, tmp_path):
    enqueue(tmp_path, url, "killed", reps=40, rounds=1)  # 2 batches of 40: long enough to be killed in
    first = worker(url, "--name", "doomed", "--lease", "2")
    deadline = time.monotonic() + 60
    while not table_rows(url, "SELECT 1 FROM repetition r JOIN experiment e ON e.id = r.experiment_id "
                              "WHERE e.name = 'killed'"):
        assert time.monotonic() < deadline and first.poll() is None, "the worker stored nothing"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    held = table_rows(url, "SELECT count(*) FROM work w JOIN experiment e ON e.id = w.experiment_id "
                           "WHERE e.name = 'killed' AND w.done_at IS NULL")[0][0]
    assert held >= 1
    second = worker(url, "--name", "heir", "--lease", "2")
    out = second.communicate(timeout=120)[0]
    assert second.returncode == 0, out
    assert stored_once(url, "killed") == (80, 80)
    assert table_rows(url, "SELECT max(w.attempts) FROM work w JOIN experiment e ON e.id = w.experiment_id "
                           "WHERE e.name = 'killed'") == [(2,)]
    assert table_rows(url, "SELECT ended_at IS NULL FROM worker WHERE name = 'doomed'") == [(True,)]


def test_a_worker_takes_only_what_it_can_run(url, tmp_path):
    enqueue(tmp_path, url, "picky", reps=2, rounds=1)
    for args in (["--library", "wolfssl"], ["--device", "qemu-mps2-an386"]):
        proc = worker(url, "--name", "picky", *args)
        out = proc.communicate(timeout=60)[0]
        assert proc.returncode == 0 and "0 batches" in out, out
    assert stored_once(url, "picky") == (0, 0)
    proc = worker(url, "--name", "able", "--library", "mbedtls")
    assert proc.wait(timeout=60) == 0
    assert stored_once(url, "picky") == (4, 4)


def test_an_experiment_is_measured_on_one_device(url, tmp_path):
    enqueue(tmp_path, url, "bound", reps=40, rounds=2)
    first = worker(url, "--name", "bench-a", "--device-name", "board-a", "--lease", "1")
    deadline = time.monotonic() + 60
    while not table_rows(url, "SELECT 1 FROM repetition r JOIN experiment e ON e.id = r.experiment_id "
                              "WHERE e.name = 'bound'"):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)  # board-a is gone for now, its work still queued
    first.wait()
    left = "SELECT count(*) FROM work w JOIN experiment e ON e.id = w.experiment_id WHERE e.name = 'bound' " \
           "AND w.done_at IS NULL"
    assert table_rows(url, left)[0][0] >= 1
    time.sleep(1.5)  # its lease runs out
    other = worker(url, "--name", "bench-b", "--device-name", "board-b")
    out = other.communicate(timeout=60)[0]
    assert other.returncode == 0 and "0 batches" in out, out  # board-a measures it: board-b may not add to it
    assert table_rows(url, left)[0][0] >= 1
    again = worker(url, "--name", "bench-a2", "--device-name", "board-a")
    assert again.wait(timeout=60) == 0
    assert stored_once(url, "bound") == (80, 80)
    devices = table_rows(url, "SELECT DISTINCT k.device FROM work w JOIN worker k ON k.id = w.worker_id "
                              "JOIN experiment e ON e.id = w.experiment_id WHERE e.name = 'bound'")
    assert devices == [("board-a",)]


def test_history_keys_results_by_experiment_device_build_and_commit(url):
    from tlsbench.store.postgres.history import history

    rows = history(url)  # what the tests above stored
    assert ("bound", "board-a") in {(r.experiment, r.device) for r in rows}
    assert all(r.tool_version != "?" and r.build.startswith("tlsbench-agent-mbedtls") for r in rows)
    assert {r.experiment for r in history(url, device="board-a")} == {"bound"}
    psk = history(url, suite="TLS-PSK-*")
    assert psk and all(r.configurations == 1 for r in psk)  # the plans' two suites, one of them PSK
    out = CliRunner().invoke(main, ["history", "--store", url, "--device", "board-a"], catch_exceptions=False)
    assert out.exit_code == 0 and "bound" in out.output


def test_workers_run_an_emulated_device_plan_side_by_side(url, tmp_path):
    """Two workers, each booting its own QEMU: the device matrix on two cores (about 25 s)."""
    from tlsbench.builder import firmware

    firmware.ensure_firmware(firmware.FirmwareRequest())  # built once (test_device.py's images)
    plan = tmp_path / "matrix.toml"
    plan.write_text('name = "matrix"\nsuites = ["TLS-PSK-WITH-AES-128-CCM-8"]\nrepetitions = 4\nrounds = 2\n'
                    '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
                    '[device]\ntarget = "qemu-mps2-an386"\nprotocols = ["tls", "dtls"]\n')
    queued = CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output", str(tmp_path)],
                                catch_exceptions=False)
    assert queued.exit_code == 0, queued.output
    host_only = worker(url, "--name", "hostly")  # no --device: takes none of it
    assert "0 batches" in host_only.communicate(timeout=60)[0]
    procs = [worker(url, "--name", f"qemu{i}", "--device", "qemu-mps2-an386") for i in range(2)]
    outputs = [p.communicate(timeout=180)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert stored_once(url, "matrix") == (8, 8)
    measured = table_rows(url, "SELECT DISTINCT a.worker, a.target FROM agent a JOIN repetition r "
                               "ON r.experiment_id = a.experiment_id AND r.agent_id = a.id JOIN experiment e "
                               "ON e.id = a.experiment_id WHERE e.name = 'matrix'")
    assert {t for _, t in measured} == {"qemu-mps2-an386"} and {w for w, _ in measured} <= {"qemu0", "qemu1"}
    devices = table_rows(url, "SELECT DISTINCT device FROM worker WHERE name LIKE 'qemu_'")
    assert len(devices) == 1 and devices[0][0].startswith("qemu-mps2-an386@")


def test_a_run_refuses_an_experiment_the_workers_fill(url, tmp_path):
    enqueue(tmp_path, url, "busy", reps=2, rounds=1)
    out = CliRunner().invoke(main, ["run", str(tmp_path / "busy.toml"), "--store", url, "--output", str(tmp_path)])
    assert out.exit_code != 0 and "queued for a fleet's workers (2 batches to do)" in out.output, out.output
    assert len(out.output.strip().splitlines()) == 1 and stored_once(url, "busy") == (0, 0)


def test_a_terminated_worker_hands_its_batch_back_at_once(url, tmp_path):
    enqueue(tmp_path, url, "stopped", reps=60, rounds=1)
    proc = worker(url, "--name", "polite")
    deadline = time.monotonic() + 60
    while not table_rows(url, "SELECT 1 FROM repetition r JOIN experiment e ON e.id = r.experiment_id "
                              "WHERE e.name = 'stopped'"):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.terminate()
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0 and "interrupted" in out, out
    assert table_rows(url, "SELECT count(*) FROM work w JOIN experiment e ON e.id = w.experiment_id "
                           "WHERE e.name = 'stopped' AND w.leased_until IS NOT NULL") == [(0,)]  # no lease to wait for
    assert table_rows(url, "SELECT exit_reason FROM worker WHERE name = 'polite'") == [("interrupted",)]
    count, distinct = stored_once(url, "stopped")
    assert 0 < count == distinct < 120


def test_a_plan_over_two_targets_is_queued_one_stream_per_target(url, tmp_path):
    """Each target's batches go to workers of that target, each stream bound to its own device
    (about 40 s; a minute more on a cold firmware cache: the second target's build)."""
    plan = tmp_path / "two.toml"
    plan.write_text('name = "two"\nsuites = ["TLS-PSK-WITH-AES-128-CCM-8"]\nrepetitions = 2\nrounds = 1\n'
                    '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
                    '[device]\ntarget = ["qemu-mps2-an386", "qemu-mps2-an385"]\n')
    queued = CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output", str(tmp_path)],
                                catch_exceptions=False)
    assert queued.exit_code == 0, queued.output
    per_target = ("SELECT c.target, count(r.idx) FROM config c JOIN experiment e ON e.id = c.experiment_id "
                  "LEFT JOIN repetition r ON r.experiment_id = c.experiment_id AND r.config_id = c.id "
                  "WHERE e.name = 'two' GROUP BY c.target ORDER BY c.target")
    first = worker(url, "--name", "m4", "--device", "qemu-mps2-an386")
    out = first.communicate(timeout=180)[0]
    assert first.returncode == 0 and "1 batches" in out, out
    assert table_rows(url, per_target) == [("qemu-mps2-an385", 0), ("qemu-mps2-an386", 2)]
    second = worker(url, "--name", "m3", "--device", "qemu-mps2-an385")
    out = second.communicate(timeout=180)[0]
    assert second.returncode == 0 and "1 batches" in out, out
    assert table_rows(url, per_target) == [("qemu-mps2-an385", 2), ("qemu-mps2-an386", 2)]
    bound = table_rows(url, "SELECT DISTINCT w.target, k.device FROM work w JOIN worker k ON k.id = w.worker_id "
                            "JOIN experiment e ON e.id = w.experiment_id WHERE e.name = 'two' ORDER BY w.target")
    assert [(t, d.split("@")[0]) for t, d in bound] == [("qemu-mps2-an385",) * 2, ("qemu-mps2-an386",) * 2]
