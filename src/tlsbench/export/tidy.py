# SPDX-License-Identifier: Apache-2.0
"""Tidy data out: one row per repetition, or one row per slice (handshake step occurrence,
crypto operation, application record, experiment group), every configuration field its
own column (export/columns.py), as Arrow record batches written to Parquet or CSV.

The store is read a chunk of repetitions at a time (analysis.load for the configurations
and repetition columns, then StoreReader.traces per chunk), and every chunk is turned into
columns with numpy and pyarrow: memory stays bounded by the chunk, whatever the store's
size, and no Python object is made per record. This is the one module that reads the store
for the tidy tables; a derived per-repetition table would be read here instead.

Values are the analysis' own (analysis/derive/measures.py): a step's processing is its duration
minus nested I/O minus the tracer's cost, and the repetition table's per-peer columns are
the sums the statistics are taken over. Schema: docs/export.md.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa

from tlsbench.analysis.derive.dataset import Dataset, Reps

from tlsbench.analysis.derive.load import load
from tlsbench.analysis.derive.measures import (METRIC, NO_LABEL, NO_PEER, MeasureTable, SliceCosts, measures, slice_costs)
from tlsbench.analysis.derive.samples import config_labels
from tlsbench.analysis.derive.slices import build_slices, decode_many
from tlsbench.analysis.vocab import vocab
from tlsbench.core.files import open_output
from tlsbench.schema import LINK_TRAFFIC, REPETITION
from tlsbench.store.api import StoreReader
from tlsbench.export.columns import CONFIG_COLUMNS, Column, config_records, stored

LEVELS = ("repetition", "slice")
TIDY_FORMATS = ("parquet", "csv")
CHUNK_REPETITIONS = 500  # repetitions read, measured and written at a time (a few MB of slices)

ARROW_TYPES = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
TEXT = pa.dictionary(pa.int32(), pa.string())  # repeated names: stored once per batch

# ------------------------------------------------------------------ the schema
REPETITION_COLUMNS: tuple[Column, ...] = (
    stored(REPETITION, "round"),
    stored(REPETITION, "idx", "index"),
    stored(REPETITION, "agent_id"),
    stored(REPETITION, "status"),
    stored(REPETITION, "flags", note=" Each flag also has a flag_<name> column."),
    stored(REPETITION, "error_code"),
    stored(REPETITION, "dropped_events"),
    Column("excluded", "bool", "Left out of the statistics by default: status not OK, TRACE_OVERFLOW or "
                               "RETRANSMITTED, or descheduled (`--include-flagged` keeps them)."),
    Column("descheduled", "bool", "Another process ran in the middle of it (run-queue wait or wall above CPU time)."),
)
REPETITION_ID = stored(REPETITION, "id", "repetition_id")


def flag_columns() -> tuple[Column, ...]:
    return tuple(Column(f"flag_{name.lower()}", "bool", f"The {name} flag is set.") for name in vocab().flags)


# (column, metric, peer): one value per repetition, as the statistics take it.
_REP_MEASURES = (
    ("handshake_processing_client", "handshake_processing", "client"),
    ("handshake_processing_server", "handshake_processing", "server"),
    ("handshake_io_client", "handshake_io", "client"),
    ("handshake_io_server", "handshake_io", "server"),
    ("handshake_overhead_client", "handshake_overhead", "client"),
    ("handshake_overhead_server", "handshake_overhead", "server"),
    ("handshake_time", "handshake_time", "none"),
    ("io_share", "io_share", "none"),
    ("handshake_cpu", "handshake_cpu", "none"),
    ("handshake_bytes_client", "handshake_bytes", "client"),
    ("handshake_bytes_server", "handshake_bytes", "server"),
    ("bytes_c2s", "bytes_c2s", "none"),
    ("bytes_s2c", "bytes_s2c", "none"),
)


def measure_columns() -> tuple[Column, ...]:
    from tlsbench.analysis.derive.measures import METRICS

    unit = {"ns": "counter_unit", "B": "bytes", "fraction": "fraction"}
    return tuple(Column(name, "float", f"{METRICS[METRIC[m]].meaning} [{unit[METRICS[METRIC[m]].unit]}]"
                        + ("" if peer == "none" else f" Peer: {peer}."))
                 for name, m, peer in _REP_MEASURES)


STORED_COLUMNS: tuple[Column, ...] = (
    Column("header_wall", "float", "The REP header's handshake stop–start wall time of the (device) agent, I/O and "
                                   "network waiting included: the network section's stop–start [counter_unit]."),
    Column("header_cpu", "float", "The REP header's thread CPU time of the (device) agent's handshake phase: the "
                                  "network section's device CPU [ns]."),
    Column("runqueue_wait", "float", "Time the agent waited for a CPU during the repetition, where it recorded it [ns]."),
)
LINK_COLUMNS: tuple[Column, ...] = tuple(
    stored(LINK_TRAFFIC, name, f"link_{name}", " For this repetition's connection; empty without an emulated link.")
    for name in LINK_TRAFFIC.row_names)

SLICE_COLUMNS: tuple[Column, ...] = (
    Column("slice_kind", "str", "step (one occurrence of a handshake step), crypto (one operation), "
                                "record_write / record_read (one logical record), group (an experiment group span)."),
    Column("peer", "str", "client, server, or none."),
    Column("label", "str", "The step, crypto operation or record label (spec/labels.toml), or the experiment group's name."),
    Column("position", "int", "Steps, crypto, groups: index of the START record in the repetition's trace. Records: "
                              "the record's ordinal within its repetition, peer and direction."),
    Column("start", "float", "START time from the repetition's first record [counter_unit]; empty for records."),
    Column("duration", "float", "STOP − START [counter_unit]; empty for records."),
    Column("processing", "float", "Processing: duration − nested I/O − tracer overhead (steps, crypto, groups); "
                                  "records: write_processing / read_processing [counter_unit]."),
    Column("processing_incl", "float", "Records only: write_processing_post / read_processing_pre [counter_unit]."),
    Column("total", "float", "Records only: write_total / read_total, I/O and waiting included [counter_unit]."),
    Column("io", "float", "I/O nested in the slice, tracer-corrected [counter_unit]; empty for records."),
    Column("overhead", "float", "Tracer overhead inside the slice (subtracted) [counter_unit]; empty for records."),
    Column("cpu", "float", "Thread CPU time STOP − START where the agent read it [ns]; empty otherwise."),
    Column("value", "int", "The STOP record's value: a return code (steps, crypto) as a signed integer; empty for records."),
)
SLICE_REP_COLUMNS = ("round", "index", "status", "excluded")  # repeated on every slice row, to filter by


def columns(level: str) -> tuple[Column, ...]:
    """Every column of a level's table, in order."""
    if level == "repetition":
        return ((REPETITION_ID,) + CONFIG_COLUMNS + REPETITION_COLUMNS + flag_columns() + STORED_COLUMNS
                + measure_columns() + LINK_COLUMNS)
    by_name = {c.name: c for c in REPETITION_COLUMNS}
    return (REPETITION_ID,) + CONFIG_COLUMNS + tuple(by_name[n] for n in SLICE_REP_COLUMNS) + SLICE_COLUMNS


