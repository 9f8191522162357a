# SPDX-License-Identifier: Apache-2.0
"""`tlsbench run --suite X [--library L] [--device T] [--repetitions N]`: a plan written from
the options, so a first measurement needs no TOML file. The plan is an ordinary one (stored
with the experiment, `plan show` prints it); its folder's name is made from its text, so the
same command finds its store again and another command never meets a store of another plan."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import tomli_w

from tlsbench.plan.model import LoadedPlan, parse

QUICK = "quick"  # the experiment name's prefix
HOST_REPETITIONS = 20  # a host's times: enough for an interval of the median
DEVICE_REPETITIONS = 1  # a device's counts are exact: one repetition says it all


@dataclass(frozen=True)
class QuickRun:
    """What the options of a plan-less `tlsbench run` ask for."""

    suites: tuple[str, ...]
    library: str | None = None
    device: str | None = None  # an emulated target
    repetitions: int | None = None
    groups: tuple[str, ...] = ()
    board: str | None = None  # with device: the part its counts convert to (spec/boards.toml)

    def plan(self) -> LoadedPlan:
        raw: dict = {"name": QUICK, "suites": list(self.suites),
                     "repetitions": self.repetitions or (DEVICE_REPETITIONS if self.device else HOST_REPETITIONS)}
        raw["rounds"] = min(raw["repetitions"], 4)
        if self.library and not self.device:
            raw["library"] = self.library
        if self.groups:
            raw["groups"] = list(self.groups)
        if self.device:  # on a device, --library names its library build (spec/libraries.toml [device])
            raw["device"] = {"target": self.device, "memory": True,
                             **({"library": self.library} if self.library else {}),
                             **({"board": self.board} if self.board else {})}
        text = tomli_w.dumps(raw)
        raw["name"] = f"{QUICK}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
        return parse(f"# tlsbench run {' '.join(self.arguments())}\n" + tomli_w.dumps(raw), "the command line")

    def arguments(self) -> list[str]:
        """The options as given (the plan's first line, and the command that resumes it)."""
        return [*(f"--suite={s}" for s in self.suites), *([f"--library={self.library}"] if self.library else []),
                *([f"--device={self.device}"] if self.device else []), *([f"--board={self.board}"] if self.board else []),
                *([f"--repetitions={self.repetitions}"] if self.repetitions else []),
                *(f"--group={g}" for g in self.groups)]
