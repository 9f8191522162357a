# SPDX-License-Identifier: Apache-2.0
"""Tables that both the report and the exports lay out, defined once: which measures the
per-configuration table shows, and the time-per-operation table of the primitives with its
number formats. Times are shown in µs, throughput in MB/s (10⁶ bytes per second, at the
median time)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from tlsbench.analysis.questions.primitives import Cell, GroupResult, Primitives
from tlsbench.analysis.stats.stats import Ratio, Summary

# Columns of the per-configuration table (the report's and the Markdown export's):
# (heading, metric, peer, scale, unit); peer "any" takes the first peer that has the measure.
SUITE_COLUMNS = (
    ("Client handshake processing", "handshake_processing", "client", 1e6, "ms"),
    ("Server handshake processing", "handshake_processing", "server", 1e6, "ms"),
    ("Handshake stop–start", "handshake_time", "none", 1e6, "ms"),
    ("Record write, processing only", "write_processing", "any", 1e3, "µs"),
    ("Record write, incl. post", "write_processing_post", "any", 1e3, "µs"),
    ("Record write, total", "write_total", "any", 1e3, "µs"),
    ("Record read, processing only", "read_processing", "any", 1e3, "µs"),
    ("Record read, incl. pre", "read_processing_pre", "any", 1e3, "µs"),
    ("Record read, total", "read_total", "any", 1e3, "µs"),
)


MB = 1e6  # throughput unit: MB/s
FASTEST = "fastest"


def fmt_us(ns: float) -> str:
    """A time in µs with 3–4 significant digits (0.381, 40.02, 1,234.5)."""
    if ns is None or not math.isfinite(ns):
        return "–"
    us = ns / 1e3
    digits = 3 if us < 10 else 2 if us < 100 else 1
    return f"{us:,.{digits}f}"


def fmt_mbps(bps: float) -> str:
    return "–" if not math.isfinite(bps) else f"{bps / MB:,.1f}"


def size_label(size: int) -> str:
    """16 B, 1 KiB, 16 KiB; – for an experiment without a payload."""
    if not size:
        return "–"
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size:,} B"


def ratio_text(r: Ratio) -> str:
    return f"×{r.ratio:.2f} [{r.ci[0]:.2f}–{r.ci[1]:.2f}]" if math.isfinite(r.ratio) else "–"


# ---------------------------------------------------------------------- tables
@dataclass(frozen=True)
class LibraryValue:
    """One library's entry in a row of the time-per-operation table."""

    median: str        # µs
    ci: str            # "[lo, hi]" µs
    pct: str           # ± % of the median
    n: int
    vs_fastest: str    # FASTEST, or "×ratio [CI]"
    verdict: str       # FASTEST, a stats verdict, or "" when no other library measured it
    throughput: str    # MB/s at the median ("–" without a payload)
    throughput_ci: str
    note: str = ""     # instead of a value: "no data: 300 excluded (descheduled 300)"


@dataclass(frozen=True)
class TableRow:
    experiment: str
    size: str
    group: str
    sized: bool
    values: dict[str, LibraryValue | None]  # library -> value; None: not measured there


def ci_text(s: Summary) -> str:
    """A median's interval as ± % of it, or why there is none ("n = 1: no interval")."""
    return f"±{s.median_ci_pct:.1f}%" if s.has_interval else s.interval_note


def _value(cell: Cell, library: str, no_data: str = "") -> LibraryValue | None:
    r = cell.by_library.get(library)
    if r is None or not r.summary.n:
        return LibraryValue("–", "", "", 0, "", "", "–", "", no_data) if no_data else None
    s = r.summary
    several = len([v for v in cell.by_library.values() if v.summary.n]) > 1
    if library == cell.fastest:
        vs, verdict = (FASTEST, FASTEST) if several else ("", "")
    else:
        ratio = cell.vs_fastest[library]
        vs, verdict = ratio_text(ratio), ratio.verdict
    lo, hi = r.throughput_ci
    ci = f"[{fmt_us(s.median_ci[0])}, {fmt_us(s.median_ci[1])}]" if s.has_interval else ""
    return LibraryValue(fmt_us(s.median), ci, ci_text(s), s.n, vs, verdict, fmt_mbps(r.throughput),
                        f"[{fmt_mbps(lo)}, {fmt_mbps(hi)}]" if r.size and s.has_interval else "")


def table_rows(p: Primitives) -> list[TableRow]:
    sized = {m.name: m.sized for m in p.experiments}
    return [TableRow(c.experiment, size_label(c.size), c.group, sized[c.experiment],
                     {lib: _value(c, lib, p.no_data(lib, c.experiment, c.size)) for lib in p.libraries})
            for c in p.cells]


def headline_cells(p: Primitives) -> list[Cell]:
    """One row per (experiment, group): the largest payload of a sized experiment."""
    largest: dict[str, int] = {m.name: max(m.sizes) for m in p.experiments}
    return [c for c in p.cells if c.size == largest[c.experiment]]


def headline(r: GroupResult | None) -> str:
    if r is None or not r.summary.n:
        return "–"
    if r.size:
        return f"{fmt_mbps(r.throughput)} MB/s {ci_text(r.summary)}"
    return f"{fmt_us(r.summary.median)} µs {ci_text(r.summary)}"
