# SPDX-License-Identifier: Apache-2.0
"""AgentPair: the batches of two-process configurations. The device agent and the peer
agent (each a ProcessEndpoint, run/endpoints/process.py) play one peer each over a real
socket, on loopback or in the link emulator's namespaces (run/link.py).

The server-side agent gets its RUN first and answers READY once bound (with its port); the
client-side agent's RUN follows. REPs of both agents are read at once (a thread per agent
feeds one Inbox) and paired by repetition index: the device's REP is the repetition, the
peer's goes with it. After the batch, the link's packet log is attributed to the batch's
repetitions."""
from __future__ import annotations

import hashlib
import queue
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from tlsbench.core import spec as specmod
from tlsbench.plan.configs import Configuration
from tlsbench.plan.network import MAX_FRAGMENT_CODES, Link, NetworkPlan, Variant
from tlsbench.run import protocol
from tlsbench.run.endpoints import AgentRejected
from tlsbench.run.endpoints.inbox import Inbox
from tlsbench.run.endpoints.process import ProcessEndpoint
from tlsbench.run.exchange import AgentDied, AgentRef, BatchTraffic, Outcome, Repetition, Sink, StopFlag, run_request
from tlsbench.run.link import (DEVICE_ADDRESS, PEER_ADDRESS, Forwarder, Namespaces, Window, attribute, link_binary,
                               owned_name, remove_orphans)
from tlsbench.run.pace import PaceFiles, Pacing
from tlsbench.run.placement import Placement
from tlsbench.run.records import peer_row
from tlsbench.run.schedule import Batch
from tlsbench.run.timeouts import Timeouts, pair_waits

LOOPBACK = "127.0.0.1"
# Every connection starts from scratch: the kernel must not reuse RTT / window estimates it
# cached from the previous repetition's connection to the same address.
NAMESPACE_SYSCTLS = ("net.ipv4.tcp_no_metrics_save=1",)
SIDES = ("dev", "peer")


@dataclass
class PairedAgent:
    """An agent process of the pair and its `agent` row."""

    process: ProcessEndpoint
    agent_id: int
    side: str  # "dev" or "peer"


@dataclass
class BatchState:
    """REPs received but not yet paired, per side."""

    expected: int
    end: int
    waiting: dict[str, dict[int, protocol.Rep]] = field(default_factory=lambda: {side: {} for side in SIDES})
    next_index: dict[str, int] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    paired: set[int] = field(default_factory=set)  # indices yielded
    windows: list[Window] = field(default_factory=list)  # the client agent's repetitions


def link_name(place: str) -> str:
    """One namespace pair per experiment folder (`place`: two experiments can run at once) and
    run (its PID: a killed run's are removed by the next run that uses links, or `tlsbench clean`)."""
    return owned_name("tb" + hashlib.sha1(place.encode()).hexdigest()[:10])


