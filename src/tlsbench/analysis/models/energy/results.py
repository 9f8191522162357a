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
from tlsbench.analysis.models.energy.estimate import estimate
from tlsbench.analysis.models.energy.experiments import group_energies
from tlsbench.analysis.models.energy.profiles import ASSUMPTION, OperatingPoint, resolve
from tlsbench.analysis.models.energy.stored import measured_table
from tlsbench.analysis.models.energy.table import EnergyRow, EnergyTable, summarize_table

IN_MEMORY = "memory"  # the transport whose I/O is memory copies, not airtime


@dataclass
class EnergyResults:
    """Measured and estimated energy statistics of one experiment."""

    rows: list[EnergyRow]
    capture: StoredCapture | None = None
    profile: OperatingPoint | None = None
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
    """A device's counts become time through the profile's clock (and CPI): said every time."""
    unit, ds = analysis.ds.unit, analysis.ds
    cpu = next((str((a["hello"].get("device") or {}).get("cpu")) for a in ds.agents.values() if a.get("target")), "?")
    out = [f"{op.label}: from the device's own counts ({unit.name}): " +
           (f"cycles ÷ {op.frequency_mhz:g} MHz." if unit.noun == "cycles" else
            f"instructions × CPI {op.cpi:g} ÷ {op.frequency_mhz:g} MHz; the CPI is "
            f"{'an assumption' if op.profile.cpi and op.profile.cpi.source == ASSUMPTION else 'from ' + str(op.profile.cpi.source if op.profile.cpi else '?')}"
            f"{': ' + op.profile.cpi.note if op.profile.cpi and op.profile.cpi.note else ''}. An estimate, not a measurement.")]
    if op.profile.core != cpu:
        out.append(f"{op.label}: the profile is for a {op.profile.core or 'core it does not name'}, the counts are of a "
                   f"{cpu}: its CPU power and CPI do not describe the code that was counted.")
    return out


def _profile_warnings(analysis: Analysis, op: OperatingPoint) -> list[str]:
    out = []
    if not analysis.ds.unit.is_time:
        out += _device_notes(analysis, op)
    elif not op.scale_measured:
        out.append(f"{op.label}: the profile has no time scale, so its estimates take the host's processing times as "
                   "the device's; time a handshake on the device and set [time_scale] (docs/energy.md).")
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
    is given; None when there is neither."""
    op = resolve(profile) if isinstance(profile, str) else profile
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
        res.rows += summarize_table(analysis.ds, estimate(analysis, op), seed, flagged)
        res.warnings += _profile_warnings(analysis, op)
    if analysis.ds.experiments and analysis.results.primitives:  # energy per operation (the primitives section)
        res.rows += group_energies(analysis.ds.experiments, op, seed, flagged, measured)
    return res
