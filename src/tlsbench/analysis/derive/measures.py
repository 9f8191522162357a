# SPDX-License-Identifier: Apache-2.0
"""Measures of each repetition, derived from its slices (definitions: docs/methodology.md).

Per slice: ``dur = processing + io + overhead``, where ``io`` is the I/O time nested in it
(corrected for the tracer) and ``overhead`` the tracer's own cost inside it, from the
agent's HELLO calibration: an empty span measures ``e = empty_span_ns``; each record
written inside a window costs ``c = event_cost_ns``; so a window bounded by two records
with k records strictly inside carries ``e + c·k`` of tracer time.

Everything is vectorised over all repetitions at once; the result is one long table
(repetition, peer, metric, label, value) from which statistics are taken.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import numpy as np

from tlsbench.analysis.derive.slices import Slices
from tlsbench.analysis.vocab import Vocab, vocab
from tlsbench.schema import RepetitionColumns


class Traced(Protocol):
    """What measures are taken from: repetitions with their slices and their agents'
    calibrations (a Dataset, analysis/derive/dataset.py, or a batch of one)."""

    reps: RepetitionColumns
    calib: Mapping[int, Any]  # agent id -> its Calibration (empty_span_ns, event_cost_ns)

    @property
    def slices(self) -> Slices: ...
    def rep_index(self, rep_ids: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Metric:
    """One measure: what it is, its unit and what one value is taken over."""

    name: str
    unit: str          # "ns", "fraction" or "B"
    per: str           # one value per: "rep" (and peer), "record", "occurrence"
    meaning: str


# Codes are positions in this tuple (stable within one version of tlsbench).
METRICS: tuple[Metric, ...] = (
    Metric("step", "ns", "rep", "Processing of one handshake step (sum over its occurrences): duration − nested I/O − tracer overhead."),
    Metric("step_io", "ns", "rep", "I/O time nested in one handshake step."),
    Metric("crypto", "ns", "occurrence", "Processing of one cryptographic operation (one call)."),
    Metric("handshake_processing", "ns", "rep", "Network-invariant handshake cost of one peer: sum of its steps' processing."),
    Metric("handshake_io", "ns", "rep", "I/O time of one peer during the handshake."),
    Metric("handshake_overhead", "ns", "rep", "Tracer overhead subtracted from one peer's step processing."),
    Metric("handshake_time", "ns", "rep", "Handshake stop–start time, both peers, I/O included (tracer overhead subtracted)."),
    Metric("io_share", "fraction", "rep", "Share of the handshake stop–start time spent in I/O (both peers)."),
    Metric("handshake_cpu", "ns", "rep", "Thread CPU time of the handshake phase, where the agent read it."),
    Metric("handshake_bytes", "B", "rep", "Bytes one peer handed to the transport during the handshake."),
    Metric("bytes_c2s", "B", "rep", "Bytes client → server over the whole repetition (transport counter)."),
    Metric("bytes_s2c", "B", "rep", "Bytes server → client over the whole repetition (transport counter)."),
    Metric("write_processing", "ns", "record", "Record write, processing only: L2 − L1 − I/O before L2."),
    Metric("write_processing_post", "ns", "record", "Record write, processing including post-send work: L3 − L1 − I/O."),
    Metric("write_total", "ns", "record", "Record write, total including I/O: L3 − L1."),
    Metric("read_processing", "ns", "record", "Record read, processing only: L3' − L2' − I/O after L2'."),
    Metric("read_processing_pre", "ns", "record", "Record read, processing including pre-arrival work: L3' − L1' − I/O."),
    Metric("read_total", "ns", "record", "Record read, total including I/O and waiting: L3' − L1'."),
    Metric("key_exchange_crypto", "ns", "rep", "Key-exchange crypto of one peer's handshake (ECDH/DH, KEM encapsulate/decapsulate, RSA key transport): its outermost operations' processing, summed."),
    Metric("signature_crypto", "ns", "rep", "Signature crypto of one peer's handshake (sign, verify, chain verification): its outermost operations' processing, summed."),
    Metric("flight_bytes", "B", "rep", "Bytes one peer handed to the transport in one flight of the handshake (label: the flight's number, 1 = the client's first)."),
    Metric("record_overhead", "B", "record", "Bytes a record write handed to the transport beyond its plaintext: the record header, the AEAD tag or MAC and padding, the DTLS 1.3 content type and connection ID (transport headers not included)."),
)
# Metrics whose label is not a spec label: how their label reads.
LABEL_TEXT = {"flight_bytes": lambda n: f"flight {n}"}
METRIC = {m.name: i for i, m in enumerate(METRICS)}
NO_LABEL = -1
NO_PEER = 255


def label_text(metric: str, label: int) -> str:
    """How a measure's label reads: a spec label's name, a flight's number, "" for none."""
    return "" if label == NO_LABEL else LABEL_TEXT.get(metric, vocab().name)(int(label))


