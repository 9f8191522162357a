# SPDX-License-Identifier: Apache-2.0
"""Current captures from power analyzers, read into SI units (formats: docs/energy.md).

- ppk2: the CSV export of Nordic's Power Profiler app (PPK2): `Timestamp(ms),Current(uA)`,
  then the digital channels as one string column `D0-D7` (character i is Di), as separate
  columns `D0,...,D7`, or both; each character is 0, 1, X (both levels within the sample)
  or - (not captured). Older app versions wrote one `Bits` column, an 8-digit binary
  number, most significant digit D7. The export carries no voltage.
- joulescope: the Joulescope UI's CSV export: time in s, current in A, voltage in V, with
  an optional header `#time (s),current (A),voltage (V)` (units in parentheses), possibly
  power (W) and further columns. The UI writes no general-purpose inputs into CSV: a marker
  column (in0, in1) must come from another export (docs/energy.md).
- generic: a CSV whose header names the columns: time and current (required), voltage
  and a marker (optional); units in the header (`time (ms)`, `current_mA`, `t[us]`) or
  given by options.
"""
from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import EnergyError
from .units import CURRENT_UNITS, DEFAULT_MARKER, FORMATS, TIME_UNITS, VOLTAGE_UNITS

# Column roles and the names (lower case) that mean them.
ROLE_NAMES = {"time": ("time", "t", "timestamp"), "current": ("current", "i"), "voltage": ("voltage", "v")}
ROLE_UNITS = {"time": TIME_UNITS, "current": CURRENT_UNITS, "voltage": VOLTAGE_UNITS}
# A digital sample as the PPK2 app writes it: low, high, both within the sample, not captured.
DIGITAL_LEVEL = {"0": 0.0, "1": 1.0, "X": 0.5, "x": 0.5, "-": np.nan}
PPK2_CHANNELS = tuple(f"D{i}" for i in range(8))


@dataclass
class Capture:
    """The samples of one capture, in SI units."""

    file_name: str
    format: str                     # one of FORMATS
    sha256: str                     # of the file's bytes
    t: np.ndarray                   # s, strictly increasing
    current: np.ndarray             # A
    voltage: np.ndarray | None      # V per sample; None: the file has none
    markers: dict[str, np.ndarray] = field(default_factory=dict)  # channel -> level 0..1 (NaN: unknown)

    @property
    def sample_period(self) -> float:
        return float(np.median(np.diff(self.t)))

    def marker(self, name: str) -> np.ndarray:
        found = {k.lower(): v for k, v in self.markers.items()}.get(name.lower())
        if found is None:
            have = ", ".join(self.markers) or "none"
            raise EnergyError(f"{self.file_name} has no marker channel {name!r} (its digital channels: {have}); "
                              "choose one with --marker")
        return found


@dataclass(frozen=True)
class Units:
    """Units the user gives for columns whose header names none (generic format)."""

    time: str | None = None
    current: str | None = None
    voltage: str | None = None


_BRACKETED = re.compile(r"^(?P<name>[^(\[]*?)\s*[(\[]\s*(?P<unit>[^)\]]*?)\s*[)\]]\s*$")


def split_header(column: str) -> tuple[str, str | None]:
    """`time (ms)`, `t[us]`, `current_mA`, `voltage` -> (name, unit or None), name lower case."""
    text = column.strip().lstrip("#").strip()
    m = _BRACKETED.match(text)
    if m:
        return m["name"].strip().lower(), m["unit"]
    name, _, unit = text.rpartition("_")
    if name and any(unit.lower() in units for units in ROLE_UNITS.values()):
        return name.strip().lower(), unit
    return text.lower(), None


def _factor(role: str, unit: str, where: str) -> float:
    units = ROLE_UNITS[role]
    if unit.lower() not in units:
        raise EnergyError(f"{where}: unit {unit!r} is not valid for {role}; allowed: {', '.join(units)}")
    return units[unit.lower()]


def _digital(values: np.ndarray, where: str) -> np.ndarray:
    """Single characters 0/1/X/- -> levels."""
    flat = values.astype("U1")
    bad = ~np.isin(flat, list(DIGITAL_LEVEL))
    if bad.any():
        raise EnergyError(f"{where}: digital sample {str(values[np.argmax(bad)])!r} is not valid; allowed: 0, 1, X, -")
    out = np.full(flat.shape, np.nan)
    for ch, level in DIGITAL_LEVEL.items():
        out[flat == ch] = level
    return out


def _string_columns(text: str, cols: list[int], width: int) -> np.ndarray:
    return np.atleast_2d(np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, usecols=cols,
                                    dtype=f"U{width}", comments=None, ndmin=2))


def _numeric(text: str, cols: list[int], skip: int, source: str) -> np.ndarray:
    try:
        return np.loadtxt(io.StringIO(text), delimiter=",", skiprows=skip, usecols=cols, dtype=np.float64,
                          comments=None, ndmin=2)
    except ValueError as exc:
        raise EnergyError(f"{source}: not a valid capture: {exc}") from None


def _header(text: str) -> list[str]:
    return next(iter(text.splitlines()), "").split(",")


