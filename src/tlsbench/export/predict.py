# SPDX-License-Identifier: Apache-2.0
"""Predictions as CSV and JSON (`tlsbench predict --format csv|json`, `--out FILE`, and the
sweep's files of `--figures DIR`). Every row says it is a prediction: the column `kind` holds
"prediction", and a validation row holds the prediction and the measurement in separate,
named columns."""
from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable, Sequence

from tlsbench.analysis.models.predict.model import LABEL, Prediction
from tlsbench.analysis.models.predict.results import PredictResults
from tlsbench.analysis.models.predict.sweep import Sweep
from tlsbench.analysis.models.predict.validate import Check

PREDICTION_COLUMNS = (
    "kind", "link", "rank", "tied", "config_id", "config", "device", "transport", "n_repetitions", "n_draws", "failed",
    "duration_ms_median", "duration_ms_ci_lo", "duration_ms_ci_hi", "duration_ms_p5", "duration_ms_p95",
    "bytes_median", "packets_median", "device_processing_ms", "tls_bytes", "energy_mj_median", "energy_mj_ci_lo",
    "energy_mj_ci_hi", "energy_total_mj_median", "profile", "model_band_worst_pct")
SWEEP_COLUMNS = ("kind", "parameter", "unit", "x", "config_id", "config", "duration_ms_median", "duration_ms_ci_lo",
                 "duration_ms_ci_hi", "duration_ms_p5", "duration_ms_p95", "bytes_median", "energy_mj_median",
                 "energy_mj_ci_lo", "energy_mj_ci_hi")
CROSSOVER_COLUMNS = ("kind", "parameter", "unit", "metric", "config_a", "config_b", "differ_in", "x", "better_below",
                     "better_above", "first_order_x")
CHECK_COLUMNS = ("link", "loss_pct", "config_id", "config", "protocol", "reference_config_id",
                 "predicted_duration_ms", "predicted_ci_lo", "predicted_ci_hi", "predicted_p5", "predicted_p95",
                 "measured_duration_ms", "measured_ci_lo", "measured_ci_hi", "measured_n", "measured_retransmitted",
                 "measured_failed", "duration_error_pct", "predicted_bytes", "measured_bytes", "bytes_error_pct",
                 "predicted_retransmitted_pct", "measured_retransmitted_pct", "measured_median_percentile",
                 "predicted_medians_lo", "predicted_medians_hi", "consistent")

MS, MJ = 1e6, 1e-3


def _num(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow(["" if v is None or (isinstance(v, float) and not math.isfinite(v))
                    else f"{v:.6g}" if isinstance(v, float) else v for v in row])
    return buf.getvalue()


def _energy(p: Prediction) -> list[Any]:
    e, t = p.energy, p.energy_total
    if e is None or t is None:
        return [math.nan, math.nan, math.nan, math.nan]
    return [e.median / MJ, e.median_ci[0] / MJ, e.median_ci[1] / MJ, t.median / MJ]


def prediction_row(p: Prediction, rank: int | None, tied: bool, profile: str, band: float = math.nan) -> list[Any]:
    """`band`: the cycle model's worst measured |error| in % (NaN: no model between the values and the time)."""
    d = p.duration
    return [LABEL, p.link.label, rank, tied, p.config_id, p.label, p.device, p.transport, p.n_scripts, p.n_draws,
            p.failed, d.median / MS, d.median_ci[0] / MS, d.median_ci[1] / MS, p.p5_ns / MS, p.p95_ns / MS,
            p.bytes.median, p.packets.median, p.processing_ns / MS, p.sent_bytes, *_energy(p), profile, band]


def _band(res: PredictResults) -> float:
    conv = res.options.conversion
    return 100 * conv.band.worst if conv and conv.band else math.nan


def predictions_csv(res: PredictResults) -> str:
    profile = res.profile.name if res.profile else ""
    rows = [prediction_row(r.prediction, r.rank, r.tied, profile, _band(res)) for lp in res.links
            for r in lp.by_duration]
    return _csv(PREDICTION_COLUMNS, rows)


def sweep_rows(sweep: Sweep) -> list[list[Any]]:
    out = []
    for cid, preds in sweep.points.items():
        for x, p in zip(sweep.xs, preds):
            d = p.duration
            e = _energy(p)
            out.append([LABEL, sweep.parameter.name, sweep.parameter.unit, float(x), cid, sweep.labels[cid],
                        d.median / MS, d.median_ci[0] / MS, d.median_ci[1] / MS, p.p5_ns / MS, p.p95_ns / MS,
                        p.bytes.median, *e[:3]])
    return out


def sweep_csv(sweep: Sweep) -> str:
    return _csv(SWEEP_COLUMNS, sweep_rows(sweep))


def crossover_rows(sweep: Sweep) -> list[list[Any]]:
    lab, p = sweep.labels, sweep.parameter
    return [[LABEL, p.name, p.unit, c.metric, lab[c.a], lab[c.b], c.differs, c.x, lab[c.below], lab[c.above],
             c.first_order]
            for c in sweep.crossovers]


def crossovers_csv(sweep: Sweep) -> str:
    return _csv(CROSSOVER_COLUMNS, crossover_rows(sweep))


def check_row(c: Check) -> list[Any]:
    p, m = c.predicted, c.measured
    mb = c.measured_bytes.median if c.measured_bytes else math.nan
    return [c.link.label, c.loss_pct, c.config_id, c.label, c.protocol, c.reference_id, p.duration.median / MS,
            p.duration.median_ci[0] / MS, p.duration.median_ci[1] / MS, p.p5_ns / MS, p.p95_ns / MS, m.median / MS,
            m.median_ci[0] / MS, m.median_ci[1] / MS, m.n, c.measured_retransmitted, c.measured_failed,
            100 * c.duration_error, p.bytes.median, mb, 100 * c.bytes_error, 100 * p.retransmitted,
            100 * c.measured_retransmitted_share, c.measured_percentile, c.medians_range[0] / MS,
            c.medians_range[1] / MS, c.consistent]


def checks_csv(checks: Sequence[Check]) -> str:
    return _csv(CHECK_COLUMNS, [check_row(c) for c in checks])


def to_json(res: PredictResults) -> str:
    """Everything of a prediction run as one JSON document."""
    profile = res.profile.name if res.profile else ""
    doc: dict[str, Any] = {
        "kind": LABEL, "experiment": res.experiment, "profile": res.profile.label if res.profile else None,
        "conversion": res.options.conversion.as_dict() if res.options.conversion else None, "warnings": res.warnings,
        "links": [{"link": lp.link.label, "preset": lp.link.preset,
                   "d2p": vars(lp.link.d2p), "p2d": vars(lp.link.p2d),
                   "predictions": [dict(zip(PREDICTION_COLUMNS, map(_num, prediction_row(r.prediction, r.rank, r.tied,
                                                                                      profile, _band(res)))))
                                   for r in lp.by_duration]} for lp in res.links],
    }
    if res.sweep:
        doc["sweep"] = [dict(zip(SWEEP_COLUMNS, map(_num, r))) for r in sweep_rows(res.sweep)]
        doc["crossovers"] = [dict(zip(CROSSOVER_COLUMNS, map(_num, r))) for r in crossover_rows(res.sweep)]
    if res.checks:
        doc["validation"] = [dict(zip(CHECK_COLUMNS, map(_num, check_row(c)))) for c in res.checks]
        doc["errors"] = [{k: _num(v) for k, v in vars(e).items()} for e in res.errors]
    return json.dumps(doc, indent=2)
