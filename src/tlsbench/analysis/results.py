# SPDX-License-Identifier: Apache-2.0
"""The one result type of an analysis: every exporter and the report read a `Results`.

(cf. hyperfine src/export/mod.rs: one result type, one exporter interface.)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .load import Config, Dataset, ok_status
from .measures import METRIC, METRICS, NO_LABEL, NO_PEER, MeasureTable, SliceCosts, measures, slice_costs
from .stats import Summary, rng_for, summarize
from .vocab import vocab

# Measures whose mean CI is shown (the mean's resampling costs n draws per resample).
HEADLINE = frozenset({"handshake_processing", "handshake_time", "write_processing",
                      "write_processing_post", "write_total", "read_processing",
                      "read_processing_pre", "read_total"})

GroupKey = tuple[int, int, int, int]  # (config id, peer, metric code, label)


@dataclass
class Samples:
    """Values per (config, peer, metric, label) after exclusions."""

    values: dict[GroupKey, np.ndarray]
    excluded_reps: dict[int, int]      # config id -> repetitions excluded
    used_reps: dict[int, int]          # config id -> repetitions used
    rounds: dict[GroupKey, np.ndarray] = field(default_factory=dict)  # the round of each value

    def get(self, config: int, metric: str, peer: int = NO_PEER, label: int = NO_LABEL) -> np.ndarray:
        return self.values.get((config, peer, METRIC[metric], label), np.empty(0))


def split_samples(ds: Dataset, mt: MeasureTable, include_flagged: bool = False) -> Samples:
    excl = ds.excluded_mask(include_flagged)
    rep_pos = ds.rep_index(mt.rep)
    keep = ~excl[rep_pos]
    cfg = ds.reps.config_id[rep_pos][keep]
    peer, metric, label, value = mt.peer[keep], mt.metric[keep], mt.label[keep], mt.value[keep]
    order = np.lexsort((label, metric, peer, cfg))
    cols = [a[order] for a in (cfg, peer, metric, label)]
    value, rounds = value[order], ds.reps.round[rep_pos][keep][order]
    change = np.r_[True, np.any([c[1:] != c[:-1] for c in cols], axis=0)] if len(value) else np.empty(0, bool)
    starts = np.flatnonzero(change)
    ends = np.r_[starts[1:], len(value)]
    keys = [tuple(int(c[s]) for c in cols) for s in starts]
    ex_cfg = ds.reps.config_id[excl]
    return Samples({k: value[s:e] for k, s, e in zip(keys, starts, ends)},
                   excluded_reps={c: int(np.count_nonzero(ex_cfg == c)) for c in ds.configs},
                   used_reps={c: int(np.count_nonzero((ds.reps.config_id == c) & ~excl)) for c in ds.configs},
                   rounds={k: rounds[s:e] for k, s, e in zip(keys, starts, ends)})


@dataclass(frozen=True)
class Row:
    """Statistics of one measure of one configuration."""

    config_id: int
    peer: str            # spec peer name
    metric: str          # a METRICS name
    label: str           # step/crypto/record label name, "" for whole-peer measures
    unit: str
    summary: Summary


@dataclass(frozen=True)
class Context:
    """What a reader needs to trust and reproduce the numbers."""

    experiment: str
    created_at: str
    seed: int
    host: dict
    libraries: list[str]        # "mbed TLS 2.28.3" per agent
    clock: dict                 # HELLO clock block of the first agent
    calibration: dict           # HELLO tracer block of the first agent
    overhead_known: bool        # False: the agent reported no calibration, nothing subtracted
    n_reps: int
    status_counts: dict[str, int]
    flag_counts: dict[str, int]
    excluded: int               # repetitions excluded from statistics
    descheduled: int            # of which: wall time well above CPU time (another process ran)
    include_flagged: bool
    unbalanced_reps: int        # traces that needed repair (open spans)
    orphan_stops: int
    dropped_events: int
    incomplete_records: int


@dataclass
class Results:
    """Everything a report or export shows, computed once."""

    context: Context
    configs: dict[int, Config]
    config_labels: dict[int, str]
    rows: list[Row]
    warnings: list[str] = field(default_factory=list)
    winners: list = field(default_factory=list)      # analysis.winners.Winner
    groups: list = field(default_factory=list)       # analysis.groups.GroupTable
    comparison: object | None = None                  # analysis.compare.Comparison
    libraries: object | None = None                   # analysis.libraries.Libraries
    primitives: object | None = None                  # analysis.primitives.Primitives (experiment configs)

    def find(self, config_id: int, metric: str, peer: str = "none", label: str = "") -> Row | None:
        for r in self.rows:
            if (r.config_id, r.metric, r.peer, r.label) == (config_id, metric, peer, label):
                return r
        return None


def config_labels(configs: dict[int, Config]) -> dict[int, str]:
    """Display names: the suite name plus only the fields that vary between configs."""
    varying = [f for f in ("library", "grp", "credential", "direction", "record_size", "total_bytes", "transport",
                           "device_role", "link_label")
               if len({getattr(c, f, None) for c in configs.values()}) > 1]
    out = {}
    for cid, c in configs.items():
        extra = ", ".join(str(getattr(c, f, None)) for f in varying)
        out[cid] = c.suite_name + (f" [{extra}]" if extra else "")
    if len(set(out.values())) < len(out):  # still ambiguous: add the id
        out = {cid: f"{name} #{cid}" for cid, name in out.items()}
    return out


def context(ds: Dataset, mt: MeasureTable, include_flagged: bool) -> Context:
    voc = vocab()
    hello = next(iter(ds.agents.values()), {}).get("hello", {})
    libs = sorted({f"{a['hello'].get('library_name', a['library'])} {a['hello'].get('library_version', '')}".strip()
                   for a in ds.agents.values()})
    statuses, counts = np.unique(ds.reps.status.astype(str), return_counts=True)
    return Context(
        experiment=ds.name, created_at=str(ds.experiment.get("created_at", "")),
        seed=int(ds.experiment.get("seed", 0) or 0), host=ds.experiment.get("host", {}),
        libraries=libs, clock=hello.get("clock", {}), calibration=hello.get("tracer", {}),
        overhead_known=all(c.known for c in ds.calib.values()) and bool(ds.calib),
        n_reps=len(ds.reps), status_counts=dict(zip(statuses.tolist(), counts.tolist())),
        flag_counts={f: int(np.count_nonzero(ds.reps.flags & bit)) for f, bit in voc.flags.items()},
        excluded=int(np.count_nonzero(ds.excluded_mask(include_flagged))),
        descheduled=int(np.count_nonzero(ds.descheduled_mask())),
        include_flagged=include_flagged, unbalanced_reps=len(ds.slices.unbalanced_reps),
        orphan_stops=sum(ds.slices.orphan_stops.values()),
        dropped_events=int(ds.reps.dropped.sum()), incomplete_records=mt.incomplete_records,
    )


def summarize_all(ds: Dataset, smp: Samples, seed: int) -> list[Row]:
    voc = vocab()
    rows = []
    for (cid, peer, metric, label), vals in smp.values.items():
        m = METRICS[metric]
        rng = rng_for(seed, cid, peer, m.name, label)
        rows.append(Row(cid, voc.peer_name(peer), m.name, voc.name(label) if label != NO_LABEL else "",
                        m.unit, summarize(vals, rng, mean_ci=m.name in HEADLINE,
                                          excluded=smp.excluded_reps.get(cid, 0))))
    return rows


@dataclass
class Analysis:
    """The intermediate products, kept for figures and comparisons."""

    ds: Dataset
    costs: SliceCosts
    table: MeasureTable
    samples: Samples
    results: Results


def analyze(ds: Dataset, seed: int | None = None, include_flagged: bool = False) -> Analysis:
    """Measures, statistics, winners and group-bys of one dataset."""
    from . import groups, libraries, primitives, winners  # late: they import Results from here

    costs = slice_costs(ds)
    mt = measures(ds, costs)
    smp = split_samples(ds, mt, include_flagged)
    seed = int(ds.experiment.get("seed", 0) or 0) if seed is None else seed
    ctx = context(ds, mt, include_flagged)
    res = Results(ctx, ds.configs, config_labels(ds.configs), summarize_all(ds, smp, seed))
    res.winners = winners.find_winners(res, smp, seed)
    res.groups = groups.default_group_tables(ds, smp, seed)
    res.warnings = (_warnings(res) + _precision_warnings(ds, mt, res)
                    + [w for win in res.winners for w in win.warnings])
    out = Analysis(ds, costs, mt, smp, res)
    res.libraries = libraries.analyze_libraries(out, seed)
    res.primitives = primitives.analyze_store(ds.path, seed, include_flagged) if ds.path.is_file() else None
    res.warnings += res.primitives.warnings if res.primitives else []
    return out


def _warnings(res: Results) -> list[str]:
    c = res.context
    out = []
    if c.excluded:
        out.append(f"{c.excluded} of {c.n_reps} repetitions excluded from statistics (status not "
                   f"{ok_status()}, flagged or descheduled); rerun the report with --include-flagged to keep them.")
    if not c.overhead_known:
        out.append("The agent reported no tracer calibration: tracer overhead was not subtracted.")
    if c.unbalanced_reps:
        out.append(f"{c.unbalanced_reps} traces were unbalanced (failed handshakes or dropped events); "
                   "their open spans were closed at the last timestamp and left out of step measures.")
    if c.dropped_events:
        out.append(f"{c.dropped_events} trace records were dropped for lack of buffer space; "
                   "raise the agent's trace capacity.")
    return out


def _precision_warnings(ds: Dataset, mt: MeasureTable, res: Results) -> list[str]:
    """Configurations whose median handshake processing missed the plan's precision target,
    with how far apart the medians of their rounds are (what widened the interval)."""
    target = (json.loads(ds.experiment.get("plan_json") or "{}").get("precision") or {}).get("target_ci_percent")
    if not target:
        return []
    metric = METRIC["handshake_processing"]
    out = []
    for row in res.rows:
        if row.metric != "handshake_processing" or not row.summary.median_ci_pct > target:
            continue
        sel = (mt.metric == metric) & (mt.peer == vocab().peers[row.peer])
        pos = ds.rep_index(mt.rep[sel])
        mine = (ds.reps.config_id[pos] == row.config_id) & ~ds.excluded_mask()[pos]
        rounds, values = ds.reps.round[pos][mine], mt.value[sel][mine]
        medians = np.array([np.median(values[rounds == r]) for r in np.unique(rounds)])
        spread = 100 * (medians.max() - medians.min()) / np.median(values)
        out.append(f"{res.config_labels[row.config_id]}, {row.peer}: median handshake processing known to "
                   f"±{row.summary.median_ci_pct:.2f}% (n = {row.summary.n}), above the plan's ±{target:g}%; "
                   f"the medians of its rounds span {spread:.0f}% of the median: its cost changed between "
                   "rounds, as when other work shares the machine; a quieter machine or more "
                   "repetitions narrow it.")
    return out
