# SPDX-License-Identifier: Apache-2.0
"""Frames built by hand, corrupted in every way the decoder must name, plus fuzzing.
The frame stream written by the real agent is decoded in test_agent_stream.py."""
import dataclasses
import io
import struct
import zlib

import pytest
from hypothesis import given, strategies as st

from tlsbench.core import spec
from tlsbench.run import protocol

S = spec.load()


def hand_frame(frame_type: int, payload: bytes, magic: int = S.magic, version: int = S.protocol_version) -> bytes:
    """A frame assembled byte by byte from docs/protocol.md, independently of encode_frame."""
    head = magic.to_bytes(2, "little") + bytes([version, frame_type]) + len(payload).to_bytes(4, "little")
    return head + payload + zlib.crc32(head + payload).to_bytes(4, "little")


def test_encoder_matches_the_documented_layout():
    payload = b'{"a":1}'
    frame = protocol.encode_frame(S.frames.DONE, payload)
    assert frame == hand_frame(S.frames.DONE, payload)
    assert frame[:2] == b"\x54\x42"  # "TB"


def test_decode_a_stream_of_frames_with_offsets():
    data = hand_frame(S.frames.HELLO, b'{"protocol":1}') + hand_frame(S.frames.QUIT, b"")
    frames = protocol.decode_frames(data)
    assert [f.type_name for f in frames] == ["HELLO", "QUIT"]
    assert frames[0].json() == {"protocol": 1}
    assert frames[1].offset == 8 + 14 + 4


@pytest.mark.parametrize("mutate, problem", [
    (lambda f: f[:-1] + bytes([f[-1] ^ 0xFF]), "bad CRC"),
    (lambda f: f[:10] + bytes([f[10] ^ 1]) + f[11:], "bad CRC"),
    (lambda f: f[:-3], "truncated frame"),
    (lambda f: f[:5], "truncated frame"),
    (lambda f: b"XX" + f[2:], "bad magic"),
    (lambda f: f[:2] + b"\x09" + f[3:], "bad version"),
    (lambda f: f[:3] + b"\xEE" + f[4:], "bad frame type"),
    (lambda f: f[:4] + struct.pack("<I", S.max_payload + 1) + f[8:], "frame too long"),
])
def test_corrupt_frames_name_the_problem_and_offset(mutate, problem):
    good = hand_frame(S.frames.DONE, b'{"config_id":1,"shipped":2,"failed":0}')
    data = good + mutate(good)
    with pytest.raises(protocol.FrameError) as info:
        protocol.decode_frames(data)
    assert info.value.problem == problem
    assert info.value.offset == len(good)
    assert f"offset {len(good)}" in str(info.value)


def test_bad_json_payload():
    (frame,) = protocol.decode_frames(hand_frame(S.frames.ERROR, b"{not json"))
    with pytest.raises(protocol.FrameError, match="bad JSON payload at stream offset 0"):
        frame.json()


def test_run_request_layout():
    req = protocol.RunRequest(7, 0xC02B, 29, 3, 1, 0, 10, 2, 10000, 1000, 40)
    payload = protocol.decode_frames(req.encode())[0].payload
    assert len(payload) == 72
    assert struct.unpack("<IHHBBBBIIIIII", payload[:36]) == (7, 0xC02B, 29, 3, 1, 0, 0, 10, 2, 10000, 1000, 40, 0)
    assert payload[36:] == bytes(36)  # memory, both peers, TLS: the protocol-2 tail is zero


def test_run_request_network_tail():
    req = protocol.RunRequest(7, 0xC02B, 29, 3, 1, S.transports.udp, 10, 2, 10000, 1000, 40,
                              options=S.options.DTLS_COOKIES, role=1, protocol=1, family=4,
                              addr=bytes([127, 0, 0, 1]), port=4433, dtls_timeout_min_ms=100,
                              dtls_timeout_max_ms=2000, dtls_mtu=1280, max_fragment=2)
    payload = protocol.decode_frames(req.encode())[0].payload
    assert struct.unpack_from("<BBBB4s", payload, 36) == (1, 1, 4, 2, bytes([127, 0, 0, 1]))
    assert struct.unpack_from("<HHHHH", payload, 56) == (4433, 0, 100, 2000, 1280)


def test_run_request_options_above_bit_7_go_to_offset_32():
    # protocol 5: bits 8-15 of spec [options] (CONNECTION_ID) travel in options_high
    both = S.options.CONNECTION_ID | S.options.MUTUAL_AUTH
    assert S.options.CONNECTION_ID > 0xFF
    req = protocol.RunRequest(7, 0xC02B, 29, 3, 1, 0, 10, 2, 10000, 1000, 40, **protocol.RunRequest.options_of(both))
    payload = protocol.decode_frames(req.encode())[0].payload
    assert payload[11] == S.options.MUTUAL_AUTH
    assert payload[32] == S.options.CONNECTION_ID >> 8 and payload[33:36] == bytes(3)


