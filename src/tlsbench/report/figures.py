# SPDX-License-Identifier: Apache-2.0
"""Paper-quality figures (matplotlib, Agg): SVG and PNG, PDF on request.

Every figure is a pure function of an Analysis and returns a matplotlib Figure; `render`
turns it into bytes, `inline_svg` into markup the report embeds as it is (vector, text
stays text). Values are shown ÷10³ (÷10⁶ for handshakes) in the dataset's unit: µs and ms
on a host, k and M instructions on a device (analysis/units.py); error bars are 95% CIs.
Printed in grayscale they stay readable: every filled series has a hatch and every line a
style and marker of its own besides its colour (`fill`, `line`). Hatches are line patterns
only (a dotted or circled hatch is a 140–250 KB SVG pattern), and the page defines each once
(report/html.py shared_patterns).

A figure shows what a person can read: the bar charts the cheapest configuration of each
key-exchange class and the cheapest others, SHOWN_BARS at most (every configuration's values
are in the report's tables); the record densities one curve per bulk cipher.
"""
from __future__ import annotations

import functools
import hashlib
import io
import re
from dataclasses import dataclass

from markupsafe import Markup

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Patch, PathPatch  # noqa: E402
from matplotlib.path import Path  # noqa: E402

from tlsbench.analysis.questions.groups import GroupTable  # noqa: E402
from tlsbench.analysis.pipeline import representative_rep  # noqa: E402
from tlsbench.analysis.results import Analysis  # noqa: E402
from tlsbench.analysis.vocab import vocab  # noqa: E402
from tlsbench.analysis.questions.answers import QUESTIONS, Question  # noqa: E402
from tlsbench.analysis.questions.recommend import classes_of  # noqa: E402
from tlsbench.core.recommendations import OBSOLETE, suite_fields  # noqa: E402
from tlsbench.core.recommendations import load as load_policy  # noqa: E402

STYLE = {
    "figure.dpi": 100, "savefig.dpi": 150, "font.size": 9, "axes.titlesize": 10,
    "axes.labelsize": 9, "legend.fontsize": 8, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
    "svg.fonttype": "none",          # text stays text: small, searchable, no embedded fonts
    "svg.hashsalt": "tlsbench",      # deterministic ids: the same store gives the same report
    "font.family": ["DejaVu Sans", "sans-serif"],
    "font.sans-serif": ["DejaVu Sans"],  # each SVG text names its font list: the one it is drawn with
    "hatch.linewidth": 0.6,
}
# Grayscale: a hatch per filled series, a dash pattern and a marker per line (with the colour).
HATCHES = ("", "////", "\\\\", "xxxx", "----", "||||", "++++", "//", "\\", "x")
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
EDGE = "0.2"  # hatch and outline colour: dark on every fill
MAX_CURVES = 5            # curves of one density figure: more overlap into one shape
SHOWN_BARS = 16           # bars of one bar chart: the cheapest of each class, then the cheapest others
KDE_POINTS = 4000         # KDE on a seeded subsample: its shape, at bounded cost
KDE_FINE = 4              # binned KDE: bins this many times finer than the figure's grid
KDE_REACH = 6             # bandwidths: the Gaussian kernel there is 1.5e-8 of its peak
# The title's place where nothing but the axes is above it (x ticks below, y tick labels fixed
# text, so no offset text): where matplotlib's automatic placement puts it anyway, but without
# measuring every y tick label at each draw to find that out (127 configurations: seconds).
TITLE_Y = 1.0


@dataclass(frozen=True)
class FigureSpec:
    """A named figure with the caption the report shows under it."""

    name: str
    title: str
    caption: str
    figure: Figure


def render(fig: Figure, fmt: str) -> bytes:
    """Figure -> bytes in 'svg', 'png' or 'pdf', cropped to what is drawn (no timestamps:
    reproducible bytes)."""
    if fmt == "svg":
        return _cropped_svg(fig)
    buf = io.BytesIO()
    meta = {"pdf": {"CreationDate": None}, "png": {}}[fmt]
    with plt.rc_context(STYLE):
        fig.savefig(buf, format=fmt, bbox_inches="tight", metadata=meta)
    return buf.getvalue()


