# SPDX-License-Identifier: Apache-2.0
"""Paced peers (docs/networks.md "Paced peers"): a host agent that holds each handshake step
for the board's modelled time of the same step counted on the device. Real parts: the firmware
under QEMU counts a PSK handshake (TLS and DTLS), then the host's mbed TLS agents run it over
loopback sockets with the client paced. About 30-50 s in all (the QEMU run, three small runs and
two killed ones)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import tlsbench
from tlsbench.analysis.derive.load import load
from tlsbench.analysis.models.pace import match_key, modelled_steps
from tlsbench.core.processes import alive, owned_folder
from tlsbench.run.pace import PaceFiles, Pacing
from tlsbench.store.locator import locate

SUITE = "TLS-PSK-WITH-AES-128-CCM-8"


def tlsbench_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tlsbench.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=os.environ)


@pytest.fixture(scope="module")
def device_run(tmp_path_factory) -> Path:
    """The device's counts of one PSK handshake, TLS and DTLS (one repetition: counts are exact)."""
    where = tmp_path_factory.mktemp("pace")
    (where / "dev.toml").write_text(f'name = "dev"\nsuites = ["{SUITE}"]\nrepetitions = 1\nwarmup = 0\n'
                                    '[device]\ntarget = "qemu-mps2-an386"\nprotocols = ["tls", "dtls"]\n')
    done = tlsbench_cli("run", "dev.toml", "--output", ".", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "dev"


def paced_plan(where: Path, source: Path, suites: str = f'["{SUITE}"]', name: str = "paced") -> str:
    (where / f"{name}.toml").write_text(
        f'name = "{name}"\nsuites = {suites}\nrepetitions = 3\nwarmup = 1\n'
        f'[network]\ntransports = ["tcp", "udp"]\ndevice = "client"\n'
        f'pace = {{ board = "nrf52840", from = "{source}" }}\n')
    return f"{name}.toml"


def client_model_ns(device_run: Path) -> dict[str, float]:
    with locate(device_run).reader() as reader:
        model = modelled_steps(load(reader, reader), "nrf52840")
    return {m[1]: sum(ns for (peer, _), ns in steps.items() if peer == "client") for m, steps in model.steps.items()}


def test_a_paced_handshake_takes_the_models_time_and_its_processing_stays_the_hosts(device_run: Path) -> None:
    where = device_run.parent
    done = tlsbench_cli("run", paced_plan(where, device_run), "--output", ".", cwd=where)
    assert done.returncode == 0, done.stderr
    model = client_model_ns(device_run)
    assert model["tls"] > 1e6 and model["dtls"] > 1e6  # a PSK handshake on a 64 MHz part: milliseconds
    reps = tlsbench.open(where / "paced", include_flagged=True).repetitions
    reps = reps[reps.status == "OK"]
    assert len(reps) == 6
    for transport, g in reps.groupby("transport", observed=True):
        modelled = model["dtls" if transport == "udp" else "tls"]
        # the client held every step: no handshake is shorter than the device's modelled steps
        assert (g.handshake_time >= 0.98 * modelled).all(), (transport, list(g.handshake_time), modelled)
        # the holds are not the host's work: its processing stays its own, far below the part's
        assert (g.handshake_processing_client < 0.5 * modelled).all()
        assert (g.handshake_io_client >= 0.5 * modelled).all()  # the holds are labelled (PACE_HOLD, io)
    report = (where / "paced" / "report.html").read_text()
    assert 'id="paced"' in report and "for computation (no packet lost)" in report  # the report's own section


def test_a_configuration_without_device_counts_is_refused_in_one_line(device_run: Path) -> None:
    where = device_run.parent
    plan = paced_plan(where, device_run, '["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]', "uncounted")
    done = tlsbench_cli("run", plan, "--output", ".", cwd=where)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "has no counts of" in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert not (where / "uncounted" / "tlsbench.db").exists()


def test_rows_match_on_the_handshakes_options_not_the_sockets(device_run: Path) -> None:
    """MUTUAL_AUTH or COLD_CACHES change a handshake's steps: a device run without them has no
    counts of a plan with them; NODELAY and QUICKACK are the kernel's, never a device's."""
    where = device_run.parent
    plan = paced_plan(where, device_run, name="cold")
    (where / plan).write_text((where / plan).read_text().replace("warmup = 1\n", 'warmup = 1\noptions = [["COLD_CACHES"]]\n'))
    done = tlsbench_cli("run", plan, "--output", ".", cwd=where)
    assert done.returncode != 0 and "has no counts of" in done.stderr and "COLD_CACHES]" in done.stderr, done.stderr
    assert match_key("mbedtls", "tls", SUITE, "g", "psk", 2 | 4) == match_key("mbedtls", "tls", SUITE, "g", "psk", 0)
    assert match_key("mbedtls", "tls", SUITE, "g", "psk", 16) != match_key("mbedtls", "tls", SUITE, "g", "psk", 0)


def test_a_missing_device_run_and_a_host_run_are_refused(device_run: Path, tmp_path: Path) -> None:
    done = tlsbench_cli("run", paced_plan(tmp_path, tmp_path / "nowhere"), "--output", ".", cwd=tmp_path)
    assert done.returncode != 0 and "no device run at" in done.stderr and "Traceback" not in done.stderr
    host = device_run.parent / "paced"  # a host run (the first test's) is no device's counts
    if host.exists():
        done = tlsbench_cli("run", paced_plan(tmp_path, host, name="from-host"), "--output", ".", cwd=tmp_path)
        assert done.returncode != 0 and "ran on this host" in done.stderr, done.stderr


def pace_folders_of(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"tlsbench-pace-{pid}-*"))