def test_run_request_experiment_at_offset_66():
    req = protocol.RunRequest(9, 0, 0, 0, S.directions.none, S.transports.memory, 5, 1, 1024, 1, 0, experiment=19)
    payload = protocol.decode_frames(req.encode())[0].payload
    assert struct.unpack_from("<HI", payload, 66) == (19, 0)  # experiment, then the reserved u32
    assert struct.unpack_from("<II", payload, 20) == (1024, 1)  # size in total_bytes, record_size ignored
    assert payload[36:66] == bytes(30)


def test_run_request_defaults_to_a_handshake_run():
    req = protocol.RunRequest(7, 0xC02B, 29, 3, 1, 0, 10, 2, 10000, 1000, 40)
    assert req.experiment == 0
    assert protocol.decode_frames(req.encode())[0].payload[66:68] == b"\x00\x00"


def rep_header(**kw) -> protocol.RepHeader:
    base = dict(config_id=3, index=5, status=S.status.OK, failed_peer=S.peers.none, flags=0, error_code=-0x7080,
                n_records=2, dropped=0, bytes_c2s=100, bytes_s2c=200, start_ns=1, handshake_wall_ns=2,
                handshake_cpu_ns=3, packets_c2s=4, packets_s2c=5, retransmissions=1, role=2,
                repetition_wall_ns=9)
    return protocol.RepHeader(**{**base, **kw})


def test_rep_round_trip_keeps_records_verbatim():
    records = bytes(range(64))
    frame = protocol.decode_frames(protocol.encode_rep(rep_header(), records))[0]
    assert len(frame.payload) == 96 + 64
    rep = protocol.decode_rep(frame)
    assert rep.records == records and rep.header == rep_header()


def test_rep_carries_its_connection_and_reason_after_the_records():
    header = rep_header(client_port=16389, server_port=40001)
    records = bytes(range(64))
    reason = "handshake: client: nothing from the other agent within 31500 ms"
    frame = protocol.decode_frames(protocol.encode_rep(header, records, reason))[0]
    assert frame.payload[10:12] == (16389).to_bytes(2, "little") and frame.payload[28:30] == (40001).to_bytes(2, "little")
    assert frame.payload[-len(reason):] == reason.encode()
    rep = protocol.decode_rep(frame)
    assert (rep.records, rep.reason, rep.header.connection) == (records, reason, (16389, 40001))


def test_rep_with_a_reason_longer_than_its_payload_is_refused():
    frame = protocol.decode_frames(protocol.encode_rep(rep_header(), bytes(64), "why"))[0]
    payload = bytearray(frame.payload)
    payload[30] = 200  # the reason's length
    with pytest.raises(protocol.FrameError, match="REP size mismatch"):
        protocol.decode_rep(protocol.Frame(frame.type, bytes(payload), 0))


def test_rep_with_inconsistent_record_count_is_refused():
    frame = protocol.decode_frames(protocol.encode_rep(rep_header(), bytes(64)))[0]
    bad = protocol.Frame(frame.type, frame.payload + bytes(32), 99)
    with pytest.raises(protocol.FrameError, match="REP size mismatch at stream offset 99"):
        protocol.decode_rep(bad)
    with pytest.raises(protocol.FrameError, match="short REP"):
        protocol.decode_rep(protocol.Frame(frame.type, frame.payload[:40], 0))


def test_rep_with_unknown_status_is_refused():
    frame = protocol.decode_frames(protocol.encode_rep(rep_header(status=200), b""))[0]
    with pytest.raises(protocol.FrameError, match="bad REP status"):
        protocol.decode_rep(frame)


class Trickle(io.RawIOBase):
    """A pipe that returns one byte per read: frames must still decode."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def readable(self):
        return True

    def read(self, n=-1):
        chunk = self.data[self.pos:self.pos + 1]
        self.pos += len(chunk)
        return chunk


def test_short_reads_are_reassembled():
    data = hand_frame(S.frames.HELLO, b"{}") + hand_frame(S.frames.DONE, b"{}")
    assert len(list(protocol.FrameReader(Trickle(data)))) == 2


@given(st.binary(max_size=200))
def test_garbage_never_crashes_the_decoder(data):
    try:
        protocol.decode_frames(data)
    except protocol.FrameError:
        pass


@given(st.binary(max_size=300), st.integers(0, 299), st.integers(1, 255))
def test_any_single_byte_corruption_is_detected(payload, pos, xor):
    frame = bytearray(hand_frame(S.frames.DONE, payload))
    frame[pos % len(frame)] ^= xor
    with pytest.raises(protocol.FrameError):
        protocol.decode_frames(bytes(frame))


@pytest.mark.parametrize("cls, layout", [(protocol.RunRequest, "run_request"), (protocol.RepHeader, "rep_header")])
def test_dataclasses_hold_every_field_of_their_layout(cls, layout):
    """A field added to the spec's layout needs its dataclass field (and the reverse)."""
    assert {f.name for f in dataclasses.fields(cls)} == set(S.layouts[layout].names)
