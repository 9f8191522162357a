# SPDX-License-Identifier: Apache-2.0
"""CSV: one row per (configuration, peer, measure, label) with every statistic. `unit` is the
measure's: ns on a host, the device's count (HELLO clock.unit) on a device; `identical` is 1
when every value was the same (a device's deterministic counts): the interval columns then
only repeat the value."""
from __future__ import annotations

import csv
import io

from ..analysis.metrics import MetricResults, analyze_metrics
from ..analysis.results import Analysis, Row
from ..analysis.units import identical

COLUMNS = ("config_id", "config", "peer", "metric", "label", "unit", "n", "excluded_reps",
           "median", "median_ci_lo", "median_ci_hi", "median_ci_pct", "mean", "mean_ci_lo",
           "mean_ci_hi", "sd", "q1", "q3", "iqr", "min", "p95", "max", "outliers_mild", "outliers_severe",
           "identical", "ci_resampled", "rounds", "round_spread_pct", "note")


def row_values(analysis: Analysis, r: Row) -> list:
    return _values(r.config_id, analysis.results.config_labels[r.config_id], r.peer, r.metric, r.label, r.unit, r.summary)


def _values(config_id: int, config: str, peer: str, metric: str, label: str, unit: str, s) -> list:
    """One statistics row; an interval's bounds are empty where there is none, and `note`
    says why ("n = 1: no interval")."""
    return [config_id, config, peer, metric, label, unit,
            s.n, s.excluded, s.median, *s.median_ci, s.median_ci_pct, s.mean, *s.mean_ci, s.sd,
            s.q1, s.q3, s.iqr, s.min, s.p95, s.max, s.mild, s.severe, int(identical(s)),
            s.ci_method if s.has_interval else "", s.rounds, s.round_spread_pct, s.interval_note]


def no_data_rows(analysis: Analysis) -> list[list]:
    """One row per configuration left without a usable repetition: n = 0 and why."""
    res = analysis.results
    blank = [""] * (len(COLUMNS) - 9)
    return [[cid, res.config_labels[cid], "", "", "", "", 0, res.exclusions[cid].excluded, *blank, why]
            for cid, why in sorted(res.no_data.items())]


# Experiment groups (analysis/primitives.py) as rows of the same shape: the configuration is
# "library experiment size", the label the group's name, one value per repetition in ns.
EXPERIMENT_METRIC = "experiment_group"


def experiment_rows(analysis: Analysis) -> list[list]:
    p = analysis.results.primitives
    if not p:
        return []
    blank = [""] * (len(COLUMNS) - 9)
    return ([_values(r.config_id, f"{r.library} {r.experiment} {r.size}", "none", EXPERIMENT_METRIC, r.group, "ns",
                     r.summary) for r in p.results]
            + [[c.config_id, f"{c.library} {c.experiment} {c.size}", "none", EXPERIMENT_METRIC, "", "", 0,
                c.stored - c.used, *blank, c.no_data] for c in p.counts if c.no_data])


# The scheduler's view (analysis/sched.py): one row per configuration and figure, metric
# "sched.<figure>", its value in `median`, `n` the traced repetitions.
SCHED_UNITS = {"busy_share": "share", "idle_share": "share", "preempted_share": "share",
               "steps_interrupted_share": "share", "voluntary": "switches/rep", "involuntary": "switches/rep"}


def sched_rows(analysis: Analysis) -> list[list]:
    from ..analysis.sched import TABLE, collect

    res = collect(analysis)
    if res is None:
        return []
    blank = [""] * (len(COLUMNS) - 9)
    return [[c.config_id, c.config, "none", f"sched.{attr}", "", SCHED_UNITS.get(attr, "us"), c.traced,
             c.stored - c.traced, getattr(c, attr), *blank]
            for c in res.configs for _, attr, _, _ in TABLE if attr != "traced"]
def metric_rows(metrics: MetricResults | None) -> list[list]:
    """Metrics beyond time (docs/metrics.md): `metric` is the spec's ([metric.*]), `label` the
    slice (a step, or handshake / connected / repetition / shared), the unit of instructions
    names ISA, runner and CPU model."""
    if metrics is None:
        return []
    unit = {"instructions": metrics.instructions_unit}
    return [_values(r.config_id, r.config, r.peer, r.metric, r.slice, unit.get(r.metric) or r.unit, r.summary)
            for r in metrics.rows]


def metrics_of(analysis: Analysis) -> MetricResults | None:
    return analyze_metrics(analysis.ds.path, analysis.results.context.seed) if analysis.ds.path else None


def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.6g}"
    return str(v)


class CsvExporter:
    suffix = ".csv"

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        rows = sorted(analysis.results.rows, key=lambda r: (r.config_id, r.peer, r.metric, r.label))
        for values in ([row_values(analysis, r) for r in rows] + no_data_rows(analysis) + experiment_rows(analysis)
                       + sched_rows(analysis) + metric_rows(metrics_of(analysis))):
            w.writerow([_fmt(v) for v in values])
        return buf.getvalue()
