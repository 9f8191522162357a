# SPDX-License-Identifier: Apache-2.0
"""Compare two runs (two experiments, or two configurations of one): per suite and per
step, the ratio of medians B/A with its bootstrap CI and a verdict beyond a noise floor.
Within one experiment both sides ran interleaved in the same rounds, so repetitions are
resampled; between two experiments whole rounds are (see stats.boot_medians_by_round).

What is compared: the measures of each experiment's own counter (times on a host, counts on
a device) and the metrics beyond time, whose values come from repetitions of their own
(docs/metrics.md): instruction counts and heap and stack bytes. Each kind is read as a
`Side` of each experiment and matched by configuration key.

Between two experiments a timed measure also moves with the machine as a whole: its
run-to-run shift (run_shift) is the median of its rows' ratios, with an interval. The
regression gate (`judge`, docs/ci.md) calls a timed row worse only beyond that shift, and
"cannot tell" when the whole run moved beyond the threshold or a configuration of either
side was not compared."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.special import stdtrit

from tlsbench.core import spec as specmod
from tlsbench.core.errors import UserError

from tlsbench.analysis.stats.exclusions import exclusions
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.measures import METRIC, METRICS, label_text
from tlsbench.analysis.questions.metrics import memory_values, time_key
from tlsbench.analysis.derive.samples import Measured, config_labels, measured
from tlsbench.analysis.stats.stats import CONFIDENCE, MIN_CI_VALUES, NAN2, NOISE_FLOOR, Ratio, ratio_of_medians, ratio_of_medians_by_round, rng_for
from tlsbench.analysis.units import NS
from tlsbench.analysis.vocab import vocab

# Measures compared: network-invariant handshake and step costs, records, stop–start time.
COMPARED = ("handshake_processing", "step", "crypto", "handshake_time", "write_processing",
            "write_processing_post", "write_total", "read_processing", "read_processing_pre", "read_total")
# What the gate judges when no --metric is given: one row per configuration and peer, the sum
# of the steps, so the least noisy time there is (small steps move by tens of % between runs).
GATED = ("handshake_processing",)
# The metrics beyond time `--metric` may name (docs/metrics.md): instruction counts are compared
# on these measures, of the instruction twins or of a device's own counter.
INSTRUCTIONS = "instructions"
COUNTED_MEASURES = ("handshake_processing", "step")


def memory_metrics() -> tuple[str, ...]:
    """heap_peak, heap_allocated, heap_kept, stack_peak: the spec's metrics of the memory twins."""
    return tuple(m.name for m in specmod.load().metrics.values() if m.collect == "memory")


def comparable() -> tuple[str, ...]:
    """Every name `--metric` accepts."""
    return COMPARED + (INSTRUCTIONS,) + memory_metrics()


class CompareError(UserError, ValueError):
    """Two experiments (or configurations) that cannot be compared as asked."""


@dataclass(frozen=True)
class CompareRow:
    """B/A for one measure of one matched configuration."""

    config: str       # display name (A's)
    peer: str
    metric: str
    label: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: Ratio      # median(B) / median(A)
    exact: bool = False  # every value of A the same, and every value of B (deterministic counts): no CI needed
    config_a: int = -1  # the configuration ids compared (exports name their key columns)
    config_b: int = -1
    unit: str = NS    # of both medians: ns, or a count ("instructions (QEMU icount)", "B")

    @property
    def counted(self) -> bool:
        """A count (instructions, bytes), never a time: the machine's speed does not move it."""
        return self.unit != NS


@dataclass(frozen=True)
class Shift:
    """How far one timed measure moved between two experiments as a whole: the median of its
    rows' ratios B/A over the configurations compared, with a 95% interval, and how far an
    unchanged configuration's ratio may lie from it (run_shift)."""

    metric: str
    ratio: float
    ci: tuple[float, float]
    rows: int
    band: float = math.nan  # the upper end of where an unchanged configuration's ratio falls (95%)

    def text(self) -> str:
        return (f"{self.metric} ×{self.ratio:.3f} (95% CI ×{self.ci[0]:.3f}–×{self.ci[1]:.3f}; an unchanged "
                f"configuration up to ×{self.band:.3f}; over {self.rows} rows)")


