# SPDX-License-Identifier: Apache-2.0
"""Terminal views of the host tool (rich): suite and experiment tables, the run's progress
bar, status tables and run summaries, the comparison table, energy and prediction tables,
power profiles and link presets. Pure presentation: no decisions are made here; the commands
(cli/) print what these build, at the width they choose."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table
from rich.text import Text

from tlsbench.analysis.questions.coverage import Coverage, Unmeasured, reasons_text
from tlsbench.analysis.stats.stats import NOISE_FLOOR, cis_overlap
from tlsbench.run.controller import RunSummary, budget_text
from tlsbench.run.exchange import AgentRef
from tlsbench.store.progress import ExperimentStatus

SUITE_COLUMNS = ("name", "key_exchange", "authentication", "cipher", "mac")
# HELLO fields that say which build an agent is (for `tlsbench suites --json`).
AGENT_FACTS = ("agent", "library", "library_name", "library_version", "step_granularity")


class working:
    """A line on standard error saying what a command of more than a moment is doing
    (`update(...)` as it goes on), erased when it is done; nothing where standard error is not
    a terminal. No spinner: an animating thread would keep the analysis from forking its
    workers (analysis/derive/parallel.py works alone beside another thread)."""

    def __init__(self, what: str):
        self.console = Console(stderr=True)
        self.update(what)

    def update(self, what: str) -> None:
        if self.console.is_terminal:
            self.console.file.write(f"\r\x1b[2K{what[:max(self.console.width - 2, 10)]}…")
            self.console.file.flush()

    def __enter__(self) -> "working":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.console.is_terminal:
            self.console.file.write("\r\x1b[2K")
            self.console.file.flush()


LONGEST_WORD = 48  # a terminal table keeps words up to this long whole (suite names)


def show(console: Console, table: Table) -> None:
    """A table as it fits where it goes: at a terminal wide enough for its longest words, the
    table wrapped to the width (a cell folds onto more lines, a word is never cut to "P…");
    elsewhere (a pipe, a file, a log, a narrow terminal) plain aligned lines, one a row, never
    cut, so that `tlsbench suites | grep CCM-8` finds whole names."""
    if console.is_terminal:
        for column in table.columns:
            words = [w for c in (column.header, *column.cells) for w in _plain(c).split()]
            column.min_width = max(column.min_width or 0, min(LONGEST_WORD, max(map(len, words), default=1)))
            column.overflow = "fold"
        if sum(c.min_width for c in table.columns) + 2 * len(table.columns) <= console.width:
            console.print(table)
            return
    cells = [[_plain(c) for c in column.cells] for column in table.columns]
    rows = [[_plain(c.header) for c in table.columns], *zip(*cells)] if table.show_header else list(zip(*cells))
    widths = [max(len(r[i]) for r in rows) for i in range(len(table.columns))]
    right = [c.justify == "right" for c in table.columns]
    if table.title:
        console.out(_plain(table.title), highlight=False)
    for r in rows:
        line = "  ".join(v.rjust(w) if rj else v.ljust(w) for v, w, rj in zip(r, widths, right))
        console.out(line.rstrip(), highlight=False)
    if table.caption:
        console.out(_plain(table.caption), highlight=False)


def _plain(cell: Any) -> str:
    """A cell's text without its markup or style, on one line."""
    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return " ".join(text.split())


def agent_facts(hello: Mapping[str, Any]) -> dict[str, Any]:
    return {k: hello.get(k) for k in AGENT_FACTS} | ({"device": hello["device"]} if "device" in hello else {})


