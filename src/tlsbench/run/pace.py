# SPDX-License-Identifier: Apache-2.0
"""Paced agents (docs/networks.md "Paced peers"): the table each paced host agent reads at every
RUN (agent/src/posix/posix_pace.c), one file per agent in a folder of the pair's own, named by
TLSBENCH_PACE in the agent's environment. The rows (a configuration's modelled step times) are
computed before the run (app/pace.py); this module only writes them where the agents read."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from tlsbench.core import spec
from tlsbench.core.processes import owned_folder, remove_dead_owners_folders

ENV = shutil.which("env") or "/usr/bin/env"  # sets the agent's environment (coreutils)

StepRow = tuple[str, int, int]  # peer (client | server), step label id, modelled ns


@dataclass(frozen=True)
class Pacing:
    """Which agents are paced, and each configuration's (by key) modelled steps."""

    side: str  # device: the plan's library's agent; both: its peer's too
    steps: Mapping[str, tuple[StepRow, ...]]
    basis: str = ""  # how the times were had (the conversion's basis), for the run's notes


@dataclass
class PaceFiles:
    """The table files of one agent pair, kept while it runs."""

    pacing: Pacing
    folder: Path = field(default_factory=lambda: owned_folder("pace"))
    written: set[tuple[str, int]] = field(default_factory=set)  # (side, config_id)

    def __post_init__(self) -> None:
        remove_dead_owners_folders()  # a killed run's tables (its next run may have no link to clean up)

    def paces(self, side: str) -> bool:
        return side == "dev" or self.pacing.side == "both"

    def prefix(self, side: str) -> list[str]:
        """What starts the agent of `side` with its table (nothing when it is not paced)."""
        return [ENV, f"TLSBENCH_PACE={self.folder / side}"] if self.paces(side) else []

    def write(self, side: str, config_id: int, key: str, peer: str) -> None:
        """The rows of configuration `key` where the agent of `side` plays `peer`, before its RUN."""
        if not self.paces(side) or (side, config_id) in self.written:
            return
        peer_id = spec.load().peers.value(peer)  # spec/labels.toml [peers]
        rows = [f"{config_id} {peer_id} {label} {ns}\n" for p, label, ns in self.pacing.steps.get(key, ())
                if p == peer]
        with open(self.folder / side, "a", encoding="ascii") as out:
            out.writelines(rows)
        self.written.add((side, config_id))

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
