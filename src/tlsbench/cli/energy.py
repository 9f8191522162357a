# SPDX-License-Identifier: Apache-2.0
"""`tlsbench energy`: power profiles, estimates, and measured energy from current captures.

    energy profiles                                  the built-in power profiles
    energy estimate EXPERIMENT --profile P           estimated energies (table, csv, json)
    energy import CAPTURE --experiment EXPERIMENT    align a capture to the trace, store its energies
    energy show EXPERIMENT                           the stored capture and measured energies

Each command is a few calls into the module that does the work (numpy loads only when needed)."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import click

from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.units import CURRENT_UNITS, FORMATS, TIME_UNITS, VOLTAGE_UNITS
from tlsbench.cli.options import (EXPERIMENT_HELP, analyze_experiment, device_scale_option, flagged_option,
                                  output_option, profile_point, store_location)

TABLE_FORMATS = ("table", "csv", "json")


class FiniteFloat(click.ParamType):
    """A finite number (above 0 when `positive`): a capture is scaled or shifted by these
    options, and a NaN or an infinity would poison every energy."""

    name = "number"

    def __init__(self, positive: bool = False):
        self.positive = positive

    def convert(self, value, param, ctx) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number) or (self.positive and number <= 0):
            self.fail(f"{value!r} is not a {'positive ' if self.positive else ''}finite number", param, ctx)
        return number


FINITE, FINITE_POSITIVE = FiniteFloat(), FiniteFloat(positive=True)
CSV_COLUMNS = ("config_id", "config", "peer", "kind", "label", "source", "unit", "n", "excluded_reps", "median",
               "median_ci_lo", "median_ci_hi", "median_ci_pct", "mean", "mean_ci_lo", "mean_ci_hi", "sd", "q1", "q3",
               "iqr", "min", "p95", "max")

format_option = click.option("--format", "fmt", type=click.Choice(TABLE_FORMATS), default="table", show_default=True,
                             help="A table for reading; csv and json (every row, steps included) for machines.")
steps_option = click.option("--steps", is_flag=True, help="Also list every step (csv and json always do).")


@click.group(name="energy")
def energy() -> None:
    """Energy per step and handshake: estimated from a power profile, or measured from a current capture."""


@energy.command(name="profiles")
@click.option("--json", "as_json", is_flag=True, help="Every operating point with its figures in W, as JSON.")
def profiles_command(as_json: bool) -> None:
    """The built-in power profiles and their operating points (names for --profile)."""
    from rich.console import Console

    from tlsbench.analysis.models.energy.profiles import board_point, builtins, operating_point
    from tlsbench.core.boards import boards
    from tlsbench.report.terminal import profiles_table, show

    points = [board_point(b) for b in boards().values()] + [operating_point(p, f) for p in builtins()
                                                             for f in p.frequencies]
    if as_json:
        click.echo(json.dumps([{"name": op.name, "description": op.profile.description, "cpu_w": op.cpu_w,
                                "tx_w": op.tx_w, "rx_w": op.rx_w, "idle_w": op.idle_w, "time_scale": op.time_scale,
                                "time_scale_measured": op.scale_measured, "radio": op.has_radio,
                                "sources": [s.model_dump() for s in op.profile.sources]} for op in points], indent=2))
        return
    show(Console(), profiles_table(points))


@energy.command(name="estimate")
@click.argument("experiment")
@click.option("--profile", help="A board (spec/boards.toml), a built-in (`tlsbench energy profiles`), NAME-<F>mhz, "
              "or a TOML file (default: the plan's [device] board on a device run).")
@device_scale_option
@format_option
@steps_option
@flagged_option
@output_option
def estimate_command(experiment: str, profile: str | None, device_scale: float | None, fmt: str, steps: bool,
                     include_flagged: bool, output: str | None) -> None:
    """Estimated energy per handshake, record and step: the profile's power × the measured times."""
    from tlsbench.analysis.models.energy.results import collect

    op = profile_point(profile, device_scale)  # a wrong profile fails before the experiment is analysed
    analysis = analyze_experiment(experiment, output, include_flagged)
    res = collect(analysis, op, measured=False)
    if res is None:
        raise EnergyError(f"{analysis.ds.name}: give --profile (a board, e.g. nrf52840): its plan names no board")
    _print(analysis, res, fmt, steps)


