# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/labels.toml and spec/protocol.toml: the one declaration of every
trace label, wire enumeration, group family and byte layout. Nothing in the host tool spells
a label or enum string, or a struct format, that is not read from here."""
from __future__ import annotations

import functools
import re
import struct
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from tlsbench.core.errors import UserError

# src/tlsbench/core/declared is a symlink to the repository's spec/ (one copy of the files).
SPEC_DIR = Path(__file__).resolve().parent / "declared"
LABELS_FILE = "labels.toml"
PROTOCOL_FILE = "protocol.toml"


class SpecMismatch(UserError, RuntimeError):
    """The agent was built from other spec files than this host tool reads."""


@dataclass(frozen=True)
class Label:
    """One trace label (spec/labels.toml [[label]])."""

    id: int  # stable numeric id on the wire
    name: str  # e.g. SERVER_KEY_EXCHANGE
    category: str  # a key of [categories]: phase, step, io, crypto, ...
    kind: str  # "span" (START/STOP pair) or "instant"
    meaning: str


@dataclass(frozen=True)
class NameTable:
    """A two-way name <-> value table of one spec section (e.g. [group])."""

    section: str  # the spec section it came from, used in error messages
    by_name: Mapping[str, int]
    meanings: Mapping[str, str]  # name -> meaning, where the spec gives one

    @functools.cached_property
    def by_value(self) -> dict[int, str]:
        return {v: k for k, v in self.by_name.items()}

    @property
    def names(self) -> list[str]:
        return list(self.by_name)

    def value(self, name: str) -> int:
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a {self.section}; allowed: {', '.join(self.by_name)}") from None

    def name(self, value: int) -> str:
        try:
            return self.by_value[value]
        except KeyError:
            raise KeyError(f"{value} is not a {self.section} value") from None

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_name)

    def __getattr__(self, attr: str) -> int:
        # table.OK / table.AGENT_DIED: attribute access for names that are identifiers,
        # so call sites read naturally yet the string itself lives only in the spec.
        by_name = self.__dict__.get("by_name", {})
        if attr in by_name:
            return by_name[attr]
        raise AttributeError(attr)


# Layout field types: struct codes of the scalars; bytesN is N raw bytes.
_STRUCT_CODES = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i"}
_NUMPY_CODES = {"u8": "u1", "u16": "<u2", "u32": "<u4", "u64": "<u8", "i32": "<i4"}


@dataclass(frozen=True)
class LayoutField:
    """One field of a byte layout ([layout.*] fields): a name (the dataclass field the host
    decodes it into; "reserved" carries nothing), its type, offset and size."""

    name: str
    type: str  # u8 u16 u32 u64 i32 or bytesN
    offset: int
    size: int
    doc: str

    @property
    def reserved(self) -> bool:
        return self.name == "reserved"

    @property
    def struct_code(self) -> str:
        if self.reserved:
            return f"{self.size}x"  # skipped on unpack, zero on pack
        return _STRUCT_CODES.get(self.type) or f"{self.size}s"


@dataclass(frozen=True)
class Layout:
    """A binary structure on the wire (little-endian), fields in wire order."""

    name: str
    size: int
    meaning: str
    fields: tuple[LayoutField, ...]

    @functools.cached_property
    def struct(self) -> struct.Struct:
        return struct.Struct("<" + "".join(f.struct_code for f in self.fields))

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The fields that carry something, in wire order."""
        return tuple(f.name for f in self.fields if not f.reserved)

    def pack(self, values: Mapping[str, Any]) -> bytes:
        """Every named field from `values` (extra keys are ignored); reserved bytes are 0."""
        return self.struct.pack(*(values[name] for name in self.names))

    def unpack(self, data: bytes, offset: int = 0) -> dict[str, Any]:
        return dict(zip(self.names, self.struct.unpack_from(data, offset)))

    @property
    def numpy_fields(self) -> list[tuple[str, str]]:
        """(name, dtype code) of every field: a structured numpy dtype of the layout, for
        layouts without reserved fields (trace records)."""
        return [(f.name, _NUMPY_CODES[f.type]) for f in self.fields]


def _field_size(kind: str) -> int:
    return int(kind[5:]) if re.fullmatch(r"bytes[1-9][0-9]*", kind) else struct.calcsize(_STRUCT_CODES[kind])


