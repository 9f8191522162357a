# SPDX-License-Identifier: Apache-2.0
"""Energy per operation of experiment groups (crypto primitives, user experiments).

Measured: a group's USER_GROUP windows in a capture (store: `energy.group_index`), one
value per repetition the time statistics use. Estimated: the profile's CPU power above idle
× its time scale × the group's processing (analysis/questions/primitives.py). An experiment has no
TLS I/O for the radio terms, so a group that transmits (a user's own radio code) is only
told right by a measurement. Both are returned when both exist, each with its source."""
from __future__ import annotations

import json

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.questions.primitives import GroupValues, group_values
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.models.conversion import Conversion
from tlsbench.analysis.models.energy.estimate import cpu_joules_per_unit
from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.schema import StoredCapture
from tlsbench.analysis.models.energy.stored import measured_groups
from tlsbench.analysis.models.energy.table import EnergyRow

GroupEnergy = dict[tuple[int, int], float]  # (repetition id, group index) -> J


def _row(ds: Dataset, cid: int, g: int, source: str, summary: Summary) -> EnergyRow:
    groups = json.loads(ds.configs[cid].experiment_groups or "[]")
    return EnergyRow(cid, "none", "operation", groups[g] if 0 <= g < len(groups) else f"group {g}", source, summary)


def _measured(ds: Dataset, gv: GroupValues, cap: StoredCapture, energy: GroupEnergy, seed: int) -> list[EnergyRow]:
    out = []
    for (cid, g), reps in gv.reps.items():
        values = np.array([energy[(r, g)] for r in reps.tolist() if (r, g) in energy])
        if len(values):  # none: the repetitions came after the import
            summary = summarize(values, rng_for(seed, "energy", cap.label, cid, g), excluded=len(reps) - len(values))
            out.append(_row(ds, cid, g, cap.label, summary))
    return out


def _estimated(ds: Dataset, gv: GroupValues, op: OperatingPoint, conv: Conversion, seed: int) -> list[EnergyRow]:
    per_unit = cpu_joules_per_unit(op, conv)
    return [_row(ds, cid, g, op.label, summarize(values * per_unit, rng_for(seed, "energy", op.label, cid, g)))
            for (cid, g), values in gv.values.items()]


def group_energies(ds: Dataset, op: OperatingPoint | None, conv: Conversion | None, seed: int,
                   include_flagged: bool = False, measured: bool = True) -> list[EnergyRow]:
    """Energy per operation of every experiment group of an experiments dataset: measured
    where the store holds a capture (and `measured`), estimated when a profile is given; []
    for neither."""
    stored = measured_groups(ds) if measured else None
    if op is None and stored is None:
        return []
    gv = group_values(ds, include_flagged)
    return (_measured(ds, gv, *stored, seed) if stored else []) + (_estimated(ds, gv, op, conv, seed) if op and conv else [])