class AgentPair:
    """Agents per (library, side, linked), the namespaces and the link forwarder, kept across
    batches; every two-process configuration of a plan runs here."""

    def __init__(self, network: NetworkPlan, seed: int, find_agent: Callable[[str], Path], sink: Sink,
                 timeouts: Timeouts, stop: StopFlag, place: str, agent_dir: str | Path | None = None,
                 placement: Placement = Placement(), pacing: Pacing | None = None):
        self.net, self.seed, self.find_agent, self.sink = network, seed, find_agent, sink
        self.pace = PaceFiles(pacing) if pacing else None
        self.timeouts, self.stop, self.place, self.agent_dir = timeouts, stop, place, agent_dir
        self.placement = placement
        self.spec = specmod.load()
        self.inbox: Inbox[PairedAgent] = Inbox()
        self.agents: dict[tuple[str, str, bool], PairedAgent] = {}
        self.namespaces: Namespaces | None = None
        self.forwarder: Forwarder | None = None

    # ------------------------------------------------------------------ places
    def _batch_seed(self, key: str, batch: Batch) -> int:
        """The link's seed for one batch: reproducible run to run, different per configuration
        and batch (a restarted forwarder counts packets from 0 again: one seed for every
        batch would drop the same packets of every batch)."""
        base = self.net.link_seed if self.net.link_seed is not None else self.seed
        digest = hashlib.sha256(f"{base}|{key}|{batch.first_index}".encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1

    def _ensure_link(self, link: Link | None, seed: int) -> None:
        if link is None:
            return
        if self.namespaces is None:
            namespaces = Namespaces(link_binary(self.agent_dir), link_name(self.place))
            remove_orphans(self.agent_dir)  # a killed run's, whatever plan it ran
            sysctls = [*NAMESPACE_SYSCTLS, *([] if self.net.sack else ["net.ipv4.tcp_sack=0"])]
            namespaces.up(self.net.tun_mtu, sysctls)
            self.namespaces = namespaces
        if self.forwarder is None or (self.forwarder.link, self.forwarder.seed) != (link, seed):
            if self.forwarder:
                self.forwarder.stop()
            self.forwarder = Forwarder(self.namespaces.binary, self.namespaces.name, link, seed)
            self.forwarder.start()

    def _agent(self, library: str, side: str, linked: bool) -> PairedAgent:
        key = (library, side, linked)
        if key not in self.agents:
            prefix = self.namespaces.exec_prefix(side) if linked and self.namespaces else []
            prefix += self.pace.prefix(side) if self.pace else []
            path = self.find_agent(library)
            process = ProcessEndpoint.start(path, prefix, greeting_s=self.timeouts.greeting, placement=self.placement)
            agent_id = self.sink.add_agent(library, path.name, process.pid, process.hello_raw, process.suites_raw,
                                           placement_json=process.placement_json)
            self.agents[key] = PairedAgent(process, agent_id, side)
            self.inbox.listen(process, self.agents[key])
        return self.agents[key]

    # ------------------------------------------------------------------ one batch
    def send_ahead(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> bool:
        """Never: a pair's client RUN waits for its server's READY of the same batch."""
        return False

    def run(self, config_id: int, config: Configuration, batch: Batch, warmup: int) -> Iterator[Outcome]:
        variant = config.variant
        assert variant is not None
        self._ensure_link(variant.link, self._batch_seed(config.key, batch))
        linked = variant.link is not None
        device = self._agent(config.row.library, "dev", linked)
        peer = self._agent(variant.peer_library or config.row.library, "peer", linked)
        server, client = (device, peer) if variant.device_role == "server" else (peer, device)
        if self.pace:
            other = "client" if variant.device_role == "server" else "server"
            self.pace.write("dev", config_id, config.key, variant.device_role)
            self.pace.write("peer", config_id, config.key, other)
        address = (DEVICE_ADDRESS if server is device else PEER_ADDRESS) if linked else LOOPBACK
        fields = self._network_fields(variant, address)
        roles = self.spec.roles
        state = BatchState(batch.first_index, batch.first_index + batch.count)
        self._send(server, run_request(config, config_id, batch, warmup, role=roles.server, port=0, **fields), state)
        port = self._await_ready(server, state)
        self._send(client, run_request(config, config_id, batch, warmup, role=roles.client, port=port, **fields),
                   state)
        try:
            yield from self._collect(config_id, variant, batch, state, (device, peer), client)
        except (AgentDied, AgentRejected):  # what was stored of the batch keeps its traffic
            yield from self._link_traffic(state)
            raise
        yield from self._link_traffic(state)

    def _network_fields(self, variant: Variant, address: str) -> dict[str, Any]:
        return dict(protocol=self.spec.protocol_kinds.value(variant.protocol), family=4,
                    max_fragment=MAX_FRAGMENT_CODES[variant.max_fragment], addr=socket.inet_aton(address),
                    tcp_mss=variant.mss, dtls_timeout_min_ms=self.net.dtls.timeout_min_ms,
                    dtls_timeout_max_ms=self.net.dtls.timeout_max_ms, dtls_mtu=variant.dtls_mtu)

    def _send(self, agent: PairedAgent, request: protocol.RunRequest, state: BatchState) -> None:
        try:
            agent.process.send(request.encode())
        except (BrokenPipeError, OSError) as exc:
            raise self._died(state, f"cannot send RUN to the {agent.side} agent: {exc}; "
                                    f"{agent.process.death_reason()}") from None

    def _next(self, state: BatchState, timeout: float) -> tuple[PairedAgent, protocol.Frame]:
        """The next frame of a current agent; deaths and silence stop the pair."""
        current = set(map(id, self.agents.values()))
        while True:
            try:
                agent, heard = self.inbox.next(timeout)
            except queue.Empty:
                raise self._died(state, f"no frame from either agent for {timeout:.0f} s: killed as hung") from None
            if id(agent) not in current:
                continue  # left over from an agent stopped earlier
            if isinstance(heard, protocol.Frame):
                return agent, heard
            what = f"corrupt frame: {heard}" if heard is not None else "end of stream"
            raise self._died(state, f"the {agent.side} agent: {what}; {agent.process.death_reason()}")

    def _await_ready(self, server: PairedAgent, state: BatchState) -> int:
        frames = self.spec.frames
        agent, frame = self._next(state, self.timeouts.ready)
        if agent is server and frame.type == frames.READY:
            return int(frame.json()["port"])
        if frame.type == frames.ERROR:
            raise AgentRejected(frame.json())
        raise self._died(state, f"protocol violation: {frame.type_name} from the {agent.side} agent "
                                "where the server's READY was expected")

    def _collect(self, config_id: int, variant: Variant, batch: Batch, state: BatchState,
                 pair: tuple[PairedAgent, PairedAgent], client: PairedAgent) -> Iterator[Outcome]:
        frames = self.spec.frames
        state.next_index = {side: batch.first_index for side in SIDES}
        # The controller waits longest: an agent may stay silent while its peer gives up and
        # the server waits for its next client (docs/networks.md "Timeouts").
        hang = max(self.timeouts.silence, pair_waits(variant, self.net.dtls).hang)
        while len(state.done) < 2:
            agent, frame = self._next(state, hang)
            if frame.type == frames.REP:
                self._take_rep(agent, frame, config_id, state)
                if agent is client:
                    h = state.waiting[agent.side][state.next_index[agent.side] - 1].header
                    state.windows.append(Window(h.index, h.start_ns, h.start_ns + h.repetition_wall_ns))
                yield from self._pairs(state, *pair)
                if self.stop.requested:
                    self.stop_all("interrupted")
                    return
            elif frame.type == frames.DONE:
                if state.next_index[agent.side] != state.end:
                    raise self._died(state, f"protocol violation: the {agent.side} agent sent DONE after "
                                            f"{state.next_index[agent.side] - batch.first_index} of "
                                            f"{batch.count} repetitions")
                state.done.add(agent.side)
            elif frame.type == frames.ERROR:
                self.stop_all(f"the {agent.side} agent refused the RUN")
                raise AgentRejected(frame.json())
            else:
                raise self._died(state, f"protocol violation: unexpected {frame.type_name} frame "
                                        f"from the {agent.side} agent during a RUN")

    def _take_rep(self, agent: PairedAgent, frame: protocol.Frame, config_id: int, state: BatchState) -> None:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise self._died(state, f"corrupt REP from the {agent.side} agent: {exc}") from None
        want = state.next_index[agent.side]
        if (rep.header.config_id, rep.header.index) != (config_id, want):
            raise self._died(state, f"protocol violation: the {agent.side} agent sent REP for config "
                                    f"{rep.header.config_id} repetition {rep.header.index} where config "
                                    f"{config_id} repetition {want} was expected")
        state.waiting[agent.side][want] = rep
        state.next_index[agent.side] = want + 1

    def _pairs(self, state: BatchState, device: PairedAgent, peer: PairedAgent) -> Iterator[Repetition]:
        """Every repetition both agents have reported, in index order."""
        while state.expected in state.waiting["dev"] and state.expected in state.waiting["peer"]:
            mine = state.waiting["dev"].pop(state.expected)
            theirs = state.waiting["peer"].pop(state.expected)
            yield Repetition(mine, AgentRef(device.agent_id, device.process.pid),
                             peer_row(self.spec, theirs, peer.agent_id))
            state.paired.add(state.expected)
            state.expected += 1

    def _link_traffic(self, state: BatchState) -> Iterator[BatchTraffic]:
        """What the link carried for the batch's paired repetitions (none without a link)."""
        if self.forwarder is None or not state.paired:
            return
        traffic = attribute(self.forwarder.drain(), [w for w in state.windows if w.index in state.paired])
        if traffic:
            yield BatchTraffic(traffic)

    def _died(self, state: BatchState, reason: str) -> AgentDied:
        """The pair is stopped (the survivor may wait forever); the next batch starts it again."""
        self.stop_all(f"died: {reason}")
        return AgentDied(state.expected, reason)

    # ------------------------------------------------------------------ endings
    def stop_all(self, reason: str) -> None:
        """Kills every agent of the pair mode."""
        for agent in self.agents.values():
            agent.process.kill()
            self.sink.end_agent(agent.agent_id, reason)
            agent.process.close()
        self.agents.clear()

    def close(self, reason: str = "") -> None:
        for agent in self.agents.values():
            how = agent.process.end()
            self.sink.end_agent(agent.agent_id, reason or f"quit ({how})")
            agent.process.close()
        self.agents.clear()
        if self.forwarder:
            self.forwarder.stop()
            self.forwarder = None
        if self.namespaces:
            self.namespaces.down()
            self.namespaces = None
        if self.pace:
            self.pace.remove()
