# SPDX-License-Identifier: Apache-2.0
"""A discrete-event simulation of one connection: both peers' scripts (script.py) over a
link (links.py), with the network stacks in between (docs/predict.md "The model").

- The link is the emulator's model, direction by direction: an IP packet of N bytes is
  ceil(N / frame) frames; it waits for the transmitter, is serialized in
  (N + frames × frame_overhead) × 8 / rate, is lost with probability 1 − (1 − p)^frames
  (on the air: its air time is spent), and arrives `delay` later, in order. Larger than the
  link's MTU: dropped; beyond the queue: tail-dropped.
- TLS runs over TCP as Linux sends it: a 3-way handshake, MSS from the interface MTU, a
  32-byte header (timestamps), Nagle (Minshall's variant) unless TCP_NODELAY, initial window
  10, acknowledgements at once in quick-ack mode (the first 16 segments) and delayed by
  40 ms once the connection is interactive (it answered within the delayed-ACK time), sent
  earlier when the application reads a second small segment, piggybacked on data; loss
  found by SACK (RACK: a quarter of the minimum RTT after a later segment arrived), a tail
  loss probe (2 srtt + 2 ms, + 200 ms with one segment out), and the retransmission timeout
  (srtt + max(variance term, 200 ms), 1 s initially, doubling on each expiry); every TCP
  timer fires half a tick (HZ=250) after its timeout, on average.
- DTLS runs over UDP: one datagram per send, IP-fragmented above the interface MTU; a peer
  that sent a flight and waits for the answer arms its retransmission timer (the plan's
  initial value, doubling up to its maximum, back to the initial value for each new flight)
  and resends the whole flight when it expires; a peer that receives the last datagram of
  the other's previous flight again resends its own last flight (RFC 6347 4.2.4, as mbed
  TLS does, and as the lingering server of docs/networks.md does).
- A peer runs its actions in order: CPU and LOCAL take their time, SEND hands bytes to its
  stack at once, NEED waits until that many bytes of the other peer's stream have arrived.
  The client starts when its connection is up (TCP: the SYN-ACK arrived; UDP: at once), the
  server when it accepted it (the handshake's ACK, or the ClientHello's datagram): the
  agents' handshake phases start there too.

What is not modelled: jitter (its mean, 0, is used), reordering, Linux's autocorking,
congestion control beyond slow start from 10 segments, receive windows, the 3 s RTO after
a lost SYN, the emulator's own forwarding latency (tens of µs per packet), DTLS libraries'
give-up limits, a HelloVerifyRequest's statelessness."""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tlsbench.analysis.models.predict.links import Direction, Link
from tlsbench.analysis.models.predict.script import CPU, LOCAL, NEED, SEND, PeerScript, Script

MS = 1e6
IP_HEADER, UDP_HEADER = 20, 8
TCP_HEADER = 32  # 20 + the timestamps option (12), on every Linux segment after the SYN
SYN_BYTES = 60  # 20 IP + 40 TCP (MSS, SACK permitted, timestamps, window scale)
ICMP_HEADER, ICMP_QUOTE = 8, 548  # port unreachable quotes the datagram up to 576 bytes in all
SACK_BLOCK, SACK_BASE = 8, 4  # a SACK option: 2 NOPs + kind/length, then 8 bytes per block
TIME_LIMIT_NS = 600e9  # a connection that has not finished after 10 simulated minutes failed
PEERS = ("client", "server")


@dataclass(frozen=True)
class Stack:
    """What both peers' network stacks do: Linux's defaults and the plan's options."""

    transport: str  # "tcp" (TLS) or "udp" (DTLS)
    nagle: bool = False  # False: TCP_NODELAY
    sack: bool = True
    mss: int = 0  # TCP_MAXSEG; 0: the interface MTU's
    iface_mtu: int = 1500
    dtls_min_ms: float = 1000.0  # DTLS retransmission timer: initial value ...
    dtls_max_ms: float = 60000.0  # ... and its ceiling
    initial_window: int = 10
    rto_min_ms: float = 200.0
    rto_initial_ms: float = 1000.0
    rto_max_ms: float = 120000.0
    delack_ms: float = 40.0
    quickacks: int = 16
    tlp_min_ms: float = 2.0
    tick_ms: float = 4.0  # Linux's TCP timers fire on the next tick (HZ=250 here): half a tick late on average
    device_scale: float = 1.0  # the device peer's processing × this: its values in the part's ns (models/conversion.py)
    peer_scale: float = 1.0  # the other peer's (a device run counted both peers: the same conversion)

    @property
    def timer_lag(self) -> float:
        """What a TCP timer fires after its timeout, on average (ns)."""
        return self.tick_ms / 2 * MS

    @property
    def effective_mss(self) -> int:
        mss = self.iface_mtu - IP_HEADER - 20
        return (min(self.mss, mss) if self.mss else mss) - (TCP_HEADER - 20)


