# SPDX-License-Identifier: Apache-2.0
"""A fleet (docs/fleet.md): `run --enqueue` puts a plan's schedule into a shared PostgreSQL
store; `tlsbench worker` processes, on any host, take its batches one at a time (the store's
queue: store/postgres/queue.py), run each on their own agents or device, and store every
repetition in its own transaction, once (a batch handed out again after its worker died
finds what was stored and runs the rest). A worker takes only batches whose device target is
its own and whose libraries it offers; a thread renews its lease while a batch runs."""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from tlsbench.app.cycles import with_cycles
from tlsbench.app.device import Devices, reached
from tlsbench.app.run import BUILDABLE
from tlsbench.core.version import host_name, tool_version
from tlsbench.plan.libraries import LIBRARIES
from tlsbench.plan.configs import Configuration
from tlsbench.plan.model import LoadedPlan, parse
from tlsbench.run import schedule
from tlsbench.run.agents import AgentError, find_agent, locate_agents
from tlsbench.run.controller import Controller, QuietObserver
from tlsbench.run.exchange import StopFlag
from tlsbench.run.placement import Placement
from tlsbench.run.remote import bridge_prefix
from tlsbench.run.session import Greeted, RunHooks, RunSettings, open_run, resolve_plan
from tlsbench.run.timeouts import Timeouts
from tlsbench.schema import StoredRepetition
from tlsbench.schema.fleet import WorkerRow, WorkRow
from tlsbench.store.api import Location
from tlsbench.store.locator import in_store
from tlsbench.store.postgres.queue import Claimed, Queue
from tlsbench.store.rows import now_iso

LEASE_S = 60.0  # a batch whose worker has not renewed its lease for this long goes to another worker
POLL_S = 2.0  # how often an idle worker started with --wait looks for work


@dataclass(frozen=True)
class Queued:
    batches: int  # added by this call (a second enqueue of the same plan adds none)
    repetitions: int  # of the plan's schedule, not stored yet


def _libraries(loaded: LoadedPlan) -> list[str]:
    return sorted(set(loaded.plan.libraries))


def found_libraries(agent_dir: str | Path | None) -> tuple[str, ...]:
    """The libraries whose agents this host has: what a worker offers unless told (--library)."""
    found = []
    for library in LIBRARIES:
        try:
            find_agent(library, agent_dir)
            found.append(library)
        except AgentError:
            pass
    return tuple(found)


def _settings(loaded: LoadedPlan, agent_dir: str | Path | None, timeouts: Timeouts, note: Callable[[str], None],
              place: str, held: contextlib.ExitStack, remote: tuple[str, ...] = ()) -> RunSettings:
    """How the plan's agents and device are reached; a labgrid place is acquired into `held`."""
    device = loaded.plan.device
    paths = locate_agents(loaded, agent_dir, BUILDABLE) if device is None or device.host else {}
    devices = held.enter_context(reached(device, note, timeouts)) if device else Devices(())
    return RunSettings(paths, place, timeouts, agent_dir, with_cycles(device, devices.setups), Placement(),
                       remote=remote, unfit=devices.unfit)


def work_target(loaded: LoadedPlan, config: Configuration) -> str | None:
    """What a worker must run a batch on: its configuration's device target (a plan over several
    targets queues one stream of batches per target), `place NAME`, or none (host agents). A
    device plan's host configurations go with its first target's stream."""
    device = loaded.plan.device
    if device is None:
        return None
    return config.row.target if config.row.target in device.targets else (device.targets or (device.name,))[0]


def enqueue(loaded: LoadedPlan, where: Location, agent_dir: str | Path | None, timeouts: Timeouts,
            note: Callable[[str], None]) -> Queued:
    """The plan's schedule (what `tlsbench run` would run, minus what is stored) as batches
    of the queue; the plan is resolved against agents here, so a plan that cannot run is
    refused before anything is queued."""
    held = contextlib.ExitStack()
    settings = _settings(loaded, agent_dir, timeouts, note, f"enqueue/{loaded.plan.name}", held)
    greeted = None
    try:
        greeted = resolve_plan(loaded, settings)
        with where.writer() as store:
            controller = open_run(loaded, greeted, store, settings, RunHooks(done=store.stored_indices()))
            try:
                batches = controller.prepare()
            finally:
                controller.close()
            libraries = ",".join(_libraries(loaded)) if not loaded.plan.device or loaded.plan.device.host else ""
            rows = [WorkRow(controller.config_ids[b.config], b.round, b.first_index, b.count, seq,
                            work_target(loaded, controller.configs[b.config]), libraries)
                    for seq, b in enumerate(batches)]
            with Queue(where.url) as queue:  # type: ignore[attr-defined]
                added = queue.enqueue(store.experiment_id, rows)
    finally:
        if greeted is not None:
            greeted.close()
        held.close()
    return Queued(added, sum(r.count for r in rows))


class OnceSink:
    """A store seen through a worker: each repetition in its own transaction, and stored
    only if no worker stored it before (the repetition table's unique key decides)."""

    def __init__(self, store: Any):
        self.store = store
        self.skipped = 0  # repetitions another worker had stored
        self.seconds = 0.0  # spent storing them

    def add_repetitions(self, reps: Sequence[StoredRepetition]) -> None:
        started = time.perf_counter()
        for rep in reps:
            self.skipped += not self.store.add_repetition_once(rep)
        self.seconds += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@dataclass
class Session:
    """An experiment a worker has open: its store, its agents, its controller."""

    store: Any
    sink: OnceSink
    greeted: Greeted
    controller: Controller
    held: contextlib.ExitStack  # a labgrid place, acquired while the session is open

    def close(self) -> None:
        self.controller.close()
        self.greeted.close()
        self.store.close()
        self.held.close()


