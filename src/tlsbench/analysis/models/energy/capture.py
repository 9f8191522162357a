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

Only the columns needed are parsed, straight from the file (numpy's loadtxt reads it in
chunks), so a capture of millions of samples costs its arrays, not its text.
"""
from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tlsbench.core import inputs

from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.units import CURRENT_UNITS, DEFAULT_MARKER, FORMATS, TIME_UNITS, VOLTAGE_UNITS

# Column roles and the names (lower case) that mean them.
ROLE_NAMES = {"time": ("time", "t", "timestamp"), "current": ("current", "i"), "voltage": ("voltage", "v")}
ROLE_UNITS = {"time": TIME_UNITS, "current": CURRENT_UNITS, "voltage": VOLTAGE_UNITS}
NOT_DIGITAL = ("power", "p", "charge", "energy")  # further analyzer columns that are no marker
UNIT_EXAMPLES = {"time": ("s", "ms"), "current": ("mA", "uA"), "voltage": ("V", "mV")}  # for error messages
# A digital sample as the PPK2 app writes it: low, high, both within the sample, not captured.
DIGITAL_LEVEL = {b"0": 0.0, b"1": 1.0, b"X": 0.5, b"x": 0.5, b"-": np.nan}
PPK2_CHANNELS = tuple(f"D{i}" for i in range(8))
ENCODING = "utf-8-sig"  # exports written on Windows may start with a byte-order mark
SNIFF_BYTES = 8192  # text never holds a NUL byte; binary data almost surely does in its first 8 KiB (git's rule)


@dataclass
class Capture:
    """The samples of one capture, in SI units, with the marker channel that was asked for."""

    file_name: str
    format: str                     # one of FORMATS
    sha256: str                     # of the file's bytes
    t: np.ndarray                   # s, strictly increasing
    current: np.ndarray             # A
    voltage: np.ndarray | None      # V per sample; None: the file has none
    channel: str                    # the marker channel asked for
    level: np.ndarray | None        # its level per sample, 0..1 (NaN: not captured); None: no such channel
    channels: list[str] = field(default_factory=list)  # the digital channels the file has

    @property
    def sample_period(self) -> float:
        return float(np.median(np.diff(self.t)))

    def marker(self) -> np.ndarray:
        if self.level is None:
            have = ", ".join(self.channels) or "none"
            raise EnergyError(f"{self.file_name} has no marker channel {self.channel!r} (its digital channels: {have}); "
                              "choose one with --marker")
        return self.level


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


@dataclass(frozen=True)
class _File:
    """One capture file: where it is, its header cells, how many lines precede the samples."""

    path: Path
    head: list[str]
    skip: int

    @property
    def name(self) -> str:
        return self.path.name

    def numbers(self, cols: list[int]) -> np.ndarray:
        try:
            with warnings.catch_warnings():  # "input contained no data": said below, in one line
                warnings.simplefilter("ignore", UserWarning)
                out = np.loadtxt(self.path, delimiter=",", skiprows=self.skip, usecols=cols, dtype=np.float64,
                                 comments=None, ndmin=2, encoding=ENCODING)
        except ValueError as exc:
            raise EnergyError(f"{self.name}: not a valid capture: {exc}") from None
        if out.shape != (len(out), len(cols)) or not len(out):
            raise EnergyError(f"{self.name}: no samples after the header")
        return out

    def chars(self, col: int, width: int) -> np.ndarray:
        """A column of fixed-width text as an (n, width) array of bytes."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                raw = np.loadtxt(self.path, delimiter=",", skiprows=self.skip, usecols=[col], dtype=f"S{width}",
                                 comments=None, ndmin=1, encoding=ENCODING)
        except ValueError as exc:  # a short row, text that is not UTF-8
            raise EnergyError(f"{self.name}: not a valid capture: {exc}") from None
        if not raw.size:
            raise EnergyError(f"{self.name}: no samples after the header")
        return np.char.zfill(raw, width).view("S1").reshape(len(raw), width)


