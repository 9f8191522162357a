# SPDX-License-Identifier: Apache-2.0
"""What a stored repetition says each peer did, in order: the input of a prediction.

Per repetition and peer, a flat list of actions read off its trace:

- CPU ns: processing of a step or record (the analysis' own processing: duration − nested
  I/O − tracer overhead, analysis/derive/measures.py), split at the step's I/O calls in proportion
  to the time between them, so a send that happens halfway through a step happens halfway;
- LOCAL ns: the time of one I/O call itself (a socket call over a network, a copy in
  memory): the CPU is busy, no byte moves on the link during it;
- SEND n: n bytes handed to the transport (a TLS write into the TCP stream, or one DTLS
  datagram);
- NEED n: the peer cannot go on before the first n bytes of the other peer's stream have
  arrived (a RECV that delivered bytes; cumulative, so the client reads the certificate
  while the key exchange is still on the wire, as it does).

A paced agent's PACE_HOLD (docs/networks.md "Paced peers": the rest of the part's modelled
time of a step) is CPU at its place in the step. A WAIT (network waiting) is no action: the
simulation decides how long each wait lasts.
The actions up to `handshake_end` are the handshake; the rest (application data, close)
counts for bytes on the wire only.

In-memory repetitions hold both peers in one trace; two-process repetitions hold the device
peer in `trace` and the other in `peer_repetition` (the peer agent's own calibration is
used for its tracer overhead)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tlsbench.schema import PeerTrace

from tlsbench.analysis.derive.dataset import Dataset, Reps
from tlsbench.analysis.derive.measures import SliceCosts, slice_costs
from tlsbench.analysis.derive.slices import build_slices, decode_many
from tlsbench.analysis.vocab import vocab

CPU, LOCAL, SEND, NEED = 0, 1, 2, 3
PEERS = ("client", "server")


@dataclass(frozen=True)
class PeerScript:
    """One peer's actions in one repetition."""

    actions: tuple[tuple[int, float], ...]  # (kind, value): ns for CPU/LOCAL, bytes for SEND/NEED
    handshake_end: int  # actions[:handshake_end] are the handshake

    @property
    def processing_ns(self) -> float:
        return sum(v for k, v in self.actions[:self.handshake_end] if k == CPU)

    def sent(self, handshake_only: bool = False) -> float:
        part = self.actions[:self.handshake_end] if handshake_only else self.actions
        return sum(v for k, v in part if k == SEND)


@dataclass(frozen=True)
class Script:
    """Both peers of one repetition."""

    rep_id: int
    client: PeerScript
    server: PeerScript

    def peer(self, name: str) -> PeerScript:
        return self.client if name == "client" else self.server


class ScriptError(ValueError):
    """A repetition whose trace cannot be read as a script (left out, counted)."""


def _units(ds: Dataset, costs: SliceCosts, lo: int, hi: int, peer: int) -> tuple[list[tuple[int, float]], int]:
    """The actions of one peer from slices lo:hi (one repetition, pre-order), and the index
    where the handshake ends."""
    voc, sl = vocab(), ds.slices
    step_cat, rec_cat = voc.role_cat("step"), voc.role_cat("record")
    send_l, recv_l = voc.role_label("send"), voc.role_label("recv")
    hold_l = voc.role_label("pace_hold")
    hs_label = voc.role_label("handshake")
    hs = [i for i in range(lo, hi) if sl.label[i] == hs_label and not sl.open[i]]
    hs_end = int(sl.ts[hs[0]] + sl.dur[hs[0]]) if hs else None
    unit_of = {}
    nested: dict[int, list[int]] = {}
    order: list[int] = []  # units (steps, records) and lone I/O calls, in time order
    for i in range(lo, hi):
        if sl.peer[i] != peer or sl.instant[i]:
            continue
        cat, parent = sl.category[i], sl.parent[i]
        owner = unit_of.get(int(parent), -1) if parent >= 0 else -1
        if cat in (step_cat, rec_cat) and owner < 0:
            unit_of[i] = i
            order.append(i)
            nested[i] = []
        elif owner >= 0:
            unit_of[i] = owner
            if costs.top_io[i] and sl.label[i] in (send_l, recv_l, hold_l):
                nested[owner].append(i)
        elif costs.top_io[i] and sl.label[i] in (send_l, recv_l):
            order.append(i)  # an I/O call outside any step: the close's close_notify
    actions: list[tuple[int, float]] = []
    received = 0.0
    handshake_end = None

    def io_action(i: int) -> None:
        nonlocal received
        if sl.label[i] == hold_l:  # a paced agent computing at the part's speed: the peer's CPU
            actions.append((CPU, max(float(costs.io[i]), 0.0)))
            return
        n = float(np.int64(np.uint64(sl.value[i])))
        if sl.label[i] == send_l and n > 0:
            actions.append((SEND, n))
        elif sl.label[i] == recv_l and n > 0:
            received += n
            actions.append((NEED, received))
        actions.append((LOCAL, max(float(costs.io[i]), 0.0)))

    for u in order:
        if handshake_end is None and hs_end is not None and sl.ts[u] >= hs_end:
            handshake_end = len(actions)
        if u not in nested:
            io_action(u)
            continue
        ios = nested[u]
        start, end = int(sl.ts[u]), int(sl.ts[u] + sl.dur[u])
        edges = [start] + [e for i in ios for e in (int(sl.ts[i]), int(sl.ts[i] + sl.dur[i]))] + [end]
        gaps = np.maximum(np.diff(edges)[0::2], 0).astype(float)  # the time outside the I/O calls
        share = gaps / gaps.sum() if gaps.sum() > 0 else np.r_[np.zeros(len(ios)), 1.0]
        processing = max(float(costs.processing[u]), 0.0)
        for k, i in enumerate(ios):
            actions.append((CPU, processing * share[k]))
            io_action(i)
        actions.append((CPU, processing * share[-1]))
    if handshake_end is None:
        handshake_end = len(actions)
    return [a for a in actions if a[1] > 0 or a[0] in (SEND, NEED)], _shift(actions, handshake_end)