@dataclass
class Outcome:
    """One simulated connection."""

    completed: bool
    start_ns: dict[str, float]  # when each peer's handshake phase began
    end_ns: dict[str, float]  # ... and ended
    cpu_ns: dict[str, float]  # processing in the handshake (device: scaled)
    local_ns: dict[str, float]  # I/O calls in the handshake
    tx_ns: dict[str, float]  # each peer's radio transmitting (air time of what it sent) within its handshake
    rx_ns: dict[str, float]  # ... and receiving
    packets: dict[str, int]  # per link direction (d2p, p2d), whole connection, lost ones included
    bytes: dict[str, int]
    fragments: dict[str, int]
    lost: dict[str, int]
    retransmissions: int  # TCP segments sent again, or DTLS flights

    def duration_ns(self, peer: str) -> float:
        return self.end_ns[peer] - self.start_ns[peer] if self.completed else math.inf


class Timer:
    """A restartable one-shot timer on the simulation's clock."""

    def __init__(self, sim: "Sim", fire: Callable[[], None]):
        self.sim, self.fire, self.gen, self.when = sim, fire, 0, math.inf

    def set(self, when: float) -> None:
        self.gen += 1
        self.when = when
        self.sim.at(when, self._expire, self.gen)

    def cancel(self) -> None:
        self.gen += 1
        self.when = math.inf

    @property
    def armed(self) -> bool:
        return self.when < math.inf

    def _expire(self, gen: int) -> None:
        if gen == self.gen:
            self.when = math.inf
            self.fire()


class Sim:
    """The clock and the event queue."""

    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self._n = 0

    def at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        heapq.heappush(self._queue, (when, self._n, fn, args))
        self._n += 1

    def run(self, limit: float = TIME_LIMIT_NS) -> None:
        """Runs until nothing is left or the limit (a timer set beyond it may be a cancelled one)."""
        while self._queue:
            when, _, fn, args = heapq.heappop(self._queue)
            if when > limit:
                return
            self.now = when
            fn(*args)


# ---------------------------------------------------------------------- the link
class Wire:
    """One direction of the link (link/model.c tb_link_admit, without jitter and reordering)."""

    def __init__(self, sim: Sim, p: Direction, rng: np.random.Generator | None):
        self.sim, self.p, self.rng = sim, p, rng
        self.tx_free = self.last_at = 0.0
        self.packets = self.bytes = self.fragments = self.lost = 0
        self.air: list[tuple[float, float]] = []  # transmitting intervals (the sender's radio)
        self.queue_ns = p.queue_ns()

    def send(self, size: int, deliver: Callable[..., None], *args: Any) -> None:
        p, now = self.p, self.sim.now
        frames = p.fragments(size)
        self.packets += 1
        self.bytes += size
        self.fragments += frames
        if p.mtu and size > p.mtu:
            self.lost += 1
            return
        done = now
        if p.rate:
            air = p.airtime_ns(size)
            if max(0.0, self.tx_free - now) + air > self.queue_ns:
                self.lost += 1
                return
            start = max(now, self.tx_free)
            done = self.tx_free = start + air
            self.air.append((start, done))
        if p.loss and self.rng is not None and self.rng.random() < p.packet_loss(size):
            self.lost += 1
            return
        at = self.last_at = max(done + p.delay * MS, self.last_at)
        self.sim.at(at, deliver, *args)


def _overlap(intervals: list[tuple[float, float]], lo: float, hi: float, shift: float = 0.0) -> float:
    return sum(max(0.0, min(b + shift, hi) - max(a + shift, lo)) for a, b in intervals)


