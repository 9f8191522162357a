# SPDX-License-Identifier: Apache-2.0
"""Foreseen failures are user errors (issue 27, family 5): through the real command line (a
subprocess each, as a user types it), a careless user's inputs get ONE line that says what
was found and what to do, exit status 1 (click's own usage errors: 2), never "unexpected",
never a traceback.

The device path checks its inputs before it starts anything: an image that is no ELF for
the target is refused before QEMU starts (a stand-in `qemu-system-arm` first on PATH records
any start), a serial path that is no terminal before the port is touched; a hanging reset
command is stopped within the greeting wait (and whatever it started with it), a missing
one named. `~` in a plan's paths is a home folder; Ctrl-C says what fits the command.
The module's teardown prints the cases tried (`pytest -s tests/test_foreseen.py`)."""
from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tlsbench.builder import firmware
from tlsbench.cli import COMMANDS, INTERRUPTED, main

TRACEBACK = "Traceback (most recent call last)"
COUNTS = {"cases": 0, "one clear line": 0}
FIRMWARE_ADVICE = "build one with `tlsbench build firmware`"
PORT_ADVICE = "a board's port is a terminal device such as /dev/ttyACM0"
PSK = "TLS-PSK-WITH-AES-128-GCM-SHA256"


@dataclass
class Outcome:
    rc: int
    out: str
    err: str
    seconds: float


def cli(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 60, stdin: int | None = None,
        cwd: Path | None = None) -> Outcome:
    """One command line, as a user types it."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tlsbench.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=timeout,
                          stdin=stdin if stdin is not None else subprocess.DEVNULL, cwd=cwd)
    return Outcome(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def invoke(*args: str | Path) -> Outcome:
    """One command line through the same entry point, in this process (click's runner): for
    the cases that need no environment of their own, without an interpreter's start-up each."""
    started = time.monotonic()
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return Outcome(result.exit_code, result.stdout, result.stderr, time.monotonic() - started)


def refused(result: Outcome, *advice: str, rc: int = 1) -> str:
    """One `error:` line carrying every piece of advice, the exit status, nothing unexpected."""
    COUNTS["cases"] += 1
    text = result.out + result.err
    assert TRACEBACK not in text and "unexpected" not in text, text
    assert result.rc == rc, text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    for piece in advice:
        assert piece in lines[0], f"{piece!r} not in: {lines[0]}"
    COUNTS["one clear line"] += 1
    return lines[0]


@pytest.fixture(scope="module", autouse=True)
def tally():
    yield
    print(f"\nforeseen failures: {COUNTS['cases']} cases, {COUNTS['one clear line']} one clear line")


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, agent_path) -> Path:
    """A small real run: 1 configuration, 2 repetitions."""
    folder = tmp_path_factory.mktemp("exp")
    (folder / "p.toml").write_text(f'name = "p"\nrepetitions = 2\nrounds = 1\nwarmup = 0\nsuites = ["{PSK}"]\n')
    done = cli("run", folder / "p.toml", "--output", folder, "--no-report", "--agent-dir", agent_path.parent)
    assert done.rc == 0, done.err
    return folder / "p"


@pytest.fixture(scope="module")
def image() -> Path:
    """The counting image from the firmware cache (built once, like tests/test_device.py)."""
    return firmware.ensure_firmware(firmware.FirmwareRequest()).image("counting").path


@pytest.fixture
def no_qemu(tmp_path) -> tuple[dict[str, str], Path]:
    """A stand-in qemu-system-arm first on PATH that records any start: the environment to
    run with, and the file whose existence says QEMU was started."""
    bin_dir, started = tmp_path / "bin", tmp_path / "qemu-started"
    bin_dir.mkdir()
    fake = bin_dir / "qemu-system-arm"
    fake.write_text(f"#!/bin/sh\ntouch {started}\nexit 1\n")
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}, started


