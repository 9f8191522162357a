# SPDX-License-Identifier: Apache-2.0
"""Trace blobs -> nested slices (the trace-processor view of a repetition).

A trace blob is n × 32-byte little-endian records (docs/protocol.md). START/STOP pairs of
one peer nest; pairing them gives slices (ts, dur, cpu, label, category, peer, depth,
parent, value), the unit every measure is computed from.

Pairing is vectorised for well-formed traces (the normal case): within one (repetition,
peer), the k-th START at nesting level L pairs with the k-th STOP at level L. Traces that
are not balanced (a failed handshake leaves spans open; a full buffer drops events) go
through a small stack machine instead, which closes what it must and marks it ``open``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from tlsbench.core import spec

from tlsbench.analysis.vocab import VALUE_MEANING, Vocab, vocab

RECORD_DTYPE = np.dtype(spec.load().layouts["record"].numpy_fields)  # spec [layout.record]
assert RECORD_DTYPE.itemsize == spec.load().layouts["record"].size


def decode(blob: bytes | memoryview) -> np.ndarray:
    """One repetition's records as a structured array (zero-copy view of the blob)."""
    if len(blob) % RECORD_DTYPE.itemsize:
        raise ValueError(f"trace blob of {len(blob)} bytes is not a multiple of 32")
    return np.frombuffer(blob, dtype=RECORD_DTYPE)


def encode(records: np.ndarray) -> bytes:
    """Inverse of decode (tests and synthetic stores)."""
    return np.ascontiguousarray(records, dtype=RECORD_DTYPE).tobytes()


@dataclass
class Events:
    """Records of many repetitions, sorted by (repetition, seq). Arrays share one index."""

    rep: np.ndarray      # repetition id of each record (int64)
    rec: np.ndarray      # the records (RECORD_DTYPE)
    pos: np.ndarray      # index of the record within its repetition (counts recorded events)
    rep_ids: np.ndarray  # distinct repetition ids, ascending
    rep_first: np.ndarray  # index of each repetition's first record
    rep_count: np.ndarray  # records per repetition