# ---------------------------------------------------------------------- the peers
class App:
    """One peer running its script."""

    def __init__(self, sim: Sim, name: str, script: PeerScript, scale: float):
        self.sim, self.name, self.script, self.scale = sim, name, script, scale
        self.net: Transport = None  # type: ignore[assignment]  # set by the transport
        self.i = 0
        self.waiting: float | None = None
        self.consumed = 0.0  # bytes of the other peer's stream read so far
        self.start = self.end = math.nan
        self.cpu = self.local = 0.0
        self.sent_since_need = False
        self.finished = False

    def begin(self) -> None:
        if math.isnan(self.start):
            self.start = self.sim.now
            self.run()

    def run(self) -> None:
        actions, end = self.script.actions, self.script.handshake_end
        while self.i < len(actions):
            if self.i == end and math.isnan(self.end):
                self.end = self.sim.now
            kind, value = actions[self.i]
            if kind in (CPU, LOCAL):
                self.sim.at(self.sim.now + self.busy(), self.run)
                return
            if kind == SEND:
                self.net.send(self, int(value), self.i < end)
                self.sent_since_need = True
            elif kind == NEED:
                if self.sent_since_need:  # a flight is complete: the peer now waits for the answer
                    self.net.flight_sent(self, self.i < end)
                    self.sent_since_need = False
                if self.net.readable(self) < value:
                    self.waiting = value
                    return
                self.consumed = value
                self.net.read(self)
            self.i += 1
        if math.isnan(self.end):
            self.end = self.sim.now
        if not self.finished:
            self.finished = True
            self.net.finish(self)

    def busy(self) -> float:
        """The consecutive CPU and LOCAL actions from here (not across the handshake's end)
        as one delay; the handshake's share is added up for energy."""
        actions, end = self.script.actions, self.script.handshake_end
        delay = 0.0
        while self.i < len(actions) and actions[self.i][0] in (CPU, LOCAL):
            kind, value = actions[self.i]
            d = value * self.scale if kind == CPU else value
            if self.i < end:
                if kind == CPU:
                    self.cpu += d
                else:
                    self.local += d
            delay += d
            self.i += 1
            if self.i == end:
                break
        return delay

    def wake(self) -> None:
        """Bytes arrived: go on if they are the ones it waits for."""
        if self.waiting is not None and self.net.readable(self) >= self.waiting:
            self.waiting = None
            self.consumed = self.script.actions[self.i][1]
            self.net.read(self)
            self.i += 1
            self.run()


class Transport:
    """What the peers see of their stacks."""

    def send(self, app: App, n: int, in_handshake: bool) -> None: ...
    def readable(self, app: App) -> float: ...
    def read(self, app: App) -> None: ...
    def flight_sent(self, app: App, in_handshake: bool) -> None: ...
    def finish(self, app: App) -> None: ...
    def start(self) -> None: ...
    @property
    def retransmissions(self) -> int: ...


# ---------------------------------------------------------------------- TCP
@dataclass
class Segment:
    seq: int
    length: int
    fin: bool = False
    sent_at: float = 0.0
    tx: int = 0
    acked: bool = False
    sacked: bool = False
    lost: bool = False

    @property
    def end(self) -> int:
        return self.seq + self.length + (1 if self.fin else 0)


@dataclass
class Packet:
    seq: int
    length: int
    fin: bool
    ack: int
    sack: tuple[tuple[int, int], ...] = ()


