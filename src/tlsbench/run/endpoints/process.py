# SPDX-License-Identifier: Apache-2.0
"""A local agent process speaking the framed protocol on its stdin/stdout (an Endpoint,
run/endpoints/__init__.py): started in a session of its own, on the agents' CPUs, greeted
(HELLO and SUITES, checked against this host's spec files), then sent RUNs and read. While a
batch runs its bytes are only collected (endpoints/collect.py). QEMU booting a firmware is
such a process whose program is QEMU (endpoints/qemu.py)."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from tlsbench.core import spec as specmod
from tlsbench.core.processes import dying_with_us
from tlsbench.run import protocol
from tlsbench.run.endpoints import AgentError, Listener, StepCounts
from tlsbench.run.endpoints.collect import Collected
from tlsbench.run.placement import Placement
from tlsbench.run.timeouts import Timeouts

if TYPE_CHECKING:
    from tlsbench.plan.configs import Configuration
    from tlsbench.schema import DeviceFacts

STDERR_TAIL_BYTES = 2000
REBUILD_AGENT = "rebuild it with make"
PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size for unprivileged processes


def _widen_pipe(stream: Any) -> None:
    """A 1 MiB pipe (instead of 64 KiB) holds ~100 REP frames, so the agent never waits for
    the controller while SQLite checkpoints its WAL. Best effort: Linux only."""
    try:
        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):
        pass


@dataclass
class ProcessEndpoint:
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
    device: DeviceFacts | None = None  # a host agent is no device
    paused: bool = False
    queues_runs = True  # it reads the next RUN while it runs one
    step_counts: StepCounts | None = None  # the cycle model attaches to a firmware under QEMU only
    checks_clock = True  # its DONEs say how its clock held (agent row clock_json)

    @classmethod
    def start(cls, path: Path, prefix: Sequence[str] = (), greeting_s: float = Timeouts().greeting,
              command: Sequence[str] = (), advice: str = REBUILD_AGENT,
              placement: Placement = Placement()) -> "ProcessEndpoint":
        """Starts `path serve`, behind `prefix` when given (e.g. `ip netns exec NS`), or the
        `command` that runs `path` (QEMU booting a firmware image, endpoints/qemu.py), on the
        agents' CPUs and priority of `placement`, and reads its greeting; an agent that has
        not greeted within `greeting_s` is killed."""
        stderr_file = tempfile.TemporaryFile()

        die = dying_with_us()

        def prepare_child() -> None:
            die()
            placement.in_child()

        # Own session (so its own process group and scheduling group: run/placement.py): a
        # Ctrl-C in the terminal reaches only the controller, which then stops the agent
        # cleanly instead of losing it mid-repetition. Unbuffered pipes: what the controller
        # has not read is in the pipe, never in a hidden buffer (endpoints/collect.py reads the raw
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

    @property
    def executable(self) -> str:
        return self.path.name

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

    def read_frame(self) -> protocol.Frame | None:
        return self.reader.read()

    def listen(self) -> Listener:
        """Bytes only while a batch runs: nobody blocks in read() on the pipe, so the agent's
        writes wake nobody (docs/host.md "A quiet controller")."""
        return Collected(self.proc.stdout)  # type: ignore[arg-type]

    def silence_s(self, config: Configuration, warmup: int, timeouts: Timeouts) -> float:
        return timeouts.silence

    def pause(self) -> None:
        """SIGSTOP: an idle agent then costs no host CPU. Only an agent whose counter stops with
        it is paused between batches (QEMU's virtual one: endpoints/qemu.py); a host clock runs on."""
        if not self.paused and self.proc.poll() is None:
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused and self.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
        self.paused = False

    def silenced(self, seconds: float) -> str:
        self.kill()
        return f"no frame for {seconds:.0f} s, killed as hung; end of stream; {self.death_reason()}"

    def ended(self) -> str:
        return f"end of stream; {self.death_reason()}"

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

    def end(self, busy: bool = False) -> str:
        """QUIT, or SIGKILL for an agent busy with RUNs (QUIT would wait for them)."""
        return f"exit code {self.kill() if busy else self.quit()}"

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


