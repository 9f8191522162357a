# SPDX-License-Identifier: Apache-2.0
"""Agents on another machine (docs/fleet.md), reached only through mutually authenticated TLS
1.3 (Python's ssl, i.e. OpenSSL): a fleet's certificate authority signs one certificate for
the agents' side and one for the controllers' side (`tlsbench remote keys`, with Debian's
openssl). `tlsbench remote serve --listen ADDR:PORT` on the device accepts a connection only
if its client certificate is the fleet's controller certificate; then, and only then, it
starts the agent the client names and copies the framed protocol both ways until either side
ends. A connection without a certificate, with another authority's, or a recorded handshake
played again (the server's fresh random makes its Finished wrong) fails the handshake: it is
logged, and no agent starts, so it gets no HELLO and can send no RUN.

On the controller's side a remote agent is a local process (run/endpoints/process.py): the
bridge `tlsbench remote connect ADDR:PORT ... AGENT serve` whose stdin and stdout are the
remote agent's, so starting, killing (the connection drops, the server kills the agent) and
reading it are a host agent's."""
from __future__ import annotations

import os
import selectors
import socket
import ssl
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from tlsbench.core.errors import UserError

AGENT_NAME, CONTROLLER_NAME = "tlsbench-agent", "tlsbench-controller"  # the certificates' names
HANDSHAKE_S = 10.0  # a peer that has not finished its handshake by then is dropped
NAME_BYTES = 256  # the agent's name, the first line after the handshake
CHUNK = 1 << 16


class RemoteError(UserError, RuntimeError):
    """A fleet secret or a remote address that cannot be used."""


@dataclass(frozen=True)
class FleetKeys:
    """A fleet's key folder: the authority's certificate and each side's key and certificate."""

    folder: Path

    def file(self, name: str) -> Path:
        return self.folder / name

    def need(self, *names: str) -> None:
        missing = [n for n in names if not self.file(n).is_file()]
        if missing:
            raise RemoteError(f"{self.folder} lacks {', '.join(missing)}: `tlsbench remote keys {self.folder}` makes "
                              "a fleet's keys (copy ca.pem and the agent's pair to the device)")

    def server_context(self) -> ssl.SSLContext:
        self.need("ca.pem", "agent.pem", "agent.key")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(self.file("ca.pem"))
        ctx.load_cert_chain(self.file("agent.pem"), self.file("agent.key"))
        return ctx

    def client_context(self) -> ssl.SSLContext:
        self.need("ca.pem", "controller.pem", "controller.key")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # checks the server's certificate and name
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.load_verify_locations(self.file("ca.pem"))
        ctx.load_cert_chain(self.file("controller.pem"), self.file("controller.key"))
        return ctx


