# SPDX-License-Identifier: Apache-2.0
"""The primitives section of the report (and its terminal and Markdown forms): time per
operation of every experiment group with 95% CIs, libraries side by side with their ratio to
the fastest, throughput over payload size, and the asymmetric operations as bars.

Numbers come from analysis/questions/primitives.py; this module only lays them out. Times are shown
in µs, throughput in MB/s (10⁶ bytes per second, at the median time)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter
from rich.table import Table

from tlsbench.analysis.models.energy.table import EnergyRow
from tlsbench.analysis.questions.primitives import Primitives
from tlsbench.analysis.tables import MB, headline, headline_cells, size_label, table_rows
from tlsbench.report.figures import EDGE, HATCHES, STYLE, FigureSpec, plt

LINE_STYLES = ("-", "--", ":", "-.")  # one per group of an experiment (encrypt, decrypt...)


@dataclass(frozen=True)
class OperationEnergyRow:
    """A row of an energy-per-operation table: library -> "median [CI]" in µJ."""

    experiment: str
    size: str
    group: str
    values: dict[str, str]


def fmt_uj(j: float) -> str:
    """Energy in µJ to 3 significant digits (a hash of 16 B to an RSA signature: 6 decades)."""
    return "–" if not math.isfinite(j) else f"{j * 1e6:,.3g}" if j * 1e6 < 1000 else f"{j * 1e6:,.0f}"


def energy_tables(p: Primitives, energy: Sequence[EnergyRow]) -> list[dict]:
    """Energy per operation, one table per source (measured first, then estimate): never
    mixed in one table. `energy`: the energy results' rows (tlsbench.analysis.models.energy.results.collect)."""
    ops = [e for e in energy if e.kind == "operation"]
    by_key = {(e.config_id, e.label, e.source): e for e in ops}
    tables = []
    for source in dict.fromkeys(e.source for e in ops):
        rows = []
        for c in p.cells:
            found = {lib: by_key.get((r.config_id, r.group, source)) for lib, r in c.by_library.items()}
            values = {lib: f"{fmt_uj(e.summary.median)} [{fmt_uj(e.summary.median_ci[0])}, "
                           f"{fmt_uj(e.summary.median_ci[1])}]" for lib, e in found.items() if e and e.summary.n}
            if values:
                rows.append(OperationEnergyRow(c.experiment, size_label(c.size), c.group, values))
        tables.append({"source": source, "rows": rows})
    return tables


# ---------------------------------------------------------------------- figures
def _colours(p: Primitives) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab10")
    return {lib: cmap(i % 10) for i, lib in enumerate(p.libraries)}


def throughput_figure(p: Primitives) -> FigureSpec | None:
    """Throughput over payload size, one panel per sized algorithm, one line per library
    (colour) and group (line style); error bars: the median's 95% CI as throughput."""
    sized = [m for m in p.experiments if m.sized]
    if not sized:
        return None
    colours = _colours(p)
    cols = min(3, len(sized))
    rows = -(-len(sized) // cols)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols + 0.6, 2.7 * rows + 0.8), squeeze=False)
        for ax, m in zip(axes.flat, sized):
            for lib in p.libraries:
                for g, group in enumerate(m.groups):
                    pts = sorted((r.size, r) for r in p.results
                                 if (r.library, r.experiment, r.group) == (lib, m.name, group) and r.summary.n)
                    if not pts:
                        continue
                    x = np.array([s for s, _ in pts])
                    y = np.array([r.throughput for _, r in pts]) / MB
                    ci = np.array([r.throughput_ci for _, r in pts]) / MB
                    ax.errorbar(x, y, yerr=[y - ci[:, 0], ci[:, 1] - y], color=colours[lib],
                                linestyle=LINE_STYLES[g % len(LINE_STYLES)], marker="o", markersize=2.5,
                                linewidth=1.1, capsize=1.5, label=f"{lib} {group}" if len(m.groups) > 1 else lib)
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(m.sizes), [f"{s:,}" if s < 1024 else f"{s // 1024}K" for s in m.sizes])
            ax.set_title(m.name)
            ax.set_xlabel("payload (bytes, log scale)")
            ax.set_ylabel("MB/s")
            ax.set_ylim(bottom=0)
        for ax in list(axes.flat)[len(sized):]:
            ax.set_visible(False)
        handles = [Line2D([], [], color=colours[lib], label=lib) for lib in p.libraries]
        styles: dict[int, list[str]] = {}  # line style index -> the group names drawn with it
        for m in sized:
            for g, group in enumerate(m.groups if len(m.groups) > 1 else ()):
                styles.setdefault(g % len(LINE_STYLES), []).append(group)
        handles += [Line2D([], [], color="grey", linestyle=LINE_STYLES[g], label=" / ".join(dict.fromkeys(names)))
                    for g, names in sorted(styles.items())]
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
        fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 1.0))
    return FigureSpec("primitives_throughput", "Throughput over payload size",
                        "Payload bytes per second at the median time per operation, one panel per algorithm, "
                        "one colour per library, one line style per group (e.g. encrypt solid, decrypt dashed); "
                        "error bars: the 95% bootstrap CI of the median carried over to throughput. "
                        "Small payloads pay the per-call setup; large ones approach the bulk rate.", fig)


