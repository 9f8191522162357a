# SPDX-License-Identifier: Apache-2.0
"""DeviceExchange: the agent's firmware on a device, both peers on it, driven over a serial
line with the same frames as a host agent (docs/porting.md, docs/protocol.md).

A device is reached through a Connection, one boot of its firmware:

    QemuConnection    qemu-system-arm -M <board> -icount shift=0 -serial stdio -kernel IMAGE:
                      QEMU's stdin/stdout are the board's UART (the chardev the ctest driver
                      agent/tests/qemu_device.py uses: binary-safe, the fastest measured);
                      its exit status is the firmware's (0 QUIT, 2 fault, 3 the stream broke)
    SerialConnection  a board's serial port in raw mode at its baud rate (termios); a boot is
                      a reset (the plan's reset command, else a DTR pulse) and a new HELLO

The exchange keeps one connection per firmware image (the counting image; the memory image
when the plan asks for the footprint) and pauses the one not in use: an idle firmware polls
its UART, and under QEMU that costs a host core. A target that stops answering (no frame
within the hang wait), crashes or breaks the stream costs the repetition in flight
(AGENT_DIED with the reason), is restarted at once, and the batch goes on.

Counts are in the unit the firmware's HELLO names (`clock.unit`: instructions under QEMU),
never a time; the exchange stores that unit with every boot (`agent` row, migration 007)."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import queue
import select
import shlex
import signal
import stat
import struct
import subprocess
import termios
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol, Sequence

from tlsbench.core import inputs
from tlsbench.core import spec as specmod
from tlsbench.core.image import ElfKind, elf_problem
from tlsbench.plan.configs import Configuration
from tlsbench.run import protocol
from tlsbench.run.agents import STDERR_TAIL_BYTES, AgentError, AgentProcess, AgentRejected, die_with_host
from tlsbench.run.exchange import AgentDied, AgentRef, Inbox, Outcome, Repetition, Sink, StopFlag, run_request
from tlsbench.schema import DeviceFacts
from tlsbench.run.schedule import Batch
from tlsbench.run.timeouts import Timeouts

DEVICE = "(device)"  # the route of device configurations (run/session.py)
COUNTING, MEMORY = "counting", "memory"
REBUILD_QEMU = "rebuild the firmware: tlsbench build firmware"
BUILD_QEMU = ("build one with `tlsbench build firmware` (into build/firmware/<name>/), or leave [device] firmware "
              "(--firmware) out to boot the one built for the target")
REBUILD_BOARD = "rebuild the firmware (tlsbench build firmware --board BOARD) and flash it (docs/porting.md)"
QEMU = "qemu-system-arm"
# What QEMU's exit status says: the firmware's own, through semihosting (agent/src/port/cortex-m).
QEMU_EXITS = {0: "QUIT", 1: "QEMU error", 2: "firmware fault", 3: "protocol error: the stream broke"}


class DeviceError(AgentError):
    """The device cannot be reached, or its firmware is not one this host can use."""


@dataclass(frozen=True)
class QemuTarget:
    """An emulated board the host boots itself."""

    name: str  # HELLO device.target, plan [device] target
    machine: str  # qemu-system-arm -M
    elf: ElfKind  # the images it boots: checked before QEMU starts (a raw file would run as code)

    def command(self, image: Path) -> list[str]:
        """`-icount shift=0`: virtual time advances one ns per instruction, so the firmware's
        counter counts instructions, the same every run (`auto` adapts to the host: not
        repeatable). Semihosting carries the firmware's exit status and fault text to QEMU's
        exit status and stderr. No -nodefaults: its missing-NIC warning would pollute the
        stderr a death reason quotes."""
        return [QEMU, "-M", self.machine, "-display", "none", "-monitor", "none",
                "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                "-serial", "stdio", "-kernel", str(image)]


EM_ARM = 40
TARGETS = {t.name: t for t in (QemuTarget("qemu-mps2-an386", "mps2-an386", ElfKind(32, True, EM_ARM)),)}


@dataclass(frozen=True)
class FirmwareImage:
    """One image file of a firmware build (build/firmware.py writes them)."""

    variant: str  # COUNTING or MEMORY
    path: Path
    sha256: str


@dataclass(frozen=True)
class DeviceSetup:
    """Everything the run needs to reach a plan's device (the cli builds it from [device]
    and the firmware build)."""

    images: Mapping[str, FirmwareImage]  # by variant; the counting image always
    target: QemuTarget | None = None  # an emulated board, or
    serial: str | None = None  # a board's serial device
    baud: int = 115200
    reset: tuple[str, ...] = ()  # the command that resets the board (serial)
    dtls_timeout_ms: int = 0  # a DTLS configuration's RUN timers (0: the library's)
    build: Mapping[str, Any] = field(default_factory=dict)  # the build's record (firmware.json), when known

    @property
    def name(self) -> str:
        return self.target.name if self.target else f"serial {self.serial}"

    @property
    def advice(self) -> str:
        return REBUILD_QEMU if self.target else REBUILD_BOARD

    def image(self, variant: str) -> FirmwareImage | None:
        """The image of a variant; a board has the one flashed on it (its HELLO says which)."""
        if self.serial is not None:
            return next(iter(self.images.values()), None)
        return self.images.get(variant)


# ---------------------------------------------------------------- connections

class Connection(Protocol):
    """One boot of a device's firmware: its greeting and its frames."""

    hello: dict[str, Any]
    suites: list[dict[str, Any]]
    hello_raw: str
    suites_raw: str
    executable: str  # the image's file name (the agent row's executable)
    pid: int | None

    def read_frame(self) -> protocol.Frame | None: ...
    def send(self, data: bytes) -> None: ...
    def quit(self) -> str: ...
    def kill(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def hung(self) -> str: ...
    def death_reason(self) -> str: ...
    def close(self) -> None: ...


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class QemuConnection:
    """The firmware booted in QEMU; an AgentProcess whose program is QEMU."""

    def __init__(self, target: QemuTarget, image: FirmwareImage, greeting_s: float):
        _check_image(target, image.path)
        try:
            self.process = AgentProcess.start(image.path, greeting_s=greeting_s, command=target.command(image.path),
                                              advice=REBUILD_QEMU)
        except FileNotFoundError:  # QEMU itself: the image was read above
            raise DeviceError(f"{QEMU} is not installed: scripts/install-deps.sh installs it") from None
        except AgentError as exc:
            reason, _, dump = str(exc).partition("\n")
            if not dump:
                raise
            # QEMU stopped on a fatal error (an ARM image of another board locks up at once): its
            # first line says why, a register dump follows.
            raise DeviceError(f"{reason}; is {image.path.name} a tlsbench firmware built for {target.name}? "
                              f"{BUILD_QEMU}") from None
        self.hello, self.suites = self.process.hello, self.process.suites
        self.hello_raw, self.suites_raw = self.process.hello_raw, self.process.suites_raw
        self.executable, self.pid = image.path.name, self.process.pid
        self.paused = False

    def read_frame(self) -> protocol.Frame | None:
        return self.process.read_frame()

    def send(self, data: bytes) -> None:
        self.process.send(data)

    def quit(self) -> str:
        self.resume()
        self.process.quit(timeout=10.0)
        return self.ending()

    def kill(self) -> None:
        self.process.kill()

    def pause(self) -> None:
        """SIGSTOP: an idle firmware polls its UART, which costs QEMU a host core. The
        counter is virtual (icount) and held during UART I/O: a pause changes no count."""
        if not self.paused and self.process.proc.poll() is None:
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused and self.process.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
        self.paused = False

    def hung(self) -> str:
        """What a silent QEMU was doing: stopped by someone (SIGSTOP), or running."""
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return ""
        return "QEMU was stopped (SIGSTOP) and emulated nothing" if state in "Tt" else "QEMU was running"

    def ending(self) -> str:
        """QEMU's exit status as the firmware's, or the signal that killed it."""
        code = self.process.proc.poll()
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by {_signal_name(-code)}"
        return f"QEMU exit status {code}: {QEMU_EXITS.get(code, 'QEMU error')}"

    def death_reason(self) -> str:
        """How QEMU ended and the tail of its stderr, where a firmware fault is written."""
        try:
            self.process.proc.wait(2)
        except subprocess.TimeoutExpired:
            self.process.kill()
        stderr = self.process.stderr_file
        stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, stderr.tell() - STDERR_TAIL_BYTES))
        tail = " ".join(stderr.read().decode(errors="replace").split())
        return self.ending() + (f"; stderr: {tail}" if tail else "")

    def close(self) -> None:
        self.process.close()


