# SPDX-License-Identifier: Apache-2.0
"""Device power profiles: TOML files validated with pydantic (format: docs/energy.md).

A profile gives a device's CPU active power at one or more frequencies, its radio TX/RX
power, its idle power (each as a current at the supply voltage or as a power, each citing
where the figure comes from) and a time scale (device time / host time). A reference
`NAME` picks the profile's default frequency, `NAME-<F>mhz` another of its frequencies;
NAME is a built-in (src/tlsbench/energy/profiles/*.toml) or a path to a TOML file.

Errors name the field (dotted path), the bad value and what is allowed."""
from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tlsbench.core.boards import Board, boards
from tlsbench.core.validation import problem
from tlsbench.analysis.models.energy import EnergyError

PROFILE_DIR = "profiles"  # package data of tlsbench.analysis.models.energy
NAME_PATTERN = r"^[a-z0-9][a-z0-9_.]*(-[a-z0-9_.]+)*$"
ASSUMPTION = "assumption"  # a figure's source when it is not taken from a document
_FREQUENCY_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<mhz>\d+(?:\.\d+)?)mhz$", re.IGNORECASE)

Positive = Annotated[float, Field(gt=0)]


class ProfileError(EnergyError):
    """A profile is invalid or cannot be found; `problems` holds one line per mistake."""

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"power profile {source} is invalid:\n" + "\n".join(f"  - {p}" for p in self.problems)
                         if len(self.problems) > 1 or source else self.problems[0])


class Strict(BaseModel):
    # strict: TOML has real types, so "3.3" for a number is a mistake, not a conversion.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Source(Strict):
    """A document the profile's figures come from."""

    id: Annotated[str, Field(min_length=1)]        # short key the figures cite (`source = "..."`)
    document: Annotated[str, Field(min_length=1)]  # issuer, title, revision
    section: Annotated[str, Field(min_length=1)]   # section and table holding the figures
    url: str | None = None


class Draw(Strict):
    """One power draw: a current at the profile's supply voltage, or a power."""

    current_ma: Positive | None = None  # × supply_voltage_v
    power_mw: Positive | None = None
    source: Annotated[str, Field(min_length=1)]  # a sources[].id, or "assumption"
    approximate: bool = False  # the figure is not read off the cited table (rounded, remembered, derived)
    note: str = ""             # the condition the figure is for (mode, output power, data rate...)

    @model_validator(mode="after")
    def _one_quantity(self) -> "Draw":
        if (self.current_ma is None) == (self.power_mw is None):
            raise ValueError("give exactly one of current_ma (mA at supply_voltage_v) or power_mw")
        return self


class CpuPoint(Draw):
    """CPU active power at one clock frequency."""

    frequency_mhz: Positive


class TimeScale(Strict):
    """Device time / host time for the agent's measured processing. The agent measures on the
    machine it runs on; run it on the host and a device profile needs the ratio of the two,
    measured by the user (e.g. the same handshake timed on the device and on the host)."""

    factor: Positive | None = None  # None: not measured, host times are used unscaled (and the report says so)
    frequency_mhz: Positive | None = None  # the device frequency the factor was measured at (default: the default frequency)
    basis: str = ""                        # how the factor was obtained


class Cpi(Strict):
    """Cycles per instruction of the profile's core on TLS code: what turns a device's count
    of instructions (the firmware under QEMU) into cycles, and with the clock into seconds.
    Code-dependent (loads, taken branches, flash wait states): an assumption unless measured
    (a board's cycle count ÷ the same configuration's QEMU count, docs/porting.md)."""

    value: Positive
    source: Annotated[str, Field(min_length=1)]  # a sources[].id, or "assumption"
    note: str = ""


class Profile(Strict):
    """A device's power figures (docs/energy.md)."""

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    description: Annotated[str, Field(min_length=1)]
    supply_voltage_v: Positive | None = None  # converts every current_ma into a power
    default_frequency_mhz: Positive           # the operating point `NAME` (without -<F>mhz) picks
    sources: Annotated[list[Source], Field(min_length=1)]
    cpu: Annotated[list[CpuPoint], Field(min_length=1)]
    radio_tx: Draw | None = None  # none: I/O time is charged at the CPU's active power
    radio_rx: Draw | None = None
    idle: Draw
    time_scale: TimeScale = TimeScale()
    core: str | None = None  # the CPU core (HELLO device.cpu of a firmware for it): "cortex-m4"
    cpi: Cpi | None = None  # turns a device's instruction count into cycles (none: counts of instructions are refused)

    def draws(self) -> list[tuple[str, Draw]]:
        """Every figure with its field path."""
        out: list[tuple[str, Draw]] = [(f"cpu[{i}]", p) for i, p in enumerate(self.cpu)]
        out += [(name, d) for name in ("radio_tx", "radio_rx", "idle") if (d := getattr(self, name)) is not None]
        return out

    def watts(self, draw: Draw) -> float:
        if draw.power_mw is not None:
            return draw.power_mw * 1e-3
        return draw.current_ma * 1e-3 * (self.supply_voltage_v or 0.0)  # type: ignore[operator]

    @property
    def frequencies(self) -> list[float]:
        return [p.frequency_mhz for p in self.cpu]


