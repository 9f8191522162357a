# SPDX-License-Identifier: Apache-2.0
"""What a resolved plan is: configurations, each a `config` row of the store plus the RUN
fields it maps to. Handshake configurations come from plan/suites.py, experiment
configurations from plan/experiments.py; plan/resolve.py joins both."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from tlsbench.plan.network import Variant


@dataclass(frozen=True)
class ConfigRow:
    """A `config` row (without id and skip_reason); `key` identifies it across resumes."""

    key: str
    library: str
    suite_id: int
    suite_name: str
    key_exchange: str
    authentication: str
    cipher: str
    mac: str
    min_version: str
    max_version: str
    grp: str
    credential: str
    transport: str
    direction: str
    total_bytes: int
    record_size: int
    repetitions: int
    options: int = 0  # RUN options bits (spec [options])
    network_json: str | None = None  # two-process configurations (003_network.sql)
    device_role: str | None = None
    peer_library: str | None = None
    link_label: str | None = None
    # Experiment configurations only (migration 004; None on handshakes). total_bytes is the
    # payload size (0: the experiment takes none); suite_name repeats the experiment's name.
    experiment: str | None = None  # HELLO experiments[].name
    experiment_groups: str | None = None  # JSON array of group names (USER_GROUP START value = index)
    experiment_source: str | None = None  # "primitive" or "user"
    experiment_description: str | None = None
    # Migration 007 (plan/device.py): None on the host. A device configuration names the device
    # (HELLO device.target) and the firmware image it runs on ("counting" or "memory");
    # protocol "dtls" for DTLS over the memory transport (None: TLS, or the network variant's).
    target: str | None = None
    image: str | None = None
    protocol: str | None = None
    # Migration 011 (docs/metrics.md): what the configuration's agent collects besides order
    # (spec [collect]): None = time; "instructions" or "memory" = the twin of a time
    # configuration whose repetitions carry that metric instead.
    collect: str | None = None


@dataclass(frozen=True)
class Configuration:
    """One measured configuration: a `config` row plus the RUN fields it maps to."""

    row: ConfigRow
    suite_id: int
    group: int  # spec [group] value
    credential: int  # spec [credential] value (resolved: never auto)
    direction: int
    transport: int
    options: int = 0  # RUN options bits
    variant: Variant | None = None  # two-process configurations (plan/network.py)
    experiment_id: int = 0  # 0: a handshake; n: the n-th entry of the agent's HELLO `experiments`
    protocol: int = 0  # spec [protocol_kind] value over the memory transport (a network variant sets its own)

    @property
    def key(self) -> str:
        return self.row.key


@dataclass
class Resolution:
    """What a plan means against the agents' offers."""

    configs: list[Configuration] = field(default_factory=list)
    not_runnable: list[str] = field(default_factory=list)  # suites an agent lists but cannot run (with why)
    not_applicable: Counter[str] = field(default_factory=Counter)  # matrix cells skipped, by reason