def suites_table(hello: Mapping[str, Any], suites: Sequence[Mapping[str, Any]]) -> Table:
    device = hello.get("device") or {}
    where = f" on {device.get('target')} ({device.get('cpu')})" if device else ""
    title = (f"{hello.get('agent', '?')}{where}: {hello.get('library_name', hello.get('library', '?'))} "
             f"{hello.get('library_version', '')}, steps per {hello.get('step_granularity', '?')}: "
             f"{len(suites)} suites (credentials: the first is what auto picks)")
    table = Table(title=title, box=None)
    table.add_column("id", justify="right", no_wrap=True)
    for col in SUITE_COLUMNS:
        table.add_column(col, no_wrap=col == "name")
    table.add_column("versions")
    table.add_column("dtls")
    table.add_column("credentials")
    for s in suites:
        versions = s["min_version"] if s["min_version"] == s["max_version"] else f"{s['min_version']}-{s['max_version']}"
        creds = ", ".join(s.get("credentials", [])) or f"[red]cannot run: {escape(str(s.get('why_unsupported', '?')))}[/]"
        table.add_row(f"0x{s['id']:04X}", *[str(s.get(c, "")) for c in SUITE_COLUMNS], versions,
                      "yes" if s.get("dtls") else "no", creds)
    return table


# What the progress bar's other columns need at the least (bar, done/total, elapsed, ETA):
# the description gets the rest of the line, so at 80 columns every number stays whole.
PROGRESS_COLUMNS = 50


class ProgressObserver:
    """A progress bar with ETA and the configuration being measured."""

    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(bar_width=10), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=console, transient=False)
        self.task = None

    def __enter__(self) -> "ProgressObserver":
        return self  # the bar appears when measuring starts: a refused start draws nothing

    def __exit__(self, *exc: Any) -> None:
        if self.progress.live.is_started:
            self.progress.stop()

    def start(self, total: int, done: int, configs: int) -> None:
        if done >= total:
            self.console.print(f"all {total} repetitions of the {configs} configurations are already stored")
        else:
            if done:
                self.console.print(f"resuming: {done} of {total} repetitions already stored")
            self.console.print(f"{configs} configurations, {total} repetitions planned")
        self.task = self.progress.add_task("starting", total=total, completed=done)

    def batch(self, config: str, round: int, first_index: int, count: int) -> None:
        if not self.progress.live.is_started:  # drawn from the first batch on: a finished run draws none
            self.progress.start()
        what = " ".join(config.split("|")[:2])  # library and suite: rounds interleave libraries
        room = max(12, min(56, self.console.width - PROGRESS_COLUMNS))  # the counts and ETA keep their room
        text = f"round {round + 1} {what}"
        self.progress.update(self.task, description=f"{text[:room - 1] + '…' if len(text) > room else text:<{room}}")

    def stored(self, config: str, idx: int, status: str, agent: AgentRef) -> None:
        self.progress.advance(self.task)

    def note(self, message: str) -> None:
        self.console.print(message, style="yellow", markup=False, highlight=False, soft_wrap=True)  # one line a note

    def extend(self, extra: int) -> None:
        task = next(t for t in self.progress.tasks if t.id == self.task)
        self.progress.update(self.task, total=(task.total or 0) + extra)


# The closing lines name this many configurations of each reason (a matrix's unfit lane has hundreds).
NAMED_PER_REASON = 3


def print_summary(console: Console, summary: RunSummary, resume_command: str, coverage: Coverage) -> None:
    """The run's closing lines: what was not measured and why, what was stored, what the
    statistics leave out."""
    for why, names in _by_reason(coverage.unmeasured).items():
        more = (f" and {len(names) - NAMED_PER_REASON} more (`tlsbench status {summary.folder} --all` names each)"
                if len(names) > NAMED_PER_REASON else "")
        console.print(f"[yellow]not measured[/] ({escape(why)}): {escape(', '.join(names[:NAMED_PER_REASON]) + more)}")
    console.print(f"stored {summary.stored} repetitions in {summary.seconds:.1f} s "
                  f"({summary.failed} failed, {summary.agent_deaths} agent deaths) into {escape(str(summary.folder))}",
                  soft_wrap=True)  # a path is never broken in a log
    if coverage.excluded:
        console.print(f"[yellow]excluded from statistics:[/] {sum(coverage.excluded.values())} of {coverage.stored} "
                      f"stored repetitions ({escape(reasons_text(coverage.excluded))})")
    if coverage.unjudged:
        console.print(f"[dim]{_unjudged(coverage)}[/]")
    if summary.budget:
        console.print(escape(budget_text(summary.budget)), style="yellow", highlight=False)
    if summary.interrupted:
        console.print(f"[yellow]interrupted: the store is consistent; resume with:[/] {escape(resume_command)}")


