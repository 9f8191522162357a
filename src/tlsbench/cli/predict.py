# SPDX-License-Identifier: Apache-2.0
"""`tlsbench predict`: handshake duration, energy and bytes predicted over a link from a
stored experiment (docs/predict.md); a few calls into analysis/predict, report/predict and
export/predict. Every line it prints says "predicted"."""
from __future__ import annotations

import os
from pathlib import Path

import click

from tlsbench.cli.energy import FINITE_POSITIVE
from tlsbench.cli.options import device_scale_option, output_option, profile_point, store_location
from tlsbench.core.files import STDOUT, folder_path, make_folder, write_output

FORMATS = ("table", "csv", "json")
FILE_FORMATS = {".csv": "csv", ".json": "json"}  # --out FILE's format by its suffix, unless --format says
FIGURES = "--figures DIR"


def _range(text: str | None) -> tuple[float | None, float | None]:
    if not text:
        return None, None
    lo, sep, hi = text.partition(":")
    if not sep:
        raise click.BadParameter(f"{text!r}: write FROM:TO (e.g. 1k:10M; suffixes k, M, G)", param_hint="--range")
    from tlsbench.analysis.models.predict import PredictError
    from tlsbench.analysis.models.predict.links import parse_number

    try:
        return (parse_number("--range", lo) if lo else None), (parse_number("--range", hi) if hi else None)
    except PredictError as exc:
        raise click.BadParameter(str(exc), param_hint="--range") from None


def options_from(profile: str | None, device: str | None, nagle: bool | None, mtu: int | None,
                 dtls_min: float | None, dtls_max: float | None, draws: int, seed: int | None,
                 device_scale: float | None, waiting: str, default_seed: int):  # -> Options
    from tlsbench.analysis.models.predict.model import Options

    if dtls_min and dtls_max and dtls_min > dtls_max:  # as a plan's [network.dtls] says it
        raise click.BadParameter(f"{dtls_min:g} ms is above --dtls-timeout-max {dtls_max:g} ms: the timer starts at "
                                 "min and doubles up to max", param_hint="--dtls-timeout-min")
    return Options(device=device, nagle=nagle, iface_mtu=mtu, dtls_min_ms=dtls_min, dtls_max_ms=dtls_max,
                   draws=draws, seed=default_seed if seed is None else seed,
                   profile=profile_point(profile, device_scale) if profile else None,
                   device_scale=None if profile else device_scale, waiting=waiting)


def print_link_presets() -> None:
    """The presets with every figure's source."""
    from rich.console import Console

    from tlsbench.report.terminal import link_presets_table, show

    show(Console(), link_presets_table())


@click.command()
@click.argument("experiment", required=False)
@click.option("--link", "links", multiple=True, metavar="PRESET[,k=v...]|k=v,...",
              help="A link to predict over (repeatable): a preset (--list-links), a preset with overrides "
                   "(ieee802154,loss=5), or parameters (rate=62.5k,delay=300,mtu=1280; d2p-/p2d- for one direction).")
@click.option("--sweep", type=click.Choice(("rate", "rtt", "loss")),
              help="Sweep one parameter of the first link: crossover plots of duration (and energy with --profile).")
@click.option("--range", "sweep_range", metavar="FROM:TO", help="The sweep's range (rate 1k:10M, rtt 0:2000 ms, loss 0:20 %).")
@click.option("--points", type=click.IntRange(3, 200), help="Points of the sweep (default 25 for rate, else 21).")
@click.option("--validate", "check", is_flag=True,
              help="Predicted vs measured for every configuration the store ran over an emulated link "
                   "(needs the same configuration over the `none` preset or loopback).")
@click.option("--profile", help="A board (spec/boards.toml) or power profile for predicted energy (`tlsbench energy "
              "profiles`, NAME-<F>mhz, a TOML file; default: the plan's [device] board on a device run).")
@click.option("--device", type=click.Choice(("client", "server")), help="The peer on the device (default: the stored "
              "configuration's device role; in memory, the client).")
@device_scale_option
@click.option("--waiting", type=click.Choice(("idle", "rx")), default="idle", show_default=True,
              help="What the device draws while it waits: idle, or its radio listening (cellular modems do).")
@click.option("--nagle/--nodelay", default=None, help="TCP: Nagle on or off (default: the configuration's; in memory, on).")
@click.option("--mtu", type=click.IntRange(296, 65535), help="The device's interface MTU (default: the plan's, in memory "
              "1500 lowered to the link's MTU).")
@click.option("--dtls-timeout-min", "dtls_min", type=FINITE_POSITIVE, help="DTLS initial retransmission timer, ms "
              "(default: the plan's, else 1000).")
@click.option("--dtls-timeout-max", "dtls_max", type=FINITE_POSITIVE, help="DTLS maximum timer, ms (default: the plan's, else 60000).")
@click.option("--draws", type=click.IntRange(10, 100000), default=200, show_default=True,
              help="Monte Carlo draws per configuration on a lossy link.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the loss draws (default: the experiment's).")
