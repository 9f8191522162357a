# SPDX-License-Identifier: Apache-2.0
"""The one conversion of a stored value into a part's time (docs/cycles.md): the report,
`tlsbench energy`, `tlsbench predict` and every export get their device seconds from here.

    a device's cycles            cycles / f                                   exact
    a device's step, its class   cycles (model) of the step's own counts / f  an estimate, with the model's
    counts stored (plugin)       (per step: models/steps.py)                  band
    a device's instructions      instructions x CPI(board) / f (cycle model)  an estimate, with its band
                                 instructions x CPI / f (a profile's stated   an estimate, no band
                                 assumption, for a profile that is no board)
    a host's ns, host profile    as measured                                  the host's own time
    a host's ns, device profile  x an explicit scale (--device-scale, or a    an estimate, the scale's
                                 profile's measured [time_scale])             basis said
    a host's ns, device profile, no scale: refused (HostRunRefused), never silently the device's.

`basis` says which was used; every output prints it."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np

from tlsbench.analysis.models.cycles import Band, board_cpi, fitted
from tlsbench.analysis.models.steps import HANDSHAKE, StepTimes, step_times
from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.profiles import OperatingPoint, board_point, resolve
from tlsbench.core.boards import boards, stream_of
from tlsbench.analysis.units import Unit

NS = 1e-9


class HostRunRefused(EnergyError):
    """A device's profile on a host run without a scale: the host's time is not the device's."""


