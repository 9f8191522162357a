# SPDX-License-Identifier: Apache-2.0
"""Commands that run agents or read a run: suites, experiments, plan show, run, primitives,
status, trace show. Each parses its options, calls the application (app/run.py: the whole
pipeline from a plan to a filled store) and hands what it returns to the terminal views
(report/terminal.py)."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Iterable

import click
import tomli_w
from rich.console import Console

from tlsbench.analysis.questions.coverage import Coverage, read_coverage, reasons_text
from tlsbench.app.device import query_device
from tlsbench.app.report import report_after_run
from tlsbench.app.run import BUILDABLE, LiveReport, run_experiment, run_location
from tlsbench.builder.libraries import RECIPES
from tlsbench.cli.options import (agent_dir_option, fail, note_line, output_option, pin_option, print_answer,
                                  remote_bridge, remote_options, shared_store, store_location, store_option,
                                  timeout_option)
from tlsbench.core.errors import UserError
from tlsbench.plan.device import BOARDS, TARGETS, DevicePlan
from tlsbench.plan.experiments import PrimitivesOverrides, primitives_plan
from tlsbench.plan.model import LIBRARIES, LoadedPlan
from tlsbench.plan.model import load as load_plan
from tlsbench.plan.quick import DEVICE_REPETITIONS, HOST_REPETITIONS, QuickRun
from tlsbench.report import terminal as views
from tlsbench.run.agents import query_suites
from tlsbench.run.controller import RunSummary
from tlsbench.run.timeouts import Timeouts
from tlsbench.store import progress
from tlsbench.store.api import Location
from tlsbench.store.locator import locate
from tlsbench.store.progress import read_repetition

console = Console()
LIBRARY_HELP = (f"A library: {', '.join(LIBRARIES)} (Debian 12's builds), name@version ({', '.join(RECIPES)}), "
                "or a custom build's agent name (tlsbench-agent-NAME).")


@click.command()
@click.option("--library", default=LIBRARIES[0], show_default=True, help=LIBRARY_HELP)
@click.option("--device", metavar="TARGET|PORT",
              help=f"A device's firmware instead of a host agent: an emulated board ({', '.join(TARGETS)}; its "
                   "image is built if it is not yet) or a board's serial port (/dev/ttyACM0, with --firmware).")
@click.option("--baud", type=click.IntRange(min=50), default=115200, show_default=True,
              help="The board's UART rate (--device PORT).")
@click.option("--firmware", type=click.Path(dir_okay=False), help="The firmware image (flashed on the board).")
@click.option("--json", "as_json", is_flag=True, help="Print the agent (HELLO) and its SUITES frame as JSON.")
@agent_dir_option
@timeout_option
def suites(library: str, device: str | None, baud: int, firmware: str | None, as_json: bool, agent_dir: str | None,
           timeouts: Timeouts) -> None:
    """List the cipher suites an agent's build supports (from its SUITES frame)."""
    if device:
        hello, suite_list = query_device(_device_option(device, baud, firmware),
                                         lambda message: console.print(message, style="dim"), timeouts)
    else:
        hello, suite_list = query_suites(library, agent_dir, timeouts, BUILDABLE)
    if as_json:
        click.echo(json.dumps({"agent": views.agent_facts(hello), "suites": suite_list}, indent=2))
    else:
        views.show(console, views.suites_table(hello, suite_list))


def _device_option(device: str, baud: int, firmware: str | None) -> DevicePlan:
    """`--device` as a plan's [device]: an emulated board's name, else a serial port."""
    if device in TARGETS:
        return DevicePlan(target=device, firmware=firmware)
    if not device.startswith("/"):
        raise click.BadParameter(f"{device!r} is neither an emulated board ({', '.join(TARGETS)}) nor a serial "
                                 "device path (/dev/ttyACM0)", param_hint="--device")
    if not firmware:
        raise click.BadParameter("a board needs --firmware: the image flashed on it", param_hint="--device")
    return DevicePlan(serial=device, baud=baud, firmware=firmware)


@click.command(short_help="Start here: run --suite NAME, run device, or run PLAN.")
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True, help="Continue a stopped experiment (refused if there is none).")
@click.option("--report/--no-report", default=True, show_default=True,
              help="Write report.html next to the store when the sweep is complete.")
@click.option("--live-report", "live_minutes", type=click.FloatRange(min=0, min_open=True), metavar="MINUTES",
              help="While the run goes on, write report.html next to the store every MINUTES from the rounds so "
                   "far (marked partial); the final report replaces it.")
@click.option("--enqueue", is_flag=True,
              help="With --store: put the plan's schedule in the shared store for `tlsbench worker`s to run, "
                   "instead of running it here (docs/fleet.md).")
