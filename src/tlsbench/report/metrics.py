# SPDX-License-Identifier: Apache-2.0
"""The report's metrics section (docs/report.md "Metrics", docs/metrics.md): per
configuration and peer, the handshake's instructions and memory; per step, the same; and the
chosen metrics the store has no values of, with why."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.questions.metrics import HANDSHAKE, MetricResults, MetricRow, metrics_of
from tlsbench.analysis.units import identical, identity_text

# Columns of the per-peer table: (metric, slice) -> heading, in order.
PEER_COLUMNS = (("instructions", HANDSHAKE, "instructions, handshake"),
                ("heap_peak", HANDSHAKE, "heap peak, handshake (B)"),
                ("heap_kept", HANDSHAKE, "heap kept after the handshake (B)"),
                ("heap_allocated", HANDSHAKE, "heap allocated, handshake (B)"),
                ("heap_peak", "connected", "heap peak, connected (B)"),
                ("stack_peak", "repetition", "stack high-water (B)"))
STEP_COLUMNS = (("instructions", "instructions"), ("heap_peak", "heap peak (B)"),
                ("heap_allocated", "heap allocated (B)"), ("stack_peak", "stack (B)"))


@dataclass
class Table:
    headings: list[str]
    rows: list[list[Any]] = field(default_factory=list)


def cell(row: MetricRow | None) -> str:
    """A median with its interval as ± %, or "identical in n repetitions"."""
    if row is None:
        return "–"
    s = row.summary
    text = f"{s.median:,.0f}"
    if identical(s):
        return f"{text} ({identity_text(s)})"
    pct = s.median_ci_pct
    return f"{text} ±{pct:.2f}%" if pct == pct else text


def peer_table(res: MetricResults) -> Table:
    by = {(r.config_key, r.peer, r.metric, r.slice): r for r in res.rows}
    names = {r.config_key: r.config for r in res.rows}
    present = [c for c in PEER_COLUMNS if any((k[2], k[3]) == c[:2] for k in by)]
    table = Table(["configuration", "peer"] + [c[2] for c in present])
    for key in sorted(names, key=names.get):
        for peer in ("client", "server"):
            cells = [cell(by.get((key, peer, m, s))) for m, s, _ in present]
            if any(c != "–" for c in cells):
                table.rows.append([names[key], peer] + cells)
    return table


def step_table(res: MetricResults) -> Table:
    slices: dict[tuple[str, str, str], dict[str, MetricRow]] = defaultdict(dict)
    names = {r.config_key: r.config for r in res.rows}
    for r in res.rows:
        if r.slice not in (HANDSHAKE, "connected", "repetition", "shared"):
            slices[(r.config_key, r.peer, r.slice)][r.metric] = r
    present = [c for c in STEP_COLUMNS if any(c[0] in v for v in slices.values())]
    table = Table(["configuration", "peer", "step"] + [c[1] for c in present])
    for (key, peer, step), metrics in sorted(slices.items(), key=lambda kv: (names[kv[0][0]], kv[0][1])):
        table.rows.append([names[key], peer, step] + [cell(metrics.get(m)) for m, _ in present])
    return table


def shared_rows(res: MetricResults) -> list[tuple[str, str]]:
    return [(r.config, cell(r)) for r in res.rows if r.slice == "shared"]


def section(ds: Dataset, seed: int) -> dict | None:
    """The section's content, or None when the store's plan chose time alone."""
    res = metrics_of(ds, seed)
    if res is None:
        return None
    return {"res": res, "peers": peer_table(res), "steps": step_table(res), "shared": shared_rows(res)}
