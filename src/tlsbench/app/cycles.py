# SPDX-License-Identifier: Apache-2.0
"""The cycle model attached to a plan's device ([device] cycles, docs/cycles.md "Per-step
cycles"): the QEMU plugin built into the library cache on first use (builder/cycles.py) and
the board whose memory system it simulates, on each emulated setup of a run."""
from __future__ import annotations

import dataclasses

from tlsbench.builder import cycles as tool
from tlsbench.core.boards import board
from tlsbench.plan.device import DevicePlan
from tlsbench.run.cycles import StepCycles
from tlsbench.run.device import DeviceSetup


def with_cycles(device: DevicePlan | None, setups: tuple[DeviceSetup, ...]) -> tuple[DeviceSetup, ...]:
    """The setups, each emulated one with the plugin when the plan has it on (plan/device.py
    step_cycles: a board named, an emulated target, not turned off)."""
    if device is None or not device.step_cycles or device.board is None:
        return setups
    part = board(device.board)
    cycles = StepCycles(tool.plugin(), part.name, tuple(part.memory.plugin_args()))
    return tuple(dataclasses.replace(s, cycles=cycles) if s.target else s for s in setups)
