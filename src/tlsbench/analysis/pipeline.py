# SPDX-License-Identifier: Apache-2.0
"""The analysis of one dataset, in order: slice costs, measures, samples, statistics, then
winners, group-bys, libraries, post-quantum and classical side by side and the experiments'
primitives, into one `Results`."""
from __future__ import annotations

import json

import numpy as np

from tlsbench.analysis.questions import device_primitives, groups, libraries, primitives, recommend, winners
from tlsbench.analysis.derive import statcache
from tlsbench.analysis.questions.postquantum import kex_tables
from tlsbench.analysis.questions.wire import wire_section
from tlsbench.analysis.questions.device import device_results
from tlsbench.analysis.stats.drift import RoundShift, round_shift
from tlsbench.analysis.stats.exclusions import exclusions, load_warning
from tlsbench.analysis.derive.dataset import Dataset, ok_status
from tlsbench.analysis.derive.measures import METRIC, NO_LABEL, MeasureTable
from tlsbench.analysis.results import Analysis, Context, PrecisionCheck, PrecisionMiss, Results
from tlsbench.analysis.questions.answers import SHOWN, Answers
from tlsbench.analysis.derive.samples import Measured, config_labels, summarize_dataset
from tlsbench.analysis.stats.stats import round_medians
from tlsbench.analysis.vocab import vocab


def analyze(ds: Dataset, seed: int | None = None, include_flagged: bool = False) -> Analysis:
    """Measures, statistics, winners, group-bys, libraries and primitives of one dataset
    (its experiments come with it: load() reads them in the same visit to the store)."""
    costs = None  # per slice: computed only if something asks (Measured.costs)
    seed = int(ds.experiment.get("seed", 0) or 0) if seed is None else seed
    # A configuration at a time: `table` keeps the handshake processing rows only (samples.TABLE_CODES).
    current = statcache.digests(ds, ds.excluded_mask(include_flagged), seed)  # stored statistics of these inputs hold
    stored_groups = statcache.known_groups(ds, current)
    summarized = summarize_dataset(ds, seed, include_flagged, statcache.known(ds, current),
                                   shown_answers(ds, keep_all=stored_groups is None))
    samples, table = summarized.samples, summarized.table
    labels = config_labels(ds.configs)
    res = Results(context(ds, table, include_flagged), ds.configs, labels, summarized.rows)
    res.exclusions = exclusions(ds, include_flagged)
    res.winners = winners.find_winners(labels, samples.answers, seed, no_data=res.no_data, unit=ds.unit)
    res.groups = stored_groups if stored_groups is not None else groups.default_group_tables(ds, samples.answers, seed)
    res.round_shift = handshake_shift(ds, table, include_flagged)
    res.notes = _warnings(res)
    res.precision = precision_check(ds, table, res)
    res.warnings = (res.notes + _no_data_warnings(res) + _precision_warnings(res)
                    + [w for win in res.winners for w in win.warnings])
    measured = Measured(ds, costs, table, samples, labels)
    res.libraries = libraries.analyze_libraries(measured, seed, res.no_data)
    res.postquantum = kex_tables(res, res.libraries.order)
    res.wire = wire_section(res)
    res.primitives = primitives.analyze_dataset(ds.experiments, seed, include_flagged) if ds.experiments else None
    res.warnings += res.primitives.warnings if res.primitives else []
    res.device_primitives = device_primitives.analyze(ds.device_experiments, include_flagged) \
        if ds.device_experiments else None
    host = analyze(ds.host, seed, include_flagged) if ds.host is not None else None
    res.device = device_results(measured, host)
    return Analysis(ds, costs, table, samples, labels, res)


def shown_answers(ds: Dataset, keep_all: bool) -> Answers:
    """What a report holds of the answers to the winners' questions: every configuration's when
    it groups them (its group-bys are not stored), else those it can show, of all configurations,
    of each library's and of each key-exchange class's (the first screen's recommendations)."""
    of_library = libraries.configs_by_library(ds.configs).values()
    return Answers(keep=None if keep_all else SHOWN, among=[None, *of_library, *recommend.classes_of(ds.configs)])


def context(ds: Dataset, table: MeasureTable, include_flagged: bool) -> Context:
    voc = vocab()
    hello = next(iter(ds.agents.values()), {}).get("hello", {})
    libs = sorted({f"{agent['hello'].get('library_name', agent['library'])} {agent['hello'].get('library_version', '')}".strip()
                   for agent in ds.agents.values()})
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
        include_flagged=include_flagged, unbalanced_reps=int(np.count_nonzero(ds.facts.unbalanced)),
        orphan_stops=int(ds.facts.orphan_stops.sum()),
        dropped_events=int(ds.reps.dropped_events.sum()), incomplete_records=table.incomplete_records,
        unit=ds.unit.name, target=ds.target,
    )