def _by_reason(unmeasured: Sequence[Unmeasured]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for u in unmeasured:
        out.setdefault(u.why, []).append(u.name)
    return out


def _unjudged(coverage: Coverage) -> str:
    return (f"{coverage.unjudged} repetition(s) without stored summaries are not judged descheduled yet: the end of "
            "the sweep or `tlsbench derive` stores them")


def status_tables(st: ExperimentStatus, all_configs: bool, coverage: Coverage) -> list[Table]:
    head = Table(title=f"{st.name}  ({escape(str(st.folder))}, created {st.created_at}, seed {st.seed}, "
                       f"{st.agents} agent process(es))")
    for col in ("configs", "not measured", "stored", "planned", "failed", "flagged", "excluded"):
        head.add_column(col, justify="right")
    excluded = coverage.excluded
    head.add_row(str(len(st.configs)), str(len(coverage.unmeasured)), str(st.stored), str(st.planned), str(st.failed),
                 str(st.flagged), str(sum(excluded.values())))
    if excluded or coverage.unjudged:
        head.caption = escape("excluded from statistics: " + (reasons_text(excluded) or "none")
                              + (f"; {_unjudged(coverage)}" if coverage.unjudged else ""))
    rounds = Table(title="per round")
    for col in ("round", "stored", "planned", "done"):
        rounds.add_column(col, justify="right")
    for r in st.rounds:
        done = "✓" if r.stored >= r.planned else f"{100 * r.stored / max(r.planned, 1):.0f}%"
        rounds.add_row(str(r.round + 1), str(r.stored), str(r.planned), done)
    configs = Table(title="configurations" if all_configs else "configurations needing attention", box=None)
    for col, just in (("id", "right"), ("library", "left"), ("suite", "left"), ("group", "left"), ("credential", "left"),
                      ("payload", "left"), ("stored", "right"), ("planned", "right"), ("failed", "right"),
                      ("flagged", "right"), ("excluded", "right"), ("note", "left")):
        configs.add_column(col, justify=just, no_wrap=col == "suite")
    for c in st.configs:
        x = coverage.found.get(c.id)
        lost = x.excluded if x else 0
        note = "; ".join(n for n in (c.skip_reason, x.no_data if x and x.stored and not x.used else "") if n)
        if all_configs or c.failed or c.flagged or note or (x is not None and x.heavy):
            configs.add_row(str(c.id), c.library, c.suite, c.group, c.credential, c.payload, str(c.stored), str(c.planned),
                            str(c.failed), str(c.flagged), str(lost), escape(note))
    cells = Table(title="not measured", box=None)
    for col in ("configuration or matrix cell", "why"):
        cells.add_column(col)
    for u in coverage.unmeasured:
        cells.add_row(escape(u.name), escape(u.why))
    return [head, rounds] + [t for t in (configs, cells) if t.row_count]


def experiments_table(hello: Mapping[str, Any]) -> Table:
    """An agent's experiments (HELLO `experiments`): primitives, then user experiments."""
    listed = hello.get("experiments", [])
    table = Table(title=f"{hello.get('agent', '?')}: {hello.get('library_name', hello.get('library', '?'))} "
                        f"{hello.get('library_version', '')}: {len(listed)} experiments", box=None)
    for col, just in (("id", "right"), ("name", "left"), ("source", "left"), ("groups", "left"),
                      ("sizes (bytes)", "left"), ("what it measures", "left")):
        table.add_column(col, justify=just, no_wrap=col == "name")
    for e in listed:
        table.add_row(str(e["id"]), e["name"], e.get("source", ""), ", ".join(e.get("groups", [])),
                      ", ".join(str(s) for s in e.get("sizes", [])) or "–", e.get("description", ""))
    return table


# ---------------------------------------------------------------- tlsbench compare
def count_or_time(value: float, unit: str) -> str:
    """A median in its unit: a time in µs, a count as counted (never a count as a time)."""
    from tlsbench.analysis.units import Unit

    u = Unit(unit)
    return u.text(value, 1e3) if u.is_time else f"{value:,.0f} {u.noun}"


# Whole-peer measures the table always shows (the others: when significant, or with --all).
HEADLINE = ("handshake_processing", "write_processing_post", "read_processing_pre")


def compare_table(cmp_, noise_floor: float, show_all: bool) -> Table:  # (Comparison, ...)
    """B against A, row by row: ratio of medians and its interval, and the verdict."""
    from tlsbench.analysis.units import Unit

    t = Table(title=f"{cmp_.name_b} / {cmp_.name_a} (ratio of medians, 95% bootstrap CI, noise floor {noise_floor:.0%})")
    for col in ("configuration", "peer", "measure", "label", "A", "B", "B/A", "95% CI", "verdict"):
        t.add_column(col, justify="left" if col in ("configuration", "peer", "measure", "label", "verdict") else "right")
    for r in cmp_.rows:
        if not show_all and not r.ratio.significant and r.metric not in HEADLINE:
            continue
        colour = {"faster": "green", "slower": "red"}.get(r.ratio.verdict, "")
        word = Unit(r.unit).verdict(r.ratio.verdict)
        t.add_row(escape(r.config), r.peer, r.metric, escape(r.label), count_or_time(r.median_a, r.unit),
                  count_or_time(r.median_b, r.unit), f"{r.ratio.ratio:.3f}",
                  escape(f"[{r.ratio.ci[0]:.3f}, {r.ratio.ci[1]:.3f}]"), f"[{colour}]{word}[/]" if colour else word)
    return t


# ---------------------------------------------------------------- tlsbench energy
def profiles_table(points: Sequence[Any]) -> Table:  # OperatingPoint
    """The built-in power profiles' operating points, with their sources."""
    t = Table(title="Built-in power profiles (`--profile NAME`; NAME alone is the profile's default frequency)")
    for col in ("name", "CPU mW", "TX mW", "RX mW", "idle mW", "time scale", "description", "sources"):
        t.add_column(col, justify="right" if "mW" in col or col == "time scale" else "left")
    for op in points:
        radio = [f"{op.tx_w * 1e3:,.1f}", f"{op.rx_w * 1e3:,.1f}"] if op.has_radio else ["(CPU)", "(CPU)"]
        t.add_row(op.name, f"{op.cpu_w * 1e3:,.1f}", *radio, f"{op.idle_w * 1e3:,.4g}",
                  f"{op.time_scale:g}" if op.scale_measured else "1 (not set)", op.profile.description,
                  "; ".join(s.document for s in op.profile.sources))
    return t


# The energy rows a table shows (steps too with --steps).
ENERGY_KINDS = ("handshake", "handshake_window", "repetition", "record_write", "record_read", "operation")
_PREFIXES = ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ"), (1e-9, "nJ"))


def _si(j: float) -> tuple[float, str]:
    """A scale and unit for an energy in J."""
    scale, unit = next(((s, u) for s, u in _PREFIXES if abs(j) >= s), _PREFIXES[-1])
    return scale, unit


def energy_table(sources: Sequence[str], rows: Sequence[Any], label: Callable[[int], str], steps: bool) -> Table:
    """Energy above idle per configuration, peer and kind (`label`: a configuration's name)."""
    shown = [r for r in rows if r.kind in ENERGY_KINDS or (steps and r.kind == "step")]
    t = Table(title=f"Energy above idle: {' and '.join(sources)} (median, 95% bootstrap CI)")
    for col in ("configuration", "peer", "energy", "label", "source", "n", "median", "95% CI", "±%"):
        t.add_column(col, justify="right" if col in ("n", "median", "95% CI", "±%") else "left")
    for r in shown:
        s = r.summary
        scale, unit = _si(s.median)
        interval = (f"[{s.median_ci[0] / scale:,.4g}, {s.median_ci[1] / scale:,.4g}]", f"±{s.median_ci_pct:.1f}%") \
            if s.has_interval else (s.interval_note, "–")  # n = 1: no interval, never "±nan%"
        t.add_row(escape(label(r.config_id)), r.peer, r.kind, r.label, escape(r.source), str(s.n),
                  f"{s.median / scale:,.4g} {unit}", *interval)
    return t


# ---------------------------------------------------------------- tlsbench predict
def link_presets_table() -> Table:
    """The link presets with every figure's source."""
    from tlsbench.analysis.models.predict.links import preset_info, presets, sources

    known = sources()
    t = Table(title="Link presets (spec/links.toml; the emulator's presets are generated from the same file)")
    for col in ("preset", "figure", "value", "source"):
        t.add_column(col)
    for name, link in presets().items():
        info = preset_info(name)
        t.add_row(f"[bold]{name}[/]", escape(info.summary), "", "")
        for c in link.citations:
            src = known[c.source].document if c.source in known else "our assumption"
            value = f"{int(c.value):,}" if float(c.value).is_integer() else f"{c.value:g}"
            t.add_row("", c.field, value + (" (approx.)" if c.approximate else ""),
                      escape(f"{src}: {c.note}" if c.note else src))
    return t


def _ms(ns: float) -> str:
    return "–" if not math.isfinite(ns) else f"{ns / 1e6:,.1f}"


def print_predictions(console: Console, res) -> None:  # PredictResults
    """Per link the configurations ranked by predicted duration, the sweep's crossovers and
    the check against the emulator, then the warnings."""
    from tlsbench.report.predict import crossover_sentences

    energy = res.profile is not None
    for lp in res.links:
        t = Table(title=f"Predicted over {escape(lp.link.label)} (a model, not a measurement): device "
                        f"{lp.predictions[0].device if lp.predictions else '?'}, medians with 95% CI")
        cols = ["rank", "configuration", "duration ms", "95% CI", "5–95%", "bytes", "device proc. ms"]
        cols += ["energy mJ", "95% CI mJ"] if energy else []
        for col in cols:
            t.add_column(col, justify="left" if col == "configuration" else "right")
        for r in lp.by_duration:
            p = r.prediction
            d = p.duration
            row = [("=" if r.tied else "") + str(r.rank), escape(p.label), _ms(d.median),
                   f"[{_ms(d.median_ci[0])}, {_ms(d.median_ci[1])}]", f"{_ms(p.p5_ns)} – {_ms(p.p95_ns)}",
                   f"{p.bytes.median:,.0f}", f"{p.processing_ns / 1e6:,.2f}"]
            if energy:
                e = p.energy
                row += [f"{e.median * 1e3:,.4g}", f"[{e.median_ci[0] * 1e3:,.4g}, {e.median_ci[1] * 1e3:,.4g}]"] \
                    if e else ["–", "–"]
            t.add_row(*row)
        show(console, t)
    if res.sweep:
        rows = crossover_sentences(res.sweep)
        title = f"Predicted crossovers, {res.sweep.parameter.name} swept over {res.sweep.base.label}"
        if not rows:
            console.print(f"{title}: none; the order holds over the whole range", highlight=False, markup=False)
        for r in rows:
            console.print(f"{title}: {r['metric']}: {r['text']} (first-order estimate {r['first_order']})",
                          highlight=False, markup=False)
    if res.checks:
        t = Table(title="Predicted vs measured over the emulated links (predicted from the reference link's repetitions)")
        for col in ("link", "configuration", "predicted ms", "measured ms", "error", "predicted bytes",
                    "measured bytes", "error "):
            t.add_column(col, justify="left" if col in ("link", "configuration") else "right")
        for c in res.checks:
            mb = c.measured_bytes.median if c.measured_bytes else math.nan
            t.add_row(escape(c.link.label), escape(c.label), _ms(c.predicted.duration.median), _ms(c.measured.median),
                      f"{100 * c.duration_error:+.1f}%", f"{c.predicted.bytes.median:,.0f}",
                      f"{mb:,.0f}" if math.isfinite(mb) else "–",
                      f"{100 * c.bytes_error:+.1f}%" if math.isfinite(c.bytes_error) else "–")
        show(console, t)
        for e in res.errors:
            console.print(f"{e.protocol} at {e.loss_pct:g}% loss: duration error median {100 * e.duration_median:.1f}%, "
                          f"worst {100 * e.duration_worst:.1f}% ({e.worst_label}); bytes median "
                          f"{100 * e.bytes_median:.1f}%, worst {100 * e.bytes_worst:.1f}% (n = {e.n})",
                          highlight=False, markup=False)
    for w in res.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}", highlight=False)