@dataclass
class SliceCosts:
    """Per-slice decomposition dur = processing + io + overhead (arrays aligned with Slices)."""

    processing: np.ndarray  # ns (float64); 0 for I/O slices
    io: np.ndarray          # nested I/O, tracer-corrected (for an I/O slice: itself)
    overhead: np.ndarray    # tracer time inside the slice (own boundary + records inside)
    top_io: np.ndarray      # bool: an I/O slice not nested in another I/O slice
    record_parent: np.ndarray  # nearest enclosing record slice, −1 if none
    e: np.ndarray           # empty-span cost used for this slice's repetition
    c: np.ndarray           # per-event cost used for this slice's repetition


@dataclass
class MeasureTable:
    """The long table of measures. One row per value."""

    rep: np.ndarray     # repetition id
    peer: np.ndarray    # peer code; NO_PEER for whole-repetition measures
    metric: np.ndarray  # index into METRICS
    label: np.ndarray   # step / crypto / record label id, NO_LABEL otherwise
    value: np.ndarray   # float64 in the metric's unit
    incomplete_records: int = 0  # record calls left without a completing call (failed reps)

    def __len__(self) -> int:
        return len(self.value)


def _ancestor_walk(parent: np.ndarray, start: np.ndarray):
    """Yield (members, ancestor) arrays going up one level at a time from ``start`` slices."""
    members = np.asarray(start)
    cur = parent[members]
    while len(members):
        ok = cur >= 0
        members, cur = members[ok], cur[ok]
        if not len(members):
            return
        yield members, cur
        cur = parent[cur]


def slice_costs(ds: Traced, voc: Vocab | None = None) -> SliceCosts:
    voc = voc or vocab()
    slices = ds.slices
    n = len(slices)
    agent = ds.reps.agent_id[ds.rep_index(slices.rep)] if n else np.empty(0, np.int64)
    e_by, c_by = {a: k.empty_span_ns for a, k in ds.calib.items()}, {a: k.event_cost_ns for a, k in ds.calib.items()}
    uniq, inv = np.unique(agent, return_inverse=True)
    e = np.array([e_by.get(int(a), 0.0) for a in uniq])[inv] if n else np.empty(0)
    c = np.array([c_by.get(int(a), 0.0) for a in uniq])[inv] if n else np.empty(0)
    inside = np.maximum(slices.stop_pos - slices.start_pos - 1, 0)
    overhead = np.where(slices.instant, 0.0, e + c * inside)
    is_io = slices.category == voc.role_cat("io")
    is_rec = slices.category == voc.role_cat("record")
    io_idx = np.flatnonzero(is_io)
    nested_in_io = np.zeros(n, dtype=bool)
    for m, a in _ancestor_walk(slices.parent, io_idx):
        nested_in_io[m] |= is_io[a]
    top_io = is_io & ~nested_in_io
    true_io = np.where(top_io, slices.dur - overhead, 0.0)
    io = true_io.copy()
    for m, a in _ancestor_walk(slices.parent, np.flatnonzero(top_io)):
        io += np.bincount(a, weights=true_io[m], minlength=n)
    io[is_io & ~top_io] = 0.0
    processing = np.where(is_io, 0.0, slices.dur - overhead - io)
    rec_parent = np.full(n, -1, dtype=np.int64)
    for m, a in _ancestor_walk(slices.parent, io_idx):
        hit = (rec_parent[m] < 0) & is_rec[a]
        rec_parent[m[hit]] = a[hit]
    return SliceCosts(processing, io, overhead, top_io, rec_parent, e, c)


def _group_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uk, inv = np.unique(keys, return_inverse=True)
    return uk, np.bincount(inv.reshape(-1), weights=values, minlength=len(uk))