# ---------------------------------------------------------------------- images QEMU cannot boot
def _vectors_zeroed(elf: bytes) -> bytes:
    """The image with its initial stack pointer and reset vector zeroed: an ARM ELF of
    another board, which QEMU runs into a lockup and a register dump."""
    phoff, = struct.unpack_from("<I", elf, 28)
    entry_size, count = struct.unpack_from("<HH", elf, 42)
    for header in range(phoff, phoff + entry_size * count, entry_size):
        p_type, offset, vaddr = struct.unpack_from("<III", elf, header)
        if p_type == 1 and vaddr == 0:  # the loadable segment at address 0: the vector table
            return elf[:offset] + bytes(8) + elf[offset + 8:]
    raise AssertionError("no segment at address 0")


BAD_IMAGES = {  # name -> (bytes from the good image, what the line says)
    "garbage": (lambda elf: os.urandom(4096), "is not an ELF file"),
    "empty": (lambda elf: b"", "is empty (0 bytes)"),
    "truncated": (lambda elf: elf[:2000], "is truncated: 2,000 bytes where its segments need"),
    "relocatable": (lambda elf: elf[:16] + b"\x01\x00" + elf[18:], "is a relocatable object (.o)"),
}


@pytest.mark.parametrize("case", sorted(BAD_IMAGES))
def test_an_image_that_is_no_firmware_is_refused_before_qemu_starts(tmp_path, image, no_qemu, case):
    make, says = BAD_IMAGES[case]
    bad = tmp_path / f"{case.replace(' ', '-')}.elf"
    bad.write_bytes(make(image.read_bytes()))
    env, started = no_qemu
    line = refused(cli("suites", "--device", "qemu-mps2-an386", "--firmware", bad, env=env), says,
                   "qemu-mps2-an386 boots a 32-bit little-endian ARM ELF", FIRMWARE_ADVICE)
    assert str(bad) in line and not started.exists()


def test_a_host_program_as_firmware_is_refused_before_qemu_starts(tmp_path, agent_path, no_qemu):
    env, started = no_qemu
    refused(cli("suites", "--device", "qemu-mps2-an386", "--firmware", agent_path, env=env),
            "is a 64-bit little-endian x86-64 ELF: qemu-mps2-an386 boots a 32-bit little-endian ARM ELF",
            FIRMWARE_ADVICE)
    assert not started.exists()


def test_an_arm_image_of_another_board_ends_in_one_line_not_a_register_dump(tmp_path, image):
    other = tmp_path / "other-board.elf"
    other.write_bytes(_vectors_zeroed(image.read_bytes()))
    line = refused(cli("suites", "--device", "qemu-mps2-an386", "--firmware", other),
                   "exited before its greeting", "qemu: fatal: Lockup",
                   "is other-board.elf a tlsbench firmware built for qemu-mps2-an386?", FIRMWARE_ADVICE)
    assert "R00=" not in line


@pytest.mark.parametrize("given", ["/dev/null", "fifo"])
def test_a_firmware_path_that_is_no_file_says_what_it_is(tmp_path, no_qemu, given):
    path = {"/dev/null": Path("/dev/null"), "fifo": tmp_path / "fw.elf"}[given]
    if given == "fifo":
        os.mkfifo(path)
    env, started = no_qemu
    says = {"/dev/null": "is a character device", "fifo": "is a FIFO (named pipe)"}[given]
    refused(cli("suites", "--device", "qemu-mps2-an386", "--firmware", path, env=env), f"device firmware {path} {says}")
    assert not started.exists()


def test_the_memory_image_named_as_firmware_says_which_to_name(image, no_qemu):
    env, started = no_qemu
    memory = image.with_name(f"{image.stem}-memory{image.suffix}")
    refused(cli("suites", "--device", "qemu-mps2-an386", "--firmware", memory, env=env),
            f"device firmware {memory} is the memory image", "name the counting image in [device] firmware")
    assert not started.exists()