_SVG_BOX = re.compile(rb'width="[^"]*" height="[^"]*" viewBox="[^"]*"')


def _cropped_svg(fig: Figure) -> bytes:
    """The SVG drawn once and cropped by its view box to what bbox_inches="tight" keeps.
    savefig's own cropping lays out every text twice (a draw to measure, then a fresh
    renderer to write), a third of a 127-configuration figure's time; measured during the
    drawing, with its renderer, every text's size is already known."""
    box = []
    measure = fig.canvas.mpl_connect("draw_event", lambda event: box.append(fig.get_tightbbox(event.renderer)))
    buf = io.BytesIO()
    try:
        with plt.rc_context(STYLE):
            pad = matplotlib.rcParams["savefig.pad_inches"]
            fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        fig.canvas.mpl_disconnect(measure)
    (x0, y0, x1, y1), height = box[0].padded(pad).extents * 72, fig.get_size_inches()[1] * 72  # SVG: points, y down
    w, h = f"{x1 - x0:g}", f"{y1 - y0:g}"
    crop = f'width="{w}pt" height="{h}pt" viewBox="{x0:g} {height - y1:g} {w} {h}"'.encode()
    return _SVG_BOX.sub(crop, buf.getvalue(), count=1)


_PROLOGUE = re.compile(rb"^.*?(?=<svg)", re.S)  # XML declaration and DOCTYPE: not in HTML
_METADATA = re.compile(rb"<metadata>.*?</metadata>\s*|<!--.*?-->\s*", re.S)  # a page needs neither
_NAMESPACES = re.compile(rb' xmlns(:xlink)?="[^"]*"')  # the HTML parser puts inline SVG in its namespace
_SIZE = re.compile(rb'^(<svg[^>]*?) width="[^"]*" height="[^"]*"')
_IDS = re.compile(rb'(id="|url\(#|href="#)([^")]+)')
_GEOMETRY = re.compile(rb'( (?:d|x|y|points)=")([^"]*)"')  # coordinates only, never a text's words
_INDENT = re.compile(rb'\n\s+')  # matplotlib indents its SVG by depth: bytes nobody reads
_NUMBER = re.compile(rb'-?\d+\.\d+')
_REPEATED_L = re.compile(rb'(L[^A-Za-z]*?) L ')  # "L a b L c d" is "L a b c d" in SVG path syntax


def _tenth(m: re.Match) -> bytes:
    """A coordinate at 1/10 point (0.035 mm: finer than any screen or print shows)."""
    text = b"%.1f" % float(m.group(0))
    return text[:-2] if text.endswith(b".0") else text


def _compact(m: re.Match) -> bytes:
    """A coordinate attribute at 1/10 point on one line, a path's repeated L commands once
    (matplotlib writes 6 decimals, a line per vertex, an L for each: half an SVG's bytes)."""
    value = b" ".join(_NUMBER.sub(_tenth, m.group(2)).split())
    if m.group(1) == b' d="':
        while True:
            shorter = _REPEATED_L.sub(rb"\1 ", value)
            if shorter == value:
                break
            value = shorter
    return m.group(1) + value + b'"'


def inline_svg(fig: Figure, title: str = "") -> Markup:
    """A figure as SVG markup to put in the HTML itself (the report fetches nothing and
    prints as vectors); its ids get a prefix of their own, so several figures in one page
    never share one. Closed once rendered, which keeps memory flat."""
    svg = render(fig, "svg")
    plt.close(fig)
    prefix = b"f" + hashlib.sha1(svg).hexdigest()[:8].encode() + b"-"
    svg = _METADATA.sub(b"", _PROLOGUE.sub(b"", svg, count=1), count=1)
    svg = _NAMESPACES.sub(b"", svg)
    svg = _SIZE.sub(rb'\1 class="fig" role="img"', svg, count=1)  # scales with the page (viewBox stays)
    svg = _IDS.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    svg = _INDENT.sub(b"\n", _GEOMETRY.sub(_compact, svg))
    label = Markup(' aria-label="{}"').format(title) if title else Markup("")
    return Markup(svg.decode().replace("<svg ", f"<svg{label} ", 1))


