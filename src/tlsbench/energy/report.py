# SPDX-License-Identifier: Apache-2.0
"""Energy results of an analysed experiment, for the HTML report and `tlsbench energy`.

Measured energies (a stored capture) are shown where they exist, estimates otherwise; every
row and every figure series carries its source label, "measured (capture X)" or "estimate
(profile Y)", so the two are never mixed without saying which is which.
"""
from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field

import numpy as np

from ..analysis.results import Analysis
from ..analysis.vocab import vocab
from .estimate import estimate
from .experiments import group_energies
from .profiles import ASSUMPTION, OperatingPoint, resolve
from .store import StoredCapture, measured_table
from .table import KINDS, EnergyRow, summarize_table

PEERS = ("client", "server")
IN_MEMORY = "memory"  # the transport whose I/O is memory copies, not airtime


@dataclass
class EnergyResults:
    """Measured and estimated energy statistics of one experiment."""

    rows: list[EnergyRow]
    capture: StoredCapture | None = None
    profile: OperatingPoint | None = None
    warnings: list[str] = field(default_factory=list)
    _index: dict = field(default_factory=dict, repr=False)  # (config, kind, peer, label, source) -> row

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


def _profile_warnings(a: Analysis, op: OperatingPoint) -> list[str]:
    out = []
    if not op.scale_measured:
        out.append(f"{op.label}: the profile has no time scale, so its estimates take the host's processing times as "
                   "the device's; time a handshake on the device and set [time_scale] (docs/energy.md).")
    flagged = [path for path, d in op.profile.draws() if d.approximate or d.source == ASSUMPTION]
    if flagged:
        out.append(f"{op.label}: figures that are approximate or assumed, not read off a datasheet: "
                   f"{', '.join(flagged)} (see the profile's notes).")
    if op.has_radio and a.ds.configs and all(c.transport == IN_MEMORY for c in a.ds.configs.values()):
        out.append(f"{op.label}: radio energy is charged for the measured I/O time, and in memory the I/O is a copy "
                   "of a few µs, not airtime: the radio terms here are near zero; measure over a real link for them.")
    return out


def _coverage_warnings(a: Analysis, capture: StoredCapture, table) -> list[str]:
    """A capture covers the repetitions stored when it was imported; a resumed run adds more."""
    measured, stored = len(np.unique(table.rep)), len(a.ds.reps)
    if measured >= stored:
        return []
    return [f"{capture.label} covers {measured} of the {stored} stored repetitions (the run went on after the "
            "import): measured energies are of those only; capture the whole run and import it with --replace."]


def collect(a: Analysis, profile: str | OperatingPoint | None = None, measured: bool = True) -> EnergyResults | None:
    """Measured energies if the store holds a capture (and `measured`), estimates if a profile
    is given; None when there is neither."""
    op = resolve(profile) if isinstance(profile, str) else profile
    stored = measured_table(a.ds.path) if measured else None
    if stored is None and op is None:
        return None
    seed, flagged = a.results.context.seed, a.results.context.include_flagged
    res = EnergyResults([])
    if stored is not None:
        res.capture, table = stored
        table = table.of(a.ds.reps.id)
        res.rows += summarize_table(a.ds, table, seed, flagged)
        res.warnings += _coverage_warnings(a, res.capture, table)
    if op is not None:
        res.profile = op
        res.rows += summarize_table(a.ds, estimate(a, op), seed, flagged)
        res.warnings += _profile_warnings(a, op)
    if a.results.primitives:  # experiments' energy per operation (the primitives section shows it)
        res.rows += group_energies(a.ds.path, op, seed, flagged, measured)
    return res


# ---------------------------------------------------------------------- HTML
def scatter_figure(a: Analysis, res: EnergyResults):
    """Handshake processing time against handshake energy, per configuration and peer."""
    from ..report import figures as F

    styles = {0: dict(marker="o", fillstyle="full"), 1: dict(marker="s", fillstyle="none")}
    with F.plt.rc_context(F.STYLE):
        fig, axes = F.plt.subplots(1, len(PEERS), figsize=(9.5, 3.8), squeeze=False)
        for ax, peer in zip(axes[0], PEERS):
            for i, source in enumerate(res.sources):
                pts = []
                for cid in a.results.configs:
                    e, t = res.find(cid, "handshake", peer, "", source), a.results.find(cid, "handshake_processing", peer)
                    if e and t and e.summary.n:
                        pts.append((t.summary.median / 1e6, e.summary.median * 1e3,
                                    e.summary.median * 1e3 - e.summary.median_ci[0] * 1e3,
                                    e.summary.median_ci[1] * 1e3 - e.summary.median * 1e3))
                if pts:
                    x, y, lo, hi = np.array(pts).T
                    ax.errorbar(x, y, yerr=[lo, hi], linestyle="none", capsize=2, label=source, **styles[i % 2])
            ax.set_title(f"Handshake, {peer}")
            ax.set_xlabel("median handshake processing (ms)")
            ax.set_ylabel("median handshake energy (mJ)")
        handles = {lab: h for ax in axes[0] for h, lab in zip(*ax.get_legend_handles_labels())}
        fig.legend(handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
                   frameon=False)
    return fig


def significant(x: float, digits: int = 3) -> str:
    """A number to `digits` significant digits (energies span µJ to J across devices)."""
    return "–" if x is None or not math.isfinite(x) else f"{x:,.{digits}g}" if abs(x) >= 1 else f"{x:.{digits}g}"


def _data_uri(fig) -> str:
    from ..report import figures as F

    svg = F.render(fig, "svg")
    F.plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode()


def html_section(a: Analysis, profile: str | OperatingPoint | None = None) -> dict | None:
    """The report's energy section (template energy.html.j2), None when there is nothing."""
    res = collect(a, profile)
    if res is None:
        return None
    labels, voc = a.results.config_labels, vocab()
    order = {lab: i for i, lab in enumerate(sorted(voc.label_name))}
    both = res.capture is not None and res.profile is not None
    handshakes, steps = [], []
    for cid in sorted(a.results.configs, key=labels.get):
        for peer in PEERS:
            row = res.preferred(cid, "handshake", peer)
            if row:
                other = res.find(cid, "handshake", peer, "", res.profile.label) if both and res.profile else None
                handshakes.append({"config": labels[cid], "peer": peer, "row": row,
                                   "estimate": other if other is not row else None})
        rows = [r for r in res.rows if r.config_id == cid and r.kind == "step"
                and r is res.preferred(cid, "step", r.peer, r.label)]
        rows.sort(key=lambda r: (r.peer, order.get(voc.label_id.get(r.label, -1), -1)))
        if rows:
            steps.append({"config": labels[cid], "rows": rows})
    records = [r for r in res.rows if r.kind in ("record_write", "record_read")]
    return {"res": res, "handshakes": handshakes, "steps": steps, "records": records, "both": both,
            "kinds": {k.name: k for k in KINDS}, "figure": _data_uri(scatter_figure(a, res)) if handshakes else None, "sig": significant}


def energy_figures(a: Analysis, profile: str | OperatingPoint | None = None) -> list:
    """The energy figures (for `tlsbench report --pdf`): none without energy results."""
    from ..report.figures import FigureSpec

    res = collect(a, profile)
    if res is None or not any(r.kind == "handshake" for r in res.rows):
        return []
    return [FigureSpec("energy_scatter", "Time and energy", "Median handshake processing against median handshake "
                       "energy per configuration and peer; the legend names each series' source.", scatter_figure(a, res))]