@dataclass
class TcpEnd:
    """One side of a TCP connection: its sending and its receiving half (Linux behaviour)."""

    connection: "Tcp"
    app: App
    wire: Wire  # the direction it sends on
    # sender
    segments: list[Segment] = field(default_factory=list)
    snd_una: int = 0
    snd_nxt: int = 0
    pending: int = 0  # written by the application, not yet in a segment
    fin_wanted: bool = False
    cwnd: float = 10
    srtt: float = 0.0
    mdev: float = 0.0
    mdev_max: float = 0.0
    rttvar: float = 0.0
    rtt_seq: int = 0
    rto: float = 0.0
    min_rtt: float = math.inf
    small_end: int = 0  # end of the last small segment sent (Nagle, Minshall)
    dupacks: int = 0
    tlp_out: bool = False
    retrans: int = 0
    # receiver
    rcv_nxt: int = 0
    out_of_order: dict[int, tuple[int, bool]] = field(default_factory=dict)
    fin_in: bool = False
    quick: int = 0
    pingpong: bool = False
    last_rcv: float = math.nan
    rcv_mss: int = 536
    pushed: int = 0
    ack_pending: bool = False
    rcv_wup: int = 0
    established: bool = False

    def __post_init__(self) -> None:
        s = self.connection.stack
        self.cwnd = float(s.initial_window)
        self.rto = s.rto_initial_ms * MS
        self.retx_timer = Timer(self.connection.sim, self.on_retx_timer)
        self.reo_timer = Timer(self.connection.sim, self.on_reo_timer)
        self.delack = Timer(self.connection.sim, self.on_delack)
        self.rto_deadline = math.inf
        self.probing = False
        self.last_delivered: Segment | None = None

    @property
    def sim(self) -> Sim:
        return self.connection.sim

    @property
    def other(self) -> "TcpEnd":
        return self.connection.ends[1] if self is self.connection.ends[0] else self.connection.ends[0]

    # ---- RTT and timers (tcp_rtt_estimator, __tcp_set_rto)
    def rtt_sample(self, m: float) -> None:
        """Linux's estimator: mdev is kept at 4x the mean deviation (mdev_us), rttvar is its
        maximum over the last round trip, never below the minimum RTO; RTO = srtt + rttvar."""
        s = self.connection.stack
        self.min_rtt = min(self.min_rtt, m)
        rto_min = s.rto_min_ms * MS
        if not self.srtt:
            self.srtt, self.mdev = m, 2 * m  # the first RTO is 3 RTT (or RTT + 200 ms)
            self.rttvar = self.mdev_max = max(self.mdev, rto_min)
            self.rtt_seq = self.snd_nxt
        else:
            err = m - self.srtt
            self.srtt += err / 8
            if err < 0:
                err = -err - self.mdev / 4
                if err > 0:
                    err /= 8
            else:
                err -= self.mdev / 4
            self.mdev += err
            if self.mdev > self.mdev_max:
                self.mdev_max = self.mdev
                self.rttvar = max(self.rttvar, self.mdev_max)
            if self.snd_una > self.rtt_seq:
                if self.mdev_max < self.rttvar:
                    self.rttvar -= (self.rttvar - self.mdev_max) / 4
                self.rtt_seq = self.snd_nxt
                self.mdev_max = rto_min
        self.rto = min(self.srtt + self.rttvar, s.rto_max_ms * MS)

    def outstanding(self) -> list[Segment]:
        return [g for g in self.segments if not g.acked and not g.sacked and g.tx]

    def in_flight(self) -> int:
        return sum(1 for g in self.segments if g.tx and not g.acked and not g.sacked and not g.lost)

    def arm_timers(self, restart_rto: bool = False) -> None:
        """Linux keeps one pending timer: the tail loss probe when it may send one, else (or
        when it would come later) the retransmission timeout."""
        out = self.outstanding()
        if not out:
            self.retx_timer.cancel()
            self.rto_deadline = math.inf
            return
        now, s = self.sim.now, self.connection.stack
        if restart_rto or self.rto_deadline == math.inf:
            self.rto_deadline = now + self.rto + s.timer_lag
        self.probing = False
        when = self.rto_deadline
        if s.sack and self.srtt and not self.tlp_out and not self.in_recovery():
            pto = now + 2 * self.srtt + (s.rto_min_ms if len(out) == 1 else s.tlp_min_ms) * MS + s.timer_lag
            if pto < when:
                when, self.probing = pto, True
        self.retx_timer.set(when)

    def in_recovery(self) -> bool:
        return any(g.lost or (g.tx > 1 and not g.acked and not g.sacked) for g in self.segments)

    def on_retx_timer(self) -> None:
        if self.outstanding():
            self.on_probe() if self.probing else self.on_rto()

    def on_probe(self) -> None:
        """Tail loss probe: a new segment if data waits (whatever the window), else the last
        segment again; then the retransmission timeout restarts from now (tcp_send_loss_probe)."""
        self.tlp_out = True
        if self.pending:
            self.new_segment(min(self.pending, self.connection.stack.effective_mss))
        else:
            self.transmit(self.outstanding()[-1])
        self.arm_timers(restart_rto=True)

    def on_rto(self) -> None:
        """Every segment not known to have arrived is lost; the window restarts at 1."""
        for g in self.outstanding():
            g.lost = True
        self.cwnd = 1
        self.rto = min(self.rto * 2, self.connection.stack.rto_max_ms * MS)
        self.tlp_out = False
        self.retransmit_lost()
        self.arm_timers(restart_rto=True)

    # ---- sending
    def write(self, n: int) -> None:
        self.pending += n
        self.push()

    def close(self) -> None:
        """shutdown(SHUT_WR): a FIN after the data; it pushes held data out (Nagle off) and
        rides on the last segment when that one is still unsent."""
        self.fin_wanted = True
        self.push(force=True)

    def push(self, force: bool = False) -> None:
        mss = self.connection.stack.effective_mss
        sent = False
        while self.pending and (self.in_flight() < self.cwnd or force):
            size = min(self.pending, mss)
            if size < mss and not force and self.connection.stack.nagle and self.small_end > self.snd_una:
                break  # Nagle: a small segment waits while an earlier small one is unacknowledged
            self.new_segment(size, fin=self.fin_wanted and self.pending == size)
            sent = True
        if self.fin_wanted and not self.pending and not any(g.fin for g in self.segments):
            self.new_segment(0, fin=True)
            sent = True
        if sent:
            self.arm_timers(restart_rto=not self.in_recovery())

    def new_segment(self, size: int, fin: bool = False) -> None:
        g = Segment(self.snd_nxt, size, fin)
        self.snd_nxt = g.end
        self.pending -= size
        if 0 < size < self.connection.stack.effective_mss:
            self.small_end = self.snd_nxt
        self.segments.append(g)
        self.transmit(g)

    def transmit(self, g: Segment) -> None:
        if g.tx:
            self.retrans += 1
            self.connection.retransmitted_at.append(self.sim.now)
        g.tx += 1
        g.sent_at = self.sim.now
        g.lost = False
        if g.length and self.sim.now - self.last_rcv < self.connection.stack.delack_ms * MS:
            self.pingpong = True  # it answered within the delayed-ACK time: an interactive connection
        self.send_packet(Packet(g.seq, g.length, g.fin, self.rcv_nxt, self.sack_blocks()))

    def send_packet(self, p: Packet) -> None:
        self.acked_now()
        size = IP_HEADER + TCP_HEADER + p.length + (SACK_BASE + SACK_BLOCK * len(p.sack) if p.sack else 0)
        self.wire.send(size, self.other.receive, p)

    def retransmit_lost(self) -> None:
        for g in self.segments:
            if g.lost and not g.acked and not g.sacked and self.in_flight() < self.cwnd:
                self.transmit(g)

    # ---- acknowledgements sent (the receiving half)
    def acked_now(self) -> None:
        """Any segment carries an ACK: nothing is pending any more (tcp_event_ack_sent)."""
        if self.ack_pending and self.quick:
            self.quick -= 1
        self.ack_pending = False
        self.pushed = 0
        self.rcv_wup = self.rcv_nxt
        self.delack.cancel()

    def send_ack(self, dsack: tuple[tuple[int, int], ...] = ()) -> None:
        self.send_packet(Packet(self.snd_nxt, 0, False, self.rcv_nxt, dsack + self.sack_blocks()))

    def sack_blocks(self) -> tuple[tuple[int, int], ...]:
        if not self.connection.stack.sack or not self.out_of_order:
            return ()
        blocks: list[list[int]] = []
        for seq in sorted(self.out_of_order):
            length, fin = self.out_of_order[seq]
            end = seq + length + (1 if fin else 0)
            if blocks and seq <= blocks[-1][1]:
                blocks[-1][1] = max(blocks[-1][1], end)
            else:
                blocks.append([seq, end])
        return tuple((a, b) for a, b in blocks[:3])

    def on_delack(self) -> None:
        if self.ack_pending:
            self.send_ack()
            self.pingpong = False  # a delayed ACK that went out alone: leave interactive mode

    # ---- receiving
    def receive(self, p: Packet) -> None:
        if not self.established:
            self.connection.accepted(self)
        if p.ack > self.snd_una or p.sack or (p.ack == self.snd_una and not p.length and not p.fin):
            self.on_ack(p)
        if p.length or p.fin:
            self.on_data(p)

    def on_data(self, p: Packet) -> None:
        now, s = self.sim.now, self.connection.stack
        end = p.seq + p.length + (1 if p.fin else 0)
        if end <= self.rcv_nxt:
            # a duplicate (a spurious retransmission): quick-ack mode again, and an ACK at once
            # reporting it (D-SACK, RFC 2883) when SACK is on (tcp_data_queue, tcp_enter_quickack_mode)
            self.quick, self.pingpong = s.quickacks, False
            self.send_ack(dsack=((p.seq, end),) if s.sack else ())
            return
        if p.seq > self.rcv_nxt:
            self.out_of_order[p.seq] = (p.length, p.fin)
            self.send_ack()  # out of order: a duplicate ACK with SACK, at once
            return
        self.advance(p.seq, p.length, p.fin)
        while self.rcv_nxt in self.out_of_order:
            length, fin = self.out_of_order.pop(self.rcv_nxt)
            self.advance(self.rcv_nxt, length, fin)
        # the delayed-ACK engine (tcp_event_data_recv, tcp_measure_rcv_mss)
        if math.isnan(self.last_rcv):
            self.quick = s.quickacks
        elif now - self.last_rcv > self.rto:
            self.quick = s.quickacks
        self.last_rcv = now
        if p.length >= self.rcv_mss:
            self.rcv_mss = min(p.length, s.effective_mss)
        elif p.length:
            self.pushed += 1
        self.ack_pending = True
        if p.fin or (self.quick and not self.pingpong) or self.rcv_nxt - self.rcv_wup > self.rcv_mss:
            self.send_ack()
        elif not self.delack.armed:
            self.delack.set(now + s.delack_ms * MS + s.timer_lag)
        self.app.wake()
        if self.app.finished:
            self.app_read()  # it drains what comes after its close

    def advance(self, seq: int, length: int, fin: bool) -> None:
        self.rcv_nxt = max(self.rcv_nxt, seq + length + (1 if fin else 0))
        self.fin_in = self.fin_in or fin
        if fin and all(e.fin_in for e in self.connection.ends):
            self.connection.closed_at = min(self.connection.closed_at, self.sim.now)

    def readable(self) -> int:
        return self.rcv_nxt - (1 if self.fin_in else 0)

    def app_read(self) -> None:
        """The application read (tcp_cleanup_rbuf): a pending ACK goes out when a second small
        segment arrived since the last one, or one did outside interactive mode, and the read
        emptied the receive queue."""
        if not self.ack_pending or self.app.consumed < self.readable():
            return
        if self.rcv_nxt - self.rcv_wup > self.rcv_mss or self.pushed >= 2 or (self.pushed and not self.pingpong):
            self.send_ack()

    def on_ack(self, p: Packet) -> None:
        now = self.sim.now
        newly = [g for g in self.segments if not g.acked and g.tx and g.end <= p.ack]
        for a, b in p.sack:
            for g in self.segments:
                if g.tx and not g.acked and a <= g.seq and g.end <= b:
                    g.sacked = True
                    self.last_delivered = g
        if newly:
            for g in newly:
                g.acked = True
            self.snd_una = p.ack
            self.rtt_sample(now - newly[0].sent_at)
            self.last_delivered = newly[-1]
            self.cwnd += len(newly)
            self.dupacks = 0
            self.tlp_out = False
        elif p.ack == self.snd_una and self.outstanding():
            self.dupacks += 1
        self.detect_losses()
        self.retransmit_lost()
        self.push()
        self.arm_timers(restart_rto=bool(newly))

    def detect_losses(self) -> None:
        """RACK with SACK (a segment sent before one that arrived is lost once a reordering
        window of min_rtt/4 has passed; at once with three SACKed behind it); three duplicate
        ACKs without."""
        s, now = self.connection.stack, self.sim.now
        if not s.sack:
            if self.dupacks >= 3:
                head = next((g for g in self.segments if g.tx and not g.acked), None)
                if head and not head.lost and head.tx == 1:
                    head.lost = True
            return
        last = self.last_delivered
        if last is None:
            return
        sacked_after = sum(1 for g in self.segments if g.sacked)
        window = 0.0 if sacked_after >= 3 else self.min_rtt / 4
        rack_rtt = now - last.sent_at
        next_check = math.inf
        for g in self.segments:
            if g.acked or g.sacked or g.lost or not g.tx or g.sent_at > last.sent_at or g is last:
                continue
            due = g.sent_at + rack_rtt + window
            if now >= due:
                g.lost = True
            else:
                next_check = min(next_check, due)
        if next_check < math.inf:
            self.reo_timer.set(next_check)

    def on_reo_timer(self) -> None:
        self.detect_losses()
        self.retransmit_lost()
        self.arm_timers()


