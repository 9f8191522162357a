# SPDX-License-Identifier: Apache-2.0
"""A board of a labgrid lab (run/labgrid.py, docs/fleet.md), the whole path with real parts: a
labgrid coordinator and exporter (labgrid from PyPI, in its own environment: `make deps`
installs .venv-labgrid), whose board is QEMU booting the firmware with its UART on a pty that
ser2net (Debian) serves as a raw TCP port; its reset line is QEMU's monitor. A run of a plan
with `[device] place` acquires the place, measures through it and releases it, also when the
run fails or is terminated; a place someone else holds is refused with one line; a worker
serves a place. A second board has a power switch (labgrid's NetworkPowerPort) and a flash
(tests/labgrid_board.py) that labgrid's FlashromDriver writes (flashrom's dummy chip backed by
the board's flash file) on an exporter host reached over SSH (an sshd of the test's own, in a
mount namespace where the images are not: labgrid copies the image there): a run with
`flash = "labgrid"` flashes its image through labgrid and power-cycles the board into it, and a
board frozen mid-sweep is power-cycled and the sweep goes on. Needs root (the namespace).
About 3 min on the busy 2-core machine (about 15 QEMU boots; each labgrid-client call takes
1-3 s there)."""
from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from stores import reader
from test_device import OK, PSK, RESET_THROUGH_MONITOR, device_plan, images  # noqa: F401 (the module fixture)
from tlsbench.app.run import run_experiment
from tlsbench.core.errors import UserError
from tlsbench.run.labgrid import CLIENT_ENV
from tlsbench.run.timeouts import Timeouts
from tlsbench.store.postgres.testing import free_port

REPO = Path(__file__).resolve().parents[1]
PLACE = "tlsbench-board"  # a board reset through QEMU's monitor (the plan's reset)
POWERED = "tlsbench-powered"  # a board with a power switch (labgrid's NetworkPowerPort) and a flash


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


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Processes:
    """Processes a fixture starts, each logging to a file of its own, killed at its end."""

    def __init__(self, folder: Path):
        self.folder, self.started = folder, []

    def start(self, argv: list[str], log: str) -> subprocess.Popen:
        with (self.folder / log).open("w") as out:
            self.started.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=self.folder))
        return self.started[-1]

    def stop(self) -> None:
        for proc in reversed(self.started):
            proc.kill()
            proc.wait()


EXPORTER_HOST = "tlsbench-exporter"  # the exporter's host as labgrid's client reaches it: the test's own sshd


def exporter_host(tmp: Path, processes: Processes, port: int, hidden: Path) -> Path:
    """The exporter's host as labgrid's ManagedFile reaches it, over SSH: an sshd of the test's
    own (Debian's openssh-server) on 127.0.0.1, with a port and host key of its own and login by
    a key the test makes, in a mount namespace where `hidden` (the images' folder) and
    /var/cache (labgrid's cache on the exporter's host) are empty: as on another host, labgrid
    finds no image in place there and copies it (rsync over SSH). Returns the folder of the
    `ssh` the client runs (OpenSSH with the test's client config: ~/.ssh stays untouched)."""
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(sshd).exists() or shutil.which("rsync") is None:
        pytest.fail("these tests need openssh-server and rsync: scripts/install-deps.sh installs them")
    if os.geteuid() != 0:
        pytest.fail("these tests need root: the exporter's host runs in a mount namespace of its own")
    ssh = tmp / "ssh"
    (ssh / "bin").mkdir(parents=True)
    for key in ("host", "login"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(ssh / key)], check=True)
    (ssh / "authorized_keys").write_text((ssh / "login.pub").read_text())
    (ssh / "known_hosts").write_text(f"{EXPORTER_HOST} {(ssh / 'host.pub').read_text()}")
    (ssh / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1:{port}\nHostKey {ssh / 'host'}\nAuthorizedKeysFile {ssh / 'authorized_keys'}\n"
        "AuthenticationMethods publickey\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "PidFile none\nPermitRootLogin prohibit-password\n")
    (ssh / "config").write_text(
        f"Host {EXPORTER_HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {ssh / 'login'}\n  IdentitiesOnly yes\n  HostKeyAlias {EXPORTER_HOST}\n"
        f"  UserKnownHostsFile {ssh / 'known_hosts'}\n  StrictHostKeyChecking yes\n  BatchMode yes\n")
    wrapper = ssh / "bin" / "ssh"
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which('ssh')} -F {ssh / 'config'} \"$@\"\n")
    wrapper.chmod(0o755)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder (Debian's service makes it)
    hide = " && ".join(f"mount -t tmpfs tmpfs {shlex.quote(str(folder))}" for folder in (hidden, Path("/var/cache")))
    processes.start(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                     f"{hide} && exec {sshd} -D -e -f {ssh / 'sshd_config'}"], "sshd.log")
    wait_for(lambda: listening(port), "sshd does not listen")
    return ssh / "bin"


