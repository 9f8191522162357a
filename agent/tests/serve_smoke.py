#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end check of `serve` (stdlib only): HELLO/SUITES, a RUN -> REPs + DONE, a bad
RUN -> non-fatal ERROR, an unknown suite, then a corrupt frame -> fatal bad_frame, exit 3.
Usage: serve_smoke.py AGENT"""
import json
import struct
import subprocess
import sys
import tomllib
import zlib
from pathlib import Path

# The frame version of the spec this checkout's agents are built from.
MAGIC = 0x4254
SPEC_PROTOCOL = Path(__file__).resolve().parents[2] / "spec" / "protocol.toml"
VERSION = tomllib.loads(SPEC_PROTOCOL.read_text())["protocol"]["version"]
HELLO, SUITES, RUN, REP, DONE, ERROR, QUIT = range(1, 8)


def frame(ftype: int, payload: bytes) -> bytes:
    head = struct.pack("<HBBI", MAGIC, VERSION, ftype, len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))


def run_req(config_id, suite, reps=2, warmup=1, total=3000, record=1000, direction=3, reserved=0):
    """A handshake RUN (72 bytes, experiment 0): memory transport, role both, TLS, no endpoint."""
    return struct.pack("<IHHBBBBIIIIIBBH", config_id, suite, 0, 0, direction, 0, 0, reps, warmup,
                       total, record, 10, 0, 0, reserved) + bytes(36)  # offset 32: options_high, then reserved


def frames(data: bytes):
    pos = 0
    while pos < len(data):
        magic, ver, ftype, n = struct.unpack_from("<HBBI", data, pos)
        assert magic == MAGIC and ver == VERSION, f"bad header at {pos}"
        payload = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack_from("<I", data, pos + 8 + n)
        assert crc == zlib.crc32(data[pos:pos + 8 + n]), f"bad CRC at {pos}"
        yield ftype, payload
        pos += 12 + n


def main() -> int:
    agent = sys.argv[1]
    first = subprocess.run([agent], input=b"", capture_output=True, timeout=60)
    assert first.returncode == 0, f"clean EOF must exit 0, got {first.returncode}"
    got = list(frames(first.stdout))
    assert [t for t, _ in got] == [HELLO, SUITES], got
    hello = json.loads(got[0][1])
    suites = json.loads(got[1][1])["suites"]
    for key in ("protocol", "library", "library_version", "build", "labels_crc32", "protocol_crc32",
                "clock", "tracer", "step_granularity", "capabilities"):
        assert key in hello, key
    assert hello["capabilities"] == ["memory", "tcp", "udp"]
    runnable = [s for s in suites if s["credentials"]]
    assert runnable, "no suite can run"
    assert all("why_unsupported" in s for s in suites if not s["credentials"])
    suite = runnable[0]["id"]

    stream = (frame(RUN, run_req(7, suite)) + frame(RUN, run_req(8, suite, reserved=1))
              + frame(RUN, run_req(9, 0xFFFF)) + frame(HELLO, b"{}") + frame(RUN, run_req(10, suite, reps=1))
              + frame(RUN, b"\x00" * 72)[:-1] + b"\x00")  # corrupt CRC
    proc = subprocess.run([agent, "serve"], input=stream, capture_output=True, timeout=120)
    assert proc.returncode == 3, f"corrupt frame must exit 3, got {proc.returncode}"
    got = list(frames(proc.stdout))[2:]
    types = [t for t, _ in got]
    assert types == [REP, REP, DONE, ERROR, ERROR, ERROR, REP, DONE, ERROR], types
    for i, (_, rep) in enumerate(got[:2]):
        config_id, index, status = struct.unpack_from("<IIB", rep)
        n_records, dropped = struct.unpack_from("<II", rep, 20)
        assert (config_id, index, status) == (7, 10 + i, 0), (config_id, index, status)
        assert len(rep) == 96 + 32 * n_records
        wall, cpu = struct.unpack_from("<QQ", rep, 56)
        assert wall > 0 and cpu > 0
        assert (n_records > 0) == hello["tracer"]["enabled"]
    done = json.loads(got[2][1])
    assert {k: done[k] for k in ("config_id", "shipped", "failed")} == {"config_id": 7, "shipped": 2, "failed": 0}
    assert done["clock"]["source"] in ("TSC", "CNTVCT_EL0", "CLOCK_MONOTONIC")  # checked after the RUN
    errors = [json.loads(p) for t, p in got if t == ERROR]
    assert errors[0]["code"] == "bad_request" and "reserved" in errors[0]["message"], errors[0]
    assert errors[1]["code"] == "unknown_suite" and errors[1]["fatal"] is False, errors[1]
    assert errors[2]["code"] == "bad_request", errors[2]
    assert errors[3]["code"] == "bad_frame" and errors[3]["fatal"] is True, errors[3]
    assert "CRC" in errors[3]["message"] and "offset" in errors[3]["message"], errors[3]

    quit_proc = subprocess.run([agent], input=frame(QUIT, b"") + b"garbage", capture_output=True, timeout=60)
    assert quit_proc.returncode == 0, quit_proc.returncode
    trunc = subprocess.run([agent], input=frame(RUN, run_req(1, suite))[:20], capture_output=True, timeout=60)
    assert trunc.returncode == 3
    err = json.loads(list(frames(trunc.stdout))[-1][1])
    assert err["code"] == "bad_frame" and "ends inside" in err["message"], err
    print("serve smoke: ok;", hello["agent"], "event_cost_ns", hello["tracer"]["event_cost_ns"],
          "empty_span_ns", hello["tracer"]["empty_span_ns"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
