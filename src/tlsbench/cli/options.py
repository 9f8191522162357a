# SPDX-License-Identifier: Apache-2.0
"""Options and look-ups the commands share: where agents and experiments are, how long to
wait, and an experiment analysed for reading."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Sequence

import click
from rich.console import Console
from rich.text import Text

from tlsbench.run.agents import AGENT_DIR_ENV
from tlsbench.run.timeouts import TIMEOUT_ENV, Timeouts, parse_timeouts
from tlsbench.store.locator import SQLITE, in_store

if TYPE_CHECKING:
    from tlsbench.store.api import Location

EXPERIMENT_HELP = "An experiment folder or name, a tlsbench.db file, sqlite:PATH, or postgresql://...#NAME."
STORE_ENV = "TLSBENCH_STORE"
_STORE = "tlsbench.store"  # where the --store of the command being run is kept (click's context)
err_console = Console(stderr=True)

agent_dir_option = click.option("--agent-dir", type=click.Path(file_okay=False), envvar=AGENT_DIR_ENV,
                                help=f"Directory of the agent binaries (default: ${AGENT_DIR_ENV}, "
                                     "next to the Python interpreter, PATH).")
# Names of files, never of the folder -o/--output is: `report X -o rep.html` once wrote report.html
# elsewhere and exited 0.
FILE_SUFFIXES = (".html", ".htm", ".csv", ".json", ".md", ".parquet", ".txt", ".db", ".toml", ".svg", ".pdf", ".png")


def _a_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value and Path(value).suffix.lower() in FILE_SUFFIXES:
        raise click.BadParameter(f"{value!r} names a file, but -o/--output is the parent folder of experiment "
                                 "folders: a report or export file is written with --out FILE")
    return value


output_option = click.option("--output", "-o", type=click.Path(file_okay=False), callback=_a_folder,
                             help="Parent folder of experiment folders (default: the plan's `output`); "
                                  "not a file: that is --out.")
flagged_option = click.option("--include-flagged", is_flag=True,
                              help="Keep failed and flagged repetitions in the statistics (excluded by default).")


def _parse_timeouts(ctx: click.Context, param: click.Parameter, items: Sequence[str]) -> Timeouts:
    try:
        return parse_timeouts(items)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


timeout_option = click.option(
    "--timeout", "timeouts", multiple=True, metavar="NAME=SECONDS", envvar=TIMEOUT_ENV,
    callback=_parse_timeouts,
    help=f"How long to wait for an agent (repeat for several): greeting (HELLO and SUITES, default "
         f"{Timeouts().greeting:g}), ready (a network server's READY, {Timeouts().ready:g}), silence "
         f"(no frame during a batch, {Timeouts().silence:g}); default ${TIMEOUT_ENV}, space-separated.")


def _remember_store(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    ctx.meta[_STORE] = value
    return value


store_option = click.option(
    "--store", metavar="URL", envvar=STORE_ENV, expose_value=False, callback=_remember_store,
    help=f"A shared PostgreSQL store (postgresql://user@host/database; default ${STORE_ENV}): the experiment is "
         "the one of that name there (docs/fleet.md).")


def shared_store() -> str | None:
    """The --store of the command being run (None: experiments are SQLite folders)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_STORE) if ctx else None


def default_output() -> str:
    """The default plan's output folder: where experiments named without a path are."""
    from tlsbench.plan.model import load as load_plan  # pydantic: only when a plan is read

    return load_plan().plan.output


def store_location(experiment: str, output: str | None) -> "Location":
    """The store an EXPERIMENT argument names: with --store, the experiment of that name in the
    shared store; a store file or `sqlite:PATH` as it is, else an experiment folder, or a name
    under the output folder (the default plan's without --output)."""
    as_it_is = not shared_store() and (Path(experiment).is_file() or experiment.startswith(SQLITE))
    return in_store(experiment, shared_store(), None if as_it_is else output or default_output())