def _check_image(target: QemuTarget, path: Path) -> None:
    """Refuses what the target cannot boot before QEMU starts: QEMU would run any file as code
    and end in a register dump (garbage, an empty or cut file, another machine's ELF)."""
    try:
        problem = elf_problem(path.read_bytes(), target.elf)
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror})"
    if problem:
        raise DeviceError(f"firmware {path} {problem}: {target.name} boots a {target.elf}; {BUILD_QEMU}")


class _SerialStream:
    """The serial port as a blocking byte stream that can be closed under a reader: every
    read waits in short select() slices, so close() (a hang, a restart) ends a reading
    thread within one slice, and a deadline bounds the greeting."""

    SLICE_S = 0.2

    def __init__(self, fd: int):
        self.fd = fd
        self.closed = False
        self.deadline: float | None = None
        self.pending = b""  # read ahead by sync(), handed out first

    def sync(self, start: bytes, keep: int = 1 << 16) -> None:
        """Skip whatever precedes `start` (a boot message, the tail of an earlier session, a
        frame cut by a reset): the next read begins with it."""
        seen = self.pending
        while start not in seen:
            more = self.read(4096)
            if not more:
                return
            seen = (seen + more)[-keep:]
        self.pending = seen[seen.index(start):]

    def read(self, n: int) -> bytes:
        if self.pending:
            out, self.pending = self.pending[:n], self.pending[n:]
            return out
        while not self.closed:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise TimeoutError("no byte from the board")
            try:
                ready, _, _ = select.select([self.fd], [], [], self.SLICE_S)
                if ready:
                    return os.read(self.fd, n)
            except (OSError, ValueError):  # closed under us
                return b""
        return b""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            _, ready, _ = select.select([], [self.fd], [], 5.0)
            if not ready:
                raise OSError("the serial port takes no bytes")
            view = view[os.write(self.fd, view):]


