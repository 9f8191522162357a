# SPDX-License-Identifier: Apache-2.0
"""The agents a run talks to, behind one interface: an Endpoint is one start of an agent that
has greeted (HELLO, SUITES), takes frames and sends frames, can be paused, and ends.

    process.py  a local agent process over a pipe (a host agent; behind `ip netns exec` or a
                counting runner when asked)
    qemu.py     QEMU booting a firmware image: its UART is QEMU's stdin/stdout
    serial.py   a board's serial port: a boot is a reset and a fresh HELLO

A topology (run/topologies/) starts endpoints through a function it is given, so starting
again after a death is starting anew. While a batch runs, its frames are read by the
endpoint's Listener: a host agent's bytes are only copied until the batch has ended (a quiet
controller: endpoints/collect.py), a firmware's frames are read as they come (inbox.py).
Whoever uses an endpoint decides what a death means (the topologies record it and restart)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from tlsbench.core.errors import UserError
from tlsbench.run import protocol

if TYPE_CHECKING:
    from tlsbench.plan.configs import Configuration
    from tlsbench.schema import DeviceFacts, TraceCounts
    from tlsbench.run.timeouts import Timeouts


class AgentError(UserError, RuntimeError):
    """The agent is missing, died, or answered something the controller cannot use."""


class AgentRejected(AgentError):
    """The agent answered a request with an ERROR frame."""

    def __init__(self, error: dict[str, Any]):
        self.error = error
        self.code = str(error.get("code", "?"))
        hint = f" ({error['hint']})" if error.get("hint") else ""
        super().__init__(f"agent refused: {self.code}: {error.get('message', '')}{hint}")


class Silent(Exception):
    """No frame came within the wait of the batch under way."""

    def __init__(self, seconds: float):
        super().__init__(f"no frame for {seconds:.0f} s")
        self.seconds = seconds


class Ended(Exception):
    """The stream ended before the batch's last frame."""


class Listener(Protocol):
    """How the frames of a batch are read off one endpoint."""

    def sent(self) -> None:
        """A RUN went to the idle agent: its silence counts from now."""
        ...

    def frames(self, silence_s: float, stopped: Callable[[], bool]) -> Iterator[protocol.Frame]:
        """The frames of the RUN under way, in order (the caller stops at its DONE or ERROR).
        Returns early when `stopped()` (what arrived was handed out); raises Silent after
        `silence_s` without a frame, Ended at the end of the stream, protocol.FrameError on a
        corrupt frame."""
        ...

    def close(self) -> None: ...


class StepCounts(Protocol):
    """The cycle model's counts of a boot's repetitions, as their REPs arrive (run/cycles.py
    StepReader)."""

    def take(self, records: bytes) -> TraceCounts:
        """The next shipped repetition's class counts per record, or why it has none."""
        ...

    def close(self) -> None: ...


class Endpoint(Protocol):
    """One start of an agent (a process, a firmware boot), greeted: what its `agent` row
    records, its frames, and how it ends."""

    hello: dict[str, Any]
    suites: list[dict[str, Any]]
    hello_raw: str
    suites_raw: str
    executable: str  # the agent row's executable: the agent's or the image's file name
    pid: int | None  # None: a board
    placement_json: str  # the CPUs and priority it got (a host agent: run/placement.py; "" elsewhere)
    device: DeviceFacts | None  # a firmware boot's facts (run/device.py); None for a host agent
    queues_runs: bool  # takes the next RUN while it runs one: the controller may send a batch ahead
    checks_clock: bool  # its DONEs carry the checks of a host clock, recorded in its agent row
    step_counts: StepCounts | None  # a counting image under the cycle model's plugin: its records' class counts

    def send(self, data: bytes) -> None: ...
    def read_frame(self) -> protocol.Frame | None: ...
    def listen(self) -> Listener: ...

    def silence_s(self, config: Configuration, warmup: int, timeouts: Timeouts) -> float:
        """How long a batch of `config` may send nothing before the agent is called hung."""
        ...

    def pause(self) -> None: ...
    def resume(self) -> None: ...

    def silenced(self, seconds: float) -> str:
        """Kills the agent that sent nothing for `seconds`; why it died, as its row says."""
        ...

    def ended(self) -> str:
        """Why it died when its stream ended."""
        ...

    def death_reason(self) -> str: ...
    def kill(self) -> int | None: ...

    def end(self, busy: bool = False) -> str:
        """QUIT (an agent still `busy` with RUNs may be killed instead); how it ended."""
        ...

    def close(self) -> None: ...

