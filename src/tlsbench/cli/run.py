# SPDX-License-Identifier: Apache-2.0
"""Commands that run agents or read a run: suites, experiments, plan show, run, primitives,
status, trace show; and `run_experiment`, the whole pipeline from a plan to a filled store,
which joins the stages: plan (resolved against the greeted agents), run (the controller),
store (the sink, the resume state) and analysis (the precision measurement)."""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import signal
import time
from pathlib import Path
from typing import Any, Collection, Iterator

import click
import tomli_w
from rich.console import Console

from tlsbench.analysis.questions.coverage import Coverage, read_coverage, reasons_text
from tlsbench.builder.libraries import RECIPES
from tlsbench.cli import views
from tlsbench.cli.options import (agent_dir_option, fail, output_option, pin_option, store_location,
                                  timeout_option)
from tlsbench.cli.report import report_after_run
from tlsbench.plan.experiments import PrimitivesOverrides, primitives_plan
from tlsbench.plan.model import LIBRARIES, LoadedPlan
from tlsbench.plan.model import load as load_plan
from tlsbench.cli.device import setup_for
from tlsbench.plan.device import TARGETS, DevicePlan
from tlsbench.run.agents import die_with_host, locate_agents, query_suites
from tlsbench.run.controller import ControllerError, Observer, QuietObserver, RunSummary
from tlsbench.run.device import query_device
from tlsbench.run.exchange import StopFlag
from tlsbench.run.link import check_links
from tlsbench.run.placement import Placement, choose, controller_on
from tlsbench.run.tracefs import Recorder, missing_warning
from tlsbench.run.precision import Precision
from tlsbench.builder import tbcount
from tlsbench.run import metrics
from tlsbench.run.session import open_run, resolve_plan
from tlsbench.run.timeouts import Timeouts
from tlsbench.store import progress
from tlsbench.store.api import Location, Sink, plan_mismatch
from tlsbench.store.locator import locate
from tlsbench.store.progress import read_repetition
from tlsbench.store.sqlite import DB_FILE

console = Console()
# Library versions the library cache builds (docs/libraries.md): a plan naming one whose agent
# is missing is told how to build it.
BUILDABLE = tuple(RECIPES)
LIBRARY_HELP = (f"A library: {', '.join(LIBRARIES)} (Debian 12's builds), name@version ({', '.join(RECIPES)}), "
                "or a custom build's agent name (tlsbench-agent-NAME).")


def counting_prefix(seed: int) -> list[str]:
    """The tbcount runner's command prefix, built on first use (docs/metrics.md)."""
    try:
        return tbcount.runner().prefix(seed)
    except tbcount.Unavailable as exc:
        raise metrics.Unavailable(str(exc)) from None


def experiment_folder(loaded: LoadedPlan, output: str | Path | None) -> Path:
    return Path(output if output is not None else loaded.plan.output) / loaded.plan.name


def check_before_start(loaded: LoadedPlan, folder: Path, resume: bool, agent_dir: str | Path | None) -> None:
    """What can be refused without an agent, refused before any is started: another writer,
    nothing to resume, another plan's store, a damaged store, a link the emulator rejects."""
    where = locate(folder)
    where.lock.refuse_if_busy()
    stored = where.stored_experiment()  # raises for a damaged or foreign file
    if resume and stored is None:
        why = f"{where} holds no experiment (an empty store: a start that stored nothing)" if where.exists() else \
            f"there is no {where}"
        raise ControllerError(f"nothing to resume in {folder}: {why}; run without --resume to start it")
    if stored is not None and stored.plan_hash != loaded.plan.hash():
        raise plan_mismatch(folder, stored, loaded.plan.hash())
    if loaded.plan.network and loaded.plan.network.links:
        check_links(loaded.plan.network.links, agent_dir, loaded.source)


def _precision_of(where: Location, seed: int):  # -> MeasurePrecision
    def measure(only: Collection[str] | None) -> dict[str, Precision]:
        from tlsbench.analysis.stats import precision  # the analysis (numpy, scipy): loaded when a plan asks for it

        with where.reader() as reader:
            return precision.measure(reader, reader, seed, only)
    return measure


@contextlib.contextmanager
def scheduler_view(loaded: LoadedPlan, store: Sink, placement: Placement,
                   observer: Observer) -> Iterator[Recorder | None]:
    """The scheduler's capture of a plan that asks for it (metrics "sched"), on the agents'
    CPUs; one warning when it cannot be had, and the run goes on."""
    plan = loaded.plan
    if not plan.measures("sched") or plan.device is not None:
        yield None
        return
    cpus = placement.agent_cpus or tuple(sorted(os.sched_getaffinity(0)))
    recorder = Recorder.open(store, cpus, softirq=plan.network is not None)
    if recorder.missing:
        observer.note(missing_warning(recorder.missing))
    try:
        yield recorder
    finally:
        recorder.close()