def make_keys(folder: Path, days: int = 3650) -> FleetKeys:
    """A new authority (P-256) and the two sides' keys and certificates signed by it."""
    folder.mkdir(parents=True, exist_ok=True)
    keys = FleetKeys(folder)
    if keys.file("ca.pem").exists():
        raise RemoteError(f"{folder} already holds a fleet's keys: remove them first, or use another folder")

    def openssl(*args: str) -> None:
        done = subprocess.run(["openssl", *args], capture_output=True, text=True)
        if done.returncode:
            raise RemoteError(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")
    new_key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl("req", "-x509", *new_key, "-keyout", str(keys.file("ca.key")), "-out", str(keys.file("ca.pem")),
            "-days", str(days), "-subj", "/CN=tlsbench-fleet-ca")
    for side, name in (("agent", AGENT_NAME), ("controller", CONTROLLER_NAME)):
        csr = keys.file(f"{side}.csr")
        openssl("req", *new_key, "-keyout", str(keys.file(f"{side}.key")), "-out", str(csr), "-subj", f"/CN={name}",
                "-addext", f"subjectAltName=DNS:{name}")
        openssl("x509", "-req", "-in", str(csr), "-CA", str(keys.file("ca.pem")), "-CAkey", str(keys.file("ca.key")),
                "-CAcreateserial", "-out", str(keys.file(f"{side}.pem")), "-days", str(days), "-copy_extensions", "copy")
        csr.unlink()
    for key in folder.glob("*.key"):
        key.chmod(0o600)
    return keys


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT (an IPv6 host in brackets); a host is required: nothing listens everywhere unasked."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise RemoteError(f"{text!r} is not HOST:PORT (e.g. 192.0.2.10:7543 or [2001:db8::1]:7543)")
    return host.strip("[]"), int(port)


def _pump(tls: ssl.SSLSocket, read_fd: int, write: Callable[[bytes], None]) -> None:
    """Copies `read_fd` into the TLS connection and the connection into `write` until either
    ends. One thread does both (an SSL connection is not for two threads at once)."""
    sel = selectors.DefaultSelector()
    sel.register(tls, selectors.EVENT_READ, "tls")
    sel.register(read_fd, selectors.EVENT_READ, "fd")
    try:
        while True:
            ready = [key.data for key, _ in sel.select()] if not tls.pending() else ["tls"]
            for which in ready:
                if which == "tls":
                    data = tls.recv(CHUNK)
                    if not data:
                        return
                    write(data)
                else:
                    data = os.read(read_fd, CHUNK)
                    if not data:
                        return
                    tls.sendall(data)
    except (OSError, ssl.SSLError):
        return
    finally:
        sel.close()


# ------------------------------------------------------------------ the device's side
@dataclass
class Server:
    """`tlsbench remote serve`: one agent per authenticated connection."""

    address: tuple[str, int]
    keys: FleetKeys
    agents: Mapping[str, Path]  # agent name -> its binary: what a client may start
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
    refused: int = 0
    served: int = 0

    def __post_init__(self) -> None:
        self.context = self.keys.server_context()
        family = socket.AF_INET6 if ":" in self.address[0] else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(self.address)
        except OSError as exc:
            self.sock.close()
            raise RemoteError(f"cannot listen on {self.address[0]}:{self.address[1]}: {exc.strerror}") from None
        self.sock.listen(8)
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def serve_forever(self) -> None:
        self.log(f"listening on {self.address[0]}:{self.port} (mutual TLS 1.3; agents {', '.join(sorted(self.agents))})")
        while True:
            conn, peer = self.sock.accept()
            threading.Thread(target=self._one, args=(conn, f"{peer[0]}:{peer[1]}"), daemon=True).start()

    def _refuse(self, peer: str, why: str) -> None:
        with self.lock:
            self.refused += 1
        self.log(f"refused {peer}: {why}")

    def _one(self, conn: socket.socket, peer: str) -> None:
        conn.settimeout(HANDSHAKE_S)
        try:
            tls = self.context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            conn.close()
            self._refuse(peer, getattr(exc, "reason", None) or str(exc) or type(exc).__name__)
            return
        with tls:
            subject = dict(x[0] for x in tls.getpeercert().get("subject", ()))
            if subject.get("commonName") != CONTROLLER_NAME:
                return self._refuse(peer, f"certificate of {subject.get('commonName')!r}, not a controller's")
            try:
                name = _read_line(tls)
            except (OSError, ssl.SSLError, ValueError) as exc:
                return self._refuse(peer, f"no agent name: {exc}")
            if name not in self.agents:
                return self._refuse(peer, f"asked for {name!r}, which this device does not serve")
            tls.settimeout(None)
            agent = subprocess.Popen([str(self.agents[name]), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0, start_new_session=True)
            with self.lock:
                self.served += 1
            self.log(f"accepted {peer}: {name} (pid {agent.pid})")
            assert agent.stdin is not None and agent.stdout is not None
            try:
                _pump(tls, agent.stdout.fileno(), agent.stdin.write)
            finally:
                agent.kill()  # the controller left (or killed its bridge): the agent goes with it
                agent.wait()
                self.log(f"closed {peer}: {name}")


def _read_line(tls: ssl.SSLSocket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        part = tls.recv(1)
        if not part or len(data) >= NAME_BYTES:
            raise ValueError("the connection ended before the agent's name")
        data += part
    return data.decode().strip()


# ------------------------------------------------------------------ the controller's side
def connect(address: tuple[str, int], keys: FleetKeys, agent: str, timeout_s: float = HANDSHAKE_S) -> ssl.SSLSocket:
    """A connection to a remote agent server, both sides authenticated, the agent named."""
    context = keys.client_context()
    try:
        raw = socket.create_connection(address, timeout=timeout_s)
        tls = context.wrap_socket(raw, server_hostname=AGENT_NAME)
        tls.sendall(f"{agent}\n".encode())
    except (ssl.SSLError, OSError) as exc:
        raise RemoteError(f"cannot reach the agent at {address[0]}:{address[1]}: "
                          f"{getattr(exc, 'reason', None) or exc}") from None
    tls.settimeout(None)
    return tls


def bridge(address: tuple[str, int], keys: FleetKeys, command: Sequence[str]) -> int:
    """The bridge's main: stdin to the remote agent, its output to stdout. `command` is what
    would have started the agent here (`PATH serve`): its file name names the remote agent."""
    agent = Path(command[-2] if len(command) >= 2 and command[-1] == "serve" else command[-1]).name
    with connect(address, keys, agent) as tls:
        out = sys.stdout.buffer

        def write(data: bytes) -> None:
            out.write(data)
            out.flush()
        _pump(tls, sys.stdin.fileno(), write)
    return 0


def bridge_prefix(address: str, keys: Path) -> tuple[str, ...]:
    """The command prefix that runs a host agent at `address` instead of here (RunSettings.remote)."""
    return (sys.executable, "-m", "tlsbench.cli", "remote", "connect", address, "--keys", str(keys), "--")
