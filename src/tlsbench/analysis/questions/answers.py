# SPDX-License-Identifier: Apache-2.0
"""The winners' questions, and each configuration's answer to them: the values of the measure
that decides, both peers' pooled for "any".

A report ranks every configuration by its median answer but shows the values of only a few
(winners and runners-up, record densities). `Answers` keeps every median and, while the
configurations stream in from the summaries, the values of only those that can still be shown:
memory grows with the configurations shown, not with the repetitions stored."""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from tlsbench.analysis.derive.measures import METRIC
from tlsbench.analysis.vocab import vocab


@dataclass(frozen=True)
class Question:
    """One winners-table question: which configuration minimises this measure."""

    title: str     # what the reader asks
    metric: str    # METRICS name
    peer: str      # spec peer name, or "any" to pool both peers' values


# The measures that decide each question: the full network-invariant processing
# (records: the whole call minus I/O; handshakes: the sum of a peer's step processing).
QUESTIONS = (
    Question("Record write", "write_processing_post", "any"),
    Question("Record read", "read_processing_pre", "any"),
    Question("Handshake as initiator (client processing)", "handshake_processing", "client"),
    Question("Handshake as responder (server processing)", "handshake_processing", "server"),
)
# The most configurations a view shows the values of: the record densities' curves (a
# winners table shows fewer).
SHOWN = 8

Answer = tuple[np.ndarray, np.ndarray]  # values, and the round of each


def answer(config_samples: dict, q: Question) -> Answer:
    """One configuration's answer to a question, from its samples (samples.ConfigSamples:
    (config, peer, metric, label) -> (values, rounds)), in key order."""
    voc = vocab()
    peers = {p for p in voc.peers.values() if p != voc.peers["none"]} if q.peer == "any" else {voc.peers[q.peer]}
    parts = [vr for (_, peer, metric, _), vr in sorted(config_samples.items())
             if metric == METRIC[q.metric] and peer in peers]
    if not parts:
        return np.empty(0), np.empty(0, np.int64)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([v for v, _ in parts]), np.concatenate([r for _, r in parts])


def answers_of(config_samples: dict) -> dict[Question, Answer]:
    """The answers of one configuration to the questions it has values for (copies: its table goes)."""
    answered = {q: answer(config_samples, q) for q in QUESTIONS}
    return {q: (v.copy(), r.copy()) for q, (v, r) in answered.items() if len(v)}


# The measures that answer a question: those a configuration's samples are split into to answer.
QUESTION_CODES = np.array(sorted({METRIC[q.metric] for q in QUESTIONS}))


@dataclass
class Answers:
    """Per question: every configuration's median answer, and the answers of the configurations
    among the `keep` lowest medians of each of `among` (None: of all configurations; a set: of
    those, e.g. one library's), or of every configuration when `keep` is None."""

    keep: int | None = SHOWN
    among: list[frozenset[int] | None] = field(default_factory=lambda: [None])
    medians: dict[Question, dict[int, float]] = field(default_factory=lambda: {q: {} for q in QUESTIONS})
    values: dict[Question, dict[int, Answer]] = field(default_factory=lambda: {q: {} for q in QUESTIONS})

    def __post_init__(self) -> None:
        # Per question and group of `among`: the `keep` lowest (median, id) as a heap of their negatives.
        self._lowest = {q: [[] for _ in self.among] for q in QUESTIONS}

    def add(self, cid: int, answered: dict[Question, Answer]) -> None:
        """One configuration's answers (answers_of); then let go of those that can no longer be shown."""
        for q, (v, r) in answered.items():
            self.medians[q][cid] = float(np.median(v))
            self.values[q][cid] = (v, r)
            if self.keep is not None:
                self._let_go(q, cid)

    def _let_go(self, q: Question, cid: int) -> None:
        entry, heaps, pushed_out = (-self.medians[q][cid], -cid), self._lowest[q], set()
        for group, lowest in zip(self.among, heaps):
            if group is None or cid in group:
                heapq.heappush(lowest, entry)
                if len(lowest) > self.keep:
                    pushed_out.add(heapq.heappop(lowest))
        for _, negative_id in pushed_out - {e for lowest in heaps for e in lowest}:  # in no group's lowest
            del self.values[q][-negative_id]

    def ranked(self, q: Question, among: Iterable[int] | None = None) -> list[int]:
        """Configurations by median answer, lowest first (ties by id)."""
        group = None if among is None else set(among)
        return [c for _, c in sorted((m, c) for c, m in self.medians[q].items() if group is None or c in group)]

    def values_of(self, q: Question, cids: Iterable[int]) -> dict[int, np.ndarray]:
        """The values answering a question, of configurations whose answers are held."""
        return {c: self.values[q][c][0] for c in cids}
