#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bounded test traffic for tlsbench-link, run inside a namespace with `ip netns exec`.

Every mode stops by itself (count reached or deadline) and prints one JSON line.
Datagrams carry `u32 seq, u64 send time (CLOCK_REALTIME ns)`; the receiver takes the
kernel's receive timestamp (SO_TIMESTAMPNS, the same clock: both namespaces are on one
host), so one-way delays exclude the receiving process's wake-up time. `ping` sends ICMP
echo requests (raw socket) that the peer's kernel answers: no process in the loop.

    recv       --port P --count N --deadline S [--idle S]           -> {"seqs": [...], "delays_ns": [...]}
    send       --to A --port P --count N --size B --interval-us U (0: flood) [--big-every K --big-size B2]
    ping       --to A --count N --interval-ms I            -> {"rtts_ns": [...]} (ICMP echo)
    tcp-sink   --port P --bytes B --deadline S             -> {"bytes", "first_ns", "last_ns"}
    tcp-source --to A --port P --bytes B
A server prints "ready" on its own line once its socket is bound.
"""
from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time

HDR = struct.Struct("<IQ")
# Linux values; not exported by every Python build.
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
TIMESPEC = struct.Struct("@qq")


def kernel_rx_ns(ancdata: list) -> int:
    """The kernel's receive time (CLOCK_REALTIME ns) from SO_TIMESTAMPNS ancillary data."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = TIMESPEC.unpack_from(data)
            return sec * 1_000_000_000 + nsec
    return time.time_ns()


def ready() -> None:
    print("ready", flush=True)


def recv(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)  # a burst never overflows
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind(("0.0.0.0", a.port))
    ready()
    end = time.monotonic() + a.deadline
    seqs, delays = [], []
    while len(seqs) < a.count and time.monotonic() < end:
        # Once traffic flows, a pause of --idle seconds means the sender is done.
        s.settimeout(max(0.01, min(end - time.monotonic(), a.idle if seqs else a.deadline)))
        try:
            data, anc, _, _ = s.recvmsg(65535, 256)
        except socket.timeout:
            break
        now = kernel_rx_ns(anc)
        seq, sent = HDR.unpack_from(data)
        seqs.append(seq)
        delays.append(now - sent)
    return {"seqs": seqs, "delays_ns": delays}


def send(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = bytes(max(0, a.size - HDR.size))
    bigpad = bytes(max(0, a.big_size - HDR.size))
    start, errors = time.monotonic(), 0
    for i in range(a.count):
        big = a.big_every and i % a.big_every == a.big_every - 1
        try:
            s.sendto(HDR.pack(i, time.time_ns()) + (bigpad if big else pad), (a.to, a.port))
        except OSError:  # ENOBUFS when flooding faster than the link drains: counted
            errors += 1
        if a.interval_us <= 0:
            continue
        # Paced against the schedule, not the previous packet: no drift over the run.
        delay = start + (i + 1) * a.interval_us / 1e6 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return {"sent": a.count, "errors": errors, "elapsed_s": time.monotonic() - start}


def icmp_checksum(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF


def ping(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    ident, rtts = 0x7B1C, []
    for i in range(a.count):
        body = struct.pack("!BBHHH", 8, 0, 0, ident, i) + bytes(32)
        packet = body[:2] + struct.pack("!H", icmp_checksum(body)) + body[4:]
        t0 = time.time_ns()
        s.sendto(packet, (a.to, 0))
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            s.settimeout(max(0.01, end - time.monotonic()))
            try:
                data, anc, _, _ = s.recvmsg(2048, 256)
            except socket.timeout:
                break
            ihl = (data[0] & 0x0F) * 4  # raw ICMP sockets return the IP header too
            kind, _, _, rid, rseq = struct.unpack_from("!BBHHH", data, ihl)
            if kind == 0 and rid == ident and rseq == i:
                rtts.append(kernel_rx_ns(anc) - t0)
                break
        time.sleep(a.interval_ms / 1e3)
    return {"rtts_ns": rtts}


def tcp_sink(a: argparse.Namespace) -> dict:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", a.port))
    srv.listen(1)
    ready()
    srv.settimeout(a.deadline)
    conn, _ = srv.accept()
    end = time.monotonic() + a.deadline
    got, first, last = 0, 0, 0
    while got < a.bytes and time.monotonic() < end:
        conn.settimeout(max(0.01, end - time.monotonic()))
        data = conn.recv(1 << 16)
        if not data:
            break
        now = time.monotonic_ns()
        first = first or now
        last = now
        got += len(data)
    conn.close()
    return {"bytes": got, "first_ns": first, "last_ns": last}


def tcp_source(a: argparse.Namespace) -> dict:
    s = socket.create_connection((a.to, a.port), timeout=30)
    s.sendall(bytes(a.bytes))
    s.shutdown(socket.SHUT_WR)
    s.settimeout(30)
    s.recv(1)  # wait for the sink to close: all bytes acknowledged
    s.close()
    return {"sent": a.bytes}


MODES = {"recv": recv, "send": send, "ping": ping, "tcp-sink": tcp_sink, "tcp-source": tcp_source}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("--to", default="10.77.0.2")
    ap.add_argument("--port", type=int, default=7700)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--big-every", type=int, default=0)
    ap.add_argument("--big-size", type=int, default=0)
    ap.add_argument("--interval-us", type=float, default=200.0)
    ap.add_argument("--interval-ms", type=float, default=20.0)
    ap.add_argument("--bytes", type=int, default=500_000)
    ap.add_argument("--deadline", type=float, default=10.0)
    ap.add_argument("--idle", type=float, default=0.5)
    a = ap.parse_args()
    print(json.dumps(MODES[a.mode](a)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
