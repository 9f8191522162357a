# SPDX-License-Identifier: Apache-2.0
"""The tlsbench command line: a table of contents of the pipeline.

    plan (TOML) -> run (controller, agent, store) -> status / trace -> report / export

Each command is a few calls into the module that does the work. Other commands (report,
export, compare) attach to the same `main` group from their own modules."""
from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
import tempfile
import traceback
from pathlib import Path
from typing import NoReturn, Sequence

import click
import tomli_w
from rich.console import Console
from rich.text import Text

from tlsbench import __version__, agents, controller, experiments, files, plan, status, views
from tlsbench.custom_build import BuildError
from tlsbench.energy import EnergyError
from tlsbench.network.link import LinkUnavailable
from tlsbench.spec import SpecMismatch
from tlsbench.store.sqlite import DB_FILE, StoreError

console = Console()
err_console = Console(stderr=True)
# Errors a user can act on: printed as one clear message, exit status 1, no traceback.
USER_ERRORS = (plan.PlanError, agents.AgentError, StoreError, SpecMismatch, controller.ControllerError,
               LinkUnavailable, EnergyError, files.OutputError, BuildError)
# click's own ways out (usage errors, --help, exit codes): click reports them itself.
CLICK_EXITS = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort)
TRACEBACK_PREFIX = "tlsbench-traceback-"

agent_dir_option = click.option("--agent-dir", type=click.Path(file_okay=False), envvar=agents.AGENT_DIR_ENV,
                                help=f"Directory of the agent binaries (default: ${agents.AGENT_DIR_ENV}, "
                                     "next to the Python interpreter, PATH).")
output_option = click.option("--output", "-o", type=click.Path(file_okay=False),
                             help="Parent folder of experiment folders (default: the plan's `output`).")


def _parse_timeouts(ctx: click.Context, param: click.Parameter, items: Sequence[str]) -> agents.Timeouts:
    try:
        return agents.parse_timeouts(items)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


timeout_option = click.option(
    "--timeout", "timeouts", multiple=True, metavar="NAME=SECONDS", envvar=agents.TIMEOUT_ENV,
    callback=_parse_timeouts,
    help=f"How long to wait for an agent (repeat for several): greeting (HELLO and SUITES, default "
         f"{agents.Timeouts().greeting:g}), ready (a network server's READY, {agents.Timeouts().ready:g}), silence "
         f"(no frame during a batch, {agents.Timeouts().silence:g}); default ${agents.TIMEOUT_ENV}, space-separated.")


def say_error(message: str) -> None:
    """One error line on stderr; the message is plain text, never rich markup (a `[kMG]` or a
    `[network]` in it is printed as written)."""
    err_console.print(Text.assemble(("error: ", "red"), message), highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1) -> NoReturn:
    say_error(message)
    sys.exit(code)


def _traceback_file(exc: BaseException) -> Path | None:
    """Writes the traceback of an unexpected error where it can (the temporary folder, else
    ~/.cache/tlsbench); None when no place takes it (a full disk)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = f"tlsbench {__version__}, {' '.join(sys.argv)}\n\n" + "".join(traceback.format_exception(exc))
    for folder in (Path(tempfile.gettempdir()), Path.home() / ".cache" / "tlsbench"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return files.write_atomic(folder / f"{TRACEBACK_PREFIX}{stamp}-{os.getpid()}.txt", text)
        except (OSError, files.OutputError):
            continue
    return None


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def unexpected(exc: Exception) -> NoReturn:
    """A failure no check foresaw: one line (with the disk's advice when the disk caused it),
    the traceback in a file for the bug report."""
    advice = files.disk_advice(exc)
    where = _traceback_file(exc)
    kept = f"the full traceback is in {where}" if where else "the traceback could not be saved either"
    what = advice or f"unexpected {type(exc).__name__}: {_one_line(str(exc))}"
    fail(f"{what} ({kept}; please report it if the cause is not yours)")


class Group(click.Group):
    """The error boundary of every command (those attached from report/, energy/ and build
    included): user errors become one plain line, unexpected ones one line and a traceback
    file; never a traceback on the terminal."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except CLICK_EXITS:
            raise
        except USER_ERRORS as exc:
            fail(str(exc))
        except BrokenPipeError:  # the reader of our output left (`| head`): stop quietly, as rich does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except KeyboardInterrupt:  # a second Ctrl-C: stored repetitions are safe (one transaction each)
            err_console.print("stopped at once; every stored repetition is intact. "
                              "Run the same command with --resume to continue.", style="yellow", markup=False)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the boundary: nothing else may reach the terminal
            unexpected(exc)


@click.group(cls=Group)
@click.version_option(__version__, prog_name="tlsbench")
def main() -> None:
    """Measure what TLS costs on a constrained device, per handshake step and crypto operation."""


@main.command()
@click.option("--library", default=agents.LIBRARIES[0], show_default=True,
              help=f"An agent name: {', '.join(agents.LIBRARIES)}, or a custom build's (tlsbench-agent-NAME).")
@click.option("--json", "as_json", is_flag=True, help="Print the agent (HELLO) and its SUITES frame as JSON.")
@agent_dir_option
@timeout_option
def suites(library: str, as_json: bool, agent_dir: str | None, timeouts: agents.Timeouts) -> None:
    """List the cipher suites an agent's build supports (from its SUITES frame)."""
    hello, suite_list = agents.query_suites(library, agent_dir, timeouts)
    if as_json:
        click.echo(json.dumps({"agent": views.agent_facts(hello), "suites": suite_list}, indent=2))
    else:
        console.print(views.suites_table(hello, suite_list))


@main.command()
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True, help="Continue a stopped experiment (refused if there is none).")
@click.option("--report/--no-report", default=True, show_default=True,
              help="Write report.html next to the store when the sweep is complete.")
