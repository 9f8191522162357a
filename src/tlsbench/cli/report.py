# SPDX-License-Identifier: Apache-2.0
"""`tlsbench report`, `export` and `compare`: a few calls each into analysis, report, export
(numpy, scipy and matplotlib load only when a command runs)."""
from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from tlsbench.app.report import predictions_for
from tlsbench.cli.options import (analyze_experiment, device_scale_option, fail, flagged_option, load_experiment,
                                  note_line, output_option, print_answer, profile_point, store_location, store_option)
from tlsbench.core.errors import UserError
from tlsbench.core.files import STDOUT, folder_path, make_folder, write_output
from tlsbench.report import WINNERS_MODES

FIGURE_FORMATS = ("svg", "pdf", "png")  # `report --figures DIR --figure-format`: vectors for papers first


@click.command()
@click.argument("experiment")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="HTML file (default: report.html next to the store; "
                                                                    "`-`: standard output).")
@click.option("--compare-with", "other", help="A second experiment: adds the B/A comparison section.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False),
              help="Also write every figure of the report as a file of its own here (for papers), in --figure-format.")
@click.option("--figure-format", "figure_format", type=click.Choice(FIGURE_FORMATS), default=FIGURE_FORMATS[0],
              show_default=True, help="The --figures files: vector SVG or PDF, or PNG.")
@click.option("--format", "old_figure_format", type=click.Choice(FIGURE_FORMATS), hidden=True,
              help="Deprecated: --figure-format (--format names a data format in export, compare, predict, energy).")
@click.option("--budget", metavar="ram_kb=N,flash_kb=N,ms=N",
              help="The part's budget (any of the three; KiB, ms): the first screen's recommendations keep what fits, "
                   "and a device's footprint table says per configuration and peer whether it fits (the library's "
                   "static RAM + heap peak + stack; the library's flash).")
@click.option("--role", type=click.Choice(("client", "server")), default="client", show_default=True,
              help="The device's peer the first screen's recommendations weigh (client: the handshake initiator).")
@click.option("--pdf", "pdf_dir", type=click.Path(file_okay=False), help="Also write every figure as PDF, SVG and PNG here.")
@click.option("--winners", type=click.Choice(WINNERS_MODES), default=WINNERS_MODES[0], show_default=True,
              help="Winners over all configurations, per library, or both (per library: plans with several libraries).")
@click.option("--profile", help="Add energy estimates for a board (spec/boards.toml) or a power profile: a built-in "
                                "(`tlsbench energy profiles`), NAME-<F>mhz, or a TOML file (default: the plan's [device] "
                                "board on a device run). Measured energy (`tlsbench energy import`) is shown anyway.")
@device_scale_option
@click.option("--predict", "predict_links", multiple=True, metavar="LINK",
              help="Add predictions over a link (repeatable): a preset (`tlsbench predict --list-links`), with "
                   "overrides (nb-iot,loss=5) or parameters (rate=250k,delay=5); energy with --profile.")
@click.option("--predict-sweep", type=click.Choice(("rate", "rtt", "loss")), default="rate", show_default=True,
              help="The crossover plot's x axis, swept around the first --predict link.")