def killed_paced_run(where: Path, plan: str) -> int:
    """A paced run killed (SIGKILL) once its agents have their tables: its PID."""
    proc = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "run", plan, "--output", ".", "--no-report"],
                            cwd=where, env=os.environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while not any(f.is_file() for d in pace_folders_of(proc.pid) for f in d.iterdir()) and proc.poll() is None:
        assert time.monotonic() < deadline, "the paced run never wrote its tables"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    while alive(proc.pid):
        time.sleep(0.02)
    return proc.pid


def test_a_killed_paced_runs_tables_go_at_the_next_paced_run_and_with_clean(device_run: Path) -> None:
    """The tables folder names its owner's PID (as a link run's forwarder files do): a SIGKILLed
    run's is removed when the next paced run starts, or by `tlsbench clean`; a live owner's stays."""
    where = device_run.parent
    long_plan = paced_plan(where, device_run, name="killed-paced").replace(".toml", "")
    (where / f"{long_plan}.toml").write_text((where / f"{long_plan}.toml").read_text()
                                            .replace("repetitions = 3", "repetitions = 400"))
    first = killed_paced_run(where, f"{long_plan}.toml")
    assert len(pace_folders_of(first)) == 1  # what a kill -9 leaves
    done = tlsbench_cli("run", paced_plan(where, device_run, name="next-paced"), "--output", ".", "--no-report",
                        cwd=where)
    assert done.returncode == 0, done.stderr
    assert pace_folders_of(first) == []  # the next paced run's start removed it
    second = killed_paced_run(where, f"{long_plan}.toml")
    left = pace_folders_of(second)
    live = owned_folder("pace")  # this process's: alive
    try:
        said = tlsbench_cli("clean", str(where), cwd=where).stdout
        assert live.exists()
    finally:
        live.rmdir()
    assert len(left) == 1 and f"removed pace tables {left[0]}" in said, said
    assert pace_folders_of(second) == []


def test_only_the_paced_agents_get_rows_and_each_its_own_peer() -> None:
    pacing = Pacing("device", {"k": (("client", 101, 5000), ("server", 102, 7000))})
    files = PaceFiles(pacing)
    try:
        assert files.prefix("peer") == [] and files.prefix("dev")[-1].startswith("TLSBENCH_PACE=")
        files.write("dev", 7, "k", "client")
        files.write("peer", 7, "k", "server")
        files.write("dev", 7, "k", "client")  # once per configuration
        assert (files.folder / "dev").read_text() == "7 0 101 5000\n"
        assert not (files.folder / "peer").exists()
        both = PaceFiles(Pacing("both", pacing.steps))
        both.write("peer", 3, "k", "server")
        assert (both.folder / "peer").read_text() == "3 1 102 7000\n"
        both.remove()
    finally:
        files.remove()


def test_an_unpaced_network_plan_hashes_as_before_pace_and_a_bad_board_is_one_line() -> None:
    from tlsbench import plan

    text = 'name = "x"\nrepetitions = 3\n[network]\ntransports = ["udp"]\n'
    assert '"pace"' not in plan.parse(text, "t").plan.resolved_json()  # stores run before `pace` still resume
    paced = plan.parse(text + 'pace = { board = "nrf52840", from = "dev" }\n', "t").plan
    assert paced.network.pace.source == "dev" and paced.network.pace.side == "device"
    with pytest.raises(plan.PlanError) as e:
        plan.parse(text + 'pace = { board = "nrf5", from = "dev" }\n', "t")
    assert "unknown board 'nrf5'" in str(e.value) and "nrf52840" in str(e.value)
