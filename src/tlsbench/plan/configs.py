# SPDX-License-Identifier: Apache-2.0
"""What a resolved plan is: configurations, each a `config` row of the store plus the RUN
fields it maps to. Handshake configurations come from plan/suites.py, experiment
configurations from plan/experiments.py; plan/resolve.py joins both."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tlsbench.core.errors import UserError
from tlsbench.plan.kinds import ConfigKind, kind_of
from tlsbench.plan.network import Variant


@dataclass(frozen=True)
class ConfigRow:
    """A `config` row (without id and skip_reason); `key` identifies it across resumes."""

    key: str
    library: str
    suite_id: int
    suite_name: str
    key_exchange: str
    authentication: str
    cipher: str
    mac: str
    min_version: str
    max_version: str
    grp: str
    credential: str
    transport: str
    direction: str
    total_bytes: int
    record_size: int
    repetitions: int
    options: int = 0  # RUN options bits (spec [options])
    network_json: str | None = None  # two-process configurations (003_network.sql)
    device_role: str | None = None
    peer_library: str | None = None
    link_label: str | None = None
    # Experiment configurations only (migration 004; None on handshakes). total_bytes is the
    # payload size (0: the experiment takes none); suite_name repeats the experiment's name.
    experiment: str | None = None  # HELLO experiments[].name
    experiment_groups: str | None = None  # JSON array of group names (USER_GROUP START value = index)
    experiment_source: str | None = None  # "primitive" or "user"
    experiment_description: str | None = None
    # Migration 007 (plan/device.py): None on the host. A device configuration names the device
    # (HELLO device.target) and the firmware image it runs on ("counting" or "memory");
    # protocol "dtls" for DTLS over the memory transport (None: TLS, or the network variant's).
    target: str | None = None
    image: str | None = None
    protocol: str | None = None
    # Migration 011 (docs/metrics.md): what the configuration's agent collects besides order
    # (spec [collect]): None = time; "instructions" or "memory" = the twin of a time
    # configuration whose repetitions carry that metric instead.
    collect: str | None = None

    @property
    def kind(self) -> ConfigKind:
        """What it measures and where its peers run, as its columns say (plan/kinds.py)."""
        return kind_of(vars(self))


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


@dataclass(frozen=True)
class SkippedCell:
    """A cell of the plan's matrix that is not measured, and why; stored with the experiment
    (migration 016), so `status` and the report name it after the run."""

    cell: str  # what it would have measured: a configuration key, or its leading fields
    reason: str


@dataclass
class Resolution:
    """What a plan means against the agents' offers."""

    configs: list[Configuration] = field(default_factory=list)
    skipped: list[SkippedCell] = field(default_factory=list)  # matrix cells that fell out, named, with why

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
