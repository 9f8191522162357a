# SPDX-License-Identifier: Apache-2.0
"""What the two ways to reach a device's firmware (QEMU: endpoints/qemu.py, a board's serial
port: endpoints/serial.py) share as endpoints: the image they boot, how long a batch may be
silent (the hang wait, from the instructions a repetition may take), how a death reads, and
what they do not do (queue a second RUN, check a host clock).

Counts are in the unit the firmware's HELLO names (`clock.unit`: instructions under QEMU),
never a time."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from tlsbench.run.endpoints import AgentError, Listener, StepCounts
from tlsbench.run.endpoints.inbox import Listened

if TYPE_CHECKING:
    from tlsbench.plan.configs import Configuration
    from tlsbench.schema import DeviceFacts
    from tlsbench.run.timeouts import Timeouts


class DeviceError(AgentError):
    """The device cannot be reached, or its firmware is not one this host can use."""


@dataclass(frozen=True)
class FirmwareImage:
    """One image file of a firmware build (builder/firmware.py writes them)."""

    variant: str  # "counting" or "memory"
    path: Path
    sha256: str


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


class FirmwareEndpoint:
    """The Endpoint behaviour a firmware boot has wherever it runs (a base of QemuEndpoint
    and SerialEndpoint): one RUN at a time over its line, its frames read as they come, a
    counter instead of a host clock, and the hang wait of its slowest repetition."""

    hello: dict[str, Any]  # the subclass's greeting, and its kill() and death_reason()
    device: DeviceFacts | None = None  # what its agent row records (run/device.py sets it)
    placement_json = ""  # nothing of it runs on the host's agent CPUs but QEMU's emulation
    queues_runs = False  # a device runs one RUN at a time over its line
    checks_clock = False  # its counter is not a host clock
    emulated = False  # QEMU: a pace of instructions per second; a board: its clock
    step_counts: StepCounts | None = None  # QEMU with the cycle model's plugin: a StepReader (run/device.py connect)

    def listen(self) -> Listener:
        return Listened(self)

    def silence_s(self, config: Configuration, warmup: int, timeouts: Timeouts) -> float:
        return hang_seconds(config, warmup, self.hello, timeouts, self.emulated)

    def hung(self) -> str:
        """What a silent target was doing, when it can be told ("" otherwise)."""
        return ""

    def silenced(self, seconds: float) -> str:
        doing = self.hung()
        self.kill()
        return f"target hung: no frame for {seconds:.0f} s{f' ({doing})' if doing else ''}; killed; " \
               f"{self.death_reason()}"

    def ended(self) -> str:
        return f"target stopped: {self.death_reason()}"