# ---------------------------------------------------------------------- serial paths that are no port
@pytest.mark.parametrize("given", ["regular file", "/dev/null", "fifo", "folder", "missing"])
def test_a_serial_path_that_is_no_terminal_is_one_line(tmp_path, image, given):
    paths = {"regular file": tmp_path / "port.txt", "/dev/null": Path("/dev/null"), "fifo": tmp_path / "port",
             "folder": tmp_path, "missing": tmp_path / "ttyACM9"}
    path = paths[given]
    if given == "regular file":
        path.write_text("not a port\n")
    if given == "fifo":
        os.mkfifo(path)
    says = {"regular file": "is a regular file", "/dev/null": "is a character device that is not a terminal",
            "fifo": "is a FIFO (named pipe)", "folder": "is a folder",
            "missing": "No such file or directory; check the board is plugged in"}[given]
    advice = "ls /dev/ttyACM* /dev/ttyUSB*"
    refused(cli("suites", "--device", path, "--firmware", image, "--timeout", "greeting=2"), str(path), says, advice)


def test_the_users_own_terminal_is_never_taken_for_a_board(image):
    """Raw mode on the terminal the user types in would break it: refused before it is opened."""
    controller, terminal = os.openpty()
    try:
        before = termios.tcgetattr(terminal)
        for port in (os.ttyname(terminal), "/dev/tty"):
            refused(cli("suites", "--device", port, "--firmware", image, stdin=terminal),
                    f"the serial port {port} is the terminal this command runs in", PORT_ADVICE)
        assert termios.tcgetattr(terminal) == before
    finally:
        os.close(controller)
        os.close(terminal)


def test_an_unknown_baud_rate_names_the_known_ones(image):
    controller, terminal = os.openpty()
    try:
        refused(cli("suites", "--device", os.ttyname(terminal), "--firmware", image, "--baud", "12345"),
                "baud 12345 is not a rate this host's serial driver knows; use one of", "115200")
    finally:
        os.close(controller)
        os.close(terminal)


# ---------------------------------------------------------------------- the reset command
def _serial_plan(tmp_path: Path, image: Path, port: str, reset: str) -> Path:
    plan = tmp_path / "board.toml"
    plan.write_text(f'name = "board"\nsuites = ["{PSK}"]\noutput = "{tmp_path / "results"}"\n[device]\n'
                    f'serial = "{port}"\nfirmware = "{image}"\nreset = "{reset}"\n')
    return plan