class _Rows:
    """Accumulates measure rows, then concatenates once."""

    def __init__(self):
        self.parts: list[tuple] = []

    def add(self, metric: str, rep, peer, label, value) -> None:
        k = len(np.atleast_1d(value))
        b = lambda x, dt: np.broadcast_to(np.asarray(x, dtype=dt), (k,))  # noqa: E731
        self.parts.append((b(rep, np.int64), b(peer, np.int16), b(METRIC[metric], np.int16),
                           b(label, np.int32), b(value, np.float64)))

    def table(self, incomplete: int) -> MeasureTable:
        cols = [np.concatenate([p[i] for p in self.parts]) if self.parts else np.empty(0) for i in range(5)]
        return MeasureTable(*cols, incomplete_records=incomplete)


def _per_rep_peer_label(slices: Slices, idx: np.ndarray, values: np.ndarray, with_label: bool = True):
    """Sum values of slices idx per (rep, peer[, label]); returns (rep, peer, label, sum)."""
    key = (slices.rep[idx].astype(np.int64) * 256 + slices.peer[idx]) * 65536
    if with_label:
        key = key + slices.label[idx]
    uk, s = _group_sum(key, values)
    return uk // 65536 // 256, (uk // 65536) % 256, uk % 65536 if with_label else NO_LABEL, s


def _handshake_windows(slices: Slices, voc: Vocab):
    """Per repetition: the HANDSHAKE slice (first one) index, by rep id."""
    hs = np.flatnonzero((slices.label == voc.role_label("handshake")) & ~slices.open)
    reps, first = np.unique(slices.rep[hs], return_index=True)
    return reps, hs[first]


def _records(slices: Slices, k: SliceCosts, voc: Vocab, rows: _Rows) -> int:
    """Record write/read latency types over logical records; returns incomplete calls."""
    incomplete = 0
    is_top_io = k.top_io
    end = slices.ts + slices.dur
    for role, io_role, metrics in (
        ("record_write", "send", ("write_processing", "write_processing_post", "write_total")),
        ("record_read", "recv", ("read_processing", "read_processing_pre", "read_total")),
    ):
        lab = voc.role_label(role)
        calls = np.flatnonzero((slices.label == lab) & ~slices.open)
        if not len(calls):
            continue
        calls = calls[np.lexsort((slices.start_pos[calls], slices.peer[calls], slices.rep[calls]))]
        done = slices.value[calls].view(np.int64) > 0
        gk = slices.rep[calls] * 256 + slices.peer[calls]
        # A logical record = consecutive calls of one (rep, peer) up to the first that
        # moved plaintext (earlier ones returned WANT_READ/WANT_WRITE).
        boundary = np.r_[True, (gk[1:] != gk[:-1]) | done[:-1]]
        run = np.cumsum(boundary) - 1
        n_runs = int(run[-1]) + 1
        run_first = np.flatnonzero(boundary)
        run_last = np.r_[run_first[1:], len(calls)] - 1
        complete = done[run_last]
        incomplete += int(np.count_nonzero(~complete))
        pos_in = np.full(len(slices), -1, dtype=np.int64)
        pos_in[calls] = np.arange(len(calls))
        # The I/O slices of interest and the call they belong to.
        io_lab = voc.role_label(io_role)
        ios = np.flatnonzero(is_top_io & (k.record_parent >= 0))
        ios = ios[pos_in[k.record_parent[ios]] >= 0]
        owner = pos_in[k.record_parent[ios]]
        io_true = slices.dur[ios] - k.overhead[ios]
        proc_call = k.processing[calls]
        if role == "record_write":
            # L2 = START of the first SEND of the call.
            sends = ios[slices.label[ios] == io_lab]
            own_s, first = np.unique(pos_in[k.record_parent[sends]], return_index=True)
            has = np.zeros(len(calls), dtype=bool)
            has[own_s] = True
            l2 = np.full(len(calls), np.inf)
            l2[own_s] = slices.ts[sends[first]]
            l2_pos = np.zeros(len(calls), dtype=np.int64)
            l2_pos[own_s] = slices.start_pos[sends[first]]
            before = end[ios] <= l2[owner]
            io_win = np.bincount(owner[before], weights=io_true[before], minlength=len(calls))
            inside = np.maximum(l2_pos - slices.start_pos[calls] - 1, 0)
            win = (l2 - slices.ts[calls]) - (k.e[calls] + k.c[calls] * inside) - io_win
            s = np.cumsum(has)
            s_before_run = np.r_[0, s][run_first][run]
            earlier = s - has - s_before_run  # calls with a SEND before this one in the run
            part = np.where(earlier > 0, 0.0, np.where(has, win, proc_call))
        else:
            # L2' = STOP of the last RECV of the call that delivered bytes.
            recvs = ios[(slices.label[ios] == io_lab) & (slices.value[ios].view(np.int64) > 0)]
            rowner = pos_in[k.record_parent[recvs]]
            rev = np.arange(len(recvs))[::-1]
            own_r, last_rev = np.unique(rowner[rev], return_index=True)
            last = recvs[rev[last_rev]]
            has = np.zeros(len(calls), dtype=bool)
            has[own_r] = True
            l2 = np.full(len(calls), -np.inf)
            l2[own_r] = end[last]
            l2_pos = np.zeros(len(calls), dtype=np.int64)
            l2_pos[own_r] = slices.stop_pos[last]
            after = slices.ts[ios] >= l2[owner]
            io_win = np.bincount(owner[after], weights=io_true[after], minlength=len(calls))
            c_end = end[calls]
            inside = np.maximum(slices.stop_pos[calls] - l2_pos - 1, 0)
            win = (c_end - l2) - (k.e[calls] + k.c[calls] * inside) - io_win
            s = np.cumsum(has)
            later = s[run_last][run] - s  # calls delivering bytes after this one in the run
            run_has = (s[run_last] - np.r_[0, s][run_first])[run] > 0
            is_last = np.arange(len(calls)) == run_last[run]
            part = np.where(run_has, np.where(later > 0, 0.0, np.where(has, win, proc_call)),
                            np.where(is_last, proc_call, 0.0))
        only = np.bincount(run, weights=part, minlength=n_runs)
        incl = np.bincount(run, weights=proc_call, minlength=n_runs)
        ovh = np.bincount(run, weights=k.overhead[calls], minlength=n_runs)
        total = end[calls][run_last] - slices.ts[calls][run_first] - ovh
        rep = slices.rep[calls][run_last][complete]
        peer = slices.peer[calls][run_last][complete]
        for name, vals in zip(metrics, (only, incl, total)):
            rows.add(name, rep, peer, lab, vals[complete])
        if role == "record_write":  # what protecting the record added: sent bytes − plaintext
            sent = np.bincount(run[owner[slices.label[ios] == io_lab]],
                               weights=slices.value[ios[slices.label[ios] == io_lab]].view(np.int64).astype(float),
                               minlength=n_runs)
            plain = slices.value[calls][run_last].view(np.int64).astype(float)
            rows.add("record_overhead", rep, peer, lab, (sent - plain)[complete])
    return incomplete


