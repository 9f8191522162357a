# SPDX-License-Identifier: Apache-2.0
"""What readers (analysis, energy, precision, status, trace show) get from a store: a small
typed API, StoreReader. The SQLite store (store/sqlite.py) implements it; a second backend
(PostgreSQL for a fleet of devices) would implement the same methods, and nothing that
reads would change."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol, Sequence

import numpy as np

from tlsbench.core.image import ImageSizes
from tlsbench.plan.configs import ConfigRow, SkippedCell
from tlsbench.plan.kinds import Selection as Kind  # which configurations a read covers
from tlsbench.run.records import Experiment, LinkTraffic
from tlsbench.store.energy import StoredCapture, WindowEnergies


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
    target: str | None = None  # a firmware boot (migration 007): its device, unit and image
    counter_unit: str | None = None
    firmware_sha256: str | None = None
    firmware_json: str | None = None
    placement_json: str | None = None  # CPUs and priority it ran with (migration 008)
    clock_json: str | None = None      # its clock checks after RUNs (migration 008)


@dataclass(frozen=True)
class DeviceImage(ImageSizes):
    """A firmware image an experiment ran on a device (its agent rows, grouped): what every
    stored device experiment records of its target, counter and firmware."""

    target: str
    counter_unit: str
    firmware_sha256: str
    variant: str  # "counting" or "memory"
    file: str  # the image's file name
    library: str  # "mbedtls 2.28.3"
    config: str  # the library's config header: name (sha256 prefix)
    text: int  # bytes, as the image's HELLO reports its layout
    data: int
    bss: int
    boots: int  # agent rows: boots of this image (a restart after a death is one more)
    details: dict  # firmware_json as stored


def device_image(target: str, unit: str | None, sha256: str | None, details_json: str | None, boots: int
                 ) -> DeviceImage:
    """A DeviceImage from an agent row's columns (firmware_json: run/device.py facts())."""
    d = json.loads(details_json or "{}")
    config = d.get("config") or {}
    return DeviceImage(target, unit or "", sha256 or "", str(d.get("variant", "")), str(d.get("file", "")),
                       str(d.get("library", "")), f"{config.get('name', '?')} ({str(config.get('sha256', ''))[:12]})",
                       int(d.get("text", 0)), int(d.get("data", 0)), int(d.get("bss", 0)), boots, d)

@dataclass(frozen=True)
class RepetitionColumns:
    """The `repetition` rows of a read, as columns ordered by id: int64 arrays with −1 where
    a value is unknown (NULL), the status names as an array of str."""

    id: np.ndarray
    config_id: np.ndarray
    idx: np.ndarray
    round: np.ndarray
    agent_id: np.ndarray
    status: np.ndarray
    flags: np.ndarray
    error_code: np.ndarray
    bytes_c2s: np.ndarray
    bytes_s2c: np.ndarray
    dropped_events: np.ndarray
    handshake_wall_ns: np.ndarray
    handshake_cpu_ns: np.ndarray
    n_events: np.ndarray


@dataclass(frozen=True)
class PeerTrace:
    """The peer agent's trace of a two-process repetition (`peer_repetition`)."""

    rep_id: int
    agent_id: int | None
    role: str  # spec [role] name of the peer agent
    records: bytes


@dataclass(frozen=True)
class DerivedBatch:
    """A `derived_batch` row (migrations 012, 013): the derived summaries of a kind's
    repetitions first_rep..last_rep of one configuration, as column blobs
    (analysis/derive/derived.py lays them out)."""

    version: int
    kind: str
    first_rep: int
    last_rep: int
    n_reps: int
    n_measures: int
    incomplete_records: int
    reps: bytes
    measures: bytes
    config_id: int | None = None  # None: several configurations (version 1 of the derivation)


@dataclass(frozen=True)
class StoredStats:
    """A `derived_stats` row (migration 014): one configuration's statistics, for the inputs
    its digest names (analysis/derive/statcache.py lays them out)."""

    config_id: int
    digest: str
    n_rows: int
    rows: bytes


class StoreReader(Protocol):
    """Read access to one experiment's store."""

    path: Path  # where it is (a file; a server's store names its experiment there)

    def experiment(self) -> Experiment | None: ...
    def agent_rows(self) -> list[AgentRow]: ...
    def config_rows(self, kind: Kind = "all") -> list[StoredConfig]: ...
    def skipped_cells(self) -> list[SkippedCell]: ...
    def repetition_columns(self, kind: Kind = "all") -> RepetitionColumns: ...
    def traces(self, kind: Kind = "all", rep_ids: Sequence[int] | None = None) -> list[tuple[int, bytes]]: ...
    def repetition_ids(self, config_keys: Sequence[str]) -> list[int]: ...
    def has_experiments(self) -> bool: ...
    def has(self, kind: Kind) -> bool: ...
    def link_traffic(self) -> dict[int, LinkTraffic]: ...
    def peer_traces(self, rep_ids: Sequence[int] | None = None) -> list[PeerTrace]: ...
    def energy_capture(self) -> StoredCapture | None: ...
    def window_energies(self, capture_id: int) -> WindowEnergies: ...
    def devices(self) -> list[DeviceImage]: ...
    def derived_batches(self, kind: Kind = "all", version: int | None = None, config_id: int | None = None,
                        measures: bool = True) -> Iterator[DerivedBatch]: ...
    def derived_stats(self, kind: Kind) -> dict[int, StoredStats]: ...
