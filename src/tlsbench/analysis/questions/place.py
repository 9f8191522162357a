# SPDX-License-Identifier: Apache-2.0
"""What was measured where, as the first screen says it: the part, its core and clock and the
library build on a device; on the host, plainly that it is the host and not a device (its
times are never a device's). `tag` is the short form every numeric section's header carries."""
from __future__ import annotations

import json
from dataclasses import dataclass

from tlsbench.core import targets as targetsmod
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.questions.device import DeviceResults

ARCH_NAMES = {"x86_64": "x86-64", "aarch64": "Arm64", "armv7l": "Arm32"}


@dataclass(frozen=True)
class Place:
    on_device: bool
    headline: str  # "host (x86-64 AMD EPYC), not a device" | "device qemu-mps2-an386: Cortex-M4 ..."
    tag: str  # the short form a section's header carries
    facts: tuple[tuple[str, str], ...]  # (what, value): part, core, clock, library build, values


def place_of(ds: Dataset, libraries: list[str], device: DeviceResults | None, time_label: str = "") -> Place:
    """Where the dataset's configurations ran; `time_label`: how a device's counts become the
    part's time, when they do (recommend.DeviceTime.label)."""
    if device is None:
        return _host(ds.experiment.get("host") or {}, libraries)
    return _device(ds, libraries, device, time_label)


def _host(host: dict, libraries: list[str]) -> Place:
    arch = ARCH_NAMES.get(str(host.get("machine", "")), str(host.get("machine") or "?"))
    cpu = str(host.get("cpu") or "unknown CPU")
    headline = f"host ({arch} {cpu}), not a device"
    system = " ".join(str(host[k]) for k in ("system", "kernel") if host.get(k))
    facts = (("Where", f"{headline}: times of this machine, never a device's (a plan with [device] measures a "
                       "part: docs/plan-format.md)"),
             ("Machine", ", ".join(x for x in (f"{arch} {cpu}", f"{host['cpus']} CPUs" if host.get("cpus") else "",
                                              system) if x)),
             ("Library build", ", ".join(libraries)),
             ("Values", "times (ms, µs) of this host, each a median with its 95% interval"))
    return Place(False, headline, f"host {arch}, not a device", facts)


def _device(ds: Dataset, libraries: list[str], device: DeviceResults, time_label: str) -> Place:
    target = targetsmod.load().emulated.get(device.target)
    plan = json.loads(ds.experiment.get("plan_json") or "{}").get("device") or {}
    board = plan.get("board")  # a declared board (spec/boards), once plans name one
    part = board or (target.meaning if target else device.target)
    core = device.cpu + (" with FPU" if target is not None and target.has_fpu else "")
    counting = next((im for im in device.images if im.variant == "counting"), None)
    build = ", ".join(libraries) + (f", config {counting.config}" if counting else "")
    clock = time_label or ("none modelled: counts are executed instructions, not cycles or time; a board's "
                           "cycle model or `--profile` turns them into ms" if not device.unit.noun == "cycles"
                           else "the board's core clock (cycles)")
    facts = (("Where", f"device {device.target}" + (f", board {board}" if board else "") + ", both peers on it"),
             ("Part", part), ("Core", core), ("Clock", clock), ("Library build", build),
             ("Values", f"counts of {device.unit.name}, never a time: exact for each repetition (the same image, "
                        "plan and order count the same run after run; random keys and nonces move a handshake's "
                        "count by about 1% at most between repetitions)"))
    headline = f"device {device.target} ({core}), {', '.join(libraries)}" + (f"; ms and mJ of {board}" if board else "")
    return Place(True, headline, f"{device.target}, {device.unit.noun}", facts)
