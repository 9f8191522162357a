# SPDX-License-Identifier: Apache-2.0
"""The report's energy section and figures (analysis/models/energy/results.py says what is shown):
every row and every figure series carries its source label."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.analysis.models.energy.results import EnergyResults, collect
from tlsbench.analysis.models.energy.table import KINDS
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.vocab import vocab
from tlsbench.report import figures

PEERS = ("client", "server")


def scatter_figure(analysis: Analysis, res: EnergyResults) -> Figure:
    """Handshake processing time against handshake energy, per configuration and peer."""
    styles: dict[int, dict[str, Any]] = {0: dict(marker="o", fillstyle="full"), 1: dict(marker="s", fillstyle="none")}
    results = analysis.results
    with figures.plt.rc_context(figures.STYLE):
        fig, axes = figures.plt.subplots(1, len(PEERS), figsize=(9.5, 3.8), squeeze=False)
        for ax, peer in zip(axes[0], PEERS):
            for i, source in enumerate(res.sources):
                points = []
                for cid in results.configs:
                    energy = res.find(cid, "handshake", peer, "", source)
                    time = results.find(cid, "handshake_processing", peer)
                    if energy and time and energy.summary.n:
                        e = energy.summary
                        points.append((time.summary.median / 1e6, e.median * 1e3, e.median * 1e3 - e.median_ci[0] * 1e3,
                                       e.median_ci[1] * 1e3 - e.median * 1e3))
                if points:
                    x, y, lo, hi = np.array(points).T
                    ax.errorbar(x, y, yerr=[lo, hi], linestyle="none", capsize=2, label=source, **styles[i % 2])
            ax.set_title(f"Handshake, {peer}")
            ax.set_xlabel(f"median handshake processing ({analysis.ds.unit.label(1e6)})")
            ax.set_ylabel("median handshake energy (mJ)")
        handles = {lab: h for ax in axes[0] for h, lab in zip(*ax.get_legend_handles_labels())}
        fig.legend(handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
                   frameon=False)
    return fig


def significant(x: float, digits: int = 3) -> str:
    """A number to `digits` significant digits (energies span µJ to J across devices)."""
    return "–" if x is None or not math.isfinite(x) else f"{x:,.{digits}g}" if abs(x) >= 1 else f"{x:.{digits}g}"


def _part_ms(analysis: Analysis, res, cid: int, peer: str) -> float | None:
    """The peer's median handshake processing as the part's ms (the one conversion), when the
    estimate converts a device's counts (a host's own times are already shown as ms)."""
    conv = res.conversion
    found = analysis.results.find(cid, "handshake_processing", peer) if conv and conv.counted else None
    return found.summary.median * conv.step_s(cid, vocab().peers[peer]) * 1e3 if found else None


def html_section(analysis: Analysis, profile: str | OperatingPoint | None = None) -> dict[str, Any] | None:
    """The report's energy section (template energy.html.j2), None when there is nothing."""
    res = collect(analysis, profile)
    if res is None:
        return None
    labels, voc = analysis.results.config_labels, vocab()
    order = {lab: i for i, lab in enumerate(sorted(voc.label_name))}
    both = res.capture is not None and res.profile is not None
    handshakes, steps = [], []
    for cid in sorted(analysis.results.configs, key=labels.__getitem__):
        for peer in PEERS:
            row = res.preferred(cid, "handshake", peer)
            if row:
                other = res.find(cid, "handshake", peer, "", res.profile.label) if both and res.profile else None
                handshakes.append({"config": labels[cid], "peer": peer, "row": row,
                                   "estimate": other if other is not row else None,
                                   "ms": _part_ms(analysis, res, cid, peer)})
        rows = [r for r in res.rows if r.config_id == cid and r.kind == "step"
                and r is res.preferred(cid, "step", r.peer, r.label)]
        rows.sort(key=lambda r: (r.peer, order.get(voc.label_id.get(r.label, -1), -1)))
        if rows:
            steps.append({"config": labels[cid], "rows": rows})
    records = [r for r in res.rows if r.kind in ("record_write", "record_read")]
    figure = figures.inline_svg(scatter_figure(analysis, res), "Handshake time and energy") if handshakes else None
    return {"res": res, "handshakes": handshakes, "steps": steps, "records": records, "both": both,
            "kinds": {k.name: k for k in KINDS}, "figure": figure, "sig": significant,
            "band": res.conversion.band if res.conversion else None}


def energy_figures(analysis: Analysis, profile: str | OperatingPoint | None = None) -> list[figures.FigureSpec]:
    """The energy figures (for `tlsbench report --pdf`): none without energy results."""
    res = collect(analysis, profile)
    if res is None or not any(r.kind == "handshake" for r in res.rows):
        return []
    return [figures.FigureSpec("energy_scatter", "Time and energy", "Median handshake processing against median "
                               "handshake energy per configuration and peer; the legend names each series' source.",
                               scatter_figure(analysis, res))]
