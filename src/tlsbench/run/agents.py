# SPDX-License-Identifier: Apache-2.0
"""The agents of TLS libraries (one binary per library): where they are found, which one a
library name means, and the greeted agents a plan is resolved against (each a
ProcessEndpoint, run/endpoints/process.py)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence

from tlsbench.plan import libraries as names
from tlsbench.run.endpoints import AgentError
from tlsbench.run.endpoints.process import ProcessEndpoint
from tlsbench.run.placement import Placement
from tlsbench.run.timeouts import Timeouts

if TYPE_CHECKING:  # the plan model (pydantic) loads where plans are read, not in every reader of this module
    from tlsbench.plan.model import LoadedPlan

AGENT_DIR_ENV = "TLSBENCH_AGENT_DIR"
# Where `cmake --build build/agent` puts binaries; a fallback for a source checkout.
SOURCE_BUILD_DIR = Path(__file__).resolve().parents[3] / "build" / "agent"
AGENT_PREFIX = "tlsbench-agent-"  # an agent binary is AGENT_PREFIX + its library name


def executable_name(library: str) -> str:
    """tlsbench-agent-openssl-3.5 for openssl@3.5 (and for openssl-3.5: plan/libraries.py)."""
    return AGENT_PREFIX + names.agent_name(library)


def _search_dirs(agent_dir: str | Path | None, build_dir: Path = SOURCE_BUILD_DIR) -> list[Path]:
    """Where agents (and the programs installed with them) are looked for, in order:
    --agent-dir / $TLSBENCH_AGENT_DIR alone when given; else next to the Python interpreter
    (where `make` installs them: .venv/bin), then PATH, then the source tree's build folder
    (build/agent; build/link for tlsbench-link)."""
    explicit = agent_dir or os.environ.get(AGENT_DIR_ENV)
    if explicit:
        return [Path(explicit)]
    on_path = [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    return [Path(sys.executable).parent, *on_path, build_dir]


def available_agents(agent_dir: str | Path | None = None) -> list[str]:
    """Library names of every agent found (`tlsbench-agent-<name>`), first location wins:
    the names a plan's `libraries` may use, custom builds included."""
    found: dict[str, None] = {}
    for folder in _search_dirs(agent_dir):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(AGENT_PREFIX) and entry.is_file() and os.access(entry, os.X_OK):
                found.setdefault(entry.name.removeprefix(AGENT_PREFIX), None)
    return sorted(found)


def find_agent(library: str, agent_dir: str | Path | None = None, buildable: Collection[str] = ()) -> Path:
    """The agent binary of a library (search order: `_search_dirs`); a library whose agent is
    missing is one error saying which versions there are, or how to build this one
    (`buildable`: the library versions the library cache can build, `lib@series`)."""
    try:
        return find_program(executable_name(library), agent_dir)
    except AgentError:
        if not names.is_versioned(library):
            raise
        raise AgentError(missing_version(library, available_agents(agent_dir), buildable)) from None


def known_versions(found: Collection[str], buildable: Collection[str]) -> dict[str, list[str]]:
    """Per library, the versions a plan may name: the agents found that say a version (and the
    Debian 12 builds, by their bare names) and what the library cache builds."""
    known: dict[str, dict[str, None]] = {}
    for name in [*found, *buildable]:
        parsed = names.parse(name)
        if parsed.build or (parsed.series is None and parsed.library not in names.DEBIAN12_SERIES):
            continue  # a custom build, the notrace twins, a user's agent: named by their agent names
        known.setdefault(parsed.library, {})[parsed.canonical] = None
    return {lib: sorted(versions) for lib, versions in sorted(known.items())}


def missing_version(library: str, found: Collection[str], buildable: Collection[str]) -> str:
    """Why a `name@version` has no agent and what to do: build a version the library cache
    knows, or pick one of the known versions."""
    canonical = names.canonical(library)
    if canonical in {names.canonical(b) for b in buildable}:
        return (f"{canonical} is known but not built here (no agent {executable_name(library)}): run `make agent` "
                f"in the tlsbench source tree; it builds {canonical} from Debian 13 sources first, once, which takes "
                f"a few minutes (or `tlsbench libs build {canonical}` for the library alone; docs/libraries.md)")
    built = {names.canonical(f) for f in found}
    known = known_versions(found, buildable)
    mine = names.parse(library).library
    listed = known.get(mine) or [v for versions in known.values() for v in versions]
    shown = [f"{v} (Debian 12's {names.DEBIAN12_SERIES[v]})" if v in names.DEBIAN12_SERIES
             else v if v in built else f"{v} (not built yet: make agent)" for v in listed]
    what = f" of {mine}; known versions of {mine}" if mine in known else "; known library versions"
    return (f"{canonical} is not a known version{what}: {', '.join(shown) or 'none'}; build a known version with "
            "`tlsbench libs build NAME@VERSION` and `make agent` (docs/libraries.md)")