LIVE_NICE = 5  # below the run, yet a report of a small store still takes seconds with 10 busy processes


class LiveReport:
    """`tlsbench run --live-report MINUTES`: every MINUTES, report.html next to the store is
    written again from what is stored so far, by `tlsbench report` in a process of its own
    (on the controller's CPU, whose affinity it inherits: the agents' CPUs stay quiet; nice
    LIVE_NICE, not 19, which starves it for minutes on a busy machine; the file is replaced
    atomically, so a reader never sees half of it). The report says it is partial. The
    observer's calls pass through; a report under way when the run ends is stopped (the
    final report replaces it)."""

    def __init__(self, inner: Observer, folder: Path, minutes: float):
        self.inner, self.folder, self.every = inner, folder, minutes * 60
        self.last = time.monotonic()
        self.child: subprocess.Popen | None = None
        self.errors = tempfile.TemporaryFile()
        self.written = 0

    def __getattr__(self, name: str) -> Any:  # start, stored, note, extend: the inner observer's
        return getattr(self.inner, name)

    def batch(self, config: str, round: int, first_index: int, count: int) -> None:
        self.inner.batch(config, round, first_index, count)
        if self.child is not None and self.child.poll() is not None:
            self._finished()
        if self.child is None and time.monotonic() - self.last >= self.every and (self.folder / DB_FILE).exists():
            self.last = time.monotonic()
            self.errors.seek(0)
            self.errors.truncate()
            self.child = subprocess.Popen(
                [sys.executable, "-m", "tlsbench.cli", "report", str(self.folder), "--out", str(self.folder / "report.html")],
                stdout=subprocess.DEVNULL, stderr=self.errors,
                preexec_fn=lambda: (die_with_host(), os.nice(LIVE_NICE)))  # a killed run leaves no report running

    def _finished(self) -> None:
        assert self.child is not None
        if self.child.returncode == 0:
            self.written += 1
        else:
            self.errors.seek(0)
            why = self.errors.read().decode(errors="replace").strip().splitlines()
            self.inner.note(f"live report failed ({why[-1] if why else f'exit status {self.child.returncode}'}); "
                            "the run goes on")
        self.child = None

    def close(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()
            self.child.wait()
        self.errors.close()


def run_experiment(loaded: LoadedPlan, output: str | Path | None = None, resume: bool = False,
                   agent_dir: str | Path | None = None, observer: Observer | None = None,
                   timeouts: Timeouts = Timeouts(), pin: bool = True) -> RunSummary:
    """`tlsbench run`: the whole pipeline from a plan to a filled store. Nothing is written to
    the output folder before the plan is resolved against the agents, so a plan that fails
    there leaves nothing behind; the store is then written under its writer lock. The agents
    are started from this thread, whose end they do not outlive (docs/host.md); with `pin`,
    this thread keeps to the controller's CPU and the agents to the others while it runs
    (run/placement.py)."""
    folder = experiment_folder(loaded, output)
    check_before_start(loaded, folder, resume, agent_dir)
    observer = observer or QuietObserver()
    device = loaded.plan.device
    setup = setup_for(device, observer.note) if device else None  # the firmware, built if it is not yet
    paths = locate_agents(loaded, agent_dir, BUILDABLE) if device is None or device.host else {}
    stop = StopFlag()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, stop) if in_main else None
    placement = choose(pin, loaded.plan.cpus)
    greeted = None
    try:
        with controller_on(placement):
            greeted = resolve_plan(loaded, paths, timeouts, setup, placement)
            where = locate(folder)
            with where.lock.hold(), where.writer() as store, scheduler_view(loaded, store, placement,
                                                                             observer) as sched:
                controller = open_run(loaded, greeted, store, paths, str(folder.resolve()), observer,
                                      stop, timeouts, agent_dir, store.stored_indices(),
                                      _precision_of(where, loaded.plan.seed), setup, placement, sched,
                                      counting_prefix)
                summary = controller.run()
                if not summary.interrupted:  # the sweep's summaries and statistics, once (analysis/derive/cache.py)
                    from tlsbench.analysis.derive.cache import derive  # numpy loads here

                    derive(store, store)
        summary.folder = folder
        return summary
    finally:
        if greeted is not None:
            greeted.close()
        if in_main:
            signal.signal(signal.SIGINT, previous)


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
        hello, suite_list = query_device(setup_for(_device_option(device, baud, firmware),
                                                   lambda message: console.print(message, style="dim")), timeouts)
    else:
        hello, suite_list = query_suites(library, agent_dir, timeouts, BUILDABLE)
    if as_json:
        click.echo(json.dumps({"agent": views.agent_facts(hello), "suites": suite_list}, indent=2))
    else:
        console.print(views.suites_table(hello, suite_list))


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


