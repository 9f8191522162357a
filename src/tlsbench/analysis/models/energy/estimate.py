# SPDX-License-Identifier: Apache-2.0
"""Estimated energy: a power profile's figures times the measured times (docs/energy.md).

For every step of every peer and repetition, with the analysis' own decomposition
(processing = duration − nested I/O − tracer overhead, docs/methodology.md):

    E = (P_cpu − P_idle) · s · processing + (P_tx − P_idle) · t_tx + (P_rx − P_idle) · t_rx

t_tx is the time in the step's top-level SEND slices, t_rx in its other I/O slices (RECV,
WAIT), each tracer-corrected; s is the profile's time scale (device time / host time).
Energies are above idle, like measured ones (whose idle baseline is subtracted).

What a stored value is worth in the part's seconds is the one conversion's business
(models/conversion.py): a device's counts through the board's cycle model, a host's times
only with an explicit scale.
"""
from __future__ import annotations

import numpy as np

from tlsbench.analysis.derive.measures import METRIC, NO_LABEL, NO_PEER, MeasureTable, SliceCosts
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.derive.slices import Slices
from tlsbench.analysis.models.conversion import Conversion
from tlsbench.analysis.vocab import Vocab, vocab
from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.analysis.models.energy.table import EnergyTable, Rows, group_sum