def _digital(chars: np.ndarray, where: str) -> np.ndarray:
    """Characters 0/1/X/- -> levels."""
    known = np.isin(chars, list(DIGITAL_LEVEL))
    if not known.all():
        raise EnergyError(f"{where}: digital sample {chars[np.argmin(known)].decode(errors='replace')!r} is not "
                          "valid; allowed: 0, 1, X, -")
    out = np.full(chars.shape, np.nan)
    for ch, level in DIGITAL_LEVEL.items():
        out[chars == ch] = level
    return out


Columns = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, list[str]]


# ---------------------------------------------------------------------- formats
def _read_ppk2(f: _File, units: Units, channel: str) -> Columns:
    head = [h.strip() for h in f.head]
    if head[:2] != ["Timestamp(ms)", "Current(uA)"]:
        raise EnergyError(f"{f.name}: not a PPK2 export: its header starts {','.join(head[:2])!r}, "
                          "expected 'Timestamp(ms),Current(uA)'")
    num = f.numbers([0, 1])
    wanted = next((c for c in PPK2_CHANNELS if c.lower() == channel.lower()), None)
    have = list(PPK2_CHANNELS) if {"D0-D7", "Bits"} & set(head) else [c for c in PPK2_CHANNELS if c in head]
    level = None
    if wanted in head:  # separate columns D0,...,D7
        level = _digital(f.chars(head.index(wanted), 1)[:, 0], f"{f.name}: column {wanted}")
    elif wanted and "D0-D7" in head:  # one 8-character string per sample, character i = Di
        level = _digital(f.chars(head.index("D0-D7"), 8)[:, PPK2_CHANNELS.index(wanted)], f"{f.name}: column D0-D7")
    elif wanted and "Bits" in head:  # older app versions: binary number, most significant digit D7
        level = _digital(f.chars(head.index("Bits"), 8)[:, 7 - PPK2_CHANNELS.index(wanted)], f"{f.name}: column Bits")
    return num[:, 0] * 1e-3, num[:, 1] * 1e-6, None, level, have


def _roles(f: _File, units: Units, defaults: dict[str, str]) -> dict[str, tuple[int, float]]:
    """Role -> (column index, factor to SI), from header names and units."""
    found: dict[str, tuple[int, float]] = {}
    for i, col in enumerate(f.head):
        name, unit = split_header(col)
        role = next((r for r, names in ROLE_NAMES.items() if name in names), None)
        if role is None or role in found:
            continue
        given = getattr(units, role)
        if unit and given and unit.lower() != given.lower():
            raise EnergyError(f"{f.name}: column {col.strip()!r} says {unit}, the option says {given}")
        unit = unit or given or defaults.get(role)
        if unit is None:
            first, second = UNIT_EXAMPLES[role]
            raise EnergyError(f"{f.name}: column {col.strip()!r} has no unit: name it like '{name}_{first}' or "
                              f"'{name} ({second})', or pass --{role}-unit {first}")
        found[role] = (i, _factor(role, unit, f"{f.name}: column {col.strip()!r}"))
    missing = [r for r in ("time", "current") if r not in found]
    if missing:
        raise EnergyError(f"{f.name}: no {' and no '.join(missing)} column in the header "
                          f"{','.join(h.strip() for h in f.head)!r}; names understood: "
                          f"{', '.join(n for r in missing for n in ROLE_NAMES[r])}")
    return found


def _marker_column(f: _File, found: dict, channel: str) -> tuple[np.ndarray | None, list[str]]:
    """The asked-for channel among the columns that are neither a role nor an analyzer quantity."""
    used = {i for i, _ in found.values()}
    candidates = {i: col.strip().lstrip("#").strip() for i, col in enumerate(f.head)
                  if i not in used and split_header(col)[0] not in NOT_DIGITAL}
    hit = next((i for i, name in candidates.items() if name.lower() == channel.lower()), None)
    if hit is None:
        return None, list(candidates.values())
    level = f.numbers([hit])[:, 0]
    if np.any((level < 0) | (level > 1)):
        raise EnergyError(f"{f.name}: marker column {candidates[hit]!r} holds values outside 0..1 "
                          f"(e.g. {level[(level < 0) | (level > 1)][0]:g}): give the marker as 0/1 levels")
    return level, list(candidates.values())


