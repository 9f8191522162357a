#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the fuzzer's seed corpus (agent/fuzz/corpus): one small input per frame kind and
per decoder failure, stamped with the protocol version of spec/protocol.toml, so a version
bump is one command: agent/fuzz/make_corpus.py. Stdlib only."""
import struct
import sys
import tomllib
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC = tomllib.loads((HERE.parent.parent / "spec" / "protocol.toml").read_text())
VERSION, MAGIC = SPEC["protocol"]["version"], SPEC["protocol"]["magic"]
FRAME = {name: v["value"] for name, v in SPEC["frame"].items()}


def frame(ftype: int, payload: bytes, version: int = VERSION) -> bytes:
    head = struct.pack("<HBBI", MAGIC, version, ftype, len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))


def run(experiment: int = 0) -> bytes:
    """A 72-byte RUN: a handshake (suite 0xC02B, secp256r1, memory) or experiment 1 at 1024 bytes."""
    if experiment:
        head = struct.pack("<IHHBBBBIIIIII", 8, 0, 0, 0, 0, 0, 0, 10, 2, 1024, 1, 0, 0)
    else:
        head = struct.pack("<IHHBBBBIIIIII", 7, 0xC02B, 23, 3, 3, 0, 0, 10, 2, 10000, 1000, 0, 0)
    return head + bytes(30) + struct.pack("<HI", experiment, 0)


def rep(reason: bytes = b"") -> bytes:
    """A REP: a 96-byte header naming its connection (client port, server port), two records
    (one START/STOP pair) and the failure reason after them."""
    header = struct.pack("<IIBBHIiIIHH QQQQQ III B3x Q", 7, 0, 1 if reason else 0, 255, 16384, 0, 0, 2, 0, 4433,
                         len(reason), 100, 200, 1, 2, 3, 0, 0, 0, 0, 0)
    records = b"".join(struct.pack("<HBBIQQQ", 101, kind, 0, kind, 10 * (kind + 1), 0, 0) for kind in (0, 1))
    return header + records + reason


def seeds() -> dict[str, bytes]:
    good_run = frame(FRAME["RUN"], run())
    return {
        "run": good_run,
        "run_experiment": frame(FRAME["RUN"], run(experiment=1)),
        "hello": frame(FRAME["HELLO"], b'{"protocol": 1}'),
        "quit": frame(FRAME["QUIT"], b""),
        "rep": frame(FRAME["REP"], rep()),
        "rep_failed": frame(FRAME["REP"], rep(b"handshake: client: nothing from the other agent within 31500 ms")),
        "two_frames": good_run + frame(FRAME["QUIT"], b""),
        "truncated": good_run[:20],
        "bad_crc": good_run[:-1] + bytes([good_run[-1] ^ 0xFF]),
        "bad_version": frame(FRAME["RUN"], run(), version=VERSION + 1),
    }


def main() -> int:
    out = HERE / "corpus"
    for name, data in seeds().items():
        (out / name).write_bytes(data)
    print(f"{len(seeds())} seeds for protocol {VERSION} in {out.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