@click.command()
@click.argument("plan_file", metavar="[PLAN]", required=False, type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True, help="Continue a stopped experiment (refused if there is none).")
@click.option("--report/--no-report", default=True, show_default=True,
              help="Write report.html next to the store when the sweep is complete.")
@click.option("--live-report", "live_minutes", type=click.FloatRange(min=0, min_open=True), metavar="MINUTES",
              help="While the run goes on, write report.html next to the store every MINUTES from the rounds so "
                   "far (marked partial); the final report replaces it.")
@output_option
@agent_dir_option
@timeout_option
@pin_option
def run(plan_file: str | None, resume: bool, report: bool, live_minutes: float | None, output: str | None,
        agent_dir: str | None, timeouts: Timeouts, pin: bool) -> None:
    """Run a plan (default: the embedded default plan) into <output>/<name>/tlsbench.db."""
    loaded = load_plan(plan_file)
    with views.ProgressObserver(console) as progress_bar:
        live = LiveReport(progress_bar, experiment_folder(loaded, output), live_minutes) if live_minutes else None
        try:
            summary = run_experiment(loaded, output, resume, agent_dir, live or progress_bar, timeouts, pin)
        finally:
            if live is not None:
                live.close()
    coverage = _closing_lines(summary, _resume_command(plan_file, summary.folder.parent))
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    _fail_if_no_data(coverage, "the run")
    if report:
        console.print(f"report: {report_after_run(summary.folder / DB_FILE)}", highlight=False, markup=False)


@click.command()
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
    coverage = _closing_lines(summary, shlex.join(again))
    if summary.interrupted:
        sys.exit(130)
    _fail_if_given_up(summary)
    _fail_if_no_data(coverage, "tlsbench primitives")
    report = report_after_run(summary.folder / DB_FILE)
    with locate(summary.folder).reader() as store:
        results = analyze_store(store, store)
    if results:
        Console(width=None if console.is_terminal else 160).print(summary_table(results))  # no truncation in logs
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
        console.print(views.experiments_table(hello))


def _fail_if_given_up(summary: RunSummary) -> None:
    """A run that had to give configurations up (their agent kept dying) failed there: exit
    status 1, after the summary that names them; what was stored stays."""
    if summary.given_up:
        fail(f"{len(summary.given_up)} configuration(s) given up because the agent kept dying (reasons above and "
             f"in `tlsbench status {summary.folder} --all`); fix the agent, then run the same command to retry them")


def _closing_lines(summary: RunSummary, resume_command: str) -> Coverage:
    """Prints what the run stored, what it did not measure and why; returns the store's coverage."""
    with locate(summary.folder).reader() as store:
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


def _resume_command(plan_file: str | None, output: Path) -> str:
    parts = ["tlsbench", "run"] + ([plan_file] if plan_file else []) + ["--resume", "--output", str(output)]
    return shlex.join(parts)


@click.command(name="status")
@click.argument("experiment", required=False)
@output_option
@click.option("--all", "all_configs", is_flag=True, help="List every configuration, not only those with problems.")
def status_command(experiment: str | None, output: str | None, all_configs: bool) -> None:
    """Progress of an experiment: configurations, repetitions stored/planned, failures, rounds."""
    default = load_plan().plan
    where = locate(experiment or default.name, output or default.output)
    with where.reader() as store:
        status, coverage = progress.status_of(store, where.folder), read_coverage(store, store)
    for table in views.status_tables(status, all_configs, coverage):
        console.print(table)


@click.group()
def trace() -> None:
    """Look at stored traces."""


@trace.command(name="show")
@click.argument("experiment")
@click.option("--config", "config", help="Configuration key, or a suite name / fnmatch pattern.")
@click.option("--rep", "rep", type=click.IntRange(min=0), default=0, show_default=True, help="Repetition index.")
@output_option
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
def plan_show(plan_file: str | None, fmt: str) -> None:
    """The fully resolved plan, every default filled in."""
    resolved = load_plan(plan_file).plan.resolved()
    click.echo(tomli_w.dumps(resolved) if fmt == "toml" else json.dumps(resolved, indent=2))


