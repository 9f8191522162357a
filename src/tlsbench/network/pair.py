# SPDX-License-Identifier: Apache-2.0
"""One batch of a two-process configuration: the device agent and the peer agent, each
playing one peer over a real socket, on loopback or in the link emulator's namespaces.

The server-side agent gets its RUN first and answers READY once bound (with its port); the
client-side agent's RUN follows. REPs of both agents are read at once (a thread per agent
feeds one queue) and paired by repetition index: the device's REP becomes the repetition
row and trace, the peer's is stored next to it in the same transaction. After the batch,
the link's packet log is attributed to the batch's repetitions (network/link.py)."""
from __future__ import annotations

import hashlib
import queue
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tlsbench import protocol, schedule
from tlsbench import spec as specmod
from tlsbench.agents import AgentProcess, AgentRejected
from tlsbench.network.link import (DEVICE_ADDRESS, PEER_ADDRESS, Forwarder, Namespaces, Window, attribute,
                                   link_binary)
from tlsbench.network.plan import MAX_FRAGMENT_CODES, Link, Variant, timeouts
from tlsbench.store.sqlite import PeerRepetition

if TYPE_CHECKING:
    from tlsbench.controller import Configuration, Controller, RunSummary

LOOPBACK = "127.0.0.1"
# Every connection starts from scratch: the kernel must not reuse RTT / window estimates it
# cached from the previous repetition's connection to the same address.
NAMESPACE_SYSCTLS = ("net.ipv4.tcp_no_metrics_save=1",)


def pair_outcome(spec: specmod.Spec, device: protocol.Rep,
                 peer: PeerRepetition) -> tuple[str, str | None, str | None]:
    """(status, failed peer, reason) of a two-process repetition (docs/networks.md
    "Identity"): REPs that name different connections ran different repetitions and are
    MISMATCHED; otherwise the first failure of either side. A failure keeps both agents'
    reasons."""
    h, ok = device.header, spec.status.name(spec.status.OK)
    status = spec.status.name(h.status)
    failed_peer = spec.peers.by_value.get(h.failed_peer) if h.failed_peer != spec.peers.none else None
    theirs = (peer.client_port or 0, peer.server_port or 0)
    why = ""
    if all(h.connection) and all(theirs) and h.connection != theirs:
        status, failed_peer = spec.status.name(spec.status.MISMATCHED), None
        why = f"the agents ran different connections (client port, server port): device {h.connection}, " \
              f"peer {theirs}; "
    elif status == ok and peer.status != ok:
        status, failed_peer = peer.status, peer.role
    if status == ok:
        return status, failed_peer, None
    return status, failed_peer, (f"{why}device ({spec.roles.name(h.role)}): {device.reason or spec.status.name(h.status)}"
                                 f"; peer ({peer.role}): {peer.error_text or peer.status}")


class PairDied(Exception):
    """An agent of the pair died, hung or broke the protocol while repetition `idx` ran."""

    def __init__(self, idx: int, reason: str):
        super().__init__(reason)
        self.idx = idx
        self.reason = reason


@dataclass
class PairedAgent:
    """An agent process whose frames a thread pushes into the runner's queue."""

    process: AgentProcess
    agent_id: int
    side: str  # "dev" or "peer"
    inbox: queue.Queue[tuple["PairedAgent", Any]]

    def __post_init__(self) -> None:
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        try:
            while (frame := self.process.read_frame()) is not None:
                self.inbox.put((self, frame))
            self.inbox.put((self, None))
        except protocol.FrameError as exc:
            self.inbox.put((self, exc))
        except (OSError, ValueError):  # the stream was closed under us: the agent was stopped
            self.inbox.put((self, None))


@dataclass
class BatchState:
    """REPs received but not yet paired, per side."""

    expected: int
    end: int
    waiting: dict[str, dict[int, protocol.Rep]] = field(default_factory=lambda: {"dev": {}, "peer": {}})
    next_index: dict[str, int] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    rep_ids: dict[int, int] = field(default_factory=dict)  # index -> repetition id
    windows: list[Window] = field(default_factory=list)  # the client agent's repetitions


