# SPDX-License-Identifier: Apache-2.0
"""The kinds of configuration, declared once: what a configuration measures and where its
peers run. A kind is read from the columns of the `config` row (ConfigRow.kind), so a stored
configuration has the kind it was run as, in a store of any age: COLUMNS says which columns
make each kind, the store turns the same table into its SQL (store/sqlite.py), the run
routes each kind to its topology (run/topologies/), and analysis reads the store by
SELECTIONS, the kinds it reads together (a network handshake with the in-memory ones)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Mapping


class ConfigKind(Enum):
    HANDSHAKE = "handshake"  # both peers in one host agent, in memory
    NETWORK = "network"  # two host agents over a socket, maybe an emulated link (plan [network])
    EXPERIMENT = "experiment"  # a crypto primitive or a user experiment (plan [experiments])
    DEVICE_EXPERIMENT = "device_experiment"  # the same on the device's firmware (plan [device] + [experiments])
    INSTRUCTIONS = "instructions"  # a handshake's twin whose agent counts instructions (plan metrics)
    MEMORY = "memory"  # a handshake's twin whose agent measures heap and stack
    DEVICE = "device"  # a handshake on the device's firmware, its counting image (plan [device])
    FOOTPRINT = "footprint"  # the same on the firmware's memory image

    @property
    def collect(self) -> str | None:
        """What a metric twin's agent collects besides order (spec [collect]); None: time."""
        return self.value if self in (ConfigKind.INSTRUCTIONS, ConfigKind.MEMORY) else None


@dataclass(frozen=True)
class Is:
    """A column's test: `value` (None: NULL), or with `negate` anything else (NULL included)."""

    value: Any = None
    negate: bool = False

    def holds(self, found: Any) -> bool:
        return (found == self.value) != self.negate


NULL, SET = Is(), Is(negate=True)

# The columns each kind is made of, tried in this order. A column a store does not have yet
# (an older schema) reads as NULL: its experiments, devices and metric twins did not exist.
COLUMNS: dict[ConfigKind, Mapping[str, Is]] = {
    ConfigKind.DEVICE_EXPERIMENT: {"experiment": SET, "target": SET},
    ConfigKind.EXPERIMENT: {"experiment": SET, "target": NULL},
    ConfigKind.FOOTPRINT: {"target": SET, "image": Is("memory")},
    ConfigKind.DEVICE: {"experiment": NULL, "target": SET, "image": Is("memory", negate=True)},
    ConfigKind.INSTRUCTIONS: {"experiment": NULL, "target": NULL, "collect": Is("instructions")},
    ConfigKind.MEMORY: {"experiment": NULL, "target": NULL, "collect": Is("memory")},
    ConfigKind.NETWORK: {"experiment": NULL, "target": NULL, "collect": NULL, "network_json": SET},
    ConfigKind.HANDSHAKE: {"experiment": NULL, "target": NULL, "collect": NULL, "network_json": NULL},
}

# What a store read covers (store/reader.py Kind): the kinds analysed together, by the name
# derived data is stored under (derived_batch.kind); "all" covers every kind.
Selection = Literal["handshakes", "device", "footprint", "instructions", "memory", "experiments",
                    "device_experiments", "all"]
SELECTIONS: dict[str, tuple[ConfigKind, ...]] = {
    "handshakes": (ConfigKind.HANDSHAKE, ConfigKind.NETWORK), "device": (ConfigKind.DEVICE,),
    "footprint": (ConfigKind.FOOTPRINT,), "instructions": (ConfigKind.INSTRUCTIONS,),
    "memory": (ConfigKind.MEMORY,), "experiments": (ConfigKind.EXPERIMENT,),
    "device_experiments": (ConfigKind.DEVICE_EXPERIMENT,),  # counts, not times: apart from the host's
}


def kind_of(columns: Mapping[str, Any]) -> ConfigKind:
    """The kind a configuration's columns make (a column missing from them is NULL)."""
    for kind, tests in COLUMNS.items():
        if all(test.holds(columns.get(name)) for name, test in tests.items()):
            return kind
    raise ValueError(f"no configuration kind has these columns: {dict(columns)}")
