# SPDX-License-Identifier: Apache-2.0
"""The one place a stored trace blob becomes raw records (n × 32 bytes, docs/protocol.md):
every reader of `trace.records` and `peer_repetition.records` goes through decode_records,
so how a blob is encoded (today: the records as they are) is decided here only."""
from __future__ import annotations


def decode_records(blob: bytes | memoryview | None) -> bytes:
    """A stored blob's raw records (b"" for a missing one)."""
    return bytes(blob) if blob else b""
