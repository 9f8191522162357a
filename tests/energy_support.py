# SPDX-License-Identifier: Apache-2.0
"""Synthetic power captures of a real stored experiment, with a known energy per step.

The device model: idle current outside the repetitions, a base current inside them, and a
current per (peer, step) during each step window; the capture's clock is offset and drifts
against the trace's; the marker (D0 / in0 / marker) is high during each REPETITION span.
The truth is the exact integral of that model over each window in capture time."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.vocab import vocab


@dataclass(frozen=True)
class Model:
    """The synthetic device and instrument."""

    sample_rate_hz: float = 2e6
    offset_s: float = 0.0123        # capture time of the first repetition's START
    drift_ppm: float = 40.0         # capture clock runs this much faster than the trace's
    idle_ma: float = 5.0
    repetition_ma: float = 20.0
    voltage_v: float = 3.3
    noise_ma: float = 0.05          # Gaussian, seeded
    lead_s: float = 3e-3            # idle capture before the first and after the last repetition
    seed: int = 1

    @property
    def rate(self) -> float:
        return 1.0 + self.drift_ppm * 1e-6

    def step_ma(self, peer: int, label: int, group: int = -1) -> float:
        """Current in a step (group −1) or in an experiment's USER_GROUP window."""
        return 30.0 + (label % 17) * 3.0 + (peer % 3) * 7.0 + (group + 1) * 11.0


@dataclass
class Synthetic:
    """Samples (capture time, s; current, A; marker level) and the truth (J above idle)."""

    t: np.ndarray
    current: np.ndarray
    voltage: np.ndarray
    marker: np.ndarray
    steps: dict[tuple[int, int, int], float]     # (rep, peer, label) -> J
    groups: dict[tuple[int, int], float]         # experiments: (rep, group index) -> J
    step_seconds: dict[tuple[int, int, int], float]
    repetitions: dict[int, float]                # rep -> J over its REPETITION window
    model: Model


