# SPDX-License-Identifier: Apache-2.0
"""The self-contained offline HTML report: one file, no network fetch of any kind
(no CDN, no web fonts; figures are embedded as data URIs)."""
from __future__ import annotations

import math
from pathlib import Path

import jinja2
import numpy as np

from .. import __version__
from ..errors import UserError
from ..files import write_atomic
from ..analysis.compare import Comparison, compare
from ..analysis.device import device_vs_host, identity
from ..analysis.libraries import GRANULARITY_MEANING
from ..analysis.measures import METRICS
from ..analysis.results import Analysis
from ..analysis.tables import SUITE_COLUMNS, ci_text
from ..analysis.stats import N_BOOT, N_BOOT_ROUNDS
from ..analysis.units import identical, identity_text
from ..analysis.vocab import vocab
from . import WINNERS_MODES
from .figures import FigureSpec, all_figures, data_uri
from .energy import html_section
from .predict import html_section as predict_section
from ..analysis.predict.results import PredictResults
from .metrics import section as metrics_section
from .network import network_section
from . import primitives

def _num(x: float, digits: int = 1) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:,.{digits}f}"


def _figure(f: FigureSpec) -> dict[str, str]:
    return {"title": f.title, "caption": f.caption, "name": f.name, "uri": data_uri(f.figure)}


