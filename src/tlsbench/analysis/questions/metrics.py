# SPDX-License-Identifier: Apache-2.0
"""Metrics beyond time (docs/metrics.md), per slice, from the metric twins' repetitions:

- instructions: the twins counted under tbcount are a dataset of their own whose counter is
  the instruction count (HELLO clock.unit names ISA, runner and CPU model); their slices go
  through the same measures as time (tracer cost subtracted, as calibrated in instructions),
  and each peer's handshake and each step get the same statistics;
- memory: the memory twins' records of category memory, each attributed to the slice the
  spec says it describes ([metric.*] labels: a step's records to the step span just before
  them), one value per repetition (a step that runs twice: its peak is the larger, its
  bytes allocated the sum), then the same statistics.

Rows name the time configuration they are the twin of, so a table can sit beside it."""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
import numpy as np

from tlsbench.core import spec as specmod
from tlsbench.store.api import DerivedReads, StoreReader

from tlsbench.analysis.derive.dataset import Dataset

from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.measures import METRIC
from tlsbench.analysis.derive.samples import config_labels
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.vocab import vocab

HANDSHAKE = "handshake"
# How one repetition's values of a slice combine (spec [metric.*] aggregation).
_COMBINE = {"peak": max, "sum": lambda a, b: a + b, "instant": lambda a, b: b}
# Which kind of repetition the store holds for each collect, and why a chosen metric has none.
_KINDS = {"instructions": "instructions", "memory": "memory"}
_NOT_MEASURED = ("chosen in the plan but not in this store: the run warned why when it started "
                 "(e.g. no valgrind: install it, scripts/install-deps.sh)")


@dataclass(frozen=True)
class MetricRow:
    """One metric of one slice of one peer of one configuration, over its repetitions."""

    config_id: int  # the twin's
    config_key: str  # the time configuration's key (the twin's without |collect:...)
    config: str  # display name
    library: str
    suite: str
    metric: str  # spec [metric.*] name
    unit: str  # ns, instructions, B
    slice: str  # "handshake", a step label, "connected", "repetition", "shared"
    peer: str
    summary: Summary


@dataclass
class MetricResults:
    chosen: list[str]  # the plan's metrics
    rows: list[MetricRow] = field(default_factory=list)
    instructions_unit: str = ""  # HELLO clock.unit of the counting agents: ISA, runner, CPU model
    missing: dict[str, str] = field(default_factory=dict)  # chosen metric -> why it has no values

    def of(self, metric: str) -> list[MetricRow]:
        return [r for r in self.rows if r.metric == metric]


def time_key(key: str) -> str:
    """The key of the time configuration a twin belongs to."""
    return key.split("|collect:")[0]


def analyze_metrics(store: StoreReader, cache: DerivedReads, seed: int = 0) -> MetricResults | None:
    """The metrics beyond time a store holds (None when its plan chose none and it has none)."""
    plan = json.loads((store.experiment().plan_json if store.experiment() else None) or "{}")
    chosen = list(plan.get("metrics") or ["time"])
    present = {c: store.has(kind) for c, kind in _KINDS.items()}
    if len(chosen) <= 1 and not any(present.values()):
        return None
    out = MetricResults(chosen)
    spec = specmod.load()
    for name in chosen:
        collect = next((m.collect for m in spec.metrics.values() if m.plan == name), "time")
        if collect in present and not present[collect]:
            out.missing[name] = _NOT_MEASURED
    if present["instructions"]:
        _instructions(load(store, cache, kind="instructions"), seed, out)
    if present["memory"]:
        _memory(load(store, cache, kind="memory"), seed, out)
    return out


def metrics_of(ds: Dataset, seed: int) -> MetricResults | None:
    """The metrics beyond time of a loaded dataset's store, read without checking it again."""
    with ds.reopened() as (store, cache):
        return analyze_metrics(store, cache, seed)


def _usable(ds: Dataset) -> set[int]:
    ok = ds.reps.status == "OK"
    keep = ok & ~ds.flagged_mask()
    return set(ds.reps.id[keep].tolist())