def decode_many(blobs: Sequence[bytes], rep_ids: Sequence[int]) -> Events:
    """Concatenate many repetitions' blobs into one sorted event table."""
    ids = np.asarray(rep_ids, dtype=np.int64)
    counts = np.fromiter((len(b) // 32 for b in blobs), dtype=np.int64, count=len(blobs))
    rec = decode(b"".join(blobs)) if len(blobs) else np.empty(0, RECORD_DTYPE)
    rep = np.repeat(ids, counts)
    order = np.lexsort((rec["seq"], rep))
    if not np.array_equal(order, np.arange(len(order))):
        rec, rep = rec[order], rep[order]
    uniq, first, count = np.unique(rep, return_index=True, return_counts=True)
    pos = np.arange(len(rep), dtype=np.int64) - np.repeat(first, count)
    return Events(rep=rep, rec=rec, pos=pos, rep_ids=uniq, rep_first=first, rep_count=count)


@dataclass
class Slices:
    """Nested spans of many repetitions, in pre-order (by repetition, then START position).

    All arrays have one entry per slice. Times are integer ns on the agent's clock.
    """

    rep: np.ndarray        # repetition id
    ts: np.ndarray         # START time (int64 ns)
    dur: np.ndarray        # STOP − START (int64 ns); 0 for instants
    cpu: np.ndarray        # thread CPU time STOP − START where both were read, else −1
    label: np.ndarray      # label id (uint16)
    category: np.ndarray   # index into vocab().categories, −1 for an undeclared label
    peer: np.ndarray       # peer code (uint8): spec [peers]
    depth: np.ndarray      # nesting depth within its peer (0 = root)
    parent: np.ndarray     # index of the parent slice, −1 for a root
    value: np.ndarray      # STOP value (uint64: bytes, or a return code as two's complement)
    start_pos: np.ndarray  # index of the START record within its repetition
    stop_pos: np.ndarray   # index of the STOP record (last record if closed artificially)
    open: np.ndarray       # True: no STOP was recorded; closed at the last timestamp seen
    instant: np.ndarray    # True: an INSTANT event (zero-length slice)
    orphan_stops: dict[int, int] = field(default_factory=dict)  # rep -> STOPs with no START
    unbalanced_reps: frozenset[int] = frozenset()  # reps that needed the stack machine

    def __len__(self) -> int:
        return len(self.ts)

    def take(self, idx: np.ndarray) -> "Slices":
        """A subset (parents remapped; a parent outside the subset becomes −1)."""
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        remap = np.full(len(self) + 1, -1, dtype=np.int64)
        remap[idx] = np.arange(len(idx))
        cols = {f: getattr(self, f)[idx] for f in _COLUMNS}
        cols["parent"] = remap[self.parent[idx]]  # parent −1 maps to remap[−1] == −1
        reps = set(np.unique(cols["rep"]).tolist())
        return Slices(**cols,
                      orphan_stops={r: n for r, n in self.orphan_stops.items() if r in reps},
                      unbalanced_reps=frozenset(self.unbalanced_reps & reps))


_COLUMNS = ("rep", "ts", "dur", "cpu", "label", "category", "peer", "depth", "parent",
            "value", "start_pos", "stop_pos", "open", "instant")


def _balanced_pairs(ev: Events, gid: np.ndarray, n_groups: int, kinds: dict[str, int]):
    """Vectorised pairing. Returns (start_i, stop_i, level, bad_group_mask) for good groups."""
    kind = ev.rec["kind"]
    is_start, is_stop = kind == kinds["START"], kind == kinds["STOP"]
    delta = is_start.astype(np.int64) - is_stop.astype(np.int64)
    order = np.lexsort((np.arange(len(gid)), gid))  # by group, then record order
    g_sorted = gid[order]
    cs = np.cumsum(delta[order])
    bounds = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]]) if len(order) else np.empty(0, np.int64)
    base = np.r_[0, cs][bounds]  # cumulative sum before each group starts
    depth_after = cs - np.repeat(base, np.diff(np.r_[bounds, len(order)]))
    bad = np.zeros(n_groups, dtype=bool)
    if len(order):
        gmin = np.minimum.reduceat(depth_after, bounds)
        glast = depth_after[np.r_[bounds[1:], len(order)] - 1]
        bad[g_sorted[bounds]] = (gmin < 0) | (glast != 0)
    level_sorted = np.where(is_start[order], depth_after - 1, depth_after)
    level = np.empty_like(level_sorted)
    level[order] = level_sorted
    span = (is_start | is_stop) & ~bad[gid]
    idx = np.flatnonzero(span)
    # Within a balanced group, STARTs and STOPs alternate at each level: pair neighbours.
    o2 = idx[np.lexsort((idx, level[idx], gid[idx]))]
    start_i, stop_i = o2[0::2], o2[1::2]
    mismatch = ev.rec["label"][start_i] != ev.rec["label"][stop_i]
    if mismatch.any():  # a dropped pair of different spans can still balance: use the stack
        bad[np.unique(gid[start_i[mismatch]])] = True
        keep = ~bad[gid[start_i]]
        start_i, stop_i = start_i[keep], stop_i[keep]
    return start_i, stop_i, level, bad


def _stack_pairs(ev: Events, members: np.ndarray, kinds: dict[str, int], last_i: int):
    """Stack machine for one unbalanced (repetition, peer) group; ``last_i`` closes the rest.

    A STOP closes the innermost open span of its label; spans opened inside it whose STOP
    was lost are closed at its time and marked open. A STOP with no open START is an orphan
    (its START was dropped). Spans still open at the end close at the repetition's last record.
    """
    out: list[tuple[int, int, int, int, bool]] = []  # start_i, stop_i, depth, parent_start, open
    stack: list[int] = []
    orphans = 0
    labels, kind = ev.rec["label"], ev.rec["kind"]
    for i in members.tolist():
        k = kind[i]
        if k == kinds["START"]:
            stack.append(i)
        elif k == kinds["STOP"]:
            match = next((j for j in range(len(stack) - 1, -1, -1) if labels[stack[j]] == labels[i]), -1)
            if match < 0:
                orphans += 1
                continue
            for j in range(len(stack) - 1, match, -1):
                out.append((stack[j], i, j, stack[j - 1], True))
            out.append((stack[match], i, match, stack[match - 1] if match else -1, False))
            del stack[match:]
        elif k == kinds["INSTANT"]:
            out.append((i, i, len(stack), stack[-1] if stack else -1, False))
    for j in range(len(stack) - 1, -1, -1):
        out.append((stack[j], last_i, j, stack[j - 1] if j else -1, True))
    return out, orphans


