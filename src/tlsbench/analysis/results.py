# SPDX-License-Identifier: Apache-2.0
"""The one result type of an analysis: every exporter and the report read a `Results`.

A plain container, defined after the pieces it holds (winners, group-bys, libraries,
comparisons, primitives) and before the pipeline that computes them (pipeline.py).
(cf. hyperfine src/export/mod.rs: one result type, one exporter interface.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlsbench.analysis.questions.compare import Comparison
from tlsbench.analysis.questions.device import DeviceResults
from tlsbench.analysis.stats.drift import RoundShift
from tlsbench.analysis.stats.exclusions import Exclusions
from tlsbench.analysis.questions.groups import GroupTable
from tlsbench.analysis.questions.libraries import Libraries
from tlsbench.analysis.questions.postquantum import KexTable
from tlsbench.analysis.questions.wire import WireSection
from tlsbench.analysis.derive.dataset import Config
from tlsbench.analysis.questions.device_primitives import DevicePrimitives
from tlsbench.analysis.questions.primitives import Primitives
from tlsbench.analysis.derive.samples import Measured, Row
from tlsbench.analysis.questions.winners import Winner

@dataclass(frozen=True)
class Context:
    """What a reader needs to trust and reproduce the numbers."""

    experiment: str
    created_at: str
    seed: int
    host: dict[str, Any]
    libraries: list[str]        # "mbed TLS 2.28.3" per agent
    clock: dict[str, Any]       # HELLO clock block of the first agent
    calibration: dict[str, Any] # HELLO tracer block of the first agent
    overhead_known: bool        # False: the agent reported no calibration, nothing subtracted
    n_reps: int
    status_counts: dict[str, int]
    flag_counts: dict[str, int]
    excluded: int               # repetitions excluded from statistics
    descheduled: int            # of which: wall time well above CPU time (another process ran)
    include_flagged: bool
    unbalanced_reps: int        # traces that needed repair (open spans)
    orphan_stops: int
    dropped_events: int
    incomplete_records: int
    unit: str = "ns"            # the counter's unit of every span and measure (HELLO clock.unit)
    target: str | None = None   # the device the configurations ran on (None: the host)


@dataclass(frozen=True)
class PrecisionMiss:
    """A configuration's peer whose median handshake processing missed the plan's target."""

    config_id: int
    peer: str
    half_width_pct: float  # 95% CI half-width of the median, % of it
    n: int
    rounds: int
    round_spread_pct: float  # (max − min) of its round medians, % of the median: what widened it


@dataclass(frozen=True)
class PrecisionCheck:
    """The plan's precision target against the handshake configurations' intervals."""

    target_pct: float | None  # None: the plan set none
    half_widths: list[float]  # per configuration, its worst peer's half-width (% of the median)
    misses: list[PrecisionMiss]  # worst first

    @property
    def configs_above(self) -> int:
        return len({m.config_id for m in self.misses})


@dataclass
class Results:
    """Everything a report or export shows, computed once."""

    context: Context
    configs: dict[int, Config]
    config_labels: dict[int, str]
    rows: list[Row]
    warnings: list[str] = field(default_factory=list)
    winners: list[Winner] = field(default_factory=list)
    groups: list[GroupTable] = field(default_factory=list)
    comparison: Comparison | None = None
    libraries: Libraries | None = None
    primitives: Primitives | None = None  # experiment configurations
    device_primitives: DevicePrimitives | None = None  # the device's experiment configurations (counts)
    device: DeviceResults | None = None  # a device's run: footprint, device vs host (analysis/questions/device.py)
    postquantum: list[KexTable] = field(default_factory=list)  # per library: groups × credentials (postquantum.py)
    wire: WireSection | None = None  # bytes per flight and per record beside the IETF comparison (wire.py)
    exclusions: dict[int, Exclusions] = field(default_factory=dict)  # config id -> what was left out, why
    round_shift: RoundShift | None = None  # the machine's speed changed between states (analysis/stats/drift.py)
    notes: list[str] = field(default_factory=list)  # the warnings about the run as a whole (not per configuration)
    precision: PrecisionCheck | None = None  # the plan's precision target and who missed it

    @property
    def no_data(self) -> dict[int, str]:
        """Configurations without a usable repetition: "no data: N excluded (why)"."""
        return {cid: e.no_data for cid, e in self.exclusions.items() if e.used == 0}

    def _index(self) -> tuple[dict, dict]:
        """Rows by (config, metric, peer, label) and by (config, metric), the first of each as
        the linear search found it. Built on first use and again whenever `rows` is another
        list or another length (rows are appended while analysing, not after); kept outside
        the dataclass fields, so exports and comparisons never see it."""
        cached = self.__dict__.get("_row_index")
        if cached is None or cached[0] is not self.rows or cached[1] != len(self.rows):
            by_key: dict = {}
            by_metric: dict = {}
            for r in self.rows:
                by_key.setdefault((r.config_id, r.metric, r.peer, r.label), r)
                by_metric.setdefault((r.config_id, r.metric), r)
            cached = (self.rows, len(self.rows), by_key, by_metric)
            self.__dict__["_row_index"] = cached
        return cached[2], cached[3]

    def find(self, config_id: int, metric: str, peer: str = "none", label: str = "") -> Row | None:
        return self._index()[0].get((config_id, metric, peer, label))

    def cell(self, config_id: int, metric: str, peer: str) -> Row | None:
        """A SUITE_COLUMNS cell: the row of that peer, or with peer "any" the first row."""
        if peer != "any":
            return self.find(config_id, metric, peer)
        return self._index()[1].get((config_id, metric))


@dataclass
class Analysis(Measured):
    """The intermediate products and the results of one dataset."""

    results: Results
