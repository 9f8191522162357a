# SPDX-License-Identifier: Apache-2.0
"""The order in which repetitions run: rounds that cycle over every configuration.

Each configuration's repetitions 0..R-1 are split into `rounds` contiguous slices; round r
runs slice r of every configuration, in an order shuffled by `random.Random(seed)`. So a
long experiment is usable before it ends, drift hits all configurations alike, and the
same (configs, repetitions, rounds, seed) always gives the same schedule, which is what
makes resuming well defined."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from tlsbench.plan.rounds import round_bounds


@dataclass(frozen=True)
class Batch:
    """One RUN request: `count` repetitions of one configuration, from `first_index`."""

    config: str  # configuration key
    round: int  # 0-based
    first_index: int
    count: int

    @property
    def indices(self) -> range:
        return range(self.first_index, self.first_index + self.count)


def round_of(index: int, repetitions: int, rounds: int) -> int:
    for r, (start, stop) in enumerate(round_bounds(repetitions, rounds)):
        if start <= index < stop:
            return r
    raise ValueError(f"repetition {index} is outside 0..{repetitions - 1}")


def build(configs: Iterable[str], repetitions: int, rounds: int, seed: int) -> list[Batch]:
    """The whole schedule. Config keys are sorted first so that the order in which they
    were resolved does not change the schedule."""
    keys = sorted(set(configs))
    rng = random.Random(seed)
    batches = []
    for r, (start, stop) in enumerate(round_bounds(repetitions, rounds)):
        order = list(keys)
        rng.shuffle(order)
        batches += [Batch(key, r, start, stop - start) for key in order if stop > start]
    return batches


def extension(next_index: Mapping[str, int], size: int, limit: int, round: int, seed: int) -> list[Batch]:
    """One more round for the given configurations (adaptive precision): `size` repetitions
    each from its next free index, never past `limit`, in an order shuffled by (seed, round)."""
    order = sorted(next_index)
    random.Random(f"{seed}/{round}").shuffle(order)
    return [Batch(key, round, next_index[key], min(size, limit - next_index[key]))
            for key in order if next_index[key] < limit]


def pending(batches: Sequence[Batch], done: Mapping[str, set[int]]) -> list[Batch]:
    """The schedule minus what is stored: each batch is cut into runs of missing indices."""
    out = []
    for batch in batches:
        have = done.get(batch.config, set())
        run_start = None
        for i in list(batch.indices) + [batch.first_index + batch.count]:
            missing = i < batch.first_index + batch.count and i not in have
            if missing and run_start is None:
                run_start = i
            elif not missing and run_start is not None:
                out.append(Batch(batch.config, batch.round, run_start, i - run_start))
                run_start = None
    return out
