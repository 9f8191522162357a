# SPDX-License-Identifier: Apache-2.0
"""The firmware under QEMU as a device, driven over its emulated UART with the framed
protocol (docs/protocol.md). Python standard library only, like serve_smoke.py: the frame
layouts are read from spec/protocol.toml. Used by device_smoke.py (ctest) and
bench/device_sweep.py; the host tool reaches the device through src/tlsbench/run/endpoints/qemu.py.

The serial line is QEMU's stdio chardev (`-serial stdio`, with `-monitor none -display none`
so nothing else shares the stream): QEMU's stdin/stdout are the UART, exactly like a host
agent's pipes, binary-safe, with no socket path or port to manage, and the fastest of the
chardevs measured (stdio 0.70 MB/s, named pipes 0.35, a unix socket 0.17; QEMU moves the
UART's bytes one at a time). QEMU's stderr stays free for the firmware's fault messages
(semihosting).

A UART has no end of stream: the firmware waits for bytes forever. So every read here has
a deadline; past it the target is called hung, killed, and DeviceError says so."""
from __future__ import annotations

import json
import os
import selectors
import signal
import struct
import subprocess
import tempfile
import time
import tomllib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SPEC = tomllib.loads((REPO / "spec" / "protocol.toml").read_text())
LABELS = tomllib.loads((REPO / "spec" / "labels.toml").read_text())
MAGIC = SPEC["protocol"]["magic"]
VERSION = SPEC["protocol"]["version"]
FRAME = {name: entry["value"] for name, entry in SPEC["frame"].items()}
FRAME_NAME = {v: k for k, v in FRAME.items()}
LABEL = {entry["name"]: entry["id"] for entry in LABELS["label"]}
LABEL_NAME = {v: k for k, v in LABEL.items()}
TARGETS = tomllib.loads((REPO / "spec" / "targets.toml").read_text())["target"]
TARGET = "qemu-mps2-an386"  # the firmware device_smoke.py and the bench run
# What the firmware's exit status (semihosting) means (agent/arch/cortex-m/cortex_m.h).
EXITS = {0: "QUIT", 2: "firmware fault", 3: "protocol error: the stream broke"}


class DeviceError(RuntimeError):
    """The target stopped answering, crashed, refused a request or sent a corrupt stream."""


# ---------------------------------------------------------------- layouts
_TYPES = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i"}


@dataclass(frozen=True)
class Layout:
    """One [layout.*] table: a little-endian struct and its field names (reserved fields too)."""
    names: tuple[str, ...]
    fmt: str

    @classmethod
    def of(cls, name: str) -> Layout:
        fields = SPEC["layout"][name]["fields"]
        fmt = "<" + "".join(_TYPES.get(f["type"]) or f"{f['type'][5:]}s" for f in fields)
        assert struct.calcsize(fmt) == SPEC["layout"][name]["size"], name
        return cls(tuple(f["name"] for f in fields), fmt)

    @property
    def size(self) -> int:
        return struct.calcsize(self.fmt)

    def pack(self, values: dict[str, Any]) -> bytes:
        return struct.pack(self.fmt, *(values.get(n, b"" if f.endswith("s") else 0)
                                       for n, f in zip(self.names, _codes(self.fmt))))

    def unpack(self, data: bytes, offset: int = 0) -> dict[str, Any]:
        return dict(zip(self.names, struct.unpack_from(self.fmt, data, offset)))


def _codes(fmt: str) -> list[str]:
    """Each field's struct code ("16s" as one)."""
    codes, digits = [], ""
    for ch in fmt[1:]:
        if ch.isdigit():
            digits += ch
        else:
            codes.append(digits + ch)
            digits = ""
    return codes


RUN = Layout.of("run_request")
REP_HEADER = Layout.of("rep_header")
RECORD = Layout.of("record")


def encode_frame(frame_type: int, payload: bytes = b"") -> bytes:
    head = struct.pack("<HBBI", MAGIC, VERSION, frame_type, len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))


def run_request(config_id: int, suite: int, *, protocol: int = 0, reps: int = 1, warmup: int = 1,
                total: int = 1024, record: int = 1024, direction: int = 3, first_index: int = 0,
                group: int = 0, credential: int = 0, dtls_timeout_ms: int = 0) -> bytes:
    """A handshake RUN: both peers on the device (memory transport, role both). DTLS timers
    count in the device's unit (1 ms = 10^6 instructions under QEMU): a long turn of one peer
    must not expire the other's timer, so sweeps set dtls_timeout_ms high."""
    return RUN.pack({"config_id": config_id, "suite_id": suite, "group": group, "credential": credential,
                     "direction": direction, "repetitions": reps, "warmup": warmup, "total_bytes": total,
                     "record_size": record, "first_index": first_index, "protocol": protocol,
                     "dtls_timeout_min_ms": dtls_timeout_ms, "dtls_timeout_max_ms": dtls_timeout_ms})


@dataclass(frozen=True)
class Rep:
    header: dict[str, Any]
    records: tuple[tuple[int, ...], ...]   # (label, kind, peer, seq, t, cpu, value)
    reason: str
    raw: bytes                             # the whole REP payload, for byte-exact comparisons

    def values(self, label: str) -> dict[int, int]:
        """An INSTANT label's value per peer (the memory footprint records)."""
        return {r[2]: r[6] for r in self.records if r[0] == LABEL[label] and r[1] == 2}

    def span(self, label: str, peer: int = 255) -> int:
        """Duration of the first START/STOP pair of a label (counter units)."""
        start = next(r[4] for r in self.records if r[0] == LABEL[label] and r[1] == 0 and r[2] == peer)
        stop = next(r[4] for r in self.records if r[0] == LABEL[label] and r[1] == 1 and r[2] == peer)
        return stop - start