def _layout(name: str, raw: Mapping[str, Any]) -> Layout:
    """The agent's build checks that offsets follow from order and sizes (genspec.py); the
    struct format follows from order and types alone."""
    fields = tuple(LayoutField(f["name"], f["type"], f["offset"], _field_size(f["type"]), f.get("doc", ""))
                   for f in raw["fields"])
    return Layout(name, raw["size"], raw.get("meaning", ""), fields)


@dataclass(frozen=True)
class Metric:
    """One metric a slice can carry ([metric.*] of spec/protocol.toml, docs/metrics.md)."""

    name: str  # e.g. heap_peak
    plan: str  # the plan's word that selects it: time, instructions, heap, stack
    unit: str  # of a value: ns, instructions, B
    aggregation: str  # delta, peak, sum, instant
    collect: str  # which repetitions carry it ([collect])
    meaning: str
    labels: Mapping[str, str]  # memory metrics: record label -> the slice it describes


@dataclass(frozen=True)
class KeyExchange:
    """Which groups a suite's key exchange takes ([key_exchange])."""

    name: str  # as SUITES spells it (compared case-insensitively)
    families: tuple[range, ...]  # group value ranges ([group_family])
    default: str  # what group 0 means: a [group] name, or "credential"
    takes: str

    def applies(self, group: int) -> bool:
        return group == 0 or any(group in r for r in self.families)


@dataclass(frozen=True)
class Spec:
    """Everything both spec files declare, plus their CRC-32s (compared with HELLO)."""

    labels: tuple[Label, ...]
    categories: Mapping[str, str]  # name -> meaning, in declaration order
    kinds: NameTable  # START/STOP/INSTANT
    peers: NameTable  # client/server/none
    frames: NameTable  # HELLO, SUITES, RUN, REP, ...
    frame_senders: Mapping[str, str]  # frame name -> "agent" / "controller"
    status: NameTable
    flags: NameTable  # name -> bit mask (1 << bit)
    options: NameTable  # RUN options: name -> bit mask (empty when the spec declares none)
    directions: NameTable
    credentials: NameTable
    transports: NameTable
    roles: NameTable  # which peer(s) an agent plays: both/client/server
    protocol_kinds: NameTable  # tls / dtls
    groups: NameTable
    network: Mapping[str, int]  # [network]: client port scheme and the waits of two-process RUNs
    key_exchanges: Mapping[str, KeyExchange]  # by upper-case name
    group_families: Mapping[str, range]  # [group_family]: name -> group values
    layouts: Mapping[str, Layout]  # frame_header, run_request, rep_header, record
    collects: NameTable  # time / instructions / memory: what an agent process collects
    metrics: Mapping[str, Metric]  # [metric.*] by name, in declaration order
    protocol_version: int
    magic: int
    max_payload: int
    labels_crc32: int
    protocol_crc32: int

    @functools.cached_property
    def label_by_id(self) -> dict[int, Label]:
        return {label.id: label for label in self.labels}

    @functools.cached_property
    def label_by_name(self) -> dict[str, Label]:
        return {label.name: label for label in self.labels}

    def label_ids(self, category: str) -> frozenset[int]:
        """Ids of every label of one category (e.g. all step labels)."""
        return frozenset(l.id for l in self.labels if l.category == category)

    def group_applies(self, key_exchange: str, group: int) -> bool:
        """Whether a suite of this key exchange (SUITES `key_exchange`; "ECDHE-PSK" counts as
        ECDHE) takes the group: 0 (the agent's default) always; else by [key_exchange]."""
        kex = self.key_exchanges.get(key_exchange.split("-")[0].upper())
        return group == 0 or (kex is not None and kex.applies(group))

    def group_family(self, group: int) -> str | None:
        """The [group_family] a group value belongs to (None: 0, the agent's default)."""
        return next((name for name, values in self.group_families.items() if group in values), None)

    @property
    def metric_choices(self) -> list[str]:
        """The words a plan's `metrics` list takes, in declaration order."""
        return list(dict.fromkeys(m.plan for m in self.metrics.values()))

    def collects_for(self, choices: Sequence[str]) -> list[str]:
        """The kinds of repetition the chosen metrics need, time first."""
        wanted = {m.collect for m in self.metrics.values() if m.plan in choices}
        return [c for c in self.collects if c in wanted]

    def flag_names(self, mask: int) -> list[str]:
        return [name for name, bit in self.flags.by_name.items() if mask & bit]

    def check_agent(self, hello: Mapping[str, Any], advice: str = "rebuild it with make") -> None:
        """Refuse an agent whose HELLO says it was built from other spec files; `advice` says
        what to rebuild (a firmware: `tlsbench build firmware`)."""
        theirs = (hello.get("labels_crc32"), hello.get("protocol_crc32"), hello.get("protocol"))
        ours = (self.labels_crc32, self.protocol_crc32, self.protocol_version)
        if theirs != ours:
            raise SpecMismatch(
                f"agent {hello.get('agent', '?')} built from other specs "
                f"(labels crc {theirs[0]}, protocol crc {theirs[1]}, protocol {theirs[2]}; "
                f"this host: {ours[0]}, {ours[1]}, {ours[2]}): {advice}"
            )


