# SPDX-License-Identifier: Apache-2.0
"""What a store is to the rest of the host tool: its roles as protocols (locator.py turns what
a user names, `sqlite:PATH`, a path, an experiment folder or name, into a Location).

- `Sink`: what a run writes (the controller and its exchanges depend on this protocol, never
  on a store);
- `StoreReader`: typed reads (status, analysis, exports);
- `DerivedCache`: the derived summaries and statistics analysis computes once and keeps
  (`DerivedReads` is its reading half: a report never writes);
- `EnergyWrites`: an imported energy capture;
- `WriterLock`: one writer per store;
- `Location`: where a store is, and how it is opened for reading or writing (store/locator.py).

store/sqlite/ implements them (one SQLite file per experiment); tests/store_contract/ runs one
suite of tests against every implementation. The row types are schema's."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ContextManager, Iterator, Literal, Mapping, Protocol, Sequence

from tlsbench.core.errors import UserError
from tlsbench.core.image import ImageSizes
from tlsbench.schema import (AgentRow, ConfigRow, DerivedBatch, DeviceFacts, Experiment, LinkTraffic, PeerTrace,
                             RepetitionColumns, RepetitionRow, SchedBatch, SchedTables, SkippedCell, StoredCapture,
                             StoredConfig, StoredRepetition, StoredStats, TraceCounts, WindowEnergies)

from tlsbench.schema.kinds import Selection as Kind  # which configurations a read covers (schema/kinds.py)

# Where else to write after a failed write, per command that writes (the default: run, primitives).
RUN_RETRY = "choose another --output"
# What a second writer can do besides waiting: a run writes elsewhere; a command that adds to
# the store (derive, energy import) runs again once the writer has ended.
ELSEWHERE = "or choose another --output"
AGAIN = "then run the same command again"


class StoreError(UserError, RuntimeError):
    """The store cannot be opened or written; what is already committed is intact."""


class PlanMismatch(StoreError):
    """The experiment folder holds another plan's results."""


class StoreDamaged(StoreError):
    """The store is not a tlsbench store, or is damaged: nothing writes to it."""


class StoreBusy(StoreError):
    """Another process writes this store."""


def plan_mismatch(where: object, stored: Experiment, plan_hash: str) -> PlanMismatch:
    return PlanMismatch(f"{where} holds experiment {stored.name!r} run with another plan "
                        f"(plan hash {stored.plan_hash[:12]} vs {plan_hash[:12]}): "
                        "use another --output folder or experiment name, or run the stored plan "
                        "(`tlsbench plan show` of the same file) to resume")


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

    @property
    def parts(self) -> dict[str, dict[str, int]]:
        """Flash and RAM of the library, the harness and the C runtime, from the build's link
        map (builder/footprint.py); {} for an image stored without them."""
        return (self.details.get("footprint") or {}).get("parts") or {}


def device_image(target: str, unit: str | None, sha256: str | None, details_json: str | None, boots: int
                 ) -> DeviceImage:
    """A DeviceImage from an agent row's columns (firmware_json: run/device.py facts())."""
    d = json.loads(details_json or "{}")
    config = d.get("config") or {}
    return DeviceImage(target, unit or "", sha256 or "", str(d.get("variant", "")), str(d.get("file", "")),
                       str(d.get("library", "")), f"{config.get('name', '?')} ({str(config.get('sha256', ''))[:12]})",
                       int(d.get("text", 0)), int(d.get("data", 0)), int(d.get("bss", 0)), boots, d)


class Opened(Protocol):
    """An open store (or a role of one): closed when done, a context manager."""

    def close(self) -> None: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, *exc: Any) -> None: ...


class Sink(Protocol):
    """What a run writes, each call its own transaction (run/ writes through this and nothing
    else: a batch's repetitions with their traces at once, so a kill loses at most the batch
    in flight)."""

    def init_experiment(self, exp: Experiment) -> Experiment: ...
    def close_stale_agents(self, reason: str) -> int: ...
    def add_agent(self, library: str, executable: str, pid: int | None, hello_json: str, suites_json: str,
                  device: DeviceFacts | None = None, placement_json: str = "") -> int: ...
    def set_agent_clock(self, agent_id: int, clock_json: str) -> None: ...
    def end_agent(self, agent_id: int, reason: str) -> None: ...
    def upsert_config(self, row: ConfigRow) -> int: ...
    def set_skip_reason(self, config_id: int, reason: str | None) -> None: ...
    def set_skipped_cells(self, cells: Sequence[SkippedCell]) -> None: ...
    def add_repetition(self, rep: RepetitionRow, records: bytes) -> int: ...
    def add_repetitions(self, reps: Sequence[StoredRepetition]) -> None: ...
    def add_link_traffic(self, config_id: int, traffic: Mapping[int, LinkTraffic]) -> None: ...
    def start_sched_capture(self, missing: str | None, facts_json: str) -> int: ...
    def add_sched(self, capture_id: int, batch: SchedBatch, facts_json: str) -> None: ...


