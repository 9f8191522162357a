# SPDX-License-Identifier: Apache-2.0
"""Frames between agent and controller (byte layouts: spec/protocol.toml [layout.*],
shown in docs/protocol.md).

Decoding never guesses: every problem raises FrameError naming what was wrong and the
stream offset of the frame, so a corrupt stream is reported, never silently stored."""
from __future__ import annotations

import dataclasses
import io
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator

from tlsbench.core import spec as specmod

_LAYOUTS = specmod.load().layouts
FRAME_HEADER = _LAYOUTS["frame_header"].struct  # magic, version, type, payload length
FRAME_CRC = struct.Struct("<I")  # the CRC-32 after the payload
RUN = _LAYOUTS["run_request"]  # see RunRequest
REP_HEADER = _LAYOUTS["rep_header"]  # see RepHeader
RECORD_SIZE = _LAYOUTS["record"].size
REASON_MAX = 255  # bytes of failure text after a REP's records


class FrameError(Exception):
    """A frame could not be decoded; `problem` is a short keyword, `offset` the stream
    offset of the frame's first byte."""

    def __init__(self, problem: str, offset: int, detail: str = ""):
        self.problem = problem
        self.offset = offset
        self.detail = detail
        super().__init__(f"{problem} at stream offset {offset}" + (f": {detail}" if detail else ""))


