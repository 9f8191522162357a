# SPDX-License-Identifier: Apache-2.0
"""Read an experiment store into arrays (a Dataset): the input of every analysis.

Analysis is handed a reader and a derived cache (store/api.py), never a path or a
connection; it never writes to the store and never re-runs anything: a report is a pure
function of the store. What it needs of each repetition's trace are its summaries
(analysis/derive/derived.py): read from the cache where `tlsbench derive` (or the end of
`tlsbench run`) stored them, derived in memory a batch at a time otherwise. The records
themselves are decoded only when something asks for `events` or `slices` (a figure of one
repetition, an energy estimate).
"""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import numpy as np

from tlsbench.store.api import DerivedReads, Kind, StoreReader

from tlsbench.analysis.derive import derived as derivation
from tlsbench.analysis.derive.dataset import Calibration, Dataset
from tlsbench.analysis.derive.derived import Derived, StoredSummaries
from tlsbench.analysis.derive.slices import build_slices, decode_many
from tlsbench.analysis.units import TIME, Unit, of_hello


def _calibration(hello: dict) -> Calibration:
    tr = hello.get("tracer") or {}
    e, c = tr.get("empty_span_ns"), tr.get("event_cost_ns")
    if not tr.get("enabled", True) or e is None:
        return Calibration(0.0, 0.0, False)
    return Calibration(float(c if c is not None else e), float(e), True)


KINDS: dict[bool | None, Kind] = {False: "handshakes", True: "experiments", None: "all"}


def _unit(agents: dict[int, dict[str, Any]], agent_ids: np.ndarray, device: bool) -> tuple[Unit, str | None]:
    """The counter unit (and device) of the agents that measured a dataset's repetitions; a
    dataset holds one kind of place, so they agree (else the first one's is taken)."""
    used = [agents[a] for a in dict.fromkeys(agent_ids.tolist()) if a in agents]
    used = used or [a for a in agents.values() if bool(a.get("target")) == device]
    if not used:
        return TIME, None
    return of_hello(used[0]["hello"]), used[0].get("target") if device else None


def load(store: StoreReader, cache: DerivedReads, rep_ids: list[int] | None = None,
         experiments: bool | None = False, kind: Kind | None = None) -> Dataset:
    """Load a store (its summaries from `cache` where they are kept); ``rep_ids`` restricts
    the traces decoded (a precision check of a few configurations). The handshake
    configurations and their repetitions, or with ``experiments`` those of the experiments
    (analysis/questions/primitives.py): each analysis sees only its own kind; a whole
    handshake dataset carries the store's experiments along, read in the same visit. None
    loads both kinds (aligning a power capture, whose marker pulses mark every repetition).
    The handshakes of a store with a device are the device's (one counter unit per dataset):
    the host's and the memory image's come along as companions.
    ``kind`` names one kind of configuration instead."""
    if kind is None:
        kind = KINDS[experiments]
        kind = "device" if kind == "handshakes" and store.has("device") else kind
    ds = load_tables(store, cache, kind)
    if rep_ids is not None:
        traces = store.traces(kind, rep_ids)
        events = decode_many([t[1] for t in traces], [t[0] for t in traces])
        ds.decoded = (events, build_slices(events))
    else:
        ds.stored, ds.derived_now = summaries(store, cache, ds)
        ds.stats = cache.derived_stats(kind) if not ds.stored.twice else {}  # computed from those copies
    whole = rep_ids is None and kind in ("handshakes", "device")
    ds.experiments = load(store, cache, experiments=True) if whole and store.has_experiments() else None
    ds.device_experiments = (load(store, cache, kind="device_experiments")
                             if whole and store.has("device_experiments") else None)
    on_device = whole and kind == "device"
    ds.host = load(store, cache, kind="handshakes") if on_device and store.has("handshakes") else None
    ds.footprint = load(store, cache, kind="footprint") if on_device and store.has("footprint") else None
    return ds


def load_tables(store: StoreReader, cache: DerivedReads, kind: Kind) -> Dataset:
    """A kind's dataset without its traces: the experiment, agents, configurations and
    repetitions, the link's traffic and the energy capture."""
    row = store.experiment()
    exp = asdict(row) if row else {}
    exp["host"] = json.loads(exp.get("host_json") or "{}")
    agents = {}
    for row in store.agent_rows():
        agents[row.id] = {**asdict(row), "hello": json.loads(row.hello_json or "{}")}
    configs = {c.id: c for c in store.config_rows(kind)}
    reps = store.repetition_columns(kind)
    capture = store.energy_capture()
    unit, target = _unit(agents, reps.agent_id, kind in ("device", "footprint"))
    return Dataset(reader=store, cache=cache, experiment=exp, agents=agents, configs=configs, reps=reps,
                   calib={aid: _calibration(a["hello"]) for aid, a in agents.items()},
                   link_traffic=store.link_traffic() if kind != "experiments" else {}, capture=capture,
                   energies=store.window_energies(capture.id) if capture else None,
                   unit=unit, target=target, devices=store.devices(), kind=kind, skipped=store.skipped_cells())


def summaries(store: StoreReader, cache: DerivedReads, ds: Dataset, derive: bool = True
              ) -> tuple[StoredSummaries, int]:
    """A dataset's summaries: the facts of those stored by this version of the derivation
    (their measure rows stay in the store until a configuration is read), the rest derived
    now from the records (a batch at a time; without `derive`, left without any); and how
    many were not stored."""
    facts, incomplete = [], 0
    for batch in cache.derived_batches(ds.kind, derivation.DERIVE_VERSION, measures=False):
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
    return StoredSummaries(cache, ds.kind, everything.facts, stored, fresh,
                           incomplete + fresh.table.incomplete_records, twice), len(missing)