@dataclass(frozen=True)
class Comparison:
    name_a: str
    name_b: str
    noise_floor: float
    rows: list[CompareRow]
    not_compared: list[str]  # each configuration of either side not compared: "name: why"
    warnings: list[str] = field(default_factory=list)  # the whole run moved; rows of one side only
    shifts: dict[str, Shift] = field(default_factory=dict)  # timed measure -> its run-to-run shift
    one_run: bool = False  # both sides from one experiment (interleaved rounds): nothing shifts
    one_sided: list[str] = field(default_factory=list)  # rows measured by one experiment only


SampleKey = tuple[str, str, str]  # (peer, measure, label) by name
SideSamples = dict[SampleKey, tuple[np.ndarray, np.ndarray]]  # values and the round of each
Pair = tuple[int, int, str]  # (configuration of A, configuration of B, display name)


@dataclass(frozen=True)
class Side:
    """One experiment as a comparison reads one kind of its values (its counter's measures,
    instruction counts, memory): the configurations, their names, the values' unit and each
    configuration's samples, read on request."""

    ds: Dataset                            # whose configurations these are
    labels: dict[int, str]                 # configuration id -> display name
    unit: str                              # of every value: ns, or a count
    read: Callable[[int], SideSamples]     # one configuration's samples
    no_data: dict[int, str]                # configurations without a usable repetition -> why
    what: str                              # the values in words, for "no ... in B"

    @property
    def name(self) -> str:
        return self.ds.name


def measured_side(m: Measured, metrics: tuple[str, ...] = COMPARED, no_data: dict[int, str] | None = None) -> Side:
    """The measures `metrics` of a measured dataset, in its counter's unit."""
    voc = vocab()
    wanted = {METRIC[name] for name in metrics}

    def read(cid: int) -> SideSamples:
        of = m.samples.of_config(cid)
        out: SideSamples = {}
        for key in sorted(k for k in of if k[2] in wanted):  # peers, measures and labels in their codes' order
            _, peer, code, label = key
            name = METRICS[code].name
            out[(voc.peer_name(peer), name, label_text(name, label))] = of[key]
        return out

    if no_data is None:
        no_data = {cid: f"{m.samples.excluded_reps.get(cid, 0)} excluded" if m.samples.excluded_reps.get(cid)
                   else "nothing stored" for cid in m.ds.configs if not m.samples.used_reps.get(cid)}
    return Side(m.ds, m.labels, m.ds.unit.name, read, no_data, ", ".join(metrics))


def _count_exclusions(ds: Dataset, include_flagged: bool) -> tuple[np.ndarray, dict[int, str]]:
    """A count's repetitions left out (failed or flagged: another process running meanwhile
    changes no count), and the configurations left without one, with why."""
    excluded = np.zeros(len(ds.reps), bool) if include_flagged else ds.flagged_mask()
    why = {}
    for cid in ds.configs:
        mine = ds.reps.config_id == cid
        if not np.any(mine & ~excluded):
            stored = int(np.count_nonzero(mine))
            why[cid] = f"{stored} failed or flagged" if stored else "nothing stored"
    return excluded, why


def _counter_side(ds: Dataset, metrics: tuple[str, ...], include_flagged: bool) -> Side:
    """The measures of a dataset's own counter: times (failed, flagged and descheduled
    repetitions excluded, as in the report) or counts (failed and flagged)."""
    if ds.unit.is_time:
        excluded = ds.excluded_mask(include_flagged)
        why = {cid: e.text if e.stored else "nothing stored"
               for cid, e in exclusions(ds, include_flagged).items() if e.used == 0}
    else:
        excluded, why = _count_exclusions(ds, include_flagged)
    return measured_side(measured(ds, excluded), metrics, why)


