# SPDX-License-Identifier: Apache-2.0
"""`tlsbench report`, `export` and `compare`: a few calls each into analysis, report, export
(numpy, scipy and matplotlib load only when a command runs)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from tlsbench.cli.options import analyze_experiment, fail, flagged_option, output_option, store_path
from tlsbench.errors import UserError
from tlsbench.files import STDOUT, folder_path, make_folder, write_output
from tlsbench.report import WINNERS_MODES

FIGURE_FORMATS = ("svg", "pdf", "png")  # `report --figures DIR --format`: vectors for papers first

def report_after_run(store: Path) -> Path:
    """The report `tlsbench run` writes when a sweep ends: report.html next to the store
    (with predicted vs measured when the plan ran emulated links and their reference)."""
    from tlsbench.report.html import write_html

    analysis = analyze_experiment(str(store), None, False)
    return write_html(analysis, store.parent / "report.html",
                      where=f"the store is complete: `tlsbench report {store.parent} --out FILE`",
                      predictions=predictions_for(analysis, (), None, None))


def predictions_for(analysis, links: tuple[str, ...], sweep: str | None, profile: str | None):  # -> PredictResults | None
    """The report's predictions: over `links` (`--predict`), and the check against the
    emulator whenever the store ran emulated links with a reference; None: neither."""
    from tlsbench.analysis.predict.model import Options
    from tlsbench.analysis.predict.results import collect, sources_of
    from tlsbench.analysis.predict.validate import has_validation
    from tlsbench.analysis.energy.profiles import resolve

    ds = analysis.ds
    if not links and not has_validation(ds.configs):
        return None
    opts = Options(seed=analysis.results.context.seed or 1, profile=resolve(profile) if profile else None)
    return collect(sources_of(ds), analysis.results.config_labels, links, opts, sweep if links else None)


@click.command()
@click.argument("experiment")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="HTML file (default: report.html next to the store; "
                                                                    "`-`: standard output).")
@click.option("--compare-with", "other", help="A second experiment: adds the B/A comparison section.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False),
              help="Also write every figure of the report as a file of its own here (for papers), in --format.")
@click.option("--format", "figure_format", type=click.Choice(FIGURE_FORMATS), default=FIGURE_FORMATS[0],
              show_default=True, help="The --figures files: vector SVG or PDF, or PNG.")
@click.option("--pdf", "pdf_dir", type=click.Path(file_okay=False), help="Also write every figure as PDF, SVG and PNG here.")
@click.option("--winners", type=click.Choice(WINNERS_MODES), default=WINNERS_MODES[0], show_default=True,
              help="Winners over all configurations, per library, or both (per library: plans with several libraries).")
@click.option("--profile", help="Add energy estimates from a power profile: a built-in (`tlsbench energy profiles`), "
                                "NAME-<F>mhz, or a TOML file. Measured energy (`tlsbench energy import`) is shown anyway.")
@click.option("--predict", "predict_links", multiple=True, metavar="LINK",
              help="Add predictions over a link (repeatable): a preset (`tlsbench predict --list-links`), with "
                   "overrides (nb-iot,loss=5) or parameters (rate=250k,delay=5); energy with --profile.")
@click.option("--predict-sweep", type=click.Choice(("rate", "rtt", "loss")), default="rate", show_default=True,
              help="The crossover plot's x axis, swept around the first --predict link.")
@flagged_option
@output_option
def report(experiment: str, out: str | None, other: str | None, figures_dir: str | None, figure_format: str,
           pdf_dir: str | None, winners: str,
           profile: str | None, predict_links: tuple[str, ...], predict_sweep: str, include_flagged: bool,
           output: str | None) -> None:
    """Write the self-contained offline HTML report of an experiment."""
    from tlsbench.analysis.predict.links import parse_link
    from tlsbench.report import figures
    from tlsbench.report.energy import energy_figures
    from tlsbench.report.html import write_html
    from tlsbench.report.predict import prediction_figures

    for text in predict_links:
        parse_link(text)  # a wrong link fails before the experiment is analysed
    folders = ((figures_dir, (figure_format,), "--figures DIR"), (pdf_dir, ("pdf", "svg", "png"), "--pdf DIR"))
    for folder, _, option in folders:
        if folder:
            folder_path(folder, option)  # `-` refused before the work
    analysis = analyze_experiment(experiment, output, include_flagged)
    other_analysis = analyze_experiment(other, output, include_flagged) if other else None
    predictions = predictions_for(analysis, predict_links, predict_sweep, profile)
    target = write_html(analysis, Path(out) if out else store_path(experiment, output).parent / "report.html",
                        other_analysis, winners, profile, predictions=predictions)
    click.echo(f"report: {target}", err=out == STDOUT)  # standard output holds the report itself
    for folder, formats, option in folders:
        if folder:
            d = Path(folder)
            make_folder(d, option)
            from tlsbench.report.primitives import figures as primitives_figures
            from tlsbench.report.network import network_section

            extra = primitives_figures(analysis.results.primitives) if analysis.results.primitives else []
            extra += prediction_figures(predictions) if predictions else []
            extra += network_section(analysis)["figures"] if analysis.results.configs else []
            for f in figures.all_figures(analysis, analysis.results.context.seed) + energy_figures(analysis, profile) + extra:
                for fmt in formats:
                    write_output(d / f"{f.name}.{fmt}", figures.render(f.figure, fmt), option)
                figures.plt.close(f.figure)
            click.echo(f"figures: {d} ({', '.join(formats)})")


@click.command()
@click.argument("experiment")
@click.option("--rebuild", is_flag=True, help="Derive every repetition again (else only those without summaries "
                                              "of this version).")
@output_option
def derive(experiment: str, rebuild: bool, output: str | None) -> None:
    """Store each repetition's summaries (measures, trace facts) and each configuration's
    statistics, so reports read them instead of decoding every record and drawing every
    bootstrap again; the raw records stay as they are."""
    from tlsbench.analysis.statcache import derive_all
    from tlsbench.store.sqlite import Store

    path = store_path(experiment, output)
    with Store.open(path, create=False, retry="run `tlsbench derive` again") as store:
        n, batches, configs = derive_all(store, rebuild)
    click.echo(f"derived: {n} repetition(s) in {batches} batch(es), the statistics of {configs} configuration(s): {path}")


@click.command()
@click.argument("experiment")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "markdown", "perfetto", "parquet"]), default="csv",
              show_default=True)
@click.option("--level", type=click.Choice(["statistics", "repetition", "slice"]), default=None,
              help="Tidy data: one row per repetition, or per slice (step, crypto operation, record, experiment "
                   "group), as csv or parquet (docs/export.md). Default: statistics (parquet: repetition).")
@click.option("--rep", "reps", type=int, multiple=True,
              help="Repetition id(s) for perfetto (default: a representative repetition of the winner).")
@click.option("--profile", help="csv, json: add energy estimates from a power profile (`tlsbench energy profiles`).")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="File to write (default and `-`: standard output).")
@flagged_option
@output_option
def export(experiment: str, fmt: str, level: str | None, reps: tuple[int, ...], profile: str | None, out: str | None,
           include_flagged: bool, output: str | None) -> None:
    """Export statistics (csv, json, markdown), traces (perfetto trace-event JSON), or tidy
    per-repetition / per-slice tables (csv, parquet)."""
    level = level or ("repetition" if fmt == "parquet" else "statistics")
    if level != "statistics":
        return export_tidy(experiment, fmt, level, out, output)
    if fmt == "parquet":
        raise click.UsageError("parquet holds tidy tables: --level repetition or --level slice")
    from tlsbench.export import exporter

    analysis = analyze_experiment(experiment, output, include_flagged)
    text = exporter(fmt, profile).export(analysis, list(reps) or None)
    write_output(out or STDOUT, text)
    if out and out != STDOUT:
        click.echo(f"{fmt}: {out}", err=True)


GATE_EXIT = {"passed": 0, "worse": 1, "cannot compare": 2}  # docs/ci.md


def parse_threshold(text: str) -> float:
    """`1%`, `0.5%` or `1` (always percent) as a fraction."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a percentage: write e.g. 1% or 0.5%") from None
    if not 0 <= value < 1000:
        raise click.BadParameter(f"{text!r}: give a percentage from 0% to 1000%")
    return value / 100


