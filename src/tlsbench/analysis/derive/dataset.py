# SPDX-License-Identifier: Apache-2.0
"""What one report reads of one store, as arrays: the Dataset (load.py fills it) and the
types it is made of. A dataset keeps the reader and derived cache it was loaded from, and
reads more of them (one configuration's measure rows, a repetition's trace) only through
them, opened again (`store()`): never by path.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Sequence

import numpy as np

from tlsbench.schema import (LinkTraffic, RepetitionColumns, SkippedCell, StoredCapture, StoredConfig, StoredStats,
                             TraceCounts, WindowEnergies)
from tlsbench.store.api import DerivedReads, DeviceImage, Kind, StoreReader

from tlsbench.analysis.derive import derived as derivation
from tlsbench.analysis.derive.derived import Derived, RepFacts, StoredSummaries
from tlsbench.analysis.derive.measures import MeasureTable
from tlsbench.analysis.derive.slices import Events, Slices, build_slices, decode_many
from tlsbench.analysis.units import TIME, Unit
from tlsbench.analysis.vocab import vocab


@dataclass(frozen=True)
class Calibration:
    """Tracer self-calibration from an agent's HELLO (docs/protocol.md)."""

    event_cost_ns: float   # mean cost of recording one event
    empty_span_ns: float   # what an empty START/STOP pair measures
    known: bool            # False: the HELLO had none, nothing is subtracted


Config = StoredConfig  # one measured configuration: a row of the `config` table with its id
Reps = RepetitionColumns  # the `repetition` table as arrays (one index per repetition, ordered by id)