def _memory_side(ds: Dataset, metrics: tuple[str, ...], include_flagged: bool) -> Side:
    """Heap and stack bytes of the memory twins (or a device's memory image): one value per
    repetition and slice (docs/metrics.md)."""
    excluded, why = _count_exclusions(ds, include_flagged)
    round_of = dict(zip(ds.reps.id.tolist(), ds.reps.round.tolist()))
    grouped: dict[int, dict[SampleKey, list[tuple[float, int]]]] = {}
    for (rep, cid, metric, slice_, peer), value in memory_values(ds, set(ds.reps.id[~excluded].tolist())).items():
        if metric in metrics:
            grouped.setdefault(cid, {}).setdefault((peer, metric, slice_), []).append((float(value), round_of[rep]))

    def read(cid: int) -> SideSamples:
        return {key: (np.array([v for v, _ in pairs]), np.array([r for _, r in pairs]))
                for key, pairs in sorted(grouped.get(cid, {}).items())}

    return Side(ds, config_labels(ds.configs), "B", read, why, ", ".join(metrics))


# Where each kind of metric beyond time is stored (load kinds, first found) and how a missing one reads.
_KINDS = {INSTRUCTIONS: ("instructions",), "memory": ("memory", "footprint")}
_ABSENT = {INSTRUCTIONS: "no instruction counts (a plan's metrics = [\"time\", \"instructions\"], or a [device] plan)",
           "memory": "no heap or stack values (a plan's metrics = [\"time\", \"heap\", \"stack\"])"}


def _twins(ds: Dataset, kind: str) -> Dataset:
    """The dataset of a store's repetitions of their own for `kind` (docs/metrics.md)."""
    for stored in _KINDS[kind]:
        with ds.reopened() as (store, cache):
            found = load(store, cache, kind=stored)
        if found.configs:
            return found
    raise CompareError(f"{ds.name} holds {_ABSENT[kind]}: run a plan that measures them (docs/metrics.md), or "
                       "compare other measures")


def side(ds: Dataset, kind: str, metrics: tuple[str, ...], include_flagged: bool = False) -> Side:
    """One experiment's values of one kind: "counter" (the measures of its own counter),
    INSTRUCTIONS (a device's own count, else the instruction twins) or "memory"."""
    if kind == "counter":
        return _counter_side(ds, metrics, include_flagged)
    if kind == INSTRUCTIONS:
        counts = ds if ds.unit.noun == INSTRUCTIONS else _twins(ds, INSTRUCTIONS)
        return _counter_side(counts, COUNTED_MEASURES, include_flagged)
    return _memory_side(_twins(ds, "memory"), metrics, include_flagged)


def kinds_of(metrics: tuple[str, ...], counter_counts_instructions: bool = False) -> list[tuple[str, tuple[str, ...]]]:
    """The kinds of values `metrics` name, each with its metrics: (kind, metrics). Where both
    experiments' own counters count instructions (devices), `instructions` are their measures."""
    memory = memory_metrics()
    unknown = [m for m in metrics if m not in comparable()]
    if unknown:
        raise CompareError(f"--metric {', '.join(unknown)}: not a compared measure; choose from "
                           f"{', '.join(comparable())}")
    counter = tuple(m for m in metrics if m in COMPARED)
    twins = (INSTRUCTIONS,) if INSTRUCTIONS in metrics else ()
    if twins and counter_counts_instructions:
        counter, twins = tuple(dict.fromkeys(counter + COUNTED_MEASURES)), ()
    found = [("counter", counter), (INSTRUCTIONS, twins), ("memory", tuple(m for m in metrics if m in memory))]
    return [(kind, names) for kind, names in found if names]


def _same_unit(a: Side, b: Side) -> None:
    if a.unit == b.unit:
        return
    if NS in (a.unit, b.unit):
        raise CompareError(f"{a.name} counts in {a.unit}, {b.name} in {b.unit}: a count and a time are not compared "
                           "as a ratio; `tlsbench report DEVICE_EXPERIMENT --compare-with HOST_EXPERIMENT` sets them "
                           "side by side")
    raise CompareError(f"{a.name} counts {a.unit}, {b.name} {b.unit}: counts of two counters (ISA, runner, CPU "
                       "model) are not compared; compare counts made alike")


