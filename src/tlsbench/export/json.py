# SPDX-License-Identifier: Apache-2.0
"""JSON: the whole Results (context, statistics, winners, group-bys, comparison, a device's
footprint and device-vs-host rows), the network section and energy (measured, or estimated
with a profile). Every row names its unit; `identical` marks a sample whose values were all
the same. Configurations carry every field as a key (export/columns.py) next to the
display name; floats are exact (JSON numbers as Python writes them)."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from tlsbench.analysis.results import Analysis
from tlsbench.analysis.units import identical
from tlsbench.export.columns import CONFIG_COLUMNS
from tlsbench.export.csv import key_columns, metrics_of


def plain(x):
    """Dataclasses, numpy scalars and NaN (-> null) as JSON-ready Python values."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
        for prop in ("median_ci_pct", "mean_ci_pct", "interval_note", "no_data", "text"):  # derived values worth exporting
            if isinstance(getattr(type(x), prop, None), property):
                out[prop] = plain(getattr(x, prop))
        return out
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if not math.isfinite(x) else float(x)
    return x


def network(analysis: Analysis) -> list:
    from tlsbench.analysis.questions.network import network_results

    ctx = analysis.results.context
    return plain(network_results(analysis.ds, analysis.table, ctx.seed, ctx.include_flagged))


def energy(analysis: Analysis, profile) -> dict | None:  # profile: a name, an OperatingPoint, None
    from tlsbench.analysis.models.energy.results import collect

    res = collect(analysis, profile)
    return None if res is None else {"sources": res.sources, "warnings": res.warnings, "rows": plain(res.rows),
                                     "conversion": res.conversion.as_dict() if res.conversion else None}


def configurations(analysis: Analysis) -> dict[str, dict]:
    """Every configuration of the analysis (handshakes, experiments, a memory image) by id:
    its key columns, the display name among them as `config`."""
    names = [c.name for c in CONFIG_COLUMNS]
    return {str(cid): dict(zip(names, plain(values))) for cid, values in key_columns(analysis).items()}


class JsonExporter:
    suffix = ".json"

    def __init__(self, profile: str | None = None):
        self.profile = profile

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str:
        from tlsbench.analysis.questions.sched import collect as sched_view

        r = analysis.results
        rows = [{**plain(row), "identical": identical(row.summary)} for row in r.rows]
        doc = {"context": plain(r.context),
               "configs": {str(k): {**plain(v), "display": r.config_labels[k]} for k, v in r.configs.items()},
               "configurations": configurations(analysis),
               "network": network(analysis), "energy": energy(analysis, self.profile),
               "rows": rows, "winners": plain(r.winners), "groups": plain(r.groups),
               "warnings": r.warnings, "comparison": plain(r.comparison), "libraries": plain(r.libraries),
               "primitives": plain(r.primitives), "device": plain(r.device), "no_data": plain(r.no_data),
               "exclusions": plain(r.exclusions), "round_shift": plain(r.round_shift),
               "sched": plain(sched_view(analysis)),
               "metrics": plain(metrics_of(analysis))}  # beyond time (docs/metrics.md)
        return json.dumps(doc, indent=1, allow_nan=False)
