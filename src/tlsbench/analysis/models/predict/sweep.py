# SPDX-License-Identifier: Apache-2.0
"""Crossovers: predicted duration and energy of every configuration against one link
parameter (channel rate, round-trip time or loss), and the values where two configurations
swap places, e.g. the channel rate below which the bigger certificate (RSA) costs more air
time than its cheaper verification saves (against ECDSA)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from tlsbench.analysis.stats.stats import Summary
from tlsbench.analysis.models.predict import PredictError
from tlsbench.analysis.models.predict.links import Link
from tlsbench.analysis.models.predict.model import Options, Prediction, predict, stack_for
from tlsbench.analysis.models.predict.script import Script, Sources
from tlsbench.analysis.models.predict.sim import Stack

SEVERAL = "several"
# What a configuration is, in the respects a crossover may be about (suite and credential
# together: an RSA suite goes with an RSA certificate).
RESPECTS = {"library": ("library", "peer_library"), "suite/credential": ("suite_name", "credential"),
            "group": ("grp",), "transport": ("transport",), "options": ("options",),
            "payload": ("direction", "total_bytes", "record_size"), "device role": ("device_role",)}
SWEEP_SCRIPTS = 20  # repetitions per configuration and point (evenly spread)
SWEEP_DRAWS = 80  # Monte Carlo draws per point on a lossy link


@dataclass(frozen=True)
class Parameter:
    """A swept link parameter: its axis and how a value changes the link."""

    name: str
    axis: str  # the x axis label
    unit: str
    log: bool
    default: tuple[float, float, int]  # from, to, points
    apply: Callable[[Link, float], Link]
    most: float = math.inf  # a percentage: 100

    def grid(self, lo: float | None = None, hi: float | None = None, points: int | None = None) -> np.ndarray:
        a, b, n = self.default
        a, b, n = lo if lo is not None else a, hi if hi is not None else b, points or n
        if max(a, b) > self.most:
            raise PredictError(f"a {self.name} sweep's range is in {self.unit}: at most {self.most:g}")
        if self.log:
            if a <= 0:
                raise PredictError(f"a {self.name} sweep is logarithmic: its range must start above 0")
            return np.geomspace(a, b, n)
        return np.linspace(a, b, n)


def _rate(link: Link, x: float) -> Link:
    return link.with_both(rate=float(x))


def _rtt(link: Link, x: float) -> Link:
    return link.with_both(delay=float(x) / 2)


def _loss(link: Link, x: float) -> Link:
    return link.with_both(loss=float(x))


PARAMETERS = {
    "rate": Parameter("rate", "channel rate, both directions (bit/s)", "bit/s", True, (1e3, 1e7, 25), _rate),
    "rtt": Parameter("rtt", "round-trip time (ms), half each way", "ms", False, (0.0, 2000.0, 21), _rtt),
    "loss": Parameter("loss", "loss per packet or frame, both directions (%)", "%", False, (0.0, 20.0, 21), _loss,
                      100.0),
}


@dataclass(frozen=True)
class Crossover:
    """Where configurations a and b swap places on the swept parameter."""

    metric: str  # "duration" or "energy"
    a: int  # config ids
    b: int
    x: float  # interpolated between two grid points
    below: int  # the config that is better (smaller) below x
    above: int
    first_order: float  # rate sweeps: Δ bits on the wire / Δ processing of both peers (NaN otherwise)
    differs: str = ""  # what tells the two apart ("suite/credential", "transport", ...; "several")

    @property
    def comparable(self) -> bool:
        """The two differ in one respect only: the crossover answers a question about it."""
        return self.differs != SEVERAL


@dataclass
class Sweep:
    """Predictions of several configurations over a grid of one parameter."""

    parameter: Parameter
    base: Link
    xs: np.ndarray
    labels: dict[int, str]
    points: dict[int, list[Prediction]]  # config id -> one prediction per x
    crossovers: list[Crossover]

    def medians(self, cid: int, metric: str) -> np.ndarray:
        out = []
        for p in self.points[cid]:
            s: Summary | None = p.duration if metric == "duration" else p.energy
            out.append(s.median if s is not None and s.n else math.nan)
        return np.array(out)


def _cross_at(xs: np.ndarray, d: np.ndarray, i: int, log: bool) -> float:
    """x where d crosses 0 between points i and i+1 (linear in x, or in log x)."""
    x0, x1 = (np.log(xs[i]), np.log(xs[i + 1])) if log else (xs[i], xs[i + 1])
    x = x0 + (x1 - x0) * d[i] / (d[i] - d[i + 1])
    return float(np.exp(x) if log else x)


def find_crossovers(xs: np.ndarray, series: dict[int, np.ndarray], metric: str, log: bool,
                    first_order: Callable[[int, int], float]) -> list[Crossover]:
    """Every sign change of the difference of two series (points where either is unknown
    are skipped)."""
    out = []
    for a, b in itertools.combinations(sorted(series), 2):
        d = series[a] - series[b]
        ok = np.flatnonzero(np.isfinite(d) & (d != 0))
        for i, j in zip(ok[:-1], ok[1:]):
            if np.sign(d[i]) != np.sign(d[j]):
                sub = np.array([xs[i], xs[j]])
                x = _cross_at(sub, np.array([d[i], d[j]]), 0, log)
                below, above = (a, b) if d[i] < 0 else (b, a)
                out.append(Crossover(metric, a, b, x, below, above, first_order(a, b)))
    return out


def run_sweep(sources: Sources, configs: dict[int, str], base: Link, parameter: str, opts: Options,
              xs: Sequence[float] | None = None) -> Sweep:
    """Predictions of `configs` (id -> label) at every grid point of `parameter` around `base`."""
    param = PARAMETERS[parameter]
    grid = np.asarray(xs, dtype=float) if xs is not None else param.grid()
    light = replace(opts, draws=min(opts.draws, SWEEP_DRAWS))
    scripts: dict[int, list[Script]] = {cid: sources.scripts(cid, SWEEP_SCRIPTS) for cid in configs}
    points = {cid: [predict(sources, cid, label, param.apply(base, x), light, scripts[cid]) for x in grid]
              for cid, label in configs.items()}

    def first_order(a: int, b: int) -> float:
        if parameter != "rate":
            return math.nan
        pa, pb = points[a][-1], points[b][-1]  # the fastest point: no spurious retransmission
        bits = 8 * (pa.bytes.median - pb.bytes.median)
        work = (_both_processing(scripts[b], stack_for(sources.ds, sources.ds.configs[b], pb.link, light), pb.device)
                - _both_processing(scripts[a], stack_for(sources.ds, sources.ds.configs[a], pa.link, light), pa.device))
        return bits / (work * 1e-9) if work and bits / work > 0 else math.nan

    sweep = Sweep(param, base, grid, dict(configs), points, [])
    for metric in ("duration", "energy"):
        series = {cid: sweep.medians(cid, metric) for cid in configs}
        if any(np.isfinite(v).any() for v in series.values()):
            sweep.crossovers += find_crossovers(grid, series, metric, param.log, first_order)
    return sweep


def _both_processing(scripts: Sequence[Script], stack: Stack, device: str) -> float:
    """Median processing of both peers (the device's scaled): what a faster link cannot hide."""
    return float(np.median([s.peer(device).processing_ns * stack.device_scale
                            + s.peer("server" if device == "client" else "client").processing_ns * stack.peer_scale
                            for s in scripts]))


def mark_comparable(sweep: Sweep, configs: Mapping[int, Any]) -> None:
    """Names what tells each crossover's two configurations apart."""
    def differs(a: Any, b: Any) -> str:
        names = [name for name, fields in RESPECTS.items()
                 if any(getattr(a, f, None) != getattr(b, f, None) for f in fields)]
        return names[0] if len(names) == 1 else SEVERAL

    sweep.crossovers = [replace(c, differs=differs(configs[c.a], configs[c.b])) for c in sweep.crossovers]
