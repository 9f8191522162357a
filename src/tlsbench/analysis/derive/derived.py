# SPDX-License-Identifier: Apache-2.0
"""Per-repetition summaries derived once from the raw records: what a report needs of every
trace, as columns, so a report never holds every record at once.

A repetition's trace is decoded, paired into slices and measured (slices.py, measures.py)
exactly as a whole-dataset analysis does it, a batch of repetitions at a time; what is kept
is its measure rows (repetition, peer, metric, label, value) and a few facts of the
repetition (its REPETITION span, its run-queue wait, whether its trace was balanced). Every
measure is a function of one repetition's records, so a batch's rows are the rows the whole
dataset would give for those repetitions, bit for bit, in the same order within each sample.

`tlsbench derive` stores them in the store's derived cache (schema DERIVED_BATCH: one row per
configuration and batch, each column a little-endian array; analysis/derive/cache.py);
`tlsbench run` derives what it stored when a sweep ends. A report reads the facts of every
repetition at once and the measure rows one configuration at a time (`StoredSummaries`), so
its memory does not grow with the records; what its version did not store it derives in
memory, a batch at a time (a store written before, or a read-only one, stays unwritten).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

import numpy as np

from tlsbench.schema import DerivedBatch, RepetitionColumns
from tlsbench.schema.columns import field_names
from tlsbench.store.api import DerivedReads, Kind
from tlsbench.schema.kinds import SELECTIONS

from tlsbench.analysis.derive.measures import MeasureTable, Traced, measures, slice_costs
from tlsbench.analysis.derive.slices import Events, Slices, build_slices, decode_many
from tlsbench.analysis.vocab import vocab

# Bump whenever slices.py or measures.py change what a repetition's summaries are, or how
# they are stored: stored batches of another version are then ignored by reports and rebuilt
# by `tlsbench derive`. 2: one configuration per batch (migration 013); 3: record_overhead.
DERIVE_VERSION = 3
# Records decoded at once while deriving (≈ 250 bytes of working memory each).
BATCH_RECORDS = 400_000
ZSTD_LEVEL = 3

# Column layouts of a batch's blobs: (name, little-endian dtype), in storage order.
FACT_COLUMNS = (("id", "<i8"), ("rep_dur", "<i8"), ("rep_cpu", "<i8"), ("runqueue_wait", "<i8"),
                ("orphan_stops", "<i4"), ("unbalanced", "u1"), ("traced", "u1"))
MEASURE_COLUMNS = (("rep", "<i8"), ("peer", "<i2"), ("metric", "<i2"), ("label", "<i4"), ("value", "<f8"))


@dataclass
class RepFacts:
    """Per repetition (aligned with the dataset's `Reps`): what its slices say beyond measures."""

    id: np.ndarray
    rep_dur: np.ndarray       # the REPETITION span's duration, −1 when none
    rep_cpu: np.ndarray       # its thread CPU time, −1 when not read
    runqueue_wait: np.ndarray  # the RUNQUEUE_WAIT instant's value, −1 when not recorded
    orphan_stops: np.ndarray  # STOP records without a START
    unbalanced: np.ndarray    # bool: the trace needed the stack machine (slices.py)
    traced: np.ndarray        # bool: the trace holds at least one slice


@dataclass
class Derived:
    """A dataset's summaries: facts per repetition and the measure table."""

    facts: RepFacts
    table: MeasureTable


def _columns(arrays: dict[str, np.ndarray], layout: Sequence[tuple[str, str]]) -> bytes:
    """Columns one after the other, each column's bytes grouped by their position in a value
    (alike bytes together), compressed with zstd (as store/sqlite/blobs.py stores records)."""
    parts = [np.ascontiguousarray(arrays[name], dtype=dt).view(np.uint8).reshape(-1, np.dtype(dt).itemsize).T
             for name, dt in layout]
    return codec()[0].compress(b"".join(np.ascontiguousarray(p).tobytes() for p in parts))


def _uncolumns(blob: bytes, n: int, layout: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
    raw = np.frombuffer(codec()[1].decompress(blob), dtype=np.uint8)
    out, offset = {}, 0
    for name, dt in layout:
        size = np.dtype(dt).itemsize
        grouped = raw[offset:offset + n * size].reshape(size, n)
        out[name] = np.stack(grouped, axis=1).view(dt).reshape(-1)  # a row at a time: 2-5× a strided transpose
        offset += n * size
    if offset != len(raw):
        raise ValueError(f"derived blob of {len(raw)} bytes does not hold {n} rows")
    return out


@functools.cache
def codec() -> tuple[Any, Any]:
    import zstandard

    return zstandard.ZstdCompressor(level=ZSTD_LEVEL), zstandard.ZstdDecompressor()


def rep_windows(slices: Slices, rep_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per repetition of `rep_ids` (ascending): the REPETITION span's duration and CPU time
    and the RUNQUEUE_WAIT instant's value, −1 where the trace has none."""
    voc, n = vocab(), len(rep_ids)
    rep_sel = np.flatnonzero((slices.label == voc.role_label("repetition")) & ~slices.instant)
    pos = np.searchsorted(rep_ids, slices.rep[rep_sel])
    dur, cpu = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    dur[pos], cpu[pos] = slices.dur[rep_sel], slices.cpu[rep_sel]
    wait = np.full(n, -1, dtype=np.int64)
    wait_sel = np.flatnonzero((slices.label == voc.role_label("runqueue_wait")) & slices.instant)
    wait[np.searchsorted(rep_ids, slices.rep[wait_sel])] = slices.value[wait_sel].astype(np.int64)
    return dur, cpu, wait


def facts_of(slices: Slices, rep_ids: np.ndarray) -> RepFacts:
    """The facts of repetitions `rep_ids` (ascending) from their slices."""
    dur, cpu, wait = rep_windows(slices, rep_ids)
    orphans = np.array([slices.orphan_stops.get(int(r), 0) for r in rep_ids], dtype=np.int32)
    unbalanced = np.isin(rep_ids, np.fromiter(slices.unbalanced_reps, dtype=np.int64))
    return RepFacts(rep_ids, dur, cpu, wait, orphans, unbalanced, np.isin(rep_ids, slices.rep))


class Batchable(Traced, Protocol):
    """A dataset whose repetitions can be measured a batch at a time (a Dataset)."""

    def with_traces(self, reps: RepetitionColumns, events: Events, slices: Slices) -> Traced: ...


def derive_dataset(ds: Traced) -> Derived:
    """The summaries of a dataset whose slices are in memory (decoded as they are)."""
    return Derived(facts_of(ds.slices, ds.reps.id), measures(ds, slice_costs(ds)))


def derive_batch(ds: Batchable, positions: np.ndarray, traces: Sequence[tuple[int, bytes]]) -> Derived:
    """The summaries of the repetitions at `positions` of ds.reps (ascending), from their traces."""
    events = decode_many([t[1] for t in traces], [t[0] for t in traces])
    reps = RepetitionColumns(**{f: getattr(ds.reps, f)[positions] for f in field_names(RepetitionColumns)})
    sub = ds.with_traces(reps, events, build_slices(events))
    return Derived(facts_of(sub.slices, reps.id), measures(sub, slice_costs(sub)))


def _batches(n_events: np.ndarray) -> Iterator[np.ndarray]:
    """Positions of consecutive repetitions holding about BATCH_RECORDS records each."""
    start, total, limit = 0, 0, BATCH_RECORDS
    for i, n in enumerate(n_events.tolist()):
        total += n
        if total >= limit:
            yield np.arange(start, i + 1)
            start, total = i + 1, 0
    if start < len(n_events):
        yield np.arange(start, len(n_events))


def derive_missing(ds: Batchable, positions: np.ndarray, read_traces: Callable[[list[int]], list[tuple[int, bytes]]],
                   n_events: np.ndarray) -> Iterator[Derived]:
    """The summaries of the repetitions at `positions` (ascending), a batch at a time."""
    for batch in _batches(n_events[positions]):
        pos = positions[batch]
        yield derive_batch(ds, pos, read_traces(ds.reps.id[pos].tolist()))


# ---------------------------------------------------------------- stored batches
STORED_KINDS: tuple[Kind, ...] = tuple(SELECTIONS)  # disjoint: each kind in one (schema/kinds.py)


def to_stored(derived: Derived, kind: Kind, config_id: int) -> DerivedBatch:
    """One configuration's batch as a row of the store."""
    facts, table = derived.facts, derived.table
    f = {name: getattr(facts, name) for name, _ in FACT_COLUMNS}
    m = {name: getattr(table, name) for name, _ in MEASURE_COLUMNS}
    return DerivedBatch(DERIVE_VERSION, kind, int(facts.id[0]), int(facts.id[-1]), len(facts.id), len(table),
                        table.incomplete_records, _columns(f, FACT_COLUMNS), _columns(m, MEASURE_COLUMNS), config_id)


def facts_from_stored(batch: DerivedBatch) -> RepFacts:
    f = _uncolumns(batch.reps, batch.n_reps, FACT_COLUMNS)
    return RepFacts(**{**f, "unbalanced": f["unbalanced"].astype(bool), "traced": f["traced"].astype(bool)})


def measures_from_stored(batch: DerivedBatch) -> MeasureTable:
    m = _uncolumns(batch.measures, batch.n_measures, MEASURE_COLUMNS)
    return MeasureTable(**m, incomplete_records=batch.incomplete_records)


def combine(parts: Sequence[Derived], rep_ids: np.ndarray) -> Derived:
    """One dataset's summaries from batches of disjoint repetitions (stored and fresh):
    facts aligned with `rep_ids` (ascending; −1 where a repetition has none), the measure
    rows of each metric ordered by repetition as a whole-dataset derivation orders them.
    Rows of repetitions not in `rep_ids` (stored since they were read, or read from
    elsewhere) are left out."""
    parts = sorted(parts, key=lambda p: int(p.facts.id[0]) if len(p.facts.id) else -1)
    facts = RepFacts(**{name: np.concatenate([getattr(p.facts, name) for p in parts]) if parts
                        else np.empty(0, dt) for name, dt in FACT_COLUMNS})
    overlapping = bool(np.any(np.diff(facts.id) <= 0))
    if overlapping:
        order = np.argsort(facts.id, kind="stable")
        facts = RepFacts(**{name: getattr(facts, name)[order] for name, _ in FACT_COLUMNS})
    table = _of_reps(_stacked([p.table for p in parts], sum(len(p.table) for p in parts)), rep_ids, overlapping)
    return Derived(_aligned(facts, rep_ids), table)


def stored_table(batches: Sequence[DerivedBatch], rep_ids: np.ndarray) -> MeasureTable:
    """The measure rows of stored batches as combine() gives them, decoded a batch at a time
    into the table: reading a configuration peaks at its table and one batch, not twice the table."""
    batches = sorted(batches, key=lambda b: b.first_rep)
    overlapping = any(b.first_rep <= a.last_rep for a, b in zip(batches, batches[1:]))
    decoded = (measures_from_stored(b) for b in batches)
    return _of_reps(_stacked(decoded, sum(b.n_measures for b in batches)), rep_ids, overlapping)


def _stacked(tables: Iterable[MeasureTable], n: int) -> MeasureTable:
    """The `n` rows of tables one after another, copied in a table at a time."""
    cols = {name: np.empty(n, dtype=dt) for name, dt in MEASURE_COLUMNS}
    at = incomplete = 0
    for t in tables:
        for name, _ in MEASURE_COLUMNS:
            cols[name][at:at + len(t)] = getattr(t, name)
        at += len(t)
        incomplete += t.incomplete_records
    return MeasureTable(**cols, incomplete_records=incomplete)


def _of_reps(table: MeasureTable, rep_ids: np.ndarray, overlapping: bool) -> MeasureTable:
    """The rows of `rep_ids` only; by repetition where batches overlapped (not written so)."""
    if len(table) and not np.isin(table.rep, rep_ids).all():
        table = take_rows(table, np.flatnonzero(np.isin(table.rep, rep_ids)))
    return take_rows(table, np.argsort(table.rep, kind="stable")) if overlapping else table


EMPTY_TABLE = MeasureTable(*(np.empty(0, dt) for _, dt in MEASURE_COLUMNS))


def take_rows(table: MeasureTable, rows: np.ndarray) -> MeasureTable:
    return MeasureTable(*(getattr(table, name)[rows] for name, _ in MEASURE_COLUMNS),
                        incomplete_records=table.incomplete_records)


def _aligned(facts: RepFacts, rep_ids: np.ndarray) -> RepFacts:
    """Facts in the order of `rep_ids`; a repetition without any gets −1, 0 or False."""
    pos = np.searchsorted(facts.id, rep_ids)
    safe = np.minimum(pos, max(len(facts.id) - 1, 0))
    found = (pos < len(facts.id)) & (facts.id[safe] == rep_ids) if len(facts.id) else np.zeros(len(rep_ids), bool)
    out = {}
    for name, dt in FACT_COLUMNS:
        col = getattr(facts, name)
        blank = {"orphan_stops": 0, "unbalanced": 0, "traced": 0}.get(name, -1)
        out[name] = np.where(found, col[safe], blank).astype(dt) if len(col) else np.full(len(rep_ids), blank, dt)
    out["unbalanced"], out["traced"] = out["unbalanced"].astype(bool), out["traced"].astype(bool)
    out["id"] = np.asarray(rep_ids, dtype=np.int64)
    return RepFacts(**out)


def stored_rep_ids(cache: DerivedReads, kind: Kind) -> np.ndarray:
    """The repetitions whose summaries of this version are stored."""
    ids = [_uncolumns(b.reps, b.n_reps, FACT_COLUMNS)["id"]
           for b in cache.derived_batches(kind, DERIVE_VERSION, measures=False)]
    return np.concatenate(ids) if ids else np.empty(0, np.int64)


def stored_twice(rep_ids: np.ndarray) -> bool:
    """Whether stored summaries cover some repetition twice: two `tlsbench derive` at once
    wrote such stores before derive took the writer lock (migration 015 drops exact copies
    when a writer opens the store). Read as they are, every value of those would count twice:
    a reader uses none of them and derives them now, and `derive` derives them again."""
    return len(np.unique(rep_ids)) < len(rep_ids)


@dataclass
class StoredSummaries:
    """A dataset's summaries as a report reads them: the facts of every repetition at once,
    the measure rows a configuration at a time (`config_tables`), from the store where this
    version stored them, else from those derived in memory (`fresh`)."""

    cache: DerivedReads   # where they are stored
    kind: Kind
    facts: RepFacts       # aligned with the dataset's repetitions
    stored: np.ndarray    # bool per repetition: its rows are in the store (else in `fresh`)
    fresh: Derived        # the summaries of the other repetitions
    incomplete_records: int  # of every repetition
    twice: bool = False   # the store holds some repetition's summaries twice: none of them used (stored_twice)

    def config_tables(self, config_ids: np.ndarray, wanted: Sequence[int]) -> Iterator[tuple[int, MeasureTable]]:
        """(configuration, its measure rows) for each of `wanted` (ascending), each in the
        order a whole-dataset derivation gives its rows; `config_ids` per repetition. The
        cache is opened again for these reads alone (a forked worker opens its own)."""
        fresh_cfg = config_ids[np.searchsorted(self.facts.id, self.fresh.table.rep)] if len(self.fresh.table) else None
        with self.cache.reopened() as cache:
            for cid in wanted:
                mine = config_ids == cid
                table = stored_table(cache.derived_batches(self.kind, DERIVE_VERSION, int(cid)),
                                     self.facts.id[mine & self.stored])
                if fresh_cfg is not None and np.any(mine & ~self.stored):
                    table = merged(table, take_rows(self.fresh.table, np.flatnonzero(fresh_cfg == cid)))
                yield int(cid), table

    def whole(self, config_ids: np.ndarray) -> Derived:
        """Every repetition's summaries in memory (what needs every row at once)."""
        wanted = np.unique(config_ids)
        tables = [t for _, t in self.config_tables(config_ids, wanted.tolist())]
        return Derived(self.facts, merged(*tables) if tables else take_rows(self.fresh.table, np.empty(0, int)))


def merged(*tables: MeasureTable) -> MeasureTable:
    """The rows of several tables of disjoint repetitions, each metric's ordered by repetition
    (a stable sort: a repetition's rows keep their order), as a whole-dataset derivation."""
    rows = {name: np.concatenate([getattr(t, name) for t in tables]) for name, _ in MEASURE_COLUMNS}
    table = MeasureTable(**rows, incomplete_records=sum(t.incomplete_records for t in tables))
    return take_rows(table, np.lexsort((table.rep, table.metric)))