def fill(i: int, cmap: str = "tab10") -> dict:
    """Bar/area style of series i: its colour and a hatch of its own (grayscale prints)."""
    colours = plt.get_cmap(cmap)
    n = getattr(colours, "N", 10)
    return {"facecolor": colours(i % n), "hatch": HATCHES[i % len(HATCHES)], "edgecolor": EDGE}


def line(i: int, cmap: str = "tab10") -> dict:
    """Line style of series i: colour, dash pattern and marker of its own (grayscale prints)."""
    colours = plt.get_cmap(cmap)
    return {"color": colours(i % getattr(colours, "N", 10)), "linestyle": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)], "markevery": 0.1, "markersize": 3.5}


def kde(sample: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Gaussian kernel density at the evenly spaced `grid`, Silverman's rule-of-thumb bandwidth
    (as scipy.stats.gaussian_kde, whose import alone costs seconds). Binned (Wand 1994): the
    sample is shared linearly between the two nearest points of a grid KDE_FINE times finer,
    which is convolved with the kernel; a sum over bins, not over every value of the sample."""
    n = len(sample)
    h = 1.06 * sample.std(ddof=1) * n ** -0.2
    step = (grid[1] - grid[0]) / KDE_FINE
    reach = int(np.ceil(KDE_REACH * h / step))  # farther, the kernel adds nothing a figure shows
    if reach > len(grid) * KDE_FINE:  # a bandwidth wider than the grid (outliers far beyond it): a direct sum
        return _kde_direct(sample, grid, h)
    at = (sample - grid[0]) / step + reach       # position on the fine grid, which starts `reach` below
    size = (len(grid) - 1) * KDE_FINE + 1 + 2 * reach
    at = at[(at >= 0) & (at < size - 1)]
    left = at.astype(np.intp)
    weights = np.bincount(left, 1 - (at - left), size) + np.bincount(left + 1, at - left, size)
    kernel = np.exp(-0.5 * (np.arange(-reach, reach + 1) * step / h) ** 2)
    density = np.convolve(weights, kernel, mode="valid")[::KDE_FINE]
    return density / (n * h * np.sqrt(2 * np.pi))


def _kde_direct(sample: np.ndarray, grid: np.ndarray, h: float) -> np.ndarray:
    out = np.empty(len(grid))
    for s in range(0, len(grid), 100):  # in chunks: bounded memory
        z = (grid[s:s + 100, None] - sample[None, :]) / h
        out[s:s + 100] = np.exp(-0.5 * z * z).sum(axis=1)
    return out / (len(sample) * h * np.sqrt(2 * np.pi))


def _short(name: str, width: int = 64) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def shown_configs(analysis: Analysis, totals: dict[int, float], most: int = SHOWN_BARS) -> list[int]:
    """The configurations a bar chart shows, cheapest first: the cheapest of each key-exchange
    class, then the cheapest others (obsolete suites last), `most` at most."""
    obsolete = obsolete_ids(analysis)
    current = totals.keys() - obsolete
    picks = {min(group & current, key=totals.__getitem__) for group in classes_of(analysis.results.configs)
             if group & current}
    rest = sorted(totals, key=lambda c: (c in obsolete, totals[c]))
    chosen = list(picks)[:most] + [c for c in rest if c not in picks][:max(0, most - len(picks))]
    return sorted(chosen, key=totals.__getitem__)


def obsolete_ids(analysis: Analysis) -> set[int]:
    policy = load_policy()
    return {cid for cid, c in analysis.results.configs.items() if policy.status(suite_fields(c)).name == OBSOLETE}


def _left_out(shown: int, total: int) -> str:
    return (f" Shown: {shown} of {total} configurations (the cheapest of each key-exchange class, then the cheapest "
            "others); every configuration is in the report's tables." if shown < total else "")


def _add_series(ax, verts: np.ndarray, style: dict, linewidth: float, sticky_x: list[float] = (),
                sticky_y: list[float] = ()) -> None:
    """A series of rectangles (n × 4 corners) as one compound path: one SVG element, one style
    and one hatch reference for the whole series (a collection writes them for every bar);
    the limits follow as bar() sets them (edges at `sticky_*` stay at the axes' border)."""
    patch = PathPatch(Path.make_compound_path_from_polys(verts), linewidth=linewidth, joinstyle="miter",
                      capstyle="butt", **style)
    patch.sticky_edges.x[:], patch.sticky_edges.y[:] = list(sticky_x), list(sticky_y)
    ax.add_patch(patch)
    ax.autoscale_view()


def _whiskers(ax, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Vertical interval lines from lo to hi at x, as one black path (NaN: none drawn)."""
    keep = np.isfinite(lo) & np.isfinite(hi)
    if not keep.any():
        return
    x, lo, hi = x[keep], lo[keep], hi[keep]
    verts = np.column_stack([np.repeat(x, 2), np.column_stack([lo, hi]).ravel()])
    codes = np.tile([Path.MOVETO, Path.LINETO], len(x))
    ax.add_patch(PathPatch(Path(verts, codes), fill=False, edgecolor="k", linewidth=0.8, zorder=3))
    ax.autoscale_view()


def _stacked_barh(ax, series: list[tuple[str, np.ndarray, dict]], linewidth: float) -> list[Patch]:
    """Horizontal bars stacked left to right, one row per y = 0, 1, …, as `ax.barh(…, left=…)`
    per series draws them (height 0.8, centred; the same limits, left edges sticky), but one
    compound path per series (label, widths, `fill` style) instead of a Rectangle per bar:
    thousands of patches cost seconds to add and to draw. Returns the legend's handles."""
    n = len(series[0][1]) if series else 0
    y0 = np.arange(n) - 0.4
    y1 = y0 + 0.8
    left = np.zeros(n)
    handles = []
    for label, w, style in series:
        right = left + w
        verts = np.stack([np.column_stack(xy) for xy in ((left, y0), (right, y0), (right, y1), (left, y1))], axis=1)
        _add_series(ax, verts, style, linewidth, sticky_x=left.tolist())
        handles.append(Patch(label=label, linewidth=linewidth, **style))
        left = right
    return handles


def step_medians(analysis: Analysis, peer_name: str) -> dict[int, dict[int, float]]:
    """config id -> step label -> median of that step's processing, for one peer (from the
    rows of statistics: the step samples' values are not held)."""
    label_id = vocab().label_id
    per_cfg: dict[int, dict[int, float]] = {}
    for r in analysis.results.rows:
        if r.metric == "step" and r.peer == peer_name and r.summary.n:
            per_cfg.setdefault(r.config_id, {})[label_id[r.label]] = r.summary.median
    return per_cfg


def step_stacks(analysis: Analysis, peers: tuple[str, ...] = ("client", "server")) -> list[FigureSpec]:
    """Per-suite stacked median step processing, one panel per peer, bars sorted by total."""
    voc = vocab()
    res = analysis.results
    out = []
    for peer_name in peers:
        per_cfg = step_medians(analysis, peer_name)
        if not per_cfg:
            continue
        order = shown_configs(analysis, {c: sum(d.values()) for c, d in per_cfg.items()})
        steps = [s for s in voc.labels_in("step") if any(s in per_cfg[c] for c in order)]
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.38 * len(order)))
            handles = _stacked_barh(ax, [(voc.name(s), np.array([per_cfg[c].get(s, 0.0) for c in order]) / 1e3,
                                          fill(i, "tab20")) for i, s in enumerate(steps)], linewidth=0.3)
            ax.set_yticks(range(len(order)), [_short(res.config_labels[c]) for c in order])
            ax.set_xlabel(f"median processing per step ({analysis.ds.unit.label(1e3)}), I/O and tracer overhead excluded")
            ax.set_title(f"Handshake steps, {peer_name} ({'initiator' if peer_name == 'client' else 'responder'})",
                         y=TITLE_Y)
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, ncol=1)
            ax.grid(axis="y", visible=False)
        out.append(FigureSpec(f"steps_{peer_name}", f"Step costs — {peer_name}",
                              f"Stacked medians of each step's processing ({analysis.ds.unit.quantity}); bars sorted by total "
                              "(the network-invariant handshake cost of this peer)." + _left_out(len(order), len(per_cfg)),
                              fig))
    return out


