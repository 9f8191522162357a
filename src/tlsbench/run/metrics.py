# SPDX-License-Identifier: Apache-2.0
"""The agents of metric twins (docs/metrics.md): a handshake configuration's twin collecting
instructions runs on its library's agent under the tbcount valgrind tool; one collecting
memory on its library's agent with the allocator hooks on. Each is an agent process of its
own, started with TLSBENCH_COLLECT in its environment, so time repetitions never pay for
counting. The counting runner is built elsewhere (tlsbench.builder.tbcount): the caller hands
in a function that gives its command prefix for a seed, or raises Unavailable.

A metric this machine cannot give (no valgrind) is one warning naming the fix: its twins
are dropped before anything is stored, and the run goes on with the other metrics."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from tlsbench.plan.configs import Resolution
from tlsbench.run.endpoints import AgentError
from tlsbench.run.endpoints.process import ProcessEndpoint
from tlsbench.run.placement import Placement
from tlsbench.run.timeouts import Timeouts
from tlsbench.run.topologies import Route, route

INSTRUCTIONS, MEMORY = "instructions", "memory"
GREETING_FACTOR = 10  # an agent under valgrind starts and calibrates its tracer ~10x slower

ENV = shutil.which("env") or "/usr/bin/env"  # sets the agent's environment (coreutils)
Prefix = Callable[[int], list[str]]  # seed -> the command before `AGENT serve`


class Unavailable(RuntimeError):
    """A metric this machine cannot give; the message names the fix."""


def memory_prefix(seed: int) -> list[str]:
    return [ENV, "TLSBENCH_COLLECT=memory"]


def no_counting(seed: int) -> list[str]:
    raise Unavailable("instructions: no counting runner was set up (tlsbench run sets up tbcount)")


def refusal(collect: str, hello: Mapping[str, Any]) -> str | None:
    """Why an agent's HELLO shows it does not collect what it was started for, or None."""
    unit = str((hello.get("clock") or {}).get("unit") or "ns")
    if collect == INSTRUCTIONS and not unit.startswith(INSTRUCTIONS):
        return ("the agent does not count instructions under tbcount (its clock is in "
                f"{unit}): rebuild it with valgrind installed (make agent)")
    if collect == MEMORY and not hello.get("memory_probes"):
        return "the agent has no memory probes: rebuild it (make agent)"
    return None


@dataclass
class MetricAgents:
    """The started agents of the twins that can run, by route, and what was dropped (why)."""

    agents: dict[Route, tuple[ProcessEndpoint, list[str]]] = field(default_factory=dict)  # route -> (agent, prefix)
    warnings: list[str] = field(default_factory=list)


def start(resolution: Resolution, paths: Mapping[str, Path], seed: int, timeouts: Timeouts,
          placement: Placement, counting: Prefix = no_counting) -> MetricAgents:
    """Starts one agent per (library, metric) the twins need; twins whose agent cannot
    collect are removed from `resolution`, with one warning per metric (and library)."""
    out = MetricAgents()
    failed: dict[Route, str] = {}  # route -> why its agent cannot collect
    prefixes: dict[str, list[str]] = {}
    for config in resolution.configs:
        twin, collect = route(config), config.kind.collect
        if collect is None or twin in out.agents or twin in failed:
            continue
        makers = {MEMORY: memory_prefix, INSTRUCTIONS: counting}
        why = _start_one(config.row.library, collect, paths, seed, timeouts, placement, makers, prefixes, out, twin)
        if why:
            failed[twin] = why
            if why not in out.warnings:
                out.warnings.append(why)
    for config in resolution.configs:
        if route(config) in failed:
            resolution.skip(config.key, failed[route(config)])
    resolution.configs = [c for c in resolution.configs if route(c) not in failed]
    return out


def _start_one(library: str, collect: str, paths: Mapping[str, Path], seed: int, timeouts: Timeouts,
               placement: Placement, makers: Mapping[str, Prefix], prefixes: dict[str, list[str]], out: MetricAgents,
               twin: Route) -> str | None:
    try:
        prefix = prefixes.get(collect) or makers[collect](seed)
    except Unavailable as exc:
        return f"{exc}; the run goes on without {collect}"
    prefixes[collect] = prefix
    try:
        agent = ProcessEndpoint.start(paths[library], prefix=prefix, greeting_s=timeouts.greeting * GREETING_FACTOR,
                                      placement=placement)
    except AgentError as exc:
        return f"{collect} ({library}): {exc}; the run goes on without it"
    why = refusal(collect, agent.hello)
    if why:
        agent.quit()
        agent.close()
        return f"{collect} ({library}): {why}; the run goes on without it"
    out.agents[twin] = (agent, prefix)
    return None


def close(agents: MetricAgents) -> None:
    for agent, _ in agents.agents.values():
        agent.quit()
        agent.close()
    agents.agents.clear()

