# SPDX-License-Identifier: Apache-2.0
"""Rows the contract tests write and expect back."""
from __future__ import annotations

from dataclasses import replace

from tlsbench.core import spec
from tlsbench.schema import ConfigRow, Experiment, PeerRepetition, RepetitionRow

S = spec.load()
OK = S.status.name(S.status.OK)
FAILED = S.status.name(S.status.HANDSHAKE_FAILED)
DIED = S.status.name(S.status.AGENT_DIED)


def experiment(plan_hash: str = "hash-1") -> Experiment:
    return Experiment("contract", "name = 'contract'", '{"repetitions": 3, "rounds": 1}', plan_hash, 7,
                      '{"hostname": "here"}')


def config(key: str = "a|k", **fields) -> ConfigRow:
    row = ConfigRow(key, "mbedtls", 0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "ECDHE", "ECDSA",
                    "AES-128-GCM", "SHA256", "TLS1.2", "TLS1.2", "secp256r1", "ecdsa-p256", "memory", "both", 1000,
                    500, 3, options=1)
    return replace(row, **fields)


def repetition(config_id: int, idx: int, agent_id: int | None, status: str = OK, round: int = 0,
               records: int = 3) -> RepetitionRow:
    return RepetitionRow(config_id, idx, round, agent_id, status, None if status == OK else "client",
                         0 if status == OK else -0x7780, None if status == OK else "it failed", 2 if idx == 2 else 0,
                         1200 + idx, 900, 10_000 * idx, 5_000 + idx, 4_000 + idx, records, 0, 7, 6, 0, "both",
                         9_000 + idx, 40_000 + idx, 443)


def records(n: int, seed: int) -> bytes:
    """n 32-byte records (the wire layout's size; the store keeps them as they come)."""
    return bytes((seed * 7 + i) % 256 for i in range(32 * n))


def peer(agent_id: int | None, seed: int) -> PeerRepetition:
    return PeerRepetition(agent_id, "server", OK, 0, 0, 1200, 900, 7, 6, 0, 111, 5_100, 9_100, records(2, seed),
                          40_000 + seed, 443, None)