@dataclass(frozen=True)
class Conversion:
    """Seconds of the part per unit of a stored value (processing and I/O), and how."""

    processing_s: float  # per unit of processing
    io_s: float  # per unit of I/O (a host's I/O time is wall time: never scaled)
    basis: str  # what was used, e.g. "cycles (model) of stm32f411: instructions × CPI 1.77 ÷ 100 MHz"
    band: Band | None = None  # the model's measured error; None: exact or unknown (see `estimate`)
    estimate: bool = False  # a model or an assumption stands between the value and the time
    counted: bool = False  # the values are a device's counts: both peers ran on the part
    # Steps whose class counts were stored (the cycle model's plugin): their own cycles (model),
    # preferred over the CPI route above, with the same band (of_dataset says why).
    steps: StepTimes | None = None
    step_basis: str = ""

    def step_s(self, config_id: int, peer: int, label: int = HANDSHAKE) -> float:
        """Part seconds per unit of a step's processing (label HANDSHAKE: a peer's whole
        handshake): from its own counts where they were stored, else processing_s."""
        return self.steps.seconds.get((config_id, peer, label), self.processing_s) if self.steps else self.processing_s

    def step_seconds(self, config_ids: np.ndarray, peers: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """step_s of many steps at once (arrays aligned), as an array."""
        if self.steps is None or not len(config_ids):
            return np.full(len(config_ids), self.processing_s)
        keys = np.stack([config_ids, peers, labels], axis=1).astype(np.int64)
        unique, back = np.unique(keys, axis=0, return_inverse=True)
        return np.array([self.step_s(*map(int, k)) for k in unique])[back.reshape(-1)]

    def ms(self, value: float) -> float:
        return value * self.processing_s * 1e3

    def as_dict(self) -> dict:
        """What every export and JSON output carries: the basis and the band (and the per-step
        basis where steps had their own counts)."""
        per_step = None if self.steps is None else {
            "basis": self.step_basis, "steps": self.steps.spans, "of_steps": self.steps.steps,
            "band_median_abs_error": self.band.median if self.band else None,
            "band_worst_abs_error": self.band.worst if self.band else None}
        return {"basis": self.basis, "estimate": self.estimate, "seconds_per_unit": self.processing_s,
                "band_median_abs_error": self.band.median if self.band else None,
                "band_worst_abs_error": self.band.worst if self.band else None, "per_step": per_step}

    def band_text(self) -> str:
        return (f"model error {self.band.text()}" if self.band is not None else
                "error not measured" if self.estimate else "exact")

    @property
    def text(self) -> str:
        """The basis as every output prints it first: the per-step one, then the CPI route."""
        return f"{self.step_basis}; the rest: {self.basis}" if self.steps else self.basis


def identity() -> Conversion:
    """A host run read as the host's own time (no profile)."""
    return Conversion(NS, NS, "host time (this machine's, as measured)")


def _counted(unit: Unit, op: OperatingPoint, cpu: str | None) -> Conversion:
    f = op.frequency_mhz * 1e6
    stream = stream_of(cpu) if cpu else None
    if op.board is not None and cpu and stream is None:
        raise EnergyError(f"the counts are of {cpu} code, which no core of spec/cores.toml runs: declare the core "
                          "(its instruction stream and timing table) to convert them")
    if op.board is not None and stream is not None and stream != op.board.core.stream:
        raise EnergyError(f"the counts are of {cpu} code ({stream}); {op.board.name}'s {op.board.core.name} "
                          f"runs {op.board.core.stream} code, another instruction stream: run the firmware built for "
                          "that core, or choose a board with the same kind of core")
    if unit.noun == "cycles":
        return Conversion(1 / f, 1 / f, f"cycles ÷ {op.frequency_mhz:g} MHz ({op.name})", counted=True)
    if op.board is not None:
        cpi = board_cpi(op.board)
        # The band is measured on the calibrated cores' published rows, widened by how far the CPI
        # moves with the code (the run's code is not the reference workload); a core none
        # calibrates (no comparable published figure) has a timing table unchecked, its error unknown.
        calibrated = op.board.core.name in fitted().calibrated_on
        return Conversion(cpi / f, cpi / f, f"cycles (model) of {op.board.name}: {unit.noun} × CPI {cpi:.2f} "
                          f"÷ {op.frequency_mhz:g} MHz" + ("" if calibrated else f" (no published figure "
                          f"calibrates or validates {op.board.core.name})"),
                          fitted().run_band if calibrated else None, True, True)
    if op.cpi is not None:
        return Conversion(op.cpi / f, op.cpi / f, f"{unit.noun} × CPI {op.cpi:g} (profile {op.profile.name}'s "
                          f"assumption, not the cycle model) ÷ {op.frequency_mhz:g} MHz", None, True, True)
    raise EnergyError(f"profile {op.profile.name} is no declared board and states no [cpi]: a count of {unit.name} "
                      "needs a core to become time; use a board (spec/boards.toml, e.g. --profile nrf52840)")


def conversion(unit: Unit, op: OperatingPoint | None, device_scale: float | None = None,
               run: str = "this experiment", cpu: str | None = None) -> Conversion:
    """How `run`'s values (in `unit`) become time on `op`'s part: the one conversion. `cpu`:
    the core a device's counts are of (HELLO device.cpu)."""
    if not unit.is_time:
        if op is None:
            raise EnergyError(f"{run} counted {unit.name} on an emulated core: a count becomes time only on a "
                              "part; name a board (--profile nrf52840, or `board = ...` in the plan's [device])")
        return _counted(unit, op, cpu)
    if device_scale is not None:  # predict's --device-scale without a profile: durations only
        return Conversion(device_scale * NS, NS, f"host time × {device_scale:g} (--device-scale, given)", None, True)
    if op is None:
        return identity()
    if op.scale_measured:
        how = op.profile.time_scale.basis or "the profile's [time_scale]"
        return Conversion(op.time_scale * NS, NS, f"host time × {op.time_scale:g} ({how})", None, True)
    raise HostRunRefused(f"{run} ran on this host: its times are this machine's, not {op.profile.name}'s; run it on "
                         f"the device ([device] in the plan, docs/porting.md), or give an explicit scale "
                         "(--device-scale S: device ns per host ns, e.g. measured by the same handshake on both)")


def of_dataset(ds, op: OperatingPoint | None, device_scale: float | None = None) -> Conversion:  # ds: Dataset
    """The one conversion of a stored experiment's values on `op`'s part: conversion(), and
    where the run stored class counts of its steps (plan [device] cycles) on that board, each
    step's own cycles (model) preferred (models/steps.py)."""
    conv = conversion(ds.unit, op, device_scale, ds.name, counted_cpu(ds))
    if op is None or op.board is None or not conv.counted or ds.unit.noun == "cycles":
        return conv
    times = step_times(ds, op.board, op.frequency_mhz * 1e6)
    if times is None:
        return conv
    basis = (f"cycles (model) of {op.board.name}, per step: each step's own instruction classes ÷ "
             f"{op.frequency_mhz:g} MHz ({times.spans} of {times.steps} step spans)")
    # The band stays the CPI route's (the model's error widened by the CPI's spread over code): each
    # step's own classes replace the reference CPI, but the timing tables are validated on p256-m
    # code only, so how far they are off on the rest of a handshake is not measured yet.
    return replace(conv, steps=times, step_basis=basis)


def counted_cpu(ds) -> str | None:  # ds: Dataset
    """The core a device run's counts are of (its firmware's HELLO device.cpu)."""
    return next((str((a["hello"].get("device") or {}).get("cpu")) for a in ds.agents.values() if a.get("target")),
                None)


def planned_board(ds) -> str | None:  # ds: Dataset
    """The board a device plan names ([device] board): its counts' part by default."""
    plan = json.loads(ds.experiment.get("plan_json") or "{}")
    return (plan.get("device") or {}).get("board")


def point_for(ds, ref: str | OperatingPoint | None) -> OperatingPoint | None:  # ds: Dataset
    """The operating point asked for (`--profile`), else the plan's board on a device run."""
    if isinstance(ref, OperatingPoint):
        return ref
    if ref:
        return resolve(ref)
    board = planned_board(ds) if not ds.unit.is_time else None
    return board_point(boards()[board]) if board in boards() else None
