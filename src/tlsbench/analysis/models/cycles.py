# SPDX-License-Identifier: Apache-2.0
"""The cycle model (docs/cycles.md): executed instructions by class (the QEMU plugin's counts,
builder/cycles.py) -> cycles on a board:

    cycles = k_core x ( core = sum over features f of  cost_core[f] x count[f]
                        + flash wait states x (taken-branch fetch misses
                                               + sequential misses without prefetch
                                               + literal loads missing the data cache)
                        + with prefetch, per sequential miss: max(0, wait states + 1 - the core's
                          cycles per flash line), the line's fetch outlasting its execution )

cost_core comes from the core's timing table (spec/cores.toml, each entry citing its TRM); the
memory terms from the board's memory system at its clock (spec/boards.toml); k_core is the
one calibration a core may have: published / model of ONE named published figure
(spec/cycles/model.toml, written by `tlsbench validate cycles --write-model`, never fitted
to a row reported as validation). The model's measured error over the other rows is its
band, shown with every estimate."""
from __future__ import annotations

import functools
import math
import statistics
import tomllib
from dataclasses import dataclass
from typing import Mapping, Sequence

from tlsbench.core.boards import Board
from tlsbench.core.errors import UserError
from tlsbench.core.spec import SPEC_DIR

MODEL_FILE = "cycles/model.toml"
INSTRUCTIONS = "instructions"
MISSES = ("fetch_miss_taken", "literal_miss")  # always wait; sequential misses wait without prefetch
SEQUENTIAL_MISS = "fetch_miss_seq"
BYTES = "instruction_bytes"


class NoModel(UserError, ValueError):
    """A board whose core the model has no fitted figures for: one line saying why."""


def raw_cycles(counts: Mapping[str, float], board: Board) -> float:
    """Cycles before the core's calibration factor."""
    core = sum(board.core.cycles.get(f, 0.0) * n for f, n in counts.items())
    ws, sequential = board.memory.flash_wait_states, counts.get(SEQUENTIAL_MISS, 0)
    stalls = ws * sum(counts.get(f, 0) for f in MISSES)
    if not board.memory.prefetch:
        stalls += ws * sequential
    elif counts.get(BYTES):
        # The prefetcher reads the next line while the core runs this one: it waits only when
        # a line's read (ws + 1 cycles) outlasts the line's execution (fetch bandwidth).
        per_line = core * board.memory.line_bytes / counts[BYTES]
        stalls += sequential * max(0.0, ws + 1 - per_line)
    return core + stalls


@dataclass(frozen=True)
class Band:
    """The model's measured error against published silicon figures (validation rows only)."""

    median: float  # |error|, a fraction
    worst: float
    rows: int
    spread: str = ""  # what else the band holds besides the published figures' error ("": nothing)

    def text(self) -> str:
        # two significant digits: the comparable rows' band is under 1% (0.33%, not "±0%")
        return f"±{self.median * 100:.2g}% (worst {self.worst * 100:.2g}%, {self.rows} published figures{self.spread})"

    def widened(self, other: "Band", what: str) -> "Band":
        """This band plus another error source's (errors add at worst): `what` says which."""
        return Band(self.median + other.median, self.worst + other.worst, self.rows, f" and {what}")

    def interval(self, value: float) -> tuple[float, float]:
        """value ± the worst measured error: the range an estimate is shown with."""
        return value * (1 - self.worst), value * (1 + self.worst)


@dataclass(frozen=True)
class Fitted:
    """spec/cycles/model.toml: what `tlsbench validate cycles --write-model` measured."""

    factors: Mapping[str, float]  # core -> k_core (1 where no published figure calibrates it)
    calibrated_on: Mapping[str, str]  # core -> the published row's id
    cpi: Mapping[str, float]  # board -> cycles per instruction of the reference workload
    band: Band | None  # the model's error on the comparable published rows
    # How far a board's modelled CPI moves with the code: |CPI(group) / CPI(reference) - 1| over
    # every group the validation counted. A device run's estimates carry this too (run_band):
    # with the reference CPI the run's code is not the reference workload; with each step's own
    # classes (models/steps.py) the tables are still validated on p256-m code only.
    code_spread: Band | None = None

    @property
    def run_band(self) -> Band | None:
        """The band of a device run's estimate: the model's error, widened by the CPI's spread
        over code (the run's code is not the reference workload)."""
        if self.band is None or self.code_spread is None:
            return self.band
        return self.band.widened(self.code_spread, f"the CPI's spread over {self.code_spread.rows} code groups")


@functools.cache
def fitted() -> Fitted:
    path = SPEC_DIR / MODEL_FILE
    raw = tomllib.loads(path.read_text()) if path.exists() else {}
    cores = raw.get("core", {})
    b, spread = raw.get("band"), raw.get("code_spread")
    return Fitted({c: float(v["factor"]) for c, v in cores.items()},
                  {c: v["calibrated_on"] for c, v in cores.items() if v.get("calibrated_on")},
                  {n: float(v["cpi"]) for n, v in raw.get("board", {}).items()},
                  Band(b["median"], b["worst"], b["rows"]) if b else None,
                  Band(spread["median"], spread["worst"], spread["groups"]) if spread else None)


def board_cpi(board: Board) -> float:
    """Cycles per instruction the model gives `board` for the reference workload: what a
    device run's instruction count is multiplied by while runs carry no class counts."""
    cpi = fitted().cpi.get(board.name)
    if cpi is None:
        raise NoModel(f"board {board.name}: the cycle model has no figures for its core {board.core.name} yet "
                      "(`tlsbench validate cycles --write-model` computes them where the mbedtls@3.6+p256m "
                      "firmware runs on the core)")
    return cpi


def modelled_cycles(counts: Mapping[str, float], board: Board) -> float:
    """Cycles (model) of counted code on `board`: the core's fitted factor x raw_cycles (a
    step's class counts from run/cycles.py count_steps)."""
    return fitted().factors.get(board.core.name, 1.0) * raw_cycles(counts, board)


def error(predicted: float, published: float) -> float:
    """Signed relative error of a prediction."""
    return predicted / published - 1


def band_of(errors: Sequence[float]) -> Band | None:
    if not errors:
        return None
    absolute = [abs(e) for e in errors if math.isfinite(e)]
    return Band(statistics.median(absolute), max(absolute), len(absolute))

