# SPDX-License-Identifier: Apache-2.0
"""Read an experiment store (read-only) into arrays: the input of every analysis.

Analysis never writes to the store and never re-runs anything: a report is a pure function
of the file. What it needs of each repetition's trace are its summaries (analysis/derive/derived.py):
read from the store where `tlsbench derive` (or the end of `tlsbench run`) stored them,
derived in memory a batch at a time otherwise. The records themselves are decoded only when
something asks for `events` or `slices` (a figure of one repetition, an energy estimate).
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from tlsbench.plan.configs import SkippedCell
from tlsbench.run.records import LinkTraffic
from tlsbench.store.energy import StoredCapture, WindowEnergies
from tlsbench.store.reader import DeviceImage, Kind, StoreReader, StoredConfig, StoredStats
from tlsbench.store.sqlite import Store

from tlsbench.analysis.derive import derived as derivation
from tlsbench.analysis.derive.derived import Derived, RepFacts, StoredSummaries
from tlsbench.analysis.derive.measures import MeasureTable
from tlsbench.analysis.derive.slices import Events, Slices, build_slices, decode_many
from tlsbench.analysis.units import TIME, Unit, of_hello
from tlsbench.analysis.vocab import vocab


@dataclass(frozen=True)
class Calibration:
    """Tracer self-calibration from an agent's HELLO (docs/protocol.md)."""

    event_cost_ns: float   # mean cost of recording one event
    empty_span_ns: float   # what an empty START/STOP pair measures
    known: bool            # False: the HELLO had none, nothing is subtracted


Config = StoredConfig  # one measured configuration: a row of the `config` table with its id


@dataclass
class Reps:
    """The `repetition` table as arrays (one index per repetition, ordered by id)."""

    id: np.ndarray
    config_id: np.ndarray
    idx: np.ndarray
    round: np.ndarray
    agent_id: np.ndarray     # −1 when unknown
    status: np.ndarray       # spec [status] names (object array)
    flags: np.ndarray
    error_code: np.ndarray
    bytes_c2s: np.ndarray    # −1 when unknown
    bytes_s2c: np.ndarray
    dropped: np.ndarray
    handshake_wall_ns: np.ndarray
    handshake_cpu_ns: np.ndarray
    n_events: np.ndarray     # records stored

    def __len__(self) -> int:
        return len(self.id)


@dataclass
class Dataset:
    """Everything one report needs from one store."""

    path: Path
    experiment: dict[str, Any]            # the experiment row (host_json parsed into "host")
    agents: dict[int, dict[str, Any]]     # agent id -> row with "hello" parsed
    configs: dict[int, Config]
    reps: Reps
    calib: dict[int, Calibration] = field(default_factory=dict)  # agent id -> calibration
    link_traffic: dict[int, LinkTraffic] = field(default_factory=dict)  # repetition id -> the link's (network)
    capture: StoredCapture | None = None  # a measured energy capture (`tlsbench energy import`)
    energies: WindowEnergies | None = None  # its window energies
    experiments: "Dataset | None" = None  # with a handshake dataset: the store's experiments, if any
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

    @property
    def name(self) -> str:
        return str(self.experiment.get("name", self.path.stem))

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
            with reading(self.path) as store:
                traces = [t for t in store.traces(self.kind) if t[0] in mine]
            events = decode_many([t[1] for t in traces], [t[0] for t in traces])
            self.decoded = (events, build_slices(events))
        return self.decoded

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
        with reading(self.path) as store:
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

    def store(self) -> Store:
        """Its store opened again, for reading: without the check of the whole file that
        load() made (seconds for a long run's store), for the sections that read more of it."""
        return Store.reopen_readonly(self.path)

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


def _calibration(hello: dict) -> Calibration:
    tr = hello.get("tracer") or {}
    e, c = tr.get("empty_span_ns"), tr.get("event_cost_ns")
    if not tr.get("enabled", True) or e is None:
        return Calibration(0.0, 0.0, False)
    return Calibration(float(c if c is not None else e), float(e), True)


@contextlib.contextmanager
def reading(source: str | Path | StoreReader) -> Iterator[StoreReader]:
    """A store to read: an open one as it is, a path opened (checked, read-only) and closed
    after: a missing, empty, damaged or foreign file is one clear StoreError, and nothing is
    ever written to it."""
    if not isinstance(source, (str, Path)):
        yield source
        return
    with Store.open_readonly(Path(source)) as store:
        yield store


KINDS: dict[bool | None, Kind] = {False: "handshakes", True: "experiments", None: "all"}


def _unit(agents: dict[int, dict[str, Any]], agent_ids: np.ndarray, device: bool) -> tuple[Unit, str | None]:
    """The counter unit (and device) of the agents that measured a dataset's repetitions; a
    dataset holds one kind of place, so they agree (else the first one's is taken)."""
    used = [agents[a] for a in dict.fromkeys(agent_ids.tolist()) if a in agents]
    used = used or [a for a in agents.values() if bool(a.get("target")) == device]
    if not used:
        return TIME, None
    return of_hello(used[0]["hello"]), used[0].get("target") if device else None