@click.option("--config", "only", multiple=True, help="Only configurations whose id is this or whose key contains this.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="What is printed (default table), or written to --out FILE (default: by its suffix).")
@click.option("--out", "out", type=click.Path(), metavar="FILE",
              help="Write the predictions (or the validation) to this file as csv or json, by its suffix (.csv, "
                   ".json) or --format (`-`: standard output); the table is still printed.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False),
              help="Also write the figures (SVG) and the sweep's data behind them (sweep_<p>.csv, "
                   "crossovers_<p>.csv) into this folder.")
@click.option("--list-links", "show_links", is_flag=True, help="List the link presets and the sources of their figures.")
@output_option
def predict(experiment: str | None, links: tuple[str, ...], sweep: str | None, sweep_range: str | None,
            points: int | None, check: bool, profile: str | None, device: str | None, device_scale: float | None,
            waiting: str, nagle: bool | None, mtu: int | None, dtls_min: float | None, dtls_max: float | None,
            draws: int, seed: int | None, only: tuple[str, ...], fmt: str | None, out: str | None,
            figures_dir: str | None, show_links: bool, output: str | None) -> None:
    """Predict handshake duration, energy and bytes over a link from a stored experiment (a model, not a measurement)."""
    if show_links:
        print_link_presets()
        return
    if not experiment:
        raise click.UsageError("give an EXPERIMENT (or --list-links)")
    if not links and not check:
        raise click.UsageError("give at least one --link (e.g. --link nb-iot), or --validate")
    from tlsbench.analysis.derive.load import load
    from tlsbench.analysis.models.predict.links import parse_link
    from tlsbench.analysis.models.predict.results import collect, sources_of
    from tlsbench.analysis.derive.samples import config_labels
    from tlsbench.report.terminal import working

    for text in links:
        parse_link(text)  # a wrong link fails before the experiment is read
    file_format = _file_format(out, fmt)
    if figures_dir:
        folder_path(figures_dir, FIGURES)
    lo, hi = _range(sweep_range)
    with store_location(experiment, output).reader() as reader:
        ds = load(reader, reader)
    opts = options_from(profile, device, nagle, mtu, dtls_min, dtls_max, draws, seed, device_scale, waiting,
                        int(ds.experiment.get("seed") or 1))
    with working("predicting"):
        res = collect(sources_of(ds), config_labels(ds.configs), links, opts, sweep, (lo, hi, points),
                      check=True if check else False, only=only)
    if figures_dir:
        _write_figures(res, Path(figures_dir))
    if out:
        write_output(out, _data(res, file_format))
        if out != STDOUT:
            click.echo(f"{file_format}: {out}", err=True)
    if fmt in (None, "table") and out != STDOUT:
        _print(res)
    elif fmt in ("csv", "json") and not out:
        click.echo(_data(res, fmt), nl=False)


def _file_format(out: str | None, fmt: str | None) -> str | None:
    """--out FILE's format: --format's, else its suffix's; one line for a folder (what --out was)."""
    if not out:
        return None
    if out != STDOUT and (Path(out).is_dir() or out.endswith(("/", os.sep))):
        raise click.BadParameter(f"{out!r} is a folder: --out is a file now (csv or json, by its suffix or --format); "
                                 f"the figures and the sweep's CSV files go to {FIGURES}", param_hint="--out")
    found = fmt if fmt in FILE_FORMATS.values() else FILE_FORMATS.get(Path(out).suffix.lower())
    if found is None:
        raise click.BadParameter(f"{out!r}: name a .csv or .json file, or say --format csv|json", param_hint="--out")
    return found


def _data(res, fmt: str) -> str:  # (PredictResults)
    """The predictions (else the validation) as csv or json."""
    from tlsbench.export.predict import checks_csv, predictions_csv, to_json

    if fmt == "json":
        return to_json(res) + "\n"
    return predictions_csv(res) if res.links else checks_csv(res.checks)


def _write_figures(res, folder: Path) -> None:  # (PredictResults)
    from tlsbench.export.predict import crossovers_csv, sweep_csv
    from tlsbench.report import figures
    from tlsbench.report.predict import prediction_figures

    make_folder(folder, FIGURES)
    written = []
    if res.sweep:
        name = res.sweep.parameter.name
        written.append(write_output(folder / f"sweep_{name}.csv", sweep_csv(res.sweep), FIGURES))
        written.append(write_output(folder / f"crossovers_{name}.csv", crossovers_csv(res.sweep), FIGURES))
    for f in prediction_figures(res):
        written.append(write_output(folder / f"{f.name}.svg", figures.render(f.figure, "svg"), FIGURES))
        figures.plt.close(f.figure)
    click.echo(f"figures: {', '.join(p.name for p in written) or 'none (a --sweep or --validate draws them)'} "
               f"in {folder}", err=True)


def _print(res) -> None:
    from rich.console import Console

    from tlsbench.report.terminal import print_predictions

    print_predictions(Console(), res)  # tables that fit (report/terminal.py show)