def record_distributions(analysis: Analysis, seed: int = 0) -> list[FigureSpec]:
    """Histogram with a density estimate of record write and read processing: one curve per
    bulk cipher and MAC (the cheapest configuration of each: a record's cost is its cipher's,
    whatever the key exchange), MAX_CURVES at most, cheapest first."""
    out, u, answers = [], analysis.ds.unit, analysis.samples.answers
    configs = analysis.results.configs
    for q in QUESTIONS[:2]:
        ranked = [c for c in answers.ranked(q) if c in answers.values[q]]  # those whose values are held
        if not ranked:
            continue
        by_cipher: dict[str, int] = {}
        for c in ranked:
            by_cipher.setdefault(f"{configs[c].cipher} {configs[c].mac}".strip() or analysis.results.config_labels[c], c)
        order = list(by_cipher.values())[:MAX_CURVES]
        vals = answers.values_of(q, order)
        allv = np.concatenate([vals[c] for c in order]) / 1e3
        lo, hi = np.percentile(allv, [0.5, 99.5])
        bins = np.linspace(lo, hi, 60)
        grid = np.linspace(lo, hi, 400)
        rng = np.random.default_rng(seed)
        names = {c: name for name, c in by_cipher.items()}
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(8.5, 3.6))
            for i, c in enumerate(order):
                v = vals[c] / 1e3
                h, _ = np.histogram(v, bins=bins, density=True)
                ax.stairs(h, bins, fill=True, alpha=0.25, color=line(i)["color"])
                sub = rng.choice(v, KDE_POINTS, replace=False) if len(v) > KDE_POINTS else v
                if len(sub) > 2 and np.ptp(sub) > 0:
                    ax.plot(grid, kde(sub, grid), linewidth=1.2, **line(i),
                            label=f"{names[c]}: {_short(analysis.results.config_labels[c], 48)} (median "
                                  f"{np.median(v):.2f} {u.label(1e3)})")
            ax.set_xlabel(f"{q.title.lower()} processing per record ({u.label(1e3)})")
            ax.set_ylabel(f"density (1/{u.label(1e3)})")
            ax.set_title(f"{q.title}: distribution per bulk cipher")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
        out.append(FigureSpec(f"density_{q.metric}", f"{q.title} — distribution",
                              "Histogram (shaded) and Gaussian kernel density (line) of each record's "
                              f"processing ({u.quantity}), one curve per bulk cipher and MAC: the cheapest configuration "
                              "of each (a record costs what its cipher costs, whatever the key exchange); 0.5–99.5 "
                              f"percentile range shown.", fig))
    return out


