# SPDX-License-Identifier: Apache-2.0
"""The report's prediction section and figures (analysis/predict says what each value is):
rankings per link, crossover plots (a line per configuration, crossovers marked), and
predicted against measured when the store ran the emulator. Every title, column and
legend says "predicted": these are a model's numbers, not measurements."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tlsbench.analysis.models.predict.links import Link, preset_info, sources
from tlsbench.analysis.models.predict.results import PredictResults
from tlsbench.analysis.models.predict.sweep import Crossover, Sweep
from tlsbench.analysis.models.predict.validate import Check
from tlsbench.report import figures
from tlsbench.report.figures import STYLE, FigureSpec, plt

MS, MJ = 1e6, 1e-3
METRICS = {"duration": ("predicted handshake duration (ms)", MS), "energy": ("predicted device energy above idle (mJ)", MJ)}


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_x(x: float, unit: str) -> str:
    """A swept value as people write it: 62.5 kbit/s, 1.2 Mbit/s, 300 ms, 5 %."""
    if unit == "bit/s":
        for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if x >= scale:
                return f"{x / scale:.3g} {prefix}bit/s"
        return f"{x:.3g} bit/s"
    return f"{x:.3g} {unit}"


def crossover_figure(sweep: Sweep, metric: str) -> Figure:
    """Median prediction (95% CI band) per configuration against the swept parameter;
    every crossover of two lines marked and labelled with its x."""
    ylabel, scale = METRICS[metric]
    xs = sweep.xs
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 4.6))
        for i, (cid, preds) in enumerate(sweep.points.items()):
            summaries = [p.duration if metric == "duration" else p.energy for p in preds]
            med = np.array([s.median / scale if s is not None and s.n else math.nan for s in summaries])
            lo = np.array([s.median_ci[0] / scale if s is not None and s.n else math.nan for s in summaries])
            hi = np.array([s.median_ci[1] / scale if s is not None and s.n else math.nan for s in summaries])
            style = figures.line(i)
            ax.plot(xs, med, label=_short(sweep.labels[cid]), **style)
            ax.fill_between(xs, lo, hi, color=style["color"], alpha=0.15, linewidth=0)
        for c in [c for c in sweep.crossovers if c.metric == metric and c.comparable]:
            y = _value_at(sweep, c, metric) / scale
            ax.plot([c.x], [y], marker="o", markersize=9, markerfacecolor="none", markeredgecolor="black", zorder=5)
            ax.axvline(c.x, color="black", linewidth=0.6, linestyle=":")
            ax.annotate(format_x(c.x, sweep.parameter.unit), (c.x, y), textcoords="offset points", xytext=(6, 8),
                        fontsize=8)
        if sweep.parameter.log:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(sweep.parameter.axis)
        ax.set_ylabel(ylabel)
        ax.set_title(f"Predicted over {sweep.base.label}, {sweep.parameter.name} swept (model, not measured)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, frameon=False)
    return fig


def _value_at(sweep: Sweep, c: Crossover, metric: str) -> float:
    """The crossing lines' value at the crossover (interpolated like its x)."""
    ys = sweep.medians(c.a, metric)
    xs = np.log(sweep.xs) if sweep.parameter.log else sweep.xs
    x = math.log(c.x) if sweep.parameter.log else c.x
    ok = np.isfinite(ys)
    if sweep.parameter.log:
        return float(np.exp(np.interp(x, xs[ok], np.log(ys[ok]))))
    return float(np.interp(x, xs[ok], ys[ok]))


