# SPDX-License-Identifier: Apache-2.0
"""Measured energy: a capture aligned to the trace, integrated per step, phase and group window.

Power is V·(I − I_idle): the idle baseline I_idle is the median current outside the marked
repetitions (or given), V the capture's voltage per sample (or given). Each window of the
trace (every closed step and phase slice) is mapped to capture time by the marker fit and
integrated with trapezoids over the samples, the two ends interpolated linearly at the
mapped boundaries. Windows of one (repetition, peer, label, group) are summed (a step
entered twice is one step, as for processing times). An experiment's repetitions (crypto
primitives, user experiments) have a MEASURED_BLOCK window and one per USER_GROUP, told
apart by the group's index; `group` is NO_GROUP for every other window.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.vocab import vocab
from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.align import Fit, Windows, fit, pulses
from tlsbench.analysis.models.energy.capture import Capture, Units
from tlsbench.analysis.models.energy.table import group_sum

GUARD_SAMPLES = 2  # samples next to a marker edge are neither idle nor measured baseline
NO_GROUP = -1       # the `group` of a window that is not a USER_GROUP


@dataclass(frozen=True)
class ImportOptions:
    """What the user chose for one import; stored with the capture (same file + same options
    = the same import)."""

    format: str = "auto"
    marker: str | None = None          # digital channel (default: units.DEFAULT_MARKER of the format)
    voltage_v: float | None = None     # constant supply voltage; overrides a voltage column
    baseline_a: float | None = None    # idle current; default: median outside the marked repetitions
    units: Units = field(default_factory=Units)
    max_residual_s: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass(frozen=True)
class WindowEnergy:
    """Per (repetition, peer, label, group): energy and time of its windows."""

    rep: np.ndarray
    peer: np.ndarray       # peer code
    label: np.ndarray      # step, phase or group label id
    group: np.ndarray      # a USER_GROUP's index in its experiment's groups, else NO_GROUP
    energy_j: np.ndarray
    duration_ns: np.ndarray
    occurrences: np.ndarray


@dataclass(frozen=True)
class Measurement:
    """One capture integrated against one experiment."""

    capture: Capture
    channel: str
    fit: Fit
    baseline_a: float
    baseline_source: str   # "median outside the marked repetitions" or "option"
    voltage_source: str    # "column" or "option"
    voltage_v: float       # median voltage used
    windows: WindowEnergy


def repetition_windows(ds: Dataset) -> tuple[Windows, int]:
    """The REPETITION spans of the stored repetitions in order of start time, and how many
    stored repetitions have none (an agent died inside them). A descheduled repetition's edges
    may sit as far off as the time it lost (wall − CPU time)."""
    slices, voc = ds.slices, vocab()
    idx = np.flatnonzero((slices.label == voc.role_label("repetition")) & ~slices.open & (slices.peer == voc.peers["none"]))
    idx = idx[np.argsort(slices.ts[idx], kind="stable")]
    descheduled = ds.descheduled_mask()[ds.rep_index(slices.rep[idx])]
    lost = np.where(descheduled & (slices.cpu[idx] >= 0), slices.dur[idx] - slices.cpu[idx], 0)
    windows = Windows(slices.rep[idx], slices.ts[idx], slices.ts[idx] + slices.dur[idx], lost)
    return windows, len(ds.reps) - len(np.unique(windows.rep))


def _power(c: Capture, opts: ImportOptions) -> tuple[np.ndarray, str]:
    if opts.voltage_v is not None:
        return np.full(len(c.t), opts.voltage_v), "option"
    if c.voltage is None:
        raise EnergyError(f"{c.file_name}: the capture has no voltage ({c.format} exports carry none): pass --voltage, "
                          "the supply voltage the device ran at")
    return c.voltage, "column"


def _baseline(c: Capture, marked: tuple[np.ndarray, np.ndarray], opts: ImportOptions) -> tuple[float, str]:
    if opts.baseline_a is not None:
        return opts.baseline_a, "option"
    guard = GUARD_SAMPLES * c.sample_period
    lo, hi = marked[0] - guard, marked[1] + guard
    k = np.searchsorted(lo, c.t, side="right") - 1
    inside = (k >= 0) & (c.t <= hi[np.maximum(k, 0)])
    if inside.all():
        raise EnergyError(f"{c.file_name}: no samples outside the marked repetitions to take the idle baseline from: "
                          "capture some idle time before or after the run, or pass --baseline-ma")
    return float(np.median(c.current[~inside])), "median outside the marked repetitions"


def integrals(t: np.ndarray, g: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """∫ g over [a, b] for each pair, g linear between samples (trapezoids; the partial
    intervals at both ends are interpolated)."""
    cum = np.r_[0.0, np.cumsum((g[1:] + g[:-1]) * 0.5 * np.diff(t))]

    def at(x: np.ndarray) -> np.ndarray:
        k = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 2)
        dx = x - t[k]
        gx = g[k] + (g[k + 1] - g[k]) * dx / (t[k + 1] - t[k])
        return cum[k] + dx * (g[k] + gx) * 0.5

    return at(b) - at(a)


def _window_energy(ds: Dataset, c: Capture, f: Fit, power: np.ndarray) -> WindowEnergy:
    slices, voc = ds.slices, vocab()
    cats = np.array([voc.role_cat("step"), voc.role_cat("phase"), voc.role_cat("group")])
    idx = np.flatnonzero(np.isin(slices.category, cats) & ~slices.open & ~slices.instant)
    a, b = f.to_capture(slices.ts[idx]), f.to_capture(slices.ts[idx] + slices.dur[idx])
    if len(idx) and (a.min() < c.t[0] or b.max() > c.t[-1]):
        raise EnergyError(f"{c.file_name}: the trace's spans map to {a.min():.6f} s .. {b.max():.6f} s, outside the "
                          f"capture ({c.t[0]:.6f} s .. {c.t[-1]:.6f} s): it does not cover the experiment")
    energy = integrals(c.t, power, a, b)
    group = np.where(slices.label[idx] == voc.role_label("user_group"), ds.start_values(idx), NO_GROUP)
    keys = [slices.rep[idx], slices.peer[idx], slices.label[idx], group]
    (rep, peer, label, group), total = group_sum(keys, energy)
    _, duration = group_sum(keys, slices.dur[idx].astype(np.float64))
    _, count = group_sum(keys, np.ones(len(idx)))
    return WindowEnergy(rep, peer, label, group, total, duration.astype(np.int64), count.astype(np.int64))


def measure(ds: Dataset, c: Capture, opts: ImportOptions) -> Measurement:
    """Aligns a capture to an experiment and integrates every step and phase window; raises
    EnergyError (with what did not match) when the capture is not this experiment's."""
    windows, missing = repetition_windows(ds)
    p = pulses(c.t, c.marker(), c.channel, c.file_name)
    f = fit(p, windows, c.t, c.channel, c.file_name, opts.max_residual_s, missing)
    volts, voltage_source = _power(c, opts)
    base, base_source = _baseline(c, (p.rise, p.fall), opts)
    power = volts * (c.current - base)
    return Measurement(c, c.channel, f, base, base_source, voltage_source, float(np.median(volts)),
                       _window_energy(ds, c, f, power))
