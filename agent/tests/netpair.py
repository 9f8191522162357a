#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two agent processes over real sockets on loopback (stdlib only).

A server agent binds 127.0.0.1:0 and says where it listens; a client agent (maybe another
library) connects; both write frame files (`run --out`) whose REPs are checked: status OK,
each trace holds its own peer only, steps nest I/O and crypto, both agents count the same
bytes, and the transport's counters are sane. With --loss N, a UDP relay in this process
drops the server's first N datagrams: the DTLS retransmission must be counted and flagged.

Usage: netpair.py --labels spec/labels.toml --server AGENT --client AGENT
                  --transport tcp|udp [--suite 0xC02B] [--reps 3] [--cookies] [--loss N]
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
REP_HEADER = struct.Struct("<IIBBHIiIII5QIIIB3xQ")
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
        names = ("config", "index", "status", "failed_peer", "_r", "flags", "error", "n", "dropped", "_r1",
                 "c2s", "s2c", "start", "hs_wall", "hs_cpu", "pk_c2s", "pk_s2c", "retrans", "role", "rep_wall")
        rep = dict(zip(names, h))
        rep["records"] = [RECORD.unpack_from(p, REP_HEADER.size + 32 * i) for i in range(rep["n"])]
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


class Relay(threading.Thread):
    """client <-> relay <-> server over UDP, dropping the server's first `drop` datagrams."""

    def __init__(self, server_port, drop):
        super().__init__(daemon=True)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.connect(("127.0.0.1", server_port))
        self.port = self.front.getsockname()[1]
        self.drop, self.dropped, self.client = drop, 0, None
        self.stop = False

    def run(self):
        import select
        while not self.stop:
            ready, _, _ = select.select([self.front, self.back], [], [], 0.1)
            for s in ready:
                try:
                    data, addr = s.recvfrom(65535)
                except OSError:  # ICMP unreachable once an agent is gone
                    continue
                if s is self.front:
                    self.client = addr
                    self.back.send(data)
                elif self.dropped < self.drop:
                    self.dropped += 1
                elif self.client:
                    self.front.sendto(data, self.client)


def pair(a, labels):
    extra = a.extra.replace(",", " ").split() + (["--cookies"] if a.cookies else [])
    with tempfile.TemporaryDirectory() as tmp:
        srv_out, cli_out = os.path.join(tmp, "server.tb"), os.path.join(tmp, "client.tb")
        server, port = start_server(a.server, a.transport, a.suite, a.reps, extra, srv_out)
        relay = None
        if a.loss:
            relay = Relay(port, a.loss)
            relay.start()
            port = relay.port
        cli = subprocess.run([a.client, "run", "--suite", a.suite, "--transport", a.transport, "--role", "client",
                              "--peer", f"127.0.0.1:{port}", "--reps", str(a.reps), "--warmup", "0",
                              "--out", cli_out] + extra, capture_output=True, text=True, timeout=60)
        srv_stdout, srv_stderr = server.communicate(timeout=60)
        if relay:
            relay.stop = True
        assert cli.returncode == 0, f"client failed: {cli.stdout} {cli.stderr}"
        assert server.returncode == 0, f"server failed: {srv_stdout} {srv_stderr}"
        srv, clr = reps(srv_out), reps(cli_out)
    assert len(srv) == len(clr) == a.reps
    for i, (s, c) in enumerate(zip(srv, clr)):
        assert s["status"] == 0 and c["status"] == 0, (s["status"], c["status"])
        assert (s["role"], c["role"]) == (2, 1)
        if a.transport == "tcp":  # a stream: every byte arrives, both count the same
            assert (s["c2s"], s["s2c"]) == (c["c2s"], c["s2c"]), f"rep {i}: bytes differ {s} {c}"
        assert s["c2s"] > 100 and s["s2c"] > 100 and s["pk_c2s"] > 0 and s["pk_s2c"] > 0
        pc = check_trace(c, CLIENT, labels, "client")
        ps = check_trace(s, SERVER, labels, "server")
        assert 0 < pc < c["hs_wall"] and 0 < ps < s["hs_wall"]
        if not a.loss:
            assert s["retrans"] == 0 and c["retrans"] == 0, f"retransmissions on loopback: {s} {c}"
            assert not (s["flags"] | c["flags"]) & FLAG_RETRANSMITTED
    if a.loss:
        first = clr[0]
        assert first["retrans"] >= 1 and first["flags"] & FLAG_RETRANSMITTED, f"loss not counted: {first}"
        rt = labels.by_name["RETRANSMIT"]
        assert any(r[0] == rt for r in first["records"]), "no RETRANSMIT instant in the client's trace"
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