def handshake_shift(ds: Dataset, table: MeasureTable, include_flagged: bool) -> RoundShift | None:
    """Round-level shifts in the handshake configurations (analysis/stats/drift.py), judged on each
    repetition's client handshake processing."""
    sel = (table.metric == METRIC["handshake_processing"]) & (table.peer == vocab().peers["client"])
    pos = ds.rep_index(table.rep[sel])
    keep = ~ds.excluded_mask(include_flagged)[pos]
    pos = pos[keep]
    return round_shift(ds.reps.config_id[pos], ds.reps.round[pos], ds.reps.id[pos], table.value[sel][keep])


def _warnings(res: Results) -> list[str]:
    c = res.context
    out = []
    if c.excluded:
        out.append(f"{c.excluded} of {c.n_reps} repetitions excluded from statistics (status not "
                   f"{ok_status()}, flagged or descheduled); rerun the report with --include-flagged to keep them.")
    heavy = load_warning(res.exclusions, res.config_labels)
    out += [heavy] if heavy else []
    if res.round_shift:
        out.append(res.round_shift.text("handshakes"))
    if not c.overhead_known:
        out.append("The agent reported no tracer calibration: tracer overhead was not subtracted.")
    if c.unbalanced_reps:
        out.append(f"{c.unbalanced_reps} traces were unbalanced (failed handshakes or dropped events); "
                   "their open spans were closed at the last timestamp and left out of step measures.")
    if c.dropped_events:
        out.append(f"{c.dropped_events} trace records were dropped for lack of buffer space; "
                   "raise the agent's trace capacity.")
    return out


def _no_data_warnings(res: Results) -> list[str]:
    return [f"{res.config_labels[cid]}: {why}; it stays in the tables, and is not among the winners' candidates."
            for cid, why in sorted(res.no_data.items(), key=lambda kv: res.config_labels[kv[0]])]


def precision_check(ds: Dataset, table: MeasureTable, res: Results) -> PrecisionCheck:
    """Each configuration's worst half-width of its median handshake processing, and the
    peers that missed the plan's target with how far apart the medians of their rounds are
    (what widened the interval)."""
    target = (json.loads(ds.experiment.get("plan_json") or "{}").get("precision") or {}).get("target_ci_percent")
    metric = METRIC["handshake_processing"]
    worst: dict[int, float] = {}
    misses = []
    included = ~ds.excluded_mask()
    of_peer: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # peer -> (repetition positions, values)
    for row in res.rows:
        if row.metric != "handshake_processing" or not row.summary.has_interval:
            continue  # no interval (too few values): no width to report, none missed
        worst[row.config_id] = max(worst.get(row.config_id, 0.0), row.summary.median_ci_pct)
        if not target or not row.summary.median_ci_pct > target:
            continue
        if row.peer not in of_peer:
            sel = (table.metric == metric) & (table.peer == vocab().peers[row.peer])
            of_peer[row.peer] = (ds.rep_index(table.rep[sel]), table.value[sel])
        pos, peer_values = of_peer[row.peer]
        mine = (ds.reps.config_id[pos] == row.config_id) & included[pos]
        rounds, values = ds.reps.round[pos][mine], peer_values[mine]
        medians = round_medians(values, rounds)
        spread = 100 * (medians.max() - medians.min()) / np.median(values)
        misses.append(PrecisionMiss(row.config_id, row.peer, row.summary.median_ci_pct, row.summary.n,
                                    len(medians), float(spread)))
    misses.sort(key=lambda m: -m.half_width_pct)
    return PrecisionCheck(float(target) if target else None, list(worst.values()), misses)


def _precision_warnings(res: Results) -> list[str]:
    """The misses in words (exports; the report shows them as one table)."""
    check = res.precision
    if check is None or check.target_pct is None:
        return []
    return [f"{res.config_labels[m.config_id]}, {m.peer}: median handshake processing known to "
            f"±{m.half_width_pct:.2f}% (n = {m.n}), above the plan's ±{check.target_pct:g}%; "
            f"the medians of its rounds span {m.round_spread_pct:.0f}% of the median: its cost changed between "
            "rounds, as when other work shares the machine; a quieter machine or more "
            "repetitions narrow it." for m in sorted(check.misses, key=lambda m: (m.config_id, m.peer))]


def representative_rep(analysis: Analysis) -> int | None:
    """The included repetition whose client handshake processing is closest to the median of
    the winning initiator configuration (else any included repetition): the one a timeline
    figure and a trace export show."""
    table, ds = analysis.table, analysis.ds
    ok = ~ds.excluded_mask(analysis.results.context.include_flagged)
    good = set(ds.reps.id[ok & ds.facts.traced].tolist())
    if not good:
        return None
    sel = ((table.metric == METRIC["handshake_processing"]) & (table.peer == vocab().peers["client"])
           & (table.label == NO_LABEL))
    win = next((w for w in analysis.results.winners if w.question.peer == "client"), None)
    if win and win.winner:
        config_reps = set(ds.reps.id[ds.reps.config_id == win.winner.config_id].tolist()) & good
        sel &= np.isin(table.rep, list(config_reps))
    if not sel.any():
        return min(good)
    values, reps = table.value[sel], table.rep[sel]
    return int(reps[np.argmin(np.abs(values - np.median(values)))])