def _mhz(f: float) -> str:
    return f"{f:g}"


@dataclass(frozen=True)
class OperatingPoint:
    """A profile at one CPU frequency, in watts: what an estimate multiplies times by."""

    profile: Profile
    frequency_mhz: float
    cpu_w: float    # CPU active power
    tx_w: float     # radio transmitting (the CPU's power when the profile has no radio)
    rx_w: float     # radio receiving or listening
    idle_w: float
    time_scale: float  # device time / host time at this frequency
    origin: str        # "built-in", "board" (spec/boards.toml) or the file it was read from
    board: Board | None = None  # a declared board: its counts become time through the cycle model

    @property
    def cpi(self) -> float | None:
        return self.profile.cpi.value if self.profile.cpi else None

    @property
    def name(self) -> str:
        return f"{self.profile.name}-{_mhz(self.frequency_mhz)}mhz"

    @property
    def label(self) -> str:
        """How every estimate is labelled in tables, figures and exports."""
        return f"estimate (profile {self.name})"

    @property
    def has_radio(self) -> bool:
        return self.profile.radio_tx is not None

    @property
    def scale_measured(self) -> bool:
        """False while the profile has no time scale: host processing times are used as they are."""
        return self.profile.time_scale.factor is not None


def operating_point(profile: Profile, frequency_mhz: float | None = None, origin: str = "") -> OperatingPoint:
    """The profile at a frequency it lists (its default when None)."""
    f = profile.default_frequency_mhz if frequency_mhz is None else frequency_mhz
    point = next((p for p in profile.cpu if p.frequency_mhz == f), None)
    if point is None:
        choices = ", ".join(f"{profile.name}-{_mhz(x)}mhz" for x in profile.frequencies)
        raise ProfileError("", [f"profile {profile.name} has no CPU figure at {_mhz(f)} MHz; choose one of: {choices}"])
    cpu = profile.watts(point)
    ts = profile.time_scale
    # CPU-bound work takes time ∝ 1/frequency: a factor measured at F applies at f as factor·F/f.
    # Without a measured factor nothing is scaled (host times as they are; the report says so).
    scale = ts.factor * (ts.frequency_mhz or profile.default_frequency_mhz) / f if ts.factor else 1.0
    radio = profile.radio_tx is not None
    return OperatingPoint(profile, f, cpu, profile.watts(profile.radio_tx) if radio else cpu,  # type: ignore[arg-type]
                          profile.watts(profile.radio_rx) if radio else cpu,  # type: ignore[arg-type]
                          profile.watts(profile.idle), scale, origin or "built-in")


# ---------------------------------------------------------------------- validation
def _cross_checks(p: Profile) -> list[str]:
    """What one field cannot say alone: cited sources exist, currents have a voltage, the
    default frequency is listed, every active draw is above idle."""
    problems = []
    ids = [s.id for s in p.sources] + [ASSUMPTION]
    for path, d in p.draws():
        if d.source not in ids:
            problems.append(f"{path}.source: {d.source!r} is not declared; allowed: {', '.join(ids)}")
        if d.current_ma is not None and p.supply_voltage_v is None:
            problems.append(f"{path}.current_ma: needs supply_voltage_v (or give power_mw instead)")
    freqs = p.frequencies
    dup = sorted({_mhz(f) for f in freqs if freqs.count(f) > 1})
    if dup:
        problems.append(f"cpu: frequency_mhz {', '.join(dup)} listed twice")
    if p.default_frequency_mhz not in freqs:
        problems.append(f"default_frequency_mhz: {p.default_frequency_mhz:g} is not valid: "
                        f"allowed: the cpu frequencies {', '.join(_mhz(f) for f in freqs)}")
    if p.cpi is not None and p.cpi.source not in ids:
        problems.append(f"cpi.source: {p.cpi.source!r} is not declared; allowed: {', '.join(ids)}")
    if (p.radio_tx is None) != (p.radio_rx is None):
        problems.append("radio_tx, radio_rx: give both or neither (without a radio, I/O is charged at CPU power)")
    if not problems:
        idle = p.watts(p.idle)
        problems += [f"{path}: {p.watts(d) * 1e3:g} mW is below idle ({idle * 1e3:g} mW): energies are "
                     "above idle, so an active draw must exceed it"
                     for path, d in p.draws() if path != "idle" and p.watts(d) < idle]
    return problems


