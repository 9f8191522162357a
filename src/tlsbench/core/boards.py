# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/cores.toml and spec/boards.toml: every core's timing table and every
board's clock, memory system and power, declared once with their sources (docs/cycles.md).
The cycle model (analysis/models/cycles.py), the one conversion of a count into a part's time
and energy (analysis/models/conversion.py), plans' `board = "..."` and `tlsbench validate
cycles` read them from here."""
from __future__ import annotations

import difflib
import functools
import tomllib
from dataclasses import dataclass
from typing import Any, Mapping

from tlsbench.core import targets
from tlsbench.core.errors import UserError
from tlsbench.core.spec import SPEC_DIR

CORES_FILE = "cores.toml"
BOARDS_FILE = "boards.toml"


class UnknownBoard(UserError, KeyError):
    """A board name no spec/boards.toml entry declares."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class Core:
    """A core's timing table ([core.<name>]): cycles per feature the QEMU plugin counts."""

    name: str
    stream: str  # the instruction stream its code is (armv6-m, armv7-m, rv32): counts compare within one
    meaning: str
    target: str  # the emulated target whose firmware runs its code (spec/targets.toml)
    cycles: Mapping[str, float]  # feature -> cycles per counted event
    notes: Mapping[str, str]  # feature -> "source id: where"
    sources: Mapping[str, str]
    calibration_row: str | None  # the one published row the model is scaled to


@dataclass(frozen=True)
class MemorySystem:
    """What a board's flash costs the core at its clock ([board.<name>.memory])."""

    flash_wait_states: int
    line_bytes: int
    icache_lines: int
    icache_ways: int
    dcache_lines: int
    prefetch: bool  # sequential lines come ahead: only jumps (and literal reads) wait

    def plugin_args(self) -> list[str]:
        """The plugin's cache geometry for this board (agent/tools/cycles/tb_cycles.c)."""
        return [f"line={self.line_bytes}", f"lines={self.icache_lines}", f"ways={self.icache_ways}",
                f"dlines={self.dcache_lines}"]


@dataclass(frozen=True)
class Power:
    """A board's power figures ([board.<name>.power]), in mA at supply_v."""

    supply_v: float
    run_ma: float
    sleep_ma: float
    tx_ma: float | None = None
    rx_ma: float | None = None

    def watts(self, ma: float | None) -> float | None:
        return None if ma is None else ma * 1e-3 * self.supply_v


@dataclass(frozen=True)
class Board:
    """A part at a clock ([board.<name>])."""

    name: str
    meaning: str
    core: Core
    clock_mhz: float
    memory: MemorySystem
    power: Power
    sources: Mapping[str, str]
    approximate: tuple[str, ...]

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6


def _read(name: str) -> dict[str, Any]:
    return tomllib.loads((SPEC_DIR / name).read_text())


@functools.cache
def cores() -> dict[str, Core]:
    out = {}
    for name, c in _read(CORES_FILE)["core"].items():
        table = c.get("cycles", {})
        out[name] = Core(name, c["stream"], c["meaning"], c["target"], {k: float(v[0]) for k, v in table.items()},
                         {k: str(v[1]) for k, v in table.items()}, dict(c.get("sources", {})),
                         (c.get("calibration") or {}).get("row"))
    return out


def stream_of(cpu: str) -> str | None:
    """The instruction stream a firmware's counts are of (its HELLO device.cpu): the core's of
    that name, else the stream of the core that runs on the target built for that cpu (the
    RV32IMAC firmware's code is what the RV32IMC core runs: no atomics are used); None: unknown."""
    known = cores()
    if cpu in known:
        return known[cpu].stream
    built_for = {t.name for t in targets.load().all if t.cpu == cpu}
    return next((c.stream for c in known.values() if c.target in built_for), None)


@functools.cache
def boards() -> dict[str, Board]:
    known = cores()
    out = {}
    for name, b in _read(BOARDS_FILE)["board"].items():
        out[name] = Board(name, b["meaning"], known[b["core"]], float(b["clock_mhz"]), MemorySystem(**b["memory"]),
                          Power(**b["power"]), dict(b["sources"]), tuple(b.get("approximate", ())))
    return out


def board(name: str) -> Board:
    """The declared board `name`, or one line naming the declared ones."""
    known = boards()
    if name in known:
        return known[name]
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise UnknownBoard(f"no board {name!r}{hint} (declared in spec/boards.toml: {', '.join(known)})")
