# SPDX-License-Identifier: Apache-2.0
"""Finding, starting and talking to agent processes (one binary per TLS library).

An AgentProcess owns one child process: it reads HELLO and SUITES, checks the agent was
built from the same spec files, sends RUN/QUIT and hands back decoded frames. Whoever
uses it decides what a death means (the controller records it and restarts)."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence

from tlsbench.core import spec as specmod
from tlsbench.core.errors import UserError
from tlsbench.core.processes import die_with
from tlsbench.plan import libraries as names
from tlsbench.run import protocol
from tlsbench.run.placement import Placement
from tlsbench.run.timeouts import Timeouts

if TYPE_CHECKING:  # the plan model (pydantic) loads where plans are read, not in every reader of this module
    from tlsbench.plan.model import LoadedPlan

AGENT_DIR_ENV = "TLSBENCH_AGENT_DIR"
# Where `cmake --build build/agent` puts binaries; a fallback for a source checkout.
SOURCE_BUILD_DIR = Path(__file__).resolve().parents[3] / "build" / "agent"
STDERR_TAIL_BYTES = 2000


def die_with_host() -> None:
    """preexec_fn of every child process: the agents and the link forwarder die with the host,
    however it ends (kill -9 included), when the thread that started them exits."""
    die_with(os.getppid())


class AgentError(UserError, RuntimeError):
    """The agent is missing, died, or answered something the controller cannot use."""


class AgentRejected(AgentError):
    """The agent answered a request with an ERROR frame."""

    def __init__(self, error: dict[str, Any]):
        self.error = error
        self.code = str(error.get("code", "?"))
        hint = f" ({error['hint']})" if error.get("hint") else ""
        super().__init__(f"agent refused: {self.code}: {error.get('message', '')}{hint}")


AGENT_PREFIX = "tlsbench-agent-"  # an agent binary is AGENT_PREFIX + its library name
REBUILD_AGENT = "rebuild it with make"


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


PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size for unprivileged processes


def _widen_pipe(stream: Any) -> None:
    """A 1 MiB pipe (instead of 64 KiB) holds ~100 REP frames, so the agent never waits for
    the controller while SQLite checkpoints its WAL. Best effort: Linux only."""
    try:
        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):
        pass


@dataclass
class AgentProcess:
    """A running agent speaking the framed protocol on its stdin/stdout."""

    path: Path
    proc: subprocess.Popen[bytes]
    reader: protocol.FrameReader
    stderr_file: Any  # temporary file: a pipe could fill up and block the agent
    hello: dict[str, Any] = field(default_factory=dict)
    suites: list[dict[str, Any]] = field(default_factory=list)
    hello_raw: str = ""
    suites_raw: str = ""
    advice: str = REBUILD_AGENT  # what to rebuild when it was built from other specs
    placement_json: str = ""  # the CPUs and priority it got (run/placement.py)

    @classmethod
    def start(cls, path: Path, prefix: Sequence[str] = (), greeting_s: float = Timeouts().greeting,
              command: Sequence[str] = (), advice: str = REBUILD_AGENT,
              placement: Placement = Placement()) -> "AgentProcess":
        """Starts `path serve`, behind `prefix` when given (e.g. `ip netns exec NS`), or the
        `command` that runs `path` (QEMU booting a firmware image, run/device.py), on the
        agents' CPUs and priority of `placement`, and reads its greeting; an agent that has
        not greeted within `greeting_s` is killed."""
        stderr_file = tempfile.TemporaryFile()

        def prepare_child() -> None:
            die_with_host()
            placement.in_child()

        # Own session (so its own process group and scheduling group: run/placement.py): a
        # Ctrl-C in the terminal reaches only the controller, which then stops the agent
        # cleanly instead of losing it mid-repetition. Unbuffered pipes: what the controller
        # has not read is in the pipe, never in a hidden buffer (run/collect.py reads the raw
        # stream after the greeting).
        proc = subprocess.Popen(list(command) or [*prefix, str(path), "serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr_file, start_new_session=True,
                                preexec_fn=prepare_child, bufsize=0)
        _widen_pipe(proc.stdout)
        agent = cls(path, proc, protocol.FrameReader(proc.stdout), stderr_file,  # type: ignore[arg-type]
                    advice=advice)
        agent.placement_json = placement.record(proc.pid)
        timed_out = threading.Event()
        late = threading.Timer(greeting_s, lambda: (timed_out.set(), agent.kill()))
        late.start()
        try:
            agent._greet()
        except BaseException as exc:
            agent.kill()
            if timed_out.is_set() and not isinstance(exc, KeyboardInterrupt):
                raise AgentError(f"{path.name} did not greet (HELLO, SUITES) within {greeting_s:g} s and was "
                                 f"killed: {agent.death_reason()}; is it a tlsbench agent? A slow one needs "
                                 f"--timeout greeting=SECONDS") from None
            raise
        finally:
            late.cancel()
        return agent

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _expect_json(self, frame_type: int) -> tuple[dict[str, Any], str]:
        name = specmod.load().frames.name(frame_type)
        try:
            frame = self.reader.read()
            if frame is None:
                raise AgentError(f"{self.path.name} exited before its greeting: {self.death_reason()}")
            if frame.type != frame_type:
                raise AgentError(f"{self.path.name} sent {frame.type_name} where {name} was expected")
            return frame.json(), frame.payload.decode()
        except protocol.FrameError as exc:
            raise AgentError(f"{self.path.name} sent something that is not a {name} frame ({exc}); "
                             "is it a tlsbench agent of this version? Rebuild it with make") from None

    def _greet(self) -> None:
        frames = specmod.load().frames
        self.hello, self.hello_raw = self._expect_json(frames.HELLO)
        specmod.load().check_agent(self.hello, self.advice)
        suites, self.suites_raw = self._expect_json(frames.SUITES)
        _check_greeting(self.path.name, self.hello, suites.get("suites", []))
        self.suites = list(suites.get("suites", []))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        view = memoryview(data)
        while view:  # an unbuffered pipe may take part of a write
            view = view[self.proc.stdin.write(view) or 0:]

    def run(self, request: protocol.RunRequest) -> None:
        self.send(request.encode())

    def read_frame(self) -> protocol.Frame | None:
        return self.reader.read()

    def quit(self, timeout: float = 2.0) -> int | None:
        """QUIT, then wait; an agent busy with a batch is stopped after `timeout`."""
        try:
            self.send(protocol.encode_frame(specmod.load().frames.QUIT))
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return self.kill()

    def kill(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        try:
            return self.proc.wait(5)
        except subprocess.TimeoutExpired:
            return None

    def death_reason(self) -> str:
        """Exit code (or signal) and the tail of stderr: what AGENT_DIED rows record."""
        try:
            code = self.proc.wait(2)
        except subprocess.TimeoutExpired:
            code = self.kill()
        how = ("still running, killed" if code is None else
               f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}")
        self.stderr_file.seek(0, os.SEEK_END)
        size = self.stderr_file.tell()
        self.stderr_file.seek(max(0, size - STDERR_TAIL_BYTES))
        tail = self.stderr_file.read().decode(errors="replace").strip()
        return how + (f"; stderr: {tail}" if tail else "")

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self.stderr_file.close()


# What the host reads from HELLO experiments and SUITES entries (docs/protocol.md).
SUITE_FIELDS = {"id": int, "name": str, "key_exchange": str, "authentication": str, "cipher": str, "mac": str,
                "min_version": str, "max_version": str}
EXPERIMENT_FIELDS = {"id": int, "name": str}


def _check_greeting(agent: str, hello: dict[str, Any], suites: Any) -> None:
    """The fields the host relies on are there with their types: a broken agent is one
    clear error here, not a KeyError deep in the plan's resolution."""
    listed = [("SUITES suites", suites, SUITE_FIELDS), ("HELLO experiments", hello.get("experiments", []), EXPERIMENT_FIELDS)]
    for what, entries, wanted in listed:
        if not isinstance(entries, list):
            raise AgentError(f"{agent} sent a malformed greeting: {what} is not a list; rebuild it with make")
        for i, entry in enumerate(entries):
            bad = [k for k, t in wanted.items() if not isinstance(entry, dict) or not isinstance(entry.get(k), t)]
            if bad:
                raise AgentError(f"{agent} sent a malformed greeting: {what}[{i}] lacks {', '.join(bad)}; "
                                 "rebuild it with make")


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
    agent = AgentProcess.start(find_agent(library, agent_dir, buildable), greeting_s=timeouts.greeting)
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
          placement: Placement = Placement()) -> dict[str, AgentProcess]:
    """One started agent per library, greeted (HELLO, SUITES): what a plan is resolved
    against; an agent named for a version must report it. If one fails to start, those
    already started are stopped."""
    started: dict[str, AgentProcess] = {}
    try:
        for library, path in paths.items():
            started[library] = AgentProcess.start(path, greeting_s=timeouts.greeting, placement=placement)
            check_version(library, path.name, started[library].hello)
    except BaseException:
        for agent in started.values():
            agent.quit()
            agent.close()
        raise
    return started
