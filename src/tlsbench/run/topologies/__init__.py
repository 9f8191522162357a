# SPDX-License-Identifier: Apache-2.0
"""Where a configuration's peers run, and so which exchange runs its batches:

    single.py  both peers in one agent: a host agent of a library (in memory, an experiment,
               a metric twin under its counting runner), or the device's firmware
    pair.py    two host agents over a network, maybe through the link emulator (run/link.py)

A configuration's kind (schema/kinds.py) gives its Route, a value; run/session.py opens one
exchange per route. A device peer against a host peer over a link will be a third topology."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tlsbench.plan.configs import Configuration
from tlsbench.schema.kinds import ConfigKind


class Topology(Enum):
    SINGLE = "both peers in one agent"
    PAIR = "two agents over a network"


class Place(Enum):
    HOST = "host agents"
    DEVICE = "the device's firmware"


@dataclass(frozen=True)
class Route:
    """Which exchange runs a configuration's batches."""

    topology: Topology
    place: Place = Place.HOST
    library: str = ""  # a single agent's library (a host agent's, a device's build; "" for the pair: it runs every library's)
    collect: str | None = None  # a metric twin's agent collects this besides order (its own agent process)
    target: str = ""  # the device's (HELLO device.target): one exchange per device of a matrix


OVER_NETWORK = Route(Topology.PAIR)
ON_DEVICE_KINDS = (ConfigKind.DEVICE, ConfigKind.FOOTPRINT, ConfigKind.DEVICE_EXPERIMENT)


def on_device(target: str, library: str = "") -> Route:
    """The route of a device's firmware: one per target × library build of a matrix (they run
    in parallel)."""
    return Route(Topology.SINGLE, Place.DEVICE, library, target=target)


def host_agent(library: str, collect: str | None = None) -> Route:
    """The route of a library's own agent (collecting `collect` for a metric twin)."""
    return Route(Topology.SINGLE, Place.HOST, library, collect)


def route(config: Configuration) -> Route:
    """The device's exchange (its target's), the agent pair's, else the configuration's
    library's own agent (one per metric its twins collect)."""
    kind = config.kind
    if kind in ON_DEVICE_KINDS:
        return on_device(config.row.target or "", config.row.library)
    return OVER_NETWORK if kind == ConfigKind.NETWORK else host_agent(config.row.library, kind.collect)
