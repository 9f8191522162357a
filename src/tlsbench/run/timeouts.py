# SPDX-License-Identifier: Apache-2.0
"""How long the host waits for agents: the user's limits (`--timeout`, $TLSBENCH_TIMEOUT)
and the waits a two-process batch derives from its plan (docs/host.md, docs/networks.md)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Sequence

from pydantic import Field, ValidationError

from tlsbench.core import spec as specmod
from tlsbench.plan.network import Dtls, Variant
from tlsbench.core.validation import Strict

TIMEOUT_ENV = "TLSBENCH_TIMEOUT"
Seconds = Annotated[float, Field(gt=0, le=86400)]


class Timeouts(Strict):
    """How long the host waits for an agent (seconds), per wait; `--timeout NAME=SECONDS`
    or $TLSBENCH_TIMEOUT change them (docs/host.md). Not part of a plan: the same plan may
    need longer waits on a slower machine, and the plan hash must not change with them."""

    greeting: Seconds = 30.0  # from start to HELLO and SUITES (tracer calibration included)
    ready: Seconds = 30.0  # a two-process server's READY after its RUN
    silence: Seconds = 120.0  # no frame at all during a batch: the agent is killed as hung
    flash: Seconds = 600.0  # a board's [device] flash command, once per run before the board's first reset


def parse_timeouts(items: Sequence[str]) -> Timeouts:
    """`greeting=60`, `silence=600`... -> Timeouts; ValueError with one line per mistake."""
    values: dict[str, Any] = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep:
            raise ValueError(f"{item!r}: expected NAME=SECONDS with NAME one of {', '.join(Timeouts.model_fields)}")
        try:
            values[name] = float(value)
        except ValueError:
            values[name] = value
    try:
        return Timeouts(**values)
    except ValidationError as exc:
        raise ValueError("; ".join(
            f"{err['loc'][0]}: unknown wait (known: {', '.join(Timeouts.model_fields)})"
            if err["type"] == "extra_forbidden" else f"{err['loc'][0]}={err['input']}: {str(err['msg']).lower()}"
            for err in exc.errors())) from None


@dataclass(frozen=True)
class PairWaits:
    """Every wait of a two-process batch, in seconds (docs/networks.md "Timeouts"), ordered so
    the side that waits longest decides; the agents derive the same from the RUN (runner.c)."""

    give_up: float  # G: an agent gives one phase up (connect, handshake, a record)
    accept: float  # a server waits this long for its next client: 2 G + margin
    linger: float  # a DTLS server answers its last client's retransmissions after a RUN: G + margin
    hang: float  # the controller calls a silent pair hung: 3 G + 3 margins


def pair_waits(variant: Variant, dtls: Dtls) -> PairWaits:
    """G from the DTLS timer (its first give_up_flights periods: min, 2 min, ... capped at
    max), or the fixed TCP give-up; the other waits from G, as spec [network] says."""
    net = specmod.load().network
    if variant.protocol == "dtls":
        low = dtls.timeout_min_ms or net["dtls_default_min_ms"]
        high = max(dtls.timeout_max_ms or net["dtls_default_max_ms"], low)
        give_up_ms = sum(min(low << i, high) for i in range(net["give_up_flights"]))
    else:
        give_up_ms = net["tcp_give_up_ms"]
    g, margin = give_up_ms / 1000, net["margin_ms"] / 1000
    return PairWaits(g, 2 * g + margin, g + margin, 3 * g + 3 * margin)
