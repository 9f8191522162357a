# SPDX-License-Identifier: Apache-2.0
"""A board of a labgrid lab (docs/fleet.md): `[device] place = "NAME"` acquires the place from
the lab's coordinator (labgrid's own `LG_COORDINATOR`, else its default), reads the serial port
its exporter offers (a NetworkSerialPort: ser2net's raw TCP port on the exporter's host), and
releases the place however the run ends (an exception, Ctrl-C, SIGTERM; a SIGKILL leaves it
acquired: `labgrid-client -p NAME release` then, as labgrid says). A place with a power
resource is reset by `labgrid-client power cycle` unless the plan gives its own reset;
`flash = "labgrid"` writes the image with `labgrid-client bootstrap`.

labgrid runs as its own program (`labgrid-client`, or $TLSBENCH_LABGRID_CLIENT): it brings
its own pyserial fork, gRPC and pytest, which stay out of tlsbench's process; what tlsbench
needs of it is a few commands and one resource's parameters."""
from __future__ import annotations

import ast
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Iterator

from tlsbench.core.errors import UserError
from tlsbench.run.endpoints.serial import NETWORK_PORT

CLIENT_ENV = "TLSBENCH_LABGRID_CLIENT"
ENV_CONFIG = "LG_ENV"  # labgrid's environment config: the drivers of the lab's places (flashing)
SERIAL_CLASS = "NetworkSerialPort"
POWER_CLASSES = ("NetworkPowerPort", "PDUDaemonPort", "YKUSHPowerPort", "USBPowerPort", "SiSPMPowerPort")
_RESOURCE = re.compile(r"^Acquired resource '(?P<name>[^']+)' \((?P<path>[^)]+)\):\n(?P<body>(?:[ \t].*\n?)+)", re.M)


class LabgridError(UserError, RuntimeError):
    """A place that cannot be acquired, or offers no serial port."""


def client() -> list[str]:
    found = os.environ.get(CLIENT_ENV) or shutil.which("labgrid-client")
    if not found:
        raise LabgridError("labgrid-client is not installed: `pip install labgrid` (docs/fleet.md), or set "
                           f"${CLIENT_ENV} to the command that runs it")
    return shlex.split(found)


@dataclass
class Place:
    """An acquired place and what it offers."""

    name: str
    resources: dict[str, dict]  # class -> the resource's parameters (its `params`)

    @property
    def serial_port(self) -> str:
        params = self.resources.get(SERIAL_CLASS)
        if params is None:
            raise LabgridError(f"place {self.name!r} offers no {SERIAL_CLASS} (its resources: "
                               f"{', '.join(self.resources) or 'none'}): export the board's serial port with ser2net")
        if params.get("protocol", "rfc2217") != "raw":
            raise LabgridError(f"place {self.name!r} exports its serial port as {params.get('protocol', 'rfc2217')}: "
                               "tlsbench reads a raw TCP port (ser2net accepter tcp; exporter `protocol: raw`)")
        return f"{NETWORK_PORT}{params['host']}:{params['port']}"

    @property
    def speed(self) -> int | None:
        return self.resources.get(SERIAL_CLASS, {}).get("speed")

    @property
    def power_cycle(self) -> tuple[str, ...]:
        """The command that resets the board through the place's power driver; () without one."""
        if not any(c in self.resources for c in POWER_CLASSES):
            return ()
        return (*client(), "-p", self.name, "power", "cycle")

    def flash(self, image: str) -> tuple[str, ...]:
        """The command that writes `image` onto the board through the place's flashing driver:
        labgrid's bootstrap, i.e. the BootstrapProtocol driver the lab's environment config
        (LG_ENV) gives the place (FlashromDriver, OpenOCDDriver, ...) or its USB loader's; labgrid
        moves the image to the exporter's host itself (its ManagedFile, over SSH)."""
        return (*client(), "-p", self.name, "bootstrap", image)


def _labgrid(*args: str, place: str) -> str:
    """`labgrid-client -p PLACE ARGS` without the lab's environment config: with one, labgrid's
    acquire and release act on every place it names, and the run holds its own place only."""
    own_place = {name: value for name, value in os.environ.items() if name != ENV_CONFIG}
    done = subprocess.run([*client(), "-p", place, *args], capture_output=True, text=True, timeout=60, env=own_place)
    if done.returncode:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise LabgridError(f"labgrid-client -p {place} {' '.join(args)} failed: {why[-1] if why else done.returncode}"
                           " (is the coordinator reachable, LG_COORDINATOR, and the place free?)")
    return done.stdout


def resources_of(show: str) -> dict[str, dict]:
    """The acquired resources' parameters by class, from `labgrid-client show`."""
    out = {}
    for found in _RESOURCE.finditer(show):
        entry = ast.literal_eval(found["body"].strip())  # labgrid prints each resource as a Python literal
        out[entry.get("cls", found["name"])] = entry.get("params", {})
    return out


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def acquired(name: str) -> Iterator[Place]:
    """The place, acquired for the `with` block and released after it, however it ends: a
    SIGTERM (a CI's timeout, a scheduler's stop) that no one else handles ends the block as an
    exit does, so the release runs (in the main thread; SIGKILL cannot be caught)."""
    _labgrid("acquire", place=name)
    unhandled = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    previous = signal.signal(signal.SIGTERM, _terminated) if unhandled else None
    try:
        yield Place(name, resources_of(_labgrid("show", place=name)))
    finally:
        if unhandled:
            signal.signal(signal.SIGTERM, previous)
        with contextlib.suppress(LabgridError, subprocess.TimeoutExpired):
            _labgrid("release", place=name)
