# SPDX-License-Identifier: Apache-2.0
"""The plan's `[network]` section: two agent processes over TCP (TLS) or UDP (DTLS 1.2),
on loopback or through an emulated link (docs/networks.md, docs/plan-format.md).

Lists are sweeps: every combination that applies to a transport is one configuration
(Nagle and MSS apply to TCP only, the DTLS MTU to UDP only)."""
from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from tlsbench.plan.libraries import LIBRARY_PATTERN, agent_name, canonical
from tlsbench.core.validation import Strict, as_list, no_duplicates

RATE_PATTERN = r"^[0-9]+(\.[0-9]+)?[kMG]?$"  # bit/s with the link's k, M, G suffixes
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"
MAX_FRAGMENT_CODES = {0: 0, 512: 1, 1024: 2, 2048: 3, 4096: 4}  # bytes -> RFC 6066 code
NonNegative = Annotated[float, Field(ge=0)]
Percent = Annotated[float, Field(ge=0, le=100)]


def _number(value: Any) -> Any:
    """TOML integers are fine where a float is expected (delay = 5)."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


Float = Annotated[NonNegative, BeforeValidator(_number)]
Pct = Annotated[Percent, BeforeValidator(_number)]


class LinkParams(Strict):
    """Link parameters of tlsbench-link (docs/link-emulator.md), for both directions or one."""

    rate: Annotated[str, Field(pattern=RATE_PATTERN)] | None = None  # bit/s, e.g. "250k"
    queue: Annotated[int, Field(ge=0)] | None = None  # bytes
    delay: Float | None = None  # ms, one way
    jitter: Float | None = None  # ms
    loss: Pct | None = None  # % per packet, per frame when `frame` is set
    frame: Annotated[int, Field(ge=0)] | None = None  # link-layer frame payload, bytes
    frame_overhead: Annotated[int, Field(ge=0)] | None = None
    mtu: Annotated[int, Field(ge=0)] | None = None  # the link's MTU (bigger packets are dropped)
    reorder: Pct | None = None
    reorder_delay: Float | None = None

    def args(self, prefix: str = "") -> list[str]:
        """`--[d2p-|p2d-]key value` options of `tlsbench-link run`."""
        out = []
        for key, value in self.model_dump(exclude_none=True).items():
            if key in LinkParams.model_fields:
                out += [f"--{prefix}{key.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
        return out


class Link(LinkParams):
    """One emulated link: a preset, then parameters overriding it (both directions, then
    d2p = device -> peer and p2d = peer -> device)."""

    name: Annotated[str, Field(min_length=1, max_length=60)] | None = None  # label in the report
    preset: Annotated[str, Field(pattern=NAME_PATTERN)] | None = None  # `tlsbench-link presets`
    d2p: LinkParams | None = None
    p2d: LinkParams | None = None

    def run_args(self) -> list[str]:
        preset = ["--preset", self.preset] if self.preset else []
        return (preset + self.args() + (self.d2p.args("d2p-") if self.d2p else [])
                + (self.p2d.args("p2d-") if self.p2d else []))

    def label(self) -> str:
        """The link's name, or its preset and overrides: "ieee802154 loss=5"."""
        if self.name:
            return self.name
        args = self.run_args()
        parts = [self.preset] if self.preset else []
        rest = args[2:] if self.preset else args
        parts += [f"{k.removeprefix('--')}={v}" for k, v in zip(rest[::2], rest[1::2])]
        return " ".join(parts) or "unshaped"


class Dtls(Strict):
    cookies: bool = False  # the server demands a cookie (HelloVerifyRequest)
    timeout_min_ms: Annotated[int, Field(ge=0, le=65535)] = 0  # initial retransmission timeout; 0 = the library's
    timeout_max_ms: Annotated[int, Field(ge=0, le=65535)] = 0
    mtu: Annotated[list[Annotated[int, Field(ge=0, le=65535)]], BeforeValidator(as_list), Field(min_length=1)] = [0]

    @field_validator("mtu")
    @classmethod
    def _mtus(cls, value: list[int]) -> list[int]:
        if any(0 < v < 256 for v in value):
            raise ValueError("a DTLS handshake MTU is 0 (the library's) or at least 256 bytes")
        return no_duplicates(value)

    @model_validator(mode="after")
    def _timer_order(self) -> "Dtls":
        """The retransmission timer starts at min and doubles up to max: min > max is a typo
        every library would reject (or silently swap) at run time."""
        if self.timeout_min_ms and self.timeout_max_ms and self.timeout_min_ms > self.timeout_max_ms:
            raise ValueError(f"timeout_min_ms ({self.timeout_min_ms}) is above timeout_max_ms "
                             f"({self.timeout_max_ms}): the timer starts at min and doubles up to max")
        return self