def measures(ds: Traced, costs: SliceCosts | None = None, voc: Vocab | None = None) -> MeasureTable:
    """All measures of all repetitions of a dataset."""
    voc = voc or vocab()
    slices = ds.slices
    k = costs or slice_costs(ds, voc)
    rows = _Rows()
    closed = ~slices.open
    steps = np.flatnonzero((slices.category == voc.role_cat("step")) & closed)
    r, p, lab, s = _per_rep_peer_label(slices, steps, k.processing[steps])
    rows.add("step", r, p, lab, s)
    r, p, lab, s = _per_rep_peer_label(slices, steps, k.io[steps])
    rows.add("step_io", r, p, lab, s)
    crypto = np.flatnonzero((slices.category == voc.role_cat("crypto")) & closed)
    rows.add("crypto", slices.rep[crypto], slices.peer[crypto], slices.label[crypto], k.processing[crypto])
    for metric, vals in (("handshake_processing", k.processing), ("handshake_overhead", k.overhead)):
        r, p, _, s = _per_rep_peer_label(slices, steps, vals[steps], with_label=False)
        rows.add(metric, r, p, NO_LABEL, s)
    # Whole-handshake window: stop–start time, and the I/O of each peer inside it.
    hs_rep, hs = _handshake_windows(slices, voc)
    hs_time = slices.dur[hs] - k.overhead[hs]
    rows.add("handshake_time", hs_rep, NO_PEER, NO_LABEL, hs_time)
    cpu_ok = slices.cpu[hs] >= 0
    rows.add("handshake_cpu", hs_rep[cpu_ok], NO_PEER, NO_LABEL, slices.cpu[hs][cpu_ok].astype(float))
    if len(hs):
        io = np.flatnonzero(k.top_io & closed)
        w = np.searchsorted(hs_rep, slices.rep[io])
        w_ok = w < len(hs_rep)
        io, w = io[w_ok], w[w_ok]
        w_ok = hs_rep[w] == slices.rep[io]
        io, w = io[w_ok], w[w_ok]
        h = hs[w]
        inside = (slices.ts[io] >= slices.ts[h]) & (slices.ts[io] + slices.dur[io] <= slices.ts[h] + slices.dur[h])
        io = io[inside]
        r, p, _, s = _per_rep_peer_label(slices, io, slices.dur[io] - k.overhead[io], with_label=False)
        rows.add("handshake_io", r, p, NO_LABEL, s)
        per_rep = np.bincount(np.searchsorted(hs_rep, r), weights=s, minlength=len(hs_rep))
        with np.errstate(divide="ignore", invalid="ignore"):
            rows.add("io_share", hs_rep, NO_PEER, NO_LABEL, np.where(hs_time > 0, per_rep / hs_time, np.nan))
        sends = io[slices.label[io] == voc.role_label("send")]
        r, p, _, s = _per_rep_peer_label(slices, sends, slices.value[sends].view(np.int64).astype(float), with_label=False)
        rows.add("handshake_bytes", r, p, NO_LABEL, s)
        _flights(slices, io, voc, rows)
    for metric, col in (("bytes_c2s", ds.reps.bytes_c2s), ("bytes_s2c", ds.reps.bytes_s2c)):
        ok = col >= 0
        rows.add(metric, ds.reps.id[ok], NO_PEER, NO_LABEL, col[ok].astype(float))
    _crypto_roles(slices, k, voc, rows)
    incomplete = _records(slices, k, voc, rows)
    return rows.table(incomplete)