def _bars(ax, x: np.ndarray, heights: np.ndarray, width: float, label: str, style: dict, linewidth: float) -> Patch:
    """Vertical bars from 0, centred on x, as `ax.bar` draws them (same rectangles, style, limits,
    bottom edge sticky) but as one compound path instead of a Rectangle each. Returns the
    legend's handle."""
    left = x - width / 2
    right = left + width
    zero = np.zeros(len(x))
    verts = np.stack([np.column_stack(xy) for xy in ((left, zero), (right, zero), (right, heights), (left, heights))],
                     axis=1)
    _add_series(ax, verts, style, linewidth, sticky_y=[0.0])
    return Patch(label=label, linewidth=linewidth, **style)


def _group_panel(ax, table: GroupTable, scale: float, unit: str) -> None:
    rows = table.rows
    xs = sorted({r.key[0] for r in rows})
    colours = sorted({r.key[1] for r in rows}) if len(table.by) > 1 else [""]
    width = 0.8 / len(colours)
    handles, ex, ey, elo, ehi = [], [], [], [], []
    for j, col in enumerate(colours):
        sel = [r for r in rows if (r.key[1] if len(r.key) > 1 else "") == col]
        pos = np.array([xs.index(r.key[0]) for r in sel]) - 0.4 + width * (j + 0.5)
        med = np.array([r.summary.median for r in sel]) / scale
        lo = med - np.array([r.summary.median_ci[0] for r in sel]) / scale
        hi = np.array([r.summary.median_ci[1] for r in sel]) / scale - med
        handles.append(_bars(ax, pos, med, width * 0.95, col, fill(j), linewidth=0.4))
        ex.append(pos - width * 0.95 / 2 + 0.5 * (width * 0.95))  # the bar's centre, as bar() computes it
        ey.append(med)
        elo.append(lo)
        ehi.append(hi)
    # The intervals of every series as one path above all bars (an errorbar writes a line
    # and two cap markers per bar: most of a grouped figure's bytes).
    x, y = np.concatenate(ex), np.concatenate(ey)
    _whiskers(ax, x, y - np.concatenate(elo), y + np.concatenate(ehi))
    ax.set_xticks(range(len(xs)), xs, rotation=20, ha="right")
    ax.set_xlabel(table.by[0].replace("_", " "))
    ax.set_ylabel(f"median ({unit})")
    if len(colours) > 1:
        ax.legend(handles=handles, title=table.by[1].replace("_", " "), frameon=False, fontsize=7, title_fontsize=7,
                  loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2)
    ax.grid(axis="x", visible=False)