def decode_rep(payload: bytes) -> Rep:
    h = REP_HEADER.unpack(payload)
    n = h["n_records"]
    records = tuple(struct.unpack_from(RECORD.fmt, payload, REP_HEADER.size + i * RECORD.size) for i in range(n))
    reason = payload[REP_HEADER.size + n * RECORD.size:].decode(errors="replace")
    return Rep(h, records, reason, payload)


# ---------------------------------------------------------------- QEMU

def qemu_command(firmware: Path, target: str = TARGET) -> list[str]:
    """The target's QEMU command line (spec/targets.toml: `-icount shift=0`, so the firmware's
    counter counts instructions deterministically; semihosting carries its exit status and
    fault text; the UART on stdio)."""
    qemu = TARGETS[target]["qemu"]
    return [qemu["binary"], "-M", qemu["machine"], *qemu["flags"], "-kernel", str(firmware)]


@dataclass
class QemuDevice:
    """One boot of the firmware: start() reads HELLO and SUITES; run() a RUN's REPs and DONE."""
    firmware: Path
    timeout: float = 60.0      # longest silence allowed: above the longest repetition's compute
    hello: dict[str, Any] = field(default_factory=dict)
    suites: list[dict[str, Any]] = field(default_factory=list)
    received: int = 0          # UART bytes read from the target

    def start(self) -> QemuDevice:
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(qemu_command(self.firmware), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, process_group=0)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout.fileno(), selectors.EVENT_READ)
        self._buffer = bytearray()
        self.hello = json.loads(self._expect("HELLO"))
        self.suites = json.loads(self._expect("SUITES"))["suites"]
        return self

    # -- reading with a deadline
    def _fill(self, n: int) -> None:
        deadline = time.monotonic() + self.timeout
        while len(self._buffer) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                self.kill()
                raise DeviceError(f"target hung: no byte from the target for {self.timeout:g} s; killed "
                                  f"({self.death_reason()})")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise DeviceError(f"target stopped: {self.death_reason()}")
            self.received += len(chunk)
            self._buffer += chunk

    def read_frame(self) -> tuple[int, bytes]:
        self._fill(8)
        magic, version, ftype, length = struct.unpack_from("<HBBI", self._buffer)
        if magic != MAGIC or version != VERSION or ftype not in FRAME_NAME:
            self.kill()
            raise DeviceError(f"corrupt stream from the target (header {bytes(self._buffer[:8]).hex()})")
        self._fill(12 + length)
        frame = bytes(self._buffer[:12 + length])
        del self._buffer[:12 + length]
        (crc,) = struct.unpack_from("<I", frame, 8 + length)
        if crc != zlib.crc32(frame[:8 + length]):
            self.kill()
            raise DeviceError("corrupt stream from the target: bad CRC")
        return ftype, frame[8:8 + length]

    def _expect(self, name: str) -> bytes:
        ftype, payload = self.read_frame()
        if ftype != FRAME[name]:
            raise DeviceError(f"target sent {FRAME_NAME[ftype]} where {name} was expected: {payload[:200]!r}")
        return payload

    # -- requests
    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def run(self, request: bytes) -> tuple[list[Rep], dict[str, Any]]:
        """Sends RUN; its REPs and DONE (an ERROR raises DeviceError with the target's words)."""
        self.send(encode_frame(FRAME["RUN"], request))
        reps = []
        while True:
            ftype, payload = self.read_frame()
            if ftype == FRAME["REP"]:
                reps.append(decode_rep(payload))
            elif ftype == FRAME["DONE"]:
                return reps, json.loads(payload)
            elif ftype == FRAME["ERROR"]:
                raise DeviceError(f"target refused the RUN: {json.loads(payload)}")
            else:
                raise DeviceError(f"target sent {FRAME_NAME[ftype]} during a RUN")

    def suite_id(self, name: str) -> int:
        for s in self.suites:
            if s["name"] == name:
                return s["id"]
        raise DeviceError(f"suite {name} is not in the firmware")

    # -- ending
    def quit(self, timeout: float = 10.0) -> int:
        """QUIT, then QEMU's exit status (the firmware's, through semihosting)."""
        self.send(encode_frame(FRAME["QUIT"]))
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return self.kill()

    def pause(self) -> None:
        """Freezes QEMU (SIGSTOP): to the host, a target that stopped answering."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def kill(self) -> int:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.wait(5)

    def death_reason(self) -> str:
        """QEMU's exit status and the tail of its stderr, where a firmware fault is written."""
        try:
            code = self.proc.wait(2)
        except subprocess.TimeoutExpired:
            code = None
        how = ("still running" if code is None else f"killed by signal {-code}" if code < 0
               else f"QEMU exit status {code} ({EXITS.get(code, 'QEMU error')})")
        self._stderr.seek(0)
        tail = self._stderr.read()[-600:].decode(errors="replace").strip()
        return how + (f"; stderr: {tail}" if tail else "")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            try:
                stream.close()
            except OSError:
                pass

    def __enter__(self) -> QemuDevice:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
