# SPDX-License-Identifier: Apache-2.0
"""One DTLS 1.3 handshake between two real agents on loopback, every datagram relayed and taken
apart: the records of each flight (plaintext DTLSPlaintext, or the RFC 9147 unified header with
its connection ID, sequence number and length), the handshake messages inside the plaintext
ones with their extensions, and the size of what each protected record carries (its length
minus the tag and the inner content type). What the IETF comparison counts can then be set
beside what a library sends, message by message (bench/dtls13_auth.py).

    .venv/bin/python bench/dtls_wire.py AGENT [agent run options...]
"""
from __future__ import annotations

import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field

HANDSHAKE, ACK, ALERT = 22, 26, 21
MESSAGES = {1: "ClientHello", 2: "ServerHello", 8: "EncryptedExtensions", 11: "Certificate",
            13: "CertificateRequest", 15: "CertificateVerify", 20: "Finished", 4: "NewSessionTicket"}
EXTENSIONS = {0: "server_name", 10: "supported_groups", 13: "signature_algorithms", 16: "alpn",
              19: "client_certificate_type", 20: "server_certificate_type", 22: "encrypt_then_mac",
              23: "extended_master_secret", 35: "session_ticket", 41: "pre_shared_key", 43: "supported_versions",
              44: "cookie", 45: "psk_key_exchange_modes", 49: "post_handshake_auth", 51: "key_share",
              54: "connection_id", 65281: "renegotiation_info"}


@dataclass
class Record:
    direction: str  # c2s / s2c
    datagram: int
    header: int  # record header bytes (DTLSPlaintext 13; unified header 1 + CID + 1..2 + 0..2)
    body: int  # bytes after the header
    kind: str  # "plaintext <type>" or "protected"
    messages: list[tuple[str, int, list[tuple[str, int]]]] = field(default_factory=list)  # name, bytes, extensions


def extensions(body: bytes, offset: int) -> list[tuple[str, int]]:
    """(name, bytes including its 4-byte header) of each extension from `offset` (the 2-byte length)."""
    out, end = [], offset + 2 + int.from_bytes(body[offset:offset + 2], "big")
    offset += 2
    while offset + 4 <= end:
        kind, n = struct.unpack_from(">HH", body, offset)
        out.append((EXTENSIONS.get(kind, str(kind)), 4 + n))
        offset += 4 + n
    return out


def client_hello_extensions(msg: bytes) -> list[tuple[str, int]]:
    """A ClientHello's variable fields (bytes with their length prefix), then its extensions."""
    out, offset = [], 2 + 32  # legacy_version, random
    for name, prefix in (("legacy_session_id", 1), ("legacy_cookie", 1), ("cipher_suites", 2), ("compression", 1)):
        n = prefix + int.from_bytes(msg[offset:offset + prefix], "big")
        out.append((name, n))
        offset += n
    return out + extensions(msg, offset)


def server_hello_extensions(msg: bytes) -> list[tuple[str, int]]:
    offset = 2 + 32
    offset += 1 + msg[offset]  # legacy_session_id_echo
    offset += 2 + 1  # cipher suite, compression
    return extensions(msg, offset)


def records(direction: str, index: int, data: bytes, cid_len: int) -> list[Record]:
    out, offset = [], 0
    while offset < len(data):
        first = data[offset]
        if first & 0xE0 == 0x20:  # unified header (RFC 9147 section 4)
            header = 1 + (cid_len if first & 0x10 else 0) + (2 if first & 0x08 else 1)
            if first & 0x04:
                length = int.from_bytes(data[offset + header:offset + header + 2], "big")
                header += 2
            else:
                length = len(data) - offset - header
            out.append(Record(direction, index, header, length, "protected"))
        else:  # DTLSPlaintext: type, version, epoch, sequence (6), length
            length = int.from_bytes(data[offset + 11:offset + 13], "big")
            rec = Record(direction, index, 13, length, f"plaintext {first}")
            body = data[offset + 13:offset + 13 + length]
            pos = 0
            while first == HANDSHAKE and pos + 12 <= len(body):
                kind, frag = body[pos], int.from_bytes(body[pos + 9:pos + 12], "big")
                msg = body[pos + 12:pos + 12 + frag]
                parse = {1: client_hello_extensions, 2: server_hello_extensions}.get(kind)
                rec.messages.append((MESSAGES.get(kind, str(kind)), 12 + frag, parse(msg) if parse else []))
                pos += 12 + frag
            out.append(rec)
        offset += header if first & 0xE0 == 0x20 else 13
        offset += length
    return out


def relay(listen: socket.socket, server: tuple[str, int], log: list[tuple[str, bytes]], stop: threading.Event) -> None:
    """Forwards datagrams between the first client that writes and the server, logging each."""
    upstream = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    upstream.settimeout(0.05)
    listen.settimeout(0.05)
    client = None
    while not stop.is_set():
        for sock, direction in ((listen, "c2s"), (upstream, "s2c")):
            try:
                data, source = sock.recvfrom(65536)
            except (socket.timeout, OSError):
                continue
            log.append((direction, data))
            if direction == "c2s":
                client = source
                upstream.sendto(data, server)
            elif client:
                listen.sendto(data, client)
    upstream.close()


def capture(agent: str, *options: str, port: int = 24433) -> list[tuple[str, bytes]]:
    """The datagrams of one handshake (warm-up none, direction none) between two agents."""
    common = ["run", "--transport", "udp", "--protocol", "dtls", "--reps", "1", "--warmup", "0",
              "--direction", "none", *options]
    server = subprocess.Popen([agent, *common, "--role", "server", "--peer", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listen.bind(("127.0.0.1", 0))
    log: list[tuple[str, bytes]] = []
    stop = threading.Event()
    thread = threading.Thread(target=relay, args=(listen, ("127.0.0.1", port), log, stop))
    thread.start()
    try:
        subprocess.run([agent, *common, "--role", "client", "--peer", f"127.0.0.1:{listen.getsockname()[1]}"],
                       capture_output=True, timeout=60, check=True)
        server.wait(timeout=60)
    finally:
        stop.set()
        thread.join()
        server.kill()
        listen.close()
    return log


def flights(log: list[tuple[str, bytes]], cid_len: int) -> list[list[Record]]:
    """Records grouped into flights: a flight ends where the direction changes."""
    out: list[list[Record]] = []
    last = None
    for i, (direction, data) in enumerate(log):
        if direction != last:
            out.append([])
            last = direction
        out[-1] += records(direction, i, data, cid_len)
    return out


def main() -> int:
    agent, *options = sys.argv[1:]
    cid = 2 if "CONNECTION_ID" in options else 0
    for n, flight in enumerate(flights(capture(agent, *options), cid), 1):
        print(f"flight {n} ({flight[0].direction}): {sum(r.header + r.body for r in flight)} bytes")
        for r in flight:
            what = ", ".join(f"{m} {b}" + (f" [{'; '.join(f'{e} {s}' for e, s in ext)}]" if ext else "")
                             for m, b, ext in r.messages)
            print(f"  datagram {r.datagram}: {r.kind} record, header {r.header} + {r.body}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