def whole_chip(image: Path, folder: Path) -> Path:
    """The image padded with zeros to a whole number of KiB: the emulated flash chip's size
    (flashrom writes whole chips); QEMU's ELF loader reads past none of it."""
    data = image.read_bytes()
    chip = folder / image.name
    chip.write_bytes(data + bytes(-len(data) % 1024))
    return chip


@dataclass
class PoweredBoard:
    """The powered place's board (tests/labgrid_board.py): its flash file, boots and QEMU, and
    the counting image as a whole flash chip (what labgrid's FlashromDriver writes)."""

    flash: Path
    chip_image: Path
    ssh: Path  # the exporter's host's ssh (with the test's client config)

    @property
    def boots(self) -> list[tuple[int, str]]:
        """(QEMU's PID, the SHA-256 of the image it booted) of every power-on."""
        log = self.flash / "boots.log"
        lines = log.read_text().split() if log.exists() else []
        return [(int(pid), digest) for pid, digest in zip(lines[::2], lines[1::2])]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, images):  # noqa: F811
    """A coordinator and an exporter with two boards: `board`, a serial port that ser2net
    serves (the board itself is each test's: a firmware that QUITs ends its QEMU), and
    `powered`, a serial port and a power switch (labgrid's NetworkPowerPort, `simplerest`) in
    front of a board that boots what is flashed on it (tests/labgrid_board.py; the memory
    image until a run flashes another); a place on each."""
    if shutil.which("ser2net") is None:
        pytest.fail("these tests need ser2net: scripts/install-deps.sh installs it")
    tmp = tmp_path_factory.mktemp("lab")
    bin_dir = labgrid_bin()
    processes = Processes(tmp)
    try:
        serial_port, coordinator, powered_serial, power, uart, ssh_port = (free_port() for _ in range(6))
        processes.start([str(bin_dir / "labgrid-coordinator"), "-l", f"127.0.0.1:{coordinator}"], "coordinator.log")
        flash = tmp / "flash"
        flash.mkdir()
        shutil.copy(images.image("memory").path, flash / "firmware.elf")
        processes.start([sys.executable, str(REPO / "tests" / "labgrid_board.py"), str(power), str(uart), str(flash)],
                        "powered-board.log")
        (tmp / "powered-ser2net.yaml").write_text(f"connection: &powered\n  accepter: tcp,127.0.0.1,{powered_serial}\n"
                                                  f"  connector: tcp,127.0.0.1,{uart}\n")
        processes.start(["ser2net", "-n", "-d", "-c", str(tmp / "powered-ser2net.yaml")], "powered-ser2net.log")
        (tmp / "images").mkdir()
        chip = whole_chip(images.image("counting").path, tmp / "images")
        ssh_bin = exporter_host(tmp, processes, ssh_port, tmp / "images")
        serial = "  NetworkSerialPort:\n    host: 127.0.0.1\n    port: {}\n    speed: 115200\n    protocol: raw\n"
        (tmp / "exporter.yaml").write_text(
            f"board:\n{serial.format(serial_port)}powered:\n{serial.format(powered_serial)}"
            f"  NetworkPowerPort:\n    model: simplerest\n    host: 'http://127.0.0.1:{power}/power/{{index}}/{{value}}'\n"
            f"    index: 0\n  NetworkFlashrom:\n    host: {EXPORTER_HOST}\n"
            f"    programmer: 'dummy:emulate=VARIABLE_SIZE,size={chip.stat().st_size},"
            f"image={flash / 'firmware.elf'}'\n")
        # the lab's environment config: its places, the powered one's flashing driver (labgrid-client bootstrap)
        place_entry = "  {0}:\n    resources:\n      RemotePlace:\n        name: {0}\n"
        (tmp / "env.yaml").write_text(f"targets:\n{place_entry.format(PLACE)}{place_entry.format(POWERED)}"
                                      "    drivers:\n      FlashromDriver: {}\n")
        wait_for(lambda: listening(coordinator), "the coordinator does not listen")  # an exporter does not retry
        processes.start([str(bin_dir / "labgrid-exporter"), "-c", f"127.0.0.1:{coordinator}", "-n", "rack1",
                         str(tmp / "exporter.yaml")], "exporter.log")
        env = {**os.environ, "LG_COORDINATOR": f"127.0.0.1:{coordinator}"}

        def client(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([str(bin_dir / "labgrid-client"), *args], env=env, capture_output=True, text=True)
        wait_for(lambda: "rack1/powered/NetworkPowerPort" in client("resources").stdout, "the exporter offers nothing")
        for place, group in ((PLACE, "board"), (POWERED, "powered")):
            assert client("-p", place, "create").returncode == 0
            assert client("-p", place, "add-match", f"rack1/{group}/*").returncode == 0
        os.environ["LG_COORDINATOR"] = env["LG_COORDINATOR"]
        os.environ["LG_ENV"] = str(tmp / "env.yaml")
        os.environ[CLIENT_ENV] = shlex.join(["env", f"PATH={ssh_bin}:{os.environ['PATH']}",
                                             str(bin_dir / "labgrid-client")])
        yield client, serial_port, PoweredBoard(flash, chip, ssh_bin / "ssh")
    finally:
        os.environ.pop(CLIENT_ENV, None)
        os.environ.pop("LG_ENV", None)
        os.environ.pop("LG_COORDINATOR", None)
        processes.stop()


class Board(threading.Thread):
    """The board behind the place's serial port: QEMU booting the firmware, its UART on a pty
    that ser2net serves on the exporter's port; its reset line QEMU's monitor (`reset`). A
    firmware that QUITs ends its QEMU, which a board does not: the board then boots again."""

    def __init__(self, folder: Path, image: Path, serial_port: int):
        super().__init__(daemon=True)
        self.folder, self.image, self.serial_port = folder, image, serial_port
        self.monitor = folder / "monitor.sock"
        self.boots = 0
        self.ended = threading.Event()
        self.processes = Processes(folder)
        reset_script = folder / "reset.py"
        reset_script.write_text(RESET_THROUGH_MONITOR)
        self.reset = f"{sys.executable} {reset_script} {self.monitor}"

    def run(self) -> None:
        while not self.ended.is_set():
            qemu = self.processes.start(["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor",
                                         f"unix:{self.monitor},server=on,wait=off", "-semihosting-config",
                                         "enable=on,target=native", "-icount", "shift=0", "-serial", "pty", "-kernel",
                                         str(self.image)], "qemu.log")
            wait_for(lambda: "/dev/pts/" in (self.folder / "qemu.log").read_text(), "QEMU opened no pty")
            pty = re.search(r"/dev/pts/\d+", (self.folder / "qemu.log").read_text())[0]  # type: ignore[index]
            (self.folder / "ser2net.yaml").write_text(f"connection: &board\n  accepter: tcp,127.0.0.1,"
                                                      f"{self.serial_port}\n  connector: serialdev,{pty},115200n81,local\n")
            ser2net = self.processes.start(["ser2net", "-n", "-d", "-c", str(self.folder / "ser2net.yaml")],
                                           "ser2net.log")
            wait_for(lambda: self.monitor.exists(), "QEMU has no monitor")
            time.sleep(0.5)  # ser2net listening
            self.boots += 1
            qemu.wait()
            ser2net.kill()
            ser2net.wait()

    def up(self, after: int = 0) -> None:
        """Waits until it has booted more than `after` times."""
        wait_for(lambda: self.boots > after, "the board did not boot", 60)

    def stop(self) -> None:
        self.ended.set()
        self.processes.stop()


@pytest.fixture
def board(lab, images, tmp_path):  # noqa: F811
    running = Board(tmp_path, images.image("counting").path, lab[1])
    running.start()
    running.up()
    yield running
    running.stop()


def acquired_by(client, place: str = PLACE) -> str:
    found = re.search(r"^\s*acquired: (.*)$", client("-p", place, "show").stdout, re.M)
    return found[1].strip() if found else ""


def place_plan(name: str, images, reset: str, repetitions: int = 2):  # noqa: F811
    return device_plan(name, [PSK], f'place = "{PLACE}"\nreset = {json.dumps(reset)}\n'
                                    f'firmware = "{images.image("counting").path}"', repetitions=repetitions)


def test_a_run_on_a_labgrid_place_acquires_measures_and_releases(lab, board, images, tmp_path):  # noqa: F811
    client, reset = lab[0], board.reset
    summary = run_experiment(place_plan("placed", images, reset), tmp_path, timeouts=Timeouts(greeting=30))
    assert summary.stored == 2 and summary.failed == 0
    with reader(tmp_path / "placed" / "tlsbench.db") as st:
        assert [(a.pid, a.target) for a in st.agent_rows()] == [(None, "qemu-mps2-an386")]
    assert acquired_by(client) in ("", "None")  # released


def test_the_place_is_released_when_the_run_fails(lab, images, tmp_path):  # noqa: F811
    client = lab[0]
    with pytest.raises(UserError):
        run_experiment(place_plan("broken", images, "false"), tmp_path, timeouts=Timeouts(greeting=5))
    assert acquired_by(client) in ("", "None")


def test_a_place_someone_else_holds_is_refused_with_one_line(lab, images, tmp_path):  # noqa: F811
    client, reset = lab[0], "true"
    assert client("-p", PLACE, "acquire").returncode == 0
    try:
        with pytest.raises(UserError, match=r"labgrid-client -p tlsbench-board acquire failed"):
            run_experiment(place_plan("taken", images, reset), tmp_path)
        assert acquired_by(client) not in ("", "None")  # still the other holder's
        assert not (tmp_path / "taken").exists()
    finally:
        client("-p", PLACE, "release")


def test_a_terminated_run_releases_the_place_and_keeps_what_it_stored(lab, board, images, tmp_path):  # noqa: F811
    client, reset = lab[0], board.reset
    plan = tmp_path / "long.toml"
    plan.write_text(f'name = "long"\nsuites = ["{PSK}"]\nrepetitions = 400\n'
                    '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
                    f'[device]\nplace = "{PLACE}"\nreset = {json.dumps(reset)}\n'
                    f'firmware = "{images.image("counting").path}"\n')
    run = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(tmp_path),
                            "--no-report"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    store = tmp_path / "long" / "tlsbench.db"
    started = lambda: run.poll() is not None or (store.exists() and acquired_by(client) not in ("", "None"))  # noqa: E731
    wait_for(started, "the run never started", 60)
    assert run.poll() is None, run.communicate()[0]
    time.sleep(3)  # some repetitions stored
    run.terminate()
    out = run.communicate(timeout=60)[0]
    assert run.returncode != 0 and "Traceback" not in out, out
    assert acquired_by(client) in ("", "None")
    with reader(store) as st:
        assert 0 < len(st.stored_indices().get(next(iter(st.stored_indices())), ())) < 400


def test_a_worker_serves_a_place(lab, board, images, tmp_path):  # noqa: F811
    from click.testing import CliRunner

    from pg_server import database
    from tlsbench.cli import main
    from tlsbench.store.postgres.testing import table_rows

    client, reset = lab[0], board.reset
    url = database("place")
    plan = tmp_path / "placed-q.toml"
    plan.write_text(f'name = "placed-q"\nsuites = ["{PSK}"]\nrepetitions = 4\nrounds = 2\n'
                    '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
                    f'[device]\nplace = "{PLACE}"\nreset = {json.dumps(reset)}\n'
                    f'firmware = "{images.image("counting").path}"\n')
    queued = CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output", str(tmp_path)],
                                catch_exceptions=False)
    assert queued.exit_code == 0, queued.output
    assert acquired_by(client) in ("", "None")  # enqueuing greeted the board, then let it go
    board.up(after=1)  # its QUIT ended QEMU: the board is back
    done = subprocess.run([sys.executable, "-m", "tlsbench.cli", "worker", "--store", url, "--place", PLACE],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert table_rows(url, "SELECT count(*), count(DISTINCT idx) FROM repetition") == [(4, 4)]
    assert table_rows(url, "SELECT DISTINCT device FROM worker") == [(f"place {PLACE}",)]
    assert acquired_by(client) in ("", "None")


def powered_plan(name: str, images, powered: PoweredBoard | None, repetitions: int = 2,  # noqa: F811
                 extra: str = ""):
    """A plan on the powered place: no reset of its own (the place's power driver resets it).
    With `powered`, its counting image as a whole chip, written onto the board by the place's
    flashing driver (`flash = "labgrid"`); without, the counting image the board should hold."""
    firmware, flashing = (powered.chip_image, 'flash = "labgrid"\n') if powered else (images.image("counting").path, "")
    return device_plan(name, [PSK], f'place = "{POWERED}"\n{flashing}firmware = "{firmware}"',
                       repetitions=repetitions, extra=extra)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_place_is_flashed_and_power_cycled_into_the_image_the_run_built(lab, images, tmp_path):  # noqa: F811
    client, powered = lab[0], lab[2]
    chip = sha256_of(powered.chip_image)
    with pytest.raises(UserError, match="is the memory image where the counting image was expected"):
        run_experiment(powered_plan("unflashed", images, None), tmp_path, timeouts=Timeouts(greeting=30))
    assert powered.boots and powered.boots[-1][1] == images.image("memory").sha256  # powered on: what was flashed
    assert acquired_by(client, POWERED) in ("", "None")
    summary = run_experiment(powered_plan("flashed", images, powered), tmp_path, timeouts=Timeouts(greeting=30))
    assert summary.stored == 2 and summary.failed == 0
    pid, booted = powered.boots[-1]
    with reader(tmp_path / "flashed" / "tlsbench.db") as st:
        assert [a.firmware_sha256 for a in st.agent_rows()] == [chip]
    # the board runs the image the run was given, written by labgrid's FlashromDriver on the
    # exporter's host from the copy labgrid's ManagedFile made there over SSH (the exporter's
    # host does not see the image where it lies here)
    assert booted == chip

    def on_exporter(*test: str) -> bool:
        return subprocess.run([powered.ssh, EXPORTER_HOST, "test", *test]).returncode == 0
    assert not on_exporter("-e", str(powered.chip_image))
    assert on_exporter("-f", f"/var/cache/labgrid/{getpass.getuser()}/{chip}/{powered.chip_image.name}")
    assert acquired_by(client, POWERED) in ("", "None")
    assert client("-p", POWERED, "acquire").returncode == 0
    try:  # labgrid's power driver switches the board: off kills its QEMU, on boots it again
        assert client("-p", POWERED, "power", "off").returncode == 0
        assert not alive(pid)
        assert client("-p", POWERED, "power", "on").returncode == 0
        assert alive(powered.boots[-1][0]) and powered.boots[-1][0] != pid
    finally:
        client("-p", POWERED, "release")


class FreezeTheBoard:
    """An observer that freezes the powered board's QEMU (SIGSTOP) before the first batch's RUN."""

    def __init__(self, powered: PoweredBoard) -> None:
        self.powered, self.frozen = powered, 0

    def start(self, total: int, done: int, configs: int) -> None: pass
    def note(self, message: str) -> None: pass
    def extend(self, extra: int) -> None: pass
    def stored(self, config: str, idx: int, status: str, agent) -> None: pass

    def batch(self, config: str, round: int, first_index: int, count: int) -> None:
        if not self.frozen:
            self.frozen = self.powered.boots[-1][0]
            os.kill(self.frozen, signal.SIGSTOP)


def test_a_hung_board_is_power_cycled_and_the_sweep_goes_on(lab, images, tmp_path):  # noqa: F811
    client, powered = lab[0], lab[2]
    observer = FreezeTheBoard(powered)
    summary = run_experiment(powered_plan("hung", images, powered, repetitions=4, extra="rounds = 1\n"),
                             tmp_path, observer=observer, timeouts=Timeouts(greeting=30, silence=6))
    assert observer.frozen and summary.agent_deaths == 1 and summary.stored == 4
    assert not alive(observer.frozen)  # the power cycle ended the hung board
    assert powered.boots[-1][0] != observer.frozen and powered.boots[-1][1] == sha256_of(powered.chip_image)
    with reader(tmp_path / "hung" / "tlsbench.db") as st:
        statuses = [r.status for _, r in st.repetition_rows()]
        agents = st.agent_rows()
    assert statuses.count(OK) == 3 and len(agents) == 2 and agents[0].exit_reason.startswith("died: target hung")
    assert acquired_by(client, POWERED) in ("", "None")


def test_a_place_without_a_flashing_driver_refuses_labgrid_flashing_in_one_line(lab, images, tmp_path):  # noqa: F811
    client = lab[0]
    plan = device_plan("undriven", [PSK], f'place = "{PLACE}"\nreset = "true"\nflash = "labgrid"\n'
                                          f'firmware = "{images.image("counting").path}"')
    with pytest.raises(UserError, match=r"the flash command `.*bootstrap .*` failed .*no compatible resource"):
        run_experiment(plan, tmp_path, timeouts=Timeouts(greeting=5))
    assert not (tmp_path / "undriven").exists()
    assert acquired_by(client) in ("", "None")
