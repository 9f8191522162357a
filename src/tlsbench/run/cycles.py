# SPDX-License-Identifier: Apache-2.0
"""The device firmware's primitive experiments counted by class under the cycle model's QEMU
plugin (agent/tools/cycles/tb_cycles.c, docs/cycles.md): what `tlsbench validate cycles`
compares with published silicon figures.

The image is the one a `[device]` plan boots (builder/firmware.py), booted the same way
(endpoints/qemu.py) with `-plugin` added; the RUNs are the ones a plan's `[experiments]`
sends (protocol 3). The plugin snapshots its cumulative counts at the entry of
`tb_group_begin` and of `tb_group_end` (agent/src/core/experiment.c: the only calls that open
and close a measured group), so each (begin, end) pair is one group of one repetition, in
the order the RUNs ran them. The firmware's own count of each group (its counter, in the
REP's trace) is checked against the plugin's instructions: the two count the same code.

count_steps does the same for any RUN (a handshake) record by record: the firmware's tracer
calls tb_trace_stepped once per record, the plugin snapshots it, and each shipped record gets
its class counts (docs/cycles.md, "Per-step cycles")."""
from __future__ import annotations

import os
import statistics
import struct
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Mapping, Sequence

import numpy as np

from tlsbench.core import spec as specmod
from tlsbench.core.targets import Target
from tlsbench.run import protocol, tracefs
from tlsbench.run.endpoints.firmware import DeviceError, FirmwareImage
from tlsbench.run.endpoints.qemu import QemuEndpoint
from tlsbench.run.timeouts import Timeouts
from tlsbench.schema import TraceCounts

MARKS = ("tb_group_begin", "tb_group_end")  # snapshot 0 opens a group, 1 closes it
# Per-step counts: snapshot 0 where a repetition's trace starts, 1 at each record the tracer
# writes (agent/include/tlsbench/trace.h: tb_trace_stepped, right after the counter read), 2 where
# the firmware ships a repetition (agent/src/core/protocol.c tb_send_rep: only shipped ones).
STEP_MARKS = ("tb_trace_reset", "tb_trace_stepped", "tb_send_rep")
RESET, RECORD, SHIPPED = range(3)
# The plugin flushes its rows to the file where the firmware ships a REP: the rows of a
# repetition are on disk before the first byte of its REP leaves the UART, so the host reads
# them when the REP arrives. Exact, and one write per repetition (at every record it would be
# one per snapshot: 200,000 for the start-up calibration alone).
STEP_FLUSH = "tb_send_rep"
SNAP_EXIT = 0xFFFF_FFFF  # the plugin's last row, written when QEMU exits
PLUGIN_ISA = {"riscv": ("isa=riscv",)}  # the plugin's disassembly per target architecture (Arm: its default)
# The counter and the plugin count the same instructions of a group but for the few between
# tb_group_begin's entry and its counter read (and tb_group_end's): a group that differs by
# more is not the code the plugin counted.
AGREE_INSTRUCTIONS, AGREE_FRACTION = 400, 1e-3  # a coarse counter (31.25 instructions a tick) rounds
# Per record the plugin counts about 12 instructions more than the counter (measured: 2,283 over
# a 196-record TLS 1.2 handshake of 71 M). Not traced to its cause; most likely QEMU under -icount
# ends a block at the counter's register read and runs its rest again, which the plugin's
# per-block count would see twice.
PER_RECORD_INSTRUCTIONS = 16


class CountingError(DeviceError):
    """The firmware under the plugin did not give one count per group: one line saying why."""


