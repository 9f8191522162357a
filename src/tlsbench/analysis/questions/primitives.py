# SPDX-License-Identifier: Apache-2.0
"""Experiments (crypto primitives and user experiments): time per operation of every group.

An experiment configuration is library × experiment × payload size; each stored repetition
is one run of the experiment's measured block, whose groups are USER_GROUP spans (START
value = the group's index in the experiment's `groups`). A group's value in a repetition is
the processing of its spans there, as for any slice (analysis/derive/measures.py): duration minus
the tracer's calibrated cost (e + c·k); summed when a block marks the group more than once.
Statistics are the handshakes' (analysis/stats/stats.py: median, seeded bootstrap CIs, Tukey
outliers); libraries are compared on the same (experiment, size, group) by the ratio of
medians to the fastest library, with its CI and verdict. DISCARDED repetitions (a failed
known-answer check) are excluded like any repetition whose status is not OK, and counted.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from tlsbench.core import spec as specmod
from tlsbench.store.api import DerivedReads, StoreReader
from tlsbench.analysis.stats.drift import RoundShift, round_shift
from tlsbench.analysis.stats.exclusions import exclusions
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.measures import slice_costs
from tlsbench.analysis.stats.stats import Ratio, Summary, ratio_of_medians, rng_for, summarize
from tlsbench.analysis.vocab import vocab

NS_PER_S = 1e9


@dataclass(frozen=True)
class ExperimentMeta:
    """One experiment as the store describes it (the agent's HELLO, copied into config rows)."""

    name: str
    description: str
    source: str               # "primitive" or "user"
    groups: tuple[str, ...]   # in the agent's order (a USER_GROUP START value indexes this)
    sizes: tuple[int, ...]    # payload sizes measured, ascending; (0,) when it takes none

    @property
    def sized(self) -> bool:
        return self.sizes != (0,)


@dataclass(frozen=True)
class GroupResult:
    """Time per operation of one group in one experiment configuration (ns)."""

    config_id: int
    library: str
    experiment: str
    size: int          # payload bytes; 0 when the experiment takes none
    group: str
    group_index: int   # its position in the experiment's groups (the USER_GROUP START value)
    summary: Summary   # per repetition: the group's processing (tracer cost subtracted)
    marks: int         # group spans per repetition (median): 1 unless the block repeats a group

    @property
    def throughput(self) -> float:
        """Payload bytes per second at the median time (NaN without a payload)."""
        return self.size * NS_PER_S / self.summary.median if self.size and self.summary.median > 0 else math.nan

    @property
    def throughput_ci(self) -> tuple[float, float]:
        """The median's 95% CI carried over to bytes/s (bounds swap: a longer time is slower)."""
        lo, hi = self.summary.median_ci
        if not self.size or not lo > 0:
            return math.nan, math.nan
        return self.size * NS_PER_S / hi, self.size * NS_PER_S / lo


@dataclass(frozen=True)
class Cell:
    """One (experiment, size, group) in every library that measured it."""

    experiment: str
    size: int
    group: str
    by_library: dict[str, GroupResult]
    fastest: str | None            # the library with the lowest median (None: no values)
    vs_fastest: dict[str, Ratio]   # other library -> its median / the fastest's, CI and verdict


@dataclass(frozen=True)
class ConfigCounts:
    """What happened to one experiment configuration's repetitions."""

    config_id: int
    library: str
    experiment: str
    size: int
    stored: int
    used: int              # in the statistics
    discarded: int         # status DISCARDED: the measured block reported an error (failed known answer)
    other_excluded: int    # another status, a flag, or descheduled
    skip_reason: str | None  # why the controller stopped running it (agent refused: unsupported)
    excluded_why: str = ""   # "12 excluded (descheduled 12)" (analysis/stats/exclusions.py), "" when none

    @property
    def no_data(self) -> str:
        """"no data: N excluded (why)" when nothing usable is left of a stored configuration."""
        return f"no data: {self.excluded_why}" if self.stored and not self.used else ""


@dataclass
class Primitives:
    """Everything the report's primitives section and the exports show."""

    libraries: list[str]             # the plan's order
    experiments: list[ExperimentMeta]
    results: list[GroupResult]
    cells: list[Cell]
    counts: list[ConfigCounts]
    missing: dict[str, list[str]] = field(default_factory=dict)  # experiment -> libraries without it
    warnings: list[str] = field(default_factory=list)
    round_shift: RoundShift | None = None  # the machine's speed changed between states (analysis/stats/drift.py)

    def no_data(self, library: str, experiment: str, size: int) -> str:
        """"no data: N excluded (why)" for a configuration stored but left without a value."""
        return next((c.no_data for c in self.counts if (c.library, c.experiment, c.size) == (library, experiment, size)
                     and c.no_data), "")

    def find(self, library: str, experiment: str, size: int, group: str) -> GroupResult | None:
        return next((r for r in self.results if (r.library, r.experiment, r.size, r.group)
                     == (library, experiment, size, group)), None)

    @property
    def discarded(self) -> int:
        return sum(c.discarded for c in self.counts)


def discarded_status() -> str:
    """The status name of a repetition whose measured block reported an error."""
    s = specmod.load().status
    return s.name(s.DISCARDED)


# ---------------------------------------------------------------------- scenarios
# The sender/receiver scenarios (agent/src/primitives/common.h TB_PRIM_SCENARIOS): `sender`
# and `receiver` hash with SHA-256 and sign with ECDSA P-256; `sender-<hash>-<signature>`
# names its own, so a plan selects them by either (`include = ["sender-sha3-256-*"]`).
SCENARIOS = ("sender", "receiver")
SCENARIO_DEFAULT = ("sha256", "ecdsa-p256")
SCENARIO_HASHES = ("sha256", "sha3-256")


def scenario_parameters(experiment: str | None) -> tuple[str, str] | None:
    """(hash, signature) of a sender/receiver scenario by its name; None for another experiment."""
    role, _, rest = (experiment or "").partition("-")
    if role not in SCENARIOS:
        return None
    if not rest:
        return SCENARIO_DEFAULT
    hash_ = next((h for h in SCENARIO_HASHES if rest.startswith(h + "-")), None)
    return (hash_, rest[len(hash_) + 1:]) if hash_ else None


# ---------------------------------------------------------------------- values
GroupKey = tuple[int, int]  # (config id, group index)


@dataclass
class GroupValues:
    """Per (config, group index): one value per repetition used, its span count and the
    repetition's id."""

    values: dict[GroupKey, np.ndarray]
    marks: dict[GroupKey, np.ndarray]
    reps: dict[GroupKey, np.ndarray]


def group_values(ds: Dataset, include_flagged: bool = False) -> GroupValues:
    """Each repetition's processing per group (sum over the group's spans), excluded
    repetitions left out."""
    slices = ds.slices
    spans = np.flatnonzero((slices.label == vocab().role_label("user_group")) & ~slices.open)
    rep = slices.rep[spans]
    keep = ~ds.excluded_mask(include_flagged)[ds.rep_index(rep)]
    spans, rep = spans[keep], rep[keep]
    group = ds.start_values(spans)
    processing = slice_costs(ds).processing[spans]
    per_rep, inv = np.unique(np.stack([rep, group]), axis=1, return_inverse=True)
    inv = inv.reshape(-1)
    sums = np.bincount(inv, weights=processing, minlength=per_rep.shape[1])
    marks = np.bincount(inv, minlength=per_rep.shape[1])
    config = ds.reps.config_id[ds.rep_index(per_rep[0])]
    out = GroupValues({}, {}, {})
    for c, g in sorted(set(zip(config.tolist(), per_rep[1].tolist()))):
        mine = (config == c) & (per_rep[1] == g)
        out.values[(c, g)], out.marks[(c, g)], out.reps[(c, g)] = sums[mine], marks[mine], per_rep[0][mine]
    return out


# ---------------------------------------------------------------------- analysis
def _library_order(ds: Dataset) -> list[str]:
    """The plan's libraries in its order, then any other library the store holds."""
    plan = json.loads(ds.experiment.get("plan_json") or "{}")
    named = plan.get("libraries") or ([plan["library"]] if plan.get("library") else [])
    stored = sorted({c.library for c in ds.configs.values()})
    return [lib for lib in named if lib in stored] + [lib for lib in stored if lib not in named]


def merged_order(orders: list[list[str]]) -> list[str]:
    """One order of the names of several lists that keeps each list's order where they
    agree: the longest list, with every other list's extra names inserted after their
    predecessor there (the libraries list primitives in one declared order, each lacking some)."""
    merged: list[str] = []
    for names in sorted(orders, key=len, reverse=True):
        for i, name in enumerate(names):
            if name not in merged:
                before = next((n for n in reversed(names[:i]) if n in merged), None)
                merged.insert(merged.index(before) + 1 if before else 0, name)
    return merged


def _experiments(ds: Dataset) -> list[ExperimentMeta]:
    """Experiments in the agents' order (configurations are created in HELLO order)."""
    metas: dict[str, ExperimentMeta] = {}
    sizes: dict[str, set[int]] = {}
    per_library: dict[str, list[str]] = {}
    for cid in sorted(ds.configs):
        c = ds.configs[cid]
        sizes.setdefault(c.experiment, set()).add(c.total_bytes)
        names = per_library.setdefault(c.library, [])
        names += [] if c.experiment in names else [c.experiment]
        metas.setdefault(c.experiment, ExperimentMeta(c.experiment, c.experiment_description or "",
                                                      c.experiment_source or "",
                                                      tuple(json.loads(c.experiment_groups or "[]")), ()))
    return [ExperimentMeta(m.name, m.description, m.source, m.groups, tuple(sorted(sizes[m.name])))
            for m in (metas[name] for name in merged_order(list(per_library.values())))]


def _group_name(groups: tuple[str, ...], index: int) -> str:
    return groups[index] if 0 <= index < len(groups) else f"group {index}"


def _results(ds: Dataset, gv: GroupValues, seed: int, excluded: dict[int, int]) -> list[GroupResult]:
    out = []
    for (cid, g), values in gv.values.items():
        c = ds.configs[cid]
        group = _group_name(tuple(json.loads(c.experiment_groups or "[]")), g)
        rounds = ds.reps.round[ds.rep_index(gv.reps[(cid, g)])]
        summary = summarize(values, rng_for(seed, "experiment", c.key, group), excluded=excluded.get(cid, 0),
                            rounds=rounds)
        out.append(GroupResult(cid, c.library, c.experiment, c.total_bytes, group, g, summary,
                               int(np.median(gv.marks[(cid, g)]))))
    return out


def _cells(results: list[GroupResult], gv: GroupValues, experiments: list[ExperimentMeta],
           order: list[str], seed: int) -> list[Cell]:
    """Libraries side by side per (experiment, size, group): each against the fastest."""
    grouped: dict[tuple[str, int, str], dict[str, GroupResult]] = {}
    position: dict[tuple[str, int, str], tuple[int, int, int]] = {}
    rank = {m.name: i for i, m in enumerate(experiments)}
    for r in results:
        key = (r.experiment, r.size, r.group)
        grouped.setdefault(key, {})[r.library] = r
        position[key] = (rank[r.experiment], r.size, r.group_index)
    cells = []
    for key in sorted(grouped, key=position.__getitem__):
        by_lib = {lib: grouped[key][lib] for lib in order if lib in grouped[key]}
        measured = {lib: r for lib, r in by_lib.items() if r.summary.n}
        fastest = min(measured, key=lambda lib: measured[lib].summary.median) if measured else None
        vs = {}
        for lib, r in measured.items():
            if lib == fastest:
                continue
            base = measured[fastest]
            vs[lib] = ratio_of_medians(gv.values[(base.config_id, base.group_index)],
                                       gv.values[(r.config_id, r.group_index)],
                                       rng_for(seed, "experiment-vs-fastest", *key, lib))
        cells.append(Cell(*key, by_lib, fastest, vs))
    return cells


def _counts(ds: Dataset, include_flagged: bool) -> list[ConfigCounts]:
    excluded = ds.excluded_mask(include_flagged)
    discarded = ds.reps.status == discarded_status()
    why = exclusions(ds, include_flagged)
    out = []
    for cid in sorted(ds.configs):
        c, mine = ds.configs[cid], ds.reps.config_id == cid
        out.append(ConfigCounts(cid, c.library, c.experiment, c.total_bytes, int(mine.sum()),
                                int((mine & ~excluded).sum()), int((mine & discarded).sum()),
                                int((mine & excluded & ~discarded).sum()), c.skip_reason,
                                why[cid].text if why[cid].excluded else ""))
    return out


def experiment_shift(ds: Dataset, gv: GroupValues) -> RoundShift | None:
    """Round-level shifts across the experiment configurations (analysis/stats/drift.py): every
    (configuration, group) is judged against its own median."""
    keys = sorted(gv.values)
    if not keys:
        return None
    series = np.concatenate([np.full(len(gv.values[k]), i) for i, k in enumerate(keys)])
    reps = np.concatenate([gv.reps[k] for k in keys])
    values = np.concatenate([gv.values[k] for k in keys])
    return round_shift(series, ds.reps.round[ds.rep_index(reps)], reps, values)


def _missing(experiments: list[ExperimentMeta], ds: Dataset, order: list[str]) -> dict[str, list[str]]:
    have = {(c.experiment, c.library) for c in ds.configs.values()}
    out = {m.name: [lib for lib in order if (m.name, lib) not in have] for m in experiments}
    return {name: libs for name, libs in out.items() if libs}


def _warnings(p: Primitives) -> list[str]:
    out = []
    if p.discarded:
        out.append(f"{p.discarded} experiment repetitions were DISCARDED (the measured block reported an error, "
                   "e.g. a failed known-answer check): stored, excluded from the statistics and counted per "
                   "configuration in the primitives section.")
    for c in p.counts:
        if c.skip_reason:
            out.append(f"{c.library} {c.experiment}{f' at {c.size} B' if c.size else ''} was not measured: "
                       f"{c.skip_reason}")
        elif c.no_data:
            out.append(f"{c.library} {c.experiment}{f' at {c.size} B' if c.size else ''}: {c.no_data}; it stays "
                       "in the tables, without a value.")
    if p.round_shift:
        out.append(p.round_shift.text("experiments"))
    return out


def analyze_dataset(ds: Dataset, seed: int, include_flagged: bool = False) -> Primitives:
    """The primitives section of a dataset loaded with `load(..., experiments=True)`."""
    order = _library_order(ds)
    experiments = _experiments(ds)
    gv = group_values(ds, include_flagged)
    counts = _counts(ds, include_flagged)
    results = _results(ds, gv, seed, {c.config_id: c.stored - c.used for c in counts})
    p = Primitives(order, experiments, results, _cells(results, gv, experiments, order, seed), counts,
                   _missing(experiments, ds, order), round_shift=experiment_shift(ds, gv))
    p.warnings = _warnings(p)
    return p


def analyze_store(store: StoreReader, cache: DerivedReads, seed: int | None = None,
                  include_flagged: bool = False) -> Primitives | None:
    """The experiments of a store, or None when it holds none (a handshake-only store)."""
    if not store.has_experiments():
        return None
    ds = load(store, cache, experiments=True)
    seed = int(ds.experiment.get("seed", 0) or 0) if seed is None else seed
    return analyze_dataset(ds, seed, include_flagged)
