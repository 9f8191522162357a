# SPDX-License-Identifier: Apache-2.0
"""CSV: one row per (configuration, peer, measure, label) with every statistic, for every
section the report shows: the measures, the experiments' groups (primitives), the network
section, energy and a device's footprint. The configuration comes as key columns
(export/columns.py: library, version, suite, group, credential, role, transport, ...) with
the report's display name as `config`. Numbers at full precision (shortest round-trip).

`unit` is the measure's: ns on a host, the device's count (HELLO clock.unit) on a device;
`identical` is 1 when every value was the same (a device's deterministic counts): the
interval columns then only repeat the value. `source` says where a row's values come from
where that varies: an energy's capture or profile, bytes on the link or the agents' counters."""
from __future__ import annotations

import csv
import io
from typing import Any

from tlsbench.analysis.questions.metrics import MetricResults, metrics_of as beyond_time
from tlsbench.analysis.results import Analysis, Row
from tlsbench.analysis.stats.stats import Summary
from tlsbench.analysis.units import identical
from tlsbench.export.columns import CONFIG_COLUMNS, config_records

STAT_COLUMNS = ("peer", "metric", "label", "unit", "n", "excluded_reps",
                "median", "median_ci_lo", "median_ci_hi", "median_ci_pct", "mean", "mean_ci_lo",
                "mean_ci_hi", "sd", "q1", "q3", "iqr", "min", "p95", "max", "outliers_mild", "outliers_severe",
                "identical", "ci_resampled", "rounds", "round_spread_pct", "note", "source")
COLUMNS = tuple(c.name for c in CONFIG_COLUMNS) + STAT_COLUMNS
_BLANK_STATS = len(STAT_COLUMNS) - 8  # statistics of a row without values (n, excluded_reps ... note, source)

# Metric names of the rows that are not measures (analysis/derive/measures.py METRICS).
EXPERIMENT_METRIC = "experiment_group"
NETWORK_METRICS = (  # NetworkRow attribute -> metric, unit ("" : the counter's)
    ("duration", "net_stop_start", ""), ("duration_no_retransmit", "net_stop_start_no_retransmit", ""),
    ("processing", "net_processing", ""), ("cpu", "net_device_cpu", "ns"),
    ("wire_bytes", "net_wire_bytes", "B"), ("wire_packets", "net_wire_packets", "packets"),
    ("wire_fragments", "net_wire_fragments", "frames"))
FOOTPRINT_METRIC = "footprint"


def key_columns(analysis: Analysis) -> dict[int, list[Any]]:
    """Configuration id -> CONFIG_COLUMNS values, for every dataset of the analysis (the
    handshakes, their experiments and a device's memory image share the store's ids)."""
    ds, res = analysis.ds, analysis.results
    keys = config_records(ds, res.config_labels)
    if ds.experiments is not None:
        keys |= config_records(ds.experiments, {cid: f"{c.library} {c.experiment} {c.total_bytes}"
                                                for cid, c in ds.experiments.configs.items()})
    if ds.footprint is not None:
        keys |= config_records(ds.footprint, {})
    return keys


def _stats(s: Summary) -> list:
    return [s.n, s.excluded, s.median, *s.median_ci, s.median_ci_pct, s.mean, *s.mean_ci, s.sd,
            s.q1, s.q3, s.iqr, s.min, s.p95, s.max, s.mild, s.severe, int(identical(s)),
            s.ci_method if s.has_interval else "", s.rounds, s.round_spread_pct, s.interval_note]


def _row(keys: list, peer: str, metric: str, label: str, unit: str, s: Summary, source: str = "") -> list:
    return [*keys, peer, metric, label, unit, *_stats(s), source]


def _empty(keys: list, peer: str, metric: str, label: str, unit: str, n: int, excluded: int, note: str,
           source: str = "") -> list:
    return [*keys, peer, metric, label, unit, n, excluded, *[""] * _BLANK_STATS, note, source]


def row_values(analysis: Analysis, r: Row, keys: dict[int, list] | None = None) -> list:
    keys = keys or key_columns(analysis)
    return _row(keys[r.config_id], r.peer, r.metric, r.label, r.unit, r.summary)


def measure_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    rows = sorted(analysis.results.rows, key=lambda r: (r.config_id, r.peer, r.metric, r.label))
    return [row_values(analysis, r, keys) for r in rows]


def no_data_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    """One row per configuration left without a usable repetition: n = 0 and why."""
    res = analysis.results
    return [_empty(keys[cid], "", "", "", "", 0, res.exclusions[cid].excluded, why)
            for cid, why in sorted(res.no_data.items())]


def experiment_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    """Experiment groups (analysis/questions/primitives.py): the label is the group's name, one value
    per repetition in ns."""
    p = analysis.results.primitives
    if not p:
        return []
    return ([_row(keys[r.config_id], "none", EXPERIMENT_METRIC, r.group, "ns", r.summary) for r in p.results]
            + [_empty(keys[c.config_id], "none", EXPERIMENT_METRIC, "", "", 0, c.stored - c.used, c.no_data)
               for c in p.counts if c.no_data])


