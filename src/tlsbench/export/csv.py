# SPDX-License-Identifier: Apache-2.0
"""CSV: one row per (configuration, peer, measure, label) with every statistic."""
from __future__ import annotations

import csv
import io

from ..analysis.results import Analysis, Row

COLUMNS = ("config_id", "config", "peer", "metric", "label", "unit", "n", "excluded_reps",
           "median", "median_ci_lo", "median_ci_hi", "median_ci_pct", "mean", "mean_ci_lo",
           "mean_ci_hi", "sd", "q1", "q3", "iqr", "min", "p95", "max", "outliers_mild", "outliers_severe")


def row_values(a: Analysis, r: Row) -> list:
    s = r.summary
    return [r.config_id, a.results.config_labels[r.config_id], r.peer, r.metric, r.label, r.unit,
            s.n, s.excluded, s.median, *s.median_ci, s.median_ci_pct, s.mean, *s.mean_ci, s.sd,
            s.q1, s.q3, s.iqr, s.min, s.p95, s.max, s.mild, s.severe]


def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.6g}"
    return str(v)


class CsvExporter:
    suffix = ".csv"

    def export(self, a: Analysis, reps: list[int] | None = None) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        rows = sorted(a.results.rows, key=lambda r: (r.config_id, r.peer, r.metric, r.label))
        for r in rows:
            w.writerow([_fmt(v) for v in row_values(a, r)])
        return buf.getvalue()