def read_marker_file(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The posix port's marker file ("t_ns level" per edge) as (rising, falling) trace ns."""
    rows = np.loadtxt(path, dtype=np.int64, ndmin=2)
    return rows[rows[:, 1] == 1, 0], rows[rows[:, 1] == 0, 0]


def run_marked(plan_text: str, root: Path, agent_dir: Path) -> tuple[Path, tuple[np.ndarray, np.ndarray]]:
    """Runs a plan with the posix port recording its marker edges; the experiment's folder
    and the edges (rising, falling)."""
    import pytest

    from tlsbench import plan
    from tlsbench.app.run import run_experiment

    loaded = plan.parse(plan_text, "marked.toml")
    marker_file = root / "marker.txt"
    mp = pytest.MonkeyPatch()
    mp.setenv("TLSBENCH_MARKER_FILE", str(marker_file))  # the posix port's marker: one line per edge
    try:
        run_experiment(loaded, root, agent_dir=agent_dir)
    finally:
        mp.undo()
    return root / loaded.plan.name, read_marker_file(marker_file)


def synthesize(ds: Dataset, model: Model = Model(), end_ns: int | None = None,
               marker_ns: tuple[np.ndarray, np.ndarray] | None = None) -> Synthetic:
    """A capture of the experiment; with `end_ns` it stops at that trace time. The marker is
    high between the agent's own marker edges when given, else over each REPETITION span."""
    sl, voc = ds.slices, vocab()
    reps = np.flatnonzero(sl.label == voc.role_label("repetition"))
    reps = reps[np.argsort(sl.ts[reps])]
    # Windows of their own current: handshake steps and experiments' USER_GROUP spans.
    steps = np.flatnonzero(((sl.category == voc.role_cat("step")) | (sl.label == voc.role_label("user_group")))
                           & ~sl.open)
    steps = steps[np.argsort(sl.ts[steps])]
    group = np.where(sl.label[steps] == voc.role_label("user_group"), ds.start_values(steps), -1)
    s_start, s_end = sl.ts[steps], sl.ts[steps] + sl.dur[steps]
    assert np.all(s_start[1:] >= s_end[:-1]), "steps overlap: the model needs one thread"
    r_start, r_end = sl.ts[reps], sl.ts[reps] + sl.dur[reps]
    ref = int(r_start[0])
    to_capture = lambda ns: model.offset_s + model.rate * (ns - ref) * 1e-9  # noqa: E731
    first, last = (min(r_start[0], marker_ns[0][0]), max(r_end[-1], marker_ns[1][-1])) if marker_ns else (r_start[0], r_end[-1])
    t0 = to_capture(first) - model.lead_s
    t1 = to_capture(last) + model.lead_s
    t1 = to_capture(end_ns) if end_ns is not None else t1
    t = t0 + np.arange(int((t1 - t0) * model.sample_rate_hz)) / model.sample_rate_hz
    x = ref + (t - model.offset_s) / model.rate * 1e9  # trace ns of each sample
    k = np.searchsorted(r_start, x, side="right") - 1
    in_rep = (k >= 0) & (x < r_end[np.maximum(k, 0)])
    m_start, m_end = marker_ns if marker_ns is not None else (r_start, r_end)
    k = np.searchsorted(m_start, x, side="right") - 1
    marker = (k >= 0) & (x < m_end[np.maximum(k, 0)])
    j = np.searchsorted(s_start, x, side="right") - 1
    in_step = (j >= 0) & (x < s_end[np.maximum(j, 0)])
    step_ma = np.array([model.step_ma(int(sl.peer[i]), int(sl.label[i]), int(g)) for i, g in zip(steps, group)])
    ma = np.where(in_rep, model.repetition_ma, model.idle_ma)
    ma[in_step] = step_ma[j[in_step]]
    rng = np.random.default_rng(model.seed)
    ma = ma + rng.normal(0.0, model.noise_ma, len(ma))
    v, scale = model.voltage_v, model.rate * 1e-9 * 1e-3  # ns -> capture s, mA -> A
    truth: dict[tuple[int, int, int], float] = {}
    seconds: dict[tuple[int, int, int], float] = {}
    groups: dict[tuple[int, int], float] = {}
    for i, g, m in zip(steps, group, step_ma):
        joules = v * (m - model.idle_ma) * sl.dur[i] * scale
        if g >= 0:
            groups[(int(sl.rep[i]), int(g))] = groups.get((int(sl.rep[i]), int(g)), 0.0) + joules
            continue
        key = (int(sl.rep[i]), int(sl.peer[i]), int(sl.label[i]))
        truth[key] = truth.get(key, 0.0) + joules
        seconds[key] = seconds.get(key, 0.0) + sl.dur[i] * model.rate * 1e-9
    rep_truth = {}
    for i in reps:
        inside = (sl.rep[steps] == sl.rep[i])
        extra = np.sum((step_ma[inside] - model.repetition_ma) * sl.dur[steps][inside])
        rep_truth[int(sl.rep[i])] = v * ((model.repetition_ma - model.idle_ma) * sl.dur[i] + extra) * scale
    return Synthetic(t, ma * 1e-3, v + rng.normal(0.0, 1e-3, len(t)), marker.astype(float), truth, groups,
                     seconds, rep_truth, model)


def _lines(header: str, columns: list[np.ndarray], formats: list[str]) -> str:
    rows = zip(*[np.char.mod(f, c) if f else c for c, f in zip(columns, formats)])
    return header + "\n" + "\n".join(",".join(r) for r in rows) + "\n"


def write_ppk2(s: Synthetic, path: Path, layout: str = "string") -> Path:
    """The Power Profiler app's export: time from 0 in ms, µA, D0 = marker. layout: 'string'
    (D0-D7), 'columns' (D0,...,D7) or 'both'."""
    ms, ua = (s.t - s.t[0]) * 1e3, s.current * 1e6
    d0 = np.where(s.marker > 0.5, "1", "0")
    header, cols, fmts = "Timestamp(ms),Current(uA)", [ms, ua], ["%.6f", "%.3f"]
    if layout in ("string", "both"):
        header += ",D0-D7"
        cols.append(np.char.add(d0, "0000000"))
        fmts.append("")
    if layout in ("columns", "both"):
        header += ",D0,D1,D2,D3,D4,D5,D6,D7"
        cols += [d0] + [np.full(len(d0), "0")] * 7
        fmts += [""] * 8
    path.write_text(_lines(header, cols, fmts))
    return path


def write_joulescope(s: Synthetic, path: Path) -> Path:
    """The Joulescope UI's CSV (s, A, V) with the IN0 input as a further column."""
    path.write_text(_lines("#time (s),current (A),voltage (V),in0", [s.t, s.current, s.voltage, s.marker],
                           ["%.9f", "%.6e", "%.5f", "%d"]))
    return path


def write_generic(s: Synthetic, path: Path) -> Path:
    """A generic CSV with units in the header names: µs, mA, mV, marker 0/1."""
    path.write_text(_lines("time_us,current_mA,voltage_mV,marker", [s.t * 1e6, s.current * 1e3, s.voltage * 1e3,
                                                                     s.marker], ["%.4f", "%.5f", "%.3f", "%d"]))
    return path
