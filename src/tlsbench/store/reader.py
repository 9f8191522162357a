# SPDX-License-Identifier: Apache-2.0
"""What readers (analysis, energy, precision, status, trace show) get from a store: a small
typed API, StoreReader. The SQLite store (store/sqlite.py) implements it; a second backend
(PostgreSQL for a fleet of devices) would implement the same methods, and nothing that
reads would change."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, Sequence

from tlsbench.plan.configs import ConfigRow
from tlsbench.run.records import Experiment, LinkTraffic
from tlsbench.store.energy import StoredCapture, WindowEnergies

# Which configurations a read covers: handshakes, experiments (crypto primitives, user
# experiments: migration 004), or both.
Kind = Literal["handshakes", "experiments", "all"]


@dataclass(frozen=True)
class StoredConfig(ConfigRow):
    """A `config` row with its id and why the controller stopped running it (if it did)."""

    id: int = -1
    skip_reason: str | None = None


@dataclass(frozen=True)
class AgentRow:
    """An `agent` row: one agent process of the experiment."""

    id: int
    library: str
    executable: str
    pid: int | None
    hello_json: str
    suites_json: str
    started_at: str
    ended_at: str | None
    exit_reason: str | None
    placement_json: str | None = None  # CPUs and priority it ran with (migration 007)
    clock_json: str | None = None      # its clock checks after RUNs (migration 007)


@dataclass(frozen=True)
class RepetitionColumns:
    """The `repetition` rows of a read, as columns (ordered by id); None where unknown."""

    id: list[int]
    config_id: list[int]
    idx: list[int]
    round: list[int]
    agent_id: list[int | None]
    status: list[str]
    flags: list[int]
    error_code: list[int]
    bytes_c2s: list[int | None]
    bytes_s2c: list[int | None]
    dropped_events: list[int]
    handshake_wall_ns: list[int | None]
    handshake_cpu_ns: list[int | None]


class StoreReader(Protocol):
    """Read access to one experiment's store."""

    path: Path  # where it is (a file; a server's store names its experiment there)

    def experiment(self) -> Experiment | None: ...
    def agent_rows(self) -> list[AgentRow]: ...
    def config_rows(self, kind: Kind = "all") -> list[StoredConfig]: ...
    def repetition_columns(self, kind: Kind = "all") -> RepetitionColumns: ...
    def traces(self, kind: Kind = "all", rep_ids: Sequence[int] | None = None) -> list[tuple[int, bytes]]: ...
    def repetition_ids(self, config_keys: Sequence[str]) -> list[int]: ...
    def has_experiments(self) -> bool: ...
    def link_traffic(self) -> dict[int, LinkTraffic]: ...
    def energy_capture(self) -> StoredCapture | None: ...
    def window_energies(self, capture_id: int) -> WindowEnergies: ...