class Opening:
    """A SYN or a SYN-ACK: sent again on its own timer (1 s, doubling) until its side of the
    connection is established."""

    def __init__(self, connection: "Tcp", end: TcpEnd, deliver: Callable[[], None]):
        self.connection, self.end, self.deliver = connection, end, deliver
        self.sent = math.nan
        self.rto = connection.stack.rto_initial_ms * MS
        self.timer = Timer(connection.sim, self.send)

    def send(self) -> None:
        if self.end.established:
            return
        if not math.isnan(self.sent):
            self.connection.retransmitted_at.append(self.connection.sim.now)
            self.rto *= 2
        self.sent = self.connection.sim.now
        self.end.wire.send(SYN_BYTES, self.deliver)
        self.timer.set(self.sent + self.rto + self.connection.stack.timer_lag)

    def established(self) -> None:
        """Its answer arrived: the side is up, with its first RTT sample."""
        self.end.established = True
        self.timer.cancel()
        self.end.rtt_sample(self.connection.sim.now - self.sent)


class Tcp(Transport):
    """A TCP connection between the two peers (client connects)."""

    def __init__(self, sim: Sim, stack: Stack, apps: dict[str, App], wires: dict[str, Wire]):
        self.sim, self.stack = sim, stack
        self.ends = [TcpEnd(self, apps[p], wires[p]) for p in PEERS]
        self.by_app = {id(e.app): e for e in self.ends}
        for e in self.ends:
            e.app.net = self
        self.retransmitted_at: list[float] = []  # every segment sent again (SYN and SYN-ACK included)
        self.closed_at = math.inf  # both sides have the other's FIN: the agents read their counters then
        self.syn = Opening(self, self.ends[0], self.on_syn)
        self.synack = Opening(self, self.ends[1], self.on_synack)

    def start(self) -> None:
        self.syn.send()

    def on_syn(self) -> None:
        self.synack.send()  # also a SYN again (its SYN-ACK was lost): the SYN-ACK again

    def on_synack(self) -> None:
        client = self.ends[0]
        if client.established:
            client.send_ack()  # the server did not get the first ACK: it sent its SYN-ACK again
            return
        self.syn.established()
        client.send_ack()  # the handshake's ACK goes before the application's first bytes
        client.app.begin()

    def accepted(self, end: TcpEnd) -> None:
        """The server's first packet after its SYN-ACK completes the handshake."""
        if end is self.ends[1] and not math.isnan(self.synack.sent):
            self.synack.established()
            end.app.begin()

    # what the peers see
    def send(self, app: App, n: int, in_handshake: bool) -> None:
        self.by_app[id(app)].write(n)

    def readable(self, app: App) -> float:
        return self.by_app[id(app)].readable()

    def read(self, app: App) -> None:
        self.by_app[id(app)].app_read()

    def flight_sent(self, app: App, in_handshake: bool) -> None:
        pass

    def finish(self, app: App) -> None:
        end = self.by_app[id(app)]
        app.consumed = math.inf  # it drains the other's last bytes until their FIN
        end.close()

    @property
    def retransmissions(self) -> int:
        """Segments sent again before both agents had drained the connection (when they read
        TCP_INFO): a lost last ACK retransmits a FIN nobody counts any more."""
        return sum(1 for t in self.retransmitted_at if t < self.closed_at)