def validation_figure(checks: list[Check]) -> Figure:
    """Predicted against measured median duration, log-log, with the ±5% and ±15% bands."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.2, 5.2))
        styles = {("TLS", False): ("o", "C0"), ("DTLS", False): ("s", "C1"), ("TLS", True): ("o", "C3"),
                  ("DTLS", True): ("s", "C2")}
        seen = set()
        for c in checks:
            lossy = c.loss_pct > 0
            marker, color = styles[(c.protocol, lossy)]
            label = f"{c.protocol}, {'lossy' if lossy else 'no loss'}"
            m, p = c.measured, c.predicted.duration
            lo, hi = c.medians_range
            ax.errorbar(m.median / MS, p.median / MS,
                        xerr=[[(m.median - m.median_ci[0]) / MS], [(m.median_ci[1] - m.median) / MS]],
                        yerr=[[max(p.median - lo, 0) / MS], [max(hi - p.median, 0) / MS]],
                        fmt=marker, color=color, markerfacecolor="none", capsize=2,
                        label=None if label in seen else label)
            seen.add(label)
        values = [v for c in checks for v in (c.measured.median / MS, c.predicted.duration.median / MS) if v > 0]
        lo, hi = (min(values) / 1.5, max(values) * 1.5) if values else (1, 10)
        grid = np.geomspace(lo, hi, 50)
        ax.plot(grid, grid, color="black", linewidth=0.8)
        for band, alpha in ((0.05, 0.18), (0.15, 0.08)):
            ax.fill_between(grid, grid * (1 - band), grid * (1 + band), color="grey", alpha=alpha, linewidth=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured median stop–start over the emulated link (ms)")
        ax.set_ylabel("predicted median (ms)")
        ax.set_title("Predicted vs measured (bands: ±5%, ±15%)")
        ax.legend(frameon=False)
    return fig


def prediction_figures(res: PredictResults) -> list[FigureSpec]:
    """The section's figures (also for `tlsbench report --pdf` and `tlsbench predict --figures`)."""
    out = []
    if res.sweep:
        s = res.sweep
        for metric in ("duration", "energy"):
            if metric == "energy" and res.profile is None:
                continue
            out.append(FigureSpec(
                f"predict_{s.parameter.name}_{metric}", f"Predicted {metric} against {s.parameter.name}",
                f"Median prediction per configuration (95% CI band) over {s.base.label} with its "
                f"{s.parameter.name} swept; circles mark where two configurations that differ in one respect swap "
                "places (every crossover is in the CSV of `tlsbench predict --figures`). A model's "
                "numbers: the inputs are measured, the link and the stacks are simulated.",
                crossover_figure(s, metric)))
    if res.checks:
        out.append(FigureSpec("predict_validation", "Predicted vs measured",
                              "Per configuration over each emulated link: the median predicted from the reference "
                              "link's repetitions against the median measured through tlsbench-link; x: the measured "
                              "median's 95% CI, y: the predicted range of medians of as many handshakes (on a lossy "
                              "link it spans the lossless and the timer-expired modes).",
                              validation_figure(res.checks)))
    return out


def crossover_sentences(sweep: Sweep) -> list[dict[str, Any]]:
    """Each crossover as a sentence a reader can act on."""
    lab, unit = sweep.labels, sweep.parameter.unit
    rows = []
    for c in [c for c in sweep.crossovers if c.comparable]:
        x = format_x(c.x, unit)
        what = "takes longer" if c.metric == "duration" else "costs the device more energy"
        rows.append({"metric": c.metric, "x": x, "differs": c.differs, "first_order": format_x(c.first_order, unit) if math.isfinite(c.first_order) else "–",
                     "text": f"below {x}, {lab[c.above]} {what} than {lab[c.below]}; above {x}, the other way round",
                     "below": lab[c.below], "above": lab[c.above]})
    return rows


def _citations(links: list[Link]) -> list[dict[str, Any]]:
    known = sources()
    out, seen = [], set()
    for link in links:
        if not link.preset or link.preset in seen:
            continue
        seen.add(link.preset)
        info = preset_info(link.preset)
        out.append({"name": link.preset, "description": info.description,
                    "figures": [{"field": c.field, "value": c.value, "note": c.note, "approximate": c.approximate,
                                 "source": known[c.source].document + ", " + known[c.source].section
                                 if c.source in known else "our assumption"} for c in link.citations]})
    return out


def html_section(res: PredictResults | None) -> dict[str, Any] | None:
    """What the template's prediction section needs; None: no section."""
    if res is None or not (res.links or res.checks):
        return None
    figs = [{"title": f.title, "caption": f.caption, "name": f.name, "svg": figures.inline_svg(f.figure, f.title)}
            for f in prediction_figures(res)]
    return {"res": res, "figures": figs, "crossovers": crossover_sentences(res.sweep) if res.sweep else [],
            "citations": _citations([lp.link for lp in res.links] + [c.link for c in res.checks]),
            "format_x": format_x}
