# SPDX-License-Identifier: Apache-2.0
"""Frames read as they come: an Inbox reads one or more endpoints, each by a thread into one
queue, so that every wait for the next frame has a limit (a silent agent is a hung one). A
pair of agents is read through one (run/topologies/pair.py); a firmware through a Listened,
one endpoint's inbox as its Listener (its line is its own: no host CPU to keep quiet)."""
from __future__ import annotations

import queue
import threading
from typing import Callable, Generic, Iterator, Protocol, TypeVar

from tlsbench.core import spec as specmod
from tlsbench.run import protocol
from tlsbench.run.endpoints import Ended, Silent

Tag = TypeVar("Tag")
Heard = protocol.Frame | protocol.FrameError | None  # a frame, a corrupt stream, or its end


class FrameSource(Protocol):
    """What an Inbox reads: an endpoint."""

    def read_frame(self) -> protocol.Frame | None: ...


class Inbox(Generic[Tag]):
    """Frames of one or more agents, each read by a thread into one queue, so that every
    wait for the next frame has a limit (a silent agent is a hung one)."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[Tag, Heard]] = queue.Queue()

    def listen(self, agent: FrameSource, tag: Tag) -> None:
        threading.Thread(target=self._pump, args=(agent, tag), daemon=True).start()

    def _pump(self, agent: FrameSource, tag: Tag) -> None:
        try:
            while (frame := agent.read_frame()) is not None:
                self.queue.put((tag, frame))
            self.queue.put((tag, None))
        except protocol.FrameError as exc:
            self.queue.put((tag, exc))
        except (OSError, ValueError):  # the stream was closed under us: the agent was stopped
            self.queue.put((tag, None))

    def next(self, timeout: float) -> tuple[Tag, Heard]:
        """The next item; queue.Empty after `timeout` seconds of silence."""
        return self.queue.get(timeout=timeout)


class Listened:
    """One endpoint's frames as they come (a Listener): a stop is honoured after a REP."""

    def __init__(self, source: FrameSource):
        self.inbox: Inbox[None] = Inbox()
        self.inbox.listen(source, None)
        self.rep = specmod.load().frames.REP

    def sent(self) -> None:
        pass  # every wait counts from its own start

    def frames(self, silence_s: float, stopped: Callable[[], bool]) -> Iterator[protocol.Frame]:
        while True:
            try:
                _, heard = self.inbox.next(silence_s)
            except queue.Empty:
                raise Silent(silence_s) from None
            if isinstance(heard, protocol.FrameError):
                raise heard
            if heard is None:
                raise Ended
            yield heard
            if heard.type == self.rep and stopped():
                return

    def close(self) -> None:
        pass  # its thread ends with the stream
