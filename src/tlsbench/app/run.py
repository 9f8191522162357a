# SPDX-License-Identifier: Apache-2.0
"""Running a plan, the whole pipeline from a plan to a filled store, as plain functions: what
`tlsbench run` and `tlsbench primitives` (and a worker) call. It joins the stages: plan
(resolved against the greeted agents), run (the controller), store (the sink, the resume
state) and analysis (the precision measurement, and the derivation when the sweep ends)."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Collection, Iterator

from tlsbench.app.cycles import with_cycles
from tlsbench.app.device import Devices, reached
from tlsbench.app.pace import pacing
from tlsbench.builder import tbcount
from tlsbench.builder.libraries import RECIPES
from tlsbench.core.processes import dying_with_us
from tlsbench.plan.model import LoadedPlan
from tlsbench.run import metrics
from tlsbench.run.agents import locate_agents
from tlsbench.run.controller import ControllerError, Observer, QuietObserver, RunSummary
from tlsbench.run.exchange import STOPPING, StopFlag
from tlsbench.run.link import check_links
from tlsbench.run.placement import Placement, choose, controller_on
from tlsbench.run.precision import Precision
from tlsbench.run.session import NoLaneRuns, RunHooks, RunSettings, experiment_record, open_run, resolve_plan
from tlsbench.run.timeouts import Timeouts
from tlsbench.run.tracefs import Recorder, missing_warning
from tlsbench.store.api import Location, Sink, plan_mismatch
from tlsbench.store.locator import in_store, locate

# Library versions the library cache builds (docs/libraries.md): a plan naming one whose agent
# is missing is told how to build it.
BUILDABLE = tuple(RECIPES)


def counting_prefix(seed: int) -> list[str]:
    """The tbcount runner's command prefix, built on first use (docs/metrics.md)."""
    try:
        return tbcount.runner().prefix(seed)
    except tbcount.Unavailable as exc:
        raise metrics.Unavailable(str(exc)) from None


def experiment_folder(loaded: LoadedPlan, output: str | Path | None) -> Path:
    return Path(output if output is not None else loaded.plan.output) / loaded.plan.name


def run_location(loaded: LoadedPlan, output: str | Path | None, store: str | None = None) -> Location:
    """Where a run of the plan writes: its experiment folder's SQLite store, or with `store` the
    experiment of the plan's name in that shared store (its report in the experiment folder)."""
    folder = experiment_folder(loaded, output)
    return in_store(loaded.plan.name, store, folder.parent) if store else locate(folder)


def check_before_start(loaded: LoadedPlan, where: Location, resume: bool, agent_dir: str | Path | None) -> None:
    """What can be refused without an agent, refused before any is started: another writer,
    nothing to resume, another plan's store, a damaged store, a link the emulator rejects."""
    where.lock.refuse_if_busy()
    stored = where.stored_experiment()  # raises for a damaged or foreign file
    queued = where.queued_batches() if stored is not None else 0
    if queued:
        raise ControllerError(f"{where} is queued for a fleet's workers ({queued} batches to do): `tlsbench worker "
                              "--store URL` finishes it (`tlsbench status --store URL` shows them), or run the plan "
                              "under another name")
    if resume and stored is None:
        why = f"{where} holds no experiment (an empty store: a start that stored nothing)" if where.exists() else \
            f"there is no {where}"
        raise ControllerError(f"nothing to resume in {where}: {why}; run without --resume to start it")
    if stored is not None and stored.plan_hash != loaded.plan.hash():
        raise plan_mismatch(where, stored, loaded.plan.hash())
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

    def __init__(self, inner: Observer, where: Location, minutes: float):
        self.inner, self.where, self.every = inner, where, minutes * 60
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
        if self.child is None and time.monotonic() - self.last >= self.every and self.where.exists():
            self.last = time.monotonic()
            self.errors.seek(0)
            self.errors.truncate()
            die = dying_with_us()
            self.child = subprocess.Popen(
                [sys.executable, "-m", "tlsbench.cli", "report", str(self.where), "--out",
                 str(self.where.folder / "report.html")],
                stdout=subprocess.DEVNULL, stderr=self.errors,
                preexec_fn=lambda: (die(), os.nice(LIVE_NICE)))  # a killed run leaves no report running

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
                   timeouts: Timeouts = Timeouts(), pin: bool = True, store: str | None = None,
                   remote: tuple[str, ...] = ()) -> RunSummary:
    """`tlsbench run`: the whole pipeline from a plan to a filled store. Nothing is written to
    the output folder before the plan is resolved against the agents, so a plan that fails
    there leaves nothing behind; the store is then written under its writer lock. The agents
    are started from this thread, whose end they do not outlive (docs/host.md); with `pin`,
    this thread keeps to the controller's CPU and the agents to the others while it runs
    (run/placement.py). With `store` (a postgresql:// URL) it writes the experiment of the
    plan's name there instead of the folder's SQLite store. With `remote` (run/remote.py's
    bridge) the host agents run on another machine: nothing of theirs runs here to pin."""
    where = run_location(loaded, output, store)
    folder = where.folder
    check_before_start(loaded, where, resume, agent_dir)
    observer = observer or QuietObserver()
    device = loaded.plan.device
    paths = locate_agents(loaded, agent_dir, BUILDABLE) if device is None or device.host else {}
    # SIGTERM (a CI's timeout, a scheduler's stop) ends the run as Ctrl-C does: at once while the
    # device is reached (a firmware build), after the batch under way once the sweep starts.
    stop = StopFlag()
    previous = {sig: signal.getsignal(sig) for sig in STOPPING} if threading.current_thread() is \
        threading.main_thread() else {}
    if previous:
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    device_block = contextlib.ExitStack()  # a labgrid place stays acquired until the run ends, however it ends
    greeted = None
    try:
        # the firmware built if it is not yet, a board's image flashed
        devices = device_block.enter_context(reached(device, observer.note, timeouts)) if device else Devices(())
        settings = RunSettings(paths, str(folder.resolve()), timeouts, agent_dir, with_cycles(device, devices.setups),
                               choose(pin and not remote, loaded.plan.cpus), counting_prefix, remote=remote,
                               unfit=devices.unfit)
        for sig in previous:
            signal.signal(sig, stop)
        with controller_on(settings.placement):
            try:
                greeted = resolve_plan(loaded, settings)
            except NoLaneRuns as nothing:  # stored, so that status and the report say so
                with where.lock.hold(), where.writer() as store:
                    store.init_experiment(experiment_record(loaded))
                    store.set_skipped_cells(nothing.resolution.skipped)
                raise NoLaneRuns(nothing.resolution, str(where)) from None
            settings = dataclasses.replace(settings, pacing=pacing(
                loaded.plan.network.pace if loaded.plan.network else None, greeted.resolution))
            with where.lock.hold(), where.writer() as store, \
                    scheduler_view(loaded, store, settings.placement, observer) as sched:
                hooks = RunHooks(observer, stop, store.stored_indices(), _precision_of(where, loaded.plan.seed), sched)
                summary = open_run(loaded, greeted, store, settings, hooks).run()
                if not summary.interrupted:  # the sweep's summaries and statistics, once (analysis/derive/cache.py)
                    from tlsbench.analysis.derive.cache import derive  # numpy loads here

                    derive(store, store)
        summary.folder = folder
        return summary
    finally:
        if greeted is not None:
            greeted.close()
        device_block.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
