# SPDX-License-Identifier: Apache-2.0
"""Winners: the fastest configuration per question, its runners-up, and whether it leads.

A lead is significant when the bootstrap CI of the ratio runner-up / winner (medians)
excludes 1 and the ratio is at least 1 + the noise floor (docs/methodology.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from tlsbench.analysis.derive.measures import NO_LABEL, NO_PEER
from tlsbench.analysis.questions.answers import QUESTIONS, Answers, Question
from tlsbench.analysis.stats.stats import NOISE_FLOOR, Ratio, Summary, ratio_of_medians, rng_for, separation_advice, summarize


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


def rank(answers: Answers, q: Question, labels: dict[int, str], seed: int, among: Iterable[int] | None = None,
         noise_floor: float = NOISE_FLOOR) -> Winner:
    """Rank configurations (all, or those `among`) by median answer; compare each runner-up
    with the winner. A place's interval is the report's kind (stats.summarize: whole rounds
    resampled; none below MIN_CI_VALUES values)."""
    order = answers.ranked(q, among)[: RUNNERS_UP + 1]
    places, warnings = [], []
    best = answers.values[q][order[0]][0] if order else None
    for cid in order:
        values, rounds = answers.values[q][cid]
        rng = rng_for(seed, "winner", q.title, cid)
        ci = summarize(values, rng, mean_ci=False, rounds=rounds).median_ci
        r = None if cid == order[0] else ratio_of_medians(best, values, rng, noise_floor)
        places.append(Place(cid, answers.medians[q][cid], ci, len(values), r))
    significant = len(places) > 1 and places[1].vs_winner.significant
    if len(places) > 1 and not significant:
        a, b = places[0], places[1]
        advice = separation_advice(labels[a.config_id], _as_summary(a), labels[b.config_id], _as_summary(b))
        warnings.append(f"{q.title}: the lead of {labels[a.config_id]} is not significant"
                        + (f" — {advice}" if advice else f" (ratio {b.vs_winner.ratio:.3f} within the "
                                                         f"{noise_floor:.0%} noise floor)."))
    return Winner(q, places, significant, warnings)


def _as_summary(p: Place) -> Summary:
    nan = float("nan")
    return Summary(p.n, p.median, nan, nan, nan, nan, nan, nan, nan, nan, p.median_ci, (nan, nan), 0, 0)


def find_winners(labels: dict[int, str], answers: Answers, seed: int, questions: tuple[Question, ...] = QUESTIONS,
                 among: set[int] | None = None, no_data: dict[int, str] | None = None) -> list[Winner]:
    """Winners per question, among all configurations or only those in `among` (e.g. one
    library's). Configurations left without a value by exclusions (`no_data`: config id ->
    "no data: N excluded (why)") are named as not considered, never dropped silently."""
    out = []
    for q in questions:
        if answers.ranked(q, among):
            w = rank(answers, q, labels, seed, among)
            w.not_considered = {c: why for c, why in (no_data or {}).items()
                                if (among is None or c in among) and c not in answers.medians[q]}
            out.append(w)
    return out


__all__ = ["QUESTIONS", "Question", "Place", "Winner", "find_winners", "rank", "NO_LABEL", "NO_PEER"]