def _baud(rate: int) -> int:
    constant = getattr(termios, f"B{rate}", None)
    if constant is None:
        known = sorted(int(n[1:]) for n in dir(termios) if n.startswith("B") and n[1:].isdigit())
        raise DeviceError(f"baud {rate} is not a rate this host's serial driver knows; use one of "
                          f"{', '.join(str(k) for k in known if k >= 9600)}")
    return constant


class SerialConnection:
    """A board on a serial port: raw 8N1 at the plan's baud rate, no flow control. A boot is a
    reset (the plan's command, else a DTR pulse, which many USB-UART bridges wire to the
    board's reset) followed by a fresh HELLO."""

    def __init__(self, setup: DeviceSetup, image: FirmwareImage, greeting_s: float):
        assert setup.serial is not None
        self.setup, self.executable, self.pid = setup, image.path.name, None
        self.fd = _open_port(setup.serial)
        self.stream = _SerialStream(self.fd)
        self.reader = protocol.FrameReader(self.stream)  # type: ignore[arg-type]
        self.ended = ""
        try:
            self._configure(setup.baud)
            self._greet(greeting_s)
        except BaseException:
            self.close()
            raise

    def _configure(self, baud: int) -> None:
        speed = _baud(baud)
        tty.setraw(self.fd)
        attrs = termios.tcgetattr(self.fd)
        attrs[2] = (attrs[2] & ~getattr(termios, "CRTSCTS", 0)) | termios.CLOCAL | termios.CREAD
        attrs[4] = attrs[5] = speed
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    def _reset(self, wait_s: float) -> None:
        """Restart the firmware so that it greets again (what came before is skipped by sync)."""
        if self.setup.reset:
            _run_reset(self.setup.reset, wait_s)
        else:
            dtr = struct.pack("I", termios.TIOCM_DTR)
            try:
                fcntl.ioctl(self.fd, termios.TIOCMBIC, dtr)
                time.sleep(0.1)
                fcntl.ioctl(self.fd, termios.TIOCMBIS, dtr)
            except OSError:
                pass  # not a modem line (a pty): the firmware is expected to greet on its own

    RESETS = 3  # a USB serial bridge (or QEMU's pty) drops what is sent while no one listens

    def _greet(self, greeting_s: float) -> None:
        """Reset, then wait for HELLO and SUITES; again (up to RESETS times) when a greeting
        does not come whole, sharing the greeting wait."""
        problem: Exception | None = None
        for _ in range(self.RESETS):
            self._reset(greeting_s)
            try:
                return self._hello(greeting_s / self.RESETS)
            except (TimeoutError, protocol.FrameError) as exc:
                problem = exc
        if isinstance(problem, protocol.FrameError):
            raise DeviceError(f"the board on {self.setup.serial} sent something that is not a greeting ({problem}): "
                              f"check the baud rate ({self.setup.baud}) and that the flashed image is the "
                              "tlsbench firmware")
        how = f"`{shlex.join(self.setup.reset)}`" if self.setup.reset else "a DTR pulse"
        raise DeviceError(f"the board on {self.setup.serial} sent no greeting within {greeting_s:g} s, reset "
                          f"{self.RESETS} times with {how}: reset it by hand, check the baud rate "
                          f"({self.setup.baud}) and the firmware, or set [device] reset to the command that resets it")

    def _hello(self, wait_s: float) -> None:
        sp = specmod.load()
        frames = sp.frames
        self.stream.deadline, self.stream.pending = time.monotonic() + wait_s, b""
        self.reader = protocol.FrameReader(self.stream)  # type: ignore[arg-type]
        try:
            self.stream.sync(struct.pack("<HBB", sp.magic, sp.protocol_version, frames.HELLO))
            hello, suites = self.reader.read(), self.reader.read()
        finally:
            self.stream.deadline = None
        if not hello or hello.type != frames.HELLO or not suites or suites.type != frames.SUITES:
            raise DeviceError(f"the board on {self.setup.serial} did not greet with HELLO and SUITES")
        self.hello, self.hello_raw = hello.json(), hello.payload.decode()
        self.suites, self.suites_raw = list(suites.json().get("suites", [])), suites.payload.decode()
        sp.check_agent(self.hello, REBUILD_BOARD)

    def read_frame(self) -> protocol.Frame | None:
        return self.reader.read()

    def send(self, data: bytes) -> None:
        self.stream.write(data)

    def quit(self) -> str:
        """QUIT, once the line has carried it (a closed port drops what it still holds)."""
        try:
            self.send(protocol.encode_frame(specmod.load().frames.QUIT))
            termios.tcdrain(self.fd)
        except (OSError, termios.error):
            pass
        self.close()
        return "QUIT sent"

    def kill(self) -> None:
        self.ended = "the port was closed"
        self.close()

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def hung(self) -> str:
        return ""

    def death_reason(self) -> str:
        return self.ended or "the serial line ended"

    def close(self) -> None:
        if not self.stream.closed:
            self.stream.closed = True
            os.close(self.fd)


