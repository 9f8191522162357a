# SPDX-License-Identifier: Apache-2.0
"""Libraries side by side: the same matrix cell (suite by IANA id, group, credential,
payload, transport, options) measured by several libraries' agents.

Libraries are compared on what means the same in every backend: the network-invariant
handshake processing of each peer, each crypto operation (neutral labels shared by all
backends) and record processing. Steps are compared only between libraries whose agents
report the same step granularity: wolfSSL's steps are turns (HANDSHAKE_TURN_n), which
are not messages (docs/methodology.md)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tlsbench.analysis.questions.compare import Comparison, compare_pairs
from tlsbench.analysis.derive.dataset import Config
from tlsbench.analysis.derive.samples import Measured
from tlsbench.analysis.questions.winners import Winner, find_winners

# Measures compared across libraries (see the module docstring); steps are added when the
# two agents' step granularity is the same.
CROSS_LIBRARY = ("handshake_processing", "crypto", "write_processing_post", "read_processing_pre")
SAME_GRANULARITY = ("step",)
GRANULARITY_MEANING = {
    "state": "one step per handshake message/state of the library's state machine",
    "turn": "one step per turn (one call into the library until it waits for the peer: HANDSHAKE_TURN_n); "
            "turns are not messages, so steps are not compared with other libraries",
}


@dataclass(frozen=True)
class AgentInfo:
    """One agent process of the experiment (the `agent` table and its HELLO)."""

    id: int
    library: str            # the plan's library name (the agent is tlsbench-agent-<library>)
    executable: str
    library_name: str       # e.g. "wolfSSL"
    version: str
    step_granularity: str   # "state" or "turn" (HELLO)
    build: dict[str, Any]   # HELLO build block
    tracer: dict[str, Any]  # HELLO tracer block: the calibration subtracted from this agent's traces
    exit_reason: str
    clock: dict[str, Any] = field(default_factory=dict)      # HELLO clock block (source, calibration)
    clock_checked: dict[str, Any] = field(default_factory=dict)  # after its RUNs: source, largest drift
    placement: dict[str, Any] = field(default_factory=dict)  # CPUs and priority it ran with

    @property
    def placement_text(self) -> str:
        """"CPU 1 (controller: 0), nice -20"; "not pinned (...)"; "" when not recorded."""
        p = self.placement
        if not p or "cpus" not in p:
            return ""
        where = (f"CPU {', '.join(map(str, p['cpus']))} (controller: {', '.join(map(str, p['controller_cpus']))})"
                 if p.get("controller_cpus") else f"not pinned ({p.get('not_pinned', '')})")
        nice = f"nice {p.get('nice')}" + (f" (asked {p['nice_asked']}: {p['nice_refused']})" if "nice_asked" in p else "")
        return f"{where}, {nice}"

    @property
    def clock_text(self) -> str:
        """"TSC at 2.596 GHz (calibrated against CLOCK_MONOTONIC; drift ≤ 3 ppm)"."""
        c, checked = self.clock, self.clock_checked
        if not c:
            return ""
        source = checked.get("source") or c.get("source", "?")
        text = str(source)
        if c.get("counter_hz"):
            text += f" at {float(c['counter_hz']) / 1e9:.3f} GHz (calibrated against {c.get('calibrated_against', '?')}"
            text += f"; largest drift after a RUN {checked['max_drift_ppm']:g} ppm)" if checked else ")"
        fallback = checked.get("fallback") or c.get("fallback")
        return text + (f"; not the counter: {fallback}" if fallback else "")


@dataclass(frozen=True)
class Cell:
    """One matrix cell and the configuration measuring it in each library."""

    key: tuple[Any, ...]    # (suite IANA id, group, credential, transport, direction, bytes, record size, options...)
    label: str              # display name: suite (its IANA-style name when a library has one) [group, credential]
    configs: dict[str, int]  # library -> config id


@dataclass(frozen=True)
class LibraryComparison:
    """`other` / `baseline` on every cell both measured."""

    baseline: str
    other: str
    steps_compared: bool    # same step granularity: steps are in the comparison too
    comparison: Comparison


@dataclass
class Libraries:
    """Everything the report's library sections show (empty `order` tail: one library)."""

    order: list[str]                    # plan order; the first is the comparisons' baseline
    agents: list[AgentInfo]
    granularity: dict[str, str]         # library -> step granularity of its (first) agent
    cells: list[Cell]
    comparisons: list[LibraryComparison] = field(default_factory=list)
    winners: dict[str, list[Winner]] = field(default_factory=dict)  # library -> its own winners

    @property
    def several(self) -> bool:
        return len(self.order) > 1


def library_order(measured: Measured) -> list[str]:
    """The plan's libraries in its order (`libraries`, or the older `library`), then any
    other library the store holds."""
    plan = json.loads(measured.ds.experiment.get("plan_json") or "{}")
    named = plan.get("libraries") or ([plan["library"]] if plan.get("library") else [])
    stored = sorted({c.library for c in measured.ds.configs.values()})
    return [lib for lib in named if lib in stored] + [lib for lib in stored if lib not in named]


def agent_infos(measured: Measured) -> list[AgentInfo]:
    out = []
    for aid, row in sorted(measured.ds.agents.items()):
        hello = row.get("hello", {})
        out.append(AgentInfo(aid, row["library"], row["executable"], hello.get("library_name", row["library"]),
                             str(hello.get("library_version", "")), str(hello.get("step_granularity", "?")),
                             hello.get("build", {}), hello.get("tracer", {}), row.get("exit_reason") or "",
                             hello.get("clock", {}), _json(row.get("clock_json")), _json(row.get("placement_json"))))
    return out


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def cell_key(c: Config) -> tuple[Any, ...]:
    """The configuration key without library and suite name, with the IANA id instead:
    equal for the same cell in every library."""
    parts = c.key.split("|")
    return (c.suite_id, *parts[2:])


def _cell_label(configs: list[Config], varying: list[int]) -> str:
    names = [c.suite_name for c in configs]
    name = next((n for n in names if "_" in n), names[0])  # IANA names use "_" (OpenSSL, wolfSSL)
    parts = cell_key(configs[0])[1:]
    shown = [str(parts[i]) for i in varying if i < len(parts)]  # keys of a longer shape add parts (|dtls)
    return f"{name} [{', '.join(shown)}]" if shown else name


def build_cells(measured: Measured, order: list[str]) -> list[Cell]:
    grouped: dict[tuple[Any, ...], dict[str, Config]] = {}
    for cid, c in measured.ds.configs.items():
        grouped.setdefault(cell_key(c), {})[c.library] = c
    keys = list(grouped)
    # Show group, credential, payload... only where they vary, as config labels do.
    width = max((len(k) for k in keys), default=1)
    varying = [i for i in range(width - 1) if len({k[i + 1] if i + 1 < len(k) else "" for k in keys}) > 1]
    cells = []
    for key, by_lib in grouped.items():
        ordered = [by_lib[lib] for lib in order if lib in by_lib]
        cells.append(Cell(key, _cell_label(ordered, varying), {lib: c.id for lib, c in by_lib.items()}))
    return sorted(cells, key=lambda c: c.label)


def compare_libraries(measured: Measured, libs: Libraries, seed: int) -> list[LibraryComparison]:
    """Each library against the first (baseline) on the cells both measured."""
    base = libs.order[0]
    out = []
    for other in libs.order[1:]:
        same = libs.granularity.get(base) == libs.granularity.get(other)
        metrics = CROSS_LIBRARY + (SAME_GRANULARITY if same else ())
        pairs = [(c.configs[base], c.configs[other], c.label) for c in libs.cells
                 if base in c.configs and other in c.configs]
        unmatched = [f"{c.label}: measured by {', '.join(c.configs)} only" for c in libs.cells
                     if (base in c.configs) != (other in c.configs)]
        out.append(LibraryComparison(base, other, same, compare_pairs(measured, measured, pairs, seed, metrics=metrics,
                                                                      not_compared=unmatched, names=(base, other))))
    return out


def configs_by_library(configs: dict[int, Config]) -> dict[str, frozenset[int]]:
    """Each library's configuration ids."""
    out: dict[str, set[int]] = {}
    for cid, config in configs.items():
        out.setdefault(config.library, set()).add(cid)
    return {lib: frozenset(cids) for lib, cids in out.items()}


def analyze_libraries(measured: Measured, seed: int, no_data: dict[int, str] | None = None) -> Libraries:
    """The library sections of a report; comparisons and per-library winners only when the
    experiment has several libraries."""
    order = library_order(measured)
    agents = agent_infos(measured)
    granularity: dict[str, str] = {}
    for info in agents:
        granularity.setdefault(info.library, info.step_granularity)
    libs = Libraries(order, agents, granularity, build_cells(measured, order))
    if libs.several:
        libs.comparisons = compare_libraries(measured, libs, seed)
        of_library = configs_by_library(measured.ds.configs)
        libs.winners = {lib: find_winners(measured.labels, measured.samples.answers, seed, among=of_library[lib],
                                          no_data=no_data, unit=measured.ds.unit)
                        for lib in order}
    return libs
