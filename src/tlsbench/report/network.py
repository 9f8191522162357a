# SPDX-License-Identifier: Apache-2.0
"""The report's network section: per two-process configuration, handshake duration and
bytes on the wire next to the device's network-invariant processing of the same
repetitions, and sweeps over link parameters (analysis/questions/network.py says what each is)."""
from __future__ import annotations

from itertools import groupby

import numpy as np

from tlsbench.analysis.questions.network import NetworkRow, network_results, swept_parameters, sweep_value
from tlsbench.analysis.results import Analysis
from tlsbench.report.figures import MARKERS, STYLE, FigureSpec, plt

MS = 1e6


def _errorbar(ax, x, summaries, scale: float, label: str, **kw) -> None:
    med = np.array([s.median / scale for s in summaries])
    lo = np.array([s.median_ci[0] / scale for s in summaries])
    hi = np.array([s.median_ci[1] / scale for s in summaries])
    ax.errorbar(x, med, yerr=[med - lo, hi - med], capsize=3, marker="o", label=label, **kw)


def _series(rows: list[NetworkRow]):
    """Rows grouped into lines: one per protocol, device role and peer."""
    key = lambda r: (r.protocol, r.device_role, r.peer_library)  # noqa: E731
    return groupby(sorted(rows, key=key), key=key)


def _name(row: NetworkRow, rows: list[NetworkRow]) -> str:
    """A row's name on an axis: protocol, role and link, led by what else varies between rows."""
    varying = [attr for attr in ("library", "group", "credential") if len({getattr(r, attr) for r in rows}) > 1]
    lead = " ".join(getattr(row, attr) for attr in varying)
    return (f"{lead} · " if lead else "") + f"{row.protocol} {row.device_role} · {row.link}"


def duration_vs_processing(rows: list[NetworkRow]) -> FigureSpec:
    """The two figures every network configuration has, side by side, log scale."""
    shown = [r for r in rows if r.duration and r.processing]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.45 * len(shown)))
        y = np.arange(len(shown))
        for i, (offset, attr, label) in enumerate(((-0.15, "duration", "stop–start"),
                                                   (0.15, "processing", "device processing"))):
            s = [getattr(r, attr) for r in shown]
            med = np.array([v.median / MS for v in s])
            err = [med - [v.median_ci[0] / MS for v in s], [v.median_ci[1] / MS for v in s] - med]
            ax.errorbar(med, y + offset, xerr=err, fmt=MARKERS[i], capsize=3, label=label)  # grayscale: by marker
        ax.set_yticks(y, [_name(r, shown) for r in shown])
        ax.set_xscale("log")
        ax.set_xlabel("handshake, ms (median, 95% CI)")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return FigureSpec("network_duration_processing", "Stop–start vs network-invariant processing",
                      "Per configuration, the device's handshake stop–start time (all successful repetitions) and "
                      "its processing (retransmitted repetitions excluded), medians with 95% CIs; log scale.", fig)


def sweep(rows: list[NetworkRow], param: str) -> FigureSpec:
    """Duration and bytes on the wire against one swept parameter, a line per protocol/role."""
    with plt.rc_context(STYLE):
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
        for (protocol, role, peer), group in _series([r for r in rows if sweep_value(r, param) is not None]):
            group = sorted(group, key=lambda r: sweep_value(r, param))
            x = [sweep_value(r, param) for r in group]
            label = f"{protocol}, device {role}"
            with_d = [(xi, r) for xi, r in zip(x, group) if r.duration]
            _errorbar(left, [p[0] for p in with_d], [p[1].duration for p in with_d], MS, label)
            with_b = [(xi, r) for xi, r in zip(x, group) if r.wire_bytes]
            _errorbar(right, [p[0] for p in with_b], [p[1].wire_bytes for p in with_b], 1, label)
        left.set_ylabel("handshake stop–start (ms)")
        right.set_ylabel("bytes on the wire per repetition")
        for ax in (left, right):
            ax.set_xlabel(param.replace("_", " "))
        left.legend(frameon=False)
    return FigureSpec(f"network_sweep_{param}", f"Sweep over {param.replace('_', ' ')}",
                      f"Medians with 95% CIs against the link's {param.replace('_', ' ')}; bytes are IP packets on "
                      "the emulated link (headers, ACKs and retransmissions included).", fig)


def network_section(analysis: Analysis) -> dict:
    """What the template's network section needs (empty rows: no section)."""
    rows = network_results(analysis.ds, analysis.table, analysis.results.context.seed)
    if not rows:
        return {"rows": [], "figures": []}
    figs = [duration_vs_processing(rows)] + [sweep(rows, p) for p in swept_parameters(rows)]
    return {"rows": rows, "figures": figs}