PORT_LOOKS_LIKE = "a board's port is a terminal device such as /dev/ttyACM0 or /dev/ttyUSB0"
LIST_PORTS = "ls /dev/ttyACM* /dev/ttyUSB*"


def _open_port(path: str) -> int:
    """The board's port, opened without becoming our controlling terminal. What is not a
    terminal (a regular file, a FIFO, /dev/null) has no line to configure, and the user's own
    terminal would be left in raw mode: refused, and only another character device is opened."""
    try:
        found = os.stat(path)
        problem = _not_a_port(found)
        if not problem:
            fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            if os.isatty(fd):
                return fd
            os.close(fd)
            problem = "a character device that is not a terminal"
    except OSError as exc:
        raise DeviceError(f"cannot open the serial port {path}: {exc.strerror}; check the board is plugged in and "
                          f"the device path ({LIST_PORTS}), and that this user may open it (the dialout group)"
                          ) from None
    raise DeviceError(f"the serial port {path} is {problem}: {PORT_LOOKS_LIKE} ({LIST_PORTS})")


CONTROLLING_TERMINAL = os.makedev(5, 0)  # /dev/tty: whichever terminal opens it


def _not_a_port(found: os.stat_result) -> str:
    """What a path is when that rules it out as a board's port ("" for another character device)."""
    if not stat.S_ISCHR(found.st_mode):
        return inputs.kind(found.st_mode)
    terminals = {os.fstat(fd).st_rdev for fd in (0, 1, 2) if os.isatty(fd)} | {CONTROLLING_TERMINAL}
    return "the terminal this command runs in" if found.st_rdev in terminals else ""