def group_bars(analysis: Analysis, tables: list[GroupTable]) -> FigureSpec:
    """One question's measure grouped by each suite property (one panel each): medians of
    the pooled configurations of a group, coloured by a second property, with 95% CIs."""
    q = tables[0].question
    scale = 1e6 if q.metric.startswith("handshake") else 1e3
    unit = analysis.ds.unit.label(scale)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(tables), figsize=(3.2 * len(tables) + 1, 4.4), squeeze=False)
        for ax, t in zip(axes[0], tables):
            _group_panel(ax, t, scale, unit)
        fig.suptitle(f"{q.title}: by suite property")
        fig.subplots_adjust(wspace=0.45, bottom=0.4)
    return FigureSpec(f"group_{q.metric}_{q.peer}", f"{q.title} by suite property",
                      "Median of the pooled configurations of each group (bars coloured by a second "
                      "property); error bars: 95% bootstrap CI of the median.", fig)


def io_share(analysis: Analysis) -> FigureSpec | None:
    """Handshake stop–start time split into client processing, server processing, I/O and
    the rest (harness, turn switching), medians per configuration, as shares."""
    res, u = analysis.results, analysis.ds.unit

    def median(cid: int, metric: str, peer: str = "none") -> float | None:
        row = res.find(cid, metric, peer)
        return row.summary.median if row is not None and row.summary.n else None

    parts = []
    for cid in res.configs:
        t = median(cid, "handshake_time")
        if t is None:
            continue
        # A two-process configuration traces one peer only: the other one's share is 0 here.
        cp, sp = (median(cid, "handshake_processing", p) or 0.0 for p in ("client", "server"))
        io_ = sum(median(cid, "handshake_io", p) or 0.0 for p in ("client", "server"))
        parts.append((cid, np.array([cp, sp, io_, max(t - cp - sp - io_, 0.0)]) / t * 100, t))
    if not parts:
        return None
    keep = set(shown_configs(analysis, {p[0]: p[2] for p in parts}))
    total = len(parts)
    parts = sorted((p for p in parts if p[0] in keep), key=lambda p: p[2])
    names = ["client processing", "server processing", "I/O", "other (harness, tracer)"]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.38 * len(parts)))
        handles = _stacked_barh(ax, [(nm, np.array([p[1][i] for p in parts]), fill(i, "Set2"))
                                     for i, nm in enumerate(names)], linewidth=0.3)
        ax.set_yticks(range(len(parts)), [f"{_short(res.config_labels[p[0]], 40)} ({p[2] / 1e6:.2f} {u.label(1e6)})"
                                          for p in parts])
        ax.set_xlabel(f"share of the median handshake stop–start {u.quantity} (%)")
        ax.set_xlim(0, 100)
        ax.set_title("Handshake: processing vs I/O", y=TITLE_Y)
        ax.legend(handles=handles, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.06), frameon=False)
        ax.grid(axis="y", visible=False)
    return FigureSpec("io_share", "Processing vs I/O",
                      f"Medians of each component as a share of the median stop–start handshake {u.quantity} "
                      "(shown in parentheses); over the in-memory transport I/O is close to nothing, so the bars "
                      "show how the peers share the handshake." + _left_out(len(parts), total), fig)


