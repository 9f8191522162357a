# SPDX-License-Identifier: Apache-2.0
"""What a run records: the experiment, one row per repetition (with the peer agent's REP
and the link's traffic in two-process runs). The controller builds these from REP frames
and hands them to its Sink (run/exchange.py); the store writes them as they are."""
from __future__ import annotations

from dataclasses import dataclass

from tlsbench.core import spec as specmod
from tlsbench.run import protocol


@dataclass(frozen=True)
class Experiment:
    """The `experiment` row."""

    name: str
    plan_toml: str  # the plan as written
    plan_json: str  # the resolved plan
    plan_hash: str  # sha256 of plan_json
    seed: int
    host_json: str
    created_at: str = ""


@dataclass(frozen=True)
class DeviceFacts:
    """What an `agent` row records of one boot of a firmware (migration 007): the device, the
    unit its counter counts in, and the image (its SHA-256; variant, sizes, library and config
    as JSON)."""

    target: str
    counter_unit: str
    firmware_sha256: str
    firmware_json: str


@dataclass(frozen=True)
class RepetitionRow:
    """A `repetition` row; names (status, failed_peer) are spec names."""

    config_id: int
    idx: int
    round: int
    agent_id: int | None
    status: str
    failed_peer: str | None
    error_code: int
    error_text: str | None
    flags: int
    bytes_c2s: int | None
    bytes_s2c: int | None
    start_ns: int | None
    handshake_wall_ns: int | None
    handshake_cpu_ns: int | None
    n_events: int
    dropped_events: int
    packets_c2s: int | None = None
    packets_s2c: int | None = None
    retransmissions: int | None = None
    role: str | None = None  # spec [role] name
    repetition_wall_ns: int | None = None
    client_port: int | None = None  # two-process mode: the connection this REP names (006)
    server_port: int | None = None


@dataclass(frozen=True)
class PeerRepetition:
    """A `peer_repetition` row: the other agent's REP of a two-process repetition."""

    agent_id: int | None
    role: str
    status: str
    error_code: int
    flags: int
    bytes_c2s: int
    bytes_s2c: int
    packets_c2s: int
    packets_s2c: int
    retransmissions: int
    start_ns: int
    handshake_wall_ns: int
    repetition_wall_ns: int
    records: bytes
    client_port: int | None = None  # the connection the peer agent's REP names (006)
    server_port: int | None = None
    error_text: str | None = None  # the peer agent's failure reason


@dataclass(frozen=True)
class StoredRepetition:
    """One repetition as the controller stores it with the rest of its batch: the row, its
    raw trace records and, in a two-process run, the peer agent's REP."""

    row: RepetitionRow
    records: bytes
    peer: PeerRepetition | None = None


@dataclass(frozen=True)
class LinkTraffic:
    """A `link_traffic` row: what the emulated link carried for one repetition."""

    d2p_packets: int
    d2p_bytes: int
    d2p_fragments: int
    d2p_lost: int
    p2d_packets: int
    p2d_bytes: int
    p2d_fragments: int
    p2d_lost: int
    first_ns: int
    last_ns: int


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


def repetition_row(spec: specmod.Spec, rep: protocol.Rep, config_id: int, round_no: int, agent_id: int | None,
                   peer: PeerRepetition | None = None) -> RepetitionRow:
    """A REP as a row; with the peer agent's REP of the same repetition, the outcome of both
    (pair_outcome) and the flags and retransmissions of both."""
    h = rep.header
    status = spec.status.name(h.status)
    failed_peer = spec.peers.by_value.get(h.failed_peer) if h.failed_peer != spec.peers.none else None
    flags, retransmissions, reason = h.flags, h.retransmissions, rep.reason or None
    if peer:
        status, failed_peer, reason = pair_outcome(spec, rep, peer)
        flags |= peer.flags
        retransmissions += peer.retransmissions
    ports = h.connection if any(h.connection) else (None, None)
    return RepetitionRow(config_id, h.index, round_no, agent_id, status, failed_peer, h.error_code, reason,
                         flags, h.bytes_c2s, h.bytes_s2c, h.start_ns, h.handshake_wall_ns, h.handshake_cpu_ns,
                         h.n_records, h.dropped, h.packets_c2s, h.packets_s2c, retransmissions,
                         spec.roles.name(h.role), h.repetition_wall_ns, *ports)


def died_row(spec: specmod.Spec, config_id: int, idx: int, round_no: int, agent_id: int | None,
             reason: str) -> RepetitionRow:
    """The repetition in flight when its agent died: AGENT_DIED with the reason, no trace."""
    return RepetitionRow(config_id, idx, round_no, agent_id, spec.status.name(spec.status.AGENT_DIED),
                         None, 0, reason, 0, None, None, None, None, None, 0, 0)


def peer_row(spec: specmod.Spec, rep: protocol.Rep, agent_id: int | None) -> PeerRepetition:
    """The peer agent's REP of a two-process repetition."""
    h = rep.header
    return PeerRepetition(agent_id, spec.roles.name(h.role), spec.status.name(h.status), h.error_code, h.flags,
                          h.bytes_c2s, h.bytes_s2c, h.packets_c2s, h.packets_s2c, h.retransmissions, h.start_ns,
                          h.handshake_wall_ns, h.repetition_wall_ns, rep.records, h.client_port or None,
                          h.server_port or None, rep.reason or None)
