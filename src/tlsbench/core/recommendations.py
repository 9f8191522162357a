# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/recommendations.toml: which suites are recommended for a constrained
device and which are obsolete (each with why and its sources), and the key-exchange class of
a configuration (PSK, ECDHE-PSK, ECDHE-ECDSA, ..., TLS 1.3 per group). The report's first
screen, `tlsbench suites` and the exports read it from here."""
from __future__ import annotations

import fnmatch
import functools
import tomllib
from dataclasses import dataclass
from typing import Any, Mapping

from tlsbench.core.spec import SPEC_DIR

RECOMMENDATIONS_FILE = "recommendations.toml"
RECOMMENDED, OTHER, OBSOLETE = "recommended", "other", "obsolete"
STATUSES = (RECOMMENDED, OTHER, OBSOLETE)  # the order a report shows them in
MATCHED = ("id", "key_exchange", "authentication", "cipher", "mac", "max_version", "credential")
DATAGRAM = "dtls"  # a configuration's protocol (or a network variant's) that makes a class DTLS


@dataclass(frozen=True)
class Rule:
    """One [[status]] or [[class]]: the fields it matches (a list of patterns each)."""

    match: tuple[tuple[str, tuple[Any, ...]], ...]

    def matches(self, suite: Mapping[str, Any]) -> bool:
        return all(any(_fits(suite.get(field), p) for p in patterns) for field, patterns in self.match)


def _fits(value: Any, pattern: Any) -> bool:
    if isinstance(pattern, int):
        return value == pattern
    return value is not None and fnmatch.fnmatchcase(str(value), str(pattern))


@dataclass(frozen=True)
class Status:
    """What the declaration says of a suite."""

    name: str  # STATUSES
    why: str = ""
    cite: tuple[str, ...] = ()  # "RFC 7925 Section 4.2", a source's name and the section

    @property
    def rank(self) -> int:
        return STATUSES.index(self.name)


@dataclass(frozen=True)
class Policy:
    sources: Mapping[str, str]
    statuses: tuple[tuple[Rule, Status], ...]
    classes: tuple[tuple[Rule, str], ...]

    def status(self, suite: Mapping[str, Any]) -> Status:
        """A suite's status (SUITES metadata, or a configuration row's fields with `id`)."""
        return next((s for rule, s in self.statuses if rule.matches(suite)), Status(OTHER))

    def key_exchange_class(self, suite: Mapping[str, Any], group: str = "", protocol: str | None = None
                           ) -> tuple[int, str] | None:
        """The class a configuration belongs to, as (its place in the declaration, its label:
        "PSK (TLS 1.2)", "TLS 1.3 certificate, x25519"); None when its key exchange is in
        none (the obsolete ones)."""
        found = next(((i, label) for i, (rule, label) in enumerate(self.classes) if rule.matches(suite)), None)
        if found is None:
            return None
        group = "default group" if group in ("", "default") else group
        dtls = protocol == DATAGRAM
        return found[0] + (len(self.classes) if dtls else 0), found[1].format(group=group, tls="DTLS" if dtls else "TLS")

    def cited(self, status: Status) -> str:
        """Its sources in words: "RFC 7925, TLS/DTLS Profiles ... Section 4.2"."""
        return "; ".join(_cite(self.sources, c) for c in status.cite)

    @property
    def rules(self) -> list[Status]:
        """Every status the declaration gives, in order (the report's "why" list)."""
        return [s for _, s in self.statuses]


def _cite(sources: Mapping[str, str], ref: str) -> str:
    key, _, section = ref.partition(" ")
    return f"{sources[key].split(',')[0]} {section}".strip()


def _rule(raw: Mapping[str, Any], where: str) -> Rule:
    unknown = set(raw) - set(MATCHED) - {"status", "why", "cite", "label"}
    if unknown:
        raise ValueError(f"{RECOMMENDATIONS_FILE}: {where}: unknown field(s) {', '.join(sorted(unknown))}")
    return Rule(tuple((f, tuple(raw[f])) for f in MATCHED if f in raw))


@functools.cache
def load() -> Policy:
    raw = tomllib.loads((SPEC_DIR / RECOMMENDATIONS_FILE).read_text())
    sources = raw["source"]
    statuses = []
    for i, s in enumerate(raw["status"]):
        if s["status"] not in (RECOMMENDED, OBSOLETE):
            raise ValueError(f"{RECOMMENDATIONS_FILE}: status {i + 1}: status is recommended or obsolete")
        missing = [c for c in s["cite"] if c.split(" ")[0] not in sources]
        if missing:
            raise ValueError(f"{RECOMMENDATIONS_FILE}: status {i + 1}: cites unknown source(s) {missing}")
        statuses.append((_rule(s, f"status {i + 1}"), Status(s["status"], s["why"], tuple(s["cite"]))))
    classes = tuple((_rule(c, f"class {c['label']!r}"), c["label"]) for c in raw["class"])
    return Policy(sources, tuple(statuses), classes)


def suite_fields(config: Any) -> dict[str, Any]:
    """A configuration row's fields as a [[status]] or [[class]] matches them."""
    return {"id": config.suite_id, "key_exchange": config.key_exchange, "authentication": config.authentication,
            "cipher": config.cipher, "mac": config.mac, "max_version": config.max_version,
            "credential": config.credential}