@output_option
@agent_dir_option
@timeout_option
def run(plan_file: str | None, resume: bool, report: bool, output: str | None, agent_dir: str | None,
        timeouts: agents.Timeouts) -> None:
    """Run a plan (default: the embedded default plan) into <output>/<name>/tlsbench.db."""
    from tlsbench.report.commands import report_after_run

    loaded = plan.load(plan_file)
    with views.ProgressObserver(console) as observer:
        summary = controller.run_experiment(loaded, output, resume, agent_dir, observer, timeouts)
    views.print_summary(console, summary, _resume_command(plan_file, summary.folder.parent))
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    if report:
        console.print(f"report: {report_after_run(summary.folder / DB_FILE)}", highlight=False, markup=False)


@main.command()
@click.option("--library", "libraries", multiple=True, metavar="NAME",
              help="An agent name (repeat for several; default: the plan's mbedtls, openssl, wolfssl).")
@click.option("--reps", type=click.IntRange(min=1),
              help="Exactly this many repetitions per configuration (default: the plan's 60, "
                   "extended up to 300 where a median is not yet known to ±1%).")
@click.option("--experiment", "names", multiple=True, metavar="NAME",
              help="Only these experiments (names or fnmatch patterns; repeat for several).")
@click.option("--size", "sizes", multiple=True, type=click.IntRange(min=1), metavar="BYTES",
              help="Payload sizes instead of each experiment's own (repeat for several).")
@output_option
@agent_dir_option
@timeout_option
def primitives(libraries: tuple[str, ...], reps: int | None, names: tuple[str, ...], sizes: tuple[int, ...],
               output: str | None, agent_dir: str | None, timeouts: agents.Timeouts) -> None:
    """Benchmark every crypto primitive of the libraries side by side (the embedded plan
    primitives.toml: hashes, MACs, ciphers over payload sizes, signatures, key agreement),
    then write the report and print a short table. Running it again resumes."""
    from tlsbench.analysis.primitives import analyze_store
    from tlsbench.report.commands import report_after_run
    from tlsbench.report.primitives import summary_table

    loaded = experiments.primitives_plan(experiments.PrimitivesOverrides(libraries, reps, names, sizes))
    with views.ProgressObserver(console) as observer:
        summary = controller.run_experiment(loaded, output, False, agent_dir, observer, timeouts)
    again = ["tlsbench", "primitives", *(f"--library={lib}" for lib in libraries),
             *([f"--reps={reps}"] if reps else []), *(f"--experiment={n}" for n in names),
             *(f"--size={s}" for s in sizes), "--output", str(summary.folder.parent)]
    views.print_summary(console, summary, shlex.join(again))
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    store = summary.folder / DB_FILE
    report = report_after_run(store)
    results = analyze_store(store)
    if results:
        Console(width=None if console.is_terminal else 160).print(summary_table(results))  # no truncation in logs
    console.print(f"report: {report}", highlight=False, markup=False)


@main.command(name="experiments")
@click.option("--library", default=agents.LIBRARIES[0], show_default=True,
              help="An agent name (tlsbench-agent-NAME), e.g. a user agent such as example.")
@click.option("--json", "as_json", is_flag=True, help="Print the HELLO's experiments as JSON.")
@agent_dir_option
@timeout_option
def experiments_command(library: str, as_json: bool, agent_dir: str | None, timeouts: agents.Timeouts) -> None:
    """List the experiments an agent offers (primitives, then user experiments), for a plan's [experiments]."""
    hello, _ = agents.query_suites(library, agent_dir, timeouts)
    if as_json:
        click.echo(json.dumps({"agent": views.agent_facts(hello), "experiments": hello.get("experiments", [])},
                              indent=2))
    else:
        console.print(views.experiments_table(hello))


