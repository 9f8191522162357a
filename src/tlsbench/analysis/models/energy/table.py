# SPDX-License-Identifier: Apache-2.0
"""The long table of energies (one row per value, as analysis.measures.MeasureTable) and its
statistics. Estimated and measured energies share it; every table carries its source label,
so the two are never mixed without saying which is which."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.measures import NO_LABEL, NO_PEER
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.vocab import vocab


@dataclass(frozen=True)
class Kind:
    """One energy measure: what a value is taken over."""

    name: str
    per: str      # one value per: "rep" (and peer), "record"
    meaning: str


# Codes are positions in this tuple. Every energy is above idle (docs/energy.md).
KINDS: tuple[Kind, ...] = (
    Kind("step", "rep", "One handshake step of one peer (sum over its occurrences)."),
    Kind("handshake", "rep", "One peer's handshake: the sum of its steps."),
    Kind("handshake_window", "rep", "The HANDSHAKE phase, stop–start: both peers and all I/O and waiting in it."),
    Kind("repetition", "rep", "The whole repetition (REPETITION phase): setup, handshake, data, close."),
    Kind("record_write", "record", "One application record written (processing incl. post-send work, and its I/O)."),
    Kind("record_read", "record", "One application record read (processing incl. pre-arrival work, and its I/O)."),
    Kind("operation", "rep", "One run of an experiment's group (a crypto primitive's operation, or user code)."),
)
KIND = {k.name: i for i, k in enumerate(KINDS)}


@dataclass
class EnergyTable:
    """Energies in joules, one row per value, all from one source."""

    source: str          # "estimate (profile X)" or "measured (capture Y)"
    rep: np.ndarray      # repetition id
    peer: np.ndarray     # peer code; NO_PEER for whole-repetition windows
    kind: np.ndarray     # index into KINDS
    label: np.ndarray    # step label id, NO_LABEL otherwise
    value: np.ndarray    # J

    def __len__(self) -> int:
        return len(self.value)

    def of(self, rep_ids: np.ndarray) -> "EnergyTable":
        """The rows of these repetitions (a capture covers handshakes and experiments alike)."""
        keep = np.isin(self.rep, rep_ids)
        return EnergyTable(self.source, self.rep[keep], self.peer[keep], self.kind[keep], self.label[keep],
                           self.value[keep])


class Rows:
    """Accumulates rows of one EnergyTable, then concatenates once."""

    def __init__(self, source: str):
        self.source = source
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, kind: str, rep, peer, label, value) -> None:
        k = len(np.atleast_1d(value))
        b = lambda x, dt: np.broadcast_to(np.asarray(x, dtype=dt), (k,))  # noqa: E731
        self.parts.append((b(rep, np.int64), b(peer, np.int16), b(KIND[kind], np.int16),
                           b(label, np.int32), b(value, np.float64)))

    def table(self) -> EnergyTable:
        cols = [np.concatenate([p[i] for p in self.parts]) if self.parts else np.empty(0) for i in range(5)]
        return EnergyTable(self.source, *cols)


def group_sum(keys: list[np.ndarray], values: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Sums of values per distinct key tuple (columns of equal length)."""
    if not len(values):
        return [np.empty(0, np.int64) for _ in keys], np.empty(0)
    stacked = np.stack([np.asarray(k, np.int64) for k in keys], axis=1)
    uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
    return [uniq[:, i] for i in range(len(keys))], np.bincount(inv.reshape(-1), weights=values, minlength=len(uniq))


@dataclass(frozen=True)
class EnergyRow:
    """Statistics of one energy of one configuration, with where it comes from."""

    config_id: int
    peer: str      # spec peer name ("none" for whole-repetition windows)
    kind: str      # a KINDS name
    label: str     # step label name, "" otherwise
    source: str    # "estimate (profile X)" or "measured (capture Y)"
    summary: Summary  # in J


def summarize_table(ds: Dataset, t: EnergyTable, seed: int, include_flagged: bool = False) -> list[EnergyRow]:
    """Per (configuration, peer, kind, label): statistics of the values of the repetitions
    the report uses (the same exclusions as every other measure), with seeded bootstrap CIs."""
    voc = vocab()
    excl = ds.excluded_mask(include_flagged)
    pos = ds.rep_index(t.rep)
    keep = ~excl[pos]
    cfg = ds.reps.config_id[pos][keep]
    cols = [cfg, t.peer[keep], t.kind[keep], t.label[keep]]
    value = t.value[keep]
    if not len(value):
        return []
    order = np.lexsort(cols[::-1])
    cols, value = [c[order] for c in cols], value[order]
    change = np.r_[True, np.any([c[1:] != c[:-1] for c in cols], axis=0)]
    starts = np.flatnonzero(change)
    ends = np.r_[starts[1:], len(value)]
    excluded = {int(c): int(np.count_nonzero(ds.reps.config_id[excl] == c)) for c in np.unique(cfg)}
    rows = []
    for s, e in zip(starts, ends):
        cid, peer, kind, label = (int(c[s]) for c in cols)
        name = KINDS[kind].name
        rng = rng_for(seed, "energy", t.source, cid, peer, name, label)
        rows.append(EnergyRow(cid, voc.peer_name(peer), name, voc.name(label) if label != NO_LABEL else "",
                              t.source, summarize(value[s:e], rng, mean_ci=name == "handshake",
                                                  excluded=excluded.get(cid, 0))))
    return rows


__all__ = ["KINDS", "KIND", "EnergyTable", "EnergyRow", "Rows", "group_sum", "summarize_table", "NO_LABEL", "NO_PEER"]
