# SPDX-License-Identifier: Apache-2.0
"""Post-quantum and classical side by side: per library, one row per measured group ×
credential (and whatever else the plan varied), with each peer's handshake processing, its
key-exchange and signature crypto, the bytes of every flight, and the processing relative
to the same configuration with a classical group. Read off the Results rows (measures.py
defines each measure); the report's section and docs/report.md show them."""
from __future__ import annotations

from dataclasses import dataclass, field

from tlsbench.core import spec as specmod
from tlsbench.analysis.derive.dataset import Config
from tlsbench.analysis.stats.stats import Summary

PEERS = ("client", "server")
# What a group family ([group_family] in spec/protocol.toml) is, as this section groups them.
FAMILY_KIND = {"ec": "classical", "ff": "classical", "kem": "post-quantum", "hybrid": "hybrid",
               "kyber_hybrid": "hybrid"}
# Credentials that are not classical certificates (the rest: RSA, ECDSA, EdDSA chains).
CREDENTIAL_KIND = {"mldsa44": "post-quantum", "mldsa65": "post-quantum", "mldsa87": "post-quantum", "psk": "PSK"}
CLASSICAL = "classical"
# The per-peer measures of a row: attribute -> metric (Results rows).
PER_PEER = {"processing": "handshake_processing", "key_exchange": "key_exchange_crypto",
            "signature": "signature_crypto", "bytes": "handshake_bytes"}


@dataclass(frozen=True)
class KexRow:
    """One configuration: its group and credential, and what they cost each peer."""

    config_id: int
    group: str
    group_kind: str        # classical, hybrid, post-quantum (FAMILY_KIND); "default" for the agent's
    credential: str
    credential_kind: str   # classical, post-quantum, PSK
    detail: str            # the configuration's name when group × credential is not unique
    processing: dict[str, Summary | None]
    key_exchange: dict[str, Summary | None]
    signature: dict[str, Summary | None]
    bytes: dict[str, Summary | None]
    flights: dict[int, Summary]          # flight number -> bytes (odd: client, even: server)
    vs_classical: dict[str, float]       # processing median / the classical baseline's (nan: none)
    steps: dict[tuple[str, str], Summary]  # (peer, step label) -> processing

    @property
    def post_quantum(self) -> bool:
        return self.group_kind != CLASSICAL and self.group_kind != "default" or self.credential_kind == "post-quantum"


@dataclass
class KexTable:
    """One library's rows, classical groups first."""

    library: str
    rows: list[KexRow] = field(default_factory=list)

    @property
    def flights(self) -> list[int]:
        return sorted({n for r in self.rows for n in r.flights})

    def steps(self, peer: str) -> list[str]:
        """The peer's step labels any row measured, in the spec's label order."""
        order = {label.name: label.id for label in specmod.load().labels}
        return sorted({label for r in self.rows for p, label in r.steps if p == peer}, key=lambda n: order.get(n, 0))


def group_kind(group: str) -> str:
    s = specmod.load()
    family = s.group_family(s.groups.value(group)) if group in s.groups.by_name else None
    return FAMILY_KIND.get(family or "", "default")


def credential_kind(credential: str) -> str:
    return CREDENTIAL_KIND.get(credential, CLASSICAL)


def _baseline_key(c: Config) -> str:
    """The configuration with its group left out: rows sharing it differ by group only."""
    parts = c.key.split("|")
    return "|".join(parts[:2] + ["*"] + parts[3:])


class _Index:
    """The Results rows by (config, metric, peer, label), looked up once each."""

    def __init__(self, results) -> None:
        self.rows = {(r.config_id, r.metric, r.peer, r.label): r for r in results.rows}
        self.flights: dict[int, dict[int, Summary]] = {}
        self.steps: dict[int, dict[tuple[str, str], Summary]] = {}
        for r in results.rows:
            if r.metric == "flight_bytes":
                self.flights.setdefault(r.config_id, {})[int(r.label.split()[-1])] = r.summary
            elif r.metric == "step":
                self.steps.setdefault(r.config_id, {})[(r.peer, r.label)] = r.summary

    def summary(self, cid: int | None, metric: str, peer: str) -> Summary | None:
        row = self.rows.get((cid, metric, peer, ""))
        return row.summary if row else None


def _ratio(mine: Summary | None, base: Summary | None) -> float:
    return mine.median / base.median if mine and base and base.median else float("nan")


def _row(index: _Index, c: Config, detail: str, baseline: int | None) -> KexRow:
    per_peer = {attr: {p: index.summary(c.id, metric, p) for p in PEERS} for attr, metric in PER_PEER.items()}
    ratios = {p: _ratio(per_peer["processing"][p], index.summary(baseline, "handshake_processing", p)) for p in PEERS}
    return KexRow(c.id, c.grp, group_kind(c.grp), c.credential, credential_kind(c.credential), detail, **per_peer,
                  flights=index.flights.get(c.id, {}), vs_classical=ratios, steps=index.steps.get(c.id, {}))


def _measured(index: _Index, c: Config) -> bool:
    return c.experiment is None and any(index.summary(c.id, "handshake_processing", p) for p in PEERS)


def _order(c: Config, groups: list[str], credentials: list[str]) -> tuple:
    kinds = ("classical", "hybrid", "post-quantum", "default")
    return (credentials.index(c.credential), kinds.index(group_kind(c.grp)), groups.index(c.grp), c.key)


def _baseline(c: Config, others: list[Config]) -> int | None:
    """The first configuration of the same library that differs from c only by a classical group."""
    return next((o.id for o in others if o.library == c.library and group_kind(o.grp) == CLASSICAL
                 and _baseline_key(o) == _baseline_key(c)), None)


def kex_tables(results, libraries: list[str] | None = None) -> list[KexTable]:
    """Per library (in `libraries`' order, else as measured), its handshake configurations as
    KexRows; [] when no configuration measured a post-quantum or hybrid group or credential."""
    index = _Index(results)
    measured = [c for c in results.configs.values() if _measured(index, c)]
    groups = list(dict.fromkeys(c.grp for c in measured))
    credentials = list(dict.fromkeys(c.credential for c in measured))
    measured.sort(key=lambda c: _order(c, groups, credentials))
    tables = {lib: KexTable(lib) for lib in [*(libraries or []), *(c.library for c in measured)]}
    for c in measured:
        twins = sum((o.library, o.grp, o.credential) == (c.library, c.grp, c.credential) for o in measured)
        detail = results.config_labels[c.id] if twins > 1 else ""
        tables[c.library].rows.append(_row(index, c, detail, _baseline(c, measured)))
    out = [t for t in tables.values() if t.rows]
    return out if any(r.post_quantum for t in out for r in t.rows) else []