def load(source: str | Path | StoreReader, rep_ids: list[int] | None = None, experiments: bool | None = False,
         path: Path | None = None, kind: Kind | None = None) -> Dataset:
    """Load a store; ``rep_ids`` restricts the traces decoded (a precision check of a few
    configurations). The handshake configurations and their repetitions, or with
    ``experiments`` those of the experiments (analysis/questions/primitives.py): each analysis sees only
    its own kind; a whole handshake dataset carries the store's experiments along, read in
    the same visit. None loads both kinds (aligning a power capture, whose marker pulses
    mark every repetition). The handshakes of a store with a device are the device's (one
    counter unit per dataset): the host's and the memory image's come along as companions.
    ``kind`` names one kind of configuration instead."""
    with reading(source) as store:
        if kind is None:
            kind = KINDS[experiments]
            kind = "device" if kind == "handshakes" and store.has("device") else kind
        ds = load_tables(store, kind, path)
        if rep_ids is not None:
            traces = store.traces(kind, rep_ids)
            events = decode_many([t[1] for t in traces], [t[0] for t in traces])
            ds.decoded = (events, build_slices(events))
        else:
            ds.stored, ds.derived_now = summaries(store, ds)
            ds.stats = store.derived_stats(kind) if not ds.stored.twice else {}  # computed from those copies
        whole = rep_ids is None and kind in ("handshakes", "device")
        ds.experiments = load(store, experiments=True, path=ds.path) if whole and store.has_experiments() else None
        on_device = whole and kind == "device"
        ds.host = load(store, path=ds.path, kind="handshakes") if on_device and store.has("handshakes") else None
        ds.footprint = load(store, path=ds.path, kind="footprint") if on_device and store.has("footprint") else None
    return ds


def load_tables(store: StoreReader, kind: Kind, path: Path | None = None) -> Dataset:
    """A kind's dataset without its traces: the experiment, agents, configurations and
    repetitions, the link's traffic and the energy capture."""
    row = store.experiment()
    exp = asdict(row) if row else {}
    exp["host"] = json.loads(exp.get("host_json") or "{}")
    agents = {}
    for row in store.agent_rows():
        agents[row.id] = {**asdict(row), "hello": json.loads(row.hello_json or "{}")}
    configs = {c.id: c for c in store.config_rows(kind)}
    cols = store.repetition_columns(kind)
    reps = Reps(
        id=cols.id, config_id=cols.config_id, idx=cols.idx, round=cols.round, agent_id=cols.agent_id,
        status=cols.status, flags=cols.flags, error_code=cols.error_code, bytes_c2s=cols.bytes_c2s,
        bytes_s2c=cols.bytes_s2c, dropped=cols.dropped_events, handshake_wall_ns=cols.handshake_wall_ns,
        handshake_cpu_ns=cols.handshake_cpu_ns, n_events=cols.n_events,
    )
    del cols
    capture = store.energy_capture()
    unit, target = _unit(agents, reps.agent_id, kind in ("device", "footprint"))
    return Dataset(path=path or store.path, experiment=exp, agents=agents, configs=configs, reps=reps,
                   calib={aid: _calibration(a["hello"]) for aid, a in agents.items()},
                   link_traffic=store.link_traffic() if kind != "experiments" else {}, capture=capture,
                   energies=store.window_energies(capture.id) if capture else None,
                   unit=unit, target=target, devices=store.devices(), kind=kind, skipped=store.skipped_cells())


def summaries(store: StoreReader, ds: Dataset, derive: bool = True) -> tuple[StoredSummaries, int]:
    """A dataset's summaries: the facts of those stored by this version of the derivation
    (their measure rows stay in the store until a configuration is read), the rest derived
    now from the records (a batch at a time; without `derive`, left without any); and how
    many were not stored."""
    facts, incomplete = [], 0
    for batch in store.derived_batches(ds.kind, derivation.DERIVE_VERSION, measures=False):
        facts.append(derivation.facts_from_stored(batch))
        incomplete += batch.incomplete_records
    have = np.concatenate([f.id for f in facts]) if facts else np.empty(0, np.int64)
    twice = derivation.stored_twice(have)
    if twice:
        facts, incomplete, have = [], 0, have[:0]
    stored = np.isin(ds.reps.id, have)
    missing = np.flatnonzero(~stored)
    parts = derivation.derive_missing(ds, missing, lambda ids: store.traces(ds.kind, ids), ds.reps.n_events)
    fresh = derivation.combine(list(parts) if derive else [], ds.reps.id[missing])
    everything = derivation.combine([Derived(f, derivation.EMPTY_TABLE) for f in facts] + [fresh], ds.reps.id)
    return StoredSummaries(store.path, ds.kind, everything.facts, stored, fresh,
                           incomplete + fresh.table.incomplete_records, twice), len(missing)