def export_tidy(experiment: str, fmt: str, level: str, out: str | None, output: str | None) -> None:
    """Every repetition (or slice) as a row, streamed a chunk of repetitions at a time;
    exclusions are columns here (`excluded`, `status`, flags), not filters."""
    from tlsbench.export import tidy

    if fmt not in tidy.TIDY_FORMATS:
        raise click.UsageError(f"--level {level} is written as {' or '.join(tidy.TIDY_FORMATS)}, not {fmt}")
    if fmt == "parquet" and not out:
        raise click.UsageError("parquet is a binary file: give --out FILE (or --out - for standard output)")
    rows = tidy.write(store_path(experiment, output), out or STDOUT, level, fmt)
    if out and out != STDOUT:
        click.echo(f"{fmt}: {out} ({rows} rows, one per {level})", err=True)


@click.command()
@click.argument("a")
@click.argument("b", required=False)
@click.option("--config", "configs", type=int, nargs=2, help="Compare two configuration ids of experiment A instead.")
@click.option("--noise-floor", type=float, default=0.01, show_default=True, help="Ratios within ±this of 1 are 'no difference'.")
@click.option("--all", "show_all", is_flag=True, help="Show every row, not only the significant ones and the totals.")
@click.option("--fail-above", "fail_above", metavar="PCT",
              help="Regression gate: exit 1 when a measure of B is worse than A's by more than PCT (e.g. 1%) with "
                   "confidence (the ratio's whole 95% CI above 1 + PCT; exact counts: the ratio), printing those rows; "
                   "0 when none is; 2 when the two cannot be compared (docs/ci.md).")