def config_key(ds: Dataset, cid: int) -> str:
    """The key of a configuration given by its id (`--config`), or one line naming the ids there are."""
    if cid not in ds.configs:
        ids = sorted(ds.configs)
        there = f"{ids[0]}–{ids[-1]}" if ids and ids == list(range(ids[0], ids[-1] + 1)) else ", ".join(map(str, ids))
        raise CompareError(f"--config {cid}: {ds.name} has no configuration {cid}; its configurations are "
                           f"{there or 'none'} (`tlsbench export {ds.name}` lists them with their ids)")
    return ds.configs[cid].key


def compare_experiments(a: Dataset, b: Dataset, metrics: tuple[str, ...] = COMPARED, include_flagged: bool = False,
                        noise_floor: float = NOISE_FLOOR, config_ids: tuple[int, int] | None = None
                        ) -> tuple[Comparison, list[tuple[Side, Side]]]:
    """B/A of two experiments (or, b is a, of two configurations of one) for `metrics`: each
    kind of values they name read as a side of each, matched by configuration key (or the
    two `config_ids`); with the sides, whose configurations the rows name."""
    keys = (config_key(a, config_ids[0]), config_key(b, config_ids[1])) if config_ids else None
    sides, pairs, missing = [], [], []
    for kind, names in kinds_of(metrics, a.unit.noun == b.unit.noun == INSTRUCTIONS):
        side_a = side(a, kind, names, include_flagged)
        side_b = side_a if b is a else side(b, kind, names, include_flagged)
        _same_unit(side_a, side_b)
        found, lost = matched(side_a, side_b, keys)
        sides.append((side_a, side_b))
        pairs.append(found)
        missing += lost
    seed = int(a.experiment.get("seed", 0) or 0)
    return compare_sides(sides, pairs, seed, noise_floor, b is a, missing), sides


def matched(a: Side, b: Side, keys: tuple[str, str] | None = None) -> tuple[list[Pair], list[str]]:
    """The configurations of both sides with the same key (or the two `keys`), and those of one
    side only, each with why."""
    of_a = {time_key(c.key): cid for cid, c in a.ds.configs.items()}
    of_b = {time_key(c.key): cid for cid, c in b.ds.configs.items()}
    if keys is not None:
        lost = [f"configuration {key}: no {s.what} in {name}" for key, of, s, name in
                ((keys[0], of_a, a, "A"), (keys[1], of_b, b, "B")) if key not in of]
        if lost:
            return [], lost
        ca, cb = of_a[keys[0]], of_b[keys[1]]
        return [(ca, cb, a.labels[ca] if keys[0] == keys[1] else f"{a.labels[ca]} vs {b.labels[cb]}")], []
    pairs = [(cid, of_b[key], a.labels[cid]) for key, cid in of_a.items() if key in of_b]
    lost = ([f"{a.labels[cid]}: only in A" for key, cid in of_a.items() if key not in of_b]
            + [f"{b.labels[cid]}: only in B" for key, cid in of_b.items() if key not in of_a])
    return pairs, lost


def compare(a: Measured, b: Measured, seed: int = 0, noise_floor: float = NOISE_FLOOR,
            config_a: int | None = None, config_b: int | None = None,
            metrics: tuple[str, ...] = COMPARED) -> Comparison:
    """B/A of two analysed experiments' measures (the report's comparison, the Python API)."""
    side_a = measured_side(a, metrics)
    side_b = side_a if b is a else measured_side(b, metrics)
    keys = (config_key(a.ds, config_a), config_key(b.ds, config_b)) if None not in (config_a, config_b) else None
    pairs, missing = matched(side_a, side_b, keys)
    return compare_sides([(side_a, side_b)], [pairs], seed, noise_floor, a is b, missing)