@click.option("--suite", "suites", multiple=True, metavar="NAME",
              help="Without a PLAN: measure these suites (names, fnmatch patterns or IANA ids; repeat for several) "
                   "with the options below, and print the answer first.")
@click.option("--library", "quick_library", metavar="NAME", help="With --suite: the library (default mbedtls; with "
                                                                 "--device, its library build). " + LIBRARY_HELP)
@click.option("--device", "quick_device", type=click.Choice(TARGETS),
              help="With --suite: on this emulated device (its firmware is built if it is not yet), with its "
                   "footprint; counts, not times.")
@click.option("--board", type=click.Choice(BOARDS), help="With --device: the part whose clock and cycle model turn "
                                                         "counts into ms and mJ (spec/boards.toml).")
@click.option("--repetitions", type=click.IntRange(min=1),
              help=f"With --suite: repetitions per configuration (default {HOST_REPETITIONS} on the host, "
                   f"{DEVICE_REPETITIONS} on a device, whose counts are exact).")
@click.option("--group", "groups", multiple=True, metavar="GROUP", help="With --suite: key-exchange groups (repeat).")
@output_option
@store_option
@agent_dir_option
@timeout_option
@pin_option
@remote_options
def run(plan_file: str | None, resume: bool, report: bool, live_minutes: float | None, enqueue: bool,
        suites: tuple[str, ...], quick_library: str | None, quick_device: str | None, board: str | None,
        repetitions: int | None, groups: tuple[str, ...], output: str | None, agent_dir: str | None,
        timeouts: Timeouts, pin: bool, remote: str, keys: str) -> None:
    """Run a plan (default: the embedded default plan) into <output>/<name>/tlsbench.db, or with
    --store into a shared PostgreSQL store; or, without a plan, the suites given with --suite
    (`tlsbench run --suite TLS-PSK-WITH-AES-128-CCM-8`)."""
    quick = _quick(plan_file, suites, quick_library, quick_device, board, repetitions, groups)
    bridge = remote_bridge(remote, keys)
    if bridge and enqueue:
        raise click.UsageError("--remote runs here on another machine's agents; a queued plan is run by workers "
                               "(`tlsbench worker --remote`)")
    loaded = quick.plan() if quick else load_plan(plan_file)
    if loaded.note:
        note_line(loaded.note)
    where = run_location(loaded, output, shared_store())
    if enqueue:
        return _enqueue(loaded, where, agent_dir, timeouts)
    with views.ProgressObserver(console) as progress_bar:
        live = LiveReport(progress_bar, where, live_minutes) if live_minutes else None
        try:
            summary = run_experiment(loaded, output, resume, agent_dir, live or progress_bar, timeouts, pin,
                                     shared_store(), bridge)
        finally:
            if live is not None:
                live.close()
    again = quick.arguments() if quick else [plan_file] if plan_file else []
    coverage = _closing_lines(summary, _resume_command(again, summary.folder.parent), where)
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    _fail_if_no_data(coverage, "the run")
    if report:
        console.print(f"report: {report_after_run(where, note_line, print_answer)}", highlight=False,
                      markup=False)


def _enqueue(loaded: LoadedPlan, where: Location, agent_dir: str | None, timeouts: Timeouts) -> None:
    from tlsbench.app.worker import enqueue

    if not shared_store():
        raise click.UsageError("--enqueue needs --store postgresql://...: workers share a PostgreSQL store")
    queued = enqueue(loaded, where, agent_dir, timeouts, note_line)
    console.print(f"queued {queued.batches} new batches; {queued.repetitions} repetitions of {loaded.plan.name} are "
                  f"still to run in {where}: start `tlsbench worker --store URL` on the hosts that run them",
                  highlight=False, markup=False)


def _quick(plan_file: str | None, suites: tuple[str, ...], library: str | None, device: str | None,
           board: str | None, repetitions: int | None, groups: tuple[str, ...]) -> QuickRun | None:
    """The plan-less run the options ask for; None when they ask for none (a PLAN, or the default)."""
    given = [name for name, v in (("--library", library), ("--device", device), ("--board", board),
                                  ("--repetitions", repetitions), ("--group", groups)) if v]
    if not suites:
        if given:
            raise click.UsageError(f"{', '.join(given)}: only with --suite (a plan sets them in its file)")
        return None
    if plan_file:
        raise click.UsageError("give a PLAN or --suite, not both (a plan lists its suites itself)")
    if board and not device:
        raise click.UsageError("--board: only with --device (a board converts a device's counts)")
    return QuickRun(suites, library, device, repetitions, groups, board)


@click.command()
@click.option("--library", "libraries", multiple=True, metavar="NAME",
              help="An agent name (repeat for several; default: the plan's mbedtls, openssl, wolfssl).")