# ---------------------------------------------------------------------- UDP and DTLS
@dataclass
class DtlsEnd:
    """One peer's datagrams: what it sent (by index in its stream) and what it received."""

    connection: "Dtls"
    app: App
    wire: Wire
    sizes: list[int] = field(default_factory=list)  # its datagrams, in stream order
    flights: list[list[int]] = field(default_factory=list)  # datagram indices of each flight
    open_flight: bool = False
    received: list[bool] = field(default_factory=list)  # the other's datagrams delivered
    prefix: int = 0  # the other's datagrams delivered without a gap
    readable_bytes: float = 0.0
    partial: dict[tuple[int, int], int] = field(default_factory=dict)  # (datagram, copy) -> IP fragments in
    copies: int = 0
    timeout: float = 0.0
    answers: int = -1  # the other's flight whose full arrival stops the timer
    retrans: int = 0
    closed: bool = False  # the socket is closed (the client agent closes it after its close_notify)

    def __post_init__(self) -> None:
        self.timer = Timer(self.connection.sim, self.on_timer)
        self.timeout = self.connection.stack.dtls_min_ms * MS

    @property
    def other(self) -> "DtlsEnd":
        return self.connection.ends[1] if self is self.connection.ends[0] else self.connection.ends[0]

    def send(self, n: int) -> None:
        if not self.open_flight:
            self.flights.append([])
            self.open_flight = True
        self.flights[-1].append(len(self.sizes))
        self.sizes.append(n)
        self.transmit(len(self.sizes) - 1)

    def transmit(self, d: int) -> None:
        """One datagram as IP packets: fragments of the interface MTU when it does not fit."""
        self.copies += 1
        size = self.sizes[d] + UDP_HEADER
        room = (self.connection.stack.iface_mtu - IP_HEADER) // 8 * 8
        parts = [size] if size + IP_HEADER <= self.connection.stack.iface_mtu else \
            [min(room, size - k) for k in range(0, size, room)]
        for part in parts:
            self.wire.send(part + IP_HEADER, self.other.on_fragment, d, self.copies, len(parts), part + IP_HEADER)

    def flight_done(self, in_handshake: bool) -> None:
        """The flight is complete and the peer waits for the answer: arm the timer."""
        self.open_flight = False
        if not in_handshake:
            return
        self.timeout = self.connection.stack.dtls_min_ms * MS
        theirs = self.connection.flight_ends(self.other)
        self.answers = next((k for k, e in enumerate(theirs) if e > self.app.consumed), -1)
        if self.answers >= 0:
            self.timer.set(self.connection.sim.now + self.timeout)

    def on_timer(self) -> None:
        self.retrans += 1
        self.resend()
        self.timeout = min(self.timeout * 2, self.connection.stack.dtls_max_ms * MS)
        self.timer.set(self.connection.sim.now + self.timeout)

    def resend(self) -> None:
        if self.flights:
            for d in self.flights[-1]:
                self.transmit(d)

    def on_fragment(self, d: int, copy: int, parts: int, size: int) -> None:
        if self.closed:  # the client's socket is gone: its kernel answers port unreachable
            self.wire.send(IP_HEADER + ICMP_HEADER + min(size, ICMP_QUOTE), lambda: None)
            return
        got = self.partial.get((d, copy), 0) + 1
        if got < parts:
            self.partial[(d, copy)] = got
            return
        self.partial.pop((d, copy), None)
        self.on_datagram(d)

    def on_datagram(self, d: int) -> None:
        while len(self.received) <= d:
            self.received.append(False)
        if self.received[d]:
            self.on_duplicate(d)
            return
        self.received[d] = True
        sizes = self.other.sizes
        while self.prefix < len(self.received) and self.received[self.prefix]:
            self.readable_bytes += sizes[self.prefix]
            self.prefix += 1
        if (self.timer.armed and self.answers >= 0
                and self.readable_bytes >= self.connection.flight_ends(self.other)[self.answers]):
            self.timer.cancel()
        if math.isnan(self.app.start):
            self.app.begin()  # the server's handshake starts with the ClientHello's datagram
        else:
            self.app.wake()

    def on_duplicate(self, d: int) -> None:
        """The last datagram of the other's flight arrived again: it did not get this peer's
        answer, so the answer goes again (RFC 6347 4.2.4)."""
        theirs = self.other.flights
        f = next((k for k, fl in enumerate(theirs) if fl and fl[-1] == d), None)
        if f is None or not self.flights:
            return
        if self.sent_after(f):
            self.retrans += 1
            self.resend()

    def sent_after(self, their_flight: int) -> bool:
        """Whether this peer's last flight answers the other's flight `their_flight`."""
        ends = self.connection.flight_ends(self.other)
        return their_flight < len(ends) and self.app.consumed >= ends[their_flight]