def validation_table(result) -> list[Any]:  # app.validate.Validation
    """`tlsbench validate cycles`: predicted vs published cycles per row, the comparable rows
    first, then the rows not comparable apart (why, under the table), skipped rows, the band."""
    t = Table(title="Cycle model vs published silicon figures (cycles (model) from instructions counted under QEMU)")
    for col in ("id", "board", "library", "operation", "instructions", "cycles (model)", "published cycles", "error",
                "role"):
        t.add_column(col, justify="right" if col in ("instructions", "cycles (model)", "published cycles", "error")
                     else "left")
    others = [r for r in result.results if r.not_reproducible]
    for group in ([r for r in result.results if not r.not_reproducible], others):
        for r in group:
            t.add_row(r.id, f"{r.board} @ {r.clock_mhz:g} MHz", r.library, f"{r.experiment}/{r.group}",
                      f"{r.instructions / 1e6:,.3f} M", f"{r.predicted_cycles / 1e6:,.3f} M",
                      f"{r.published_cycles / 1e6:,.3f} M", f"{r.error:+.1%}", r.role)
        t.add_section()
    out: list[Any] = [t]
    for reason in dict.fromkeys(r.not_reproducible for r in others):
        ids = ", ".join(r.id for r in others if r.not_reproducible == reason)
        out.append(f"not comparable ({escape(ids)}): {escape(reason)}")
    for s in result.skipped:
        out.append(f"skipped {escape(s['id'])}: {escape(s['reason'])}")
    band, every = result.band, result.all_rows_band
    out.append(f"median |error| {band.median:.1%}, worst {band.worst:.1%} over {band.rows} comparable validation rows"
               if band else "no comparable validation row (only calibration rows or rows not comparable ran)")
    if others and every:
        out.append(f"beside it, every row not used for calibration (the not comparable ones included): median |error| "
                   f"{every.median:.1%}, worst {every.worst:.1%} over {every.rows} rows")
    calibrated = [r.id for r in result.results if r.role == "calibration"]
    if calibrated:
        out.append(f"calibration rows (one per core, not counted above): {', '.join(calibrated)}")
    return out