def build_slices(ev: Events, voc: Vocab | None = None) -> Slices:
    """Pair START/STOP records of every (repetition, peer) into nested slices."""
    voc = voc or vocab()
    kinds = voc.kinds
    rec = ev.rec
    rep_dense = np.repeat(np.arange(len(ev.rep_ids)), ev.rep_count)
    gid_raw = rep_dense * 256 + rec["peer"].astype(np.int64)
    uniq_g, gid = np.unique(gid_raw, return_inverse=True)
    gid = gid.reshape(-1)
    start_i, stop_i, level, bad = _balanced_pairs(ev, gid, len(uniq_g), kinds)
    open_ = np.zeros(len(start_i), dtype=bool)
    depth = level[start_i]
    # Instants of good groups: zero-length slices at the level they occur.
    inst_i = np.flatnonzero((rec["kind"] == kinds["INSTANT"]) & ~bad[gid])
    starts_all = np.r_[start_i, inst_i]
    stops_all = np.r_[stop_i, inst_i]
    depth_all = np.r_[depth, level[inst_i]]
    open_all = np.r_[open_, np.zeros(len(inst_i), dtype=bool)]
    # Parent = the latest START one level up in the same group before this record.
    parent_start = np.full(len(starts_all), -1, dtype=np.int64)
    if len(start_i):
        n = len(rec) + 1
        lmax = int(depth_all.max()) + 2
        key_s = (gid[start_i] * lmax + depth) * n + start_i
        srt = np.argsort(key_s)
        keys = key_s[srt]
        has = depth_all > 0
        q = (gid[starts_all[has]] * lmax + depth_all[has] - 1) * n + starts_all[has]
        j = np.searchsorted(keys, q) - 1
        parent_start[has] = start_i[srt][np.maximum(j, 0)]
    # Unbalanced groups: the stack machine.
    orphan_stops: dict[int, int] = {}
    unbalanced: set[int] = set()
    extra: list[tuple[int, int, int, int, bool]] = []
    t_all = rec["t_ns"].astype(np.int64)
    for g in np.flatnonzero(bad).tolist():
        members = np.flatnonzero(gid == g)
        rd = int(rep_dense[members[0]])
        lo, hi = int(ev.rep_first[rd]), int(ev.rep_first[rd] + ev.rep_count[rd])
        last_i = lo + int(np.argmax(t_all[lo:hi]))  # open spans end at the latest timestamp
        out, orphans = _stack_pairs(ev, members, kinds, last_i)
        extra += out
        rid = int(ev.rep_ids[rd])
        unbalanced.add(rid)
        if orphans:
            orphan_stops[rid] = orphan_stops.get(rid, 0) + orphans
    if extra:
        e = np.array(extra, dtype=np.int64).reshape(-1, 5)
        starts_all = np.r_[starts_all, e[:, 0]]
        stops_all = np.r_[stops_all, e[:, 1]]
        depth_all = np.r_[depth_all, e[:, 2]]
        parent_start = np.r_[parent_start, e[:, 3]]
        open_all = np.r_[open_all, e[:, 4].astype(bool)]
    # Pre-order: by START record (records are already sorted by repetition, seq).
    o = np.argsort(starts_all, kind="stable")
    s, t = starts_all[o], stops_all[o]
    pstart = parent_start[o]
    parent = np.where(pstart >= 0, np.searchsorted(s, pstart), -1)
    t_ns = rec["t_ns"].astype(np.int64)
    cpu_ns = rec["cpu_ns"].astype(np.int64)
    is_open = open_all[o]
    end = t_ns[t]
    both_cpu = (cpu_ns[s] > 0) & (cpu_ns[t] > 0) & ~is_open
    lab = rec["label"][s]
    return Slices(
        rep=ev.rep[s], ts=t_ns[s], dur=end - t_ns[s],
        cpu=np.where(both_cpu, cpu_ns[t] - cpu_ns[s], -1),
        label=lab, category=voc.category_code[lab].astype(np.int16),
        peer=rec["peer"][s], depth=depth_all[o].astype(np.int16), parent=parent,
        value=np.where(is_open, np.uint64(0), rec["value"][t]),
        start_pos=ev.pos[s], stop_pos=ev.pos[t], open=is_open,
        instant=rec["kind"][s] == kinds["INSTANT"],
        orphan_stops=orphan_stops, unbalanced_reps=frozenset(unbalanced),
    )