def timeline(analysis: Analysis, rep: int) -> FigureSpec:
    """One repetition: peers as lanes, spans nested by depth, coloured by category."""
    voc, slices, u = vocab(), analysis.ds.traced([rep]).slices, analysis.ds.unit
    config = analysis.results.config_labels.get(int(analysis.ds.reps.config_id[analysis.ds.rep_index(np.array([rep]))[0]]),
                                                "?")
    idx = np.flatnonzero((slices.rep == rep) & ~slices.instant)
    t0 = slices.ts[idx].min() if len(idx) else 0
    lanes = [voc.peers[p] for p in ("none", "client", "server")]
    depth_max = {p: int(slices.depth[idx][slices.peer[idx] == p].max(initial=0)) + 1 for p in lanes}
    base, y = {}, 0.0
    for p in lanes:
        base[p] = y
        y += depth_max[p] + 0.6
    cat_style = {c: fill(i) for i, c in enumerate(voc.categories)}
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(11, 0.5 + 0.32 * y))
        span_us = ((slices.ts[idx] + slices.dur[idx]).max() - t0) / 1e3 if len(idx) else 1
        boxes: dict[str, list] = {}  # category -> its spans' rectangles: one collection each, not a patch per span
        for i in idx.tolist():
            x0, w = (slices.ts[i] - t0) / 1e3, slices.dur[i] / 1e3
            yy = base[int(slices.peer[i])] + int(slices.depth[i])
            cat = voc.categories[slices.category[i]] if slices.category[i] >= 0 else "phase"
            x1 = x0 + max(w, span_us * 1e-4)
            boxes.setdefault(cat, []).append([(x0, yy), (x1, yy), (x1, yy + 0.9), (x0, yy + 0.9)])
            if w > span_us * 0.04:
                ax.text(x0 + w / 2, yy + 0.45, voc.name(slices.label[i]), ha="center", va="center",
                        fontsize=6, color="white", clip_on=True)
        for cat, verts in boxes.items():
            ax.add_collection(PolyCollection(verts, alpha=0.85, linewidth=0.2, joinstyle="miter", capstyle="butt",
                                             **cat_style[cat]))
        ax.set_xlim(0, span_us * 1.01)
        ax.set_ylim(y, -0.3)
        ax.set_yticks([base[p] + depth_max[p] / 2 for p in lanes], [voc.peer_name(p) for p in lanes])
        ax.set_xlabel(f"{'time' if u.is_time else 'count'} since the repetition started ({u.label(1e3)})")
        ax.set_title(f"Timeline of repetition {rep}: {_short(config, 70)}")
        used = sorted({voc.categories[c] for c in slices.category[idx] if c >= 0}, key=voc.categories.index)
        ax.legend(handles=[Patch(label=c, **cat_style[c]) for c in used], ncol=len(used),
                  loc="lower center", bbox_to_anchor=(0.5, 1.04), frameon=False)
        ax.grid(axis="y", visible=False)
    return FigureSpec("timeline", f"Timeline of repetition {rep} ({config})",
                      "Both peers as lanes; steps, crypto operations and I/O nested by depth. "
                      "`tlsbench export --format perfetto` opens the same repetition in a trace viewer.", fig)


