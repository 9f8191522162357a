# SPDX-License-Identifier: Apache-2.0
"""Predictions checked against the emulator: a store whose plan ran the same configurations
over a reference link (the `none` preset: forwarding only, or loopback) and over emulated
links. Each emulated configuration is predicted from its reference configuration's
repetitions alone (their processing and bytes), over the link the plan gave the emulator,
and compared with what was measured there: the device's median handshake stop–start
(every successful repetition, retransmitted ones included, as the network section counts
it) and the median bytes the link carried for the connection."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from tlsbench.analysis.models.conversion import identity
from tlsbench.analysis.derive.dataset import Config, ok_status
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.models.predict import PredictError
from tlsbench.analysis.models.predict.links import Link, from_plan
from tlsbench.analysis.models.predict.model import Options, Prediction, predict
from tlsbench.analysis.models.predict.script import Sources

REFERENCE_PRESET = "none"
RANGE_DRAWS = 2000  # medians drawn for a check's predicted range
LINK_KEYS = ("link", "link_label")  # the parts of a network variant that name its link


@dataclass
class Check:
    """One emulated configuration: predicted from its reference, against its measurement."""

    config_id: int
    reference_id: int
    label: str
    link: Link
    loss_pct: float  # the link's loss (the larger of both directions)
    predicted: Prediction
    measured: Summary  # ns, device handshake stop–start
    measured_bytes: Summary | None  # IP bytes on the link, both directions
    measured_retransmitted: int
    measured_failed: int

    @property
    def protocol(self) -> str:
        return "DTLS" if self.predicted.transport == "udp" else "TLS"

    @property
    def duration_error(self) -> float:
        """(predicted − measured) / measured, of the medians."""
        return _error(self.predicted.duration.median, self.measured.median)

    @property
    def bytes_error(self) -> float:
        return _error(self.predicted.bytes.median, self.measured_bytes.median) if self.measured_bytes else math.nan

    @property
    def measured_retransmitted_share(self) -> float:
        return self.measured_retransmitted / self.measured.n if self.measured.n else math.nan

    @property
    def measured_percentile(self) -> float:
        """Where the measured median falls in the predicted distribution (%): near 50 when the
        prediction is right, whatever the shape (on a lossy link, medians of a bimodal
        distribution jump between its modes, and their error says little)."""
        d = self.predicted.samples.get("duration_ns")
        return float(100 * np.mean(d <= self.measured.median)) if d is not None and len(d) else math.nan

    @property
    def medians_range(self) -> tuple[float, float]:
        """The 95% range of the median of as many handshakes as were measured, drawn from the
        predicted distribution: where the measured median should fall if the model is right
        (seeded; NaN without samples)."""
        d = self.predicted.samples.get("duration_ns")
        n = self.measured.n
        if d is None or not len(d) or not n:
            return math.nan, math.nan
        rng = rng_for(self.predicted.n_draws, "medians-range", self.config_id)
        medians = np.median(rng.choice(d, size=(RANGE_DRAWS, n)), axis=1)
        lo, hi = np.percentile(medians, [2.5, 97.5])
        return float(lo), float(hi)

    @property
    def consistent(self) -> bool:
        """The measured median lies within the predicted range of medians of n handshakes."""
        lo, hi = self.medians_range
        return bool(lo <= self.measured.median <= hi)


def _error(pred: float, meas: float) -> float:
    return (pred - meas) / meas if meas else math.nan


def _variant(config: Config) -> dict[str, Any]:
    net = json.loads(config.network_json) if config.network_json else {}
    return {k: v for k, v in net.items() if k not in LINK_KEYS}


def _is_reference(config: Config) -> bool:
    link = (json.loads(config.network_json).get("link") if config.network_json else None) or {}
    return not link or (link.get("preset") == REFERENCE_PRESET and set(link) <= {"preset", "name"})


def _key(config: Config) -> str:
    fields = (config.library, config.peer_library, config.suite_id, config.grp, config.credential, config.transport,
              config.direction, config.total_bytes, config.record_size, config.options, config.device_role)
    return json.dumps([*fields, _variant(config)], sort_keys=True, default=str)


def pairs(configs: dict[int, Config]) -> list[tuple[int, int]]:
    """(emulated configuration, its reference) for every emulated link with a reference."""
    net = {cid: c for cid, c in configs.items() if c.network_json}
    refs = {_key(c): cid for cid, c in net.items() if _is_reference(c)}
    return [(cid, refs[_key(c)]) for cid, c in net.items() if not _is_reference(c) and _key(c) in refs]


def has_validation(configs: dict[int, Config]) -> bool:
    return bool(pairs(configs))


def validate(sources: Sources, labels: dict[int, str], opts: Options,
             only: Sequence[int] | None = None, unpredicted: list[str] | None = None) -> list[Check]:
    """A check per emulated configuration that has a reference configuration. One whose
    reference has no repetition to predict from (a paced DTLS reference whose timers fired in
    every repetition: docs/networks.md "Paced peers") is left out, why appended to `unpredicted`
    (without it, the error is raised)."""
    ds = sources.ds
    opts = replace(opts, conversion=identity())  # the emulated runs ran on this host: its own processing, unscaled
    reps = ds.reps
    ok = reps.status == ok_status()
    retrans = (reps.flags & _retransmitted_flag()) != 0
    out = []
    for cid, ref in pairs(ds.configs):
        if only is not None and cid not in only:
            continue
        config = ds.configs[cid]
        link = from_plan(json.loads(config.network_json).get("link"), config.link_label or "loopback")
        try:
            predicted = predict(sources, ref, labels.get(cid, str(cid)), link, opts)
        except PredictError as e:
            if unpredicted is None:
                raise
            unpredicted.append(f"not validated: {link.label}: {e}")
            continue
        predicted.config_id = cid
        mine = reps.config_id == cid
        sel = np.flatnonzero(mine & ok)
        wall = reps.handshake_wall_ns[sel].astype(float)
        wire = [ds.link_traffic[r] for r in reps.id[sel].tolist() if r in ds.link_traffic]
        wire_bytes = np.array([t.d2p_bytes + t.p2d_bytes for t in wire], dtype=float)
        out.append(Check(
            cid, ref, labels.get(cid, str(cid)), link, max(link.d2p.loss, link.p2d.loss), predicted,
            summarize(wall, rng_for(opts.seed, "validate-duration", cid), mean_ci=False),
            summarize(wire_bytes, rng_for(opts.seed, "validate-bytes", cid), mean_ci=False) if len(wire_bytes) else None,
            int(np.count_nonzero(retrans[sel])), int(np.count_nonzero(mine & ~ok))))
    return out


def _retransmitted_flag() -> int:
    from tlsbench.analysis.vocab import vocab

    return vocab().flags["RETRANSMITTED"]


@dataclass(frozen=True)
class ErrorSummary:
    """Prediction errors of a group of checks (a protocol at a loss level)."""

    protocol: str
    loss_pct: float
    n: int
    duration_median: float  # of |error|, as fractions
    duration_worst: float
    bytes_median: float
    bytes_worst: float
    worst_label: str  # the check with the worst duration error
    consistent: int  # checks whose measured median lies within the predicted range of medians


def error_summaries(checks: Sequence[Check]) -> list[ErrorSummary]:
    groups: dict[tuple[str, float], list[Check]] = {}
    for c in checks:
        groups.setdefault((c.protocol, c.loss_pct), []).append(c)
    out = []
    for (protocol, loss), group in sorted(groups.items()):
        dur = np.array([abs(c.duration_error) for c in group])
        byt = np.array([abs(c.bytes_error) for c in group if math.isfinite(c.bytes_error)])
        worst = group[int(np.nanargmax(dur))] if np.isfinite(dur).any() else group[0]
        out.append(ErrorSummary(protocol, loss, len(group), float(np.nanmedian(dur)), float(np.nanmax(dur)),
                                float(np.median(byt)) if len(byt) else math.nan,
                                float(byt.max()) if len(byt) else math.nan,
                                worst.label if worst.link.label in worst.label else f"{worst.label} over {worst.link.label}",
                                sum(c.consistent for c in group)))
    return out