# ---------------------------------------------------------------------- the answer first
ANSWER_ROWS = 12  # more configurations than this: the cheapest of each key-exchange class only


def answer_table(rec: Any, place: Any) -> Table:  # (recommend.Recommendations, place.Place)
    """The first screen in the terminal (what `tlsbench run` prints before the report's path,
    as hyperfine puts the answer first): where it was measured, then each configuration
    (or, for many, the cheapest of each key-exchange class) with what the device's peer
    pays, cheapest first, and how many times more the others cost."""
    u = rec.unit
    picks = [row.pick for row in rec.classes if row.pick is not None]
    with_cost = [c for c in rec.candidates if c.cost is not None and c.cost.n]
    fitting = [c for c in with_cost if c.fits]  # what the budget keeps (the picks fit it)
    over = len(with_cost) - len(fitting)
    every = len(fitting) <= ANSWER_ROWS
    rows = sorted(fitting if every else picks, key=lambda c: c.cost.median)
    which = ("The cheapest configuration of each key-exchange class" if not every else
             "Every configuration within the budget" if over else "Every configuration")
    caption = _answer_caption(rec, every and not over, len(with_cost)) + (
        f"; {over} configuration(s) over the budget ({rec.budget.text()})" if over else "")
    table = Table(title=escape(f"{which}: {rec.role} handshake processing · {place.headline}"), box=None,
                  caption=escape(caption) or None)
    table.add_column("configuration")
    table.add_column("class, status")
    table.add_column(f"{rec.role} ({u.label(1e6)})", justify="right")
    table.add_column("× cheapest", justify="right")
    estimated = bool(rec.device_time) and not u.is_time  # a device's counts as the part's ms and mJ
    extra = [(title_, cell) for title_, cell, on in (
        ("ms (estimate)", lambda c: f"{c.ms:,.1f}" if c.ms is not None else "–", estimated),
        ("mJ (estimate)", lambda c: f"{c.mj:,.3f}" if c.mj is not None else "–",
         estimated and any(c.mj is not None for c in rows)),
        ("RAM KiB", lambda c: f"{c.ram / 1024:,.1f}" if c.ram else "–", any(c.ram for c in rows)),
        ("bytes", lambda c: f"{c.wire:,.0f}" if c.wire else "–", any(c.wire for c in rows))) if on]
    for title_, _ in extra:
        table.add_column(title_, justify="right")
    best = rows[0] if rows else None
    for c in rows:
        value = f"{c.cost.median / 1e6:,.3f} {_spread_word(c, u)}"
        times = "1" if c is best else f"{c.cost.median / best.cost.median:,.2f}{_apart(best.cost, c.cost)}"
        table.add_row(escape(c.label), escape(f"{c.cls or 'obsolete key exchange'}, {c.status.name}"), value, times,
                      *(cell(c) for _, cell in extra))
    return table


