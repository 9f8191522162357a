# SPDX-License-Identifier: Apache-2.0
"""Energy results of an analysed experiment, for the report and `tlsbench energy`.

Measured energies (a stored capture) are shown where they exist, estimates otherwise; every
row carries its source label, "measured (capture X)" or "estimate (profile Y)", so the two
are never mixed without saying which is which.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tlsbench.schema import StoredCapture
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.models.conversion import Conversion, conversion, counted_cpu, of_dataset, point_for
from tlsbench.analysis.models.energy.estimate import estimate
from tlsbench.analysis.models.energy.experiments import group_energies
from tlsbench.analysis.models.energy.profiles import ASSUMPTION, OperatingPoint
from tlsbench.analysis.models.energy.stored import measured_table
from tlsbench.analysis.models.energy.table import EnergyRow, EnergyTable, summarize_table

IN_MEMORY = "memory"  # the transport whose I/O is memory copies, not airtime


@dataclass
class EnergyResults:
    """Measured and estimated energy statistics of one experiment."""

    rows: list[EnergyRow]
    capture: StoredCapture | None = None
    profile: OperatingPoint | None = None
    conversion: Conversion | None = None  # how the estimates' values became the part's seconds
    warnings: list[str] = field(default_factory=list)
    _index: dict[tuple[int, str, str, str, str], EnergyRow] = field(default_factory=dict, repr=False)

    @property
    def sources(self) -> list[str]:
        return ([self.capture.label] if self.capture else []) + ([self.profile.label] if self.profile else [])

    def find(self, config_id: int, kind: str, peer: str, label: str, source: str) -> EnergyRow | None:
        if len(self._index) != len(self.rows):
            self._index = {(r.config_id, r.kind, r.peer, r.label, r.source): r for r in self.rows}
        return self._index.get((config_id, kind, peer, label, source))

    def preferred(self, config_id: int, kind: str, peer: str, label: str = "") -> EnergyRow | None:
        """The measured row where one exists, else the estimate."""
        for source in self.sources:
            if (row := self.find(config_id, kind, peer, label, source)) is not None:
                return row
        return None


def _device_notes(analysis: Analysis, op: OperatingPoint) -> list[str]:
    """A profile for another core than the one counted: its power and cycle model do not apply."""
    cpu = counted_cpu(analysis.ds) or "?"
    if op.profile.core == cpu:
        return []
    return [f"{op.label}: the profile is for a {op.profile.core or 'core it does not name'}, the counts are of a "
            f"{cpu}: its CPU power and cycle model do not describe the code that was counted."]


def _profile_warnings(analysis: Analysis, op: OperatingPoint, conv: Conversion) -> list[str]:
    out = [f"{op.label}: time from {conv.text}; {conv.band_text()}. An estimate, not a measurement."]
    if not analysis.ds.unit.is_time:
        out += _device_notes(analysis, op)
    if conv.steps and conv.steps.missing:
        reason = next(iter(conv.steps.missing.values()))
        out.append(f"{op.label}: {len(conv.steps.missing)} repetition(s) stored without per-step counts (e.g. "
                   f"{reason}): their steps take the cycles (model) per instruction their configuration's others "
                   "measured.")
    flagged = [path for path, d in op.profile.draws() if d.approximate or d.source == ASSUMPTION]
    if flagged:
        out.append(f"{op.label}: figures that are approximate or assumed, not read off a datasheet: "
                   f"{', '.join(flagged)} (see the profile's notes).")
    if op.has_radio and analysis.ds.configs and all(c.transport == IN_MEMORY for c in analysis.ds.configs.values()):
        out.append(f"{op.label}: radio energy is charged for the measured I/O, and in memory the I/O is a copy, "
                   "not airtime: the radio terms here are near zero; measure over a real link for them.")
    return out


def _coverage_warnings(analysis: Analysis, capture: StoredCapture, table: EnergyTable) -> list[str]:
    """A capture covers the repetitions stored when it was imported; a resumed run adds more."""
    measured, stored = len(np.unique(table.rep)), len(analysis.ds.reps)
    if measured >= stored:
        return []
    return [f"{capture.label} covers {measured} of the {stored} stored repetitions (the run went on after the "
            "import): measured energies are of those only; capture the whole run and import it with --replace."]


def collect(analysis: Analysis, profile: str | OperatingPoint | None = None, measured: bool = True) -> EnergyResults | None:
    """Measured energies if the store holds a capture (and `measured`), estimates if a profile
    is given or the plan names a board (their time from the one conversion: a host run needs
    the host's profile or a device profile with an explicit scale); None when there is neither."""
    op = point_for(analysis.ds, profile)  # `--profile`, else the plan's board on a device run
    stored = measured_table(analysis.ds) if measured else None
    if stored is None and op is None:
        return None
    seed, flagged = analysis.results.context.seed, analysis.results.context.include_flagged
    res = EnergyResults([])
    if stored is not None:
        res.capture, table = stored
        table = table.of(analysis.ds.reps.id)
        res.rows += summarize_table(analysis.ds, table, seed, flagged)
        res.warnings += _coverage_warnings(analysis, res.capture, table)
    if op is not None:
        res.profile = op
        res.conversion = of_dataset(analysis.ds, op)
        res.rows += summarize_table(analysis.ds, estimate(analysis, op, res.conversion), seed, flagged)
        res.warnings += _profile_warnings(analysis, op, res.conversion)
    if analysis.ds.experiments and analysis.results.primitives:  # energy per operation (the primitives section)
        exp = analysis.ds.experiments
        conv = conversion(exp.unit, op, run=exp.name, cpu=counted_cpu(exp)) if op is not None else None
        res.rows += group_energies(exp, op, conv, seed, flagged, measured)
    return res