@dataclass
class Dataset:
    """Everything one report needs from one store."""

    reader: StoreReader                   # what it was loaded from (closed, maybe: `store()` opens it again)
    cache: DerivedReads                   # where its derived summaries and statistics are kept
    experiment: dict[str, Any]            # the experiment row (host_json parsed into "host")
    agents: dict[int, dict[str, Any]]     # agent id -> row with "hello" parsed
    configs: dict[int, Config]
    reps: Reps
    calib: dict[int, Calibration] = field(default_factory=dict)  # agent id -> calibration
    link_traffic: dict[int, LinkTraffic] = field(default_factory=dict)  # repetition id -> the link's (network)
    capture: StoredCapture | None = None  # a measured energy capture (`tlsbench energy import`)
    energies: WindowEnergies | None = None  # its window energies
    experiments: "Dataset | None" = None  # with a handshake dataset: the store's experiments, if any
    device_experiments: "Dataset | None" = None  # with it: the primitives the device counted, if any
    unit: Unit = TIME  # the counter's unit (HELLO clock.unit) of every span and measure here
    target: str | None = None  # the device the configurations ran on (None: the host)
    devices: list[DeviceImage] = field(default_factory=list)  # the firmware images the store ran
    host: "Dataset | None" = None  # with a device dataset: the same store's host configurations, if any
    footprint: "Dataset | None" = None  # with a device dataset: its memory image's repetitions, if any
    kind: Kind = "handshakes"  # which configurations of the store it holds
    decoded: tuple[Events, Slices] | None = None  # the traces, decoded when first asked for
    summaries: Derived | None = None  # every repetition's summaries in memory (from `stored` or `decoded` when None)
    stored: StoredSummaries | None = None  # or the store's: facts in memory, measure rows per configuration
    derived_now: int = 0  # repetitions whose summaries were not stored (derived by this load)
    stats: dict[int, StoredStats] = field(default_factory=dict)  # configuration -> its stored statistics
    skipped: list[SkippedCell] = field(default_factory=list)  # the plan's matrix cells left out (every kind's)
    counted: dict[int, TraceCounts] | None = None  # the cycle model's counts per repetition, read when first asked for

    @property
    def name(self) -> str:
        return str(self.experiment.get("name", self.reader.location.folder.name))

    @property
    def events(self) -> Events:
        return self._decoded()[0]

    @property
    def slices(self) -> Slices:
        return self._decoded()[1]

    def _decoded(self) -> tuple[Events, Slices]:
        """Every repetition's records, decoded and paired (what derived summaries spare a report)."""
        if self.decoded is None:
            mine = set(self.reps.id.tolist())  # a store being written may hold more by now
            with self.store() as store:
                traces = [t for t in store.traces(self.kind) if t[0] in mine]
            events = decode_many([t[1] for t in traces], [t[0] for t in traces])
            self.decoded = (events, build_slices(events))
        return self.decoded

    def trace_counts(self) -> dict[int, TraceCounts]:
        """Repetition id -> its records' class counts under the cycle model's plugin, or why it
        has none (plan [device] cycles); {} for a run without them."""
        if self.counted is None:
            mine = set(self.reps.id.tolist())
            with self.store() as store:
                self.counted = {r: c for r, c in store.trace_counts().items() if r in mine}
        return self.counted

    @property
    def derived(self) -> Derived:
        if self.summaries is None:
            self.summaries = (self.stored.whole(self.reps.config_id) if self.stored is not None
                              else derivation.derive_dataset(self))
        return self.summaries

    @property
    def table(self) -> MeasureTable:
        """The measures of every repetition (analysis/derive/measures.py), all in memory: what reads
        them a configuration at a time asks `config_tables` instead."""
        return self.derived.table

    @property
    def facts(self) -> RepFacts:
        """Per repetition, aligned with `reps`: what its trace says beyond measures."""
        return self.stored.facts if self.stored is not None and self.summaries is None else self.derived.facts

    @property
    def incomplete_records(self) -> int:
        """Record calls left without a completing call, over every repetition."""
        return self.stored.incomplete_records if self.stored is not None else self.derived.table.incomplete_records

    def config_tables(self, table: MeasureTable | None = None,
                      wanted: Sequence[int] | None = None) -> Iterator[tuple[int, MeasureTable]]:
        """(configuration, the measure rows of its repetitions) for each configuration with
        repetitions (or each of `wanted`), by id; a configuration's rows in table order. Of
        `table`, else of the dataset's measures: from the store one configuration at a time
        where it holds them, so only one is in memory at once."""
        config_ids = self.reps.config_id
        wanted = sorted(wanted) if wanted is not None else np.unique(config_ids).tolist()
        if table is None and self.stored is not None and self.summaries is None:
            yield from self.stored.config_tables(config_ids, wanted)
            return
        table = self.table if table is None else table
        row_cfg = config_ids[self.rep_index(table.rep)]
        rows = np.argsort(row_cfg, kind="stable")
        sorted_cfg = row_cfg[rows]
        first, last = np.searchsorted(sorted_cfg, wanted), np.searchsorted(sorted_cfg, wanted, side="right")
        for cid, a, b in zip(wanted, first.tolist(), last.tolist()):
            yield cid, derivation.take_rows(table, rows[a:b])

    def with_traces(self, reps: Reps, events: Events, slices: Slices) -> "Dataset":
        """This dataset's context over other repetitions and traces (no companions)."""
        return replace(self, reps=reps, decoded=(events, slices), summaries=None, stored=None, experiments=None,
                       host=None, footprint=None, derived_now=0, stats={})

    def traced(self, rep_ids: Sequence[int]) -> "Dataset":
        """The same dataset with only these repetitions' traces decoded (a figure, an export)."""
        if self.decoded is not None:
            return self
        with self.store() as store:
            traces = store.traces(self.kind, list(rep_ids))
        events = decode_many([t[1] for t in traces], [t[0] for t in traces])
        return replace(self, decoded=(events, build_slices(events)))

    def rep_index(self, rep_ids: np.ndarray) -> np.ndarray:
        """Positions in `reps` of repetition ids."""
        return np.searchsorted(self.reps.id, rep_ids)

    def start_values(self, spans: np.ndarray) -> np.ndarray:
        """The START record's value of each slice (a slice keeps its STOP's): a USER_GROUP's
        group index."""
        ev, slices = self.events, self.slices
        first = ev.rep_first[np.searchsorted(ev.rep_ids, slices.rep[spans])]
        return ev.rec["value"][first + slices.start_pos[spans]].astype(np.int64)

    def store(self) -> StoreReader:
        """Its store opened again, for reading: without the check of the whole file that
        load() made (seconds for a long run's store), for the sections that read more of it."""
        return self.reader.reopened()

    @contextlib.contextmanager
    def reopened(self) -> Iterator[tuple[StoreReader, DerivedReads]]:
        """Its reader and derived cache opened again (once, where they are one store), for
        loading another kind of configurations."""
        with self.store() as reader:
            if self.cache is self.reader:
                yield reader, reader
                return
            with self.cache.reopened() as cache:
                yield reader, cache

    def excluded_mask(self, include_flagged: bool = False) -> np.ndarray:
        """Per repetition: True when excluded from statistics (status != OK, a
        TRACE_OVERFLOW/RETRANSMITTED flag, or descheduled), unless include_flagged."""
        if include_flagged:
            return np.zeros(len(self.reps), dtype=bool)
        return self.flagged_mask() | self.descheduled_mask()

    def flagged_mask(self) -> np.ndarray:
        """Per repetition: True when it failed or carries a TRACE_OVERFLOW/RETRANSMITTED flag."""
        return (self.reps.status != ok_status()) | ((self.reps.flags & excluding_flags()) != 0)

    def descheduled_mask(self) -> np.ndarray:
        """Per repetition: True when another process ran in the middle of it, so its step
        times hold someone else's work. Where the agent recorded its run-queue wait (a
        RUNQUEUE_WAIT instant: every transport, two-process runs included), when that wait
        exceeds DESCHEDULED_FRACTION of the repetition (and DESCHEDULED_MIN_NS). Otherwise
        (older agents, ports that cannot tell) when the repetition's wall time exceeds its
        thread CPU time by as much, which means something only where both peers run in the
        agent's one thread (in-memory transport): a repetition over a network also waits
        for its peer."""
        dur, cpu, wait = self.facts.rep_dur, self.facts.rep_cpu, self.facts.runqueue_wait
        limit = np.maximum(DESCHEDULED_FRACTION * dur, DESCHEDULED_MIN_NS)
        in_thread = np.isin(self.reps.config_id, [c.id for c in self.configs.values()
                                                  if c.transport == IN_THREAD_TRANSPORT])
        by_wait = (wait >= 0) & (dur >= 0) & (wait > limit)
        by_cpu = (wait < 0) & in_thread & (dur >= 0) & (cpu >= 0) & (dur - cpu > limit)
        return by_wait | by_cpu

    def runqueue_wait_known(self) -> np.ndarray:
        """Per repetition: True when the agent recorded its run-queue wait."""
        return self.facts.runqueue_wait >= 0


# A timer interrupt steals a few µs; a preemption steals a scheduler slice (ms).
DESCHEDULED_FRACTION = 0.02
DESCHEDULED_MIN_NS = 50_000
IN_THREAD_TRANSPORT = "memory"


def ok_status() -> str:
    """The status name a successful repetition has (value 0 in spec [status])."""
    return next(k for k, v in vocab().status.items() if v == 0)


def excluding_flags() -> int:
    """Flag bits that exclude a repetition from statistics by default."""
    f = vocab().flags
    return f["TRACE_OVERFLOW"] | f["RETRANSMITTED"]


