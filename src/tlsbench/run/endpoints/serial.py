# SPDX-License-Identifier: Apache-2.0
"""A board on a serial port (an Endpoint): the port in raw mode at the plan's baud rate
(termios; no library needed). A boot is a reset (the plan's reset command, else a DTR pulse)
after which the HELLO frame is found in whatever the line carried; a greeting that does not
come whole is a reason to reset again."""
from __future__ import annotations

import errno
import fcntl
import os
import select
import shlex
import signal
import socket
import stat
import struct
import subprocess
import termios
import threading
import time
import tty
from typing import Callable, Sequence

from tlsbench.core import inputs
from tlsbench.core import spec as specmod
from tlsbench.core.processes import dying_with_us
from tlsbench.run import protocol
from tlsbench.run.endpoints.firmware import DeviceError, FirmwareEndpoint, FirmwareImage

REBUILD_BOARD = "rebuild the firmware (tlsbench build firmware --target TARGET) and flash it (docs/porting.md)"


class _SerialStream:
    """The serial port as a blocking byte stream that can be closed under a reader: every
    read waits in short select() slices, so close() (a hang, a restart) ends a reading
    thread within one slice, and a deadline bounds the greeting. A network serial port
    (`reopen`) that drops its connection while the board greets (its power was cycled:
    ser2net's device went away with it) is connected again until the deadline. The descriptor
    is read and closed under one lock: a number closed here is reused at once by the next socket
    this process opens (a store's connection), and a read from it would take that socket's bytes."""

    SLICE_S = 0.2

    def __init__(self, fd: int, reopen: Callable[[], int] | None = None):
        self.fd, self.reopen = fd, reopen
        self.closed = False
        self.lock = threading.Lock()
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
                if not ready:
                    continue
                data = self._read(n)
            except (OSError, ValueError):  # closed under us, or the far end reset the connection
                data = b""
            if data or self.closed or self.reopen is None or self.deadline is None:
                return data
            self._reconnect()
        return b""

    def _read(self, n: int) -> bytes:
        """os.read, under the lock close() takes (b"": closed)."""
        with self.lock:
            return b"" if self.closed else os.read(self.fd, n)

    def drop_stale(self) -> None:
        """After a reset: a network port whose connection the reset dropped holds only what the
        board said before it lost power (a greeting included): dropped with the connection,
        which is made again. What a live connection holds is kept (the new greeting's start)."""
        if self.reopen is None:
            return
        while True:
            try:
                data = self._read(1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.pending = b""
                return self._reconnect()
            self.pending += data

    def _reconnect(self) -> None:
        """A new connection in place of the dropped one (kept open until then: close() closes one)."""
        assert self.reopen is not None and self.deadline is not None
        while True:
            try:
                fd = self.reopen()
                break
            except DeviceError:
                if time.monotonic() > self.deadline:
                    raise TimeoutError("the network serial port refuses connections") from None
                time.sleep(self.SLICE_S)
        with self.lock:
            if self.closed:
                os.close(fd)
                return
            os.close(self.fd)
            self.fd = fd

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                os.close(self.fd)

    def linger(self, seconds: float) -> None:
        """A network port's far end (ser2net) may drop what it has not yet written to the line
        when our connection closes: wait until it closes the connection itself (the board
        ended) or `seconds` have passed, whatever the board still says discarded."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready or not self._read(1 << 16):
                return

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            _, ready, _ = select.select([], [self.fd], [], 5.0)
            if not ready:
                raise OSError("the serial port takes no bytes")
            with self.lock:
                if self.closed:
                    raise OSError("the serial port was closed")
                view = view[os.write(self.fd, view):]


def _baud(rate: int) -> int:
    constant = getattr(termios, f"B{rate}", None)
    if constant is None:
        known = sorted(int(n[1:]) for n in dir(termios) if n.startswith("B") and n[1:].isdigit())
        raise DeviceError(f"baud {rate} is not a rate this host's serial driver knows; use one of "
                          f"{', '.join(str(k) for k in known if k >= 9600)}")
    return constant


class SerialEndpoint(FirmwareEndpoint):
    """A board on a serial port: raw 8N1 at the plan's baud rate, no flow control. A boot is a
    reset (the plan's command, else a DTR pulse, which many USB-UART bridges wire to the
    board's reset) followed by a fresh HELLO."""

    pid = None  # nothing of it runs on the host

    def __init__(self, port: str, baud: int, reset: Sequence[str], image: FirmwareImage, greeting_s: float):
        self.port, self.baud, self.reset = port, baud, tuple(reset)
        self.executable = image.path.name
        reopen = (lambda: _open_network_port(port)) if port.startswith(NETWORK_PORT) else None
        self.stream = _SerialStream(_open_port(port), reopen)
        self.reader = protocol.FrameReader(self.stream)  # type: ignore[arg-type]
        self.closed_why = ""
        try:
            self._configure(baud)
            self._greet(greeting_s)
        except BaseException:
            self.close()
            raise

    @property
    def fd(self) -> int:
        return self.stream.fd

    def _configure(self, baud: int) -> None:
        if not os.isatty(self.fd):
            return  # a network serial port: ser2net sets the line's rate
        speed = _baud(baud)
        tty.setraw(self.fd)
        attrs = termios.tcgetattr(self.fd)
        attrs[2] = (attrs[2] & ~getattr(termios, "CRTSCTS", 0)) | termios.CLOCAL | termios.CREAD
        attrs[4] = attrs[5] = speed
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    def _reset(self, wait_s: float) -> None:
        """Restart the firmware so that it greets again (what came before is skipped by sync)."""
        if self.reset:
            run_board_command("reset", self.reset, wait_s)
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
            raise DeviceError(f"the board on {self.port} sent something that is not a greeting ({problem}): "
                              f"check the baud rate ({self.baud}) and that the flashed image is the "
                              "tlsbench firmware")
        how = f"`{shlex.join(self.reset)}`" if self.reset else "a DTR pulse"
        raise DeviceError(f"the board on {self.port} sent no greeting within {greeting_s:g} s, reset "
                          f"{self.RESETS} times with {how}: reset it by hand, check the baud rate "
                          f"({self.baud}) and the firmware, or set [device] reset to the command that resets it")

    def _hello(self, wait_s: float) -> None:
        sp = specmod.load()
        frames = sp.frames
        self.stream.deadline, self.stream.pending = time.monotonic() + wait_s, b""
        self.stream.drop_stale()
        self.reader = protocol.FrameReader(self.stream)  # type: ignore[arg-type]
        try:
            self.stream.sync(struct.pack("<HBB", sp.magic, sp.protocol_version, frames.HELLO))
            hello, suites = self.reader.read(), self.reader.read()
        finally:
            self.stream.deadline = None
        if not hello or hello.type != frames.HELLO or not suites or suites.type != frames.SUITES:
            raise DeviceError(f"the board on {self.port} did not greet with HELLO and SUITES")
        self.hello, self.hello_raw = hello.json(), hello.payload.decode()
        self.suites, self.suites_raw = list(suites.json().get("suites", [])), suites.payload.decode()
        sp.check_agent(self.hello, REBUILD_BOARD)

    def read_frame(self) -> protocol.Frame | None:
        return self.reader.read()

    def send(self, data: bytes) -> None:
        self.stream.write(data)

    def end(self, busy: bool = False) -> str:
        """QUIT, once the line has carried it (a closed port drops what it still holds)."""
        try:
            self.send(protocol.encode_frame(specmod.load().frames.QUIT))
            if self.stream.reopen is None:
                termios.tcdrain(self.fd)
            else:
                self.stream.linger(QUIT_LINGER_S)
        except (OSError, termios.error):
            pass
        self.close()
        return "QUIT sent"

    def kill(self) -> None:
        self.closed_why = "the port was closed"
        self.close()

    def pause(self) -> None:
        pass  # a board idles on its own power, not the host's CPU

    def resume(self) -> None:
        pass

    def death_reason(self) -> str:
        return self.closed_why or "the serial line ended"

    def close(self) -> None:
        self.stream.close()


PORT_LOOKS_LIKE = "a board's port is a terminal device such as /dev/ttyACM0 or /dev/ttyUSB0"
LIST_PORTS = "ls /dev/ttyACM* /dev/ttyUSB*"


QUIT_LINGER_S = 2.0  # how long QUIT may take to reach a board behind a network serial port
NETWORK_PORT = "tcp://"  # a serial port reached over TCP: ser2net's raw port, a labgrid place's (run/labgrid.py)


def _open_network_port(address: str) -> int:
    host, _, port = address.removeprefix(NETWORK_PORT).rpartition(":")
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
    except (OSError, ValueError) as exc:
        raise DeviceError(f"cannot reach the serial port {address}: {getattr(exc, 'strerror', None) or exc}; check "
                          "that its ser2net (or the place's exporter) runs and the address") from None
    sock.setblocking(False)
    return sock.detach()


def _open_port(path: str) -> int:
    """The board's port, opened without becoming our controlling terminal. What is not a
    terminal (a regular file, a FIFO, /dev/null) has no line to configure, and the user's own
    terminal would be left in raw mode: refused, and only another character device is opened.
    A `tcp://HOST:PORT` port is a network serial port (its line is configured where it is)."""
    if path.startswith(NETWORK_PORT):
        return _open_network_port(path)
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


TOOL_PROBLEMS = {errno.ENOENT: "is not found: install it, or give its full path",
                 errno.EACCES: "is not executable: chmod +x it"}
# What each of a plan's board commands does ([device] reset, flash), and the wait it has (run/timeouts.py).
BOARD_COMMANDS = {"reset": ("resets the board", "greeting"),
                  "flash": ("writes the firmware image onto the board", "flash")}


def run_board_command(role: str, command: Sequence[str], wait_s: float) -> None:
    """The plan's reset or flash command, given `wait_s`: in a session of its own, so that a
    hung one is killed with whatever it started (a script's children would otherwise keep
    its output open, and the wait for it going)."""
    shown, (does, wait) = shlex.join(command), BOARD_COMMANDS[role]
    try:
        proc = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, preexec_fn=dying_with_us())
    except OSError as exc:
        why = TOOL_PROBLEMS.get(exc.errno, exc.strerror)
        raise DeviceError(f"the {role} command `{shown}` cannot run: {command[0]} {why}; or set [device] {role} to "
                          f"the command that {does}") from None
    try:
        output, _ = proc.communicate(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        raise DeviceError(f"the {role} command `{shown}` did not finish within {wait_s:g} s (the {wait} wait) and "
                          "was stopped: run it by hand to see where it waits, or allow it longer with --timeout "
                          f"{wait}=SECONDS") from None
    if proc.returncode:
        said = " ".join(output.split())[-300:]
        raise DeviceError(f"the {role} command `{shown}` failed (exit status {proc.returncode})"
                          f"{f': {said}' if said else ''}; run it by hand to see why")
