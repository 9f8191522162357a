# SPDX-License-Identifier: Apache-2.0
"""Setting a run up: one agent per library greets (HELLO, SUITES), and each device's firmware
for a plan with [device], and the plan is resolved against them, before anything is
written; then, with a sink, the experiment record and the exchanges the controller runs
batches on, one per route (run/topologies/; one per device of a matrix, run in parallel):
the greeted agents are handed over to them."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from tlsbench import __version__
from tlsbench.core.errors import UserError
from tlsbench.plan.configs import Resolution
from tlsbench.plan.model import LoadedPlan
from tlsbench.plan.resolve import DeviceOffer, resolve
from tlsbench.run import metrics
from tlsbench.run.agents import find_agent, greet
from tlsbench.run.controller import STALE_AGENT_REASON, Controller, Observer, QuietObserver
from tlsbench.run.device import COUNTING, DeviceSetup, connect, first_variant
from tlsbench.run.endpoints import Endpoint
from tlsbench.run.endpoints.process import ProcessEndpoint
from tlsbench.run.exchange import Exchange, Sink, StopFlag
from tlsbench.run.lanes import OwnedSink, OwnerThread
from tlsbench.run.placement import Placement
from tlsbench.run.precision import MeasurePrecision
from tlsbench.schema import Experiment
from tlsbench.run.timeouts import Timeouts
from tlsbench.run.topologies import OVER_NETWORK, Route, host_agent, on_device, route
from tlsbench.run.pace import Pacing
from tlsbench.run.topologies.pair import AgentPair
from tlsbench.run.topologies.single import ONE, SingleAgent
from tlsbench.run.tracefs import Recorder


@dataclass(frozen=True)
class UnfitLane:
    """A lane of a device plan (target × library build) without an image to run (app/device.py):
    the image outgrows the target's flash or RAM, or the build is not made for its core. Its
    configurations are stored with the reason, not run."""

    target: str
    library: str  # the device build's label (mbedtls@3.6+p256m): what its configurations call it
    config_sha256: str  # the config header it is built with: a lane of the same build and header lists the same suites
    reason: str  # "does not fit in flash (the image needs N bytes more than the part's M)", ...


@dataclass(frozen=True)
class RunSettings:
    """How a run reaches its agents: fixed before anything starts."""

    paths: Mapping[str, Path]  # the agent binary of each library of the plan
    place: str = ""  # names the experiment (its folder): one set of network namespaces per place
    timeouts: Timeouts = Timeouts()
    agent_dir: str | Path | None = None  # where the network peer's agent is looked up
    devices: tuple[DeviceSetup, ...] = ()  # the plan's [device] (one per target), its firmware found or built
    placement: Placement = Placement()  # where agents run (the caller keeps its own thread on the controller's CPUs)
    counting: metrics.Prefix = metrics.no_counting  # the counting runner of instruction twins
    remote: tuple[str, ...] = ()  # the bridge that runs host agents on another machine (run/remote.py)
    pacing: Pacing | None = None  # [network] pace: the agents' modelled step times (app/pace.py)
    unfit: tuple[UnfitLane, ...] = ()  # the plan's device lanes without an image for their target


@dataclass
class RunHooks:
    """What the run reports to and reads back while it goes."""

    observer: Observer = field(default_factory=QuietObserver)
    stop: StopFlag = field(default_factory=StopFlag)
    done: Mapping[str, set[int]] | None = None  # the stored repetition indices per configuration (a resume)
    measure_precision: MeasurePrecision | None = None  # plans with [precision]
    sched: Recorder | None = None  # the scheduler's view of the batches (run/tracefs.py)


@dataclass
class Greeted:
    """The agents that answered, one per library (and the device's firmware), and what the
    plan means against them."""

    agents: dict[str, ProcessEndpoint]
    resolution: Resolution
    devices: list[Endpoint] = field(default_factory=list)  # each device's first image, booted (the setups' order)

    def close(self) -> None:
        """Quits the agents not handed over to an exchange."""
        for agent in self.agents.values():
            agent.quit()
            agent.close()
        self.agents.clear()
        for device in self.devices:
            device.end()
            device.close()
        self.devices.clear()


def device_offer(hello: dict[str, Any], suites: list[dict[str, Any]], loaded: LoadedPlan,
                 setup: DeviceSetup) -> DeviceOffer:
    """What a booted firmware offers a plan (its HELLO and SUITES): its library build, its
    device, its suites, and the images to run them on (the plan's for an emulated board; what a
    board has flashed)."""
    device, plan = hello["device"], loaded.plan.device
    images = plan.images if plan and plan.target else (str(device["image"]["variant"]),)
    return DeviceOffer(setup.library(hello), str(device["target"]), suites, images, hello)


def device_offers(loaded: LoadedPlan, listed: Sequence[tuple[DeviceSetup, dict[str, Any], list[dict[str, Any]]]],
                  unfit: Sequence[UnfitLane]) -> list[DeviceOffer]:
    """What each lane of a device plan offers: a booted firmware's HELLO and SUITES (`listed`,
    each with its setup); a lane whose image does not fit, what a lane of the same library build
    and config header lists (the suites and experiments are the build's, not the core's), or
    nothing when no such lane fits (plan/resolve.py makes the lane one cell)."""
    offers = [device_offer(hello, suites, loaded, setup) for setup, hello, suites in listed]
    by_build = {(offer.library, (setup.build.get("config") or {}).get("sha256")): offer
                for (setup, _, _), offer in zip(listed, offers)}
    for lane in unfit:
        twin = by_build.get((lane.library, lane.config_sha256))
        offers.append(dataclasses.replace(twin, target=lane.target, not_run=lane.reason) if twin
                      else DeviceOffer(lane.library, lane.target, (), not_run=lane.reason))
    return offers


class NoLaneRuns(UserError):
    """No lane of a device plan (without host = true) has an image to run on its target."""

    def __init__(self, resolution: Resolution, stored: str = ""):
        super().__init__("nothing to measure: no lane of the plan has an image for its target: "
                         + "; ".join(s.reason for s in resolution.skipped)
                         + (f" (stored in {stored}: tlsbench status shows it)" if stored else "")
                         + "; choose a target with more memory or another library build")
        self.resolution = resolution


def resolve_plan(loaded: LoadedPlan, settings: RunSettings) -> Greeted:
    """Starts one agent per library (where the settings' placement puts agents; and boots the
    device's firmware) and resolves the plan against their SUITES and HELLO: what can fail
    because of the plan fails here, before anything is stored (a matrix without a cell that
    applies too)."""
    timeouts = settings.timeouts
    greeted = Greeted(greet(settings.paths, timeouts, settings.placement, settings.remote), Resolution())
    try:
        for device in settings.devices:
            greeted.devices.append(connect(device, first_variant(device), timeouts))
            if len(settings.devices) > 1:  # a matrix's listing boot, ended by open_run (QUIT resumes it):
                greeted.devices[-1].pause()  # an idle firmware polls its UART, a host CPU the next boot needs
        agents = greeted.agents
        greeted.resolution = resolve(loaded, {lib: a.suites for lib, a in agents.items()},
                                     {lib: a.hello for lib, a in agents.items()},
                                     device_offers(loaded, [(setup, link.hello, link.suites) for setup, link
                                                            in zip(settings.devices, greeted.devices)], settings.unfit))
        if settings.unfit and not settings.devices and not greeted.resolution.configs:
            raise NoLaneRuns(greeted.resolution)
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


def _retire(agent: Endpoint, library: str, sink: Sink) -> None:
    """An agent (or a device's boot) that listed its suites, recorded and ended."""
    agent_id = sink.add_agent(library, agent.executable, agent.pid, agent.hello_raw, agent.suites_raw,
                              agent.device, placement_json=agent.placement_json)
    how = agent.end()
    sink.end_agent(agent_id, f"quit ({how}): suites listed")
    agent.close()


def on_host(library: str, sink: Sink, stop: StopFlag, settings: RunSettings, agent: ProcessEndpoint | None = None,
            prefix: Sequence[str] = (), greeting_s: float | None = None) -> SingleAgent:
    """A library's agent process playing both peers, behind `prefix` when given (a metric
    twin's counting runner, whose agent greets slower)."""
    greeting = greeting_s or settings.timeouts.greeting

    def start(slot: str) -> Endpoint:
        return ProcessEndpoint.start(settings.paths[library], (*settings.remote, *prefix), greeting_s=greeting,
                                     placement=settings.placement)
    return SingleAgent(library, start, sink, settings.timeouts, stop, adopted={ONE: agent} if agent else {})


def device_exchange(setup: DeviceSetup, library: str, sink: Sink, stop: StopFlag, settings: RunSettings,
                    link: Endpoint | None = None) -> SingleAgent:
    """The device's firmware playing both peers, one boot per image (the configuration's)."""
    timeouts = settings.timeouts
    return SingleAgent(library, lambda variant: connect(setup, variant, timeouts), sink, timeouts, stop,
                       slot=lambda config: config.row.image or COUNTING,
                       adopted={first_variant(setup): link} if link else {}, dtls_timeout_ms=setup.dtls_timeout_ms)


def open_run(loaded: LoadedPlan, greeted: Greeted, sink: Sink, settings: RunSettings,
             hooks: RunHooks | None = None) -> Controller:
    """The experiment record, the agent rows an earlier host left open closed, the exchanges
    (each greeted agent goes to its library's, or quits when every configuration runs on
    agent pairs; the booted firmware to the device's), and the controller over them."""
    hooks = hooks or RunHooks()
    paths, timeouts, stop, observer = settings.paths, settings.timeouts, hooks.stop, hooks.observer
    sink.init_experiment(experiment_record(loaded))
    closed = sink.close_stale_agents(STALE_AGENT_REASON)  # before this run's rows exist
    if closed:
        observer.note(f"closed {closed} agent record(s) an earlier host left open")
    exchanges: dict[Route, Exchange] = {}
    for library in paths:
        agent = greeted.agents.pop(library, None)
        if agent and loaded.plan.network:  # every handshake runs on agent pairs: the listing agent is done
            _retire(agent, library, sink)
            agent = None
        exchanges[host_agent(library)] = on_host(library, sink, stop, settings, agent)
    twins = metrics.start(greeted.resolution, paths, loaded.plan.seed, timeouts, settings.placement,
                          settings.counting)
    for warning in twins.warnings:
        observer.note(f"warning: {warning}")
    for twin, (agent, prefix) in twins.agents.items():
        exchanges[twin] = on_host(twin.library, sink, stop, settings, agent, prefix,
                                  timeouts.greeting * metrics.GREETING_FACTOR)
    # One exchange per device (HELLO's target). Several (a matrix) run as parallel lanes whose
    # writes go through this thread, the store's (run/lanes.py); their listing boots end here (an
    # idle firmware polls its UART: a QEMU waiting for its lane would take a host CPU), and each
    # lane boots its device in its own thread.
    owner = OwnerThread() if len(settings.devices) > 1 else None
    device_sink = OwnedSink(sink, owner) if owner else sink
    for setup, link in zip(settings.devices, greeted.devices):
        library = setup.library(link.hello)
        if owner:
            _retire(link, library, sink)
        exchanges[on_device(str(link.hello["device"]["target"]), library)] = device_exchange(
            setup, library, device_sink, stop, settings, None if owner else link)
    greeted.devices = []
    if loaded.plan.network:
        def agent_of(library: str) -> Path:
            return paths.get(library) or find_agent(library, settings.agent_dir)
        exchanges[OVER_NETWORK] = AgentPair(loaded.plan.network, loaded.plan.seed, agent_of, sink, timeouts, stop,
                                            settings.place, settings.agent_dir, settings.placement, settings.pacing)
    placement = settings.placement
    return Controller(loaded, greeted.resolution, sink, exchanges, route, observer, stop, hooks.done,
                      hooks.measure_precision, lookahead=placement.pinned and owner is None, sched=hooks.sched,
                      owner=owner, lane_cpus=tuple(sorted({*placement.controller_cpus, *placement.agent_cpus})))


def start(loaded: LoadedPlan, sink: Sink, paths: Path | Mapping[str, Path], observer: Observer | None = None,
          stop: StopFlag | None = None, timeouts: Timeouts = Timeouts(), place: str = "",
          agent_dir: str | Path | None = None, device: DeviceSetup | None = None,
          placement: Placement = Placement()) -> Controller:
    """Greets, resolves and opens in one go, for a sink that is already open (tests, tools);
    one path is the agent of a single-library plan."""
    paths = dict(paths) if isinstance(paths, Mapping) else {loaded.plan.libraries[0]: paths}
    settings = RunSettings(paths, place or loaded.plan.name, timeouts, agent_dir, (device,) if device else (), placement)
    hooks = RunHooks(observer or QuietObserver(), stop or StopFlag())
    return open_run(loaded, resolve_plan(loaded, settings), sink, settings, hooks)