def _apart(best: Any, other: Any) -> str:  # (Summary, Summary)
    """" (within noise)" when the cheapest does not clearly lead: intervals that overlap, or
    values without one within the noise floor."""
    if best.has_interval and other.has_interval:
        return " (within noise)" if cis_overlap(best.median_ci, other.median_ci) else ""
    return " (within 1%)" if other.median < best.median * (1 + NOISE_FLOOR) else ""


def _spread_word(c: Any, u: Any) -> str:
    s = c.cost
    if c.exact:
        return "exact" if s.n == 1 else f"identical in {s.n}"
    if s.has_interval:
        return f"±{s.median_ci_pct:.1f}%"
    return f"n={s.n}, no interval"


def _answer_caption(rec: Any, every: bool, total: int) -> str:
    what = (f"counts of {rec.unit.noun}, not times: exact for each repetition (random keys and nonces move a "
            "count by about 1% at most between repetitions)" if not rec.unit.is_time
            else "medians with their 95% interval; this host's times, not a device's")
    rest = "" if every else f"; all {total} configurations are in the report"
    dt = rec.device_time
    band = ("" if dt is None else ", its error against silicon not measured" if not dt.band_pct else
            f", ±{dt.band_pct:.2g}% (the cycle model's band: its worst error against published silicon figures"
            " plus its CPI's spread over code)")
    ms = f"; ms: {dt.label}{band}" if dt and not rec.unit.is_time else ""
    return f"{what}{rest}{ms}"
