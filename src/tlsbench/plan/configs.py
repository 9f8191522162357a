# SPDX-License-Identifier: Apache-2.0
"""What a resolved plan is: configurations, each a `config` row of the store (schema's
ConfigRow) plus the RUN fields it maps to. Handshake configurations come from
plan/suites.py, experiment configurations from plan/experiments.py; plan/resolve.py joins
both."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tlsbench.core.errors import UserError
from tlsbench.schema.kinds import ConfigKind
from tlsbench.plan.network import Variant
from tlsbench.schema import ConfigRow, SkippedCell


@dataclass(frozen=True)
class Configuration:
    """One measured configuration: a `config` row plus the RUN fields it maps to."""

    row: ConfigRow
    suite_id: int
    group: int  # spec [group] value
    credential: int  # spec [credential] value (resolved: never auto)
    direction: int
    transport: int
    options: int = 0  # RUN options bits
    variant: Variant | None = None  # two-process configurations (plan/network.py)
    experiment_id: int = 0  # 0: a handshake; n: the n-th entry of the agent's HELLO `experiments`
    protocol: int = 0  # spec [protocol_kind] value over the memory transport (a network variant sets its own)

    @property
    def key(self) -> str:
        return self.row.key

    @property
    def kind(self) -> ConfigKind:
        return self.row.kind


@dataclass
class Resolution:
    """What a plan means against the agents' offers."""

    configs: list[Configuration] = field(default_factory=list)
    skipped: list[SkippedCell] = field(default_factory=list)  # matrix cells that fell out, named, with why
    # Configurations stored with why they are not run, by key: a device lane without an image
    # for its target, e.g. one too large for its flash (plan/resolve.py DeviceOffer.not_run).
    not_run: dict[str, str] = field(default_factory=dict)

    @property
    def not_applicable(self) -> Counter[str]:
        """The cells that fell out, counted by reason."""
        return Counter(s.reason for s in self.skipped)

    def skip(self, cell: str, reason: str) -> None:
        self.skipped.append(SkippedCell(cell, reason))

    def merge(self, other: "Resolution", prefix: str = "") -> None:
        """Another resolution's cells that fell out, names and reasons prefixed (with where
        they would have run, when a plan runs in several places)."""
        self.skipped += [SkippedCell(prefix + s.cell, prefix + s.reason) for s in other.skipped]

    def refuse_if_empty(self) -> None:
        """An empty matrix is refused before anything runs, saying why each cell fell out."""
        if self.configs:
            return
        if not self.skipped:
            raise EmptyMatrix("the plan selects no configuration: name suites or experiments to measure")
        cells: dict[str, list[str]] = {}
        for s in self.skipped:
            cells.setdefault(s.reason, []).append(s.cell)
        why = "; ".join(f"{reason} ({_some(names)})" for reason, names in cells.items())
        raise EmptyMatrix(f"nothing to measure: every cell of the plan's matrix fell out: {why}; change what the "
                          "plan or the command's options select (suites, groups, credentials, options, sizes) so "
                          "that some cell applies")


SHOWN_CELLS = 3  # cells named per reason in one line


def _some(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_CELLS])
    return shown + (f" and {len(names) - SHOWN_CELLS} more" if len(names) > SHOWN_CELLS else "")


class EmptyMatrix(UserError, ValueError):
    """The plan resolves to no configuration against the agents' offers."""