def find_program(name: str, agent_dir: str | Path | None = None, build_dir: Path = SOURCE_BUILD_DIR) -> Path:
    """An agent, or a program installed with them (tlsbench-link, built in `build_dir`)."""
    for folder in _search_dirs(agent_dir, build_dir):
        if os.access(folder / name, os.X_OK) and (folder / name).is_file():
            return folder / name
    found = available_agents(agent_dir)
    where = (f"{agent_dir or os.environ.get(AGENT_DIR_ENV)} (from --agent-dir or ${AGENT_DIR_ENV})"
             if agent_dir or os.environ.get(AGENT_DIR_ENV)
             else f"{Path(sys.executable).parent}, PATH, build/{build_dir.name}")
    return _missing(name, where, found)


def _missing(name: str, where: str, found: list[str]) -> Path:
    listing = f"agents found: {', '.join(found)}" if found else "no agent found at all"
    raise AgentError(f"agent {name} not found (looked in {where}; {listing}): "
                     "run `make` to build and install the agents")


def check_version(library: str, agent: str, hello: Mapping[str, Any]) -> None:
    """An agent named for a version (openssl@3.5) must be that version: a stale binary, or one
    built against another library, is refused before it measures anything."""
    series = names.parse(names.canonical(library)).series
    version = str(hello.get("library_version", ""))
    if series and not (version == series or version.startswith(series + ".")):
        raise AgentError(f"{agent} reports {hello.get('library_name', '?')} {version or '(no version)'}, not "
                         f"{names.canonical(library)}: rebuild it with `make agent`")


def query_suites(library: str, agent_dir: str | Path | None = None, timeouts: Timeouts = Timeouts(),
                 buildable: Collection[str] = ()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """HELLO and SUITES of an agent build (for `tlsbench suites`)."""
    agent = ProcessEndpoint.start(find_agent(library, agent_dir, buildable), greeting_s=timeouts.greeting)
    try:
        check_version(library, agent.path.name, agent.hello)
        return agent.hello, agent.suites
    finally:
        agent.quit()
        agent.close()


def locate_agents(loaded: LoadedPlan, agent_dir: str | Path | None = None,
                  buildable: Collection[str] = ()) -> dict[str, Path]:
    """The agent binary of every library of the plan; one PlanError naming all missing ones
    (the network peer's included) and listing the agents that were found, or for a
    `name@version` the known versions and how to build a known one (`buildable`)."""
    from tlsbench.plan.model import PlanError
    paths: dict[str, Path] = {}
    problems = []
    wanted = [(f"libraries[{i}]", library) for i, library in enumerate(loaded.plan.libraries)]
    peer = loaded.plan.network.peer_library if loaded.plan.network else None
    if peer and peer not in loaded.plan.libraries:  # started only by the first network batch: checked now
        wanted.append(("network.peer_library", peer))
    for where, library in wanted:
        try:
            path = find_agent(library, agent_dir, buildable)
        except AgentError as exc:
            why = str(exc) if names.is_versioned(library) else f"no agent {executable_name(library)}"
            problems.append(f"{where}: {library!r} is not valid: {why}")
            continue
        if where.startswith("libraries"):
            paths[library] = path
    if problems:
        found = available_agents(agent_dir)
        problems.append(f"agents found: {', '.join(found)}" if found else
                        "no agent found at all: run `make` to build and install them")
        raise PlanError(loaded.source, problems)
    return paths


def greet(paths: Mapping[str, Path], timeouts: Timeouts = Timeouts(),
          placement: Placement = Placement(), prefix: Sequence[str] = ()) -> dict[str, ProcessEndpoint]:
    """One started agent per library, greeted (HELLO, SUITES): what a plan is resolved
    against; an agent named for a version must report it. If one fails to start, those
    already started are stopped. `prefix`: a remote agent's bridge (run/remote.py)."""
    started: dict[str, ProcessEndpoint] = {}
    try:
        for library, path in paths.items():
            started[library] = ProcessEndpoint.start(path, prefix, greeting_s=timeouts.greeting, placement=placement)
            check_version(library, path.name, started[library].hello)
    except BaseException:
        for agent in started.values():
            agent.quit()
            agent.close()
        raise
    return started
