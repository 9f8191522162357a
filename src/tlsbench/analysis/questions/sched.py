# SPDX-License-Identifier: Apache-2.0
"""The scheduler's view of a run (plan `metrics = [..., "sched"]`, run/tracefs.py), in
IoTST's terms: per configuration, the agent's CPU usage and the idle share of its CPUs,
voluntary and involuntary switches, time runnable but waiting, the longest uninterrupted
run, the steps the scheduler interrupted; softirq time of network runs. Only repetitions
that were traced count; what is missing is said, with why."""
from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

import numpy as np

from tlsbench.schema import SchedRepetition, SchedStep, SchedTables

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.results import Analysis


@dataclass(frozen=True)
class ConfigSched:
    """One configuration's scheduler figures over its traced repetitions."""

    config_id: int
    config: str
    traced: int  # repetitions with figures
    stored: int  # repetitions stored
    busy_share: float  # median over repetitions: the agent on a CPU / wall
    idle_share: float  # median: the agent's CPUs idle / (wall × CPUs)
    voluntary: float  # mean switches per repetition
    involuntary: float
    preempted_share: float  # repetitions with an involuntary switch
    wait_us: float  # median runnable-but-waiting per repetition
    wait_max_us: float
    longest_run_us: float  # median of each repetition's longest uninterrupted run
    shortest_longest_run_us: float  # the least any repetition got in one go
    steps_interrupted_share: float
    softirq_agent_us: float  # median per repetition (nan: not traced)
    softirq_other_us: float


@dataclass(frozen=True)
class StepSched:
    """A step label the scheduler interrupted, over a configuration's traced repetitions."""

    config: str
    peer: str
    label: str
    interrupted: int  # occurrences with a switch or a wait
    involuntary: int
    voluntary: int
    wait_us: float  # total


@dataclass
class SchedResults:
    asked: bool  # the plan's metrics name "sched"
    missing: list[str]  # why a capture had no tracefs (one per distinct reason)
    configs: list[ConfigSched] = field(default_factory=list)
    steps: list[StepSched] = field(default_factory=list)
    cpus: list[list[int]] = field(default_factory=list)  # CPU sets traced
    lost_events: int = 0
    agents: list[dict] = field(default_factory=list)  # /proc totals per agent process

    @property
    def measured(self) -> bool:
        return bool(self.configs)


def plan_metrics(experiment: dict) -> list[str]:
    try:
        return list(json.loads(experiment.get("plan_json") or "{}").get("metrics") or ["time"])
    except (ValueError, AttributeError):
        return ["time"]


def _tables(ds: Dataset) -> SchedTables:
    with ds.store() as store:
        return store.sched_tables()


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def collect(analysis: Analysis) -> SchedResults | None:
    """The scheduler section's figures; None when the plan did not ask and nothing was stored."""
    ds, labels = analysis.ds, analysis.results.config_labels
    asked = "sched" in plan_metrics(ds.experiment)
    tables = _tables(ds)
    if not asked and not tables.captures:
        return None
    captures = tables.captures
    facts = [json.loads(c.facts_json or "{}") for c in captures]
    res = SchedResults(asked, sorted({c.missing for c in captures if c.missing}),
                       cpus=sorted({tuple(f.get("cpus", [])) for f in facts if f.get("cpus")}),  # type: ignore[arg-type]
                       lost_events=sum(int(f.get("lost", 0)) for f in facts))
    res.cpus = [list(c) for c in res.cpus]
    stored = Counter(int(c) for c in ds.reps.config_id)
    by_config: dict[int, list[SchedRepetition]] = defaultdict(list)
    for row in tables.repetitions:
        by_config[row.config_id].append(row)
    for cid in sorted(by_config, key=lambda c: labels.get(c, str(c))):
        if cid in labels:
            res.configs.append(_config(cid, labels[cid], by_config[cid], stored.get(cid, 0)))
    res.steps = _steps(tables.steps, labels)
    res.agents = [asdict(r) for r in tables.agents]
    return res


def _config(cid: int, name: str, rows: list[SchedRepetition], stored: int) -> ConfigSched:
    wall = [max(r.wall_ns, 1) for r in rows]
    n = len(rows)
    softirq = [r for r in rows if r.softirq_agent_ns is not None]
    steps = sum(r.steps for r in rows)
    return ConfigSched(
        cid, name, n, stored,
        busy_share=_median([r.busy_ns / w for r, w in zip(rows, wall)]),
        idle_share=_median([r.idle_ns / (w * max(r.cpus, 1)) for r, w in zip(rows, wall)]),
        voluntary=sum(r.voluntary for r in rows) / n, involuntary=sum(r.involuntary for r in rows) / n,
        preempted_share=sum(1 for r in rows if r.involuntary) / n,
        wait_us=_median([r.wait_ns / 1e3 for r in rows]), wait_max_us=max(r.wait_ns for r in rows) / 1e3,
        longest_run_us=_median([r.longest_run_ns / 1e3 for r in rows]),
        shortest_longest_run_us=min(r.longest_run_ns for r in rows) / 1e3,
        steps_interrupted_share=sum(r.steps_interrupted for r in rows) / steps if steps else math.nan,
        softirq_agent_us=_median([r.softirq_agent_ns / 1e3 for r in softirq]),
        softirq_other_us=_median([r.softirq_other_ns / 1e3 for r in softirq]))


def _steps(rows: list[SchedStep], labels: dict[int, str]) -> list[StepSched]:
    """Interrupted step labels, most interrupted first."""
    grouped: dict[tuple[int, str, str], list[SchedStep]] = defaultdict(list)
    for r in rows:
        if r.config_id in labels:
            grouped[(r.config_id, r.peer, r.label)].append(r)
    out = [StepSched(labels[cid], peer, label, len(g), sum(r.involuntary for r in g),
                     sum(r.voluntary for r in g), sum(r.wait_ns for r in g) / 1e3)
           for (cid, peer, label), g in grouped.items()]
    return sorted(out, key=lambda s: (-s.interrupted, s.config, s.peer, s.label))


def missing_text(res: SchedResults) -> str | None:
    """What the report and the CLI say when the plan asked and nothing was traced."""
    if not res.asked or res.measured:
        return None
    why = "; ".join(res.missing) or "no repetition was traced (the run stored none since it asked)"
    return (f"The plan asks for the scheduler's view (metrics \"sched\"), and it is missing: {why}. "
            "Switches, busy and idle share and the longest uninterrupted run need tracefs; run-queue wait "
            "per repetition is measured anyway (from the agent's schedstat).")


# Columns of the export and the report's table: (header, attribute, scale, digits).
TABLE = (("traced reps", "traced", 1, 0), ("CPU usage (agent busy share)", "busy_share", 1, 3),
         ("idle share of its CPUs", "idle_share", 1, 3), ("voluntary switches / rep", "voluntary", 1, 2),
         ("involuntary switches / rep", "involuntary", 1, 2), ("reps preempted", "preempted_share", 1, 3),
         ("runnable waiting, median µs", "wait_us", 1, 1), ("longest uninterrupted run, median µs", "longest_run_us", 1, 0),
         ("shortest longest run, µs", "shortest_longest_run_us", 1, 0),
         ("steps interrupted", "steps_interrupted_share", 1, 4),
         ("net softirq in agents, median µs", "softirq_agent_us", 1, 1),
         ("net softirq elsewhere, median µs", "softirq_other_us", 1, 1))