def _is_numeric(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------- formats
def _read_ppk2(text: str, source: str, units: Units) -> tuple[np.ndarray, np.ndarray, None, dict]:
    head = [h.strip() for h in _header(text)]
    if head[:2] != ["Timestamp(ms)", "Current(uA)"]:
        raise EnergyError(f"{source}: not a PPK2 export: its header starts {','.join(head[:2])!r}, "
                          "expected 'Timestamp(ms),Current(uA)'")
    num = _numeric(text, [0, 1], 1, source)
    markers: dict[str, np.ndarray] = {}
    if "D0-D7" in head:  # one 8-character string per sample, character i = Di
        chars = _string_columns(text, [head.index("D0-D7")], 8)[:, 0]
        grid = np.array(chars, dtype="U8").view("U1").reshape(len(chars), 8)
        for i, name in enumerate(PPK2_CHANNELS):
            markers[name] = _digital(grid[:, i], f"{source}: column D0-D7")
    for name in PPK2_CHANNELS:
        if name in head:
            markers[name] = _digital(_string_columns(text, [head.index(name)], 1)[:, 0], f"{source}: column {name}")
    if "Bits" in head:  # older app versions: binary number, most significant digit D7
        bits = _string_columns(text, [head.index("Bits")], 8)[:, 0]
        grid = np.char.zfill(bits, 8).view("U1").reshape(len(bits), 8)
        for i, name in enumerate(PPK2_CHANNELS):
            markers.setdefault(name, _digital(grid[:, 7 - i], f"{source}: column Bits"))
    return num[:, 0] * 1e-3, num[:, 1] * 1e-6, None, markers


def _columns(head: list[str], source: str, units: Units, defaults: dict[str, str]) -> dict[str, tuple[int, float]]:
    """Role -> (column index, factor to SI), from header names and units."""
    found: dict[str, tuple[int, float]] = {}
    for i, col in enumerate(head):
        name, unit = split_header(col)
        role = next((r for r, names in ROLE_NAMES.items() if name in names), None)
        if role is None or role in found:
            continue
        given = getattr(units, role)
        if unit and given and unit.lower() != given.lower():
            raise EnergyError(f"{source}: column {col.strip()!r} says {unit}, the option says {given}")
        unit = unit or given or defaults.get(role)
        if unit is None:
            raise EnergyError(f"{source}: column {col.strip()!r} has no unit: name it like {name}_{'s' if role == 'time' else 'mA'} "
                              f"or '{name} ({'ms' if role == 'time' else 'uA'})', or pass --{role}-unit")
        found[role] = (i, _factor(role, unit, f"{source}: column {col.strip()!r}"))
    missing = [r for r in ("time", "current") if r not in found]
    if missing:
        raise EnergyError(f"{source}: no {' and no '.join(missing)} column in the header {','.join(h.strip() for h in head)!r}; "
                          f"names understood: {', '.join(n for r in missing for n in ROLE_NAMES[r])}")
    return found


def _marker_columns(text: str, head: list[str], found: dict, source: str) -> dict[str, np.ndarray]:
    """Every other column whose values are all 0 or 1 is a digital channel, named by its header."""
    used = {i for i, _ in found.values()}
    out = {}
    for i, col in enumerate(head):
        if i not in used:
            values = _numeric(text, [i], 1, source)[:, 0]
            if np.all(np.isin(values, (0.0, 1.0))):
                out[col.strip().lstrip("#").strip()] = values
    return out


def _read_tabular(text: str, source: str, units: Units, defaults: dict[str, str]):
    head = _header(text)
    if all(_is_numeric(c) for c in head):  # no header: the Joulescope UI's time, current, voltage
        if not defaults:
            raise EnergyError(f"{source}: the first line is not a header: name the columns (time, current, ...)")
        num = _numeric(text, [0, 1, 2], 0, source)
        return num[:, 0], num[:, 1], num[:, 2], {}
    found = _columns(head, source, units, defaults)
    roles = list(found)
    num = _numeric(text, [found[r][0] for r in roles], 1, source)
    col = {r: num[:, j] * found[r][1] for j, r in enumerate(roles)}
    return col["time"], col["current"], col.get("voltage"), _marker_columns(text, head, found, source)


def _read_joulescope(text: str, source: str, units: Units):
    return _read_tabular(text, source, units, {"time": "s", "current": "A", "voltage": "V"})


def _read_generic(text: str, source: str, units: Units):
    return _read_tabular(text, source, units, {})


READERS: dict[str, Callable] = {"ppk2": _read_ppk2, "joulescope": _read_joulescope, "generic": _read_generic}


def detect(text: str) -> str:
    """The format a capture's first line says it is."""
    first = _header(text)[0].strip()
    if first == "Timestamp(ms)":
        return "ppk2"
    if first.startswith("#time") or first.lower().replace(" ", "") == "time(s)":
        return "joulescope"
    return "generic"


def read(path: str | Path, fmt: str = "auto", units: Units = Units()) -> Capture:
    """A capture file in one of FORMATS ("auto": from its first line)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EnergyError(f"cannot read the capture {path}: {exc.strerror}") from None
    text = data.decode("utf-8-sig", errors="replace")
    fmt = detect(text) if fmt == "auto" else fmt
    if fmt not in READERS:
        raise EnergyError(f"capture format {fmt!r} is not valid; allowed: auto, {', '.join(FORMATS)}")
    t, current, voltage, markers = READERS[fmt](text, path.name, units)
    if len(t) < 2:
        raise EnergyError(f"{path.name}: fewer than 2 samples")
    step = np.diff(t)
    if np.any(step <= 0):
        row = int(np.argmax(step <= 0)) + 2
        raise EnergyError(f"{path.name}: time does not increase at sample {row} ({t[row - 2]:.9g} s then {t[row - 1]:.9g} s)")
    return Capture(path.name, fmt, hashlib.sha256(data).hexdigest(), t, current, voltage, markers)
