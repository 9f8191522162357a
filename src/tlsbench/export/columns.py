# SPDX-License-Identifier: Apache-2.0
"""The configuration as key columns: one declaration shared by every tabular export (the
statistics CSV, the tidy repetition and slice tables, the Python API). Each field is its
own column; the report's display name stays as the extra column `config`. A column that is
a stored one takes its meaning from the store's declaration (schema/tables.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tlsbench.core import targets
from tlsbench.schema import CONFIG, Table

from tlsbench.analysis.derive.dataset import Config, Dataset
from tlsbench.analysis.questions.primitives import scenario_parameters
from tlsbench.schema.kinds import ConfigKind

TYPES = {int: "int", str: "str", float: "float", bytes: "bytes"}


@dataclass(frozen=True)
class Column:
    """One exported column: its name, type ("int", "float", "str", "bool") and meaning."""

    name: str
    type: str
    meaning: str


def stored(table: Table, column: str, name: str | None = None, note: str = "") -> Column:
    """An exported column that is a stored one (named `name` in exports), with the store's
    meaning and type."""
    c = table.column(column)
    return Column(name or column, TYPES[c.type], c.meaning + note)


def _of_config(column: str, name: str | None = None) -> tuple[str, str, str]:
    c = stored(CONFIG, column, name)
    return c.name, c.type, c.meaning


def protocol_of(c: Config) -> str:
    """TLS or DTLS: a device configuration names it, a network one by its transport."""
    if c.protocol:
        return c.protocol.upper()
    return "DTLS" if c.transport == "udp" else "TLS"


# The exported `kind`: the configuration kinds (schema/kinds.py) an export tells apart.
EXPORTED_KINDS = {ConfigKind.EXPERIMENT: "experiment", ConfigKind.DEVICE_EXPERIMENT: "experiment",
                  ConfigKind.FOOTPRINT: "footprint"}


def kind_of(c: Config) -> str:
    """handshake, experiment (primitives, user experiments) or footprint (a memory image)."""
    return EXPORTED_KINDS.get(c.kind, "handshake")


@dataclass(frozen=True)
class Versions:
    """What the agents' HELLOs say of each library and counter (per configuration library)."""

    version: dict[str, str]
    unit: dict[tuple[str, str], str]
    core: dict[tuple[str, str], str]  # a device's core (HELLO device.cpu) per (library, target)


def versions(ds: Dataset) -> Versions:
    version, unit, core = {}, {}, {}
    for a in ds.agents.values():
        hello = a.get("hello") or {}
        place = (a["library"], a.get("target") or "")
        version.setdefault(a["library"], str(hello.get("library_version", "")))
        unit.setdefault(place, str((hello.get("clock") or {}).get("unit", "ns")))
        core.setdefault(place, str((hello.get("device") or {}).get("cpu") or ""))
    emulated = targets.load().emulated
    for c in ds.configs.values():  # a lane that never booted (no image for its target): what its HELLO would say
        if c.target in emulated:
            unit.setdefault((c.library, c.target), emulated[c.target].counter.unit)
            core.setdefault((c.library, c.target), emulated[c.target].cpu)
    return Versions(version, unit, core)


# name, type, meaning, value of (configuration, display name, versions)
_CONFIG: tuple[tuple[str, str, str, Callable[[Config, str, Versions], Any]], ...] = (
    (*_of_config("id", "config_id"), lambda c, d, v: c.id),
    (*_of_config("key", "config_key"), lambda c, d, v: c.key),
    ("config", "str", "The report's display name (suite plus the fields that vary).", lambda c, d, v: d),
    ("kind", "str", "handshake, experiment (crypto primitives, user experiments) or footprint (a device's memory image).",
     lambda c, d, v: kind_of(c)),
    (*_of_config("library"), lambda c, d, v: c.library),
    ("library_version", "str", "The library's version as its agent reports it (HELLO library_version).",
     lambda c, d, v: v.version.get(c.library, "")),
    (*_of_config("suite_id"), lambda c, d, v: c.suite_id),
    (*_of_config("suite_name"), lambda c, d, v: c.suite_name),
    (*_of_config("key_exchange"), lambda c, d, v: c.key_exchange),
    (*_of_config("authentication"), lambda c, d, v: c.authentication),
    (*_of_config("cipher"), lambda c, d, v: c.cipher),
    (*_of_config("mac"), lambda c, d, v: c.mac),
    (*_of_config("min_version"), lambda c, d, v: c.min_version),
    (*_of_config("max_version"), lambda c, d, v: c.max_version),
    (*_of_config("grp", "group"), lambda c, d, v: c.grp),
    (*_of_config("credential"), lambda c, d, v: c.credential),
    (*_of_config("transport"), lambda c, d, v: c.transport),
    ("protocol", "str", "TLS or DTLS.", lambda c, d, v: protocol_of(c)),
    (*_of_config("direction"), lambda c, d, v: c.direction),
    (*_of_config("total_bytes"), lambda c, d, v: c.total_bytes),
    (*_of_config("record_size"), lambda c, d, v: c.record_size),
    (*_of_config("repetitions", "planned_repetitions"), lambda c, d, v: c.repetitions),
    (*_of_config("device_role", "role"), lambda c, d, v: c.device_role or ""),
    (*_of_config("peer_library"), lambda c, d, v: c.peer_library or ""),
    ("link", "str", "Two-process configurations: the link (loopback, or the emulated link's label).",
     lambda c, d, v: c.link_label or ("loopback" if c.network_json else "")),
    (*_of_config("network_json", "network"), lambda c, d, v: c.network_json or ""),
    (*_of_config("target"), lambda c, d, v: c.target or ""),
    ("core", "str", "A device configuration's core as its firmware reports it (HELLO device.cpu, e.g. cortex-m4); "
     "empty on the host.", lambda c, d, v: v.core.get((c.library, c.target), "") if c.target else ""),
    (*_of_config("image"), lambda c, d, v: c.image or ""),
    (*_of_config("experiment"), lambda c, d, v: c.experiment or ""),
    (*_of_config("experiment_source"), lambda c, d, v: c.experiment_source or ""),
    ("scenario_hash", "str", "Sender/receiver scenarios: the hash (sha256, sha3-256); empty otherwise.",
     lambda c, d, v: (scenario_parameters(c.experiment) or ("", ""))[0]),
    ("scenario_signature", "str", "Sender/receiver scenarios: the signature (ecdsa-p256, ecdsa-secp256k1, ed25519, "
     "rsa2048); empty otherwise.", lambda c, d, v: (scenario_parameters(c.experiment) or ("", ""))[1]),
    ("counter_unit", "str", "The counter unit of every time column of this configuration: ns on a host, the device's "
     "count (instructions, cycles) on a device.", lambda c, d, v: v.unit.get((c.library, c.target or ""), "ns")),
    (*_of_config("skip_reason"), lambda c, d, v: c.skip_reason or ""),
)

CONFIG_COLUMNS: tuple[Column, ...] = tuple(Column(n, t, m) for n, t, m, _ in _CONFIG)


def config_values(c: Config, display: str, v: Versions) -> list[Any]:
    """One configuration's values, in CONFIG_COLUMNS order."""
    return [get(c, display, v) for _, _, _, get in _CONFIG]


def config_records(ds: Dataset, labels: dict[int, str]) -> dict[int, list[Any]]:
    """Configuration id -> its CONFIG_COLUMNS values."""
    v = versions(ds)
    return {cid: config_values(c, labels.get(cid, c.suite_name), v) for cid, c in sorted(ds.configs.items())}