class NetworkRunner:
    """The controller's two-process mode: agents per (library, side, place), the namespaces
    and the link forwarder, kept across batches."""

    def __init__(self, ctl: "Controller"):
        self.ctl = ctl
        self.spec = ctl.spec
        self.inbox: queue.Queue[tuple[PairedAgent, Any]] = queue.Queue()
        self.agents: dict[tuple[str, str, bool], PairedAgent] = {}
        self.namespaces: Namespaces | None = None
        self.forwarder: Forwarder | None = None

    # ------------------------------------------------------------------ places
    def _link_name(self) -> str:
        """One namespace pair per experiment folder: two experiments can run at once."""
        return "tb" + hashlib.sha1(str(self.ctl.store.path.resolve()).encode()).hexdigest()[:10]

    def _batch_seed(self, key: str, batch: schedule.Batch) -> int:
        """The link's seed for one batch: reproducible run to run, different per configuration
        and batch (a restarted forwarder counts packets from 0 again: one seed for every
        batch would drop the same packets of every batch)."""
        net = self.ctl.plan.network
        assert net is not None
        base = net.link_seed if net.link_seed is not None else self.ctl.plan.seed
        digest = hashlib.sha256(f"{base}|{key}|{batch.first_index}".encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1

    def _ensure_link(self, link: Link | None, seed: int) -> None:
        if link is None:
            return
        net = self.ctl.plan.network
        assert net is not None
        if self.namespaces is None:
            namespaces = Namespaces(link_binary(self.ctl.agent_dir), self._link_name())
            sysctls = [*NAMESPACE_SYSCTLS, *([] if net.sack else ["net.ipv4.tcp_sack=0"])]
            namespaces.up(net.tun_mtu, sysctls)
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
            path = self.ctl.agent_path(library)
            process = AgentProcess.start(path, prefix, greeting_s=self.ctl.timeouts.greeting)
            agent_id = self.ctl.store.add_agent(library, path.name, process.pid, process.hello_raw,
                                                process.suites_raw)
            self.agents[key] = PairedAgent(process, agent_id, side, self.inbox)
        return self.agents[key]

    # ------------------------------------------------------------------ one batch
    def exchange(self, config: "Configuration", config_id: int, batch: schedule.Batch,
                 summary: "RunSummary") -> int:
        """Runs the batch; returns the index after the last stored repetition."""
        variant = config.variant
        assert variant is not None
        self._ensure_link(variant.link, self._batch_seed(config.key, batch))
        linked = variant.link is not None
        device = self._agent(config.row.library, "dev", linked)
        peer = self._agent(variant.peer_library or config.row.library, "peer", linked)
        server, client = (device, peer) if variant.device_role == "server" else (peer, device)
        address = (DEVICE_ADDRESS if server is device else PEER_ADDRESS) if linked else LOOPBACK
        fields = self._network_fields(variant, address)
        roles = self.spec.roles
        state = BatchState(batch.first_index, batch.first_index + batch.count)
        self._send(server, config.request(config_id, batch, self.ctl.plan.warmup, role=roles.server, port=0,
                                          **fields), state)
        port = self._await_ready(server, state)
        self._send(client, config.request(config_id, batch, self.ctl.plan.warmup, role=roles.client, port=port,
                                          **fields), state)
        try:
            self._collect(config, config_id, batch, state, (device, peer), client, summary)
        finally:
            self._store_link_traffic(state)
        return state.expected

    def _network_fields(self, variant: Variant, address: str) -> dict[str, Any]:
        net = self.ctl.plan.network
        assert net is not None
        return dict(protocol=self.spec.protocol_kinds.value(variant.protocol), family=4,
                    max_fragment=MAX_FRAGMENT_CODES[variant.max_fragment], addr=socket.inet_aton(address),
                    tcp_mss=variant.mss, dtls_timeout_min_ms=net.dtls.timeout_min_ms,
                    dtls_timeout_max_ms=net.dtls.timeout_max_ms, dtls_mtu=variant.dtls_mtu)

    def _send(self, agent: PairedAgent, request: protocol.RunRequest, state: BatchState) -> None:
        try:
            agent.process.run(request)
        except (BrokenPipeError, OSError) as exc:
            raise PairDied(state.expected, f"cannot send RUN to the {agent.side} agent: {exc}; "
                                           f"{agent.process.death_reason()}") from None

    def _next(self, state: BatchState, timeout: float) -> tuple[PairedAgent, protocol.Frame]:
        """The next frame of a current agent; deaths and silence become PairDied."""
        current = set(map(id, self.agents.values()))
        while True:
            try:
                agent, item = self.inbox.get(timeout=timeout)
            except queue.Empty:
                raise PairDied(state.expected, f"no frame from either agent for {timeout:.0f} s: killed as hung")
            if id(agent) not in current:
                continue  # left over from an agent stopped earlier
            if isinstance(item, protocol.Frame):
                self.ctl.note_frame()
                return agent, item
            what = f"corrupt frame: {item}" if item is not None else "end of stream"
            raise PairDied(state.expected, f"the {agent.side} agent: {what}; {agent.process.death_reason()}")

    def _await_ready(self, server: PairedAgent, state: BatchState) -> int:
        frames = self.spec.frames
        agent, frame = self._next(state, self.ctl.timeouts.ready)
        if agent is server and frame.type == frames.READY:
            return int(frame.json()["port"])
        if frame.type == frames.ERROR:
            raise AgentRejected(frame.json())
        raise PairDied(state.expected, f"protocol violation: {frame.type_name} from the {agent.side} agent "
                                       "where the server's READY was expected")

    def _collect(self, config: "Configuration", config_id: int, batch: schedule.Batch, state: BatchState,
                 pair: tuple[PairedAgent, PairedAgent], client: PairedAgent, summary: "RunSummary") -> None:
        frames = self.spec.frames
        state.next_index = {"dev": batch.first_index, "peer": batch.first_index}
        net = self.ctl.plan.network
        assert net is not None and config.variant is not None
        # The controller waits longest: an agent may stay silent while its peer gives up and
        # the server waits for its next client (docs/networks.md "Timeouts").
        hang = max(self.ctl.hang_timeout, timeouts(config.variant, net.dtls).hang)
        while len(state.done) < 2:
            agent, frame = self._next(state, hang)
            if frame.type == frames.REP:
                self._take_rep(agent, frame, config_id, state)
                if agent is client:
                    h = state.waiting[agent.side][state.next_index[agent.side] - 1].header
                    state.windows.append(Window(h.index, h.start_ns, h.start_ns + h.repetition_wall_ns))
                self._store_pairs(config, config_id, batch, state, pair, summary)
                if self.ctl.stop.requested:
                    self.stop_all("interrupted")
                    return
            elif frame.type == frames.DONE:
                if state.next_index[agent.side] != state.end:
                    raise PairDied(state.expected, f"protocol violation: the {agent.side} agent sent DONE after "
                                                   f"{state.next_index[agent.side] - batch.first_index} of "
                                                   f"{batch.count} repetitions")
                state.done.add(agent.side)
            elif frame.type == frames.ERROR:
                self.stop_all(f"the {agent.side} agent refused the RUN")
                raise AgentRejected(frame.json())
            else:
                raise PairDied(state.expected, f"protocol violation: unexpected {frame.type_name} frame "
                                               f"from the {agent.side} agent during a RUN")

    def _take_rep(self, agent: PairedAgent, frame: protocol.Frame, config_id: int, state: BatchState) -> None:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise PairDied(state.expected, f"corrupt REP from the {agent.side} agent: {exc}") from None
        want = state.next_index[agent.side]
        if (rep.header.config_id, rep.header.index) != (config_id, want):
            raise PairDied(state.expected, f"protocol violation: the {agent.side} agent sent REP for config "
                                           f"{rep.header.config_id} repetition {rep.header.index} where config "
                                           f"{config_id} repetition {want} was expected")
        state.waiting[agent.side][want] = rep
        state.next_index[agent.side] = want + 1

    def _store_pairs(self, config: "Configuration", config_id: int, batch: schedule.Batch, state: BatchState,
                     pair: tuple[PairedAgent, PairedAgent], summary: "RunSummary") -> None:
        """Stores every repetition both agents have reported, in index order."""
        device, peer = pair
        while state.expected in state.waiting["dev"] and state.expected in state.waiting["peer"]:
            mine = state.waiting["dev"].pop(state.expected)
            theirs = state.waiting["peer"].pop(state.expected)
            state.rep_ids[state.expected] = self.ctl.store_pair(config_id, batch, mine, device.process,
                                                                device.agent_id, self._peer_row(theirs, peer),
                                                                summary)
            state.expected += 1

    def _peer_row(self, rep: protocol.Rep, agent: PairedAgent) -> PeerRepetition:
        h = rep.header
        return PeerRepetition(agent.agent_id, self.spec.roles.name(h.role), self.spec.status.name(h.status),
                              h.error_code, h.flags, h.bytes_c2s, h.bytes_s2c, h.packets_c2s, h.packets_s2c,
                              h.retransmissions, h.start_ns, h.handshake_wall_ns, h.repetition_wall_ns, rep.records,
                              h.client_port or None, h.server_port or None, rep.reason or None)

    def _store_link_traffic(self, state: BatchState) -> None:
        if self.forwarder is None or not state.rep_ids:
            return
        traffic = attribute(self.forwarder.drain(), [w for w in state.windows if w.index in state.rep_ids])
        self.ctl.store.add_link_traffic([(state.rep_ids[i], t) for i, t in sorted(traffic.items())])

    # ------------------------------------------------------------------ endings
    def stop_all(self, reason: str) -> None:
        """Kills every agent of the pair mode (after a death: the survivor may wait forever)."""
        for agent in self.agents.values():
            agent.process.kill()
            self.ctl.store.end_agent(agent.agent_id, reason)
            agent.process.close()
        self.agents.clear()

    def close(self, reason: str) -> None:
        for agent in self.agents.values():
            code = agent.process.quit()
            self.ctl.store.end_agent(agent.agent_id, reason or f"quit (exit code {code})")
            agent.process.close()
        self.agents.clear()
        if self.forwarder:
            self.forwarder.stop()
            self.forwarder = None
        if self.namespaces:
            self.namespaces.down()
            self.namespaces = None