def schema(level: str) -> pa.Schema:
    return pa.schema([pa.field(c.name, TEXT if c.type == "str" else ARROW_TYPES[c.type]) for c in columns(level)])


# ------------------------------------------------------------------ reading, a chunk at a time
def _take(reps: Reps, sel: slice) -> Reps:
    return Reps(**{f.name: getattr(reps, f.name)[sel] for f in dataclasses.fields(Reps)})


def chunks(store: StoreReader, size: int = CHUNK_REPETITIONS) -> Iterator[Dataset]:
    """The store's repetitions (every kind) as small datasets of `size` repetitions, each with
    its traces decoded into slices."""
    base = load(store, store, rep_ids=[], kind="all")  # no summaries: the traces themselves
    for start in range(0, len(base.reps), size):
        reps = _take(base.reps, slice(start, start + size))
        traces = store.traces("all", reps.id.tolist())
        events = decode_many([t[1] for t in traces], [t[0] for t in traces])
        yield base.with_traces(reps, events, build_slices(events))


def display_names(ds: Dataset) -> dict[int, str]:
    """The report's display names: the handshakes' (analysis/derive/samples.py), and the
    experiments' "library experiment size" (the statistics CSV's)."""
    handshakes = {cid: c for cid, c in ds.configs.items() if not c.experiment}
    names = config_labels(handshakes) if handshakes else {}
    names.update({cid: f"{c.library} {c.experiment} {c.total_bytes}" for cid, c in ds.configs.items() if c.experiment})
    return names


