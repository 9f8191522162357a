# SPDX-License-Identifier: Apache-2.0
"""Winners: the fastest configuration per question, its runners-up, and whether it leads.

A lead is significant when the bootstrap CI of the ratio runner-up / winner (medians)
excludes 1 and the ratio is at least 1 + the noise floor (docs/methodology.md). Exact values
(a device's counts: a single value, or every value the same) need no interval: their ratio is
exact, and only the noise floor separates two of them. Fewer than MIN_CI_VALUES sampled values
make no lead significant (no interval to judge it by). A winner whose lead is not significant
is not crowned: the report names every configuration within noise of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from tlsbench.analysis.derive.measures import NO_LABEL, NO_PEER
from tlsbench.analysis.questions.answers import QUESTIONS, Answers, Question
from tlsbench.analysis.stats.stats import (MIN_CI_VALUES, NAN2, NOISE_FLOOR, Ratio, Summary, ratio_of_medians, rng_for,
                                           separation_advice, summarize, verdict)
from tlsbench.analysis.units import TIME, Unit


RUNNERS_UP = 3


@dataclass(frozen=True)
class Place:
    """One ranked configuration."""

    config_id: int
    median: float
    median_ci: tuple[float, float]
    n: int
    vs_winner: Ratio | None   # this / winner, None for the winner itself
    exact: bool = False       # exact values (exact()): no interval, the ratio is exact


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

    @property
    def within_noise(self) -> list[Place]:
        """The winner and the runners-up its lead over is not significant (no clear winner
        when there are two or more)."""
        return self.places[:1] + [p for p in self.places[1:] if not p.vs_winner.significant]


def exact(values: np.ndarray, unit: Unit) -> bool:
    """Exact values: every one the same, or a count's single value (a device counts the same
    run after run; a host's one time is a sample)."""
    if len(values) == 1:
        return not unit.is_time
    return len(values) > 1 and bool(values.min() == values.max())


def judge(best: np.ndarray, other: np.ndarray, unit: Unit, rng: np.random.Generator,
          noise_floor: float = NOISE_FLOOR) -> Ratio:
    """median(other) / median(best). Exact values: by the noise floor alone. Sampled ones: by
    their bootstrap interval; with fewer than MIN_CI_VALUES values there is none, so a time's
    lead is never significant then, and a count's (whose values differ only through random
    keys and nonces) only when the two ranges of values do not overlap."""
    r = float(np.median(other) / np.median(best)) if len(best) and len(other) else float("nan")
    beyond = abs(r - 1) >= noise_floor
    if exact(best, unit) and exact(other, unit):
        return Ratio(r, (r, r), verdict(r, beyond), beyond)
    if min(len(best), len(other)) < MIN_CI_VALUES:
        apart = not unit.is_time and (other.min() > best.max() or other.max() < best.min())
        sig = bool(apart and beyond)
        return Ratio(r, NAN2, verdict(r, sig), sig)
    return ratio_of_medians(best, other, rng, noise_floor)


def rank(answers: Answers, q: Question, labels: dict[int, str], seed: int, among: Iterable[int] | None = None,
         noise_floor: float = NOISE_FLOOR, unit: Unit = TIME) -> Winner:
    """Rank configurations (all, or those `among`) by median answer; compare each runner-up
    with the winner. A place's interval is the report's kind (stats.summarize: whole rounds
    resampled; none below MIN_CI_VALUES values, nor for exact values)."""
    order = answers.ranked(q, among)[: RUNNERS_UP + 1]
    places, warnings = [], []
    best = answers.values[q][order[0]][0] if order else None
    for cid in order:
        values, rounds = answers.values[q][cid]
        rng = rng_for(seed, "winner", q.title, cid)
        is_exact = exact(values, unit)
        ci = (answers.medians[q][cid],) * 2 if is_exact else summarize(values, rng, mean_ci=False, rounds=rounds).median_ci
        r = None if cid == order[0] else judge(best, values, unit, rng, noise_floor)
        places.append(Place(cid, answers.medians[q][cid], ci, len(values), r, is_exact))
    significant = len(places) > 1 and places[1].vs_winner.significant
    if len(places) > 1 and not significant and places[0].exact and places[1].exact:
        warnings.append(f"{q.title}: {labels[places[0].config_id]} and {labels[places[1].config_id]} are within the "
                        f"{noise_floor:.0%} noise floor of each other (exact values: more repetitions change nothing)")
    elif len(places) > 1 and not significant:
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
                 among: set[int] | None = None, no_data: dict[int, str] | None = None, unit: Unit = TIME
                 ) -> list[Winner]:
    """Winners per question, among all configurations or only those in `among` (e.g. one
    library's). Configurations left without a value by exclusions (`no_data`: config id ->
    "no data: N excluded (why)") are named as not considered, never dropped silently."""
    out = []
    for q in questions:
        if answers.ranked(q, among):
            w = rank(answers, q, labels, seed, among, unit=unit)
            w.not_considered = {c: why for c, why in (no_data or {}).items()
                                if (among is None or c in among) and c not in answers.medians[q]}
            out.append(w)
    return out


__all__ = ["QUESTIONS", "Question", "Place", "Winner", "exact", "find_winners", "judge", "rank", "NO_LABEL", "NO_PEER"]