def compare_pairs(a: Measured, b: Measured, pairs: list[Pair], seed: int = 0,
                  noise_floor: float = NOISE_FLOOR, metrics: tuple[str, ...] = COMPARED,
                  not_compared: list[str] | None = None, names: tuple[str, str] | None = None) -> Comparison:
    """B/A per measure for given (config of A, config of B, display name) pairs; A and B may
    be the same analysis (two configurations, or two libraries, of one experiment)."""
    side_a = measured_side(a, metrics)
    side_b = side_a if b is a else measured_side(b, metrics)
    return compare_sides([(side_a, side_b)], [pairs], seed, noise_floor, a is b, not_compared or [], names)


def compare_sides(sides: list[tuple[Side, Side]], pairs: list[list[Pair]], seed: int = 0,
                  noise_floor: float = NOISE_FLOOR, one_run: bool = False, not_compared: list[str] | None = None,
                  names: tuple[str, str] | None = None) -> Comparison:
    """The rows of each pair of sides' matched configurations; a configuration without a row
    is listed in `not_compared` with why."""
    rows: list[CompareRow] = []
    missing = list(not_compared or [])
    one_sided: list[str] = []
    for (a, b), found in zip(sides, pairs):
        for ca, cb, name in found:
            of_a, of_b = a.read(ca), b.read(cb)
            why = _why_not(a, b, ca, cb, of_a, of_b)
            if why:
                missing.append(f"{name}: {why}")
                continue
            config_rows, only = _config_rows(a.unit, of_a, of_b, ca, cb, name, seed, noise_floor, one_run)
            rows += config_rows
            one_sided += only
            if not config_rows:
                missing.append(f"{name}: no row measured by both")
    name_a, name_b = names or (sides[0][0].name, sides[0][1].name)
    shifts = {} if one_run else run_shifts(rows)
    one_sided = [] if one_run else one_sided  # two configurations or libraries of one run differ by design
    warnings = _shift_warning(shifts, noise_floor) + ([one_sided_text(one_sided)] if one_sided else [])
    return Comparison(name_a, name_b, noise_floor, rows, missing, warnings, shifts, one_run, one_sided)


def _why_not(a: Side, b: Side, ca: int, cb: int, of_a: SideSamples, of_b: SideSamples) -> str | None:
    """Why a matched configuration has nothing to compare (no usable repetition, or none of the
    measures asked, on a side), or None."""
    for s, cid, of, name in ((a, ca, of_a, "A"), (b, cb, of_b, "B")):
        if cid in s.no_data:
            return f"no usable repetition in {name}: {s.no_data[cid]}"
        if not of:
            return f"no {s.what} in {name}"
    return None


def _config_rows(unit: str, of_a: SideSamples, of_b: SideSamples, ca: int, cb: int, name: str, seed: int,
                 noise_floor: float, one_run: bool) -> tuple[list[CompareRow], list[str]]:
    """One matched configuration's rows, and the rows measured by one side only."""
    rows = []
    for key, (va, rounds_a) in of_a.items():
        if key not in of_b or not len(va) or not len(of_b[key][0]):
            continue
        vb, rounds_b = of_b[key]
        peer, metric, label = key
        rng = rng_for(seed, "compare", ca, cb, peer, metric, label)
        if min(len(va), len(vb)) < MIN_CI_VALUES:  # no interval (a count's ratio still decides)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = Ratio(float(np.median(vb) / np.median(va)), NAN2, "no difference", False)
        elif one_run:  # both sides ran interleaved in the same rounds
            r = ratio_of_medians(va, vb, rng, noise_floor)
        else:          # two experiments: each has its own machine states, round by round
            r = ratio_of_medians_by_round(va, rounds_a, vb, rounds_b, rng, noise_floor)
        rows.append(CompareRow(name, peer, metric, label, len(va), len(vb), float(np.median(va)), float(np.median(vb)),
                               r, bool(np.ptp(va) == 0 and np.ptp(vb) == 0), ca, cb, unit))
    only = [f"{name}, {peer}, {metric} {label}".rstrip() + f" (only in {side_name})"
            for side_name, mine, other in (("A", of_a, of_b), ("B", of_b, of_a))
            for (peer, metric, label) in mine if (peer, metric, label) not in other]
    return rows, only


