# SPDX-License-Identifier: Apache-2.0
"""The unit of an agent's counter (HELLO `clock.unit`, docs/protocol.md): every span, every
measure and every statistic of an analysed dataset is in it. On a host it is ns, a time; on a
device it is what the port counts, "instructions (QEMU icount)" under QEMU or "cycles (...)"
on a board: a count, never called a time (a part's time: the board's cycle model, docs/cycles.md).

One unit per analysed dataset: load() keeps a device's configurations and the host's apart
(the host's ride along as a companion for the device-vs-host comparison, analysis/questions/device.py).
The numbers are scaled alike (÷10⁶ for handshakes, ÷10³ for records); only their labels
differ, so every table and figure asks its Unit for the label."""
from __future__ import annotations

import math
from dataclasses import dataclass

NS = "ns"
# Scale -> (time label, count prefix): a handshake is shown ÷10⁶, a record ÷10³.
_SCALES = {1e6: ("ms", "M"), 1e3: ("µs", "k"), 1.0: ("ns", "")}
# A count's verdicts: fewer units is not "faster" (no time was measured).
_COUNT_VERDICTS = {"faster": "fewer", "slower": "more"}


@dataclass(frozen=True)
class Unit:
    """A counter unit: `ns`, or a count such as "instructions (QEMU icount)"."""

    name: str = NS

    @property
    def is_time(self) -> bool:
        return self.name == NS

    @property
    def noun(self) -> str:
        """The counted thing: "instructions", "cycles" (time: "ns")."""
        return self.name.split(" (")[0]

    @property
    def quantity(self) -> str:
        """What a value is: a time, or a count of the noun."""
        return "time" if self.is_time else "count"

    def label(self, scale: float) -> str:
        """The unit of a value divided by `scale` (1e6, 1e3, 1): ms / M instructions."""
        time_label, prefix = _SCALES[scale]
        return time_label if self.is_time else f"{prefix} {self.noun}".strip()

    def text(self, value: float, scale: float, digits: int = 2) -> str:
        """A value with its unit: "4.21 ms", "89.47 M instructions"."""
        if value is None or not math.isfinite(value):
            return "–"
        return f"{value / scale:,.{digits}f} {self.label(scale)}"

    def verdict(self, word: str) -> str:
        """A comparison's verdict in this unit's words (a count is fewer or more, not faster)."""
        return word if self.is_time else _COUNT_VERDICTS.get(word, word)

    @property
    def cheaper(self) -> str:
        """What winning means: the fastest (time) or the cheapest (count)."""
        return "fastest" if self.is_time else f"fewest {self.noun}"


TIME = Unit()


def of_hello(hello: dict) -> Unit:
    """The unit of an agent's counts (a HELLO without `clock.unit` is a host agent's: ns)."""
    return Unit(str((hello.get("clock") or {}).get("unit") or NS))


def identical(summary) -> bool:  # summary: stats.Summary
    """All values of a sample are the same (a device's deterministic counts, often): the
    value says everything, and a bootstrap interval around it would pretend to more."""
    return summary.n >= 1 and summary.min == summary.max


def identity_text(summary, unit: Unit = TIME) -> str:
    """What is shown instead of an interval around identical values: a count's one value is
    exact (a device counts the same run after run), a time's one value has no interval."""
    if summary.n == 1:
        return "exact (one count)" if not unit.is_time else summary.interval_note
    return f"identical in {summary.n} repetitions"


def exact_values(summary, unit: Unit) -> bool:
    """Values shown as exact, without an interval: all the same, or a count's one value."""
    return identical(summary) and (summary.n > 1 or not unit.is_time)