def _fail_if_given_up(summary: controller.RunSummary) -> None:
    """A run that had to give configurations up (their agent kept dying) failed there: exit
    status 1, after the summary that names them; what was stored stays."""
    if summary.given_up:
        fail(f"{len(summary.given_up)} configuration(s) given up because the agent kept dying (reasons above and "
             f"in `tlsbench status {summary.folder} --all`); fix the agent, then run the same command to retry them")


def _resume_command(plan_file: str | None, output: Path) -> str:
    parts = ["tlsbench", "run"] + ([plan_file] if plan_file else []) + ["--resume", "--output", str(output)]
    return shlex.join(parts)


@main.command(name="status")
@click.argument("experiment", required=False)
@output_option
@click.option("--all", "all_configs", is_flag=True, help="List every configuration, not only those with problems.")
def status_command(experiment: str | None, output: str | None, all_configs: bool) -> None:
    """Progress of an experiment: configurations, repetitions stored/planned, failures, rounds."""
    default = plan.load().plan
    folder = status.find_experiment(experiment or default.name, output or default.output)
    for table in views.status_tables(status.read_status(folder), all_configs):
        console.print(table)


@main.group()
def trace() -> None:
    """Look at stored traces."""


@trace.command(name="show")
@click.argument("experiment")
@click.option("--config", "config", help="Configuration key, or a suite name / fnmatch pattern.")
@click.option("--rep", "rep", type=click.IntRange(min=0), default=0, show_default=True, help="Repetition index.")
@output_option
def trace_show(experiment: str, config: str | None, rep: int, output: str | None) -> None:
    """One repetition as a tree: steps with their crypto operations and I/O, both peers."""
    from tlsbench.analysis.slices import format_blob  # numpy is only loaded when needed

    folder = status.find_experiment(experiment, output or plan.load().plan.output)
    stored = status.read_repetition(folder, config, rep)
    row = stored.row
    console.print(f"{stored.config_key}  repetition {rep}  status {row['status']}"
                  + (f"  error {row['error_text']}" if row["error_text"] else ""), highlight=False, markup=False)
    click.echo(format_blob(stored.records, int(row["id"])) if stored.records else "(no trace records)")


@main.group(name="plan")
def plan_group() -> None:
    """Inspect plans."""


@plan_group.command(name="show")
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["toml", "json"]), default="toml", show_default=True)
def plan_show(plan_file: str | None, fmt: str) -> None:
    """The fully resolved plan, every default filled in."""
    resolved = plan.load(plan_file).plan.resolved()
    click.echo(tomli_w.dumps(resolved) if fmt == "toml" else json.dumps(resolved, indent=2))


@main.group(name="build")
def build_group() -> None:
    """Build agents against your own TLS library configuration."""


@build_group.command(name="mbedtls")
@click.option("--config", "config", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Your mbed TLS 2.28 config header (a complete config, used as MBEDTLS_CONFIG_FILE).")
@click.option("--source", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An mbed TLS 2.28 source tree (default: Debian's source of the installed libmbedtls-dev, "
                   "fetched once; needs root).")
@click.option("--name", help="Build name: agent tlsbench-agent-mbedtls-<name> (default: the config file's stem).")
@click.option("--install-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the agents go (default: next to the Python interpreter, with the other agents).")
def build_mbedtls(config: Path, source: Path | None, name: str | None, install_dir: Path | None) -> None:
    """Static mbed TLS with your config, and an agent linked against it."""
    from tlsbench import custom_build

    request = custom_build.BuildRequest(config=config, name=name or custom_build.default_name(config),
                                        source=source, install_dir=install_dir or custom_build.default_install_dir())
    result = custom_build.build(request)  # a BuildError is one line (the Group's boundary)
    times = ", ".join(f"{stage} {s:.1f} s" for stage, s in result.seconds.items())
    console.print(f"built {result.library} ({times})\n" + "\n".join(f"  {p}" for p in result.agents)
                  + f"\nlist its suites: tlsbench suites --library {result.library}", highlight=False, markup=False)


# Analysis commands live with the analysis (report, export, compare).
from tlsbench.report.commands import COMMANDS as _ANALYSIS_COMMANDS  # noqa: E402

for _command in _ANALYSIS_COMMANDS:
    main.add_command(_command)

# Energy: estimates from power profiles, measurements from current captures (docs/energy.md).
from tlsbench.energy.commands import energy as _energy  # noqa: E402

main.add_command(_energy)

# Current library versions built from Debian 13 sources (docs/libraries.md).
from tlsbench.build.commands import libs as _libs  # noqa: E402

main.add_command(_libs)


if __name__ == "__main__":
    main()
