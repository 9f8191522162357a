# SPDX-License-Identifier: Apache-2.0
"""The configuration as key columns: one declaration shared by every tabular export (the
statistics CSV, the tidy repetition and slice tables, the Python API). Each field is its
own column; the report's display name stays as the extra column `config`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tlsbench.analysis.derive.load import Config, Dataset
from tlsbench.analysis.questions.primitives import scenario_parameters
from tlsbench.plan.kinds import ConfigKind


@dataclass(frozen=True)
class Column:
    """One exported column: its name, type ("int", "float", "str", "bool") and meaning."""

    name: str
    type: str
    meaning: str


def protocol_of(c: Config) -> str:
    """TLS or DTLS: a device configuration names it, a network one by its transport."""
    if c.protocol:
        return c.protocol.upper()
    return "DTLS" if c.transport == "udp" else "TLS"


# The exported `kind`: the configuration kinds (plan/kinds.py) an export tells apart.
EXPORTED_KINDS = {ConfigKind.EXPERIMENT: "experiment", ConfigKind.FOOTPRINT: "footprint"}


def kind_of(c: Config) -> str:
    """handshake, experiment (primitives, user experiments) or footprint (a memory image)."""
    return EXPORTED_KINDS.get(c.kind, "handshake")


@dataclass(frozen=True)
class Versions:
    """What the agents' HELLOs say of each library and counter (per configuration library)."""

    version: dict[str, str]
    unit: dict[str, str]


def versions(ds: Dataset) -> Versions:
    version, unit = {}, {}
    for a in ds.agents.values():
        hello = a.get("hello") or {}
        version.setdefault(a["library"], str(hello.get("library_version", "")))
        unit.setdefault((a["library"], a.get("target") or ""), str((hello.get("clock") or {}).get("unit", "ns")))
    return Versions(version, unit)


# name, type, meaning, value of (configuration, display name, versions)
_CONFIG: tuple[tuple[str, str, str, Callable[[Config, str, Versions], Any]], ...] = (
    ("config_id", "int", "The store's configuration id.", lambda c, d, v: c.id),
    ("config_key", "str", "The configuration's key: stable across resumes and between experiments of one plan.",
     lambda c, d, v: c.key),
    ("config", "str", "The report's display name (suite plus the fields that vary).", lambda c, d, v: d),
    ("kind", "str", "handshake, experiment (crypto primitives, user experiments) or footprint (a device's memory image).",
     lambda c, d, v: kind_of(c)),
    ("library", "str", "The agent's library as the plan names it (mbedtls, openssl, wolfssl, name@version).",
     lambda c, d, v: c.library),
    ("library_version", "str", "The library's version as its agent reports it (HELLO library_version).",
     lambda c, d, v: v.version.get(c.library, "")),
    ("suite_id", "int", "IANA cipher suite id (0 for experiments).", lambda c, d, v: c.suite_id),
    ("suite_name", "str", "Cipher suite name (an experiment's name for experiments).", lambda c, d, v: c.suite_name),
    ("key_exchange", "str", "Key exchange of the suite (ECDHE, PSK, ...).", lambda c, d, v: c.key_exchange),
    ("authentication", "str", "Authentication of the suite (ECDSA, RSA, PSK, ...).", lambda c, d, v: c.authentication),
    ("cipher", "str", "Bulk cipher of the suite.", lambda c, d, v: c.cipher),
    ("mac", "str", "MAC / PRF hash of the suite.", lambda c, d, v: c.mac),
    ("min_version", "str", "Lowest protocol version offered.", lambda c, d, v: c.min_version),
    ("max_version", "str", "Highest protocol version offered.", lambda c, d, v: c.max_version),
    ("group", "str", "Key-exchange group (curve or KEM).", lambda c, d, v: c.grp),
    ("credential", "str", "Server credential (certificate key type, or PSK).", lambda c, d, v: c.credential),
    ("transport", "str", "memory, tcp or udp.", lambda c, d, v: c.transport),
    ("protocol", "str", "TLS or DTLS.", lambda c, d, v: protocol_of(c)),
    ("direction", "str", "Application data direction: c2s, s2c or both.", lambda c, d, v: c.direction),
    ("total_bytes", "int", "Application bytes per direction (an experiment's payload size).",
     lambda c, d, v: c.total_bytes),
    ("record_size", "int", "Application record size in bytes.", lambda c, d, v: c.record_size),
    ("planned_repetitions", "int", "Repetitions the plan asked for (before precision rounds).",
     lambda c, d, v: c.repetitions),
    ("role", "str", "Two-process configurations: the device agent's role (client or server); empty otherwise.",
     lambda c, d, v: c.device_role or ""),
    ("peer_library", "str", "Two-process configurations: the peer agent's library.", lambda c, d, v: c.peer_library or ""),
    ("link", "str", "Two-process configurations: the link (loopback, or the emulated link's label).",
     lambda c, d, v: c.link_label or ("loopback" if c.network_json else "")),
    ("network", "str", "Two-process configurations: the network variant as JSON (link parameters, MTU, ...).",
     lambda c, d, v: c.network_json or ""),
    ("target", "str", "The device the configuration ran on; empty on the host.", lambda c, d, v: c.target or ""),
    ("image", "str", "A device's firmware image: counting or memory; empty on the host.", lambda c, d, v: c.image or ""),
    ("experiment", "str", "Experiment name (crypto primitive or user experiment); empty for handshakes.",
     lambda c, d, v: c.experiment or ""),
    ("experiment_source", "str", "primitive or user; empty for handshakes.", lambda c, d, v: c.experiment_source or ""),
    ("scenario_hash", "str", "Sender/receiver scenarios: the hash (sha256, sha3-256); empty otherwise.",
     lambda c, d, v: (scenario_parameters(c.experiment) or ("", ""))[0]),
    ("scenario_signature", "str", "Sender/receiver scenarios: the signature (ecdsa-p256, ecdsa-secp256k1, ed25519, "
     "rsa2048); empty otherwise.", lambda c, d, v: (scenario_parameters(c.experiment) or ("", ""))[1]),
    ("counter_unit", "str", "The counter unit of every time column of this configuration: ns on a host, the device's "
     "count (instructions, cycles) on a device.", lambda c, d, v: v.unit.get((c.library, c.target or ""), "ns")),
    ("skip_reason", "str", "Why the controller stopped running it (agent refused), empty otherwise.",
     lambda c, d, v: c.skip_reason or ""),
)

CONFIG_COLUMNS: tuple[Column, ...] = tuple(Column(n, t, m) for n, t, m, _ in _CONFIG)


def config_values(c: Config, display: str, v: Versions) -> list[Any]:
    """One configuration's values, in CONFIG_COLUMNS order."""
    return [get(c, display, v) for _, _, _, get in _CONFIG]


def config_records(ds: Dataset, labels: dict[int, str]) -> dict[int, list[Any]]:
    """Configuration id -> its CONFIG_COLUMNS values."""
    v = versions(ds)
    return {cid: config_values(c, labels.get(cid, c.suite_name), v) for cid, c in sorted(ds.configs.items())}
