# SPDX-License-Identifier: Apache-2.0
"""SingleAgent: both peers in one agent, in memory (or an experiment), over any endpoint: a
host agent of a library (a process over a pipe), or the device's firmware (QEMU or a board's
serial port: one boot per firmware image, the image not in use paused). An endpoint is the
one that answered the plan's resolution when it is handed over, else started on first use,
and started again at once after a death; how long a batch may be silent, how its frames are
read and how a death reads are the endpoint's (run/endpoints/).

Quiet while a batch runs (docs/host.md "A quiet controller"): a host agent's bytes are only
copied (run/endpoints/collect.py); the frames are checked and decoded once the batch's DONE
has arrived. With CPUs of its own for the agent, the controller may queue the RUN of the
next batch before collecting this one (send_ahead, where the endpoint takes it: a device runs
one RUN at a time): the agent then goes from batch to batch without waiting for the host,
while the host checks and stores the batch before on its own CPU."""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from tlsbench.core import spec as specmod
from tlsbench.plan.configs import Configuration
from tlsbench.run import protocol
from tlsbench.run.endpoints import AgentRejected, Ended, Endpoint, Listener, Silent
from tlsbench.run.exchange import AgentDied, AgentRef, Outcome, Repetition, Sink, StopFlag, run_request
from tlsbench.run.schedule import Batch
from tlsbench.run.timeouts import Timeouts

RunKey = tuple[int, int, int]  # (config id, first index, count): a RUN sent
Start = Callable[[str], Endpoint]  # a slot -> its endpoint, started and greeted
ONE = ""  # the slot of a host agent: one endpoint for every configuration


class ClockRecord:
    """The largest clock drift an agent reported after its RUNs, and its clock source."""

    def __init__(self) -> None:
        self.source = ""
        self.fallback = ""
        self.max_drift_ppm = 0.0
        self.checks = 0

    def update(self, clock: dict[str, Any]) -> bool:
        """Takes one DONE `clock`; True when the record changed enough to be written."""
        drift = abs(float(clock.get("drift_ppm") or 0.0))
        source, fallback = str(clock.get("source", "")), str(clock.get("fallback", ""))
        changed = (source, fallback) != (self.source, self.fallback) or drift > self.max_drift_ppm + 1.0
        self.source, self.fallback = source, fallback
        self.max_drift_ppm = max(self.max_drift_ppm, drift)
        self.checks += 1
        return changed

    def as_json(self) -> str:
        return json.dumps({"source": self.source, "max_drift_ppm": round(self.max_drift_ppm, 3),
                           "fallback": self.fallback})


@dataclass
class Running:
    """A live endpoint, its `agent` row, how its batches are read, and its RUNs under way."""

    endpoint: Endpoint
    agent_id: int
    listener: Listener
    sent: deque[RunKey] = field(default_factory=deque)  # RUNs sent ahead, not yet asked for
    in_flight: RunKey | None = None  # the RUN being collected (or interrupted)
    clock: ClockRecord = field(default_factory=ClockRecord)