def config_table(ds: Dataset) -> tuple[pa.Table, np.ndarray]:
    """One row per configuration (CONFIG_COLUMNS), names dictionary-encoded, and its ids."""
    records = config_records(ds, display_names(ds))
    ids = np.array(sorted(records), dtype=np.int64)
    cols = {}
    for i, c in enumerate(CONFIG_COLUMNS):
        values = [records[cid][i] for cid in ids.tolist()]
        cols[c.name] = pa.array(values, type=pa.string()).dictionary_encode() if c.type == "str" else \
            pa.array(values, type=ARROW_TYPES[c.type])
    return pa.table(cols), ids


def config_rows(store: StoreReader) -> list[dict]:
    """Every configuration's CONFIG_COLUMNS values and its config_id, those without a
    repetition too (a configuration stored with why it was not run)."""
    table, ids = config_table(load(store, store, rep_ids=[], kind="all"))
    return [{"config_id": cid, **row} for cid, row in zip(ids.tolist(), table.to_pylist())]


# ------------------------------------------------------------------ columns of one chunk
def _optional(values: np.ndarray, missing: np.ndarray, kind: str = "float") -> pa.Array:
    return pa.array(values, type=ARROW_TYPES[kind], mask=missing)


def _text(codes: np.ndarray, names: list[str]) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(names, type=pa.string()))


def _strings(values: np.ndarray) -> pa.Array:
    """An object array of a few distinct strings (statuses) as a dictionary column."""
    names, codes = np.unique(values.astype(str), return_inverse=True)
    return _text(codes.reshape(-1), names.tolist())


def _per_rep(ds: Dataset, table: MeasureTable, metric: str, peer: str) -> tuple[np.ndarray, np.ndarray]:
    """One measure's value per repetition of the chunk, and where there is none."""
    n = len(ds.reps)
    sel = ((table.metric == METRIC[metric]) & (table.peer == (NO_PEER if peer == "none" else vocab().peers[peer]))
           & (table.label == NO_LABEL))
    values, missing = np.zeros(n), np.ones(n, dtype=bool)
    pos = ds.rep_index(table.rep[sel])
    values[pos], missing[pos] = table.value[sel], False
    return values, missing | ~np.isfinite(values)


