# SPDX-License-Identifier: Apache-2.0
"""The report's section of the crypto primitives on the device (templates/device_primitives.html.j2):
per operation the count of each target × library build and, on a board (the plan's [device]
board or --profile), the part's ms through the one conversion (analysis/models/conversion.py):
an estimate, shown beside the count with its basis and band, never instead of it.

Counts come from analysis/questions/device_primitives.py; this module only lays them out."""
from __future__ import annotations

from dataclasses import dataclass

from tlsbench.analysis.models.conversion import Conversion, conversion, point_for
from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.analysis.questions.device_primitives import Count, DevicePrimitives
from tlsbench.analysis.tables import size_label
from tlsbench.analysis.units import Unit
from tlsbench.core.errors import UserError


@dataclass(frozen=True)
class Cell:
    count: str  # "6,595,320", or "6,595,320 (6,595,240–6,595,400)" when the repetitions differ
    ms: str  # "≈ 103 ms [78.1, 128]" on the board (an estimate with its band's range), "" without one


def _count(c: Count) -> str:
    return f"{c.median:,.0f}" if c.low == c.high else f"{c.median:,.0f} ({c.low:,.0f}–{c.high:,.0f})"


def _3(x: float) -> str:
    """Three significant digits, never in exponent form (0.0306 ms to 4,170 ms)."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _ms(conv: Conversion | None, c: Count) -> str:
    if conv is None:
        return ""
    ms = conv.ms(c.median)
    if conv.band is None:
        return f"≈ {_3(ms)}"
    lo, hi = conv.band.interval(ms)
    return f"≈ {_3(ms)} [{_3(lo)}, {_3(hi)}]"


def conversions(dp: DevicePrimitives, unit: Unit, op: OperatingPoint | None) -> tuple[dict[str, Conversion],
                                                                                      dict[str, str]]:
    """Per target, the one conversion of its counts to `op`'s part, or why there is none (the
    board's core runs another instruction stream)."""
    converted, refused = {}, {}
    for target in dict.fromkeys(t for t, _ in dp.places) if op is not None else ():
        try:
            converted[target] = conversion(unit, op, cpu=dp.cores.get(target))
        except UserError as e:
            refused[target] = str(e)
    return converted, refused


def section(dp: DevicePrimitives, unit: Unit, op: OperatingPoint | None) -> dict:
    """What the template renders: one row per operation, one (count, ms) cell per place."""
    converted, refused = conversions(dp, unit, op)
    rows = [{"experiment": o.experiment, "size": size_label(o.size) if o.size else "–", "group": o.group,
             "cells": [Cell(_count(o.counts[p]), _ms(converted.get(p[0]), o.counts[p])) if p in o.counts else None
                       for p in dp.places]}
            for o in dp.operations]
    return {"dp": dp, "rows": rows, "part": op.name if op else None, "with_ms": bool(converted), "refused": refused,
            "bases": {t: f"{c.basis}; {c.band_text()}" for t, c in converted.items()}}


def html_section(analysis, energy: dict | None) -> dict | None:  # analysis: Analysis
    """The section of a report, None without device primitives; their part is the energy
    section's (--profile, or the plan's board), else the plan's board (a store of device
    primitives only has no handshakes whose energy the report shows)."""
    dp, ds = analysis.results.device_primitives, analysis.ds.device_experiments
    if dp is None or ds is None:
        return None
    return section(dp, ds.unit, energy["res"].profile if energy else point_for(ds, None))