class DerivedReads(Opened, Protocol):
    """The derived cache as a report reads it."""

    def derived_batches(self, kind: Kind = "all", version: int | None = None, config_id: int | None = None,
                        measures: bool = True) -> Iterator[DerivedBatch]: ...
    def derived_stats(self, kind: Kind) -> dict[int, StoredStats]: ...
    def reopened(self) -> "DerivedReads": ...


class StoreReader(DerivedReads, Protocol):
    """Read access to one experiment's store, its derived cache included. Reads of a store
    being written see what was committed when they ran."""

    location: "Location"  # where it is

    def experiment(self) -> Experiment | None: ...
    def agent_rows(self) -> list[AgentRow]: ...
    def config_rows(self, kind: Kind = "all") -> list[StoredConfig]: ...
    def skipped_cells(self) -> list[SkippedCell]: ...
    def repetition_columns(self, kind: Kind = "all") -> RepetitionColumns: ...
    def repetition_rows(self, config_id: int | None = None) -> list[tuple[int, RepetitionRow]]: ...
    def repetition(self, config_id: int, idx: int) -> tuple[Mapping[str, Any], bytes] | None: ...
    def traces(self, kind: Kind = "all", rep_ids: Sequence[int] | None = None) -> list[tuple[int, bytes]]: ...
    def repetition_ids(self, config_keys: Sequence[str]) -> list[int]: ...
    def stored_indices(self) -> dict[str, set[int]]: ...
    def repetition_counts(self, ok_status: str) -> dict[int, dict[str, int]]: ...
    def stored_per_round(self) -> dict[int, int]: ...
    def has_experiments(self) -> bool: ...
    def has(self, kind: Kind) -> bool: ...
    def link_traffic(self) -> dict[int, LinkTraffic]: ...
    def peer_traces(self, rep_ids: Sequence[int] | None = None) -> list[PeerTrace]: ...
    def trace_counts(self) -> dict[int, TraceCounts]: ...
    def energy_capture(self) -> StoredCapture | None: ...
    def window_energies(self, capture_id: int) -> WindowEnergies: ...
    def devices(self) -> list[DeviceImage]: ...
    def sched_tables(self) -> SchedTables: ...
    def integrity_check(self) -> str: ...

    def reopened(self) -> "StoreReader":
        """The same store opened again for reading, without checking it again: for a forked
        worker (a connection must not cross a fork) or a section that reads more later."""
        ...


class DerivedCache(DerivedReads, Protocol):
    """The derived summaries and statistics: nothing in it is a source of truth (rebuilt from
    the records). A batch of the same kind, version, configuration and first repetition
    replaces the stored one, never adds to it."""

    def add_derived_batches(self, batches: Sequence[DerivedBatch]) -> None: ...
    def put_derived_stats(self, kind: Kind, stats: Sequence[StoredStats]) -> None: ...
    def drop_derived(self, keep_version: int | None = None, kind: Kind | None = None) -> None: ...


class EnergyWrites(Protocol):
    def save_capture(self, capture: StoredCapture, energies: WindowEnergies) -> int: ...


class Store(Sink, StoreReader, DerivedCache, EnergyWrites, Protocol):
    """A store opened for writing: every role (open it under its WriterLock)."""

    def reopened(self) -> StoreReader: ...  # type: ignore[override]


class WriterLock(Protocol):
    """One writer per store, held for the whole of a command's writing and released however
    the process ends. Readers take none."""

    def holder(self) -> str | None:
        """The PID of the process that writes the store now, None when nobody does."""
        ...

    def hold(self, retry: str = RUN_RETRY, instead: str = ELSEWHERE) -> ContextManager[None]:
        """Holds it; StoreBusy at once when another process does, saying what to do `instead`."""
        ...

    def refuse_if_busy(self) -> None: ...


class Location(Protocol):
    """Where a store is (what the locator gives), and how it is opened. str() of it names it
    in messages, and locate() of that name finds it again."""

    folder: Path  # where files that go with the experiment are written (report.html)
    lock: WriterLock

    def exists(self) -> bool: ...

    def stored_experiment(self) -> Experiment | None:
        """The experiment it holds, None when there is no store or no experiment yet; only
        reads; StoreDamaged for anything that is not a healthy tlsbench store."""
        ...

    def queued_batches(self) -> int:
        """Batches of its experiment queued for a fleet's workers and not done yet (a store
        without a queue: 0); a run refuses an experiment the workers are filling."""
        ...

    def reader(self, check: bool = True) -> StoreReader:
        """Read-only, never writes; checked and holding an experiment (StoreError otherwise),
        unless `check` is off: a store read before, opened again (StoreReader.reopened())."""
        ...

    def writer(self, create: bool = True, retry: str = RUN_RETRY) -> Store:
        """Opened for writing (created with `create`, upgraded to the current schema)."""
        ...