Role = Literal["client", "server"]
Transport = Literal["tcp", "udp"]
# The backends whose steps an agent paces (agent/src/core/pace.c; wolfSSL's step is a turn).
PACED_LIBRARIES = ("mbedtls", "mbedtls@3.6", "wolfssl", "wolfssl@5.7")


class Pace(Strict):
    """`pace`: the host agents take each handshake step as long as `board` takes by the cycle
    model, from the per-step counts of the same configurations in the device run `from`
    (docs/networks.md "Paced peers")."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)

    board: str  # spec/boards.toml
    side: Literal["device", "both"] = "device"  # the device agent (the plan's library), or both agents
    source: Annotated[str, Field(alias="from", min_length=1)]  # a device experiment: folder, store or name

    @field_validator("board")
    @classmethod
    def _board(cls, value: str) -> str:
        from tlsbench.core.boards import boards

        if value not in boards():
            raise ValueError(f"unknown board {value!r}: one of {', '.join(sorted(boards()))} (spec/boards.toml)")
        return value


class NetworkPlan(Strict):
    """`[network]`: the device (the plan's library) against a peer agent over real sockets."""

    transports: Annotated[list[Transport], BeforeValidator(as_list), Field(min_length=1)] = ["tcp"]
    device: Annotated[list[Role], BeforeValidator(as_list), Field(min_length=1)] = ["client"]
    peer_library: Annotated[str, Field(pattern=LIBRARY_PATTERN)] | None = None  # default: the device's library
    nagle: Annotated[list[bool], BeforeValidator(as_list), Field(min_length=1)] = [True]
    quickack: bool = False
    mss: Annotated[list[Annotated[int, Field(ge=0, le=65535)]], BeforeValidator(as_list), Field(min_length=1)] = [0]
    max_fragment: Annotated[list[int], BeforeValidator(as_list), Field(min_length=1)] = [0]  # bytes, RFC 6066
    sack: bool = True  # net.ipv4.tcp_sack in both namespaces (links only)
    tun_mtu: Annotated[int, Field(ge=576, le=65535)] = 1500  # the namespaces' interface MTU (links only)
    dtls: Dtls = Dtls()
    links: Annotated[list[Link], BeforeValidator(as_list)] = []  # none: loopback, no emulator, no root
    link_seed: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None  # default: the plan's seed
    pace: Pace | None = None  # None: both agents at the host's speed

    @field_validator("transports", "device", "nagle", "mss", "links")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        return no_duplicates(value)

    @field_validator("max_fragment")
    @classmethod
    def _fragments(cls, value: list[int]) -> list[int]:
        bad = [v for v in value if v not in MAX_FRAGMENT_CODES]
        if bad:
            raise ValueError(f"{bad[0]} is not a max_fragment_length: allowed 0 (none), 512, 1024, 2048, 4096")
        return no_duplicates(value)

    @field_validator("peer_library")
    @classmethod
    def _canonical_peer(cls, value: str | None) -> str | None:
        return canonical(value) if value else value  # openssl-3.5 is openssl@3.5 (plan/libraries.py)


@dataclass(frozen=True)
class Variant:
    """The network half of one configuration."""

    transport: str  # tcp | udp
    device_role: str  # client | server: the peer the plan's library plays
    peer_library: str | None  # None: the device's library
    link: Link | None  # None: loopback
    nagle: bool = True
    mss: int = 0
    dtls_mtu: int = 0
    max_fragment: int = 0

    @property
    def protocol(self) -> str:
        return "dtls" if self.transport == "udp" else "tls"

    def describe(self) -> dict[str, Any]:
        """What the config row's network_json holds (and what its key is made of): the peer
        by its agent's name, as keys had it before `name@version`."""
        out = asdict(self)
        out["peer_library"] = agent_name(self.peer_library) if self.peer_library else None
        out["link"] = self.link.model_dump(exclude_none=True) if self.link else None
        out["link_label"] = self.link.label() if self.link else "loopback"
        if self.transport == "udp":
            del out["nagle"], out["mss"]
        else:
            del out["dtls_mtu"]
        return out

    def key(self) -> str:
        return json.dumps(self.describe(), sort_keys=True, separators=(",", ":"))


def variants(net: NetworkPlan) -> list[Variant]:
    """Every network configuration of the section, in plan order."""
    out = []
    links: list[Link | None] = list(net.links) or [None]
    for transport, role, link, fragment in itertools.product(net.transports, net.device, links, net.max_fragment):
        base = dict(transport=transport, device_role=role, peer_library=net.peer_library, link=link,
                    max_fragment=fragment)
        if transport == "tcp":
            out += [Variant(**base, nagle=n, mss=m) for n, m in itertools.product(net.nagle, net.mss)]
        else:
            out += [Variant(**base, dtls_mtu=m) for m in net.dtls.mtu]
    return out
