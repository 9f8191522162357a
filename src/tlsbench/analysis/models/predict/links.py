# SPDX-License-Identifier: Apache-2.0
"""Links for predictions: the presets of spec/links.toml (the same declaration tlsbench-link's
table is generated from, so the model and the emulator use the same numbers, each citing its
source), and free parameters in the emulator's own option names:

    nb-iot                      a preset
    ieee802154,loss=5           a preset with overrides
    rate=62.5k,delay=300,mtu=1280,p2d-rate=26k      free parameters (d2p-/p2d- for one direction)
"""
from __future__ import annotations

import difflib
import functools
import math
import tomllib
from dataclasses import dataclass, replace
from typing import Annotated, Any, Mapping

from pydantic import Field, ValidationError, model_validator

from tlsbench.core.spec import SPEC_DIR
from tlsbench.core.validation import Strict, problem

from tlsbench.analysis.models.predict import PredictError

LINKS_FILE = "links.toml"
ASSUMPTION = "assumption"
DIRECTIONS = ("d2p", "p2d")  # device -> peer (the device's uplink), peer -> device
SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
NOT_MODELLED = ("reorder", "reorder_delay")  # the emulator has them, the model does not


@dataclass(frozen=True)
class Direction:
    """One direction of a link, in the emulator's units (docs/link-emulator.md)."""

    rate: float = 0.0  # bit/s; 0: unlimited
    delay: float = 0.0  # ms, one way
    jitter: float = 0.0  # ms, uniform ±; the model uses its mean (0) and keeps order
    loss: float = 0.0  # %, per packet, or per link-layer frame when frame > 0
    frame: int = 0  # link-layer frame payload, bytes
    frame_overhead: int = 0  # bytes per frame on the air
    mtu: int = 0  # packets above it are dropped (0: none)
    queue: int = 0  # tail-drop limit, bytes (0: 200 ms at the rate, at least 16384)
    reorder: float = 0.0
    reorder_delay: float = 0.0

    def fragments(self, packet: int) -> int:
        return max(1, math.ceil(packet / self.frame)) if self.frame else 1

    def airtime_ns(self, packet: int) -> float:
        """Serialization of one IP packet of `packet` bytes (its frames' overhead included),
        floored to whole ns as the emulator does."""
        if not self.rate:
            return 0.0
        return float(int((packet + self.fragments(packet) * self.frame_overhead) * 8e9 // self.rate))

    def packet_loss(self, packet: int) -> float:
        """Probability that a packet is lost: any of its frames."""
        p = self.loss / 100.0
        return 1.0 - (1.0 - p) ** self.fragments(packet) if p else 0.0

    def queue_ns(self) -> float:
        limit = self.queue or max(16384, int(self.rate // 8 // 5))
        return limit * 8e9 / self.rate if self.rate else math.inf


FIELDS = tuple(Direction.__dataclass_fields__)


@dataclass(frozen=True)
class Citation:
    """Where one figure of a preset comes from."""

    field: str  # "rate", "d2p.rate", ...
    value: float
    source: str  # a source id or "assumption"
    approximate: bool
    note: str


@dataclass(frozen=True)
class Link:
    """A link of a prediction: both directions, a label, and the preset's citations."""

    label: str
    d2p: Direction
    p2d: Direction
    preset: str | None = None
    citations: tuple[Citation, ...] = ()

    def direction(self, name: str) -> Direction:
        return self.d2p if name == "d2p" else self.p2d

    def with_both(self, **changes: float) -> "Link":
        """Both directions changed (a sweep point), labelled by the changes."""
        extra = ",".join(f"{k}={_fmt(v)}" for k, v in changes.items())
        return replace(self, label=f"{self.label},{extra}", d2p=replace(self.d2p, **changes),
                       p2d=replace(self.p2d, **changes))

    @property
    def lossy(self) -> bool:
        return bool(self.d2p.loss or self.p2d.loss)

    @property
    def rtt_ms(self) -> float:
        return self.d2p.delay + self.p2d.delay


def _fmt(v: float) -> str:
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= scale and v % (scale / 1000) == 0:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


# ---------------------------------------------------------------------- the presets file
class Source(Strict):
    id: Annotated[str, Field(min_length=1)]
    document: Annotated[str, Field(min_length=1)]
    section: Annotated[str, Field(min_length=1)]
    url: str | None = None


class Figure(Strict):
    value: float | int
    source: Annotated[str, Field(min_length=1)]
    approximate: bool = False
    note: str = ""


class Figures(Strict):
    rate: Figure | None = None
    delay: Figure | None = None
    jitter: Figure | None = None
    loss: Figure | None = None
    frame: Figure | None = None
    frame_overhead: Figure | None = None
    mtu: Figure | None = None
    queue: Figure | None = None
    reorder: Figure | None = None
    reorder_delay: Figure | None = None


class Preset(Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.+-]*$")]
    summary: Annotated[str, Field(min_length=1)]
    description: Annotated[str, Field(min_length=1)]
    both: Figures = Figures()
    d2p: Figures = Figures()
    p2d: Figures = Figures()


class PresetsFile(Strict):
    source: list[Source]
    preset: Annotated[list[Preset], Field(min_length=1)]

    @model_validator(mode="after")
    def _cited(self) -> "PresetsFile":
        ids = {s.id for s in self.source} | {ASSUMPTION}
        for p in self.preset:
            for part in ("both", "d2p", "p2d"):
                for name, fig in getattr(p, part):
                    if fig is not None and fig.source not in ids:
                        raise ValueError(f"preset {p.name}: {part}.{name} cites {fig.source!r}, not a [[source]] id")
        names = [p.name for p in self.preset]
        if len(set(names)) != len(names):
            raise ValueError("a preset name is declared twice")
        return self


@functools.cache
def presets_file() -> PresetsFile:
    raw = tomllib.loads((SPEC_DIR / LINKS_FILE).read_text())
    try:
        return PresetsFile.model_validate(raw)
    except ValidationError as exc:  # the shipped file: a test keeps it valid
        raise PredictError(f"spec/{LINKS_FILE} is invalid: " + "; ".join(
            problem(e, PresetsFile, raw, "(links)") for e in exc.errors())) from None


def sources() -> dict[str, Source]:
    return {s.id: s for s in presets_file().source}


def _preset_link(p: Preset) -> Link:
    dirs, cites = {}, []
    for d in DIRECTIONS:
        values: dict[str, float] = {}
        for part in ("both", d):
            for name, fig in getattr(p, part):
                if fig is not None:
                    values[name] = fig.value
                    if part == d or d == DIRECTIONS[0]:
                        cites.append(Citation(name if part == "both" else f"{d}.{name}", fig.value, fig.source,
                                              fig.approximate, fig.note))
        dirs[d] = Direction(**values)
    return Link(p.name, dirs["d2p"], dirs["p2d"], p.name, tuple(cites))


def presets() -> dict[str, Link]:
    """Preset name -> its link, in file order."""
    return {p.name: _preset_link(p) for p in presets_file().preset}


def preset_info(name: str) -> Preset:
    return next(p for p in presets_file().preset if p.name == name)


# ---------------------------------------------------------------------- parameters
def parse_number(key: str, text: str) -> float:
    scale = SUFFIXES.get(text[-1:], 1.0)
    try:
        value = float(text[:-1] if text[-1:] in SUFFIXES else text)
    except ValueError:
        raise PredictError(f"link parameter {key}={text}: not a number (suffixes k, M, G allowed)") from None
    if not math.isfinite(value) or value < 0:
        raise PredictError(f"link parameter {key}={text}: must be a finite number >= 0")
    return value * scale


def _apply(link: Link, key: str, value: float) -> Link:
    name = key.replace("-", "_")
    which = DIRECTIONS
    for d in DIRECTIONS:
        if name.startswith(d + "_"):
            which, name = (d,), name[len(d) + 1:]
    if name not in FIELDS:
        close = difflib.get_close_matches(name, FIELDS, n=1)
        raise PredictError(f"unknown link parameter {key!r}{f'; did you mean {close[0]}?' if close else ''} "
                           f"(allowed: {', '.join(f.replace('_', '-') for f in FIELDS)}, each with d2p- or p2d- "
                           "for one direction)")
    if name in ("loss", "reorder") and value > 100:
        raise PredictError(f"link parameter {key}={value:g}: a percentage is at most 100")
    if name in ("frame", "frame_overhead", "mtu", "queue"):
        value = int(value)
    changed = {d: replace(link.direction(d), **{name: value}) for d in which}
    return replace(link, d2p=changed.get("d2p", link.d2p), p2d=changed.get("p2d", link.p2d))


def parse_link(text: str) -> Link:
    """`PRESET`, `PRESET,key=value,...` or `key=value,...` (see the module docstring)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise PredictError("an empty --link: give a preset (`tlsbench predict --list-links`) or key=value parameters")
    known = presets()
    if "=" in parts[0]:
        link = Link(text, Direction(), Direction())
    else:
        if parts[0] not in known:
            close = difflib.get_close_matches(parts[0], list(known), n=1)
            raise PredictError(f"unknown link preset {parts[0]!r}{f'; did you mean {close[0]}?' if close else ''} "
                               f"(presets: {', '.join(known)}; or key=value parameters such as rate=250k,delay=5)")
        link = replace(known[parts[0]], label=text)
        parts = parts[1:]
    keys = [part.partition("=")[0].strip() for part in parts]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise PredictError(f"--link {text}: {', '.join(twice)} given twice; give each parameter once")
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            raise PredictError(f"link parameter {part!r}: write key=value (e.g. loss=5), after an optional preset")
        link = _apply(link, key.strip(), parse_number(key.strip(), value.strip()))
    return link


def from_plan(link: Mapping[str, Any] | None, label: str) -> Link:
    """A stored configuration's link (network_json "link": the plan's preset and overrides)
    as the model sees it; None: loopback (no emulator, nothing shaped)."""
    if not link:
        return Link(label, Direction(), Direction())
    base = presets().get(str(link.get("preset") or "none"))
    if base is None:
        raise PredictError(f"link {label!r} names preset {link.get('preset')!r}, which spec/{LINKS_FILE} does not "
                           "declare: the store was made with other presets")
    out = replace(base, label=label)
    for key, value in link.items():
        if key in FIELDS:
            out = _apply(out, key, parse_number(key, str(value)))
    for d in DIRECTIONS:
        for key, value in (link.get(d) or {}).items():
            out = _apply(out, f"{d}-{key}", parse_number(key, str(value)))
    return out


def unmodelled(link: Link) -> list[str]:
    """Parameters the emulator applies but the model does not."""
    return [f"{d}.{name}" for d in DIRECTIONS for name in NOT_MODELLED if getattr(link.direction(d), name)]
