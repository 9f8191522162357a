# SPDX-License-Identifier: Apache-2.0
"""What a run records of a REP frame: its repetition row (with the peer agent's REP in
two-process runs). The row types are the store's tables (schema/tables.py); the controller
hands them to its Sink (store/api.py), which writes them as they are."""
from __future__ import annotations

from tlsbench.core import spec as specmod
from tlsbench.run import protocol
from tlsbench.schema import PeerRepetition, RepetitionRow


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