@click.option("--metric", "measures", multiple=True, metavar="MEASURE",
              help="Only this measure, e.g. handshake_processing, step, crypto (repeat for several; default: every "
                   "measure compare sets side by side).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="json, csv: every row (as --all) with the ratio, its CI and the verdict, at full precision.")
@flagged_option
@output_option
def compare(a: str, b: str | None, configs: tuple[int, int] | None, noise_floor: float, show_all: bool,
            fail_above: str | None, measures: tuple[str, ...], fmt: str, include_flagged: bool,
            output: str | None) -> None:
    """Ratio B/A per configuration and step, with bootstrap CIs and a verdict; with
    --fail-above, a regression gate for CI."""
    if not b and not configs:
        raise click.UsageError("give two experiments, or one experiment and --config A_ID B_ID")
    if fail_above is None and fmt != "table":
        from tlsbench.export.compare import comparison_csv, comparison_json

        cmp_, _, an, bn = _comparison(a, b, configs, noise_floor, include_flagged, output, measures)
        click.echo((comparison_json if fmt == "json" else comparison_csv)(cmp_, an, bn), nl=False)
        return
    if fail_above is None:
        _compare_table(a, b, configs, noise_floor, show_all, include_flagged, output, measures)
        return
    threshold = parse_threshold(fail_above)
    try:
        cmp_, u, _, _ = _comparison(a, b, configs, noise_floor, include_flagged, output, measures)
    except UserError as exc:
        fail(f"{exc} (regression gate: cannot compare, exit {GATE_EXIT['cannot compare']})", GATE_EXIT["cannot compare"])
    _gate(cmp_, u, threshold, fail_above)


def _comparison(a: str, b: str | None, configs: tuple[int, int] | None, noise_floor: float, include_flagged: bool,
                output: str | None, measures: tuple[str, ...]):  # -> (Comparison, Unit)
    from tlsbench.analysis.compare import COMPARED
    from tlsbench.analysis.compare import compare as do_compare
    from tlsbench.report.html import ReportError

    unknown = [m for m in measures if m not in COMPARED]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)} is not compared; measures: {', '.join(COMPARED)}",
                                 param_hint="--metric")
    an = analyze_experiment(a, output, include_flagged)
    bn = analyze_experiment(b, output, include_flagged) if b else an
    u = an.ds.unit
    if bn.ds.unit != u:
        raise ReportError(f"{an.ds.name} counts in {u.name}, {bn.ds.name} in {bn.ds.unit.name}: a count and a time "
                          "are not compared as a ratio; `tlsbench report DEVICE_EXPERIMENT --compare-with "
                          "HOST_EXPERIMENT` sets them side by side")
    cmp_ = do_compare(an, bn, an.results.context.seed, noise_floor, *(configs if configs else (None, None)),
                      **({"metrics": measures} if measures else {}))
    return cmp_, u, an, bn


