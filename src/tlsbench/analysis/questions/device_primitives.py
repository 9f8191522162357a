# SPDX-License-Identifier: Apache-2.0
"""The crypto primitives on the device (configurations of kind device_experiment): per
operation (experiment, payload, group) the count of each target × library build, and the
core each target's counts are of (what the one conversion, models/conversion.py, needs to
turn them into a board's time). A count is never called a time.

A group's value in a repetition is its processing as for the host's primitives
(questions/primitives.py group_values: the span's count minus the tracer's own counted cost);
counts are exact per repetition, random keys and nonces move them between repetitions, so
the median is shown with the range of the repetitions."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.questions.primitives import group_values, merged_order

Place = tuple[str, str]  # (target, library build): one column of the table


@dataclass(frozen=True)
class Count:
    """One operation's counts on one target × library build."""

    median: float
    low: float  # the fewest of the repetitions
    high: float  # the most
    n: int


@dataclass(frozen=True)
class Operation:
    """One row: an experiment's group at a payload size, on every place that ran it."""

    experiment: str
    size: int  # payload bytes; 0 when the experiment takes none
    group: str
    counts: dict[Place, Count]


@dataclass
class DevicePrimitives:
    unit: str  # the counter's unit (HELLO clock.unit), e.g. "instructions (QEMU icount)"
    places: list[Place]  # columns: targets in the plan's order, each library build in its order
    cores: dict[str, str]  # target -> the core its counts are of (HELLO device.cpu)
    operations: list[Operation]
    not_measured: list[str] = field(default_factory=list)  # "library experiment on target: reason"


def _plan_order(ds: Dataset, key: str) -> list[str]:
    named = (json.loads(ds.experiment.get("plan_json") or "{}").get("device") or {}).get(key) or []
    return [named] if isinstance(named, str) else list(named)


def _cores(ds: Dataset) -> dict[str, str]:
    return {str(a["target"]): str((a["hello"].get("device") or {}).get("cpu"))
            for a in ds.agents.values() if a.get("target")}


def analyze(ds: Dataset, include_flagged: bool = False) -> DevicePrimitives:
    """The section of a dataset loaded with kind device_experiments."""
    gv = group_values(ds, include_flagged)
    rows: dict[tuple[str, int, str], dict[Place, Count]] = {}
    rank: dict[tuple[str, int, str], tuple[int, int]] = {}  # experiment's first config id, group index
    for (cid, g), values in sorted(gv.values.items()):
        c = ds.configs[cid]
        groups = json.loads(c.experiment_groups or "[]")
        key = (c.experiment, c.total_bytes, groups[g] if 0 <= g < len(groups) else f"group {g}")
        rows.setdefault(key, {})[(c.target, c.library)] = Count(float(np.median(values)), float(values.min()),
                                                                  float(values.max()), len(values))
        rank.setdefault(key, (min(i for i, x in ds.configs.items() if x.experiment == c.experiment), g))
    targets = merged_order([_plan_order(ds, "target"), sorted({c.target for c in ds.configs.values()})])
    libraries = merged_order([_plan_order(ds, "library"), sorted({c.library for c in ds.configs.values()})])
    present = {(c.target, c.library) for c in ds.configs.values()}
    out = DevicePrimitives(ds.unit.name, [(t, lib) for t in targets for lib in libraries if (t, lib) in present],
                           _cores(ds), [Operation(*key, counts) for key, counts in
                                        sorted(rows.items(), key=lambda kv: (rank[kv[0]][0], kv[0][1], rank[kv[0]][1]))])
    out.not_measured = [f"{c.library} {c.experiment} on {c.target}: {c.skip_reason}"
                        for c in ds.configs.values() if c.skip_reason]
    return out