@energy.command(name="show")
@click.argument("experiment")
@format_option
@steps_option
@flagged_option
@output_option
def show_command(experiment: str, fmt: str, steps: bool, include_flagged: bool, output: str | None) -> None:
    """The stored capture (alignment, baseline) and the measured energies."""
    from tlsbench.analysis.models.energy.results import collect

    analysis = analyze_experiment(experiment, output, include_flagged)
    res = collect(analysis)
    if res is None:
        raise EnergyError(f"{analysis.ds.name} holds no capture: `tlsbench energy import CAPTURE --experiment {experiment}`")
    if fmt == "table":
        click.echo(_capture_lines(res.capture))
    _print(analysis, res, fmt, steps)


@energy.command(name="import")
@click.argument("capture", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--experiment", required=True, help=EXPERIMENT_HELP)
@click.option("--format", "fmt", type=click.Choice(("auto",) + FORMATS), default="auto", show_default=True,
              help="ppk2: Nordic Power Profiler CSV; joulescope: Joulescope UI CSV; generic: named columns.")
@click.option("--marker", help="The digital channel the agent's marker drives (default: D0, in0, marker by format).")
@click.option("--voltage", type=FINITE_POSITIVE, help="Supply voltage in V: needed when the capture has none (PPK2); "
                                            "replaces a voltage column.")
@click.option("--baseline-ma", type=FINITE, help="Idle current in mA (default: the median outside the marked repetitions).")
@click.option("--time-unit", type=click.Choice(tuple(TIME_UNITS)), help="Unit of a time column whose header names none.")
@click.option("--current-unit", type=click.Choice(tuple(CURRENT_UNITS), case_sensitive=False),
              help="Unit of a current column whose header names none.")
@click.option("--voltage-unit", type=click.Choice(tuple(VOLTAGE_UNITS), case_sensitive=False),
              help="Unit of a voltage column whose header names none.")
@click.option("--max-residual-us", type=FINITE_POSITIVE, help="How far a marker edge may sit from the fitted clock map "
                                                    "(default: 50 µs or 5 sample periods).")
@click.option("--replace", is_flag=True, help="Replace the capture already stored for this experiment.")
@output_option
def import_command(capture: Path, experiment: str, fmt: str, marker: str | None, voltage: float | None,
                   baseline_ma: float | None, time_unit: str | None, current_unit: str | None,
                   voltage_unit: str | None, max_residual_us: float | None, replace: bool, output: str | None) -> None:
    """Align a current capture to an experiment by its marker pulses and store each step's energy."""
    from tlsbench.analysis.models.energy import capture as cap
    from tlsbench.analysis.models.energy import measure, stored
    from tlsbench.analysis.derive.load import load
    from tlsbench.store.api import AGAIN

    cap.check_file(capture)
    where = store_location(experiment, output)
    opts = measure.ImportOptions(fmt, marker, voltage, None if baseline_ma is None else baseline_ma * 1e-3,
                                 cap.Units(time_unit, current_unit, voltage_unit),
                                 None if max_residual_us is None else max_residual_us * 1e-6)
    with where.lock.hold(stored.RETRY, AGAIN):  # one writer per store: a run, a derive, or this import
        with where.reader() as reader:
            before = stored.prior(reader, stored.file_sha256(capture), opts, replace)
            if before == stored.UNCHANGED:
                click.echo(f"{capture.name} is already imported into {where.folder.name} with these options: "
                           "nothing to do")
                return
            # Every stored repetition has its marker pulse: handshakes and experiments alike.
            m = measure.measure(load(reader, reader, experiments=None), cap.read(capture, fmt, opts.units, marker),
                                opts)
        with where.writer(create=False, retry=stored.RETRY) as store:
            stored.save(store, m, opts)
            saved = store.energy_capture()
    verb = "replaced the stored capture with" if before == stored.REPLACE else "imported"
    reps = int((m.windows.label == _repetition_label()).sum())
    click.echo(f"{verb} {capture.name} into {where.folder.name}: {reps} repetitions, {len(m.windows.rep)} step, phase and group "
               "energies stored")
    click.echo(_capture_lines(saved))


def _repetition_label() -> int:
    from tlsbench.analysis.vocab import vocab

    return vocab().role_label("repetition")


def _capture_lines(c) -> str:
    return (f"  capture {c.file_name}: {c.format}, {c.samples} samples at {1 / c.sample_period_s / 1e3:,.1f} kS/s, "
            f"marker {c.marker}\n"
            f"  alignment: {c.edges} marker edges fitted"
            + (f" ({c.edges_skipped} displaced in descheduled repetitions left out)" if c.edges_skipped else "")
            + f", offset {c.offset_s:.6f} s, drift {c.drift_ppm:+.1f} ppm, "
            f"residual RMS {c.residual_rms_s * 1e6:.2f} µs (max {c.residual_max_s * 1e6:.2f} µs)\n"
            f"  idle baseline {c.baseline_a * 1e3:.4g} mA ({c.baseline_source}); voltage {c.voltage_v:.4g} V "
            f"({'per sample' if c.voltage_source == 'column' else 'given'})")


# ---------------------------------------------------------------------- output
def _config_label(analysis, config_id: int) -> str:
    """A handshake configuration's label, or an experiment's: library, experiment, payload."""
    if config_id in analysis.results.config_labels:
        return analysis.results.config_labels[config_id]
    c = next(c for c in analysis.results.primitives.counts if c.config_id == config_id)
    return f"{c.library} {c.experiment}" + (f" {c.size} B" if c.size else "")


def _row_values(analysis, r) -> list:
    s = r.summary
    return [r.config_id, _config_label(analysis, r.config_id), r.peer, r.kind, r.label, r.source, "J", s.n,
            s.excluded, s.median, *s.median_ci, s.median_ci_pct, s.mean, *s.mean_ci, s.sd, s.q1, s.q3, s.iqr, s.min,
            s.p95, s.max]


def _fmt(v) -> str:
    from tlsbench.export.csv import fmt

    return fmt(v)  # full precision, as every export


def _print(analysis, res, fmt: str, steps: bool) -> None:
    rows = sorted(res.rows, key=lambda r: (_config_label(analysis, r.config_id), r.peer, r.kind, r.label, r.source))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        w.writerows([_fmt(v) for v in _row_values(analysis, r)] for r in rows)
        click.echo(buf.getvalue(), nl=False)
        return
    if fmt == "json":
        clean = lambda v: None if isinstance(v, float) and not math.isfinite(v) else v  # noqa: E731
        basis = res.conversion.as_dict() if res.conversion else None
        click.echo(json.dumps({"sources": res.sources, "conversion": basis, "warnings": res.warnings,
                               "rows": [{k: clean(v) for k, v in zip(CSV_COLUMNS, _row_values(analysis, r))} for r in rows]},
                              indent=2))
        return
    from rich.console import Console
    from rich.markup import escape

    from tlsbench.report.terminal import energy_table, show

    console = Console()
    if res.conversion:  # said first: which time the estimates stand on
        console.print(f"time from {escape(res.conversion.text)} ({res.conversion.band_text()})", highlight=False)
    show(console, energy_table(res.sources, rows, lambda config_id: _config_label(analysis, config_id), steps))
    for w in res.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}", highlight=False)
