# SPDX-License-Identifier: Apache-2.0
"""A board of a labgrid lab (run/labgrid.py, docs/fleet.md), the whole path with real parts: a
labgrid coordinator and exporter (labgrid from PyPI, in its own environment: `make deps`
installs .venv-labgrid), whose board is QEMU booting the firmware with its UART on a pty that
ser2net (Debian) serves as a raw TCP port; its reset line is QEMU's monitor. A run of a plan
with `[device] place` acquires the place, measures through it and releases it, also when the
run fails; a place someone else holds is refused with one line. About 30 s."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stores import reader
from test_device import PSK, RESET_THROUGH_MONITOR, device_plan, images  # noqa: F401 (the module fixture)
from tlsbench.app.run import run_experiment
from tlsbench.core.errors import UserError
from tlsbench.run.labgrid import CLIENT_ENV
from tlsbench.run.timeouts import Timeouts
from tlsbench.store.postgres.testing import free_port

REPO = Path(__file__).resolve().parents[1]
PLACE = "tlsbench-board"


def labgrid_bin() -> Path:
    """Where labgrid's programs are: $TLSBENCH_LABGRID_BIN, the repository's .venv-labgrid, PATH."""
    for folder in (os.environ.get("TLSBENCH_LABGRID_BIN"), REPO / ".venv-labgrid" / "bin"):
        if folder and (Path(folder) / "labgrid-client").exists():
            return Path(folder)
    found = shutil.which("labgrid-client")
    if found is None:
        pytest.fail("these tests need labgrid (make deps installs it into .venv-labgrid)")
    return Path(found).parent


def wait_for(check, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, images):  # noqa: F811
    if shutil.which("ser2net") is None:
        pytest.fail("these tests need ser2net: scripts/install-deps.sh installs it")
    tmp = tmp_path_factory.mktemp("lab")
    bin_dir = labgrid_bin()
    monitor = tmp / "monitor.sock"
    started: list[subprocess.Popen] = []

    def start(argv: list[str], log: str) -> subprocess.Popen:
        with (tmp / log).open("w") as out:
            started.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=tmp))
        return started[-1]
    try:
        qemu = start(["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor",
                      f"unix:{monitor},server=on,wait=off", "-semihosting-config", "enable=on,target=native",
                      "-icount", "shift=0", "-serial", "pty", "-kernel", str(images.image("counting").path)], "qemu.log")
        wait_for(lambda: "/dev/pts/" in (tmp / "qemu.log").read_text(), "QEMU opened no pty")
        pty = re.search(r"/dev/pts/\d+", (tmp / "qemu.log").read_text())[0]  # type: ignore[index]
        serial_port, coordinator = free_port(), free_port()
        (tmp / "ser2net.yaml").write_text(f"connection: &board\n  accepter: tcp,127.0.0.1,{serial_port}\n"
                                          f"  connector: serialdev,{pty},115200n81,local\n")
        start(["ser2net", "-n", "-d", "-c", str(tmp / "ser2net.yaml")], "ser2net.log")
        start([str(bin_dir / "labgrid-coordinator"), "-l", f"127.0.0.1:{coordinator}"], "coordinator.log")
        (tmp / "exporter.yaml").write_text(f"board:\n  NetworkSerialPort:\n    host: 127.0.0.1\n"
                                           f"    port: {serial_port}\n    speed: 115200\n    protocol: raw\n")
        start([str(bin_dir / "labgrid-exporter"), "-c", f"127.0.0.1:{coordinator}", "-n", "rack1",
               str(tmp / "exporter.yaml")], "exporter.log")
        env = {**os.environ, "LG_COORDINATOR": f"127.0.0.1:{coordinator}"}

        def client(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([str(bin_dir / "labgrid-client"), *args], env=env, capture_output=True, text=True)
        wait_for(lambda: "rack1/board/NetworkSerialPort" in client("resources").stdout, "the exporter offers nothing")
        assert client("-p", PLACE, "create").returncode == 0
        assert client("-p", PLACE, "add-match", "rack1/board/*").returncode == 0
        os.environ["LG_COORDINATOR"] = env["LG_COORDINATOR"]
        os.environ[CLIENT_ENV] = str(bin_dir / "labgrid-client")
        reset_script = tmp / "reset.py"
        reset_script.write_text(RESET_THROUGH_MONITOR)
        yield client, f"{sys.executable} {reset_script} {monitor}", qemu
    finally:
        os.environ.pop(CLIENT_ENV, None)
        os.environ.pop("LG_COORDINATOR", None)
        for proc in reversed(started):
            proc.kill()
            proc.wait()


def acquired_by(client) -> str:
    found = re.search(r"^\s*acquired: (.*)$", client("-p", PLACE, "show").stdout, re.M)
    return found[1].strip() if found else ""


def place_plan(name: str, images, reset: str, repetitions: int = 2):  # noqa: F811
    return device_plan(name, [PSK], f'place = "{PLACE}"\nreset = {json.dumps(reset)}\n'
                                    f'firmware = "{images.image("counting").path}"', repetitions=repetitions)


def test_a_run_on_a_labgrid_place_acquires_measures_and_releases(lab, images, tmp_path):  # noqa: F811
    client, reset, _ = lab
    summary = run_experiment(place_plan("placed", images, reset), tmp_path, timeouts=Timeouts(greeting=30))
    assert summary.stored == 2 and summary.failed == 0
    with reader(tmp_path / "placed" / "tlsbench.db") as st:
        assert [(a.pid, a.target) for a in st.agent_rows()] == [(None, "qemu-mps2-an386")]
    assert acquired_by(client) in ("", "None")  # released


def test_the_place_is_released_when_the_run_fails(lab, images, tmp_path):  # noqa: F811
    client, _, _ = lab
    with pytest.raises(UserError):
        run_experiment(place_plan("broken", images, "false"), tmp_path, timeouts=Timeouts(greeting=5))
    assert acquired_by(client) in ("", "None")


def test_a_place_someone_else_holds_is_refused_with_one_line(lab, images, tmp_path):  # noqa: F811
    client, reset, _ = lab
    assert client("-p", PLACE, "acquire").returncode == 0
    try:
        with pytest.raises(UserError, match=r"labgrid-client -p tlsbench-board acquire failed"):
            run_experiment(place_plan("taken", images, reset), tmp_path)
        assert acquired_by(client) not in ("", "None")  # still the other holder's
        assert not (tmp_path / "taken").exists()
    finally:
        client("-p", PLACE, "release")