@dataclass(frozen=True)
class Frame:
    """One decoded frame."""

    type: int  # spec [frame] value
    payload: bytes
    offset: int  # stream offset of the frame's first byte (for error messages)

    @property
    def type_name(self) -> str:
        return specmod.load().frames.name(self.type)

    def json(self) -> dict[str, Any]:
        """The payload of a JSON frame (HELLO, SUITES, DONE, ERROR) as a dict."""
        try:
            value = json.loads(self.payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FrameError("bad JSON payload", self.offset, f"{self.type_name}: {exc}") from None
        if not isinstance(value, dict):
            raise FrameError("bad JSON payload", self.offset, f"{self.type_name}: not an object")
        return value


def encode_frame(frame_type: int, payload: bytes = b"") -> bytes:
    s = specmod.load()
    if len(payload) > s.max_payload:
        raise ValueError(f"payload of {len(payload)} bytes is over the limit of {s.max_payload}")
    head = FRAME_HEADER.pack(s.magic, s.protocol_version, frame_type, len(payload)) + payload
    return head + FRAME_CRC.pack(zlib.crc32(head))


def encode_json(frame_type: int, value: dict[str, Any]) -> bytes:
    return encode_frame(frame_type, json.dumps(value, separators=(",", ":")).encode())


def check_header(head: bytes, offset: int) -> tuple[int, int]:
    """Returns (type, length) of a frame header or raises naming the bad field."""
    s = specmod.load()
    magic, version, frame_type, length = FRAME_HEADER.unpack(head)
    if magic != s.magic:
        raise FrameError("bad magic", offset, f"0x{magic:04X}, expected 0x{s.magic:04X}")
    if version != s.protocol_version:
        raise FrameError("bad version", offset, f"{version}, expected {s.protocol_version}")
    if frame_type not in s.frames.by_value:
        raise FrameError("bad frame type", offset, f"{frame_type} is not in spec [frame]")
    if length > s.max_payload:
        raise FrameError("frame too long", offset, f"length {length} > max_payload {s.max_payload}")
    return frame_type, length


class FrameReader:
    """Reads frames one by one from a binary stream (a pipe or a file)."""

    def __init__(self, stream: BinaryIO, offset: int = 0):
        self.stream = stream
        self.offset = offset  # stream offset of the next byte (bytes consumed so far)

    def _read_exact(self, n: int, frame_offset: int, what: str) -> bytes:
        data = self.stream.read(n)
        while data is not None and 0 < len(data) < n:  # pipes may return short reads
            more = self.stream.read(n - len(data))
            if not more:
                break
            data += more
        if data is None or len(data) < n:
            got = 0 if data is None else len(data)
            raise FrameError("truncated frame", frame_offset, f"stream ended inside the {what} ({got} of {n} bytes)")
        return data

    def read(self) -> Frame | None:
        """The next frame, or None at a clean end of stream (between frames)."""
        start = self.offset
        first = self.stream.read(FRAME_HEADER.size)
        if not first:
            return None
        head = first if len(first) == FRAME_HEADER.size else first + self._read_exact(
            FRAME_HEADER.size - len(first), start, "header")
        frame_type, length = check_header(head, start)
        body = self._read_exact(length + FRAME_CRC.size, start, "payload")
        payload, (crc,) = body[:length], FRAME_CRC.unpack(body[length:])
        if zlib.crc32(body[:length], zlib.crc32(head)) != crc:
            raise FrameError("bad CRC", start, f"{specmod.load().frames.name(frame_type)} frame of {length} bytes")
        self.offset = start + FRAME_HEADER.size + length + FRAME_CRC.size
        return Frame(frame_type, payload, start)

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame


def decode_frames(data: bytes) -> list[Frame]:
    """Every frame of a byte string (e.g. a file written by the agent's `run --out`)."""
    return list(FrameReader(io.BytesIO(data)))


@dataclass(frozen=True)
class RunRequest:
    """RUN: one configuration and which repetitions to ship (docs/protocol.md)."""

    config_id: int  # the store's config.id, echoed in every REP
    suite_id: int  # IANA
    group: int  # spec [group] value, 0 = the agent's default
    credential: int  # spec [credential] value
    direction: int  # spec [direction] value
    transport: int  # spec [transport] value
    repetitions: int  # to ship
    warmup: int  # run first, not shipped
    total_bytes: int  # application bytes per direction
    record_size: int  # plaintext bytes per write
    first_index: int  # index of the first shipped repetition
    options: int = 0  # spec [options] bits 0-7
    options_high: int = 0  # protocol 5: bits 8-15 (RunRequest.options_of splits a bit field)
    # Protocol 2 (two-process mode and DTLS; docs/networks.md). Defaults: memory, both peers, TLS.
    role: int = 0  # spec [role] value: both (memory), or the peer this agent plays
    protocol: int = 0  # spec [protocol_kind] value: tls or dtls
    family: int = 0  # peer endpoint address family: 0 none (memory), 4, 6
    max_fragment: int = 0  # RFC 6066 max_fragment_length code, 0 = none
    addr: bytes = b""  # the server's address, network order (4 or 16 bytes)
    port: int = 0  # the server's port
    tcp_mss: int = 0  # TCP_MAXSEG, 0 = the kernel's
    dtls_timeout_min_ms: int = 0  # 0 = the library's default
    dtls_timeout_max_ms: int = 0
    dtls_mtu: int = 0
    # Protocol 3 (docs/experiments.md): 0 = a handshake RUN; n >= 1 = the n-th entry of HELLO's
    # `experiments` (1-based), total_bytes its payload size; suite, group and credential 0,
    # direction none, memory, role both, TLS; record_size is ignored (send 1).
    experiment: int = 0

    @staticmethod
    def options_of(bits: int) -> dict[str, int]:
        """The two option bytes of a spec [options] bit field."""
        return {"options": bits & 0xFF, "options_high": bits >> 8}

    def encode(self) -> bytes:
        return encode_frame(specmod.load().frames.RUN, RUN.pack(dataclasses.asdict(self)))


@dataclass(frozen=True)
class RepHeader:
    """The header of a REP frame, one field per [layout.rep_header] field (protocol 2
    appended the fields with defaults)."""

    config_id: int
    index: int
    status: int  # spec [status] value
    failed_peer: int  # spec [peers] value, 255 = none
    flags: int  # spec [flags] bits
    error_code: int  # the library's code (signed)
    n_records: int
    dropped: int
    bytes_c2s: int
    bytes_s2c: int
    start_ns: int
    handshake_wall_ns: int
    handshake_cpu_ns: int
    packets_c2s: int = 0  # UDP datagrams / TCP segments (TCP_INFO) / memory sends
    packets_s2c: int = 0
    retransmissions: int = 0  # TCP_INFO tcpi_total_retrans + DTLS flights resent
    role: int = 0  # spec [role] value of the agent that measured it
    repetition_wall_ns: int = 0  # setup start .. close end
    # Protocol 4: the connection it ran on (two-process mode; 0 = none), docs/networks.md "Identity".
    client_port: int = 0
    server_port: int = 0
    reason_len: int = 0  # bytes of failure text after the records (Rep.reason)

    @property
    def connection(self) -> tuple[int, int]:
        """(client port, server port): what the two agents' REPs of one repetition share."""
        return self.client_port, self.server_port


@dataclass(frozen=True)
class Rep:
    """One repetition as shipped: its header, its raw 32-byte trace records and why it failed."""

    header: RepHeader
    records: bytes  # n_records × 32 bytes, kept verbatim for the store
    reason: str = ""  # the agent's failure text ("" when OK)


def decode_rep(frame: Frame) -> Rep:
    """Decodes a REP frame's payload; sizes must agree exactly."""
    payload = frame.payload
    if len(payload) < REP_HEADER.size:
        raise FrameError("short REP", frame.offset, f"{len(payload)} bytes, header alone is {REP_HEADER.size}")
    header = RepHeader(**REP_HEADER.unpack(payload))
    n_records, status, reason_len = header.n_records, header.status, header.reason_len
    records = payload[REP_HEADER.size:len(payload) - reason_len]
    if reason_len > REASON_MAX or len(payload) != REP_HEADER.size + n_records * RECORD_SIZE + reason_len:
        raise FrameError("REP size mismatch", frame.offset,
                         f"header says {n_records} records ({n_records * RECORD_SIZE} bytes) and a {reason_len}-byte "
                         f"reason, payload carries {len(payload) - REP_HEADER.size} bytes after the header")
    try:
        reason = payload[len(payload) - reason_len:].decode("utf-8") if reason_len else ""
    except UnicodeDecodeError as exc:
        raise FrameError("bad REP reason", frame.offset, f"not UTF-8: {exc}") from None
    if status not in specmod.load().status.by_value:
        raise FrameError("bad REP status", frame.offset, f"{status} is not in spec [status]")
    return Rep(header, bytes(records), reason)


def encode_rep(header: RepHeader, records: bytes, reason: str = "") -> bytes:
    """A REP frame (what the agent sends); used by tests and benchmarks."""
    text = reason.encode()[:REASON_MAX]
    payload = REP_HEADER.pack({**dataclasses.asdict(header), "n_records": len(records) // RECORD_SIZE,
                               "reason_len": len(text)})
    return encode_frame(specmod.load().frames.REP, payload + records + text)