def _row(ds: Dataset, labels: dict[int, str], cid: int, metric: str, unit: str, slice_: str, peer: str,
         values: list[float], seed: int) -> MetricRow:
    c = ds.configs[cid]
    summary = summarize(np.asarray(values, dtype=np.float64), rng_for(seed, c.key, metric, slice_, peer),
                        mean_ci=False)
    return MetricRow(cid, time_key(c.key), labels[cid], c.library, c.suite_name, metric, unit, slice_, peer, summary)


def _instructions(ds: Dataset, seed: int, out: MetricResults) -> None:
    out.instructions_unit = ds.unit.name
    voc = vocab()
    table = ds.table  # the derived summaries' measures (analysis/derive/derived.py)
    usable = _usable(ds)
    config_of = dict(zip(ds.reps.id.tolist(), ds.reps.config_id.tolist()))
    values: dict[tuple[int, str, str], list[float]] = defaultdict(list)
    for code, slice_of in ((METRIC["handshake_processing"], lambda label: HANDSHAKE),
                           (METRIC["step"], lambda label: voc.name(label))):
        sel = table.metric == code
        for rep, peer, label, value in zip(table.rep[sel].tolist(), table.peer[sel].tolist(),
                                           table.label[sel].tolist(), table.value[sel].tolist()):
            if rep in usable:
                values[(config_of[rep], slice_of(label), voc.peer_name(peer))].append(value)
    labels = config_labels(ds.configs)
    out.rows += [_row(ds, labels, cid, "instructions", "instructions", slice_, peer, v, seed)
                 for (cid, slice_, peer), v in sorted(values.items())]


def memory_values(ds: Dataset, usable: set[int]) -> dict[tuple[int, int, str, str, str], float]:
    """Each usable repetition's memory values: (repetition, configuration, metric, slice, peer)
    -> bytes, every record attributed to the slice the spec says it describes."""
    spec, voc = specmod.load(), vocab()
    carried = {spec.label_by_name[label].id: (m, slice_)
               for m in spec.metrics.values() for label, slice_ in m.labels.items()}
    steps = spec.label_ids("step")
    stop = voc.kinds["STOP"]
    config_of = dict(zip(ds.reps.id.tolist(), ds.reps.config_id.tolist()))
    per_rep: dict[tuple[int, int, str, str, str], float] = {}
    rec, reps = ds.events.rec, ds.events.rep
    last_step: dict[tuple[int, int], int] = {}  # (rep, peer) -> the step label that stopped last
    for rep, label, kind, peer, value in zip(reps.tolist(), rec["label"].tolist(), rec["kind"].tolist(),
                                             rec["peer"].tolist(), rec["value"].tolist()):
        if rep not in usable:
            continue
        if kind == stop and label in steps:
            last_step[(rep, peer)] = label
            continue
        if label not in carried:
            continue
        metric, slice_ = carried[label]
        if slice_ == "step":
            step = last_step.get((rep, peer))
            if step is None:
                continue  # a step call that emitted no step span (it only waited)
            slice_ = voc.name(step)
        key = (rep, config_of[rep], metric.name, slice_, voc.peer_name(peer))
        per_rep[key] = _COMBINE[metric.aggregation](per_rep[key], value) if key in per_rep else value
    return per_rep


def _memory(ds: Dataset, seed: int, out: MetricResults) -> None:
    values: dict[tuple[int, str, str, str], list[float]] = defaultdict(list)
    for (rep, cid, metric_name, slice_, peer), v in memory_values(ds, _usable(ds)).items():
        values[(cid, metric_name, slice_, peer)].append(float(v))
    labels = config_labels(ds.configs)
    spec = specmod.load()
    out.rows += [_row(ds, labels, cid, metric_name, spec.metrics[metric_name].unit, slice_, peer, v, seed)
                 for (cid, metric_name, slice_, peer), v in sorted(values.items())]