def _crypto_roles(slices: Slices, k: SliceCosts, voc: Vocab, rows: _Rows) -> None:
    """Per (rep, peer): the processing of the outermost crypto operations serving the key
    exchange, and those serving signatures (vocab.CRYPTO_ROLES)."""
    crypto = (slices.category == voc.role_cat("crypto")) & ~slices.open
    nested = np.zeros(len(slices), dtype=bool)
    for m, a in _ancestor_walk(slices.parent, np.flatnonzero(crypto)):
        nested[m] |= crypto[a]
    outermost = crypto & ~nested
    for role, metric in (("key_exchange", "key_exchange_crypto"), ("signature", "signature_crypto")):
        idx = np.flatnonzero(outermost & np.isin(slices.label, voc.crypto_role_labels(role)))
        r, p, _, s = _per_rep_peer_label(slices, idx, k.processing[idx], with_label=False)
        rows.add(metric, r, p, NO_LABEL, s)


def _flights(slices: Slices, io: np.ndarray, voc: Vocab, rows: _Rows) -> None:
    """Bytes per flight: a peer's handshake SENDs up to the next RECV that delivered bytes
    are one flight. Flights are numbered as the handshake goes, the client's first being 1:
    the client's k-th is 2k − 1, the server's k-th 2k (with one peer traced, as a device in
    two-process mode, its own flights keep their numbers)."""
    send, recv = voc.role_label("send"), voc.role_label("recv")
    got = (slices.label[io] == recv) & (slices.value[io].view(np.int64) > 0)
    io = io[(slices.label[io] == send) | got]
    io = io[np.lexsort((slices.ts[io], slices.peer[io], slices.rep[io]))]
    if not len(io):
        return
    group = slices.rep[io].astype(np.int64) * 256 + slices.peer[io]
    is_send = slices.label[io] == send
    received = np.cumsum(~is_send)  # RECVs with bytes so far (across groups: only differences matter)
    sends = np.flatnonzero(is_send)
    g, seen = group[sends], received[sends]
    new = np.r_[True, (g[1:] != g[:-1]) | (seen[1:] != seen[:-1])]
    first_of_group = np.r_[True, g[1:] != g[:-1]]
    count = np.cumsum(new)
    own = count - np.maximum.accumulate(np.where(first_of_group, count - 1, 0))  # the peer's k-th flight
    client = slices.peer[io][sends] == voc.peers["client"]
    number = np.where(client, 2 * own - 1, 2 * own)
    key = g * 256 + number  # (rep, peer, flight) in one integer
    uk, total = _group_sum(key, slices.value[io][sends].view(np.int64).astype(float))
    rows.add("flight_bytes", uk // 256 // 256, (uk // 256) % 256, uk % 256, total)
