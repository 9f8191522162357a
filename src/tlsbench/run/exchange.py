# SPDX-License-Identifier: Apache-2.0
"""The one interface the controller runs batches through, and the one it stores through.

An Exchange runs a batch of one configuration and yields what happened, repetition by
repetition, raising AgentDied (the repetition in flight is lost with its agent) or
AgentRejected (run/endpoints/: the agent refused the configuration). It owns its endpoints
(agent processes, a QEMU process or a serial port: run/endpoints/) and what joins them
(namespaces, a link forwarder), and cleans them up in close(). The topologies implement it
(run/topologies/): SingleAgent (both peers in one agent: a host agent, or the device's
firmware) and AgentPair (two agents over a network).

A Sink (store/api.py: a protocol, with the row types of schema/) takes what a run records;
the store implements it, so run/ never imports a store."""
from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Iterator, Mapping, Protocol

from tlsbench.plan.configs import Configuration
from tlsbench.run import protocol
from tlsbench.run.schedule import Batch
from tlsbench.schema import LinkTraffic, PeerRepetition, TraceCounts
from tlsbench.store.api import Sink

__all__ = ["AgentDied", "AgentRef", "BatchTraffic", "Exchange", "Outcome", "Repetition", "Sink", "StopFlag",
           "run_request"]


@dataclass(frozen=True)
class AgentRef:
    """The agent process that measured a repetition: its `agent` row and its PID."""

    agent_id: int | None
    pid: int | None


@dataclass(frozen=True)
class Repetition:
    """One repetition as an exchange ran it: the measuring (device) agent's REP and, in a
    two-process run, the peer agent's REP of the same repetition; under the cycle model's
    plugin, its records' class counts (or why it has none)."""

    rep: protocol.Rep
    agent: AgentRef
    peer: PeerRepetition | None = None
    counts: TraceCounts | None = None


@dataclass(frozen=True)
class BatchTraffic:
    """What an emulated link carried for the batch's repetitions, by repetition index (after
    the batch: the link's packet log is read once the link is quiet)."""

    traffic: Mapping[int, LinkTraffic]


Outcome = Repetition | BatchTraffic


def run_request(config: Configuration, config_id: int, batch: Batch, warmup: int,
                **network: object) -> protocol.RunRequest:
    """The RUN of a batch of a configuration; `network` holds the two-process fields
    (run/topologies/pair.py), or a device's DTLS timers (run/topologies/single.py)."""
    fields = {"protocol": config.protocol, **network}  # DTLS over the memory transport, unless a variant says
    return protocol.RunRequest(config_id, config.suite_id, config.group, config.credential, config.direction,
                               config.transport, batch.count, warmup, config.row.total_bytes,
                               config.row.record_size, batch.first_index,
                               **protocol.RunRequest.options_of(config.options), experiment=config.experiment_id, **fields)  # type: ignore[arg-type]


class AgentDied(Exception):
    """The agent (or either agent of a pair) died, hung or broke the protocol while
    repetition `idx` ran; the exchange has already stopped it and ended its `agent` row."""

    def __init__(self, idx: int, reason: str, agent_id: int | None = None):
        super().__init__(reason)
        self.idx = idx
        self.reason = reason
        self.agent_id = agent_id  # the dead agent's row (None: a pair, or none yet)


class Exchange(Protocol):
    """Runs batches of configurations on a measuring target."""

    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        """Sends the batch's RUN (or finds it sent ahead) and yields each repetition in index
        order (a BatchTraffic may follow the repetitions); returns early, after a repetition,
        when a stop was requested."""
        ...

    def send_ahead(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> bool:
        """Queues the RUN of the batch the controller will run next on this exchange, so its
        target goes on without waiting for the host; False when it did not (then run() sends
        it). A batch sent ahead must be the next one asked for."""
        ...

    def close(self, reason: str = "") -> None:
        """Stops every process (their `agent` rows end with `reason`, or their exit code)."""
        ...


# Ctrl-C, and a CI's timeout or a scheduler's stop (SIGTERM): the same end, after the batch under way.
STOPPING = (signal.SIGINT, signal.SIGTERM)


class StopFlag:
    """Set by the first Ctrl-C (or SIGTERM); a second one interrupts at once."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