def library_bars(analysis: Analysis) -> FigureSpec | None:
    """Handshake processing per configuration (matrix cell), one bar per library, one panel
    per peer; error bars: 95% bootstrap CI of the median. Only with several libraries."""
    libs, res = analysis.results.libraries, analysis.results
    if libs is None or not libs.several:
        return None
    cells = libs.cells
    peers = ("client", "server")
    height = 0.8 / len(libs.order)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(peers), figsize=(11, 1.2 + 0.16 * len(cells) * len(libs.order)),
                                 sharey=True, squeeze=False)
        for ax, peer in zip(axes[0], peers):
            for j, lib in enumerate(libs.order):
                rows = [(i, res.find(c.configs[lib], "handshake_processing", peer))
                        for i, c in enumerate(cells) if lib in c.configs]
                rows = [(i, r.summary) for i, r in rows if r is not None and r.summary.n]
                if not rows:
                    continue
                pos = np.array([i for i, _ in rows]) - 0.4 + height * (j + 0.5)
                med = np.array([s.median for _, s in rows]) / 1e6
                err = [med - np.array([s.median_ci[0] for _, s in rows]) / 1e6,
                       np.array([s.median_ci[1] for _, s in rows]) / 1e6 - med]
                ax.barh(pos, med, height * 0.95, xerr=err, label=lib, capsize=1.5, linewidth=0.3, **fill(j),
                        error_kw={"linewidth": 0.7})
            ax.set_title(f"{peer} ({'initiator' if peer == 'client' else 'responder'})")
            ax.set_xlabel(f"median handshake processing ({analysis.ds.unit.label(1e6)})")
            ax.grid(axis="y", visible=False)
        axes[0][0].set_yticks(range(len(cells)), [_short(c.label, 52) for c in cells])
        axes[0][0].invert_yaxis()
        axes[0][0].legend(ncol=len(libs.order), loc="lower left", bbox_to_anchor=(0, 1.04), frameon=False)
    return FigureSpec("libraries_handshake", "Handshake processing per library",
                      "Each configuration's network-invariant handshake processing (sum of the peer's step "
                      "processing, I/O and tracer overhead excluded), one bar per library; error bars: 95% "
                      "bootstrap CI of the median.", fig)


def _library(analysis: Analysis, seed: int) -> list[FigureSpec]:
    return [f for f in (library_bars(analysis),) if f]


def _steps(analysis: Analysis, seed: int, peer: str) -> list[FigureSpec]:
    return step_stacks(analysis, (peer,))


def _io(analysis: Analysis, seed: int) -> list[FigureSpec]:
    return [f for f in (io_share(analysis),) if f]


def _groups(analysis: Analysis, seed: int, question: Question) -> list[FigureSpec]:
    tables = [t for t in analysis.results.groups if t.question == question]
    return [group_bars(analysis, tables)] if tables else []


def _timeline(analysis: Analysis, seed: int) -> list[FigureSpec]:
    rep = representative_rep(analysis)
    return [] if rep is None else [timeline(analysis, rep)]


# The report's figures in order, a builder each, small enough that report/html.py's workers
# share them evenly (a step figure or a group figure takes a second or two of matplotlib).
FIGURE_BUILDERS = (_library, *(functools.partial(_steps, peer=p) for p in ("client", "server")),
                   record_distributions, _io, *(functools.partial(_groups, question=q) for q in QUESTIONS),
                   _timeline)


def all_figures(analysis: Analysis, seed: int = 0) -> list[FigureSpec]:
    return [f for build in FIGURE_BUILDERS for f in build(analysis, seed)]