# Fewer rows of a measure: no shift is estimated (a median absolute deviation of fewer says little).
MIN_SHIFT_ROWS = 6
MAD_TO_SD = 1.4826  # the MAD of normal data times this is its standard deviation


def run_shift(metric: str, ratios: np.ndarray) -> Shift | None:
    """The common shift of one timed measure between two experiments: the median of its rows'
    log ratios, robust to the configurations that really changed (up to half of them). Their
    spread σ is estimated by 1.4826 × their median absolute deviation (Hampel 1974, "The
    influence curve and its role in robust estimation", JASA 69(346); Rousseeuw & Croux 1993,
    JASA 88(424)). The median's interval: ± t·√(π/2)·σ/√n (its standard error), Student's t at
    n − 1 degrees of freedom for the few rows a plan has. Where one more unchanged
    configuration's ratio falls (a prediction interval, e.g. Hahn & Meeker 1991, "Statistical
    Intervals", §4): ± t·σ·√(1 + π/(2n)): configurations do not all move alike when the
    machine's speed changes (a busy core slows long handshakes more than short ones)."""
    ratios = np.asarray(ratios, float)
    x = np.log(ratios[np.isfinite(ratios) & (ratios > 0)])
    n = len(x)
    if n < MIN_SHIFT_ROWS:
        return None
    centre = float(np.median(x))
    sigma = MAD_TO_SD * float(np.median(np.abs(x - centre)))
    t = float(stdtrit(n - 1, (1 + CONFIDENCE) / 2))
    half = t * math.sqrt(math.pi / 2) * sigma / math.sqrt(n)
    band = t * sigma * math.sqrt(1 + math.pi / (2 * n))
    return Shift(metric, math.exp(centre), (math.exp(centre - half), math.exp(centre + half)), n,
                 math.exp(centre + band))


def run_shifts(rows: list[CompareRow]) -> dict[str, Shift]:
    """Each timed measure's run-to-run shift, where it has rows enough for one."""
    by_metric: dict[str, list[float]] = {}
    for r in rows:
        if not r.counted:
            by_metric.setdefault(r.metric, []).append(r.ratio.ratio)
    found = {metric: run_shift(metric, np.array(ratios)) for metric, ratios in by_metric.items()}
    return {metric: s for metric, s in found.items() if s is not None}


def _shift_warning(shifts: dict[str, Shift], noise_floor: float) -> list[str]:
    """One warning naming the measures whose whole run moved: their interval excludes 1 and
    they moved by at least half the noise floor."""
    moved = [s for s in shifts.values() if (s.ci[0] > 1 or s.ci[1] < 1) and abs(s.ratio - 1) >= noise_floor / 2]
    if not moved:
        return []
    return [f"the whole run moved: {'; '.join(s.text() for s in moved)}: as when the machine's speed differed "
            "between the two runs, or the whole build changed, which two runs cannot tell apart. Measure both "
            "sides in one plan (interleaved rounds) to tell them apart."]


def one_sided_text(only: list[str]) -> str:
    more = f"; and {len(only) - 3} more" if len(only) > 3 else ""
    return f"{len(only)} row(s) measured by one experiment only, not compared: {'; '.join(only[:3])}{more}"


# ---------------------------------------------------------------- the regression gate

OUTCOMES = ("passed", "worse", "cannot tell")  # `compare --fail-above` exits 0, 1, 2 (docs/ci.md)


@dataclass(frozen=True)
class Verdict:
    """The regression gate's answer and what decided it."""

    outcome: str                 # one of OUTCOMES
    worse: list[CompareRow]      # rows worse beyond the threshold
    slower: list[CompareRow]     # times beyond it that do not decide: of two experiments, or unsure (_unsure)
    shifted: list[Shift]         # timed measures whose whole run moved beyond the threshold
    unshifted: list[str]         # timed measures of two experiments with too few rows for a shift
    not_judged: list[str]        # configurations not compared, and times too few for an interval: "name: why"
    allowed: bool = False        # --allow-missing: those not judged do not make the verdict "cannot tell"


