# SPDX-License-Identifier: Apache-2.0
"""Winners: the fastest configuration per question, its runners-up, and whether it leads.

A lead is significant when the bootstrap CI of the ratio runner-up / winner (medians)
excludes 1 and the ratio is at least 1 + the noise floor (docs/methodology.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .measures import METRICS, NO_LABEL, NO_PEER
from .samples import Samples
from .stats import NOISE_FLOOR, Ratio, Summary, ratio_of_medians, rng_for, separation_advice, summarize
from .vocab import vocab


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
RUNNERS_UP = 3


@dataclass(frozen=True)
class Place:
    """One ranked configuration."""

    config_id: int
    median: float
    median_ci: tuple[float, float]
    n: int
    vs_winner: Ratio | None   # this / winner, None for the winner itself


@dataclass
class Winner:
    question: Question
    places: list[Place]             # winner first, then runners-up
    significant: bool               # the winner beats the first runner-up significantly
    warnings: list[str] = field(default_factory=list)
    not_considered: dict[int, str] = field(default_factory=dict)  # config id -> "no data: N excluded (why)"

    @property
    def winner(self) -> Place | None:
        return self.places[0] if self.places else None


def question_samples(samples: Samples, q: Question) -> dict[int, np.ndarray]:
    """Per config: the values answering a question (both peers pooled for "any")."""
    return {c: v for c, (v, _) in question_values(samples, q).items()}


def question_values(samples: Samples, q: Question) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per config: the values answering a question and the round of each."""
    voc = vocab()
    peers = [p for p in voc.peers.values() if p != voc.peers["none"]] if q.peer == "any" else [voc.peers[q.peer]]
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for key, v in samples.values.items():
        cid, peer, metric, _label = key
        if METRICS[metric].name == q.metric and peer in peers:
            r = samples.rounds.get(key, np.zeros(len(v), dtype=np.int64))
            out[cid] = (np.concatenate([out[cid][0], v]), np.concatenate([out[cid][1], r])) if cid in out else (v, r)
    return {c: vr for c, vr in out.items() if len(vr[0])}


def rank(values: dict[int, np.ndarray], q: Question, labels: dict[int, str], seed: int,
         noise_floor: float = NOISE_FLOOR, rounds: dict[int, np.ndarray] | None = None) -> Winner:
    """Rank configurations by median; compare each runner-up with the winner. A place's
    interval is the report's kind (stats.summarize: whole rounds resampled when `rounds`
    are given; none below MIN_CI_VALUES values)."""
    meds = sorted((float(np.median(v)), cid) for cid, v in values.items())
    places, warnings = [], []
    best = meds[0][1] if meds else None
    for med, cid in meds[: RUNNERS_UP + 1]:
        rng = rng_for(seed, "winner", q.title, cid)
        ci = summarize(values[cid], rng, mean_ci=False, rounds=(rounds or {}).get(cid)).median_ci
        r = None if cid == best else ratio_of_medians(values[best], values[cid], rng, noise_floor)
        places.append(Place(cid, med, ci, len(values[cid]), r))
    significant = len(places) > 1 and places[1].vs_winner.significant
    if len(places) > 1 and not significant:
        a, b = places[0], places[1]
        sa = _as_summary(a)
        sb = _as_summary(b)
        advice = separation_advice(labels[a.config_id], sa, labels[b.config_id], sb)
        warnings.append(f"{q.title}: the lead of {labels[a.config_id]} is not significant"
                        + (f" — {advice}" if advice else f" (ratio {b.vs_winner.ratio:.3f} within the "
                                                         f"{noise_floor:.0%} noise floor)."))
    return Winner(q, places, significant, warnings)


def _as_summary(p: Place) -> Summary:
    nan = float("nan")
    return Summary(p.n, p.median, nan, nan, nan, nan, nan, nan, nan, nan, p.median_ci, (nan, nan), 0, 0)


def find_winners(labels: dict[int, str], samples: Samples, seed: int, questions: tuple[Question, ...] = QUESTIONS,
                 among: set[int] | None = None, no_data: dict[int, str] | None = None) -> list[Winner]:
    """Winners per question, among all configurations or only those in `among` (e.g. one
    library's). Configurations left without a value by exclusions (`no_data`: config id ->
    "no data: N excluded (why)") are named as not considered, never dropped silently."""
    out = []
    for q in questions:
        found = {c: vr for c, vr in question_values(samples, q).items() if among is None or c in among}
        if found:
            w = rank({c: v for c, (v, _) in found.items()}, q, labels, seed,
                     rounds={c: r for c, (_, r) in found.items()})
            w.not_considered = {c: why for c, why in (no_data or {}).items()
                                if (among is None or c in among) and c not in found}
            out.append(w)
    return out


__all__ = ["QUESTIONS", "Question", "Place", "Winner", "find_winners", "rank", "NO_LABEL", "NO_PEER"]