RESET_TOOL_PROBLEMS = {errno.ENOENT: "is not found: install it, or give its full path",
                       errno.EACCES: "is not executable: chmod +x it"}


def _run_reset(command: Sequence[str], wait_s: float) -> None:
    """The plan's reset command, given the greeting wait: in a session of its own, so that a
    hung one is killed with whatever it started (a script's children would otherwise keep
    its output open, and the wait for it going)."""
    shown = shlex.join(command)
    try:
        proc = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, preexec_fn=die_with_host)
    except OSError as exc:
        why = RESET_TOOL_PROBLEMS.get(exc.errno, exc.strerror)
        raise DeviceError(f"the reset command `{shown}` cannot run: {command[0]} {why}; or set [device] reset to "
                          "the command that resets the board") from None
    try:
        output, _ = proc.communicate(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        raise DeviceError(f"the reset command `{shown}` did not finish within {wait_s:g} s (the greeting wait) and "
                          "was stopped: run it by hand to see where it waits, or allow it longer with "
                          "--timeout greeting=SECONDS") from None
    if proc.returncode:
        said = " ".join(output.split())[-300:]
        raise DeviceError(f"the reset command `{shown}` failed (exit status {proc.returncode})"
                          f"{f': {said}' if said else ''}; run it by hand to see why")


def connect(setup: DeviceSetup, variant: str, timeouts: Timeouts) -> Connection:
    """Boots the firmware image `variant` (a board: resets it) and checks what greets: a
    firmware of this host's specs, of the image variant asked for, on the plan's device."""
    image = setup.image(variant)
    if image is None:
        raise DeviceError(f"no {variant} image for {setup.name}: tlsbench build firmware builds both")
    try:
        link: Connection = (QemuConnection(setup.target, image, timeouts.greeting) if setup.target
                            else SerialConnection(setup, image, timeouts.greeting))
    except specmod.SpecMismatch as exc:
        raise DeviceError(f"firmware {image.path.name} on {setup.name}: {exc}") from None
    try:
        _check_device(link, setup, variant)
    except BaseException:
        link.kill()
        link.close()
        raise
    return link


def _check_device(link: Connection, setup: DeviceSetup, variant: str) -> None:
    device = link.hello.get("device")
    if not isinstance(device, dict):
        raise DeviceError(f"{link.executable} on {setup.name} greeted without a device object: it is a host "
                          "agent's build, not a firmware; build one with tlsbench build firmware")
    found = (device.get("image") or {}).get("variant")
    if found != variant:
        raise DeviceError(f"{link.executable} on {setup.name} is the {found} image where the {variant} image was "
                          "expected: name the right file in [device] firmware (and flash it)")
    if setup.target and device.get("target") != setup.target.name:
        raise DeviceError(f"{link.executable} was built for {device.get('target')}, not {setup.target.name}: "
                          "build it for this board (tlsbench build firmware --board ...)")


def counter_unit(hello: Mapping[str, Any]) -> str:
    """The unit of every count the agent sends (HELLO clock.unit; a host agent's is ns)."""
    return str((hello.get("clock") or {}).get("unit") or "ns")


def facts(link: Connection, image: FirmwareImage, setup: DeviceSetup) -> DeviceFacts:
    """What the agent row records of a boot: device, unit, image and the build behind it."""
    device, hello = link.hello.get("device") or {}, link.hello
    config = (hello.get("build") or {}).get("config") or {}
    details = {**(device.get("image") or {}), "file": image.path.name, "cpu": device.get("cpu"),
               "board": device.get("board"), "counter": device.get("counter"), "options": device.get("options"),
               "entropy": device.get("entropy"),
               "library": f"{hello.get('library_name', hello.get('library', '?'))} {hello.get('library_version', '')}",
               "config": {"name": config.get("name"), "sha256": config.get("sha256")},
               "build": {k: setup.build[k] for k in ("name", "library", "toolchain", "config") if k in setup.build}}
    return DeviceFacts(str(device.get("target", setup.name)), counter_unit(hello), image.sha256,
                       json.dumps(details, sort_keys=True))


# ---------------------------------------------------------------- the hang wait
# The longest silence a batch may show: REPs stream one per repetition, the first after the
# warm-ups. A repetition's budget in the counter's unit: twice the most measured for its key
# exchange group (DHE-RSA 0.52 / 1.52 / 3.39 G instructions at ffdhe2048 / 3072 / 4096; modular
# exponentiation grows as the cube of the size), the default covering every other configuration
# of the device build (ECDHE P-521 0.17 G, RSA-3072 0.13 G, DHE at its default ffdhe2048).
REPETITION_BUDGET = {"ffdhe2048": 1.2e9, "ffdhe3072": 3.2e9, "ffdhe4096": 7e9, "ffdhe6144": 24e9,
                     "ffdhe8192": 56e9}
DEFAULT_BUDGET = 1.2e9
BYTE_BUDGET = 400  # per application byte and direction (a 1 KiB record: ~0.11 M instructions, both peers)
# The slowest pace seen: QEMU emulated 405 M instructions per second at load 8 on 2 cores (docs/benchmarks.md);
# a quarter of that. A board counts cycles at its clock (HELLO device.counter.board_clock_hz): half of it
# covers a CPI of 2.
QEMU_SLOWEST_RATE = 1e8
MARGIN_S = 10.0


def hang_seconds(config: Configuration, warmup: int, hello: Mapping[str, Any], timeouts: Timeouts,
                 emulated: bool) -> float:
    """How long a batch may send nothing before the target is called hung: `--timeout
    silence=S` when the user set it, else the longer of the default silence and what the
    slowest repetition of this configuration may take at the slowest pace (docs/porting.md)."""
    if "silence" in timeouts.model_fields_set:
        return timeouts.silence
    counter = ((hello.get("device") or {}).get("counter") or {})
    rate = QEMU_SLOWEST_RATE if emulated else float(counter.get("board_clock_hz") or 16e6) / 2
    budget = REPETITION_BUDGET.get(config.row.grp, DEFAULT_BUDGET) + 2 * BYTE_BUDGET * config.row.total_bytes
    return max(timeouts.silence, (warmup + 1) * budget / rate + MARGIN_S)


# ---------------------------------------------------------------- the exchange

@dataclass
class Booted:
    """A live connection and its `agent` row."""

    link: Connection
    agent_id: int
    inbox: Inbox[None]


class DeviceExchange:
    """The batches of a plan's device configurations, on one boot per image at a time."""

    def __init__(self, setup: DeviceSetup, library: str, sink: Sink, timeouts: Timeouts, stop: StopFlag,
                 link: Connection | None = None):
        """`link`: the counting image's boot that greeted for the plan's resolution, if any."""
        self.setup, self.library, self.sink, self.timeouts, self.stop = setup, library, sink, timeouts, stop
        self.spec = specmod.load()
        self.booted: dict[str, Booted] = {}
        if link is not None:
            self._adopt(first_variant(setup), link)

    def _adopt(self, variant: str, link: Connection) -> Booted:
        agent_id = self.sink.add_agent(self.library, link.executable, link.pid, link.hello_raw, link.suites_raw,
                                       facts(link, self.setup.image(variant), self.setup))  # type: ignore[arg-type]
        inbox: Inbox[None] = Inbox()
        inbox.listen(link, None)
        self.booted[variant] = Booted(link, agent_id, inbox)
        return self.booted[variant]

    def _running(self, variant: str) -> Booted:
        """The image's boot (booted now if needed), the other image's paused."""
        for other, booted in self.booted.items():
            if other != variant:
                booted.link.pause()
        booted = self.booted.get(variant) or self._adopt(variant, connect(self.setup, variant, self.timeouts))
        booted.link.resume()
        return booted

    def send_ahead(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> bool:
        """A device runs one RUN at a time over its line: nothing is queued ahead."""
        return False

    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        variant = config.row.image or COUNTING
        booted = self._running(variant)
        expected, end = batch.first_index, batch.first_index + batch.count
        timers = self.setup.dtls_timeout_ms if config.protocol else 0
        request = run_request(config, config_id, batch, warmup, dtls_timeout_min_ms=timers,
                              dtls_timeout_max_ms=timers)
        try:
            booted.link.send(request.encode())
        except OSError as exc:
            raise self._died(variant, expected, f"cannot send RUN: {exc}; {booted.link.death_reason()}") from None
        hang = hang_seconds(config, warmup, booted.link.hello, self.timeouts, self.setup.target is not None)
        frames = self.spec.frames
        while True:
            frame = self._next_frame(variant, booted, expected, hang)
            if frame.type == frames.REP:
                yield Repetition(self._rep(variant, frame, config_id, expected),
                                 AgentRef(booted.agent_id, booted.link.pid))
                expected += 1
                if self.stop.requested:
                    return
            elif frame.type == frames.DONE:
                if expected != end:
                    raise self._died(variant, expected, f"protocol violation: DONE after {expected - batch.first_index}"
                                                        f" of {batch.count} repetitions")
                return
            elif frame.type == frames.ERROR:
                raise AgentRejected(frame.json())
            else:
                raise self._died(variant, expected, f"protocol violation: unexpected {frame.type_name} frame "
                                                    f"at offset {frame.offset} during a RUN")

    def _next_frame(self, variant: str, booted: Booted, expected: int, hang: float) -> protocol.Frame:
        """The target's next frame; silence, a corrupt frame or the stream's end is a death."""
        try:
            _, heard = booted.inbox.next(hang)
        except queue.Empty:
            doing = booted.link.hung()
            booted.link.kill()
            raise self._died(variant, expected, f"target hung: no frame for {hang:.0f} s"
                                                f"{f' ({doing})' if doing else ''}; killed; "
                                                f"{booted.link.death_reason()}") from None
        if isinstance(heard, protocol.FrameError):
            raise self._died(variant, expected, f"corrupt frame: {heard}; {booted.link.death_reason()}")
        if heard is None:
            raise self._died(variant, expected, f"target stopped: {booted.link.death_reason()}")
        return heard

    def _rep(self, variant: str, frame: protocol.Frame, config_id: int, expected: int) -> protocol.Rep:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise self._died(variant, expected, f"corrupt REP: {exc}") from None
        h = rep.header
        if (h.config_id, h.index) != (config_id, expected):
            raise self._died(variant, expected, f"protocol violation: REP for config {h.config_id} repetition "
                                                f"{h.index} where config {config_id} repetition {expected} was "
                                                "expected")
        return rep

    def _died(self, variant: str, idx: int, reason: str) -> AgentDied:
        """Stops the boot, ends its row and boots the target again at once (the batch goes on
        with the next repetition on a fresh target)."""
        dead = self.booted.pop(variant)
        dead.link.kill()
        self.sink.end_agent(dead.agent_id, f"died: {reason}")
        dead.link.close()
        self._running(variant)
        return AgentDied(idx, reason, dead.agent_id)

    def close(self, reason: str = "") -> None:
        """QUIT to every boot (a paused one is resumed first); their rows end with how."""
        for booted in self.booted.values():
            how = booted.link.quit()
            self.sink.end_agent(booted.agent_id, reason or f"quit ({how})")
            booted.link.close()
        self.booted.clear()


def first_variant(setup: DeviceSetup) -> str:
    """The image a device greets with first: the counting one, or what a board has flashed."""
    if setup.serial is not None:
        image = setup.image(COUNTING)
        return image.variant if image else COUNTING
    return COUNTING


def query_device(setup: DeviceSetup, timeouts: Timeouts = Timeouts()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """HELLO and SUITES of a device's first image (for `tlsbench suites --device`)."""
    link = connect(setup, first_variant(setup), timeouts)
    try:
        return link.hello, link.suites
    finally:
        link.quit()
        link.close()