def test_a_hanging_reset_is_stopped_within_the_greeting_wait_with_what_it_started(tmp_path, image):
    started = tmp_path / "reset-child"
    script = tmp_path / "reset.sh"
    script.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {started}\nwait\n")
    script.chmod(0o755)
    controller, terminal = os.openpty()
    try:
        result = cli("run", _serial_plan(tmp_path, image, os.ttyname(terminal), str(script)),
                     "--timeout", "greeting=2")
    finally:
        os.close(controller)
        os.close(terminal)
    refused(result, f"the reset command `{script}` did not finish within 2 s (the greeting wait) and was stopped",
            "--timeout greeting=SECONDS")
    assert result.seconds < 20  # was 60 s whatever --timeout said
    child = int(started.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    assert not (tmp_path / "results" / "board").exists()  # refused before anything was written


@pytest.mark.parametrize("case", ["missing tool", "not executable", "fails"])
def test_a_reset_command_that_cannot_run_names_its_own_tool(tmp_path, image, case):
    not_executable = tmp_path / "reset.txt"
    not_executable.write_text("echo reset\n")
    command, says = {"missing tool": ("nosuch-reset-tool --board 1", "nosuch-reset-tool is not found: install it"),
                     "not executable": (str(not_executable), f"{not_executable} is not executable: chmod +x it"),
                     "fails": ("false", "failed (exit status 1); run it by hand")}[case]
    controller, terminal = os.openpty()
    try:
        line = refused(cli("run", _serial_plan(tmp_path, image, os.ttyname(terminal), command)), says)
    finally:
        os.close(controller)
        os.close(terminal)
    assert "qemu" not in line


# ---------------------------------------------------------------------- ~ in a plan's paths
def test_a_plans_paths_expand_the_home_folder(tmp_path, agent_path):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "p.toml").write_text(f'name = "t"\nrepetitions = 1\nrounds = 1\nwarmup = 0\nsuites = ["{PSK}"]\n'
                                 'output = "~/results"\n')
    done = cli("run", "p.toml", "--no-report", "--agent-dir", agent_path.parent, env={"HOME": str(home)}, cwd=work)
    assert done.rc == 0, done.err
    assert (home / "results" / "t" / "tlsbench.db").is_file() and not (work / "~").exists()
    (home / "fw.elf").write_bytes(b"not an image")
    (work / "d.toml").write_text('name = "d"\n[device]\ntarget = "qemu-mps2-an386"\nfirmware = "~/fw.elf"\n')
    refused(cli("run", "d.toml", env={"HOME": str(home)}, cwd=work), f"firmware {home / 'fw.elf'} is not an ELF file")
    shown = cli("plan", "show", "d.toml", env={"HOME": str(home)}, cwd=work)
    assert f'firmware = "{home / "fw.elf"}"' in shown.out


# ---------------------------------------------------------------------- Ctrl-C
def _as_a_shell_starts_it() -> None:
    """SIGINT at its default and unblocked in the child, whatever this test process holds: an
    ignored or blocked SIGINT is inherited through exec (pytest started by a script with `&`
    runs with SIGINT ignored), and the command would never see the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _interrupted(args: list[str | Path], **kwargs) -> Outcome:
    """The command, sent SIGINT (a terminal's Ctrl-C) once it waits (not while Python still imports)."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"},
                            preexec_fn=_as_a_shell_starts_it, **kwargs)
    _wait_until_blocked(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return Outcome(proc.returncode, out, err, time.monotonic() - started)


def _wait_until_blocked(pid: int, quiet: float = 0.5, limit: float = 60) -> None:
    """Until the process sleeps and its CPU time stands still for `quiet` seconds: on a busy
    machine importing alone can take longer than any fixed delay."""
    def sample() -> tuple[str, int]:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], int(fields[11]) + int(fields[12])  # state, utime + stime

    deadline = time.monotonic() + limit
    before = sample()
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = sample()
        if now[0] == "S" and now == before:
            return
        before = now


def _stopped(result: Outcome, advice: str) -> None:
    COUNTS["cases"] += 1
    assert TRACEBACK not in result.out + result.err and result.rc == 130, result.err
    assert result.err.strip() == f"stopped at once; {advice}", result.err
    COUNTS["one clear line"] += 1


def test_ctrl_c_while_a_plan_is_read(tmp_path):
    fifo = tmp_path / "plan.toml"
    os.mkfifo(fifo)  # as a plan from a process that never writes: the read waits
    _stopped(_interrupted(["plan", "show", fifo]), "nothing was stored: run the same command again")
    _stopped(_interrupted(["run", fifo]),
             "every stored repetition is intact: run the same command again and it resumes where it stopped")


def test_ctrl_c_of_derive_says_derive_again_not_resume(experiment):
    """derive waits for another writer's transaction (SQLite's busy wait): Ctrl-C there."""
    from tlsbench.store.sqlite import testing

    with testing.write_locked(experiment / "tlsbench.db"):
        result = _interrupted(["derive", experiment, "--rebuild"])
    _stopped(result, "what it stored stays valid: run derive again to finish")


