# SPDX-License-Identifier: Apache-2.0
"""`tlsbench compare --format json|csv`: every row of a comparison (analysis/questions/compare.py),
B/A with its 95% CI and verdict, at full precision, in its own unit (a time, or a count of
instructions or bytes). Each row names configuration A's key columns (export/columns.py)
and configuration B's id and key."""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from tlsbench.analysis.questions.compare import Comparison, CompareRow
from tlsbench.export.columns import CONFIG_COLUMNS, config_records
from tlsbench.export.csv import fmt
from tlsbench.export.json import plain

ROW_COLUMNS = ("config_b_id", "config_b_key", "peer", "metric", "label", "unit", "n_a", "n_b", "median_a",
               "median_b", "ratio", "ratio_ci_lo", "ratio_ci_hi", "verdict", "significant")
COLUMNS = tuple(c.name for c in CONFIG_COLUMNS) + ROW_COLUMNS


def _values(r: CompareRow, keys_a: dict[int, list], keys_b: dict[int, list]) -> list:
    key_b = keys_b[r.config_b]
    return [*keys_a[r.config_a], key_b[0], key_b[1], r.peer, r.metric, r.label, r.unit, r.n_a, r.n_b, r.median_a,
            r.median_b, r.ratio.ratio, *r.ratio.ci, r.ratio.verdict, int(r.ratio.significant)]


def _records(sides: Sequence[Any]) -> dict[int, list]:
    """Key columns of every configuration of one experiment's sides (each with .ds and .labels:
    a Measured or an analysis.compare.Side); a store's configuration ids are unique across kinds."""
    out: dict[int, list] = {}
    for s in sides:
        out.update(config_records(s.ds, s.labels))
    return out


def rows(c: Comparison, a: Sequence[Any], b: Sequence[Any]) -> list[list]:
    """Every row's values; `a`, `b`: the sides (or analyses) of A and of B the rows came from."""
    keys_a, keys_b = _records(a), _records(b)
    return [_values(r, keys_a, keys_b) for r in c.rows]


def comparison_csv(c: Comparison, a: Sequence[Any], b: Sequence[Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows([fmt(v) for v in values] for values in rows(c, a, b))
    return buf.getvalue()


def comparison_json(c: Comparison, a: Sequence[Any], b: Sequence[Any]) -> str:
    doc = {"a": c.name_a, "b": c.name_b, "noise_floor": c.noise_floor, "not_compared": c.not_compared,
           "warnings": c.warnings, "shifts": plain(list(c.shifts.values())),
           "rows": [dict(zip(COLUMNS, plain(v))) for v in rows(c, a, b)]}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"
