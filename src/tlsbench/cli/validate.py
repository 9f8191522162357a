# SPDX-License-Identifier: Apache-2.0
"""`tlsbench validate cycles [--table FILE] [--json] [--write-model]`: the cycle model against
published silicon figures (docs/cycles.md); a few calls into app/validate.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.group(name="validate")
def validate() -> None:
    """Check a model against published figures."""


@validate.command(name="cycles")
@click.option("--table", type=click.Path(dir_okay=False, path_type=Path),
              help="A TOML table of published figures ([[row]] id, board, library, experiment, group, cycles|ms, "
                   "source); default: the shipped one (spec/cycles/published.toml).")
@click.option("--json", "as_json", is_flag=True, help="Per row: id, predicted_cycles, published_cycles, error; "
              "skipped rows with their reason; the summary.")
@click.option("--write-model", is_flag=True, help="Calibrate each core on its ONE calibration row, measure each "
              "board's cycles per instruction and the band, and write spec/cycles/model.toml (the shipped table only).")
def cycles_command(table: Path | None, as_json: bool, write_model: bool) -> None:
    """Predicted vs published cycles of the same code, per row, with the median and worst |error|."""
    from tlsbench.app import validate as app

    if write_model and table is not None:
        raise click.UsageError("--write-model calibrates on the shipped table only (drop --table)")
    rows = app.read_table(table or app.PUBLISHED)
    if write_model:
        result, text = app.fit(rows)
        from tlsbench.core.files import write_output

        write_output(app.MODEL, text + "\n")
        click.echo(f"model written: {app.MODEL.name}", err=True)
    else:
        result = app.validate(rows)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    from rich.console import Console

    from tlsbench.report.terminal import validation_table

    console = Console(width=None if sys.stdout.isatty() else 220)
    for item in validation_table(result):  # one line each
        console.print(item)