def test_every_commands_ctrl_c_advice_names_only_options_it_has():
    """Each command has its own words, and an option they name is one of that command's."""
    assert set(INTERRUPTED) == set(COMMANDS)
    ctx = click.Context(main)
    for name, advice in INTERRUPTED.items():
        command = main.get_command(ctx, name)
        commands = list(command.commands.values()) if isinstance(command, click.Group) else [command]
        offered = {opt for c in commands for p in c.params for opt in p.opts}
        for option in re.findall(r"--[a-z-]+", advice):
            assert option in offered, f"{name}: {option} in {advice!r}"


# ---------------------------------------------------------------------- the other commands
def test_a_store_path_that_is_no_file(tmp_path, experiment):
    fifo_folder = tmp_path / "fifo"
    fifo_folder.mkdir()
    os.mkfifo(fifo_folder / "tlsbench.db")  # reading it would wait for ever
    for command in (["status", fifo_folder], ["derive", fifo_folder], ["report", fifo_folder],
                    ["trace", "show", fifo_folder], ["export", fifo_folder]):
        refused(invoke(*command), "tlsbench.db is a FIFO (named pipe), not an experiment store")
    for command in (["status"], ["trace", "show"]):  # the store file itself names its experiment
        done = invoke(*command, experiment / "tlsbench.db")
        assert done.rc == 0 and "no experiment" not in done.err, done.err


CAPTURES = {  # name -> (path maker, what the line says)
    "binary": (lambda d: _write(d / "c.csv", bytes(range(256)) * 8), "holds NUL bytes"),
    "utf-16": (lambda d: _write(d / "c.csv", "time_s,current_A\n0,1\n1,1\n".encode("utf-16")), "or UTF-16 text"),
    "/dev/null": (lambda d: Path("/dev/null"), "the capture /dev/null is a character device"),
    "fifo": (lambda d: (os.mkfifo(d / "c.csv"), d / "c.csv")[1], "is a FIFO (named pipe)"),
}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", sorted(CAPTURES))
def test_energy_import_of_what_is_no_csv_capture(tmp_path, experiment, case):
    make, says = CAPTURES[case]
    refused(invoke("energy", "import", make(tmp_path), "--experiment", experiment), says)


PREDICT = {  # arguments after the experiment -> what the line says, exit status
    "negative seed": (["--link", "ieee802154,loss=5", "--seed", "-1"], "-1 is not in the range x>=0", 2),
    "a parameter twice": (["--link", "ieee802154,loss=5,loss=6"], "loss given twice; give each parameter once", 1),
    "loss sweep above 100 %": (["--link", "ieee802154", "--sweep", "loss", "--range", "0:500"],
                               "a loss sweep's range is in %: at most 100", 1),
    "timer min above max": (["--link", "ieee802154", "--dtls-timeout-min", "5000", "--dtls-timeout-max", "10"],
                            "the timer starts at min and doubles up to max", 2),
}


@pytest.mark.parametrize("case", sorted(PREDICT))
def test_predict_with_odd_links_and_options(experiment, case):
    args, says, rc = PREDICT[case]
    result = invoke("predict", experiment, *args)
    if rc == 2:  # click's usage error: a usage line, then the error
        COUNTS["cases"] += 1
        assert result.rc == 2 and says in result.err and TRACEBACK not in result.err, result.err
        COUNTS["one clear line"] += 1
    else:
        refused(result, says)


def test_a_config_header_that_is_no_file(tmp_path):
    fifo = tmp_path / "config.h"
    os.mkfifo(fifo)  # the compiler would wait on it for ever
    for given, says in ((Path("/dev/null"), "is a character device"), (fifo, "is a FIFO (named pipe)")):
        for command in (["build", "firmware", "--name", "foreseen-test"],
                        ["build", "mbedtls", "--install-dir", tmp_path], ["build", "mbedtls@3.6", "--install-dir", tmp_path]):
            refused(invoke(*command, "--config", given), f"config header {given} {says}: name a C header file")
    assert not (firmware.BUILD_ROOT / "foreseen-test").exists()