@dataclass
class WorkerSummary:
    batches: int = 0
    stored: int = 0
    failed: int = 0
    again: int = 0  # repetitions another worker had stored first
    reason: str = ""
    seconds: float = 0.0  # from its start to its end
    database_s: float = 0.0  # of which storing repetitions and taking and finishing batches (host wall clock)


@dataclass
class Worker:
    """One `tlsbench worker` process."""

    url: str
    target: str | None = None  # device target, or `place NAME` (a labgrid place); None: host agents
    libraries: tuple[str, ...] = ()  # offered; empty: every library whose agent is found
    name: str = ""
    device: str = ""  # what its results are measured on; default: the host, TARGET@host, or the remote's address
    remote: str = ""  # HOST:PORT of a remote agent server (run/remote.py): host agents run there
    keys: str = ""  # the fleet's key folder, with `remote`
    agent_dir: str | Path | None = None
    timeouts: Timeouts = Timeouts()
    lease_s: float = LEASE_S
    wait: bool = False  # keep polling when the queue is empty
    note: Callable[[str], None] = lambda message: None
    stop: StopFlag = field(default_factory=StopFlag)
    sessions: dict[str, Session] = field(default_factory=dict)

    def run(self) -> WorkerSummary:
        summary = WorkerSummary()
        started = time.perf_counter()
        libraries = self.libraries or found_libraries(self.agent_dir)
        device = self.device or self.remote or self._device()
        self.name = self.name or f"{host_name()}:{os.getpid()}"
        with Queue(self.url) as queue:
            worker_id = queue.register(WorkerRow(0, self.name, host_name(), os.getpid(), device, self.target,
                                                 ",".join(libraries), tool_version(), now_iso(), 0.0))
            beat = Heartbeat(self.url, worker_id, self.lease_s)
            beat.start()
            try:
                while not self.stop.requested:
                    asked = time.perf_counter()
                    claimed = queue.claim(worker_id, self.target, libraries, self.lease_s)
                    summary.database_s += time.perf_counter() - asked
                    if claimed is None:
                        if not self.wait and not queue.held(self.target, libraries):
                            summary.reason = "no more work"
                            break
                        time.sleep(POLL_S)  # --wait, or another worker's batch: done, or ours when its lease runs out
                        continue
                    beat.claimed = claimed
                    stored, failed, again = self._run(claimed)
                    beat.claimed = None
                    if self.stop.requested:
                        break
                    asked = time.perf_counter()
                    queue.finish(worker_id, claimed, stored, failed)
                    summary.database_s += time.perf_counter() - asked
                    summary.batches, summary.stored = summary.batches + 1, summary.stored + stored
                    summary.failed, summary.again = summary.failed + failed, summary.again + again
                summary.reason = summary.reason or "interrupted"
            except BaseException as exc:
                summary.reason = f"error: {exc}"[:200]
                raise
            finally:
                beat.stop()
                summary.database_s += sum(session.sink.seconds for session in self.sessions.values())
                for session in self.sessions.values():
                    session.close()
                queue.end(worker_id, summary.reason)
                summary.seconds = time.perf_counter() - started
        return summary

    def _device(self) -> str:
        """The host's name; an emulated target's name at this host; a labgrid place's name (one board, wherever
        its worker runs)."""
        if self.target is None:
            return host_name()
        return self.target if self.target.startswith("place ") else f"{self.target}@{host_name()}"

    def _run(self, claimed: Claimed) -> tuple[int, int, int]:
        session = self.sessions.get(claimed.experiment) or self._open(claimed.experiment)
        batch = schedule.Batch(claimed.config_key, claimed.round, claimed.first_idx, claimed.count)
        again = session.sink.skipped
        ran = session.controller.run_handed([batch], session.store.stored_indices())
        return ran.stored, ran.failed, session.sink.skipped - again

    def _open(self, experiment: str) -> Session:
        where = in_store(experiment, self.url)
        store = where.writer(create=False)
        held = contextlib.ExitStack()
        greeted = None
        try:
            stored = store.experiment()
            loaded = parse(stored.plan_toml, f"{experiment}.toml")
            store.worker = self.name
            remote = bridge_prefix(self.remote, Path(self.keys)) if self.remote else ()
            settings = _settings(loaded, self.agent_dir, self.timeouts, self.note, f"{self.name}/{experiment}", held,
                                 remote)
            greeted = resolve_plan(loaded, settings)
            sink = OnceSink(store)
            controller = open_run(loaded, greeted, sink, settings,
                                  RunHooks(QuietObserver(), self.stop, store.stored_indices()))
            controller.prepare()
        except BaseException:
            if greeted is not None:
                greeted.close()
            store.close()
            held.close()
            raise
        self.sessions[experiment] = Session(store, sink, greeted, controller, held)
        return self.sessions[experiment]


class Heartbeat(threading.Thread):
    """Renews the worker's heartbeat and its batch's lease every third of a lease, on a
    connection of its own (the worker's is busy storing)."""

    def __init__(self, url: str, worker_id: int, lease_s: float):
        super().__init__(daemon=True, name="heartbeat")
        self.url, self.worker_id, self.lease_s = url, worker_id, lease_s
        self.claimed: Claimed | None = None
        self.ended = threading.Event()

    def run(self) -> None:
        with Queue(self.url) as queue:
            while not self.ended.wait(self.lease_s / 3):
                queue.heartbeat(self.worker_id, self.claimed, self.lease_s)

    def stop(self) -> None:
        self.ended.set()
        self.join(timeout=5)


def fleet_status(url: str, lease_s: float = LEASE_S):  # -> (list[WorkerState], list[QueueState])
    """What every worker does and how each queued experiment is doing."""
    with Queue(url) as queue:
        return queue.workers(lease_s), queue.experiments()