def _shift(actions: list[tuple[int, float]], end: int) -> int:
    """The handshake end once zero-length actions are dropped."""
    return sum(1 for a in actions[:end] if a[1] > 0 or a[0] in (SEND, NEED))


def _rep_ranges(ds: Dataset) -> dict[int, tuple[int, int]]:
    reps = ds.slices.rep
    ids, first = np.unique(reps, return_index=True)
    last = np.r_[first[1:], len(reps)]
    return {int(r): (int(a), int(b)) for r, a, b in zip(ids, first, last)}


def peer_dataset(ds: Dataset, traces: Sequence[PeerTrace]) -> Dataset:
    """The peer agents' traces of two-process repetitions as a dataset of their own (the
    same repetition ids; each repetition's agent is the peer agent, whose calibration
    then applies)."""
    by_rep = {t.rep_id: t for t in traces}
    events = decode_many([t.records for t in traces], [t.rep_id for t in traces])
    agent = np.array([by_rep[int(r)].agent_id if int(r) in by_rep and by_rep[int(r)].agent_id is not None else -1
                      for r in ds.reps.id], dtype=np.int64)
    reps = Reps(**{**{f: getattr(ds.reps, f) for f in Reps.__dataclass_fields__}, "agent_id": agent})
    return ds.with_traces(reps, events, build_slices(events))


@dataclass
class Sources:
    """A loaded experiment with what scripts are read from: its traces and, for two-process
    configurations, the peer agents' traces."""

    ds: Dataset
    costs: SliceCosts
    peer: Dataset | None = None
    peer_costs: SliceCosts | None = None

    @classmethod
    def of(cls, ds: Dataset, peer_traces: Sequence[PeerTrace]) -> "Sources":
        peer = peer_dataset(ds, peer_traces) if peer_traces else None
        return cls(ds, slice_costs(ds), peer, slice_costs(peer) if peer is not None else None)

    def usable(self, config_id: int) -> np.ndarray:
        """Repetition ids of a configuration that a script may be read from: successful,
        neither retransmitted nor overflowing, with balanced traces; not descheduled, unless
        every one was."""
        ds = self.ds
        mine = ds.reps.config_id == config_id
        ok = mine & ~ds.excluded_mask()
        if not ok.any():  # a busy machine descheduled them all: their processing holds some of
            ok = mine & ~ds.flagged_mask()  # another process's time, but a script is still a script
        ids = ds.reps.id[ok]
        bad = set(ds.slices.unbalanced_reps) | (set(self.peer.slices.unbalanced_reps) if self.peer is not None else set())
        return np.array([r for r in ids if int(r) not in bad], dtype=np.int64)

    def scripts(self, config_id: int, limit: int | None = None) -> list[Script]:
        """Scripts of a configuration's usable repetitions (at most `limit`, evenly spread)."""
        config = self.ds.configs[config_id]
        ids = self.usable(config_id)
        if limit and len(ids) > limit:
            ids = ids[np.linspace(0, len(ids) - 1, limit).round().astype(int)]
        peers = vocab().peers
        mine = _rep_ranges(self.ds)
        theirs = _rep_ranges(self.peer) if self.peer is not None else {}
        device = config.device_role if config.network_json else None
        out = []
        for rid in ids.tolist():
            parts = {}
            for name in PEERS:
                if device is None or name == device:
                    src, costs, ranges = self.ds, self.costs, mine
                else:
                    src, costs, ranges = self.peer, self.peer_costs, theirs
                if src is None or rid not in ranges:
                    break
                actions, end = _units(src, costs, *ranges[rid], peers[name])
                parts[name] = PeerScript(tuple(actions), end)
            if len(parts) == 2 and _consistent(parts["client"], parts["server"]):
                out.append(Script(rid, parts["client"], parts["server"]))
        return out


def _consistent(client: PeerScript, server: PeerScript) -> bool:
    """Both peers have a handshake, and neither waits for more bytes than the other sends (a
    trace cut short would make the simulation wait forever)."""
    def needs(p: PeerScript) -> float:
        return max((v for k, v in p.actions if k == NEED), default=0.0)

    return bool(client.handshake_end and server.handshake_end and needs(client) <= server.sent()
                and needs(server) <= client.sent())


def dtls_timer_ms(ds: Dataset) -> tuple[float, float]:
    """The plan's DTLS retransmission timer (initial, maximum) in ms; the libraries' default
    (1 s, 60 s) where the plan left it at 0."""
    net = (json.loads(ds.experiment.get("plan_json") or "{}").get("network") or {}).get("dtls") or {}
    return float(net.get("timeout_min_ms") or 1000), float(net.get("timeout_max_ms") or 60000)


def interface_mtu(ds: Dataset) -> int:
    """The namespaces' interface MTU of a two-process plan (docs/plan-format.md tun_mtu)."""
    net = json.loads(ds.experiment.get("plan_json") or "{}").get("network") or {}
    return int(net.get("tun_mtu") or 1500)