@click.option("--repetitions", "--reps", "reps", type=click.IntRange(min=1),
              help="Exactly this many repetitions per configuration (default: the plan's 60, "
                   "extended up to 300 where a median is not yet known to ±1%).")
@click.option("--experiment", "names", multiple=True, metavar="NAME",
              help="Only these experiments (names or fnmatch patterns; repeat for several).")
@click.option("--size", "sizes", multiple=True, type=click.IntRange(min=1), metavar="BYTES",
              help="Payload sizes instead of each experiment's own (repeat for several).")
@output_option
@agent_dir_option
@timeout_option
@pin_option
def primitives(libraries: tuple[str, ...], reps: int | None, names: tuple[str, ...], sizes: tuple[int, ...],
               output: str | None, agent_dir: str | None, timeouts: Timeouts, pin: bool) -> None:
    """Benchmark every crypto primitive of the libraries side by side (the embedded plan
    primitives.toml: hashes, MACs, ciphers over payload sizes, signatures, key agreement),
    then write the report and print a short table. Running it again resumes."""
    from tlsbench.analysis.questions.primitives import analyze_store
    from tlsbench.report.primitives import summary_table

    loaded = primitives_plan(PrimitivesOverrides(libraries, reps, names, sizes))
    with views.ProgressObserver(console) as observer:
        summary = run_experiment(loaded, output, False, agent_dir, observer, timeouts, pin)
    again = ["tlsbench", "primitives", *(f"--library={lib}" for lib in libraries),
             *([f"--reps={reps}"] if reps else []), *(f"--experiment={n}" for n in names),
             *(f"--size={s}" for s in sizes), "--output", str(summary.folder.parent)]
    coverage = _closing_lines(summary, shlex.join(again), locate(summary.folder))
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    _fail_if_no_data(coverage, "tlsbench primitives")
    report = report_after_run(locate(summary.folder), note_line)
    with locate(summary.folder).reader() as store:
        results = analyze_store(store, store)
    if results:
        views.show(console, summary_table(results))
    console.print(f"report: {report}", highlight=False, markup=False)


@click.command(name="experiments")
@click.option("--library", default=LIBRARIES[0], show_default=True,
              help=LIBRARY_HELP + " E.g. a user agent such as example.")
@click.option("--json", "as_json", is_flag=True, help="Print the HELLO's experiments as JSON.")
@agent_dir_option
@timeout_option
def experiments_command(library: str, as_json: bool, agent_dir: str | None, timeouts: Timeouts) -> None:
    """List the experiments an agent offers (primitives, then user experiments), for a plan's [experiments]."""
    hello, _ = query_suites(library, agent_dir, timeouts, BUILDABLE)
    if as_json:
        click.echo(json.dumps({"agent": views.agent_facts(hello), "experiments": hello.get("experiments", [])},
                              indent=2))
    else:
        views.show(console, views.experiments_table(hello))


def _fail_if_given_up(summary: RunSummary) -> None:
    """A run that had to give configurations up (their agent kept dying) failed there: exit
    status 1, after the summary that names them; what was stored stays."""
    if summary.lost_lanes:
        lost = "; ".join(summary.lost_lanes.values())
        fail(f"no data from {', '.join(summary.lost_lanes)} for {len(summary.given_up)} configuration(s) given up "
             f"({lost}; the other targets' results are stored); fix it, then run the same command to retry them")
    if summary.given_up:
        fail(f"{len(summary.given_up)} configuration(s) given up because the agent kept dying (reasons above and "
             f"in `tlsbench status {summary.folder} --all`); fix the agent, then run the same command to retry them")


def _closing_lines(summary: RunSummary, resume_command: str, where: Location) -> Coverage:
    """Prints what the run stored, what it did not measure and why; returns the store's coverage."""
    with where.reader() as store:
        coverage = read_coverage(store, store)
    views.print_summary(console, summary, resume_command, coverage)
    return coverage


def _fail_if_no_data(coverage: Coverage, what: str) -> None:
    """Planned work that left no usable repetition at all failed: exit status 1, after the
    closing lines that name each configuration and why."""
    if coverage.used:
        return
    held = (f"all {coverage.stored} stored repetitions were excluded ({reasons_text(coverage.excluded)})"
            if coverage.stored else "nothing was stored")
    fail(f"{what} produced no data: {held}; the lines above name each configuration and why")


def _resume_command(arguments: list[str], output: Path) -> str:
    return shlex.join(["tlsbench", "run", *arguments, "--resume", "--output", str(output)])


