# SPDX-License-Identifier: Apache-2.0
"""Bytes per flight and per record, beside what the IETF's comparison computes
(spec/wire_reference.toml: draft-ietf-iotops-security-protocol-comparison). One row per
handshake configuration that traced its flights: the median bytes of each flight (odd: the
client's, even: the server's; what both traced peers handed to their transport), their sum,
the bytes a protected record added to its plaintext (measures.py `record_overhead`), and the
draft's figures for the same protocol, authentication and connection ID where it has them.
The link-layer frames a handshake took are the network section's (questions/network.py)."""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass

from tlsbench.analysis.derive.dataset import Config
from tlsbench.analysis.stats.stats import Summary
from tlsbench.core import spec as specmod
from tlsbench.core.spec import SPEC_DIR

REFERENCE_FILE = "wire_reference.toml"
DRAFT_FLIGHTS = 3  # the draft counts ClientHello; ServerHello .. Finished; the client's last flight


@dataclass(frozen=True)
class Reference:
    """The draft's figures for one protocol, authentication and connection ID."""

    flights: tuple[int, ...]  # #1 client, #2 server, #3 client
    record_overhead: int | None

    @property
    def total(self) -> int:
        return sum(self.flights)


@dataclass(frozen=True)
class WireRow:
    """One configuration's bytes on the wire."""

    config_id: int
    label: str
    protocol: str  # DTLS1.3, TLS1.2, ...
    authentication: str  # rpk-mutual, rpk, certificate-mutual, certificate, psk-ecdhe, psk
    cid: bool
    cipher: str
    flights: dict[int, Summary]  # flight number -> bytes
    record_overhead: Summary | None
    reference: Reference | None

    @property
    def both_peers(self) -> bool:
        """Both peers' flights were traced (one agent ran both, or both agents' traces are kept)."""
        return any(n % 2 for n in self.flights) and any(n % 2 == 0 for n in self.flights)

    @property
    def total(self) -> float | None:
        """Every flight's bytes, acknowledgements included; None with one peer traced."""
        return sum(s.median for s in self.flights.values()) if self.both_peers else None

    @property
    def draft_flights(self) -> dict[int, float]:
        """The measured flights as the draft counts them: the client's first, everything the
        server sent before the client's second flight, the client's second (later flights: the
        acknowledgements and tickets the draft leaves out)."""
        return {n: self.flights[n].median for n in range(1, DRAFT_FLIGHTS + 1) if n in self.flights}

    @property
    def later(self) -> float:
        """Bytes of the flights after the draft's three (DTLS 1.3 acknowledgements, tickets)."""
        return sum(s.median for n, s in self.flights.items() if n > DRAFT_FLIGHTS)

    @property
    def differences(self) -> list[str]:
        """Why the measured bytes differ from the draft's, from what the configuration is."""
        out = []
        if not self.cipher.endswith("CCM-8"):
            out.append(f"{self.cipher}'s 16-byte tag: 8 bytes more per protected record than CCM_8's")
        if 1 in self.flights and self.reference and self.reference.flights:
            extra = self.flights[1].median - self.reference.flights[0]
            out.append(f"ClientHello {extra:+.0f} bytes: the suites, groups, signature algorithms and extensions "
                       "the library offers beyond the mandatory ones")
        if self.later:
            out.append(f"{self.later:.0f} bytes in later flights (acknowledgements) the draft does not count")
        if self.protocol.startswith("DTLS1.3"):
            out.append("each handshake message in a record of its own, each with a unified header carrying a "
                       "16-bit sequence number and the length (the draft: one record, 8-bit sequence, no length)")
        return out


@dataclass(frozen=True)
class WireSection:
    rows: list[WireRow]
    source: dict[str, str]  # the draft: document, url, assumptions, figures


@functools.cache
def reference() -> dict:
    return tomllib.loads((SPEC_DIR / REFERENCE_FILE).read_text())


def protocol(c: Config) -> str:
    """The version a configuration ran: the suite's, DTLS over datagrams."""
    version = c.max_version.replace("TLS", "")
    return f"DTLS{version}" if c.transport == "udp" or c.protocol == "dtls" else f"TLS{version}"


def authentication(c: Config) -> str:
    """How the peers authenticated, in the draft's terms (with the certificate cases it has none for)."""
    s = specmod.load()
    options = c.options or 0
    mutual = "-mutual" if options & s.options.value("MUTUAL_AUTH") else ""
    if c.credential == "psk":
        return "psk" if options & s.options.value("PSK_ONLY") or c.key_exchange == "PSK" else "psk-ecdhe"
    return ("rpk" if c.credential.startswith("rpk-") else "certificate") + mutual


def draft(proto: str, auth: str, cid: bool) -> Reference | None:
    ref = reference()
    flights = next((tuple(h["flights"]) for h in ref["handshake"]
                    if (h["protocol"], h["authentication"], h["cid"]) == (proto, auth, cid)), None)
    overhead = next((r["overhead"] for r in ref["record"] if (r["protocol"], r["cid"]) == (proto, cid)), None)
    return Reference(flights, overhead) if flights else (Reference((), overhead) if overhead else None)


def wire_section(results) -> WireSection | None:
    """The rows of every handshake configuration with traced flights; None when none has."""
    flights: dict[int, dict[int, Summary]] = {}
    overhead: dict[int, Summary] = {}
    for r in results.rows:
        if r.metric == "flight_bytes":
            flights.setdefault(r.config_id, {})[int(r.label.split()[-1])] = r.summary
        elif r.metric == "record_overhead" and (r.peer == "client" or r.config_id not in overhead):
            overhead[r.config_id] = r.summary  # the client's records, else the one peer's
    cid_bit = specmod.load().options.value("CONNECTION_ID")
    rows = []
    for cid, c in results.configs.items():
        if cid not in flights or c.experiment is not None:
            continue
        proto, auth, with_cid = protocol(c), authentication(c), bool((c.options or 0) & cid_bit)
        rows.append(WireRow(cid, results.config_labels[cid], proto, auth, with_cid, c.cipher,
                            dict(sorted(flights[cid].items())), overhead.get(cid), draft(proto, auth, with_cid)))
    return WireSection(rows, reference()["source"]) if rows else None
