# SPDX-License-Identifier: Apache-2.0
"""The self-contained offline HTML report: one file, no network fetch of any kind (no CDN,
no web fonts; figures are inline SVG, the one script that sorts and filters tables is
inline and allowed by its hash alone).

Its first screen answers the question (docs/report.md "The first screen"): what was measured
where (the part, core, clock and library build, or plainly the host), then the cheapest
configuration of each key-exchange class with what it costs the device's peer, recommended
suites first and obsolete ones folded away, within a budget when one is given; then the
winners, crowned only where their lead is clear. Exact values (a device's counts) are shown
without intervals. A report of a store still being written (a live report, `tlsbench run
--live-report`) or of a run stopped early says it is partial."""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np
from markupsafe import Markup

from tlsbench import __version__
from tlsbench.core.errors import UserError
from tlsbench.core.files import write_output
from tlsbench.core.recommendations import OBSOLETE, STATUSES, suite_fields
from tlsbench.analysis.questions.compare import Comparison, compare
from tlsbench.analysis.questions.place import place_of
from tlsbench.analysis.questions.recommend import Budget, DeviceTime, Recommendations, inputs_of, recommend
from tlsbench.analysis.questions.coverage import excluded_by_reason, reasons_text, unmeasured
from tlsbench.analysis.questions.device import device_vs_host, identity
from tlsbench.analysis.questions.libraries import GRANULARITY_MEANING
from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.measures import METRICS
from tlsbench.analysis.derive.parallel import map_ordered
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.tables import SUITE_COLUMNS, ci_text
from tlsbench.analysis.stats.stats import N_BOOT, N_BOOT_ROUNDS
from tlsbench.analysis.units import TIME, exact_values, identical, identity_text
from tlsbench.analysis.vocab import vocab
from tlsbench.report import WINNERS_MODES
from tlsbench.report.figures import FIGURE_BUILDERS, FigureSpec, inline_svg
from tlsbench.report.energy import html_section
from tlsbench.report.predict import html_section as predict_section
from tlsbench.analysis.models.predict.results import PredictResults
from tlsbench.report.metrics import section as metrics_section
from tlsbench.report.network import network_section
from tlsbench.report.pace import pace_section
from tlsbench.report import device_primitives, primitives
from tlsbench.analysis.questions import sched as sched_view

def _num(x: float, digits: int = 1) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:,.{digits}f}"


def _figure(f: FigureSpec) -> dict[str, str]:
    return {"title": f.title, "caption": f.caption, "name": f.name, "svg": inline_svg(f.figure, f.title)}


# Where the figures go once drawn: the rest of the page is written while workers draw them.
FIGURES_HERE = Markup("<!-- the figures -->")


def _figures(analysis: Analysis, seed: int) -> Iterator[dict[str, str]]:
    """Every figure of the report, built and drawn as inline SVG on every CPU (matplotlib
    spends most of a report's time laying out text) from the call on."""
    parts = map_ordered(_built, (analysis, seed), range(len(FIGURE_BUILDERS)))
    return (f for part in parts for f in part)


def _built(shared: tuple[Analysis, int], builder: int) -> list[dict[str, str]]:
    analysis, seed = shared
    return [_figure(f) for f in FIGURE_BUILDERS[builder](analysis, seed)]


def _script() -> tuple[Markup, str]:
    """The inline script (templates/tables.js) and its CSP source: the page runs that script only."""
    text = (Path(__file__).parent / "templates" / "tables.js").read_text()
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    return Markup(text), f"'sha256-{digest}'"


@dataclass(frozen=True)
class Partial:
    """A report of rounds so far: the store is being written, or its run stopped early."""

    stored: int
    planned: int
    rounds_done: int  # planned rounds complete
    rounds: int
    writer: str | None  # PID of the run writing the store now


