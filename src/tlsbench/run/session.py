# SPDX-License-Identifier: Apache-2.0
"""Setting a run up: one agent per library greets (HELLO, SUITES), and the device's firmware
for a plan with [device], and the plan is resolved against them, before anything is
written; then, with a sink, the experiment record and the exchanges the controller runs
batches on (the greeted agents are handed over to them)."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tlsbench import __version__
from tlsbench.plan.configs import Configuration, Resolution
from tlsbench.plan.model import LoadedPlan
from tlsbench.plan.resolve import DeviceOffer, resolve
from tlsbench.run.agents import AgentProcess, find_agent, greet
from tlsbench.run.controller import STALE_AGENT_REASON, Controller, Observer, QuietObserver
from tlsbench.run.device import DEVICE, Connection, DeviceExchange, DeviceSetup, connect, first_variant
from tlsbench.run.exchange import Exchange, Sink, StopFlag
from tlsbench.run import metrics
from tlsbench.run.local import LocalAgentExchange
from tlsbench.run.pair import AgentPairExchange
from tlsbench.run.placement import Placement
from tlsbench.run.precision import MeasurePrecision
from tlsbench.schema import Experiment
from tlsbench.run.tracefs import Recorder
from tlsbench.run.timeouts import Timeouts

NETWORK = "(network)"  # the route of two-process configurations; a library's name routes the others


def route(config: Configuration) -> str:
    """Which exchange runs a configuration: the device's for a device configuration, the
    agent pair for a network variant, else its library's own agent."""
    return DEVICE if config.row.target else NETWORK if config.variant else metrics.route_of(config) or config.row.library


@dataclass
class Greeted:
    """The agents that answered, one per library (and the device's firmware), and what the
    plan means against them."""

    agents: dict[str, AgentProcess]
    resolution: Resolution
    device: Connection | None = None  # the device's counting image, booted

    def close(self) -> None:
        """Quits the agents not handed over to an exchange."""
        for agent in self.agents.values():
            agent.quit()
            agent.close()
        self.agents.clear()
        if self.device is not None:
            self.device.quit()
            self.device.close()
            self.device = None


def device_offer(link: Connection, loaded: LoadedPlan) -> DeviceOffer:
    """What a booted firmware offers a plan: its library, its device, its suites, and the
    images to run them on (the plan's for an emulated board; what a board has flashed)."""
    device, plan = link.hello["device"], loaded.plan.device
    images = plan.images if plan and plan.target else (str(device["image"]["variant"]),)
    return DeviceOffer(str(link.hello.get("library", "?")), str(device["target"]), link.suites, images)


def resolve_plan(loaded: LoadedPlan, paths: Mapping[str, Path], timeouts: Timeouts = Timeouts(),
                 device: DeviceSetup | None = None, placement: Placement = Placement()) -> Greeted:
    """Starts one agent per library (where `placement` puts agents; and boots the device's
    firmware) and resolves the plan against their SUITES and HELLO: what can fail because of
    the plan fails here, before anything is stored (a matrix without a cell that applies too)."""
    greeted = Greeted(greet(paths, timeouts, placement), Resolution())
    try:
        greeted.device = connect(device, first_variant(device), timeouts) if device else None
        agents = greeted.agents
        greeted.resolution = resolve(loaded, {lib: a.suites for lib, a in agents.items()},
                                     {lib: a.hello for lib, a in agents.items()},
                                     device_offer(greeted.device, loaded) if greeted.device else None)
        greeted.resolution.refuse_if_empty()
        return greeted
    except BaseException:
        greeted.close()
        raise


def host_facts() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        pass
    return {"host": socket.gethostname(), "system": platform.system(), "kernel": platform.release(),
            "machine": platform.machine(), "cpu": cpu, "cpus": os.cpu_count(),
            "python": platform.python_version(), "tlsbench": __version__}


def experiment_record(loaded: LoadedPlan) -> Experiment:
    plan_json = loaded.plan.resolved_json()
    return Experiment(loaded.plan.name, loaded.text, plan_json, hashlib.sha256(plan_json.encode()).hexdigest(),
                      loaded.plan.seed, json.dumps(host_facts()))