class Dtls(Transport):
    """DTLS over UDP between the two peers."""

    def __init__(self, sim: Sim, stack: Stack, apps: dict[str, App], wires: dict[str, Wire],
                 planned: dict[str, list[float]]):
        self.sim, self.stack = sim, stack
        self.ends = [DtlsEnd(self, apps[p], wires[p]) for p in PEERS]
        self.by_app = {id(e.app): e for e in self.ends}
        self.planned = {id(self.ends[i]): planned[p] for i, p in enumerate(PEERS)}
        for e in self.ends:
            e.app.net = self

    def flight_ends(self, end: DtlsEnd) -> list[float]:
        """Stream offsets where each of a peer's flights ends, from its script."""
        return self.planned[id(end)]

    def start(self) -> None:
        self.ends[0].app.begin()

    def send(self, app: App, n: int, in_handshake: bool) -> None:
        self.by_app[id(app)].send(n)

    def readable(self, app: App) -> float:
        return self.by_app[id(app)].readable_bytes

    def read(self, app: App) -> None:
        pass

    def flight_sent(self, app: App, in_handshake: bool) -> None:
        self.by_app[id(app)].flight_done(in_handshake)

    def finish(self, app: App) -> None:
        end = self.by_app[id(app)]
        end.open_flight = False
        end.timer.cancel()
        end.closed = end is self.ends[0]  # the server keeps its socket (and lingers: docs/networks.md)

    @property
    def retransmissions(self) -> int:
        return sum(e.retrans for e in self.ends)


