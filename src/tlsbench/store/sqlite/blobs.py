# SPDX-License-Identifier: Apache-2.0
"""How a repetition's raw trace records are stored: the one encode/decode pair every writer
and reader of `trace.records` and `peer_repetition.records` goes through.

A trace is n × 32-byte records (spec [layout.record]); its counters (seq, t_ns, cpu_ns) grow
by small steps, and the same bytes of consecutive records are alike. Stored as ZSTD: the
counters replaced by their differences (wrapping, so exact), the bytes grouped by their
position in a record, then zstd level 3: ~12 KB -> ~1.3 KB per repetition of the default
plan, and decoding costs less than reading the raw bytes did (docs/benchmarks.md). RAW:
the records as they came, what every store before migration 010 holds, and what a blob
that is not whole records stays (so nothing is ever lost to the encoding)."""
from __future__ import annotations

import functools
from typing import Any

RAW, ZSTD = 0, 1  # the `encoding` column (migration 010); stores before it hold RAW only
ENCODING_NAMES = {RAW: "raw", ZSTD: "zstd (delta counters, bytes by position)"}
WRITE_ENCODING = ZSTD
DELTA_FIELDS = ("seq", "t_ns", "cpu_ns")  # counters: their differences are small and alike
ZSTD_LEVEL = 3  # 9 saves a further 9% for 3x the controller's time per repetition


class BlobError(ValueError):
    """A stored blob that its encoding cannot decode (a damaged store)."""


@functools.cache
def _layout() -> tuple[int, tuple[tuple[int, Any], ...]]:
    """A record's size, and (byte offset, numpy type) of each DELTA_FIELDS counter."""
    import numpy as np  # the controller stores blobs: numpy is loaded only when it does

    from tlsbench.core import spec
    dtype = np.dtype(spec.load().layouts["record"].numpy_fields)
    return dtype.itemsize, tuple((dtype.fields[name][1], dtype.fields[name][0]) for name in DELTA_FIELDS)


@functools.cache
def _codec() -> tuple[Any, Any]:
    import zstandard

    return zstandard.ZstdCompressor(level=ZSTD_LEVEL), zstandard.ZstdDecompressor()


def _counters(rows: Any) -> list[Any]:
    """Each counter of an (n, record size) byte matrix as a 1-D view of its type (1-D: numpy's
    cumulative sum over an (n, 1) view is ten times slower)."""
    return [rows[:, off:off + kind.itemsize].view(kind)[:, 0] for off, kind in _layout()[1]]


def encode_records(records: bytes) -> tuple[bytes, int]:
    """(blob, encoding) to store for a repetition's raw records."""
    import numpy as np

    size = _layout()[0]
    if not records or len(records) % size:
        return bytes(records), RAW
    rows = np.frombuffer(records, np.uint8).reshape(-1, size).copy()
    for counter in _counters(rows):
        counter[1:] = np.diff(counter)  # unsigned: wraps, and the cumulative sum undoes it exactly
    return _codec()[0].compress(rows.T.tobytes()), ZSTD


def decode_records(blob: bytes | memoryview | None, encoding: int | None) -> bytes:
    """The raw records (n × 32 bytes, docs/protocol.md) of a stored blob."""
    import numpy as np

    if not blob or not encoding:  # RAW, or a column a store before migration 010 lacks
        return bytes(blob or b"")
    if encoding != ZSTD:
        raise BlobError(f"unknown trace blob encoding {encoding} (this tlsbench knows "
                        f"{', '.join(f'{k}: {v}' for k, v in ENCODING_NAMES.items())}): upgrade tlsbench")
    size = _layout()[0]
    try:
        data = _codec()[1].decompress(bytes(blob))
    except Exception as exc:  # zstandard.ZstdError: what decompress raises for bad input
        raise BlobError(f"a zstd trace blob does not decompress ({exc}): the store is damaged") from None
    if len(data) % size:
        raise BlobError(f"a trace blob decodes to {len(data)} bytes, not whole {size}-byte records")
    rows = np.frombuffer(data, np.uint8).reshape(size, -1).T.copy()
    for counter in _counters(rows):
        np.cumsum(counter, out=counter)
    return rows.tobytes()


def encode_counts(counts: bytes, features: int) -> bytes:
    """A trace_counts blob: a repetition's cumulative class counts (n records × `features` u64,
    little-endian) as zstd of their differences from record to record, feature by feature
    (small, alike numbers: a handshake's 48 KB become a few KB)."""
    import numpy as np

    rows = np.frombuffer(counts, "<u8").reshape(-1, features).copy()
    rows[1:] = np.diff(rows, axis=0)  # unsigned: wraps, and the cumulative sum undoes it exactly
    return _codec()[0].compress(rows.T.tobytes())


def decode_counts(blob: bytes | memoryview, features: int) -> Any:
    """The (n records, features) uint64 array of a trace_counts blob."""
    import numpy as np

    try:
        data = _codec()[1].decompress(bytes(blob))
    except Exception as exc:  # zstandard.ZstdError
        raise BlobError(f"a trace_counts blob does not decompress ({exc}): the store is damaged") from None
    if len(data) % (8 * features):
        raise BlobError(f"a trace_counts blob decodes to {len(data)} bytes, not whole rows of {features} counts")
    rows = np.frombuffer(data, "<u8").reshape(features, -1).T.copy()
    return np.cumsum(rows, axis=0, dtype=np.uint64)


def counts_values(counts: Any) -> tuple[Any, ...]:
    """A TraceCounts (schema/tables.py, its counts raw) as the columns stored: board, features,
    the encoded blob (None when there are none), reason."""
    n = len(counts.features.split(","))
    blob = encode_counts(counts.counts, n) if counts.counts is not None else None
    return counts.board, counts.features, blob, counts.reason


def raw_counts(blob: bytes | memoryview | None, features: str) -> bytes | None:
    """A stored counts blob as the raw little-endian u64 rows a TraceCounts carries."""
    return None if blob is None else decode_counts(blob, len(features.split(","))).astype("<u8").tobytes()