def _runqueue_wait(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
    slices = ds.slices
    sel = np.flatnonzero((slices.label == vocab().role_label("runqueue_wait")) & slices.instant)
    values, missing = np.zeros(len(ds.reps)), np.ones(len(ds.reps), dtype=bool)
    pos = ds.rep_index(slices.rep[sel])
    values[pos], missing[pos] = slices.value[sel].astype(np.float64), False
    return values, missing


def _link(ds: Dataset) -> dict[str, pa.Array]:
    ids = ds.reps.id.tolist()
    have = np.array([i in ds.link_traffic for i in ids], dtype=bool)
    out = {}
    for name in LINK_TRAFFIC.row_names:
        values = np.array([getattr(ds.link_traffic[i], name) if h else 0 for i, h in zip(ids, have)], dtype=np.int64)
        out[f"link_{name}"] = _optional(values, ~have, "int")
    return out


def _config_columns(configs: pa.Table, ids: np.ndarray, config_of_row: np.ndarray) -> dict[str, pa.Array]:
    """CONFIG_COLUMNS for rows of the given configuration ids (dictionary columns: no string copied)."""
    rows = configs.take(pa.array(np.searchsorted(ids, config_of_row)))
    return {name: rows.column(name).combine_chunks() for name in rows.column_names}


def _rep_columns(ds: Dataset, pos: np.ndarray | None = None) -> dict[str, pa.Array]:
    """REPETITION_COLUMNS of the chunk's repetitions (at `pos`, one per row, when given)."""
    r = ds.reps
    pick = (lambda a: a) if pos is None else (lambda a: a[pos])  # noqa: E731
    agent = pick(r.agent_id)
    return {"round": pa.array(pick(r.round)), "index": pa.array(pick(r.idx)),
            "agent_id": _optional(agent, agent < 0, "int"), "status": _strings(pick(r.status)),
            "flags": pa.array(pick(r.flags)), "error_code": pa.array(pick(r.error_code)),
            "dropped_events": pa.array(pick(r.dropped_events)), "excluded": pa.array(pick(ds.excluded_mask())),
            "descheduled": pa.array(pick(ds.descheduled_mask()))}


def repetition_batch(ds: Dataset, configs: pa.Table, ids: np.ndarray) -> pa.RecordBatch:
    """One row per repetition of a chunk."""
    table = measures(ds)
    r = ds.reps
    cols: dict[str, pa.Array] = {"repetition_id": pa.array(r.id)}
    cols |= _config_columns(configs, ids, r.config_id)
    cols |= _rep_columns(ds)
    for name, bit in vocab().flags.items():
        cols[f"flag_{name.lower()}"] = pa.array((r.flags & bit) != 0)
    cols["header_wall"] = _optional(r.handshake_wall_ns.astype(np.float64), r.handshake_wall_ns < 0)
    cols["header_cpu"] = _optional(r.handshake_cpu_ns.astype(np.float64), r.handshake_cpu_ns < 0)
    cols["runqueue_wait"] = _optional(*_runqueue_wait(ds))
    for name, metric, peer in _REP_MEASURES:
        cols[name] = _optional(*_per_rep(ds, table, metric, peer))
    cols |= _link(ds)
    return pa.RecordBatch.from_pydict(cols, schema=schema("repetition"))


# Record measures: (kind, processing, processing_incl, total), each added by
# analysis/derive/measures.py from the same (rep, peer, label) arrays in the same order.
_RECORD_METRICS = (("record_write", "write_processing", "write_processing_post", "write_total"),
                   ("record_read", "read_processing", "read_processing_pre", "read_total"))
SLICE_KINDS = ("step", "crypto", "record_write", "record_read", "group")


@dataclasses.dataclass
class _Part:
    """Rows of one slice kind, as arrays (NaN / −1 where a column does not apply)."""

    rep: np.ndarray
    peer: np.ndarray
    label: np.ndarray  # index into the chunk's label names
    position: np.ndarray
    start: np.ndarray
    duration: np.ndarray
    processing: np.ndarray
    processing_incl: np.ndarray
    total: np.ndarray
    io: np.ndarray
    overhead: np.ndarray
    cpu: np.ndarray
    value: np.ndarray
    has_value: np.ndarray


def _slice_part(ds: Dataset, costs: SliceCosts, idx: np.ndarray, label: np.ndarray) -> _Part:
    s = ds.slices
    first = ds.events.rec["t_ns"][ds.events.rep_first[np.searchsorted(ds.events.rep_ids, s.rep[idx])]]
    nan = np.full(len(idx), np.nan)
    cpu = s.cpu[idx].astype(np.float64)
    return _Part(s.rep[idx], s.peer[idx], label, s.start_pos[idx], (s.ts[idx] - first.astype(np.int64)).astype(float),
                 s.dur[idx].astype(float), costs.processing[idx], nan, nan, costs.io[idx], costs.overhead[idx],
                 np.where(cpu >= 0, cpu, np.nan), s.value[idx].view(np.int64), np.ones(len(idx), dtype=bool))


def _record_part(table: MeasureTable, metrics: tuple[str, str, str]) -> _Part:
    sel = [np.flatnonzero(table.metric == METRIC[m]) for m in metrics]
    rep, peer, label = table.rep[sel[0]], table.peer[sel[0]], table.label[sel[0]]
    if any(len(s) != len(sel[0]) or not np.array_equal(table.rep[s], rep) for s in sel[1:]):
        raise AssertionError("record measures are not aligned (analysis/derive/measures.py _records changed)")
    order = np.lexsort((np.arange(len(rep)), label, peer, rep))
    key = np.stack([rep, peer, label])[:, order]
    new = np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)] if len(rep) else np.empty(0, bool)
    start = np.flatnonzero(new)
    ordinal = np.empty(len(rep), dtype=np.int64)
    ordinal[order] = np.arange(len(rep)) - np.repeat(start, np.diff(np.r_[start, len(rep)]))
    nan = np.full(len(rep), np.nan)
    return _Part(rep, peer, label, ordinal, nan, nan, table.value[sel[0]], table.value[sel[1]],
                 table.value[sel[2]], nan, nan, nan, np.zeros(len(rep), np.int64), np.zeros(len(rep), dtype=bool))


def _group_labels(ds: Dataset, idx: np.ndarray, names: list[str]) -> np.ndarray:
    """Each USER_GROUP slice's group name, as an index into `names` (appended to)."""
    config = ds.reps.config_id[ds.rep_index(ds.slices.rep[idx])]
    group = ds.start_values(idx)
    pairs, inv = np.unique(np.stack([config, group]), axis=1, return_inverse=True)
    codes = []
    for c, g in pairs.T.tolist():
        groups = json.loads(ds.configs[c].experiment_groups or "[]") if c in ds.configs else []
        name = groups[g] if 0 <= g < len(groups) else f"group {g}"
        names.append(name) if name not in names else None
        codes.append(names.index(name))
    return np.array(codes, dtype=np.int64)[inv.reshape(-1)] if len(idx) else np.empty(0, np.int64)


