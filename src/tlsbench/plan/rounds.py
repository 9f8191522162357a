# SPDX-License-Identifier: Apache-2.0
"""How a plan's repetitions split into rounds (the schedule runs them, status counts them)."""
from __future__ import annotations


def round_bounds(repetitions: int, rounds: int) -> list[tuple[int, int]]:
    """[start, stop) of each round's slice of 0..repetitions-1; sizes differ by at most one."""
    base, extra = divmod(repetitions, rounds)
    bounds, start = [], 0
    for r in range(rounds):
        stop = start + base + (1 if r < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds
