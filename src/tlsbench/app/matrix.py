# SPDX-License-Identifier: Apache-2.0
"""The device matrix (`tlsbench matrix EXPERIMENT...`): device experiments side by side, one
column per core × library build (an experiment of several targets or builds gives one each), one row per handshake configuration (suite, group, protocol):
each peer's handshake processing (the median count), its heap peak and stack high-water (from
the memory image, where the plan ran it), and the rank of each column's count in its row, so
a ranking that changes from one core or library to the next shows. Counts are each target's
unit (instructions under QEMU), never a time; columns of different units are refused."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from tlsbench.app.report import analyze_experiment
from tlsbench.core.errors import UserError
from tlsbench.export import tidy
from tlsbench.store.locator import locate

PEERS = ("client", "server")


class NotADeviceExperiment(UserError):
    """A matrix column that did not run on a device, or counts in another unit."""


@dataclass(frozen=True)
class Column:
    core: str  # HELLO device.cpu
    target: str
    library: str  # the device build's label (mbedtls@3.6+p256m)
    experiment: str

    @property
    def name(self) -> str:
        return f"{self.core} {self.library}"


@dataclass
class Cell:
    count: dict[str, float] = field(default_factory=dict)  # peer -> median handshake processing
    heap: dict[str, int] = field(default_factory=dict)  # peer -> heap peak during the handshake
    stack: dict[str, int] = field(default_factory=dict)  # peer -> stack high-water
    not_run: str = ""  # why it was stored without running: "does not fit in flash (...)"


@dataclass
class Matrix:
    unit: str
    columns: list[Column]
    rows: list[str]  # display names: "suite [group, credential] protocol"
    cells: dict[tuple[str, int], Cell]  # (row, column index)

    def ranks(self, row: str, peer: str) -> dict[int, int]:
        """Column index -> rank of its count in the row (1: the least)."""
        counts = sorted((c.count[peer], i) for i in range(len(self.columns))
                        if (c := self.cells.get((row, i))) and peer in c.count)
        return {i: rank for rank, (_, i) in enumerate(counts, 1)}


RowKey = tuple[int, str, str, str]  # IANA suite id, group, credential, protocol: alike in every library


def _row(r: dict) -> RowKey:
    return r["suite_id"], r["group"], r["credential"], r["protocol"]


Place = tuple[str, str]  # (target, library build): one column of an experiment


def columns_of(path: str | Path) -> tuple[list[Column], str, dict[tuple[RowKey, int], Cell], dict[RowKey, str]]:
    """One device experiment's columns (one per target × library build it ran, in the order
    they first appear), its unit, its cells by (row, column index) and its rows' display names."""
    where = locate(Path(path))
    with where.reader() as store:
        reps = [r for r in tidy.read_table(store, "repetition").to_pylist() if r["target"] and r["kind"] != "experiment"]
        ran = {r["config_id"] for r in reps}
        not_run = [c for c in tidy.config_rows(store) if c["target"] and c["kind"] != "experiment"
                   and c["skip_reason"] and c["config_id"] not in ran]  # e.g. a lane whose image does not fit
    if not reps and not not_run:
        raise NotADeviceExperiment(f"{path} holds no handshake run on a device: the matrix sets device "
                                   "experiments side by side (plans with [device] and suites)")
    places: dict[Place, Column] = {}
    for r in reps + not_run:
        places.setdefault((r["target"], r["library"]), Column(r["core"] or "?", r["target"], r["library"],
                                                              where.folder.name))
    index = {place: i for i, place in enumerate(places)}
    names = {_row(r): f"{r['suite_name']} [{r['group']}, {r['credential']}] {r['protocol']}" for r in reps + not_run}
    cell_of = {r["config_id"]: (_row(r), index[(r["target"], r["library"])]) for r in reps + not_run}
    counts: dict[tuple[RowKey, int, str], list[float]] = {}
    for r in reps:
        for peer in PEERS:
            value = r[f"handshake_processing_{peer}"]
            if r["image"] == "counting" and r["status"] == "OK" and value is not None:
                counts.setdefault((*cell_of[r["config_id"]], peer), []).append(value)
    cells: dict[tuple[RowKey, int], Cell] = {}
    for (row, column, peer), values in counts.items():
        cells.setdefault((row, column), Cell()).count[peer] = statistics.median(values)
    for c in not_run:
        cells.setdefault(cell_of[c["config_id"]], Cell()).not_run = c["skip_reason"]
    device = analyze_experiment(where, str(path), False).results.device
    for f in (device.footprint.rows if device and device.footprint else ()):
        cell = cells.setdefault(cell_of[f.config_id], Cell())
        if "HEAP_PEAK_HANDSHAKE" in f.values:
            cell.heap[f.peer] = f.values["HEAP_PEAK_HANDSHAKE"].most
        if "STACK_HIGH_WATER" in f.values:
            cell.stack[f.peer] = f.values["STACK_HIGH_WATER"].most
    return list(places.values()), str((reps or not_run)[0]["counter_unit"]), cells, names


def device_matrix(paths: Sequence[str | Path]) -> Matrix:
    """The matrix of device experiments (folders or stores), in the order given."""
    columns, units, cells, names = [], set(), {}, {}
    for path in paths:
        found_columns, unit, found, found_names = columns_of(path)
        first = len(columns)
        columns += found_columns
        units.add(unit)
        cells.update({(row, first + i): cell for (row, i), cell in found.items()})
        for row, name in found_names.items():
            names.setdefault(row, name)
    if len(units) > 1:
        raise NotADeviceExperiment(f"these experiments count in different units ({', '.join(sorted(units))}): "
                                   "a matrix sets alike counts side by side")
    rows = sorted(names, key=lambda row: names[row])
    return Matrix(units.pop(), columns, [names[r] for r in rows], {(names[r], i): c for (r, i), c in cells.items()})


def markdown(m: Matrix, scale: float = 1e6) -> str:
    """The matrix as Markdown: per row and column, client / server count (millions of the unit)
    with each peer's rank in the row, heap peaks and the deeper stack in bytes."""
    head = "| configuration | " + " | ".join(c.name for c in m.columns) + " |"
    lines = [f"Handshake processing per peer, M {m.unit} (rank in the row); heap peak client / server; "
             "stack, deepest (bytes)", "", head, "|---|" + "---:|" * len(m.columns)]
    why: dict[str, None] = {}  # the reasons of cells not run, in full, once each below the table
    for row in m.rows:
        ranks = {peer: m.ranks(row, peer) for peer in PEERS}
        cells = []
        for i in range(len(m.columns)):
            c = m.cells.get((row, i))
            if c is None:
                cells.append("–")
                continue
            if c.not_run and not c.count:
                why[f"{m.columns[i].name}: {c.not_run}"] = None
                cells.append(c.not_run.split(" (")[0])  # "does not fit in flash"
                continue
            count = " / ".join(f"{c.count[p] / scale:,.2f} ({ranks[p][i]})" if p in c.count else "–" for p in PEERS)
            heap = " / ".join(f"{c.heap[p]:,}" if p in c.heap else "–" for p in PEERS)
            stack = f"{max(c.stack.values()):,}" if c.stack else "–"
            cells.append(f"{count}; heap {heap}; stack {stack}")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ([""] + [f"- {reason}" for reason in why] if why else []))