def symbol(image: Path, name: str, target: Target) -> int:
    """The address of a function of the image (its Thumb bit cleared)."""
    out = subprocess.run([f"{target.arch.toolchain}-nm", str(image)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise CountingError(f"{image.name} has no function {name}: rebuild the firmware (tlsbench build firmware)")


def _header(data: bytes) -> tuple[list[str], int]:
    """The plugin file's feature names and where its rows begin."""
    if data[:4] != b"TBCY":
        raise CountingError("the cycles plugin wrote no snapshot file (or another format)")
    _, n = struct.unpack_from("<II", data, 4)
    pos, names = 12, []
    for _ in range(n):
        end = data.index(b"\0", pos)
        names.append(data[pos:end].decode())
        pos = end + 1
    return names, pos


def read_snapshots(data: bytes) -> tuple[list[str], list[tuple[int, list[int]]]]:
    """The plugin's file: (feature names, rows of (snapshot index, cumulative counts))."""
    names, pos = _header(data)
    n = len(names)
    rows, size = [], 8 + 8 * n
    while pos + size <= len(data):
        index, _holds = struct.unpack_from("<II", data, pos)
        rows.append((index, list(struct.unpack_from(f"<{n}Q", data, pos + 8))))
        pos += size
    return names, rows


def plugin_option(plugin: Path, out: Path, image: Path, target: Target, geometry: Sequence[str],
                  marks: Sequence[str] = MARKS, flush: str | None = None) -> list[str]:
    """QEMU's `-plugin` option: snapshots at the marks (functions' entries), the file flushed
    at `flush`'s entry, the target's flash, the board's cache geometry (MemorySystem.plugin_args)."""
    flash = target.memory.flash
    args = [f"out={out}", *(f"snap={symbol(image, m, target):#x}" for m in marks),
            *([f"flush={symbol(image, flush, target):#x}"] if flush else []),
            f"flash={flash.base:#x}:{flash.size:#x}", *geometry, *PLUGIN_ISA.get(target.arch.name, ())]
    return ["-plugin", f"{plugin}," + ",".join(args)]


@dataclass(frozen=True)
class GroupCounts:
    """One group of one experiment: the plugin's counts by feature, averaged over the
    repetitions (they differ only through random keys and nonces)."""

    experiment: str
    group: str
    counts: Mapping[str, float]
    repetitions: int


def _group_spans(records: bytes) -> list[int]:
    """The firmware's own count of each group of a REP, in order (USER_GROUP STOP - START)."""
    spec = specmod.load()
    label, start = spec.label_by_name["USER_GROUP"].id, 0
    out = []
    for lab, kind, _peer, t in tracefs.decode(records):
        if lab == label and kind == spec.kinds.START:
            start = t
        elif lab == label and kind == spec.kinds.STOP:
            out.append(t - start)
    return out


def _run(link: QemuEndpoint, number: int, config_id: int, repetitions: int) -> list[list[int]]:
    """One RUN of experiment `number` (HELLO's 1-based index): each repetition's group counts."""
    request = protocol.RunRequest(config_id, 0, 0, 0, 0, 0, repetitions, 0, 0, 1, 0, experiment=number)
    return [_group_spans(records) for records in run_reps(link, request)]


def run_reps(link: QemuEndpoint, request: protocol.RunRequest) -> list[bytes]:
    """One RUN: each shipped repetition's raw records."""
    frames = specmod.load().frames
    link.send(request.encode())
    out = []
    while True:
        frame = link.read_frame()
        if frame is None:
            raise CountingError(f"the firmware stopped during a RUN: {link.death_reason()}")
        if frame.type == frames.REP:
            rep = protocol.decode_rep(frame)
            if rep.reason:
                raise CountingError(f"a repetition failed on the firmware: {rep.reason}")
            out.append(rep.records)
        elif frame.type == frames.DONE:
            return out
        elif frame.type == frames.ERROR:
            raise CountingError(f"the firmware refused the RUN: {frame.json()}")


Ran = list[tuple[str, tuple[str, ...], list[list[int]]]]  # (experiment, its groups, each repetition's group counts)


def run_experiments(link: QemuEndpoint, experiments: Sequence[str], repetitions: int) -> Ran:
    """Each named experiment the firmware offers, `repetitions` times, one RUN each, in order."""
    offered = {e["name"]: (i, tuple(e.get("groups", ()))) for i, e in enumerate(link.hello.get("experiments", []), 1)}
    ran: Ran = []
    for config_id, name in enumerate(experiments, 1):
        if name in offered:
            number, groups = offered[name]
            ran.append((name, groups, _run(link, number, config_id, repetitions)))
    return ran


def count_groups(target: Target, image: FirmwareImage, plugin: Path, geometry: Sequence[str],
                 experiments: Sequence[str], repetitions: int = 2,
                 timeouts: Timeouts = Timeouts()) -> dict[tuple[str, str], GroupCounts]:
    """Boots `image` on `target` under the plugin (the board's cache `geometry`), runs each
    named experiment `repetitions` times and returns each (experiment, group)'s counts; an
    experiment the firmware does not offer is left out (the caller says why)."""
    with tempfile.TemporaryDirectory(prefix="tb-cycles-") as tmp:
        out = Path(tmp) / "counts.bin"
        link = QemuEndpoint(target, image, timeouts.greeting,
                            extra=plugin_option(plugin, out, image.path, target, geometry))
        try:
            ran = run_experiments(link, experiments, repetitions)
        finally:
            link.end()
            link.close()
        if not out.exists():
            raise CountingError(f"QEMU ran {image.path.name} but the cycles plugin wrote nothing: {link.ending()}")
        names, rows = read_snapshots(out.read_bytes())
    return _assign(names, [(index, counts) for index, counts in rows if index != SNAP_EXIT], ran)


def _assign(names: list[str], rows: list[tuple[int, list[int]]], ran: Ran) -> dict[tuple[str, str], GroupCounts]:
    """Pairs the snapshots (begin, end, begin, end...) with the groups the REPs reported, in order."""
    expected = sum(len(s) for _, _, reps in ran for s in reps)
    if len(rows) != 2 * expected or any(index != i % 2 for i, (index, _) in enumerate(rows)):
        raise CountingError(f"the plugin saw {len(rows)} group marks where the firmware reported {expected} groups "
                            "(two marks each, begin then end)")
    deltas = iter([{f: after - before for f, before, after in zip(names, rows[i][1], rows[i + 1][1])}
                   for i in range(0, len(rows), 2)])
    by_group: dict[tuple[str, str], list[dict[str, int]]] = defaultdict(list)
    for name, groups, reps in ran:
        for spans in reps:
            for g, counted in enumerate(spans):
                counts = next(deltas)
                if abs(counts["instructions"] - counted) > max(AGREE_INSTRUCTIONS, AGREE_FRACTION * counted):
                    raise CountingError(f"{name}/{groups[g]}: the plugin counted {counts['instructions']} instructions, "
                                        f"the firmware {counted}: not the same code")
                by_group[(name, groups[g])].append(counts)
    return {key: GroupCounts(*key, {f: statistics.fmean(c[f] for c in runs) for f in names}, len(runs))
            for key, runs in by_group.items()}


# ---------------------------------------------------------------- per-step counts of a handshake RUN

@dataclass(frozen=True)
class CountedRep:
    """One shipped repetition: its records (tracefs.decode) and, per record, the plugin's
    counts since the repetition's trace began (cumulative: a step's counts are STOP - START)."""

    records: list[tuple[int, int, int, int]]
    names: tuple[str, ...]  # the plugin's features, the columns of counts
    counts: np.ndarray  # one row per record, uint64

    def step(self, start: int, stop: int) -> dict[str, int]:
        """The counts between two of its records (their indices)."""
        return dict(zip(self.names, (self.counts[stop] - self.counts[start]).tolist()))


def step_rows(data: bytes) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The plugin's file as arrays: (feature names, each row's snapshot index, its counts). A
    boot writes a row per record (the start-up calibration alone 200,000): read at array speed."""
    names, pos = _header(data)
    row = np.dtype([("index", "<u4"), ("holds", "<u4"), ("counts", "<u8", (len(names),))])
    rows = np.frombuffer(data, row, (len(data) - pos) // row.itemsize, pos)
    rows = rows[rows["index"] != SNAP_EXIT]
    return tuple(names), rows["index"], rows["counts"]


def segments(index: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """The record snapshots (index 1) between two trace resets (index 0), each relative to its reset."""
    resets = np.flatnonzero(index == RESET)
    bounds = [*resets, len(index)]
    return [counts[a + 1:b][index[a + 1:b] == RECORD] - counts[a] for a, b in zip(bounds, bounds[1:])]


def match_reps(names: tuple[str, ...], segs: list[np.ndarray], reps: list[bytes]) -> list[CountedRep]:
    """Each shipped repetition with the next segment (in order) that has one snapshot per record
    and whose instructions agree with the records' own counter readings: the segments of the
    start-up calibration and of unshipped (warm-up) repetitions are passed over. A repetition
    whose trace was rewound (a record forgotten) matches no segment: it is an error."""
    insns = names.index("instructions")
    out, at = [], 0
    for raw in reps:
        records = tracefs.decode(raw)
        while at < len(segs) and not _agrees(segs[at][:, insns], records):
            at += 1
        if at == len(segs):
            raise CountingError(f"no run of trace snapshots matches a repetition of {len(records)} records "
                                "(its trace was rewound, or the image has no tb_trace_stepped: rebuild the firmware)")
        out.append(CountedRep(records, names, segs[at]))
        at += 1
    return out


def _agrees(instructions: np.ndarray, records: list[tuple[int, int, int, int]]) -> bool:
    """One snapshot per record, and at each record the plugin's instructions since the first
    are the counter's (as closely as in a group, plus PER_RECORD_INSTRUCTIONS a record)."""
    if len(instructions) != len(records) or not records:
        return False
    plugin = instructions.astype(np.int64) - int(instructions[0])
    counter = np.array([r[3] for r in records], dtype=np.int64) - records[0][3]
    slack = np.maximum(AGREE_INSTRUCTIONS + PER_RECORD_INSTRUCTIONS * np.arange(len(records)), AGREE_FRACTION * counter)
    return bool(np.all(np.abs(plugin - counter) <= slack))


def count_steps(target: Target, image: FirmwareImage, plugin: Path, geometry: Sequence[str],
                requests: Sequence[protocol.RunRequest], timeouts: Timeouts = Timeouts()) -> list[list[CountedRep]]:
    """Boots `image` under the plugin with a snapshot at every trace record, sends each RUN
    and returns, per RUN, its shipped repetitions with each record's class counts."""
    with tempfile.TemporaryDirectory(prefix="tb-steps-") as tmp:
        out = Path(tmp) / "counts.bin"
        link = QemuEndpoint(target, image, timeouts.greeting,
                            extra=plugin_option(plugin, out, image.path, target, geometry, STEP_MARKS))
        try:
            ran = [run_reps(link, r) for r in requests]
        finally:
            link.end()
            link.close()
        if not out.exists():
            raise CountingError(f"QEMU ran {image.path.name} but the cycles plugin wrote nothing: {link.ending()}")
        names, index, counts = step_rows(out.read_bytes())
    flat = iter(match_reps(names, segments(index, counts), [raw for reps in ran for raw in reps]))
    return [[next(flat) for _ in reps] for reps in ran]


# ---------------------------------------------------------------- a run's repetitions, as they arrive

@dataclass(frozen=True)
class StepCycles:
    """The cycle model attached to a device's counting image (plan [device] cycles): the
    plugin, and the board whose memory system it simulates."""

    plugin: Path
    board: str
    geometry: tuple[str, ...]  # the board's cache geometry (MemorySystem.plugin_args)


class StepReader:
    """The plugin's file of one boot, read as the boot's REPs arrive: the rows since the last
    read only (the file offset is kept: the start-up calibration's 200,000 rows are read once),
    and of those only the rows since the last trace reset are kept. Each shipped repetition's
    rows end with its SHIPPED snapshot (flushed there: STEP_FLUSH), so the k-th REP of the boot
    is the k-th shipped run of snapshots, matched to its records by match_reps.

    The file is a temporary one, unlinked as soon as both QEMU and the reader have it open
    (attached()): a host killed with -9 leaves nothing behind (its counts that matter are in
    the store, with their repetitions)."""

    CHUNK_ROWS = 65_536  # rows read at a time: a bounded buffer however long the calibration

    def __init__(self, cycles: StepCycles):
        fd, name = tempfile.mkstemp(prefix="tb-steps-", suffix=".bin")
        os.close(fd)
        self.path, self.board = Path(name), cycles.board
        self.file: BinaryIO | None = None
        self.offset = 0
        self.names: tuple[str, ...] = ()
        # A row is 1 + len(names) little-endian u64 words: (index | holds << 32), the counts. Read
        # as plain u64 words, not a structured dtype: numpy copies those at memory speed.
        self.words = 0
        # The rows since the last reset, as views of what was read (no copy until a repetition is
        # shipped: the calibration's 200,000 rows follow one reset); None: no reset since a shipment.
        self.open_parts: list[np.ndarray] | None = None
        self.shipped: list[np.ndarray] = []  # runs of rows (reset ... shipped) not yet taken

    def _header(self, f) -> bool:  # f: the open file
        f.seek(0)
        data = f.read(64 * 1024)
        try:
            names, pos = _header(data)
        except (CountingError, ValueError, struct.error):  # not (all of it) written yet
            return False
        self.names, self.offset, self.words = tuple(names), pos, 1 + len(names)
        return True

    def attached(self) -> None:
        """QEMU has opened the file (its plugin did, at start-up): open it here too and unlink it."""
        self.file = open(self.path, "rb")
        self.path.unlink()

    def _read(self) -> None:
        f = self.file
        if f is None:
            return
        if not self.words and not self._header(f):
            return
        size = 8 * self.words
        while True:
            f.seek(self.offset)
            data = f.read(self.CHUNK_ROWS * size)
            n = len(data) // size
            if n == 0:
                return
            self.offset += n * size
            self._split(np.frombuffer(data, "<u8", n * self.words).reshape(n, self.words))

    def _split(self, rows: np.ndarray) -> None:
        """Appends rows: a RESET row opens a run, a SHIPPED row closes it (a shipped
        repetition); the rows of runs never shipped (warm-ups, the calibration) are let go."""
        index = rows[:, 0] & 0xFFFF_FFFF
        at = 0
        for mark in np.flatnonzero((index == RESET) | (index == SHIPPED)).tolist():
            if index[mark] == RESET:
                self.open_parts, at = [], mark
            elif self.open_parts is not None:
                self.shipped.append(np.concatenate([*self.open_parts, rows[at:mark + 1]]))
                self.open_parts = None
        if self.open_parts is not None:
            self.open_parts.append(rows[at:])

    def take(self, records: bytes) -> TraceCounts:
        """The class counts of the next shipped repetition's records (one row per record,
        cumulative since its trace began), or why it has none (never silently none)."""
        self._read()
        features = ",".join(self.names)
        if not self.shipped:
            return TraceCounts(self.board, features, None, "the cycles plugin had written no snapshots for this "
                               f"repetition when its REP arrived ({self.offset} bytes of its file read)")
        run = self.shipped.pop(0)
        try:
            (rep,) = match_reps(self.names, segments(run[:, 0] & 0xFFFF_FFFF, run[:, 1:]), [records])
        except CountingError as exc:
            return TraceCounts(self.board, features, None, str(exc))
        return TraceCounts(self.board, features, rep.counts.astype("<u8").tobytes())

    def close(self) -> None:
        """Lets the file go (a boot's; the counts that matter are in the store)."""
        if self.file is not None:
            self.file.close()
        self.path.unlink(missing_ok=True)
