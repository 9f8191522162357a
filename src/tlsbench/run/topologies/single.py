# SPDX-License-Identifier: Apache-2.0
"""LocalAgentExchange: one agent process over a pipe, playing both peers in memory (or
running an experiment). The agent is the one that answered the plan's resolution when it is
handed over, else started on first use, and started again after a death.

Quiet while a batch runs (docs/host.md "A quiet controller"): a Collector (run/collect.py)
only copies the agent's bytes; the frames are checked and decoded once the batch's DONE has
arrived. With CPUs of its own for the agent, the controller may queue the RUN of the next
batch before collecting this one (send_ahead): the agent then goes from batch to batch
without waiting for the host, while the host checks and stores the batch before on its own
CPU."""
from __future__ import annotations

import io
import json
from collections import deque
from pathlib import Path
from typing import Any, Iterator, Sequence

from tlsbench.core import spec as specmod
from tlsbench.plan.configs import Configuration
from tlsbench.run import protocol
from tlsbench.run.agents import AgentProcess, AgentRejected
from tlsbench.run.endpoints.collect import Collector, Ending, Taken
from tlsbench.run.exchange import AgentDied, AgentRef, Outcome, Repetition, Sink, StopFlag, run_request
from tlsbench.run.placement import Placement
from tlsbench.run.schedule import Batch
from tlsbench.run.timeouts import Timeouts

RunKey = tuple[int, int, int]  # (config id, first index, count): a RUN sent