def row_limit(row: CompareRow, shift: Shift | None, threshold: float) -> float:
    """What B/A must exceed for the row to be worse: 1 + threshold; for a time of two
    experiments, that times the upper end of where its measure's unchanged configurations fall
    (never below 1 + threshold)."""
    return (1 + threshold) * max(1.0, shift.band if shift and not row.counted else 1.0)


def _decided_by_ratio(row: CompareRow) -> bool:
    """A count, or a sample of identical values: the ratio itself is known, no interval needed."""
    return row.counted or row.exact


def worse_beyond(comparison: Comparison, threshold: float) -> list[CompareRow]:
    """The rows worse than A by more than `threshold` with confidence: a count (or a sample of
    identical values) when its ratio exceeds the limit; a time when its whole 95% CI does
    (beyond its measure's run-to-run shift between two experiments). Larger is worse for
    every compared measure."""
    out = []
    for r in comparison.rows:
        decides = r.ratio.ratio if _decided_by_ratio(r) else r.ratio.ci[0]
        if decides > row_limit(r, comparison.shifts.get(r.metric), threshold):
            out.append(r)
    return out


def _without_interval(r: CompareRow) -> str:
    return (f"{r.config}, {r.peer}, {r.metric}{' ' + r.label if r.label else ''}: {r.n_a} and {r.n_b} usable values, "
            f"too few for an interval (at least {MIN_CI_VALUES} a side)")


def _decisive(comparison: Comparison, row: CompareRow) -> bool:
    """A row beyond the threshold that makes the verdict worse: a count, or a time of two
    configurations measured in the same rounds. A time of two experiments does not: one
    configuration of two identical runs on the shared test machine moved by ×1.49 while the
    rest stayed (docs/ci.md), beyond any band the other configurations give."""
    return _decided_by_ratio(row) or comparison.one_run


def _unsure(comparison: Comparison, row: CompareRow, threshold: float) -> bool:
    """A time whose median moved beyond the limit while its interval reaches below it: not
    worse with confidence, and no pass either (a ×3.7 slower build whose first round of each
    run ran cold had the interval [1.10, 12.25], beside a limit of ×1.17)."""
    limit = row_limit(row, comparison.shifts.get(row.metric), threshold)
    return not _decided_by_ratio(row) and math.isfinite(row.ratio.ci[0]) and row.ratio.ci[0] <= limit < row.ratio.ratio


def judge(comparison: Comparison, threshold: float, allow_missing: bool = False) -> Verdict:
    """worse: a count, or a time within one run, is worse (whatever else); cannot tell: a time
    of two experiments is slower beyond the threshold, a time's median is beyond it but not its
    interval, nothing was compared, a configuration was not compared or a time has too few
    values for an interval (unless `allow_missing`), or a timed measure's whole run moved
    beyond the threshold (a machine of another speed and a change of the whole build look
    alike between two runs); else passed."""
    beyond = worse_beyond(comparison, threshold)
    worse = [r for r in beyond if _decisive(comparison, r)]
    slower = [r for r in beyond if not _decisive(comparison, r)] + [r for r in comparison.rows
                                                                    if _unsure(comparison, r, threshold)]
    shifted = [s for s in comparison.shifts.values() if abs(s.ratio - 1) > threshold]
    timed = {r.metric for r in comparison.rows if not r.counted}
    unshifted = [] if comparison.one_run else sorted(timed - set(comparison.shifts))
    not_judged = comparison.not_compared + [_without_interval(r) for r in comparison.rows
                                            if not _decided_by_ratio(r) and not math.isfinite(r.ratio.ci[0])]
    unsure = slower or not comparison.rows or (not_judged and not allow_missing) or shifted
    outcome = "worse" if worse else "cannot tell" if unsure else "passed"
    return Verdict(outcome, worse, slower, shifted, unshifted, not_judged, allow_missing)