def slices_of_blob(blob: bytes, rep_id: int = 0, voc: Vocab | None = None) -> Slices:
    """Slices of one repetition's blob."""
    return build_slices(decode_many([blob], [rep_id]), voc)


def format_value(category: int, value: int, voc: Vocab | None = None) -> str:
    """A STOP value as its category means it: bytes for I/O and records, a signed return code
    for steps and crypto operations (decoded as i64, hex when negative)."""
    voc = voc or vocab()
    cat = voc.categories[category] if category >= 0 else ""
    meaning = VALUE_MEANING.get(cat)
    v = int(np.uint64(value).astype(np.int64))
    if meaning == "bytes" and v >= 0:  # a negative count is a library error code
        return f"{v} B"
    if meaning in ("ret", "bytes"):
        return "ret=0" if v == 0 else f"ret={v} ({'-' if v < 0 else ''}0x{abs(v):x})"
    return f"value={int(value)}" if value else ""


def format_tree(slices: Slices, rep: int | None = None, voc: Vocab | None = None,
                processing_ns: np.ndarray | None = None, per_1000: str = "µs") -> str:
    """One repetition as an indented text tree: label, peer, duration (÷1000: µs, or
    `per_1000` for a device's count, "k instructions"), value.

    Spans of a peer are indented under the peer-less phases (HANDSHAKE, ...) that contain
    them in time; ``processing_ns`` (aligned with ``sl``) adds a processing column.
    Spans closed artificially are marked OPEN; orphan STOPs are counted in the footer.
    """
    voc = voc or vocab()
    if rep is None:
        rep = int(slices.rep[0]) if len(slices) else 0
    idx = np.flatnonzero(slices.rep == rep)
    none_peer = voc.peers["none"]
    phase_idx = idx[slices.peer[idx] == none_peer]
    p_ts, p_end = slices.ts[phase_idx], slices.ts[phase_idx] + slices.dur[phase_idx]
    lines = []
    head = f"{'span':<44} {'peer':<7} {'dur':>11}"
    head += f" {'proc':>11}" if processing_ns is not None else ""
    lines.append(f"{'':<52} {per_1000:>11}" + (f" {per_1000:>11}" if processing_ns is not None else ""))
    lines.append(head + "  value")
    order = idx[np.lexsort((slices.start_pos[idx], slices.ts[idx]))]
    for i in order.tolist():
        indent = int(slices.depth[i])
        if slices.peer[i] != none_peer:  # nest under the phases enclosing it
            indent += int(np.count_nonzero((p_ts <= slices.ts[i]) & (p_end >= slices.ts[i] + slices.dur[i])))
        name = ("· " if slices.instant[i] else "") + voc.name(slices.label[i])
        row = f"{'  ' * indent + name:<44} {voc.peer_name(slices.peer[i]):<7} {slices.dur[i] / 1e3:>11.3f}"
        if processing_ns is not None:
            row += f" {processing_ns[i] / 1e3:>11.3f}"
        row += "  " + ("OPEN (no STOP recorded)" if slices.open[i] else format_value(int(slices.category[i]), int(slices.value[i]), voc))
        lines.append(row.rstrip())
    notes = []
    if slices.orphan_stops.get(rep):
        notes.append(f"{slices.orphan_stops[rep]} STOP record(s) without a START (events dropped)")
    if rep in slices.unbalanced_reps:
        notes.append("unbalanced trace: spans without a STOP were closed at the last timestamp")
    lines += [f"! {n}" for n in notes]
    return "\n".join(lines)


def format_blob(blob: bytes, rep_id: int = 0, per_1000: str = "µs") -> str:
    """Convenience for `tlsbench trace show`: one repetition's blob as a text tree."""
    return format_tree(slices_of_blob(blob, rep_id), rep_id, per_1000=per_1000)