class LocalAgentExchange:
    """The batches of one library, on one agent process at a time."""

    def __init__(self, library: str, path: Path, sink: Sink, timeouts: Timeouts, stop: StopFlag,
                 agent: AgentProcess | None = None, placement: Placement = Placement(),
                 prefix: Sequence[str] = (), greeting_s: float | None = None):
        self.library, self.path, self.sink, self.timeouts, self.stop = library, path, sink, timeouts, stop
        self.placement = placement
        # A metric twin's agent (run/metrics.py): started behind a prefix, greeting slower.
        self.prefix, self.greeting_s = list(prefix), greeting_s or timeouts.greeting
        self.spec = specmod.load()
        self.agent: AgentProcess | None = None  # the running agent (None until first use, or after a death)
        self.agent_id = 0  # its `agent` row
        self.collector: Collector | None = None
        self.sent: deque[RunKey] = deque()  # RUNs sent ahead, not yet asked for
        self.in_flight: RunKey | None = None  # the RUN being collected (or interrupted)
        self.clock = ClockRecord()
        if agent is not None:
            self._adopt(agent)

    def _adopt(self, agent: AgentProcess) -> AgentProcess:
        self.agent_id = self.sink.add_agent(self.library, agent.path.name, agent.pid, agent.hello_raw,
                                            agent.suites_raw, placement_json=agent.placement_json)
        self.agent, self.collector, self.clock = agent, Collector(agent.proc.stdout), ClockRecord()  # type: ignore[arg-type]
        self.sent.clear()
        self.in_flight = None
        return agent

    def _running(self) -> AgentProcess:
        return self.agent or self._adopt(AgentProcess.start(self.path, self.prefix, greeting_s=self.greeting_s,
                                                            placement=self.placement))

    # ------------------------------------------------------------------ sending
    def _send(self, agent: AgentProcess, request: protocol.RunRequest) -> None:
        agent.run(request)
        if self.in_flight is None and not self.sent:
            assert self.collector is not None
            self.collector.touch()  # the agent was idle: silence counts from this RUN

    def send_ahead(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> bool:
        """Queues the RUN of the batch the controller will ask for next, so the agent starts it
        as soon as the current one is done; False when it could not be sent (no agent, or it
        is already queued). The controller must then ask for that batch next: the agent runs
        it whatever happens in between, except its death."""
        key = (config_id, batch.first_index, batch.count)
        if self.agent is None or key in self.sent:
            return False
        try:
            self._send(self.agent, run_request(config, config_id, batch, warmup))
        except (BrokenPipeError, OSError):
            return False  # the death shows in the batch being collected
        self.sent.append(key)
        return True

    # ------------------------------------------------------------------ one batch
    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        """Sends the batch's RUN now (unless it was sent ahead) and returns the iterator of its
        repetitions, which are collected when the batch has ended."""
        agent = self._running()
        key = (config_id, batch.first_index, batch.count)
        if self.sent and self.sent[0] == key:
            self.sent.popleft()
        else:
            assert not self.sent, f"RUN {self.sent[0]} was sent ahead and must be collected first"
            try:
                self._send(agent, run_request(config, config_id, batch, warmup))
            except (BrokenPipeError, OSError) as exc:
                raise self._died(batch.first_index, f"cannot send RUN: {exc}; {agent.death_reason()}") from None
        self.in_flight = key
        return self._collect(agent, config_id, batch)

    def _collect(self, agent: AgentProcess, config_id: int, batch: Batch) -> Iterator[Outcome]:
        assert self.collector is not None
        taken = self.collector.wait(self.timeouts.silence, lambda: self.stop.requested)
        expected, end = batch.first_index, batch.first_index + batch.count
        frames = self.spec.frames
        reader = protocol.FrameReader(io.BytesIO(taken.data), taken.offset)
        ref = AgentRef(self.agent_id, agent.pid)
        while True:
            try:
                frame = reader.read()
            except protocol.FrameError as exc:
                raise self._died(expected, f"corrupt frame: {exc}; {agent.death_reason()}") from None
            if frame is None:
                break
            if frame.type == frames.REP:
                yield Repetition(self._rep(frame, config_id, expected), ref)
                expected += 1
            elif frame.type == frames.DONE:
                if expected != end:
                    raise self._died(expected, f"protocol violation: DONE after {expected - batch.first_index} of "
                                               f"{batch.count} repetitions (frame at offset {frame.offset})")
                self.in_flight = None
                self._note_clock(frame)
                return
            elif frame.type == frames.ERROR:
                self.in_flight = None  # refused: the agent waits for the next RUN
                raise AgentRejected(frame.json())
            else:
                raise self._died(expected, f"protocol violation: unexpected {frame.type_name} frame "
                                           f"at offset {frame.offset} during a RUN")
        self._unfinished(agent, taken, expected)

    def _unfinished(self, agent: AgentProcess, taken: Taken, expected: int) -> None:
        """The batch's frames ended before its DONE: stopped (what arrived is kept), or a death."""
        if taken.ending is Ending.STOPPED:
            return  # the agent is still busy (in_flight): close() kills it
        if taken.ending is Ending.SILENT:
            agent.kill()
            raise self._died(expected, f"no frame for {self.timeouts.silence:.0f} s, killed as hung; end of stream; "
                                       f"{agent.death_reason()}")
        raise self._died(expected, f"end of stream; {agent.death_reason()}")

    def _rep(self, frame: protocol.Frame, config_id: int, expected: int) -> protocol.Rep:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise self._died(expected, f"corrupt REP: {exc}") from None
        h = rep.header
        if (h.config_id, h.index) != (config_id, expected):
            raise self._died(expected, f"protocol violation: REP for config {h.config_id} repetition {h.index} "
                                       f"where config {config_id} repetition {expected} was expected "
                                       f"(frame at offset {frame.offset})")
        return rep

    def _note_clock(self, done: protocol.Frame) -> None:
        """The clock check the agent made after the RUN (DONE `clock`), into its agent row
        when it says something new: another source, or a larger drift."""
        try:
            clock = done.json().get("clock")
        except protocol.FrameError:
            return
        if isinstance(clock, dict) and self.clock.update(clock):
            self.sink.set_agent_clock(self.agent_id, self.clock.as_json())

    # ------------------------------------------------------------------ endings
    def _died(self, idx: int, reason: str) -> AgentDied:
        """Stops the agent, ends its row and starts the next agent at once (the batch goes on
        with the next repetition); RUNs sent ahead are lost with it."""
        dead_id = self.agent_id
        self._end(f"died: {reason}", kill=True)
        self._running()
        return AgentDied(idx, reason, dead_id)

    def _end(self, reason: str, kill: bool = False) -> None:
        agent, self.agent = self.agent, None
        if agent is None:
            return
        busy = self.in_flight is not None or bool(self.sent)  # QUIT would wait for its RUNs
        code = agent.kill() if kill or busy else agent.quit()
        if self.collector:
            self.collector.close()
        self.sent.clear()
        self.in_flight = None
        try:
            self.sink.end_agent(self.agent_id, reason or f"quit (exit code {code})")
        finally:
            agent.close()

    def close(self, reason: str = "") -> None:
        self._end(reason)


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
