# SPDX-License-Identifier: Apache-2.0
"""A Collector copies one agent's output off its pipe while a batch runs, and nothing more.

Its thread wakes every POLL_S and moves whatever the pipe holds into memory; it reads only
frame headers (12 bytes each) to find where frames end, and wakes the controller only when a
frame that ends a RUN (DONE, ERROR) has arrived, or the stream ended or broke. Nobody waits
in read() on the pipe, so the agent's writes wake nobody: a blocked reader would be woken by
every REP, an interrupt to the controller's CPU paid for on the agent's. CRCs, decoding,
validation and storing happen after the batch, on the bytes taken: Collected hands them out
as frames, a host agent's Listener (run/endpoints/process.py).

The pipe holds 1 MiB (run/endpoints/process.py), about 40 ms of REP frames of the fastest
handshakes here: the thread drains it about forty times as often."""
from __future__ import annotations

import io
import os
import threading
import time
from dataclasses import dataclass
from enum import Enum
from typing import BinaryIO, Callable, Iterator

from tlsbench.core import spec as specmod
from tlsbench.run import protocol
from tlsbench.run.endpoints import Ended, Silent

POLL_S = 0.001
READ_BYTES = 1 << 20


class Ending(Enum):
    """Why a wait for the end of a batch ended."""

    FRAME = "a frame that ends a RUN"
    EOF = "end of stream"
    BROKEN = "corrupt frame header"
    SILENT = "silence"
    STOPPED = "stop requested"


@dataclass(frozen=True)
class Taken:
    """Whole frames taken off the stream: `data` starts at stream offset `offset`."""

    data: bytes
    offset: int
    ending: Ending


class Collector:
    """The bytes of one agent's stdout (a raw, unbuffered pipe), split into whole frames."""

    def __init__(self, stream: BinaryIO):
        spec = specmod.load()
        self.terminal = {spec.frames.DONE, spec.frames.ERROR}
        self.stream = stream
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.buf = bytearray()
        self.base = 0          # stream offset of buf[0]
        self.whole = 0         # buf[:whole] holds whole frames
        self.ends: list[int] = []  # buf positions just after each terminal frame not yet taken
        self.eof = False
        self.broken = False
        self.last_heard = time.monotonic()
        self.closed = False
        os.set_blocking(stream.fileno(), False)
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ the thread
    def _pump(self) -> None:
        while not self.closed:
            time.sleep(POLL_S)
            chunks, ended = self._drain()
            if not chunks and not ended:
                continue
            with self.lock:
                if chunks:
                    self.buf += b"".join(chunks)
                    self.last_heard = time.monotonic()
                    self._split()
                self.eof = self.eof or ended
            if self.ends or self.eof or self.broken:
                self.arrived.set()
            if ended:
                return

    def _drain(self) -> tuple[list[bytes], bool]:
        """What the pipe holds now, and whether the stream ended (or was closed under us)."""
        chunks: list[bytes] = []
        while True:
            try:
                data = self.stream.read(READ_BYTES)
            except (OSError, ValueError):
                return chunks, True
            if data is None:  # nothing more for now
                return chunks, False
            if not data:
                return chunks, True
            chunks.append(data)

    def _split(self) -> None:
        """Advances over the whole frames received: headers only, no CRC."""
        while not self.broken and len(self.buf) - self.whole >= protocol.FRAME_HEADER.size:
            head = bytes(self.buf[self.whole:self.whole + protocol.FRAME_HEADER.size])
            try:
                frame_type, length = protocol.check_header(head, self.base + self.whole)
            except protocol.FrameError:
                self.broken = True
                return
            end = self.whole + protocol.FRAME_HEADER.size + length + protocol.FRAME_CRC.size
            if end > len(self.buf):
                return
            self.whole = end
            if frame_type in self.terminal:
                self.ends.append(end)

    # ------------------------------------------------------------------ the controller's side
    def wait(self, silence_s: float, stopped: Callable[[], bool]) -> Taken:
        """Blocks until a RUN has ended (its DONE or ERROR arrived), the stream ended or broke,
        nothing arrived for `silence_s` or `stopped()`; then takes the whole frames up to
        that point (up to and including the RUN's last frame: later frames stay)."""
        while True:
            with self.lock:
                ending = (Ending.FRAME if self.ends else Ending.BROKEN if self.broken
                          else Ending.EOF if self.eof else None)
                quiet = time.monotonic() - self.last_heard
            if ending is None and stopped():
                ending = Ending.STOPPED
            elif ending is None and quiet > silence_s:
                ending = Ending.SILENT
            if ending is not None:
                return self._take(ending)
            self.arrived.wait(min(0.1, max(silence_s - quiet, 0.001)))
            self.arrived.clear()

    def _take(self, ending: Ending) -> Taken:
        with self.lock:
            upto = self.ends.pop(0) if ending is Ending.FRAME else (
                len(self.buf) if ending in (Ending.EOF, Ending.BROKEN) else self.whole)
            taken = Taken(bytes(self.buf[:upto]), self.base, ending)
            del self.buf[:upto]
            self.base += upto
            self.whole -= min(upto, self.whole)
            self.ends = [e - upto for e in self.ends]
            return taken

    def touch(self) -> None:
        """A RUN was sent: silence is counted from now."""
        with self.lock:
            self.last_heard = time.monotonic()

    def close(self) -> None:
        self.closed = True


class Collected:
    """A Listener of one agent's stdout: the batch's bytes are collected until it has ended,
    then decoded into frames."""

    def __init__(self, stream: BinaryIO):
        self.collector = Collector(stream)

    def sent(self) -> None:
        self.collector.touch()

    def frames(self, silence_s: float, stopped: Callable[[], bool]) -> Iterator[protocol.Frame]:
        taken = self.collector.wait(silence_s, stopped)
        reader = protocol.FrameReader(io.BytesIO(taken.data), taken.offset)
        while (frame := reader.read()) is not None:
            yield frame
        if taken.ending is Ending.SILENT:
            raise Silent(silence_s)
        if taken.ending is not Ending.STOPPED:  # the agent is still busy when stopped: closing kills it
            raise Ended

    def close(self) -> None:
        self.collector.close()