class SingleAgent:
    """The batches of configurations whose peers both run in one agent, one endpoint per slot
    at a time (a host agent: one slot; the device: one per firmware image)."""

    def __init__(self, library: str, start: Start, sink: Sink, timeouts: Timeouts, stop: StopFlag,
                 slot: Callable[[Configuration], str] = lambda config: ONE, adopted: Mapping[str, Endpoint] = {},
                 dtls_timeout_ms: int = 0):
        """`start` starts the endpoint of a slot, `slot` names a configuration's; `adopted`:
        endpoints already greeted (they answered the plan's resolution); `dtls_timeout_ms`:
        a DTLS configuration's RUN timers (0: the library's)."""
        self.library, self.start, self.sink, self.timeouts, self.stop = library, start, sink, timeouts, stop
        self.slot, self.dtls_timeout_ms = slot, dtls_timeout_ms
        self.spec = specmod.load()
        self.running: dict[str, Running] = {}
        for name, endpoint in adopted.items():
            self._adopt(name, endpoint)

    def _adopt(self, slot: str, endpoint: Endpoint) -> Running:
        agent_id = self.sink.add_agent(self.library, endpoint.executable, endpoint.pid, endpoint.hello_raw,
                                       endpoint.suites_raw, endpoint.device, endpoint.placement_json)
        self.running[slot] = Running(endpoint, agent_id, endpoint.listen())
        return self.running[slot]

    def _start(self, slot: str) -> Running:
        """The slot's endpoint (started now if needed), the other slots' paused."""
        for other, running in self.running.items():
            if other != slot:
                running.endpoint.pause()
        running = self.running.get(slot) or self._adopt(slot, self.start(slot))
        running.endpoint.resume()
        return running

    # ------------------------------------------------------------------ sending
    def _request(self, config: Configuration, config_id: int, batch: Batch, warmup: int) -> protocol.RunRequest:
        timers = self.dtls_timeout_ms if config.protocol else 0
        return run_request(config, config_id, batch, warmup, dtls_timeout_min_ms=timers, dtls_timeout_max_ms=timers)

    def _send(self, running: Running, request: protocol.RunRequest) -> None:
        running.endpoint.send(request.encode())
        if running.in_flight is None and not running.sent:
            running.listener.sent()  # the agent was idle: silence counts from this RUN

    def send_ahead(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> bool:
        """Queues the RUN of the batch the controller will ask for next, so the agent starts it
        as soon as the current one is done; False when it could not be sent (no agent, one
        that takes one RUN at a time, or it is already queued). The controller must then ask
        for that batch next: the agent runs it whatever happens in between, except its death."""
        key = (config_id, batch.first_index, batch.count)
        running = self.running.get(self.slot(config))
        if running is None or not running.endpoint.queues_runs or key in running.sent:
            return False
        try:
            self._send(running, self._request(config, config_id, batch, warmup))
        except OSError:
            return False  # the death shows in the batch being collected
        running.sent.append(key)
        return True

    # ------------------------------------------------------------------ one batch
    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        """Sends the batch's RUN now (unless it was sent ahead) and returns the iterator of its
        repetitions, read the endpoint's way."""
        slot = self.slot(config)
        running = self._start(slot)
        key = (config_id, batch.first_index, batch.count)
        if running.sent and running.sent[0] == key:
            running.sent.popleft()
        else:
            assert not running.sent, f"RUN {running.sent[0]} was sent ahead and must be collected first"
            try:
                self._send(running, self._request(config, config_id, batch, warmup))
            except OSError as exc:
                raise self._died(slot, batch.first_index, f"cannot send RUN: {exc}; "
                                                          f"{running.endpoint.death_reason()}") from None
        running.in_flight = key
        return self._collect(slot, running, config_id, batch, running.endpoint.silence_s(config, warmup, self.timeouts))

    def _collect(self, slot: str, running: Running, config_id: int, batch: Batch, silence_s: float
                 ) -> Iterator[Outcome]:
        endpoint = running.endpoint
        expected, end = batch.first_index, batch.first_index + batch.count
        frames = self.spec.frames
        ref = AgentRef(running.agent_id, endpoint.pid)
        heard = running.listener.frames(silence_s, lambda: self.stop.requested)
        while True:
            try:
                frame = next(heard, None)
            except Silent as silent:
                raise self._died(slot, expected, endpoint.silenced(silent.seconds)) from None
            except Ended:
                raise self._died(slot, expected, endpoint.ended()) from None
            except protocol.FrameError as exc:
                raise self._died(slot, expected, f"corrupt frame: {exc}; {endpoint.death_reason()}") from None
            if frame is None:
                return  # stopped (what arrived is kept); the agent may still be busy: close() stops it
            if frame.type == frames.REP:
                rep = self._rep(slot, frame, config_id, expected)
                # read now: the plugin's rows of this repetition are on disk (run/cycles.py STEP_FLUSH)
                counts = endpoint.step_counts.take(rep.records) if endpoint.step_counts else None
                yield Repetition(rep, ref, counts=counts)
                expected += 1
            elif frame.type == frames.DONE:
                if expected != end:
                    raise self._died(slot, expected, f"protocol violation: DONE after {expected - batch.first_index} "
                                                     f"of {batch.count} repetitions (frame at offset {frame.offset})")
                running.in_flight = None
                self._note_clock(running, frame)
                return
            elif frame.type == frames.ERROR:
                running.in_flight = None  # refused: the agent waits for the next RUN
                raise AgentRejected(frame.json())
            else:
                raise self._died(slot, expected, f"protocol violation: unexpected {frame.type_name} frame "
                                                 f"at offset {frame.offset} during a RUN")

    def _rep(self, slot: str, frame: protocol.Frame, config_id: int, expected: int) -> protocol.Rep:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise self._died(slot, expected, f"corrupt REP: {exc}") from None
        h = rep.header
        if (h.config_id, h.index) != (config_id, expected):
            raise self._died(slot, expected, f"protocol violation: REP for config {h.config_id} repetition {h.index} "
                                             f"where config {config_id} repetition {expected} was expected "
                                             f"(frame at offset {frame.offset})")
        return rep

    def _note_clock(self, running: Running, done: protocol.Frame) -> None:
        """The clock check a host agent made after the RUN (DONE `clock`), into its agent row
        when it says something new: another source, or a larger drift."""
        if not running.endpoint.checks_clock:
            return
        try:
            clock = done.json().get("clock")
        except protocol.FrameError:
            return
        if isinstance(clock, dict) and running.clock.update(clock):
            self.sink.set_agent_clock(running.agent_id, running.clock.as_json())

    # ------------------------------------------------------------------ endings
    def _died(self, slot: str, idx: int, reason: str) -> AgentDied:
        """Stops the agent, ends its row and starts the slot's next agent at once (the batch
        goes on with the next repetition); RUNs sent ahead are lost with it."""
        dead = self.running.pop(slot)
        self._end(dead, f"died: {reason}", kill=True)
        self._start(slot)
        return AgentDied(idx, reason, dead.agent_id)

    def _end(self, running: Running, reason: str, kill: bool = False) -> None:
        """Kills the endpoint (a death: `reason` says why), or ends it (QUIT; one busy with RUNs
        may be killed instead), and ends its row."""
        endpoint = running.endpoint
        if kill:
            endpoint.kill()
        how = "" if kill else endpoint.end(busy=running.in_flight is not None or bool(running.sent))
        running.listener.close()
        try:
            self.sink.end_agent(running.agent_id, reason or f"quit ({how})")
        finally:
            endpoint.close()

    def close(self, reason: str = "") -> None:
        """QUIT to every endpoint (a paused one is resumed first); their rows end with how."""
        for running in list(self.running.values()):
            self._end(running, reason)
        self.running.clear()