def partial_state(ds: Dataset) -> Partial | None:
    """None when the store holds every planned repetition and nobody writes it."""
    from tlsbench.store.progress import status_of

    try:
        with ds.store() as store:
            status = status_of(store, store.location.folder)
    except (UserError, KeyError):
        return None  # not an experiment folder of a plan's run (a copied or synthetic store): nothing to say
    pid = ds.reader.location.lock.holder()
    stored_planned = sum(min(c.stored, c.planned) for c in status.configs if not c.skip_reason)
    planned = sum(c.planned for c in status.configs if not c.skip_reason)
    if pid is None and stored_planned >= planned:
        return None
    done = sum(1 for r in status.rounds if r.stored >= r.planned)
    return Partial(status.stored, planned, done, len(status.rounds), pid)


# The factors of a matrix of configurations, as the summary counts them: (attribute, noun).
MATRIX_FACTORS = (("library", "libraries"), ("suite_name", "suites"), ("experiment", "experiments"),
                  ("grp", "groups"), ("credential", "credentials"), ("record_size", "record sizes"),
                  ("protocol", "protocols"), ("options", "option sets"), ("link_label", "links"),
                  ("network_json", "network variants"), ("target", "places (host, device)"),
                  ("image", "firmware images"), ("collect", "metric twins"))
# Factors only some configurations have (a device's images, metric twins, experiments, network variants).
ONLY_SOME = ("experiment", "image", "collect", "network_json")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun if n != 1 else noun.split()[0][:-1]}"


def matrix_text(configs: list) -> str:
    """How the configurations are made of their factors: "8 suites × 2 groups" only when every
    combination was measured, else the distinct values of each ("127 suites, with 4 credentials
    among them: not every combination")."""
    counts = [(attr, len({getattr(c, attr, None) for c in configs} - ({None} if attr in ONLY_SOME else set())), noun)
              for attr, noun in MATRIX_FACTORS]
    several = [(a, n, noun) for a, n, noun in counts if n > 1] or [counts[1]]
    combos = {tuple(getattr(c, a, None) for a, _, _ in several) for c in configs}
    if len(combos) == math.prod(n for _, n, _ in several) == len(configs):
        return " × ".join(_count(n, noun) for _, n, noun in several)
    head, rest = several[0], several[1:]
    among = f", with {' and '.join(_count(n, noun) for _, n, noun in rest)} among them" if rest else ""
    return f"{_count(head[1], head[2])}{among}: not every combination"


def exact_run(res, unit) -> bool:
    """Every handshake value of the run is exact (a device's counts): no interval to report."""
    rows = [r.summary for r in res.rows if r.metric == "handshake_processing" and r.summary.n]
    return bool(rows) and all(exact_values(s, unit) for s in rows)


def _summary(analysis: Analysis) -> dict:
    """What the first screen says besides the answers: what was measured and how precisely."""
    res, ds = analysis.results, analysis.ds
    cfgs = [c for c in res.configs.values() if c.experiment is None]
    plan = json.loads(ds.experiment.get("plan_json") or "{}")
    distinct = lambda attr: sorted({str(getattr(c, attr, "")) for c in cfgs} - {"", "None"})  # noqa: E731
    check = res.precision
    widths = np.array([w for w in (check.half_widths if check else []) if math.isfinite(w)])
    return {"matrix": matrix_text(cfgs) if cfgs else "", "transports": distinct("transport"),
            "rounds": plan.get("rounds"), "adaptive": bool(plan.get("precision")), "exact": exact_run(res, ds.unit),
            "fewest": min((r.summary.n for r in res.rows if r.metric == "handshake_processing" and r.summary.n),
                          default=0),
            "check": check, "median_width": float(np.median(widths)) if len(widths) else math.nan,
            "worst_width": float(widths.max()) if len(widths) else math.nan, "partial": partial_state(ds),
            "unmeasured": unmeasured(ds.skipped, res.configs, res.exclusions, res.config_labels),
            "excluded_why": reasons_text(excluded_by_reason(res.exclusions))}