def note_line(message: str) -> None:
    """A line for the user beside the command's output (stderr, as written)."""
    err_console.print(message, highlight=False, markup=False, soft_wrap=True)


def load_experiment(experiment: str, output: str | None):  # -> Dataset
    """An experiment loaded (one visit to its store); numpy and scipy load here."""
    from tlsbench.app.report import load_experiment as load

    return load(store_location(experiment, output), experiment, note_line)


device_scale_option = click.option(
    "--device-scale", type=click.FloatRange(min=0, min_open=True), help="A host run with a device's profile: device ns "
    "per host ns, given explicitly (e.g. the same handshake timed on the device and on the host); without it a "
    "host run is never converted to a device's time.")


def profile_point(profile: str | None, device_scale: float | None):  # -> OperatingPoint | None
    """`--profile` (a board, a built-in, a file) with `--device-scale` applied, resolved before any work."""
    from tlsbench.analysis.models.energy.profiles import resolve, scaled

    if profile is None:
        if device_scale is not None:
            raise click.UsageError("--device-scale scales a device profile's time: give --profile too")
        return None
    op = resolve(profile)
    return scaled(op, device_scale) if device_scale is not None else op


def analyze_experiment(experiment: str, output: str | None, include_flagged: bool):  # -> Analysis
    """An experiment loaded and analysed."""
    from tlsbench.app.report import analyze_experiment as analyze

    return analyze(store_location(experiment, output), experiment, include_flagged, note_line)


def print_answer(analysis, budget=None, role: str = "client", profile=None,  # (Analysis, Budget, ...)
                 console: Console | None = None) -> None:
    """The first screen in the terminal, as the report's: the recommendations per key-exchange
    class for `role` within `budget`, in the plan's board's ms and mJ (or `profile`'s), said
    where they were measured. `tlsbench run` prints it before the report's path, `report`
    after writing the report."""
    from tlsbench.analysis.questions.device import Budget
    from tlsbench.analysis.questions.place import place_of
    from tlsbench.report.energy import html_section
    from tlsbench.report.html import answer
    from tlsbench.report.terminal import answer_table, show

    res = analysis.results
    if not res.configs:
        return
    rec = answer(analysis, budget or Budget(), role, energy=html_section(analysis, profile))
    place = place_of(analysis.ds, res.context.libraries, res.device, rec.device_time.label if rec.device_time else "")
    show(console or Console(), answer_table(rec, place))


def say_error(message: str) -> None:
    """One error line on stderr; the message is plain text, never rich markup (a `[kMG]` or a
    `[network]` in it is printed as written)."""
    err_console.print(Text.assemble(("error: ", "red"), message), highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1) -> NoReturn:
    say_error(message)
    sys.exit(code)


pin_option = click.option(
    "--pin/--no-pin", default=True, show_default=True,
    help="Run the agents on CPUs of their own, at a higher priority where permitted, and the controller "
         "on another (needs two CPUs; docs/host.md \"A quiet controller\").")



def remote_options(command: Any) -> Any:
    """--remote HOST:PORT and --keys DIR: the host agents run on another machine, behind its
    `tlsbench remote serve` (docs/fleet.md "Remote agents"); `remote_bridge` checks them."""
    command = click.option("--keys", default="", type=click.Path(file_okay=False), metavar="DIR",
                           help="The fleet's key folder, for --remote.")(command)
    return click.option("--remote", default="", metavar="HOST:PORT",
                        help="Run the host agents on the machine whose `tlsbench remote serve` listens there "
                             "(with --keys).")(command)


def remote_bridge(remote: str, keys: str) -> tuple[str, ...]:
    """The bridge prefix of --remote (RunSettings.remote), its address and keys checked; () without it."""
    if not remote:
        return ()
    from pathlib import Path

    from tlsbench.run.remote import FleetKeys, bridge_prefix, parse_address

    parse_address(remote)
    FleetKeys(Path(keys)).need("ca.pem", "controller.pem", "controller.key")
    return bridge_prefix(remote, Path(keys))