@flagged_option
@output_option
@store_option
def report(experiment: str, out: str | None, other: str | None, figures_dir: str | None, figure_format: str,
           old_figure_format: str | None, budget: str | None, role: str, pdf_dir: str | None, winners: str,
           profile: str | None, device_scale: float | None, predict_links: tuple[str, ...], predict_sweep: str,
           include_flagged: bool, output: str | None) -> None:
    """Write the self-contained offline HTML report of an experiment, and print its first
    screen (the recommendations per key-exchange class) as `tlsbench run` does."""
    from tlsbench.analysis.models.predict.links import parse_link
    from tlsbench.analysis.questions.device import apply_budget
    from tlsbench.analysis.questions.recommend import parse_budget
    from tlsbench.report import figures
    from tlsbench.report.energy import energy_figures
    from tlsbench.report.html import write_html
    from tlsbench.report.predict import prediction_figures
    from tlsbench.report.terminal import working

    if old_figure_format:
        note_line("report --format is deprecated: it is --figure-format now (--format names a data format in "
                  "export, compare, predict and energy)")
        figure_format = old_figure_format
    part_budget = parse_budget(budget)
    for text in predict_links:
        parse_link(text)  # a wrong link fails before the experiment is analysed
    point = profile_point(profile, device_scale)
    folders = ((figures_dir, (figure_format,), "--figures DIR"), (pdf_dir, ("pdf", "svg", "png"), "--pdf DIR"))
    for folder, _, option in folders:
        if folder:
            folder_path(folder, option)  # `-` refused before the work
    with working(f"analysing {experiment}") as status:
        analysis = analyze_experiment(experiment, output, include_flagged)
        other_analysis = analyze_experiment(other, output, include_flagged) if other else None
        if part_budget and analysis.results.device is not None:
            apply_budget(analysis.results.device, part_budget)  # the footprint table's fit, per configuration
        status.update("predicting" if predict_links else "drawing the figures and writing the report")
        predictions = predictions_for(analysis, predict_links, predict_sweep, point)
        status.update("drawing the figures and writing the report")
        target = write_html(analysis, Path(out) if out else store_location(experiment, output).folder / "report.html",
                            other_analysis, winners, point, predictions=predictions, budget=part_budget, role=role)
    to_stdout = out == STDOUT  # standard output holds the report itself: the rest goes to standard error
    print_answer(analysis, part_budget, role, point, Console(stderr=to_stdout))
    click.echo(f"report: {target}", err=to_stdout)
    for folder, formats, option in folders:
        if folder:
            d = Path(folder)
            make_folder(d, option)
            from tlsbench.report.primitives import figures as primitives_figures
            from tlsbench.report.network import network_section

            extra = primitives_figures(analysis.results.primitives) if analysis.results.primitives else []
            extra += prediction_figures(predictions) if predictions else []
            extra += network_section(analysis)["figures"] if analysis.results.configs else []
            for f in figures.all_figures(analysis, analysis.results.context.seed) + energy_figures(analysis, point) + extra:
                for fmt in formats:
                    write_output(d / f"{f.name}.{fmt}", figures.render(f.figure, fmt), option)
                figures.plt.close(f.figure)
            click.echo(f"figures: {d} ({', '.join(formats)})")


@click.command()
@click.argument("experiment")
@click.option("--rebuild", is_flag=True, help="Derive every repetition again (else only those without summaries "
                                              "of this version).")
@output_option
@store_option
def derive(experiment: str, rebuild: bool, output: str | None) -> None:
    """Store each repetition's summaries (measures, trace facts) and each configuration's
    statistics, so reports read them instead of decoding every record and drawing every
    bootstrap again; the raw records stay as they are."""
    from tlsbench.app.derive import derive as derive_experiment

    where = store_location(experiment, output)
    done = derive_experiment(where, rebuild)
    click.echo(f"derived: {done.repetitions} repetition(s) in {done.batches} batch(es), the statistics of "
               f"{done.configurations} configuration(s): {where}")


@click.command()
@click.argument("experiment")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "markdown", "perfetto", "parquet"]), default="csv",
              show_default=True, help="The data format (markdown: a short summary to paste; perfetto: a trace).")
@click.option("--level", type=click.Choice(["statistics", "repetition", "slice"]), default=None,
              help="Tidy data: one row per repetition, or per slice (step, crypto operation, record, experiment "
                   "group), as csv or parquet (docs/export.md). Default: statistics (parquet: repetition).")
@click.option("--rep", "reps", type=int, multiple=True,
              help="Repetition id(s) for perfetto (default: a representative repetition of the winner).")
