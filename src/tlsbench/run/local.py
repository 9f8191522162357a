# SPDX-License-Identifier: Apache-2.0
"""LocalAgentExchange: one agent process over a pipe, playing both peers in memory (or
running an experiment). The agent is the one that answered the plan's resolution when it is
handed over, else started on first use, and started again after a death."""
from __future__ import annotations

import queue
from pathlib import Path
from typing import Iterator

from tlsbench import spec as specmod
from tlsbench.plan.configs import Configuration
from tlsbench.run import protocol
from tlsbench.run.agents import AgentProcess, AgentRejected
from tlsbench.run.exchange import AgentDied, AgentRef, Inbox, Outcome, Repetition, Sink, StopFlag, run_request
from tlsbench.run.schedule import Batch
from tlsbench.run.timeouts import Timeouts


class LocalAgentExchange:
    """The batches of one library, on one agent process at a time."""

    def __init__(self, library: str, path: Path, sink: Sink, timeouts: Timeouts, stop: StopFlag,
                 agent: AgentProcess | None = None):
        self.library, self.path, self.sink, self.timeouts, self.stop = library, path, sink, timeouts, stop
        self.spec = specmod.load()
        self.agent: AgentProcess | None = None  # the running agent (None until first use, or after a death)
        self.agent_id = 0  # its `agent` row
        self.inbox: Inbox[None] = Inbox()
        if agent is not None:
            self._adopt(agent)

    def _adopt(self, agent: AgentProcess) -> AgentProcess:
        self.agent_id = self.sink.add_agent(self.library, agent.path.name, agent.pid, agent.hello_raw,
                                            agent.suites_raw)
        self.agent, self.inbox = agent, Inbox()
        self.inbox.listen(agent, None)
        return agent

    def _running(self) -> AgentProcess:
        return self.agent or self._adopt(AgentProcess.start(self.path, greeting_s=self.timeouts.greeting))

    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        agent = self._running()
        expected, end = batch.first_index, batch.first_index + batch.count
        try:
            agent.run(run_request(config, config_id, batch, warmup))
        except (BrokenPipeError, OSError) as exc:
            raise self._died(expected, f"cannot send RUN: {exc}; {agent.death_reason()}") from None
        frames = self.spec.frames
        while True:
            frame = self._next_frame(agent, expected)
            if frame.type == frames.REP:
                yield Repetition(self._rep(frame, config_id, expected), AgentRef(self.agent_id, agent.pid))
                expected += 1
                if self.stop.requested:
                    return
            elif frame.type == frames.DONE:
                if expected != end:
                    raise self._died(expected, f"protocol violation: DONE after {expected - batch.first_index} of "
                                               f"{batch.count} repetitions (frame at offset {frame.offset})")
                return
            elif frame.type == frames.ERROR:
                raise AgentRejected(frame.json())
            else:
                raise self._died(expected, f"protocol violation: unexpected {frame.type_name} frame "
                                           f"at offset {frame.offset} during a RUN")

    def _next_frame(self, agent: AgentProcess, expected: int) -> protocol.Frame:
        """The agent's next frame; silence, a corrupt frame or the stream's end is a death."""
        try:
            _, heard = self.inbox.next(self.timeouts.silence)
        except queue.Empty:
            agent.kill()
            raise self._died(expected, f"no frame for {self.timeouts.silence:.0f} s, killed as hung; end of stream; "
                                       f"{agent.death_reason()}") from None
        if isinstance(heard, protocol.FrameError):
            raise self._died(expected, f"corrupt frame: {heard}; {agent.death_reason()}")
        if heard is None:
            raise self._died(expected, f"end of stream; {agent.death_reason()}")
        return heard

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

    def _died(self, idx: int, reason: str) -> AgentDied:
        """Stops the agent, ends its row and starts the next agent at once (the batch goes on
        with the next repetition)."""
        dead_id = self.agent_id
        self._end(f"died: {reason}", kill=True)
        self._running()
        return AgentDied(idx, reason, dead_id)

    def _end(self, reason: str, kill: bool = False) -> None:
        agent, self.agent = self.agent, None
        if agent is None:
            return
        code = agent.kill() if kill else agent.quit()
        try:
            self.sink.end_agent(self.agent_id, reason or f"quit (exit code {code})")
        finally:
            agent.close()

    def close(self, reason: str = "") -> None:
        self._end(reason)