def _retire(agent: AgentProcess, library: str, sink: Sink) -> None:
    agent_id = sink.add_agent(library, agent.path.name, agent.pid, agent.hello_raw, agent.suites_raw,
                              placement_json=agent.placement_json)
    code = agent.quit()
    sink.end_agent(agent_id, f"quit (exit code {code}): suites listed")
    agent.close()


def open_run(loaded: LoadedPlan, greeted: Greeted, sink: Sink, paths: Mapping[str, Path], place: str,
             observer: Observer, stop: StopFlag, timeouts: Timeouts = Timeouts(),
             agent_dir: str | Path | None = None, done: Mapping[str, set[int]] | None = None,
             measure_precision: MeasurePrecision | None = None, device: DeviceSetup | None = None,
             placement: Placement = Placement(), sched: Recorder | None = None,
             counting: metrics.Prefix = metrics.no_counting) -> Controller:
    """The experiment record, the agent rows an earlier host left open closed, the exchanges
    (each greeted agent goes to its library's, or quits when every configuration runs on
    agent pairs; the booted firmware to the device's), and the controller over them. `place`
    names the experiment (its folder): one set of network namespaces per place; `placement`:
    where agents run (the caller keeps its own thread on the controller's CPUs:
    run/placement.py); `sched`: the scheduler's view of the batches (run/tracefs.py)."""
    sink.init_experiment(experiment_record(loaded))
    closed = sink.close_stale_agents(STALE_AGENT_REASON)  # before this run's rows exist
    if closed:
        observer.note(f"closed {closed} agent record(s) an earlier host left open")
    exchanges: dict[str, Exchange] = {}
    for library, path in paths.items():
        agent = greeted.agents.pop(library, None)
        if agent and loaded.plan.network:  # every handshake runs on agent pairs: the listing agent is done
            _retire(agent, library, sink)
            agent = None
        exchanges[library] = LocalAgentExchange(library, path, sink, timeouts, stop, agent, placement)
    twins = metrics.start(greeted.resolution, paths, loaded.plan.seed, timeouts, placement, counting)
    for warning in twins.warnings:
        observer.note(f"warning: {warning}")
    for twin_route, (agent, prefix) in twins.agents.items():
        library = twin_route.split("|")[0]
        exchanges[twin_route] = LocalAgentExchange(library, paths[library], sink, timeouts, stop, agent, placement, prefix,
                                              timeouts.greeting * metrics.GREETING_FACTOR)
    if device is not None:
        link, greeted.device = greeted.device, None
        library = str(link.hello.get("library", "?")) if link else loaded.plan.libraries[0]
        exchanges[DEVICE] = DeviceExchange(device, library, sink, timeouts, stop, link)
    if loaded.plan.network:
        exchanges[NETWORK] = AgentPairExchange(loaded.plan.network, loaded.plan.seed,
                                               lambda library: paths.get(library) or find_agent(library, agent_dir),
                                               sink, timeouts, stop, place, agent_dir, placement)
    return Controller(loaded, greeted.resolution, sink, exchanges, route, observer, stop, done, measure_precision,
                      lookahead=placement.pinned, sched=sched)


def start(loaded: LoadedPlan, sink: Sink, paths: Path | Mapping[str, Path], observer: Observer | None = None,
          stop: StopFlag | None = None, timeouts: Timeouts = Timeouts(), place: str = "",
          agent_dir: str | Path | None = None, device: DeviceSetup | None = None,
          placement: Placement = Placement()) -> Controller:
    """Greets, resolves and opens in one go, for a sink that is already open (tests, tools);
    one path is the agent of a single-library plan."""
    paths = dict(paths) if isinstance(paths, Mapping) else {loaded.plan.libraries[0]: paths}
    stop = stop or StopFlag()
    return open_run(loaded, resolve_plan(loaded, paths, timeouts, device, placement), sink, paths,
                    place or loaded.plan.name, observer or QuietObserver(), stop, timeouts, agent_dir,
                    device=device, placement=placement)