@click.option("--profile", help="csv, json: add energy estimates for a board or power profile (`tlsbench energy profiles`; "
              "default: the plan's [device] board on a device run).")
@device_scale_option
@click.option("--out", "out", type=click.Path(dir_okay=False), help="File to write (default and `-`: standard output).")
@flagged_option
@output_option
@store_option
def export(experiment: str, fmt: str, level: str | None, reps: tuple[int, ...], profile: str | None,
           device_scale: float | None, out: str | None, include_flagged: bool, output: str | None) -> None:
    """Export statistics (csv, json, markdown), traces (perfetto trace-event JSON), or tidy
    per-repetition / per-slice tables (csv, parquet)."""
    level = level or ("repetition" if fmt == "parquet" else "statistics")
    if level != "statistics":
        return export_tidy(experiment, fmt, level, out, output)
    if fmt == "parquet":
        raise click.UsageError("parquet holds tidy tables: --level repetition or --level slice")
    from tlsbench.export import exporter

    analysis = analyze_experiment(experiment, output, include_flagged)
    text = exporter(fmt, profile_point(profile, device_scale)).export(analysis, list(reps) or None)
    write_output(out or STDOUT, text)
    if out and out != STDOUT:
        click.echo(f"{fmt}: {out}", err=True)


GATE_EXIT = {"passed": 0, "worse": 1, "cannot tell": 2}  # docs/ci.md; every error of `compare` exits 2 too


def parse_threshold(text: str) -> float:
    """`1%`, `0.5%` or `1` (always percent) as a fraction."""
    from tlsbench.analysis.questions.compare import CompareError

    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise CompareError(f"--fail-above {text!r} is not a percentage: write e.g. 1% or 0.5%") from None
    if not 0 <= value < 1000:
        raise CompareError(f"--fail-above {text!r}: give a percentage from 0% to 1000%")
    return value / 100


def export_tidy(experiment: str, fmt: str, level: str, out: str | None, output: str | None) -> None:
    """Every repetition (or slice) as a row, streamed a chunk of repetitions at a time;
    exclusions are columns here (`excluded`, `status`, flags), not filters."""
    from tlsbench.export import tidy

    if fmt not in tidy.TIDY_FORMATS:
        raise click.UsageError(f"--level {level} is written as {' or '.join(tidy.TIDY_FORMATS)}, not {fmt}")
    if fmt == "parquet" and not out:
        raise click.UsageError("parquet is a binary file: give --out FILE (or --out - for standard output)")
    with store_location(experiment, output).reader() as store:
        rows = tidy.write(store, out or STDOUT, level, fmt)
    if out and out != STDOUT:
        click.echo(f"{fmt}: {out} ({rows} rows, one per {level})", err=True)


@click.command()
@click.argument("a")
@click.argument("b", required=False)
@click.option("--config", "configs", type=int, nargs=2, metavar="A_ID B_ID",
              help="Compare configuration A_ID of A with B_ID of B (without B: two configurations of A).")
@click.option("--noise-floor", type=float, default=0.01, show_default=True, help="Ratios within ±this of 1 are 'no difference'.")
@click.option("--all", "show_all", is_flag=True, help="Show every row, not only the significant ones and the totals.")
@click.option("--fail-above", "fail_above", metavar="PCT",
              help="Regression gate: exit 1 when a row of B is worse than A's by more than PCT (e.g. 1%) with "
                   "confidence (a count: its ratio; a time: its whole 95% CI, beyond the run-to-run shift between two "
                   "experiments), printing those rows; 2 when it cannot tell (a configuration not compared, the whole "
                   "run moved beyond PCT, nothing to compare); 0 otherwise (docs/ci.md).")
@click.option("--allow-missing", is_flag=True,
              help="With --fail-above: judge the configurations both sides measured; those not compared are still "
                   "listed, but no longer make the verdict 'cannot tell'.")