def nearest_ancestor(parent: np.ndarray, idx: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each slice of idx: its nearest ancestor with wanted True, −1 if none."""
    out = np.full(len(idx), -1, dtype=np.int64)
    pos, cur = np.arange(len(idx)), parent[idx]
    while len(pos):
        live = cur >= 0
        pos, cur = pos[live], cur[live]
        hit = wanted[cur]
        out[pos[hit]] = cur[hit]
        pos, cur = pos[~hit], parent[cur[~hit]]
    return out


class _Io:
    """Top-level I/O slices (not nested in another I/O slice), split into TX and RX time."""

    def __init__(self, slices: Slices, costs: SliceCosts, voc: Vocab):
        self.idx = np.flatnonzero(costs.top_io & ~slices.open & ~slices.instant)
        true = slices.dur[self.idx] - costs.overhead[self.idx]
        is_tx = slices.label[self.idx] == voc.role_label("send")
        self.tx = np.where(is_tx, true, 0.0)  # ns
        self.rx = np.where(is_tx, 0.0, true)  # RECV, and WAIT between library calls


def cpu_joules_per_unit(op: OperatingPoint, conv: Conversion) -> float:
    """J per unit of processing above idle: the part's seconds per unit (the conversion) × power."""
    return (op.cpu_w - op.idle_w) * conv.processing_s


def _weights(op: OperatingPoint, conv: Conversion) -> tuple[float, float, float]:
    """J per unit of processing, TX and RX time, above idle."""
    return cpu_joules_per_unit(op, conv), (op.tx_w - op.idle_w) * conv.io_s, (op.rx_w - op.idle_w) * conv.io_s


def _step_cpu_j(slices: Slices, costs: SliceCosts, steps: np.ndarray, config: np.ndarray, op: OperatingPoint,
                conv: Conversion) -> np.ndarray:
    """CPU energy above idle of each step's processing: its part seconds from the one
    conversion, a step's own cycles (model) where its counts were stored."""
    seconds = conv.step_seconds(config[steps], slices.peer[steps], slices.label[steps])
    return (op.cpu_w - op.idle_w) * seconds * costs.processing[steps]


def _steps(slices: Slices, costs: SliceCosts, io: _Io, voc: Vocab, op: OperatingPoint, rows: Rows,
           conv: Conversion, config: np.ndarray) -> None:
    """Per (repetition, peer, step): CPU energy of its processing plus radio energy of its I/O."""
    _, tx_w, rx_w = _weights(op, conv)
    is_step = (slices.category == voc.role_cat("step")) & ~slices.open
    steps = np.flatnonzero(is_step)
    owner = nearest_ancestor(slices.parent, io.idx, is_step)
    inside = owner >= 0
    own = owner[inside]
    keys = [np.r_[slices.rep[steps], slices.rep[own]], np.r_[slices.peer[steps], slices.peer[own]],
            np.r_[slices.label[steps], slices.label[own]]]
    energy = np.r_[_step_cpu_j(slices, costs, steps, config, op, conv), tx_w * io.tx[inside] + rx_w * io.rx[inside]]
    (rep, peer, label), total = group_sum(keys, energy)
    rows.add("step", rep, peer, label, total)
    (rep, peer), per_peer = group_sum([rep, peer], total)
    rows.add("handshake", rep, peer, NO_LABEL, per_peer)


def _handshake_window(slices: Slices, costs: SliceCosts, io: _Io, voc: Vocab, op: OperatingPoint, rows: Rows,
                      conv: Conversion, config: np.ndarray) -> None:
    """The HANDSHAKE phase: both peers' step processing plus every I/O slice inside the window
    (WAIT between library calls included)."""
    _, tx_w, rx_w = _weights(op, conv)
    hs = np.flatnonzero((slices.label == voc.role_label("handshake")) & ~slices.open)
    reps, first = np.unique(slices.rep[hs], return_index=True)
    hs = hs[first]
    if not len(hs):
        return
    w = np.clip(np.searchsorted(reps, slices.rep[io.idx]), 0, len(reps) - 1)
    start, end = slices.ts[hs][w], slices.ts[hs][w] + slices.dur[hs][w]
    t0, t1 = slices.ts[io.idx], slices.ts[io.idx] + slices.dur[io.idx]
    inside = (reps[w] == slices.rep[io.idx]) & (t0 >= start) & (t1 <= end)
    steps = np.flatnonzero((slices.category == voc.role_cat("step")) & ~slices.open)
    keys = [np.r_[slices.rep[steps], slices.rep[io.idx][inside]]]
    energy = np.r_[_step_cpu_j(slices, costs, steps, config, op, conv), tx_w * io.tx[inside] + rx_w * io.rx[inside]]
    (rep,), total = group_sum(keys, energy)
    has = np.isin(rep, reps)
    rows.add("handshake_window", rep[has], NO_PEER, NO_LABEL, total[has])


def _records(mt: MeasureTable, op: OperatingPoint, rows: Rows, conv: Conversion) -> None:
    """Per logical record: CPU energy of its processing (incl. post/pre work) plus radio energy
    of the rest of its total time (its I/O and the waiting between its calls)."""
    cpu_w, tx_w, rx_w = _weights(op, conv)
    for kind, processing, total, radio_w in (("record_write", "write_processing_post", "write_total", tx_w),
                                              ("record_read", "read_processing_pre", "read_total", rx_w)):
        p, t = mt.metric == METRIC[processing], mt.metric == METRIC[total]
        if not np.any(p):
            continue
        # measures() adds a record's latency types together: the rows line up one to one.
        if not (np.array_equal(mt.rep[p], mt.rep[t]) and np.array_equal(mt.peer[p], mt.peer[t])):
            raise RuntimeError(f"{processing} and {total} rows do not line up: update tlsbench.analysis.models.energy.estimate")
        io_ns = np.maximum(mt.value[t] - mt.value[p], 0.0)
        rows.add(kind, mt.rep[p], mt.peer[p], mt.label[p], cpu_w * mt.value[p] + radio_w * io_ns)


def estimate(analysis: Analysis, op: OperatingPoint, conv: Conversion) -> EnergyTable:
    """Estimated energies of every repetition of an analysed experiment, in J (its values
    made the part's seconds by `conv`)."""
    voc = vocab()
    slices, costs = analysis.ds.slices, analysis.costs
    rows = Rows(op.label)
    io = _Io(slices, costs, voc)
    config = analysis.ds.reps.config_id[analysis.ds.rep_index(slices.rep)]  # each slice's configuration
    _steps(slices, costs, io, voc, op, rows, conv, config)
    _handshake_window(slices, costs, io, voc, op, rows, conv, config)
    _records(analysis.ds.table, op, rows, conv)  # every row (analysis.table keeps a few measures)
    return rows.table()