@click.command(name="status")
@click.argument("experiment", required=False)
@output_option
@store_option
@click.option("--all", "all_configs", is_flag=True, help="List every configuration, not only those with problems.")
def status_command(experiment: str | None, output: str | None, all_configs: bool) -> None:
    """Progress of an experiment: configurations, repetitions stored/planned, failures, rounds;
    with --store and no experiment, the fleet: per worker and device what runs, rates, ETA."""
    if experiment is None and shared_store():
        from tlsbench.cli.fleet import fleet_tables

        for table in fleet_tables(shared_store()):
            console.print(table)
        return
    default = load_plan().plan
    where = store_location(experiment or default.name, output or default.output)
    with where.reader() as store:
        status, coverage = progress.status_of(store, where.folder), read_coverage(store, store)
    for table in views.status_tables(status, all_configs, coverage):
        views.show(console, table)


@click.group()
def trace() -> None:
    """Look at stored traces."""


@trace.command(name="show")
@click.argument("experiment")
@click.option("--config", "config", help="Configuration key, or a suite name / fnmatch pattern.")
@click.option("--rep", "rep", type=click.IntRange(min=0), default=0, show_default=True, help="Repetition index.")
@output_option
@store_option
def trace_show(experiment: str, config: str | None, rep: int, output: str | None) -> None:
    """One repetition as a tree: steps with their crypto operations and I/O, both peers."""
    from tlsbench.analysis.derive.slices import format_blob  # numpy is only loaded when needed
    from tlsbench.analysis.units import Unit

    with store_location(experiment, output).reader() as store:
        stored = read_repetition(store, config, rep)
    row = stored.row
    console.print(f"{stored.config_key}  repetition {rep}  status {row['status']}"
                  + (f"  error {row['error_text']}" if row["error_text"] else ""), highlight=False, markup=False)
    unit = Unit(stored.counter_unit)
    click.echo(format_blob(stored.records, int(row["id"]), unit.label(1e3)) if stored.records else "(no trace records)")


@click.group(name="plan")
def plan_group() -> None:
    """Inspect plans."""


@plan_group.command(name="show")
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["toml", "json"]), default="toml", show_default=True)
@click.option("--resolve/--no-resolve", default=True, show_default=True,
              help="Start the plan's agents (and boot its device) to list the configurations it means, and "
                   "estimate its duration.")
@agent_dir_option
@timeout_option
def plan_show(plan_file: str | None, fmt: str, resolve: bool, agent_dir: str | None, timeouts: Timeouts) -> None:
    """The fully resolved plan, every default filled in; then (as TOML comments, or on
    standard error with --format json) the suites it selects, its number of configurations
    and an estimate of its duration."""
    loaded = load_plan(plan_file)
    if loaded.note:
        note_line(loaded.note)
    resolved = loaded.plan.resolved()
    lines = _resolution_lines(loaded, agent_dir, timeouts) if resolve else []
    if fmt == "toml":
        click.echo("".join(f"# {line}\n" for line in lines) + tomli_w.dumps(resolved))
    else:
        click.echo(json.dumps(resolved, indent=2))
        for line in lines:
            note_line(line)


def _resolution_lines(loaded, agent_dir: str | None, timeouts: Timeouts) -> list[str]:  # (LoadedPlan)
    """What the plan means against its agents, in a few lines (or why it could not be told)."""
    from tlsbench.app.plan import resolve_offline
    from tlsbench.report.html import matrix_text

    try:
        with views.working("resolving the plan against its agents"):
            found = resolve_offline(loaded, agent_dir, timeouts)
    except UserError as exc:
        return [f"not resolved: {exc}"]
    configs = found.resolution.configs
    rows = [c.row for c in configs]
    suites = sorted({r.suite_name for r in rows})
    out = [f"{loaded.source}: {len(configs)} configuration{'s' if len(configs) != 1 else ''} ({matrix_text(rows)})",
           f"estimated duration: {found.estimate.text()} (an order of magnitude from the test machine: "
           "docs/plan-format.md)" if found.estimate else
           "estimated duration: not estimated (the emulated links' delays, not the processing, set it)",
           f"suites ({len(suites)}): {', '.join(suites)}"]
    for why, cells in _by_why((s.cell, s.reason) for s in found.resolution.skipped).items():
        out.append(f"not measured ({why}): {', '.join(cells)}")
    for why, keys in _by_why(found.resolution.not_run.items()).items():
        out.append(f"stored, not run ({why}): {len(keys)} configuration{'s' if len(keys) != 1 else ''} ({keys[0]}"
                   + (", ...)" if len(keys) > 1 else ")"))
    return out


def _by_why(named: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """(name, reason) pairs grouped by reason."""
    out: dict[str, list[str]] = {}
    for name, reason in named:
        out.setdefault(reason, []).append(name)
    return out