def _misses(analysis: Analysis) -> list[dict]:
    """The precision table: each peer above the target, and configurations without data."""
    res = analysis.results
    rows = [{"config": res.config_labels[m.config_id], "peer": m.peer, "m": m} for m in
            (res.precision.misses if res.precision else [])]
    return rows + [{"config": res.config_labels[cid], "peer": "–", "m": None, "why": why}
                   for cid, why in sorted(res.no_data.items(), key=lambda kv: res.config_labels[kv[0]])]


@jinja2.pass_context
def _spread(ctx, s) -> str:
    """A median's interval as ±%, or why there is none: "n = 1: no interval", "identical in
    n repetitions", "exact (one count)" (a device's deterministic counts)."""
    unit = ctx.get("u") or TIME
    if s is None:
        return "–"
    if identical(s):
        return identity_text(s, unit)
    if not unit.is_time and not s.has_interval and s.median:  # a few counts: their range, not an interval
        return f"range ±{100 * (s.max - s.min) / 2 / abs(s.median):.2f}%"
    return ci_text(s)


@functools.cache  # one environment: each template compiled once
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("tlsbench.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["pct"] = lambda x: "–" if not math.isfinite(x) else f"±{x:.1f}%"
    env.filters["ci"] = _spread
    env.filters["scale"] = lambda x, s: x / s if x is not None and math.isfinite(x) else math.nan
    env.globals.update(identical=identical, identity_text=identity_text, exact_values=exact_values)
    return env


class ReportError(UserError):
    """Two experiments that cannot be set side by side as asked."""


def _suite_rows(analysis: Analysis, statuses: dict[int, str]) -> list[dict]:
    """The per-configuration table's rows: recommended suites first, then the others, then the
    obsolete ones (folded away by the template)."""
    res = analysis.results
    rows = []
    order = sorted(res.configs, key=lambda c: (STATUSES.index(statuses[c]), res.config_labels[c]))
    for cid in order:
        cells = []
        for _, metric, peer, scale, unit in SUITE_COLUMNS:
            row = res.cell(cid, metric, peer)
            cells.append((row.summary if row else None, scale))
        share = res.find(cid, "io_share", "none")
        client = res.find(cid, "handshake_processing", "client")
        rows.append({"config": res.config_labels[cid], "cfg": res.configs[cid], "cells": cells, "status": statuses[cid],
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


def _step_tables(analysis: Analysis, statuses: dict[int, str]) -> list[dict]:
    """Per configuration but the obsolete ones (their per-step values would be most of a
    default report's bytes; every export has them): step and crypto rows, in the spec's
    label order."""
    res, voc = analysis.results, vocab()
    order_of = {lab: i for i, lab in enumerate(sorted(voc.label_name))}
    out = []
    libs = res.libraries.order
    by_library = lambda c: (libs.index(res.configs[c].library) if res.configs[c].library in libs else len(libs),  # noqa: E731
                            res.config_labels[c])
    by_config: dict[int, list] = {}  # one pass over the rows, not one per configuration
    for r in res.rows:
        if r.metric in ("step", "crypto", "handshake_processing", "handshake_overhead"):
            by_config.setdefault(r.config_id, []).append(r)
    for cid in sorted(res.configs, key=by_library):
        if statuses[cid] == OBSOLETE:
            continue
        rows = by_config.get(cid, [])
        rows.sort(key=lambda r: (r.peer, ("handshake_processing", "step", "crypto", "handshake_overhead").index(r.metric),
                                 order_of.get(voc.label_id.get(r.label, -1), -1)))
        if rows:
            out.append({"config": res.config_labels[cid], "library": res.configs[cid].library, "rows": rows})
    return out


def _sched_section(analysis: Analysis) -> dict | None:
    """The scheduler's section (sched.html.j2), None when the plan did not ask for it."""
    res = sched_view.collect(analysis)
    if res is None:
        return None
    return {"res": res, "missing_text": sched_view.missing_text(res), "columns": sched_view.TABLE}


def device_time(analysis: Analysis, energy: dict | None) -> DeviceTime | None:
    """How a device run's counts become the part's ms and mJ on the first screen: the one
    conversion (analysis/models/conversion.py) on the energy section's board or profile; None
    without one, or on the host."""
    from tlsbench.analysis.models.conversion import of_dataset

    op = energy["res"].profile if energy else None
    unit = analysis.ds.unit
    if op is None or unit.is_time:
        return None
    try:
        converted = of_dataset(analysis.ds, op)
    except UserError:
        return None  # the energy section says why
    rows = energy["res"]

    def joules(config_id: int, peer: str) -> float | None:
        row = rows.find(config_id, "handshake", peer, "", op.label)
        return row.summary.median if row else None
    band = converted.band.worst * 100 if converted.band else None  # ± the worst measured error
    return DeviceTime(f"estimate, {converted.text}", converted.processing_s, band, joules,
                      lambda config_id, peer: converted.step_s(config_id, vocab().peers[peer]))


def _host_memory(beyond: dict | None) -> dict[tuple[str, str], int] | None:
    """(configuration key, peer) -> heap peak + stack peak in bytes, from a host run's memory
    twins (metrics heap, stack), the most over the repetitions."""
    heap: dict[tuple[str, str], int] = {}
    stack: dict[tuple[str, str], int] = {}
    for r in beyond["res"].rows if beyond else []:
        key = (r.config_key, r.peer)
        if r.metric == "heap_peak" and r.slice in ("handshake", "connected"):
            heap[key] = max(heap.get(key, 0), int(r.summary.max))
        elif r.metric == "stack_peak":
            stack[key] = max(stack.get(key, 0), int(r.summary.max))
    return {k: v + stack.get(k, 0) for k, v in heap.items()} or None


def answer(analysis: Analysis, budget: Budget = Budget(), role: str = "client", energy: dict | None = None,
           beyond: dict | None = None) -> Recommendations:
    """The recommendations per key-exchange class the first screen shows."""
    return recommend(inputs_of(analysis, _host_memory(beyond)), role, budget, device_time(analysis, energy))


def build_html(analysis: Analysis, comparison: Comparison | None = None, figures: list | None = None,
               winners: str = WINNERS_MODES[0], energy: dict | None = None, predict: dict | None = None,
               budget: Budget = Budget(), role: str = "client") -> str:
    """The report as one HTML string; `winners` picks the winners sections (WINNERS_MODES);
    `energy` is the energy section (report/energy.py html_section), `predict` the
    predictions' (report/predict.py html_section), None for none; `budget` and `role`: the
    first screen's recommendations (the part's budget, the device's peer)."""
    res = analysis.results
    drawn = _figures(analysis, res.context.seed) if figures is None else (_figure(f) for f in figures)
    overhead = [r.summary.median for r in res.rows if r.metric == "handshake_overhead"]
    ctx = res.context
    hello = next(iter(analysis.ds.agents.values()), {}).get("hello", {})
    tpl = _env().get_template("report.html.j2")
    network = network_section(analysis)
    script, script_source = _script()
    beyond = metrics_section(analysis.ds, ctx.seed)
    recommended = answer(analysis, budget, role, energy, beyond)
    statuses = _by_status(analysis, recommended)
    place = place_of(analysis.ds, ctx.libraries, res.device, recommended.device_time.label
                     if recommended.device_time else "")
    page = tpl.render(
        answer=recommended, place=place,
        summary=_summary(analysis), misses=_misses(analysis), script=script, script_source=script_source,
        network=network["rows"], network_figures=[_figure(f) for f in network["figures"]],
        r=res, ctx=ctx, a=analysis, hello=hello, suite_columns=SUITE_COLUMNS, suites=_suite_rows(analysis, statuses),
        step_tables=_step_tables(analysis, statuses), steps_left_out=list(statuses.values()).count(OBSOLETE),
        metrics={m.name: m for m in METRICS},
        figures=FIGURES_HERE,
        overhead_median_ns=float(np.median(overhead)) if overhead else math.nan,
        comparison=comparison, labels=res.config_labels, version=__version__, n_boot=N_BOOT,
        n_boot_rounds=N_BOOT_ROUNDS, interval_rounds=_interval_rounds(res), exclusions=_exclusions(res),
        heavy_load=any(w.startswith("Heavy load") for w in res.warnings),
        libs=res.libraries, side_by_side=_side_by_side(analysis), granularity_meaning=GRANULARITY_MEANING,
        show_overall=winners != "per-library", show_per_library=winners != "overall" and res.libraries.several,
        primitives=primitives.section(res.primitives, inline_svg, energy["res"].rows if energy else []) if res.primitives else None,
        energy=energy, predict=predict, u=analysis.ds.unit, device=res.device, sched=_sched_section(analysis),
        beyond=beyond, pace=pace_section(analysis), device_primitives=device_primitives.html_section(analysis, energy),
    )
    drawn = list(drawn)
    defs, drawn = shared_patterns(drawn)
    return page.replace(FIGURES_HERE, _env().get_template("figures.html.j2").render(figures=drawn, defs=defs), 1)


_PATTERN = re.compile(r'<pattern id="([^"]+)"(.*?)</pattern>', re.S)


def shared_patterns(drawn: list[dict]) -> tuple[Markup, list[dict]]:
    """Every figure's hatch patterns defined once in the page (matplotlib writes each into
    every figure that uses it; a dotted one is 250 KB), the figures' references pointing there:
    one hidden SVG of <defs> before the figures, ids by content."""
    defs: dict[str, str] = {}
    out = []
    for f in drawn:
        svg = str(f["svg"])
        renamed: dict[str, str] = {}
        for own, body in _PATTERN.findall(svg):
            shared = "hatch-" + hashlib.sha1(body.encode()).hexdigest()[:10]
            defs.setdefault(shared, f'<pattern id="{shared}"{body}</pattern>')
            renamed[own] = shared
        if renamed:
            svg = _PATTERN.sub("", svg)
            svg = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{renamed.get(m.group(1), m.group(1))})", svg)
        out.append({**f, "svg": Markup(svg)})
    if not defs:
        return Markup(""), out
    return Markup('<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
                  + "".join(defs.values()) + "</defs></svg>"), out


def _by_status(analysis: Analysis, recommended: Recommendations) -> dict[int, str]:
    """config id -> its status name, for the per-configuration table's order and folding."""
    policy = recommended.policy
    return {cid: policy.status(suite_fields(c)).name for cid, c in analysis.results.configs.items()}


def write_report(analysis: Analysis, out: str | Path, comparison: Comparison | None = None,
                 winners: str = WINNERS_MODES[0], energy: dict | None = None, where: str = "--out",
                 predict: dict | None = None, budget: Budget = Budget(), role: str = "client") -> Path:
    """Writes the report (files.write_output: a file atomically, a device or FIFO through, `-`
    standard output); a failure leaves no truncated file;
    `where` names the option that writes it elsewhere."""
    return write_output(out, build_html(analysis, comparison, winners=winners, energy=energy, predict=predict,
                                        budget=budget, role=role), where)


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
               profile: str | None = None, where: str = "--out", predictions: PredictResults | None = None,
               budget: Budget = Budget(), role: str = "client") -> Path:
    """The HTML report of an analysed experiment: with a B/A section when `other` is given;
    `winners`: both, overall or per-library winners sections; an energy section when the
    store holds a capture or a power `profile` is named; `budget`, `role`: the first screen's
    recommendations. `where`: how to write it elsewhere, for the message when it cannot be
    written."""
    comparison = set_beside(analysis, other) if other else None
    analysis.results.comparison = comparison
    return write_report(analysis, target, comparison, winners, html_section(analysis, profile), where,
                        predict_section(predictions), budget, role)