def _table(section: str, raw: Mapping[str, Any], key: str | None = None) -> NameTable:
    """A [section] of plain `name = value` pairs, or of inline tables with `key` and meaning."""
    if key is None:
        return NameTable(section, dict(raw), {})
    return NameTable(
        section,
        {name: entry[key] for name, entry in raw.items()},
        {name: entry.get("meaning", "") for name, entry in raw.items()},
    )


def _group_families(proto: Mapping[str, Any]) -> dict[str, range]:
    return {name: range(f["first"], f["last"] + 1) for name, f in proto["group_family"].items()}


def _key_exchanges(proto: Mapping[str, Any]) -> dict[str, KeyExchange]:
    families = _group_families(proto)
    return {name.upper(): KeyExchange(name, tuple(families[f] for f in k["families"]), k["default"], k["takes"])
            for name, k in proto["key_exchange"].items()}


def parse(labels_bytes: bytes, protocol_bytes: bytes) -> Spec:
    """Builds a Spec from the two files' bytes (their CRC-32 is taken on exactly these)."""
    labels = tomllib.loads(labels_bytes.decode())
    proto = tomllib.loads(protocol_bytes.decode())
    flags = {name: 1 << entry["bit"] for name, entry in proto["flags"].items()}
    options = {name: 1 << entry["bit"] for name, entry in proto.get("options", {}).items()}
    return Spec(
        labels=tuple(Label(**entry) for entry in labels["label"]),
        categories=dict(labels["categories"]),
        kinds=_table("kind", labels["kinds"]),
        peers=_table("peer", labels["peers"]),
        frames=_table("frame type", proto["frame"], "value"),
        frame_senders={name: entry["from"] for name, entry in proto["frame"].items()},
        status=_table("status", proto["status"], "value"),
        flags=NameTable("flag", flags, {n: e.get("meaning", "") for n, e in proto["flags"].items()}),
        options=NameTable("RUN option", options,
                          {n: e.get("meaning", "") for n, e in proto.get("options", {}).items()}),
        directions=_table("direction", proto["direction"]),
        credentials=_table("credential", proto["credential"]),
        transports=_table("transport", proto["transport"]),
        roles=_table("role", proto["role"]),
        protocol_kinds=_table("protocol kind", proto["protocol_kind"]),
        groups=_table("group", proto["group"]),
        network=dict(proto["network"]),
        key_exchanges=_key_exchanges(proto),
        group_families=_group_families(proto),
        layouts={name: _layout(name, raw) for name, raw in proto["layout"].items()},
        collects=_table("collect", proto["collect"], "value"),
        metrics={name: Metric(name, m["plan"], m["unit"], m["aggregation"], m["collect"], m["meaning"],
                              dict(m.get("labels", {})))
                 for name, m in proto["metric"].items()},
        protocol_version=proto["protocol"]["version"],
        magic=proto["protocol"]["magic"],
        max_payload=proto["protocol"]["max_payload"],
        labels_crc32=zlib.crc32(labels_bytes),
        protocol_crc32=zlib.crc32(protocol_bytes),
    )


@functools.cache
def load(directory: Path = SPEC_DIR) -> Spec:
    """The spec, read once per process."""
    return parse((directory / LABELS_FILE).read_bytes(), (directory / PROTOCOL_FILE).read_bytes())
