# SPDX-License-Identifier: Apache-2.0
"""QEMU booting a firmware image (an Endpoint): `qemu-system-arm -M <board> -icount shift=0
-serial stdio -kernel IMAGE`. QEMU's stdin/stdout are the board's UART (the chardev the
ctest driver agent/tests/qemu_device.py uses: binary-safe, the fastest measured); it is a
ProcessEndpoint whose program is QEMU (the same greeting, pipe, process group and death with
the host), and its exit status is the firmware's (0 QUIT, 2 fault, 3 the stream broke)."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Sequence

from tlsbench.core.image import elf_problem
from tlsbench.core.targets import Target
from tlsbench.run import protocol
from tlsbench.run.endpoints import AgentError
from tlsbench.run.endpoints.firmware import DeviceError, FirmwareEndpoint, FirmwareImage
from tlsbench.run.endpoints.process import STDERR_TAIL_BYTES, ProcessEndpoint

REBUILD_QEMU = "rebuild the firmware: tlsbench build firmware"
BUILD_QEMU = ("build one with `tlsbench build firmware` (into build/firmware/<name>/), or leave [device] firmware "
              "(--firmware) out to boot the one built for the target")
# What QEMU's exit status says: the firmware's own, through semihosting (agent/arch/cortex-m).
QEMU_EXITS = {0: "QUIT", 1: "QEMU error", 2: "firmware fault", 3: "protocol error: the stream broke"}




def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class QemuEndpoint(FirmwareEndpoint):
    """The firmware booted in QEMU."""

    emulated = True

    def __init__(self, target: Target, image: FirmwareImage, greeting_s: float, *, extra: Sequence[str] = (),
                 semihosting_args: tuple[str, ...] = ()):
        """`extra`: QEMU options after the target's own (the cycle model's -plugin: run/cycles.py)."""
        _check_image(target, image.path)
        try:
            self.process = ProcessEndpoint.start(image.path, greeting_s=greeting_s,
                                                 command=[*target.command(image.path, semihosting_args), *extra],
                                                 advice=REBUILD_QEMU)
        except FileNotFoundError:  # QEMU itself: the image was read above
            raise DeviceError(f"{target.command(image.path)[0]} is not installed: scripts/install-deps.sh installs it") from None
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

    def read_frame(self) -> protocol.Frame | None:
        return self.process.read_frame()

    def send(self, data: bytes) -> None:
        self.process.send(data)

    def end(self, busy: bool = False) -> str:
        """QUIT (a paused QEMU resumed first), waiting for a RUN under way; how QEMU ended."""
        self.resume()
        self.process.quit(timeout=10.0)
        return self.ending()

    def kill(self) -> int | None:
        return self.process.kill()

    def pause(self) -> None:
        """SIGSTOP: an idle firmware polls its UART, which costs QEMU a host core. The
        counter is virtual (icount) and held during UART I/O: a pause changes no count."""
        self.process.pause()

    def resume(self) -> None:
        self.process.resume()

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
        if self.step_counts is not None:  # the cycle model's file of this boot (run/device.py)
            self.step_counts.close()


def _check_image(target: Target, path: Path) -> None:
    """Refuses what the target cannot boot before QEMU starts: QEMU would run any file as code
    and end in a register dump (garbage, an empty or cut file, another machine's ELF)."""
    try:
        problem = elf_problem(path.read_bytes(), target.elf)
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror})"
    if problem:
        raise DeviceError(f"firmware {path} {problem}: {target.name} boots a {target.elf}; {BUILD_QEMU}")