def asymmetric_figure(p: Primitives) -> FigureSpec | None:
    """Experiments without a payload (signatures, key agreement, sender/receiver): median
    time per group, one bar per library, log scale, 95% CI error bars."""
    rows = [c for c in p.cells if c.size == 0 and any(r.summary.n for r in c.by_library.values())]
    if not rows:
        return None
    colours = _colours(p)
    height = 0.8 / len(p.libraries)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.22 * len(rows) * max(1, len(p.libraries)) ** 0.8))
        for j, lib in enumerate(p.libraries):
            pts = [(i, c.by_library[lib].summary) for i, c in enumerate(rows)
                   if lib in c.by_library and c.by_library[lib].summary.n]
            if not pts:
                continue
            pos = np.array([i for i, _ in pts]) - 0.4 + height * (j + 0.5)
            med = np.array([s.median for _, s in pts]) / 1e3
            err = [med - np.array([s.median_ci[0] for _, s in pts]) / 1e3,
                   np.array([s.median_ci[1] for _, s in pts]) / 1e3 - med]
            ax.barh(pos, med, height * 0.95, xerr=err, color=colours[lib], label=lib, capsize=1.5,
                    hatch=HATCHES[j % len(HATCHES)], edgecolor=EDGE, linewidth=0.3,
                    error_kw={"linewidth": 0.7})
        ax.set_yticks(range(len(rows)), [f"{c.experiment} · {c.group}" for c in rows])
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("median time per operation (µs, log scale), tracer overhead excluded")
        ax.legend(ncol=len(p.libraries), loc="lower left", bbox_to_anchor=(0, 1.04), frameon=False)
        ax.grid(axis="y", visible=False)
    return FigureSpec("primitives_asymmetric", "Asymmetric operations per library",
                        "Median time per operation of the experiments without a payload (signatures, key "
                        "agreement, the sender and receiver scenarios), one bar per library on a log scale; "
                        "error bars: 95% bootstrap CI of the median. A missing bar: the library does not "
                        "offer it.", fig)


def figures(p: Primitives) -> list[FigureSpec]:
    return [f for f in (throughput_figure(p), asymmetric_figure(p)) if f is not None]


# ---------------------------------------------------------------------- HTML
def section(p: Primitives, embed: Callable[[object, str], str], energy: Sequence[EnergyRow] = ()) -> dict:
    """What templates/primitives.html.j2 renders; `embed` embeds a figure (with its title); `energy`: the
    energy results' rows (their experiment operations get a table per source)."""
    return {"p": p, "rows": table_rows(p), "several": len(p.libraries) > 1,
            "n_reps": sum(c.stored for c in p.counts), "n_configs": len(p.counts),
            "figures": [{"title": f.title, "caption": f.caption, "name": f.name, "svg": embed(f.figure, f.title)}
                        for f in figures(p)],
            "size_label": size_label, "energy": energy_tables(p, energy)}


# ---------------------------------------------------------------------- terminal and Markdown
def summary_table(p: Primitives) -> Table:
    """The short table `tlsbench primitives` prints: throughput at the largest payload for
    sized experiments, time per operation for the others; the fastest library in bold."""
    t = Table(title="Crypto primitives: median with its 95% CI half-width (full table: the report)")
    for col in ("experiment", "group", "payload"):
        t.add_column(col, no_wrap=True)
    for lib in p.libraries:
        t.add_column(lib, justify="right", no_wrap=True)
    for c in headline_cells(p):
        values = [headline(c.by_library.get(lib)) for lib in p.libraries]
        if len(p.libraries) > 1 and c.fastest:
            i = p.libraries.index(c.fastest)
            values[i] = f"[bold]{values[i]}[/]"
        t.add_row(c.experiment, c.group, size_label(c.size), *values)
    return t