def _gate(cmp_, u, threshold: float, text: str) -> None:  # (Comparison, Unit, ...)
    """Prints the rows worse beyond the threshold and exits with the gate's code."""
    from tlsbench.analysis.compare import worse_beyond

    if not cmp_.rows:
        fail(f"nothing to compare between {cmp_.name_a} and {cmp_.name_b} (no configuration measured by both"
             + (f"; unmatched: {'; '.join(cmp_.unmatched)}" if cmp_.unmatched else "") + ")", GATE_EXIT["cannot compare"])
    worse = worse_beyond(cmp_, threshold)
    for r in worse:
        how = "exact" if r.exact else f"95% CI [{r.ratio.ci[0]:.4f}, {r.ratio.ci[1]:.4f}]"
        click.echo(f"WORSE  {r.config}  {r.peer}  {r.metric}  {r.label or '-'}  A {r.median_a:,.0f} B {r.median_b:,.0f} "
                   f"{u.name}  {100 * (r.ratio.ratio - 1):+.2f}%  ({how})")
    for warning in cmp_.warnings:
        click.echo(f"warning: {warning}", err=True)
    if cmp_.unmatched:
        click.echo(f"unmatched configurations: {'; '.join(cmp_.unmatched)}", err=True)
    click.echo(f"{cmp_.name_b} vs {cmp_.name_a}: {len(cmp_.rows)} rows compared, {len(worse)} worse by more than "
               f"{text} with confidence")
    sys.exit(GATE_EXIT["worse"] if worse else GATE_EXIT["passed"])


def _compare_table(a: str, b: str | None, configs: tuple[int, int] | None, noise_floor: float, show_all: bool,
                   include_flagged: bool, output: str | None, measures: tuple[str, ...]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from tlsbench.analysis.device import identity

    cmp_, u, an, bn = _comparison(a, b, configs, noise_floor, include_flagged, output, measures)
    t = Table(title=f"{cmp_.name_b} / {cmp_.name_a} (ratio of medians, 95% bootstrap CI, noise floor {noise_floor:.0%})")
    for col in ("configuration", "peer", "measure", "label", f"A {u.label(1e3)}", f"B {u.label(1e3)}", "B/A", "95% CI",
                "verdict"):
        t.add_column(col, justify="left" if col in ("configuration", "peer", "measure", "label", "verdict") else "right")
    for r in cmp_.rows:
        if not show_all and not r.ratio.significant and r.metric not in ("handshake_processing", "write_processing_post", "read_processing_pre"):
            continue
        colour = {"faster": "green", "slower": "red"}.get(r.ratio.verdict, "")
        word = u.verdict(r.ratio.verdict)
        t.add_row(escape(r.config), r.peer, r.metric, escape(r.label), f"{r.median_a / 1e3:,.2f}",
                  f"{r.median_b / 1e3:,.2f}", f"{r.ratio.ratio:.3f}", escape(f"[{r.ratio.ci[0]:.3f}, {r.ratio.ci[1]:.3f}]"),
                  f"[{colour}]{word}[/]" if colour else word)
    Console(width=None if sys.stdout.isatty() else 200).print(t)
    if b and not u.is_time:
        same = identity(an.ds, bn.ds)
        click.echo(f"identical counts: {same.values:,} values of {same.repetitions} repetitions compared, "
                   f"{same.differing} differ" + (f"; {same.only_one} repetitions stored by one run only"
                                                 if same.only_one else ""))
        for example in same.examples:
            click.echo(f"  {example}")
    if cmp_.unmatched:
        click.echo(f"unmatched configurations: {'; '.join(cmp_.unmatched)}", err=True)
    for warning in cmp_.warnings:
        click.echo(f"warning: {warning}", err=True)
