#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two agent processes over real sockets on loopback (stdlib only).

A server agent binds 127.0.0.1:0 and says where it listens; a client agent (maybe another
library) connects; both write frame files (`run --out`) whose REPs are checked: status OK,
each trace holds its own peer only, steps nest I/O and crypto, both agents count the same
bytes, both name the same connection (client and server port), and the transport's counters
are sane. With --loss N, a UDP relay in this process drops the server's first N datagrams: the
DTLS retransmission must be counted and flagged. With --drop-last-flight, the relay drops the
server's last flight (ChangeCipherSpec, Finished) of every association once: the server has
finished by then, so only its lingering session can answer the client's retransmission.

Usage: netpair.py --labels spec/labels.toml --server AGENT --client AGENT
                  --transport tcp|udp [--suite 0xC02B] [--reps 3] [--cookies] [--loss N] [--drop-last-flight]
                  [--extra "agent options for both, comma or space separated"]
Also: netpair.py --labels ... --memory-dtls AGENT (DTLS over the memory transport)."""
import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import tomllib
import zlib
from pathlib import Path

# The frame version of the spec this checkout's agents are built from.
SPEC_PROTOCOL = Path(__file__).resolve().parents[2] / "spec" / "protocol.toml"
VERSION = tomllib.loads(SPEC_PROTOCOL.read_text())["protocol"]["version"]
REP, DONE = 4, 5
REP_HEADER = struct.Struct("<IIBBHIiIIHH5QIIIB3xQ")
RECORD = struct.Struct("<HBBIQQQ")
START, STOP = 0, 1
CLIENT, SERVER, NONE = 0, 1, 255
FLAG_RETRANSMITTED = 2


def frames(data: bytes):
    pos = 0
    while pos < len(data):
        magic, ver, ftype, n = struct.unpack_from("<HBBI", data, pos)
        assert magic == 0x4254 and ver == VERSION, f"bad frame header at {pos}"
        assert struct.unpack_from("<I", data, pos + 8 + n)[0] == zlib.crc32(data[pos:pos + 8 + n])
        yield ftype, data[pos + 8:pos + 8 + n]
        pos += 12 + n


def reps(path: str):
    out = []
    for ftype, p in frames(open(path, "rb").read()):
        if ftype != REP:
            continue
        h = REP_HEADER.unpack_from(p)
        names = ("config", "index", "status", "failed_peer", "client_port", "flags", "error", "n", "dropped",
                 "server_port", "reason_len", "c2s", "s2c", "start", "hs_wall", "hs_cpu", "pk_c2s", "pk_s2c",
                 "retrans", "role", "rep_wall")
        rep = dict(zip(names, h))
        rep["records"] = [RECORD.unpack_from(p, REP_HEADER.size + 32 * i) for i in range(rep["n"])]
        end = REP_HEADER.size + 32 * rep["n"]
        assert len(p) == end + rep["reason_len"], f"REP of {len(p)} bytes, header says {end} + reason"
        rep["reason"] = p[end:].decode()
        out.append(rep)
    return out


class Labels:
    def __init__(self, path):
        spec = tomllib.load(open(path, "rb"))
        self.by_name = {l["name"]: l["id"] for l in spec["label"]}
        self.category = {l["id"]: l["category"] for l in spec["label"]}


def check_trace(rep, peer, labels: Labels, name: str):
    """Own peer only; every step's direct children are I/O or crypto; at least one crypto
    operation and one I/O span sit inside steps; processing = step - I/O is positive."""
    recs = rep["records"]
    peers = {r[2] for r in recs}
    assert peers <= {peer, NONE}, f"{name}: trace holds peers {peers}, expected only {peer}"
    stack, crypto_in_step, io_in_step, processing = [], 0, 0, 0
    for label, kind, p, _seq, t, _cpu, _v in recs:
        cat = labels.category.get(label)
        if kind == START:
            if stack and stack[-1][1] == "step":
                crypto_in_step += cat == "crypto"
                io_in_step += cat == "io"
                assert cat in ("io", "crypto"), f"{name}: {cat} inside a step"
            stack.append([label, cat, t, 0])
        elif kind == STOP:
            top = stack.pop()
            assert top[0] == label, f"{name}: STOP {label} closes START {top[0]}"
            dur = t - top[2]
            if top[1] == "step":
                processing += dur - top[3]
            if stack and top[1] == "io" and stack[-1][1] == "step":
                stack[-1][3] += dur
    assert not stack, f"{name}: unclosed spans"
    assert crypto_in_step > 0 and io_in_step > 0, f"{name}: no crypto/io inside steps"
    return processing


def start_server(agent, transport, suite, nreps, extra, out):
    cmd = [agent, "run", "--suite", suite, "--transport", transport, "--role", "server", "--peer", "127.0.0.1:0",
           "--reps", str(nreps), "--warmup", "0", "--out", out] + extra
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert "listening on" in line, f"server did not start: {line!r} {proc.stderr.read()}"
    return proc, int(line.rsplit(":", 1)[1])


def has_change_cipher_spec(datagram: bytes) -> bool:
    """Whether a DTLS datagram holds a ChangeCipherSpec record (type 20): the last flight."""
    pos = 0
    while pos + 13 <= len(datagram):
        if datagram[pos] == 20:
            return True
        pos += 13 + struct.unpack_from(">H", datagram, pos + 11)[0]
    return False


class Relay(threading.Thread):
    """client <-> relay <-> server over UDP, one back socket per client, bound on 127.0.0.2 to
    the client's own port so the server still sees the repetition's port. Drops the server's
    first `drop` datagrams; with `last_flight`, each association's last server flight once
    (from its ChangeCipherSpec until the client sends again)."""

    def __init__(self, server_port, drop, last_flight=False):
        super().__init__(daemon=True)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.server = ("127.0.0.1", server_port)
        self.port = self.front.getsockname()[1]
        self.drop, self.dropped, self.last_flight = drop, 0, last_flight
        self.backs: dict = {}  # client address -> back socket
        self.state: dict = {}  # client address -> "forward" | "dropping" | "done"
        self.flights_dropped = 0
        self.stop = False

    def back(self, client):
        if client not in self.backs:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.2", client[1]))
            s.connect(self.server)
            self.backs[client] = s
            self.state[client] = "forward"
        return self.backs[client]

    def from_server(self, client, data):
        if self.dropped < self.drop:
            self.dropped += 1
            return
        if self.last_flight and self.state[client] == "forward" and has_change_cipher_spec(data):
            self.state[client] = "dropping"
            self.flights_dropped += 1
        if self.state[client] != "dropping":
            self.front.sendto(data, client)

    def run(self):
        import select
        while not self.stop:
            by_socket = {s: c for c, s in self.backs.items()}
            ready, _, _ = select.select([self.front, *by_socket], [], [], 0.1)
            for s in ready:
                try:
                    data, addr = s.recvfrom(65535)
                except OSError:  # ICMP unreachable once an agent is gone
                    continue
                if s is self.front:
                    self.back(addr).send(data)
                    if self.state[addr] == "dropping":
                        self.state[addr] = "done"  # the client retransmitted: let the answer through
                else:
                    self.from_server(by_socket[s], data)


def pair(a, labels):
    extra = a.extra.replace(",", " ").split() + (["--cookies"] if a.cookies else [])
    with tempfile.TemporaryDirectory() as tmp:
        srv_out, cli_out = os.path.join(tmp, "server.tb"), os.path.join(tmp, "client.tb")
        server, port = start_server(a.server, a.transport, a.suite, a.reps, extra, srv_out)
        relay = None
        if a.loss or a.drop_last_flight:
            relay = Relay(port, a.loss, a.drop_last_flight)
            relay.start()
            port = relay.port
        cli = subprocess.run([a.client, "run", "--suite", a.suite, "--transport", a.transport, "--role", "client",
                              "--peer", f"127.0.0.1:{port}", "--reps", str(a.reps), "--warmup", "0",
                              "--out", cli_out] + extra, capture_output=True, text=True, timeout=60)
        srv_stdout, srv_stderr = server.communicate(timeout=60)
        if relay:
            relay.stop = True
        assert cli.returncode == 0, f"client failed: {cli.stdout} {cli.stderr}; server: {srv_stderr[-2000:]}"
        assert server.returncode == 0, f"server failed: {srv_stdout} {srv_stderr}"
        srv, clr = reps(srv_out), reps(cli_out)
    assert len(srv) == len(clr) == a.reps
    for i, (s, c) in enumerate(zip(srv, clr)):
        assert s["status"] == 0 and c["status"] == 0, (s["status"], c["status"], s["reason"], c["reason"])
        assert s["reason"] == c["reason"] == ""
        assert (s["role"], c["role"]) == (2, 1)
        same = ("client_port",) if relay else ("client_port", "server_port")  # a relay has its own port
        assert all(s[k] == c[k] for k in same), \
            f"rep {i}: the agents name different connections: {[(k, s[k], c[k]) for k in same]}"
        # the repetition's port, in whichever block was free (tests running at once share the range)
        assert 16384 <= c["client_port"] < 32768 and c["client_port"] % 4096 == i, f"rep {i}: port {c['client_port']}"
        if a.transport == "tcp":  # a stream: every byte arrives, both count the same
            assert (s["c2s"], s["s2c"]) == (c["c2s"], c["s2c"]), f"rep {i}: bytes differ {s} {c}"
        assert s["c2s"] > 100 and s["s2c"] > 100 and s["pk_c2s"] > 0 and s["pk_s2c"] > 0
        pc = check_trace(c, CLIENT, labels, "client")
        ps = check_trace(s, SERVER, labels, "server")
        assert 0 < pc < c["hs_wall"] and 0 < ps < s["hs_wall"]
        if not (a.loss or a.drop_last_flight):
            # Loopback loses nothing, but a busy machine can fire TCP's tail-loss probe when the
            # receiver is descheduled: what must hold is that a counted retransmission is flagged.
            for r in (s, c):
                assert bool(r["retrans"]) == bool(r["flags"] & FLAG_RETRANSMITTED), f"flag and counter disagree: {r}"
    if a.loss:
        first = clr[0]
        assert first["retrans"] >= 1 and first["flags"] & FLAG_RETRANSMITTED, f"loss not counted: {first}"
        rt = labels.by_name["RETRANSMIT"]
        assert any(r[0] == rt for r in first["records"]), "no RETRANSMIT instant in the client's trace"
    if a.drop_last_flight:
        assert relay.flights_dropped == a.reps, f"{relay.flights_dropped} last flights dropped, {a.reps} expected"
        assert all(c["retrans"] >= 1 for c in clr), "a client finished without retransmitting its last flight"
        linger = labels.by_name["LINGER"]
        answered = [r[6] for s in srv[1:] for r in s["records"] if r[0] == linger]
        assert answered and max(answered) > 0, "no LINGER instant with an answer in the server's traces"
    c = clr[-1]
    print(f"{a.transport} {os.path.basename(a.client)} -> {os.path.basename(a.server)}: ok; last rep client "
          f"wall {c['hs_wall'] / 1e3:.1f} us processing {pc / 1e3:.1f} us; server processing {ps / 1e3:.1f} us; "
          f"bytes c2s {c['c2s']} s2c {c['s2c']} packets {c['pk_c2s']}/{c['pk_s2c']} retrans {clr[0]['retrans']}")


def memory_dtls(a, labels):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.tb")
        for cookies in ([], ["--cookies"]):
            r = subprocess.run([a.memory_dtls, "run", "--suite", a.suite, "--protocol", "dtls", "--reps", "2",
                                "--out", out] + cookies, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stdout + r.stderr
            for rep in reps(out):
                assert rep["status"] == 0 and rep["retrans"] == 0 and rep["role"] == 0
                assert rep["pk_c2s"] > 0 and rep["pk_s2c"] > 0
                hvr = labels.by_name["HELLO_VERIFY_REQUEST"]
                if cookies and "wolfssl" not in a.memory_dtls:  # wolfSSL's HVR is inside a flight step
                    assert any(x[0] == hvr for x in rep["records"]), "no HelloVerifyRequest step with cookies"
    print(f"dtls in memory {os.path.basename(a.memory_dtls)}: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", required=True)
    ap.add_argument("--server")
    ap.add_argument("--client")
    ap.add_argument("--transport", default="tcp")
    ap.add_argument("--suite", default="0xC02B")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cookies", action="store_true")
    ap.add_argument("--loss", type=int, default=0)
    ap.add_argument("--drop-last-flight", action="store_true")
    ap.add_argument("--extra", default="")
    ap.add_argument("--memory-dtls")
    a = ap.parse_args()
    labels = Labels(a.labels)
    if a.memory_dtls:
        memory_dtls(a, labels)
    else:
        pair(a, labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