def flight_ends(script: PeerScript) -> list[float]:
    """Cumulative bytes at the end of each flight of a peer: SENDs not separated by a NEED."""
    ends, total, in_flight = [], 0.0, False
    for kind, value in script.actions:
        if kind == SEND:
            total += value
            in_flight = True
        elif kind == NEED and in_flight:
            ends.append(total)
            in_flight = False
    if in_flight:
        ends.append(total)
    return ends


# ---------------------------------------------------------------------- one connection
def simulate(script: Script, link: Link, stack: Stack, device: str,
             rng: np.random.Generator | None = None) -> Outcome:
    """One connection of one repetition's script over the link. `device` is the peer whose
    uplink is d2p (and whose processing the stack's device_scale scales); rng draws the
    losses (None: a lossless run needs none)."""
    sim = Sim()
    direction = {device: "d2p", PEERS[1 - PEERS.index(device)]: "p2d"}
    wires = {p: Wire(sim, link.direction(direction[p]), rng) for p in PEERS}
    apps = {p: App(sim, p, script.peer(p), stack.device_scale if p == device else stack.peer_scale) for p in PEERS}
    if stack.transport == "tcp":
        net: Transport = Tcp(sim, stack, apps, wires)
    else:
        net = Dtls(sim, stack, apps, wires, {p: flight_ends(script.peer(p)) for p in PEERS})
    net.start()
    sim.run()
    completed = all(a.finished for a in apps.values())
    out = Outcome(completed, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, net.retransmissions)
    for p in PEERS:
        a = apps[p]
        out.start_ns[p], out.end_ns[p] = a.start, a.end
        out.cpu_ns[p], out.local_ns[p] = a.cpu, a.local
        other = PEERS[1 - PEERS.index(p)]
        lo, hi = (a.start, a.end) if completed else (0.0, 0.0)
        out.tx_ns[p] = _overlap(wires[p].air, lo, hi)
        out.rx_ns[p] = _overlap(wires[other].air, lo, hi, wires[other].p.delay * MS)
    for p in PEERS:
        d = direction[p]
        w = wires[p]
        out.packets[d], out.bytes[d], out.fragments[d], out.lost[d] = w.packets, w.bytes, w.fragments, w.lost
    return out