def slice_batch(ds: Dataset, configs: pa.Table, ids: np.ndarray) -> pa.RecordBatch:
    """One row per step occurrence, crypto operation, logical record and experiment group of a chunk."""
    voc, s = vocab(), ds.slices
    costs = slice_costs(ds, voc)
    table = measures(ds, costs, voc)
    label_ids = sorted(voc.label_name)
    names = [voc.label_name[i] for i in label_ids]
    code_of = np.full(1 << 16, -1, dtype=np.int64)
    code_of[label_ids] = np.arange(len(label_ids))
    closed = ~s.open
    parts, kinds = [], []
    for kind, role in (("step", "step"), ("crypto", "crypto")):
        idx = np.flatnonzero((s.category == voc.role_cat(role)) & closed)
        parts.append(_slice_part(ds, costs, idx, code_of[s.label[idx]]))
        kinds.append(kind)
    for kind, *metrics in _RECORD_METRICS:
        part = _record_part(table, tuple(metrics))
        part.label = code_of[part.label]
        parts.append(part)
        kinds.append(kind)
    groups = np.flatnonzero((s.label == voc.role_label("user_group")) & closed)
    parts.append(_slice_part(ds, costs, groups, _group_labels(ds, groups, names)))
    kinds.append("group")
    whole = _Part(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(_Part)))
    kind = np.concatenate([np.full(len(p.rep), SLICE_KINDS.index(k)) for p, k in zip(parts, kinds)])
    order = np.lexsort((whole.position, kind, whole.peer, whole.rep))
    pos = ds.rep_index(whole.rep[order])
    peer_names = sorted(voc.peers, key=voc.peers.__getitem__)
    peer_code = np.full(256, peer_names.index("none"), dtype=np.int64)  # NO_PEER: a whole-repetition value
    peer_code[[voc.peers[n] for n in peer_names]] = np.arange(len(peer_names))
    peers = peer_code[whole.peer[order].astype(np.int64)]
    cols: dict[str, pa.Array] = {"repetition_id": pa.array(whole.rep[order].astype(np.int64))}
    cols |= _config_columns(configs, ids, ds.reps.config_id[pos])
    cols |= {k: v for k, v in _rep_columns(ds, pos).items() if k in SLICE_REP_COLUMNS}
    cols["slice_kind"] = _text(kind[order], list(SLICE_KINDS))
    cols["peer"] = _text(peers, peer_names)
    cols["label"] = _text(whole.label[order], names)
    cols["position"] = pa.array(whole.position[order].astype(np.int64))
    for name in ("start", "duration", "processing", "processing_incl", "total", "io", "overhead", "cpu"):
        values = getattr(whole, name)[order].astype(np.float64)
        cols[name] = _optional(values, np.isnan(values))
    cols["value"] = _optional(whole.value[order].astype(np.int64), ~whole.has_value[order], "int")
    return pa.RecordBatch.from_pydict(cols, schema=schema("slice"))


BATCHES = {"repetition": repetition_batch, "slice": slice_batch}


def batches(store: StoreReader, level: str, size: int = CHUNK_REPETITIONS) -> Iterator[pa.RecordBatch]:
    """The level's table of a store, a chunk of repetitions at a time."""
    configs: tuple[pa.Table, np.ndarray] | None = None
    for ds in chunks(store, size):
        configs = configs or config_table(ds)
        yield BATCHES[level](ds, *configs)


# ------------------------------------------------------------------ writing
def write(store: StoreReader, out: str | Path, level: str, fmt: str,
          size: int = CHUNK_REPETITIONS) -> int:
    """Writes the level's table as Parquet or CSV into `out` (`-`: standard output; a file
    appears complete or not at all, a device or FIFO is written through: files.open_output),
    streaming; returns the rows written."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rows = 0
    with open_output(out) as sink:
        writer = (pq.ParquetWriter(sink, schema(level), compression="zstd") if fmt == "parquet"
                  else pacsv.CSVWriter(sink, schema(level), write_options=pacsv.WriteOptions(quoting_style="needed")))
        try:
            for batch in batches(store, level, size):
                writer.write_batch(batch)
                rows += batch.num_rows
        except BaseException:
            with contextlib.suppress(Exception):  # the first error is the one to tell; the output is dropped
                writer.close()
            raise
        writer.close()
    return rows


def read_table(store: StoreReader, level: str) -> pa.Table:
    """The whole table in memory (the Python API's DataFrames)."""
    parts = list(batches(store, level))
    return pa.Table.from_batches(parts, schema=schema(level))