def validate(raw: Mapping[str, Any], source: str) -> Profile:
    try:
        profile = Profile.model_validate(raw)
    except ValidationError as exc:
        raise ProfileError(source, list(dict.fromkeys(problem(e, Profile, raw, "(profile)") for e in exc.errors()))) from None
    problems = _cross_checks(profile)
    if problems:
        raise ProfileError(source, problems)
    return profile


def parse(text: str, source: str) -> Profile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(source, [f"not valid TOML: {exc}"]) from None
    return validate(raw, source)


# ---------------------------------------------------------------------- lookup
def builtin_files() -> dict[str, Any]:
    """Built-in profile name -> its package resource."""
    folder = resources.files("tlsbench.analysis.models.energy").joinpath(PROFILE_DIR)
    return {f.name.removesuffix(".toml"): f for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".toml")}


def builtins() -> list[Profile]:
    return [parse(f.read_text(), f"{name}.toml (built-in)") for name, f in builtin_files().items()]


def board_profile(board: Board) -> Profile:
    """A declared board as a power profile (spec/boards.toml): its figures and their sources."""
    p = board.power
    src = [Source(id=k, document=v.split(",")[0], section=v) for k, v in board.sources.items()]
    power = "power" if "power" in board.sources else src[0].id

    def draw(kind, ma, path):
        return kind(current_ma=ma, source=power, approximate=f"power.{path}" in board.approximate)

    radio = p.tx_ma is not None and p.rx_ma is not None
    return Profile(name=board.name, description=board.meaning, supply_voltage_v=p.supply_v,
                   default_frequency_mhz=board.clock_mhz, sources=src, core=board.core.name,
                   cpu=[CpuPoint(frequency_mhz=board.clock_mhz, current_ma=p.run_ma, source=power,
                                 approximate="power.run_ma" in board.approximate)],
                   radio_tx=draw(Draw, p.tx_ma, "tx_ma") if radio else None,
                   radio_rx=draw(Draw, p.rx_ma, "rx_ma") if radio else None,
                   idle=draw(Draw, p.sleep_ma, "sleep_ma"))


def board_point(board: Board) -> OperatingPoint:
    """A declared board at its clock: the operating point of its counts' time and energy."""
    return dataclasses.replace(operating_point(board_profile(board), origin="board"), board=board)


def scaled(op: OperatingPoint, factor: float) -> OperatingPoint:
    """`op` with an explicit time scale (`--device-scale`): device ns per host ns of a host run."""
    ts = TimeScale(factor=factor, frequency_mhz=op.frequency_mhz, basis="--device-scale, given")
    return dataclasses.replace(op, profile=op.profile.model_copy(update={"time_scale": ts}), time_scale=factor)


def _load_named(base: str) -> tuple[Profile, str] | None:
    files = builtin_files()
    if base in files:
        return parse(files[base].read_text(), f"{base}.toml (built-in)"), "built-in"
    path = Path(base)
    if path.suffix == ".toml" and path.is_file():
        try:
            return parse(path.read_bytes().decode("utf-8"), path.name), path.name
        except OSError as exc:
            raise EnergyError(f"cannot read the power profile {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise EnergyError(f"{path}: not UTF-8 text (byte {exc.start}): a power profile is a TOML file") from None
    return None


def resolve(ref: str) -> OperatingPoint:
    """`NAME` or `NAME-<F>mhz`, NAME a declared board (spec/boards.toml), a built-in or a TOML
    file: the operating point it names."""
    if ref in boards():
        return board_point(boards()[ref])
    found = _load_named(ref)
    if found:
        return operating_point(found[0], origin=found[1])
    m = _FREQUENCY_SUFFIX.match(ref)
    if m and m["base"] in boards() and float(m["mhz"]) == boards()[m["base"]].clock_mhz:
        return board_point(boards()[m["base"]])
    if m and (found := _load_named(m["base"])):
        return operating_point(found[0], float(m["mhz"]), found[1])
    names = list(boards()) + [f"{p.name}-{_mhz(f)}mhz" for p in builtins() for f in p.frequencies]
    close = difflib.get_close_matches(ref, names + list(builtin_files()), n=2)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ProfileError("", [f"no power profile {ref!r}{hint} (built-in: {', '.join(names)}; "
                            "or a .toml file, optionally followed by -<F>mhz)"])