def _spread(s) -> str:
    """A median's interval as ±%, or why there is none: "n = 1: no interval", "identical in
    n repetitions" (a device's deterministic counts)."""
    return "–" if s is None else identity_text(s) if identical(s) else ci_text(s)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("tlsbench.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["pct"] = lambda x: "–" if not math.isfinite(x) else f"±{x:.1f}%"
    env.filters["ci"] = _spread
    env.filters["scale"] = lambda x, s: x / s if x is not None and math.isfinite(x) else math.nan
    env.globals.update(identical=identical, identity_text=identity_text)
    return env


class ReportError(UserError):
    """Two experiments that cannot be set side by side as asked."""


def _suite_rows(analysis: Analysis) -> list[dict]:
    res = analysis.results
    rows = []
    order = sorted(res.configs, key=lambda c: res.config_labels[c])
    for cid in order:
        cells = []
        for _, metric, peer, scale, unit in SUITE_COLUMNS:
            row = res.cell(cid, metric, peer)
            cells.append((row.summary if row else None, scale))
        share = res.find(cid, "io_share", "none")
        client = res.find(cid, "handshake_processing", "client")
        rows.append({"config": res.config_labels[cid], "cfg": res.configs[cid], "cells": cells,
                     "no_data": res.no_data.get(cid, ""),
                     "round_spread": client.summary.round_spread_pct if client else math.nan,
                     "used": analysis.samples.used_reps.get(cid, 0), "excluded": analysis.samples.excluded_reps.get(cid, 0),
                     "io_share": share.summary.median * 100 if share else math.nan,
                     "bytes_c2s": _med(res.find(cid, "bytes_c2s")), "bytes_s2c": _med(res.find(cid, "bytes_s2c"))})
    return rows


HANDSHAKE_PEERS = ("client", "server")


def _side_by_side(analysis: Analysis) -> list[dict]:
    """Per matrix cell: each library's handshake processing summary per peer (None: not measured)."""
    res, libs = analysis.results, analysis.results.libraries
    rows = []
    for cell in libs.cells:
        per_lib = {}
        for lib in libs.order:
            cid = cell.configs.get(lib)
            found = {p: res.find(cid, "handshake_processing", p) if cid is not None else None for p in HANDSHAKE_PEERS}
            per_lib[lib] = {p: (r.summary if r else None) for p, r in found.items()}
        rows.append({"cell": cell, "libs": per_lib})
    return rows


def _interval_rounds(res) -> str:
    """How the per-configuration intervals were made, in words ("12 rounds")."""
    rounds = sorted({r.summary.rounds for r in res.rows if r.metric == "handshake_processing"})
    methods = {r.summary.ci_method for r in res.rows if r.metric == "handshake_processing"}
    if not rounds:
        return "no values"
    text = f"{rounds[-1]} rounds" if rounds[0] == rounds[-1] else f"{rounds[0]}–{rounds[-1]} rounds"
    return text + ("; with fewer than 3, the repetitions are resampled instead" if "repetitions" in methods else "")


def _exclusions(res) -> list[dict]:
    """Configurations that lost repetitions, most lost first."""
    lost = [(cid, x) for cid, x in res.exclusions.items() if x.excluded]
    return [{"config": res.config_labels[cid], "x": x}
            for cid, x in sorted(lost, key=lambda cx: (-cx[1].excluded / max(cx[1].stored, 1), res.config_labels[cx[0]]))]


def _med(row) -> float:
    return row.summary.median if row else math.nan


def _step_tables(analysis: Analysis) -> list[dict]:
    """Per configuration: step and crypto rows, in the spec's label order."""
    res, voc = analysis.results, vocab()
    order_of = {lab: i for i, lab in enumerate(sorted(voc.label_name))}
    out = []
    libs = res.libraries.order
    by_library = lambda c: (libs.index(res.configs[c].library) if res.configs[c].library in libs else len(libs),  # noqa: E731
                            res.config_labels[c])
    for cid in sorted(res.configs, key=by_library):
        rows = [r for r in res.rows if r.config_id == cid and r.metric in ("step", "crypto", "handshake_processing", "handshake_overhead")]
        rows.sort(key=lambda r: (r.peer, ("handshake_processing", "step", "crypto", "handshake_overhead").index(r.metric),
                                 order_of.get(voc.label_id.get(r.label, -1), -1)))
        if rows:
            out.append({"config": res.config_labels[cid], "library": res.configs[cid].library, "rows": rows})
    return out


def build_html(analysis: Analysis, comparison: Comparison | None = None, figures: list | None = None,
               winners: str = WINNERS_MODES[0], energy: dict | None = None, predict: dict | None = None) -> str:
    """The report as one HTML string; `winners` picks the winners sections (WINNERS_MODES);
    `energy` is the energy section (report/energy.py html_section), `predict` the
    predictions' (report/predict.py html_section), None for none."""
    res = analysis.results
    figs = all_figures(analysis, res.context.seed) if figures is None else figures
    overhead = [r.summary.median for r in res.rows if r.metric == "handshake_overhead"]
    ctx = res.context
    hello = next(iter(analysis.ds.agents.values()), {}).get("hello", {})
    tpl = _env().get_template("report.html.j2")
    network = network_section(analysis)
    return tpl.render(
        network=network["rows"], network_figures=[_figure(f) for f in network["figures"]],
        r=res, ctx=ctx, a=analysis, hello=hello, suite_columns=SUITE_COLUMNS, suites=_suite_rows(analysis),
        step_tables=_step_tables(analysis), metrics={m.name: m for m in METRICS},
        figures=[_figure(f) for f in figs],
        overhead_median_ns=float(np.median(overhead)) if overhead else math.nan,
        comparison=comparison, labels=res.config_labels, version=__version__, n_boot=N_BOOT,
        n_boot_rounds=N_BOOT_ROUNDS, interval_rounds=_interval_rounds(res), exclusions=_exclusions(res),
        heavy_load=any(w.startswith("Heavy load") for w in res.warnings),
        libs=res.libraries, side_by_side=_side_by_side(analysis), granularity_meaning=GRANULARITY_MEANING,
        show_overall=winners != "per-library", show_per_library=winners != "overall" and res.libraries.several,
        primitives=primitives.section(res.primitives, data_uri, energy["res"].rows if energy else []) if res.primitives else None,
        energy=energy, predict=predict, u=analysis.ds.unit, device=res.device,
        beyond=metrics_section(analysis.ds.path, ctx.seed) if analysis.ds.path else None,
    )


def write_report(analysis: Analysis, out: str | Path, comparison: Comparison | None = None,
                 winners: str = WINNERS_MODES[0], energy: dict | None = None, where: str = "--out",
                 predict: dict | None = None) -> Path:
    """Writes the report atomically (files.write_atomic): a failure leaves no truncated file;
    `where` names the option that writes it elsewhere."""
    return write_atomic(out, build_html(analysis, comparison, winners=winners, energy=energy, predict=predict), where)


def set_beside(analysis: Analysis, other: Analysis) -> Comparison | None:
    """What a second experiment adds: the host's times beside a device's counts (device vs
    host), or B/A of two experiments counting alike (and, for two device runs, whether their
    counts are identical)."""
    mine, theirs, device = analysis.ds.unit, other.ds.unit, analysis.results.device
    if device is not None and theirs.is_time:
        device.vs_host = device_vs_host(analysis, other, f"experiment {other.ds.name}")
        return None
    if mine != theirs:
        raise ReportError(f"{analysis.ds.name} counts in {mine.name}, {other.ds.name} in {theirs.name}: a count and a "
                          "time are not compared as a ratio; give the device's experiment first (tlsbench report "
                          "DEVICE_EXPERIMENT --compare-with HOST_EXPERIMENT) for the device-vs-host section")
    if device is not None:
        device.identity, device.identity_with = identity(analysis.ds, other.ds), f"experiment {other.ds.name}"
    return compare(analysis, other, analysis.results.context.seed)


def write_html(analysis: Analysis, target: Path, other: Analysis | None = None, winners: str = WINNERS_MODES[0],
               profile: str | None = None, where: str = "--out", predictions: PredictResults | None = None) -> Path:
    """The HTML report of an analysed experiment: with a B/A section when `other` is given;
    `winners`: both, overall or per-library winners sections; an energy section when the
    store holds a capture or a power `profile` is named. `where`: how to write it elsewhere,
    for the message when it cannot be written."""
    comparison = set_beside(analysis, other) if other else None
    analysis.results.comparison = comparison
    return write_report(analysis, target, comparison, winners, html_section(analysis, profile), where,
                        predict_section(predictions))
