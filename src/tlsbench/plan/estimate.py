# SPDX-License-Identifier: Apache-2.0
"""How long a resolved plan will take, before it runs (`tlsbench plan show`): an order of
magnitude from the repetitions it asks for and what one repetition of a key exchange took on
the test machine. An estimate, said to be one, never stored as a measurement."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tlsbench.plan.configs import Configuration
from tlsbench.plan.model import Plan

# Seconds per repetition by where it runs and the suite's key exchange. Host: the default run of
# 2026-11-27 on the 2-core test machine (mbed TLS 2.28, in memory): the mean repetition wall
# time by key exchange × 1.9, the whole run's time over its repetitions' (controller, warm-up,
# precision checks). Device: `tlsbench run device` on the same machine on 2026-11-28 (mbed TLS
# 2.28 on qemu-mps2-an386, both peers emulated: 52 repetitions in 19.5 s), plus each firmware
# image's boot.
SECONDS_PER_REPETITION = {
    "host": {"PSK": 0.001, "ECDHE": 0.011, "ECDH": 0.007, "RSA": 0.005, "DHE": 0.046},
    "device": {"PSK": 0.15, "ECDHE": 0.5, "ECDH": 0.5, "RSA": 0.5, "DHE": 1.5},
}
UNKNOWN_KEY_EXCHANGE = {"host": 0.011, "device": 0.5}  # TLS 1.3 suites, experiments: as ECDHE
BOOT_S = 2.0  # a device's firmware image, booted once per run


@dataclass(frozen=True)
class Estimate:
    repetitions: int  # what the plan asks for
    seconds: float
    most_repetitions: int  # with a precision target: up to this many
    most_seconds: float  # ... and up to this long (its time budget caps it)

    def text(self) -> str:
        low = f"about {_duration(self.seconds)} for {self.repetitions:,} repetitions"
        if self.most_repetitions <= self.repetitions:
            return low
        return f"{low}; up to {_duration(self.most_seconds)} for {self.most_repetitions:,} with the precision rounds"


def estimate(plan: Plan, configs: Sequence[Configuration]) -> Estimate | None:
    """None for a plan over emulated links: their delays, not the processing, set its duration."""
    if any(c.row.link_label not in (None, "loopback") for c in configs):
        return None
    where = ["device" if c.row.target else "host" for c in configs]  # a device plan's host twins run here
    per = [SECONDS_PER_REPETITION[w].get(c.row.key_exchange, UNKNOWN_KEY_EXCHANGE[w]) for w, c in zip(where, configs)]
    reps = [c.row.repetitions for c in configs]
    boots = BOOT_S * len({c.row.image for c in configs if c.row.target})
    seconds = boots + sum(p * (r + plan.warmup) for p, r in zip(per, reps))
    if plan.precision is None:
        return Estimate(sum(reps), seconds, sum(reps), seconds)
    most = max(plan.precision.max_repetitions, 1)
    longest = boots + sum(p * (most + plan.warmup) for p in per)
    budget = plan.precision.time_budget_s
    return Estimate(sum(reps), seconds, most * len(configs), min(longest, budget) if budget else longest)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