# The scheduler's view (analysis/questions/sched.py): one row per configuration and figure, metric
# "sched.<figure>", its value in `median`, `n` the traced repetitions.
SCHED_UNITS = {"busy_share": "share", "idle_share": "share", "preempted_share": "share",
               "steps_interrupted_share": "share", "voluntary": "switches/rep", "involuntary": "switches/rep"}


def sched_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    from tlsbench.analysis.questions.sched import TABLE, collect

    res = collect(analysis)
    if res is None:
        return []
    out = []
    for c in res.configs:
        for _, attr, _, _ in TABLE:
            if attr == "traced":
                continue
            row = _empty(keys[c.config_id], "none", f"sched.{attr}", "", SCHED_UNITS.get(attr, "us"), c.traced,
                         c.stored - c.traced, "")
            row[COLUMNS.index("median")] = getattr(c, attr)
            out.append(row)
    return out


def metric_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    """Metrics beyond time (docs/metrics.md): `metric` is the spec's ([metric.*]), `label` the
    slice (a step, or handshake / connected / repetition / shared), the unit of instructions
    names ISA, runner and CPU model; the key columns are the time configuration's."""
    metrics = metrics_of(analysis)
    if metrics is None:
        return []
    by_key = {c.key: cid for cid, c in analysis.ds.configs.items()}
    unit = {"instructions": metrics.instructions_unit}
    return [_row(keys[by_key[r.config_key]], r.peer, r.metric, r.slice, unit.get(r.metric) or r.unit, r.summary)
            for r in metrics.rows if r.config_key in by_key]


def metrics_of(analysis: Analysis) -> MetricResults | None:
    return beyond_time(analysis.ds, analysis.results.context.seed)


def network_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    """The network section (analysis/questions/network.py): per two-process configuration, the device's
    stop–start with and without retransmitted repetitions, its processing and CPU, and the
    bytes and packets on the wire (`source`: link or transport); the repetitions' outcome in `note`."""
    from tlsbench.analysis.questions.network import network_results

    out = []
    counter = analysis.ds.unit.name
    for n in network_results(analysis.ds, analysis.table, analysis.results.context.seed,
                             analysis.results.context.include_flagged):
        outcome = f"{n.n} ok, {n.retransmitted} retransmitted, {n.failed} failed"
        for attr, metric, unit in NETWORK_METRICS:
            s = getattr(n, attr)
            source = n.wire_source if attr.startswith("wire") else ""
            if s is None:
                continue
            row = _row(keys[n.config_id], n.device_role, metric, "", unit or counter, s, source)
            row[-2] = "; ".join(x for x in (s.interval_note, outcome) if x)
            out.append(row)
    return out


def energy_rows(analysis: Analysis, keys: dict[int, list], profile: str | None = None) -> list[list]:
    """Energy statistics (analysis/models/energy/results.py): measured where the store holds a capture,
    estimated with a profile; `source` names which."""
    from tlsbench.analysis.models.energy.results import collect

    res = collect(analysis, profile)
    if res is None:
        return []
    return [_row(keys[r.config_id], r.peer, f"energy_{r.kind}", r.label, "J", r.summary, r.source)
            for r in res.rows if r.config_id in keys]


def footprint_rows(analysis: Analysis, keys: dict[int, list]) -> list[list]:
    """A device's footprint (memory image): per configuration and peer, each value's most
    (`max`) and least (`min`) over the repetitions, in bytes."""
    device = analysis.results.device
    fp = device.footprint if device else None
    if fp is None:
        return []
    out = []
    for r in fp.rows:
        for label, b in r.values.items():
            row = _empty(keys[r.config_id], r.peer, FOOTPRINT_METRIC, label, "B", b.n, 0, "")
            row[COLUMNS.index("min")], row[COLUMNS.index("max")] = b.least, b.most
            out.append(row)
    return out


def all_rows(analysis: Analysis, profile: str | None = None) -> list[list]:
    """Every row of the statistics CSV, in COLUMNS order (the Python API's `statistics`)."""
    keys = key_columns(analysis)
    return (measure_rows(analysis, keys) + no_data_rows(analysis, keys) + experiment_rows(analysis, keys)
            + network_rows(analysis, keys) + energy_rows(analysis, keys, profile) + footprint_rows(analysis, keys)
            + sched_rows(analysis, keys) + metric_rows(analysis, keys))


def fmt(v) -> str:
    """Full precision: the shortest text that reads back as the same float; NaN as empty."""
    if isinstance(v, float):
        return "" if v != v else repr(float(v))
    return str(v)


class CsvExporter:
    suffix = ".csv"

    def __init__(self, profile: str | None = None):
        self.profile = profile

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        for values in all_rows(analysis, self.profile):
            w.writerow([fmt(v) for v in values])
        return buf.getvalue()