def _read_tabular(f: _File, units: Units, channel: str, defaults: dict[str, str]) -> Columns:
    found = _roles(f, units, defaults)
    roles = list(found)
    num = f.numbers([found[r][0] for r in roles])
    col = {r: num[:, j] * found[r][1] for j, r in enumerate(roles)}
    level, channels = _marker_column(f, found, channel)
    return col["time"], col["current"], col.get("voltage"), level, channels


def _read_joulescope(f: _File, units: Units, channel: str) -> Columns:
    if f.skip == 0:  # the UI writes the header only on request: then time, current, voltage
        num = f.numbers([0, 1, 2])
        return num[:, 0], num[:, 1], num[:, 2], None, []
    return _read_tabular(f, units, channel, {"time": "s", "current": "A", "voltage": "V"})


def _read_generic(f: _File, units: Units, channel: str) -> Columns:
    if f.skip == 0:
        raise EnergyError(f"{f.name}: the first line is not a header: name the columns (time, current, ...)")
    return _read_tabular(f, units, channel, {})


READERS: dict[str, Callable[[_File, Units, str], Columns]] = {
    "ppk2": _read_ppk2, "joulescope": _read_joulescope, "generic": _read_generic}


def detect(first_line: str) -> str:
    """The format a capture's first line says it is."""
    first = first_line.split(",")[0].strip()
    if first == "Timestamp(ms)":
        return "ppk2"
    if first.startswith("#time") or first.lower().replace(" ", "") == "time(s)":
        return "joulescope"
    return "generic"


def _is_numeric(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _finite(name: str, what: str, values: np.ndarray | None, header_lines: int) -> None:
    """NaN and infinite samples are refused with their line: they would poison every sum."""
    if values is None or np.isfinite(values).all():
        return
    i = int(np.argmin(np.isfinite(values)))
    raise EnergyError(f"{name}: sample {i + 1} (line {i + header_lines + 1}) has {what} {float(values[i])}: a capture "
                      "must hold finite numbers; fix or remove that line (or cut the capture before it)")


def check_file(path: Path) -> None:
    """A capture is a regular file of text. It is read more than once (its SHA-256, its
    header, its columns), so a FIFO would block; binary data would be parsed as a header."""
    problem = inputs.not_a_regular_file(path)
    if problem:
        raise EnergyError(f"the capture {path} {problem}: name a capture file (CSV text)")
    try:
        with path.open("rb") as fh:
            binary = b"\0" in fh.read(SNIFF_BYTES)
    except OSError as exc:
        raise EnergyError(f"cannot read the capture {path}: {exc.strerror}") from None
    if binary:
        raise EnergyError(f"{path.name} holds NUL bytes: binary data (a compressed file, an analyzer's own format) "
                          "or UTF-16 text, not a CSV capture; export the capture as CSV text (UTF-8)")


def read(path: str | Path, fmt: str = "auto", units: Units = Units(), marker: str | None = None) -> Capture:
    """A capture file in one of FORMATS ("auto": from its first line), with the marker
    channel `marker` (default: the format's DEFAULT_MARKER)."""
    path = Path(path)
    check_file(path)
    try:
        with path.open(encoding=ENCODING, errors="replace") as fh:
            first = fh.readline().rstrip("\r\n")
        sha = _sha256(path)
    except OSError as exc:
        raise EnergyError(f"cannot read the capture {path}: {exc.strerror}") from None
    fmt = detect(first) if fmt == "auto" else fmt
    if fmt not in READERS:
        raise EnergyError(f"capture format {fmt!r} is not valid; allowed: auto, {', '.join(FORMATS)}")
    head = first.split(",")
    f = _File(path, head, 0 if all(_is_numeric(c) for c in head) else 1)
    channel = marker or DEFAULT_MARKER[fmt]
    t, current, voltage, level, channels = READERS[fmt](f, units, channel)
    for what, values in (("time", t), ("current", current), ("voltage", voltage)):
        _finite(path.name, what, values, f.skip)
    if len(t) < 2:
        raise EnergyError(f"{path.name}: fewer than 2 samples")
    step = np.diff(t)
    if np.any(step <= 0):
        row = int(np.argmax(step <= 0)) + 2
        raise EnergyError(f"{path.name}: time does not increase at sample {row} ({t[row - 2]:.9g} s then {t[row - 1]:.9g} s)")
    return Capture(path.name, fmt, sha, t, current, voltage, channel, level, channels)