@click.option("--metric", "measures", multiple=True, metavar="MEASURE",
              help="Only this measure (repeat for several): handshake_processing, step, crypto, handshake_time, the "
                   "record measures; instructions; heap_peak, heap_allocated, heap_kept, stack_peak (docs/metrics.md). "
                   "Default: every measure of the experiments' counter; with --fail-above, handshake_processing.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="json, csv: every row (as --all) with the ratio, its CI and the verdict, at full precision.")
@flagged_option
@output_option
@store_option
def compare(a: str, b: str | None, configs: tuple[int, int] | None, noise_floor: float, show_all: bool,
            fail_above: str | None, allow_missing: bool, measures: tuple[str, ...], fmt: str, include_flagged: bool,
            output: str | None) -> None:
    """Ratio B/A per configuration and step, with bootstrap CIs and a verdict; with
    --fail-above, a regression gate for CI. An error exits 2 (1 means worse)."""
    from tlsbench.analysis.questions.compare import (COMPARED, GATED, CompareError, compare_experiments, judge, kinds_of)

    try:
        if not b and not configs:
            raise CompareError("give two experiments (A B), or one experiment and --config A_ID B_ID")
        if allow_missing and fail_above is None:
            raise CompareError("--allow-missing goes with --fail-above PCT: it changes the gate's verdict")
        threshold = parse_threshold(fail_above) if fail_above is not None else None
        metrics = measures or (GATED if threshold is not None else COMPARED)
        kinds_of(metrics)  # a wrong --metric fails before any store is read
        ds_a = load_experiment(a, output)
        ds_b = load_experiment(b, output) if b else ds_a
        cmp_, sides = compare_experiments(ds_a, ds_b, metrics, include_flagged, noise_floor, configs)
    except UserError as exc:
        fail(str(exc) + (f" (regression gate: cannot tell, exit {GATE_EXIT['cannot tell']})" if fail_above else ""),
             GATE_EXIT["cannot tell"])
    if threshold is not None:
        _gate(cmp_, judge(cmp_, threshold, allow_missing), threshold, fail_above, a, b or a)
    elif fmt != "table":
        from tlsbench.export.compare import comparison_csv, comparison_json

        write = comparison_json if fmt == "json" else comparison_csv
        click.echo(write(cmp_, [s for s, _ in sides], [s for _, s in sides]), nl=False)
    else:
        _compare_table(cmp_, sides, noise_floor, show_all)


def _gate(cmp_, verdict, threshold: float, pct: str, a: str, b: str) -> None:  # (Comparison, Verdict, ...)
    """The verdict first, then what decides it (the worse and slower rows, what was not
    compared), then the two experiments and their run-to-run shift; exits with the gate's code."""
    from tlsbench.analysis.questions.compare import MIN_SHIFT_ROWS, one_sided_text, row_limit
    from tlsbench.report.terminal import count_or_time

    n = len(cmp_.rows)
    beyond = " beyond the run-to-run shift" if cmp_.shifts else ""
    why = {
        "worse": f"{len(verdict.worse)} of {n} rows of B worse than A by more than {pct} with confidence{beyond}",
        "passed": f"none of the {n} rows of B worse than A by more than {pct} with confidence{beyond}",
        "cannot tell": "; ".join(
            ([] if n else ["nothing compared: no configuration measured by both"])
            + ([f"{len(verdict.slower)} of {n} rows of B slower than A by more than {pct}{beyond}, not decided (a "
                "time of two runs can move that far by itself; an interval that reaches below the limit is not sure; "
                "docs/ci.md): gate counts (--metric instructions), or measure both builds in one plan, in more "
                "rounds, and gate its two configurations with --config"]
               if verdict.slower else [])
            + ([f"{len(verdict.not_judged)} not compared (below); --allow-missing judges the rest"]
               if verdict.not_judged and not verdict.allowed and n else [])
            + [f"the whole run moved beyond {pct}: {s.text()}: a machine of another speed and a change of the whole "
               "build look alike between two runs; measure both builds in one plan (interleaved rounds) and gate "
               "its two configurations with --config, or gate on counts (--metric instructions)"
               for s in verdict.shifted]),
    }[verdict.outcome]
    click.echo(f"verdict: {verdict.outcome} (exit {GATE_EXIT[verdict.outcome]}): {why}")
    for word, r in [("WORSE", r) for r in verdict.worse] + [("SLOWER", r) for r in verdict.slower]:
        shift = cmp_.shifts.get(r.metric)
        if r.counted or r.exact:
            how = "exact" if r.exact else "a count: the ratio decides"
        else:
            limit = row_limit(r, shift, threshold)
            where = "above" if r.ratio.ci[0] > limit else "reaching below"
            how = f"95% CI [{r.ratio.ci[0]:.4f}, {r.ratio.ci[1]:.4f}] {where} ×{limit:.4f}" + (
                f": {pct} beyond the run's shift (its unchanged configurations up to ×{shift.band:.4f})" if shift else "")
        click.echo(f"{word}  {r.config}  {r.peer}  {r.metric}  {r.label or '-'}  "
                   f"{count_or_time(r.median_a, r.unit)} -> {count_or_time(r.median_b, r.unit)}  "
                   f"{100 * (r.ratio.ratio - 1):+.2f}%  ({how})")
    if verdict.not_judged:
        allowed = ", allowed by --allow-missing" if verdict.allowed else ""
        click.echo(f"not compared ({len(verdict.not_judged)}{allowed}):")
        for line in verdict.not_judged:
            click.echo(f"  {line}")
    shifts = "; ".join(s.text() for s in cmp_.shifts.values())
    click.echo(f"A: {a}; B: {b}" + (f"; run-to-run shift: {shifts}" if shifts else ""))
    for metric in verdict.unshifted:
        click.echo(f"note: {metric}: fewer than {MIN_SHIFT_ROWS} rows, too few to estimate the run-to-run shift "
                   "between the two experiments: each judged on its own interval", err=True)
    if cmp_.one_sided:
        click.echo(f"note: {one_sided_text(cmp_.one_sided)}", err=True)
    sys.exit(GATE_EXIT[verdict.outcome])


def _compare_table(cmp_, sides, noise_floor: float, show_all: bool) -> None:  # (Comparison, [(Side, Side)], ...)
    from rich.console import Console

    from tlsbench.analysis.questions.device import identity
    from tlsbench.report.terminal import compare_table, show

    show(Console(), compare_table(cmp_, noise_floor, show_all))
    for side_a, side_b in sides:
        if side_a.ds is not side_b.ds and side_a.ds.kind == "device":  # two device runs: are the counts identical?
            same = identity(side_a.ds, side_b.ds)
            click.echo(f"identical counts: {same.values:,} values of {same.repetitions} repetitions compared, "
                       f"{same.differing} differ" + (f"; {same.only_one} repetitions stored by one run only"
                                                     if same.only_one else ""))
            for example in same.examples:
                click.echo(f"  {example}")
    for line in cmp_.not_compared:
        click.echo(f"not compared: {line}", err=True)
    for warning in cmp_.warnings:
        click.echo(f"warning: {warning}", err=True)


@click.command(name="matrix")
@click.argument("experiments", nargs=-1, required=True)
@click.option("--out", "out", type=click.Path(dir_okay=False), help="Markdown file (default and `-`: standard output).")
def matrix(experiments: tuple[str, ...], out: str | None) -> None:
    """Device experiments side by side: one column per core x library build, one row per
    handshake configuration; each peer's count and its rank in the row, heap peak, stack."""
    from tlsbench.app.matrix import device_matrix, markdown

    text = markdown(device_matrix(experiments)) + "\n"
    if out and out != STDOUT:
        write_output(Path(out), text.encode(), "--out")
    else:
        click.echo(text, nl=False)
