#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bounded test traffic for tlsbench-link, run inside a namespace with `ip netns exec`.

Every mode stops by itself (count reached or deadline) and prints one JSON line.
Datagrams carry `u32 seq, u64 send time (CLOCK_MONOTONIC ns)`: both namespaces share the
host's monotonic clock, so the receiver computes one-way delays directly.

    recv       --port P --count N --deadline S [--idle S]           -> {"seqs": [...], "delays_ns": [...]}
    send       --to A --port P --count N --size B --interval-us U [--big-every K --big-size B2]
    echo       --port P --deadline S                       (UDP echo server)
    ping       --to A --port P --count N --interval-ms I   -> {"rtts_ns": [...]}
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
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)  # Linux value; not exported by every Python


def ready() -> None:
    print("ready", flush=True)


def recv(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)  # a burst never overflows
    s.bind(("0.0.0.0", a.port))
    ready()
    end = time.monotonic() + a.deadline
    seqs, delays = [], []
    while len(seqs) < a.count and time.monotonic() < end:
        # Once traffic flows, a pause of --idle seconds means the sender is done.
        s.settimeout(max(0.01, min(end - time.monotonic(), a.idle if seqs else a.deadline)))
        try:
            data = s.recv(65535)
        except socket.timeout:
            break
        now = time.monotonic_ns()
        seq, sent = HDR.unpack_from(data)
        seqs.append(seq)
        delays.append(now - sent)
    return {"seqs": seqs, "delays_ns": delays}


def send(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = bytes(max(0, a.size - HDR.size))
    bigpad = bytes(max(0, a.big_size - HDR.size))
    start = time.monotonic()
    for i in range(a.count):
        big = a.big_every and i % a.big_every == a.big_every - 1
        s.sendto(HDR.pack(i, time.monotonic_ns()) + (bigpad if big else pad), (a.to, a.port))
        # Paced against the schedule, not the previous packet: no drift over the run.
        delay = start + (i + 1) * a.interval_us / 1e6 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return {"sent": a.count}


def echo(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", a.port))
    ready()
    end, n = time.monotonic() + a.deadline, 0
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            data, peer = s.recvfrom(65535)
        except socket.timeout:
            break
        s.sendto(data, peer)
        n += 1
    return {"echoed": n}


def ping(a: argparse.Namespace) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rtts = []
    for i in range(a.count):
        t0 = time.monotonic_ns()
        s.sendto(HDR.pack(i, t0), (a.to, a.port))
        s.settimeout(2.0)
        try:
            while True:
                seq, _ = HDR.unpack_from(s.recv(65535))
                if seq == i:
                    break
            rtts.append(time.monotonic_ns() - t0)
        except socket.timeout:
            pass
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


MODES = {"recv": recv, "send": send, "echo": echo, "ping": ping, "tcp-sink": tcp_sink, "tcp-source": tcp_source}


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
