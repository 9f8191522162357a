# SPDX-License-Identifier: Apache-2.0
"""Aligning a capture to the trace by the agent's marker pulses (docs/energy.md).

The agent raises its marker for every shipped repetition: rising edge just after the
REPETITION span's START, falling edge just before its STOP. Pulses in the capture are paired
with the stored repetitions in order of start time; their count must match, then one linear
map trace time -> capture time (offset and clock rate) is fitted by least squares over the
edges, and every edge must lie within a tolerance of it. A capture that does not match is
refused with what did not match, before anything is written.

An edge and its trace record are two moments apart: if the agent was preempted between them,
the edge is displaced by up to the time the repetition lost. Because the edges lie inside the
span, such a repetition shows it (wall time above CPU time: analysis calls it descheduled), so
an edge of it that sits too far from the fit is left out, if the repetition lost that much.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlsbench.analysis.models.energy import EnergyError

THRESHOLD = 0.5            # marker level between low (0) and high (1)
MAX_RATE_ERROR = 0.05      # clocks differing by more than 5% mean a wrong time unit, not drift
MIN_TOLERANCE_S = 50e-6    # an edge may sit this far from the fit (or 5 sample periods, if more)
TOLERANCE_SAMPLES = 5


@dataclass(frozen=True)
class Pulses:
    """Marker pulses of a capture, in capture seconds."""

    rise: np.ndarray
    fall: np.ndarray

    def __len__(self) -> int:
        return len(self.rise)


@dataclass(frozen=True)
class Windows:
    """The stored repetitions the marker framed, in order of start time (trace ns)."""

    rep: np.ndarray    # repetition ids
    start: np.ndarray  # REPETITION START
    stop: np.ndarray   # REPETITION STOP
    slack: np.ndarray  # ns an edge may be displaced beyond the tolerance: the time a descheduled repetition lost


@dataclass(frozen=True)
class Fit:
    """capture seconds = offset_s + rate · (trace ns − ref_ns) · 1e-9"""

    ref_ns: int
    offset_s: float
    rate: float            # capture seconds per trace second: 1 + clock drift
    residual_rms_s: float  # of the fitted edges
    residual_max_s: float
    edges: int             # edges fitted
    edges_skipped: int     # edges of descheduled repetitions left out: displaced by a preemption

    def to_capture(self, trace_ns: np.ndarray) -> np.ndarray:
        return self.offset_s + self.rate * (np.asarray(trace_ns, np.int64) - self.ref_ns) * 1e-9

    @property
    def drift_ppm(self) -> float:
        return (self.rate - 1.0) * 1e6


def _crossings(t: np.ndarray, level: np.ndarray, rising: bool) -> np.ndarray:
    """Times where the level crosses THRESHOLD, interpolated between the two samples."""
    high = level > THRESHOLD
    i = np.flatnonzero((~high[:-1] & high[1:]) if rising else (high[:-1] & ~high[1:]))
    a, b = level[i], level[i + 1]
    return t[i] + (THRESHOLD - a) / (b - a) * (t[i + 1] - t[i])


def pulses(t: np.ndarray, level: np.ndarray, channel: str, file_name: str) -> Pulses:
    """The pulses of a marker channel; the capture must start and end with the marker low."""
    known = np.isfinite(level)
    if not known.any():
        raise EnergyError(f"{file_name}: marker channel {channel} was not captured (no 0/1 samples)")
    t, level = t[known], level[known]
    if level[0] > THRESHOLD:
        raise EnergyError(f"{file_name}: the capture starts with marker {channel} high (at {t[0]:.6f} s): it begins "
                          "inside a repetition and does not cover the experiment; start capturing before the run")
    if level[-1] > THRESHOLD:
        raise EnergyError(f"{file_name}: the capture ends with marker {channel} high (at {t[-1]:.6f} s): it stops "
                          "inside a repetition and does not cover the experiment; stop capturing after the run")
    return Pulses(_crossings(t, level, True), _crossings(t, level, False))


def _count_problem(p: Pulses, w: Windows, t: np.ndarray, channel: str, file_name: str, missing: int) -> str:
    span = (w.stop[-1] - w.start[0]) * 1e-9 if len(w.rep) else 0.0
    text = (f"{file_name}: {len(p)} marker pulses on {channel}, but the experiment has {len(w.rep)} stored "
            f"repetitions (their markers span {span:.3f} s of trace time; the capture covers "
            f"{t[-1] - t[0]:.3f} s, {t[0]:.6f} s to {t[-1]:.6f} s")
    if len(p):
        text += f"; its pulses span {p.fall[-1] - p.rise[0]:.3f} s, {p.rise[0]:.6f} s to {p.fall[-1]:.6f} s"
    text += ")"
    if len(p) < len(w.rep) and t[-1] - t[0] < span * (1 - MAX_RATE_ERROR):
        text += ": the capture is shorter than the run and does not cover it"
    elif missing:
        text += f"; {missing} repetitions have no REPETITION span (agent died): their pulses cannot be placed"
    else:
        text += ("; is this the capture of this experiment, the right marker channel (--marker), and an agent "
                 "that keeps the marker low during warm-ups?")
    return text


def _least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    (offset, rate), *_ = np.linalg.lstsq(np.stack([np.ones_like(x), x], axis=1), y, rcond=None)
    return float(offset), float(rate)


def fit(p: Pulses, w: Windows, t: np.ndarray, channel: str, file_name: str,
        tolerance_s: float | None = None, missing: int = 0) -> Fit:
    """Least-squares map trace ns -> capture s over the edges; refuses a capture whose pulses
    do not match the repetitions in count or timing. An edge farther than the tolerance is
    left out (and the map refitted) only if its repetition was descheduled and the distance is
    within the time it lost; any other such edge refuses the capture."""
    if len(p) != len(w.rep) or not len(p):
        raise EnergyError(_count_problem(p, w, t, channel, file_name, missing))
    ref = int(w.start[0])
    x = np.r_[w.start - ref, w.stop - ref].astype(np.float64) * 1e-9
    y = np.r_[p.rise, p.fall]
    dt = float(np.median(np.diff(t)))
    tol = tolerance_s if tolerance_s is not None else max(MIN_TOLERANCE_S, TOLERANCE_SAMPLES * dt)
    slack = np.r_[w.slack, w.slack] * 1e-9
    use = np.ones(len(y), bool)
    while True:
        offset, rate = _least_squares(x[use], y[use])
        resid = np.abs(y - (offset + rate * x))
        worst = int(np.flatnonzero(use)[np.argmax(resid[use])])
        if resid[worst] <= tol or not slack[worst] or use.sum() <= 2:
            break
        use[worst] = False  # displaced by the preemption its repetition shows
    if not abs(rate - 1) <= MAX_RATE_ERROR:
        raise EnergyError(f"{file_name}: the capture's clock would run at {rate:.4g}× the trace's: the pulses do not "
                          "match the repetitions' spacing (or the time unit is wrong: --time-unit)")
    allowed = tol + np.where(use, 0.0, slack)
    worst = int(np.argmax(resid - allowed))
    if resid[worst] > allowed[worst]:
        k = worst % len(p)
        edge = "rising" if worst < len(p) else "falling"
        raise EnergyError(f"{file_name}: marker pulse {k + 1} of {len(p)} ({edge} edge at {y[worst]:.6f} s) is "
                          f"{resid[worst] * 1e6:.1f} µs away from where the trace puts repetition {int(w.rep[k])} "
                          f"after the best linear fit (tolerance {allowed[worst] * 1e6:.1f} µs, --max-residual-us): "
                          "the pulses' spacing does not match the repetitions'; is this the capture of this experiment?")
    return Fit(ref, offset, rate, float(np.sqrt(np.mean(resid[use] ** 2))), float(resid[use].max()),
               int(use.sum()), int((~use).sum()))
