# SPDX-License-Identifier: Apache-2.0
"""The scheduler's view of the agents (plan `metrics = [..., "sched"]`, docs/host.md "The
scheduler's view").

A private tracefs instance (`instances/tlsbench-<controller pid>`, so nobody else's tracing
is touched) records, on the agents' CPUs only, with the clock the agents' records use
(`trace_clock=mono`): switches into or out of an agent or the idle task, wake-ups of an
agent, and for network plans the network softirqs. After each batch the controller drains
what arrived (`trace_pipe`, non-blocking: read events are consumed, so the buffer never
fills over a long run) and turns it, with the records' timestamps, into per-repetition and
per-step figures: busy share, idle share of the agents' CPUs, voluntary and involuntary
switches, time runnable but waiting, the longest uninterrupted run. Without root or
tracefs nothing is traced and the run goes on; per-agent totals from
/proc/PID/task/*/schedstat and /proc/PID/status are kept either way.

The kernel's text trace has µs resolution. It was seen to miss a switch-in now and then
(no overrun reported): a switch-out of a task not known to run gets its start from the
agent's first record after its previous switch-out (`inferred`)."""
from __future__ import annotations

import bisect
import json
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol, Sequence

from tlsbench.core import spec as specmod
from tlsbench.schema import SchedAgent, SchedBatch, SchedRepetition, SchedStep

TRACEFS_ENV = "TLSBENCH_TRACEFS"  # another tracefs mount (tests point it at an empty folder)
DEFAULT_TRACEFS = "/sys/kernel/tracing"
AGENT_COMM = "tlsbench-agent"  # an agent's comm: its executable's name, cut to 15 characters
BUFFER_KB = 4096  # per CPU; drained after every batch
IDLE_PID = 0
RECORD = struct.Struct("<HBBIQQQ")  # spec layout.record: label, kind, peer, seq, t_ns, cpu_ns, value
START, STOP = 0, 1
# Softirq vectors of the kernel's network processing (include/linux/interrupt.h).
NET_SOFTIRQS = {"2": "NET_TX", "3": "NET_RX"}
MOUNT_HINT = "mount it (mount -t tracefs nodev /sys/kernel/tracing) and run tlsbench as root"

LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>\d+)\.(?P<us>\d+): "
                  r"(?P<event>\w+): (?P<rest>.*)$")
LOST = re.compile(r"CPU:\d+ \[LOST (\d+) EVENTS\]")


def tracefs_root() -> Path:
    return Path(os.environ.get(TRACEFS_ENV, DEFAULT_TRACEFS))


@dataclass(frozen=True)
class Event:
    t: int  # CLOCK_MONOTONIC ns (µs resolution)
    cpu: int
    name: str
    fields: dict[str, str]
    pid: int  # the task current when it fired (a softirq's interrupted task)


def parse(text: str) -> tuple[list[Event], int]:
    """Events of a trace_pipe text, and how many the kernel reported lost."""
    events, lost = [], 0
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            dropped = LOST.search(line)
            lost += int(dropped.group(1)) if dropped else 0
            continue
        fields = dict(kv.split("=", 1) for kv in m["rest"].replace(" ==> ", " ").split() if "=" in kv)
        t = int(m["ts"]) * 10**9 + int(m["us"].ljust(9, "0")[:9])
        events.append(Event(t, int(m["cpu"]), m["event"], fields, int(m["pid"])))
    return events, lost


# ---------------------------------------------------------------------- timelines
@dataclass
class Timeline:
    """One task's running and runnable-waiting segments and its switches, as events arrive."""

    runs: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, CPU)
    waits: list[tuple[int, int]] = field(default_factory=list)
    switches: list[tuple[int, bool]] = field(default_factory=list)  # (t, voluntary)
    orphans: list[tuple[int, int, int]] = field(default_factory=list)  # (previous switch-out, switch-out, CPU)
    running_since: int | None = None
    running_on: int = -1
    waiting_since: int | None = None
    last_out: int = 0

    def woken(self, t: int) -> None:
        if self.running_since is None and self.waiting_since is None:
            self.waiting_since = t

    def switched_in(self, t: int, cpu: int) -> None:
        if self.waiting_since is not None:
            self.waits.append((self.waiting_since, t))
        self.running_since, self.running_on, self.waiting_since = t, cpu, None

    def switched_out(self, t: int, state: str, cpu: int) -> None:
        if self.running_since is None:
            self.orphans.append((self.last_out, t, cpu))
            if self.waiting_since is not None:
                self.waits.append((self.waiting_since, self.last_out))  # ends before the unseen switch-in
        else:
            self.runs.append((self.running_since, t, cpu))
        preempted = state.startswith("R")
        self.switches.append((t, not preempted))
        self.running_since, self.last_out = None, t
        self.waiting_since = t if preempted else None

    def forget_before(self, t: int) -> None:
        """Drops what ended before t (repetitions before it are done)."""
        self.runs = [s for s in self.runs if s[1] >= t]
        self.waits = [s for s in self.waits if s[1] >= t]
        self.orphans = [s for s in self.orphans if s[1] >= t]
        self.switches = [s for s in self.switches if s[0] >= t]


def overlap(x: tuple[int, int], y: tuple[int, int]) -> int:
    return max(0, min(x[1], y[1]) - max(x[0], y[0]))


def clipped(segments: Iterable[tuple[int, int]], a: int, b: int) -> list[tuple[int, int]]:
    return [(max(s, a), min(e, b)) for s, e in segments if e > a and s < b]


@dataclass(frozen=True)
class Interval:
    """The scheduler's view of one interval of one agent."""

    wall_ns: int
    busy_ns: int
    voluntary: int
    involuntary: int
    wait_ns: int
    longest_run_ns: int
    runs: int
    inferred: int


def runs_of(tl: Timeline, b: int, alive: Sequence[int]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """The runs up to b, with those whose switch-in the trace missed dated from `alive`
    (sorted times the agent is known to have run: its records); and their end times."""
    runs = list(tl.runs)
    inferred = []
    for last_out, out, cpu in tl.orphans:
        i = bisect.bisect_right(alive, last_out)
        if i < len(alive) and alive[i] < out:
            runs.append((alive[i], out, cpu))
            inferred.append(out)
    if tl.running_since is not None:
        runs.append((tl.running_since, max(b, tl.running_since), tl.running_on))
    elif (i := bisect.bisect_right(alive, tl.last_out)) < len(alive):
        # It ran after its last switch-out (or since before the capture: its RUN was queued
        # ahead) and the trace has not shown the switch-in yet: running since its first record.
        runs.append((alive[i], max(b, alive[i]), tl.running_on))
        inferred.append(b)
    return runs, inferred


def interval(tl: Timeline, a: int, b: int, alive: Sequence[int]) -> Interval:
    """[a, b) of a timeline."""
    all_runs, inferred_ends = runs_of(tl, b, alive)
    runs = [(s, e) for s, e, _ in all_runs]
    inferred = sum(1 for out in inferred_ends if a < out)
    waits = list(tl.waits) + ([(tl.waiting_since, b)] if tl.waiting_since is not None else [])
    inside = clipped(runs, a, b)
    return Interval(b - a, sum(e - s for s, e in inside),
                    sum(1 for t, v in tl.switches if a <= t < b and v),
                    sum(1 for t, v in tl.switches if a <= t < b and not v),
                    sum(e - s for s, e in clipped(waits, a, b)),
                    max((e - s for s, e in inside), default=0), len(inside), inferred)


# ---------------------------------------------------------------------- rows (schema/tables.py SCHED_*)
@dataclass(frozen=True)
class Measured:
    """A repetition to attribute: its key, the agent that ran it and its raw records."""

    config_id: int
    idx: int
    agent_id: int | None
    pid: int | None
    records: bytes


def decode(records: bytes) -> list[tuple[int, int, int, int]]:
    """(label, kind, peer, t_ns) of each 32-byte record."""
    return [(r[0], r[1], r[2], r[4]) for r in RECORD.iter_unpack(records)]


def spans(records: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """(label, peer, start, stop) of every START/STOP pair, in start order."""
    open_: list[tuple[int, int, int, int]] = []
    out: list[tuple[int, int, int, int]] = []
    order: list[int] = []
    for label, kind, peer, t in records:
        if kind == START:
            open_.append((label, peer, t, len(order)))
            order.append(-1)
        elif kind == STOP and open_ and open_[-1][0] == label:
            lab, p, s, slot = open_.pop()
            order[slot] = len(out)
            out.append((lab, p, s, t))
    return [out[i] for i in order if i >= 0]


# ---------------------------------------------------------------------- reading /proc
def _ints(path: Path) -> list[int]:
    try:
        return [int(x) for x in path.read_text().split()]
    except (OSError, ValueError):
        return []


def agent_totals(agent_id: int, pid: int, proc: Path = Path("/proc")) -> SchedAgent | None:
    """Run, run-queue wait and timeslices summed over the agent's threads (schedstat), and its
    switches (status); None when it is gone."""
    run = wait = slices = 0
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
        status = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    for task in tasks:
        values = _ints(task / "schedstat")
        if len(values) >= 3:
            run, wait, slices = run + values[0], wait + values[1], slices + values[2]
    switches = {k.strip(): int(v) for k, v in (line.split(":", 1) for line in status.splitlines() if ":" in line)
                if k.endswith("ctxt_switches") and v.strip().isdigit()}
    return SchedAgent(agent_id, run, wait, slices, switches.get("voluntary_ctxt_switches", 0),
                       switches.get("nonvoluntary_ctxt_switches", 0))


# ---------------------------------------------------------------------- the capture
@dataclass
class Capture:
    """The tracefs instance of one run, or why there is none (`missing`)."""

    cpus: tuple[int, ...]
    softirq: bool = False
    root: Path = field(default_factory=tracefs_root)
    missing: str | None = None
    instance: Path | None = None
    pipe: int | None = None
    timelines: dict[int, Timeline] = field(default_factory=dict)
    idle: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # per CPU
    idle_since: dict[int, int] = field(default_factory=dict)
    softirqs: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, context pid)
    softirq_open: dict[int, tuple[int, int]] = field(default_factory=dict)  # cpu -> (start, pid)
    ours: dict[int, bool] = field(default_factory=dict)  # pid -> a child of this controller
    events: int = 0
    lost: int = 0

    @classmethod
    def open(cls, cpus: Sequence[int], softirq: bool = False) -> "Capture":
        """Sets the instance up and starts tracing; a Capture with `missing` set when tracefs
        is absent or refused (the run goes on without it)."""
        capture = cls(tuple(sorted(cpus)), softirq)
        try:
            capture._start()
        except OSError as exc:
            capture.close()
            capture.missing = capture._why(exc)
        return capture

    def _why(self, exc: OSError) -> str:
        if not (self.root / "instances").is_dir():
            return f"no tracefs at {self.root}: {MOUNT_HINT}"
        if isinstance(exc, PermissionError):
            return f"tracefs at {self.root} needs root ({exc.strerror}): run tlsbench as root"
        return f"tracefs at {self.root} refused the capture ({exc.strerror or exc}): {MOUNT_HINT}"

    def _write(self, name: str, text: str) -> None:
        assert self.instance is not None
        (self.instance / name).write_text(text)

    def _start(self) -> None:
        self.instance = self.root / "instances" / f"tlsbench-{os.getpid()}"
        if self.instance.exists():
            self.instance.rmdir()  # left by a controller of the same pid that was killed
        self.instance.mkdir()
        self._write("tracing_on", "0")
        self._write("trace_clock", "mono")  # the agents' records are on CLOCK_MONOTONIC's time line
        self._write("buffer_size_kb", str(BUFFER_KB))
        self._write("tracing_cpumask", cpu_mask(self.cpus))
        agent = f'prev_comm ~ "{AGENT_COMM}*" || next_comm ~ "{AGENT_COMM}*"'
        # Field filters, not set_event_pid: agents restart with new pids, and the idle task's
        # switches give the CPUs' idle share.
        self._write("events/sched/sched_switch/filter", f"{agent} || prev_pid == {IDLE_PID} || next_pid == {IDLE_PID}")
        self._write("events/sched/sched_wakeup/filter", f'comm ~ "{AGENT_COMM}*"')
        events = ["sched/sched_switch", "sched/sched_wakeup"]
        if self.softirq:
            vectors = " || ".join(f"vec == {v}" for v in NET_SOFTIRQS)
            for name in ("softirq_entry", "softirq_exit"):
                self._write(f"events/irq/{name}/filter", vectors)
            events += ["irq/softirq_entry", "irq/softirq_exit"]
        for name in events:
            self._write(f"events/{name}/enable", "1")
        self.pipe = os.open(self.instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        self._write("tracing_on", "1")

    def close(self) -> None:
        """Stops tracing and removes the instance."""
        if self.pipe is not None:
            os.close(self.pipe)
            self.pipe = None
        if self.instance is not None and self.instance.exists():
            try:
                self._write("tracing_on", "0")
                self.instance.rmdir()
            except OSError:
                pass
        self.instance = None

    # ------------------------------------------------------------------ events
    def drain(self) -> None:
        """Reads and consumes what the kernel has recorded so far."""
        if self.pipe is None:
            return
        chunks = []
        while True:
            try:
                chunk = os.read(self.pipe, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        events, lost = parse(b"".join(chunks).decode(errors="replace"))
        self.events += len(events)
        self.lost += lost
        for event in events:
            self._take(event)

    def _ours(self, pid: int) -> bool:
        """An agent this controller started (another user's agents match the filter too)."""
        if pid not in self.ours:
            stat = _ints_after_comm(Path("/proc") / str(pid) / "stat")
            self.ours[pid] = bool(stat) and stat[0] == os.getpid()
        return self.ours[pid]

    def _timeline(self, pid: int) -> Timeline | None:
        if pid == IDLE_PID or not self._ours(pid):
            return None
        return self.timelines.setdefault(pid, Timeline())

    def _take(self, e: Event) -> None:
        if e.name == "sched_switch":
            prev, nxt = int(e.fields.get("prev_pid", -1)), int(e.fields.get("next_pid", -1))
            if prev == IDLE_PID and e.cpu in self.idle_since:
                self.idle.setdefault(e.cpu, []).append((self.idle_since.pop(e.cpu), e.t))
            if nxt == IDLE_PID:
                self.idle_since[e.cpu] = e.t
            if (tl := self._timeline(prev)) is not None:
                tl.switched_out(e.t, e.fields.get("prev_state", ""), e.cpu)
            if (tl := self._timeline(nxt)) is not None:
                tl.switched_in(e.t, e.cpu)
        elif e.name == "sched_wakeup":
            if (tl := self._timeline(int(e.fields.get("pid", -1)))) is not None:
                tl.woken(e.t)
        elif e.name == "softirq_entry":
            self.softirq_open[e.cpu] = (e.t, e.pid)
        elif e.name == "softirq_exit" and e.cpu in self.softirq_open:
            start, pid = self.softirq_open.pop(e.cpu)
            self.softirqs.append((start, e.t, pid))

    # ------------------------------------------------------------------ figures
    def idle_ns(self, a: int, b: int, agent_runs: Sequence[tuple[int, int, int]]) -> int:
        """Idle time of the traced CPUs in [a, b). The trace misses a switch now and then: a
        CPU is never counted idle while the agent ran on it."""
        total = 0
        for cpu in self.cpus:
            segments = list(self.idle.get(cpu, []))
            if cpu in self.idle_since:
                segments.append((self.idle_since[cpu], b))
            idle = clipped(segments, a, b)
            busy = clipped([(s, e) for s, e, c in agent_runs if c == cpu], a, b)
            total += sum(e - s for s, e in idle) - sum(overlap(i, r) for i in idle for r in busy)
        return max(total, 0)

    def softirq_ns(self, a: int, b: int) -> tuple[int | None, int | None]:
        if not self.softirq:
            return None, None
        agent = other = 0
        for s, e, pid in self.softirqs:
            if e > a and s < b:
                part = min(e, b) - max(s, a)
                if pid != IDLE_PID and self._ours(pid):
                    agent += part
                else:
                    other += part
        return agent, other

    def attribute(self, measured: Sequence[Measured], step_labels: frozenset[int]) -> SchedBatch:
        """Drains, then the figures of each repetition and of its interrupted steps; nothing
        when the kernel lost events meanwhile (a figure would be wrong, not missing)."""
        before = self.lost
        self.drain()
        batch = SchedBatch(events=self.events, lost=self.lost)
        if self.lost > before:
            return batch
        spec = specmod.load()
        for m in measured:
            tl = self.timelines.get(m.pid or -1, Timeline())
            records = decode(m.records)
            window = [(s, e) for lab, _, s, e in spans(records) if spec.label_by_id.get(lab) and
                      spec.label_by_id[lab].name == "REPETITION"]
            if not window:
                continue
            a, b = window[0]
            alive = sorted(t for *_, t in records)
            whole = interval(tl, a, b, alive)
            steps = [(lab, peer, s, e) for lab, peer, s, e in spans(records) if lab in step_labels]
            interrupted = self._steps(m, tl, steps, alive, spec)
            batch.steps.extend(interrupted)
            agent_softirq, other_softirq = self.softirq_ns(a, b)
            batch.repetitions.append(SchedRepetition(
                m.config_id, m.idx, whole.wall_ns, whole.busy_ns, self.idle_ns(a, b, runs_of(tl, b, alive)[0]),
                len(self.cpus), whole.voluntary,
                whole.involuntary, whole.wait_ns, whole.longest_run_ns, whole.runs, whole.inferred, len(steps),
                len(interrupted), agent_softirq, other_softirq))
        self._forget(measured)
        return batch

    def _steps(self, m: Measured, tl: Timeline, steps: list[tuple[int, int, int, int]], alive: list[int],
               spec: specmod.Spec) -> list[SchedStep]:
        rows, seen = [], {}
        for lab, peer, s, e in steps:
            key = (lab, peer)
            seen[key] = seen.get(key, 0) + 1
            view = interval(tl, s, e, alive)
            if view.voluntary or view.involuntary or view.wait_ns:
                rows.append(SchedStep(m.config_id, m.idx, spec.peers.name(peer) if peer in spec.peers.by_value else "none",
                                    spec.label_by_id[lab].name, seen[key], view.voluntary, view.involuntary,
                                    view.wait_ns, view.longest_run_ns))
        return rows

    def _forget(self, measured: Sequence[Measured]) -> None:
        """What lies before the batch's first repetition is no longer needed (with batches
        sent ahead, the agent is already in the next one)."""
        starts = [decode(m.records[:RECORD.size])[0][3] for m in measured if m.records]
        if not starts:
            return
        horizon = min(starts)
        for tl in self.timelines.values():
            tl.forget_before(horizon)
        for cpu, segments in self.idle.items():
            self.idle[cpu] = [s for s in segments if s[1] >= horizon]
        self.softirqs = [s for s in self.softirqs if s[1] >= horizon]

    def facts(self) -> str:
        return json.dumps({"cpus": list(self.cpus), "softirq": self.softirq, "events": self.events, "lost": self.lost})


def _ints_after_comm(path: Path) -> list[int]:
    """/proc/PID/stat's fields after the comm (which may hold spaces): ppid first."""
    try:
        text = path.read_text()
    except OSError:
        return []
    fields = text[text.rfind(")") + 2:].split()
    return [int(x) for x in fields[1:2] if x.lstrip("-").isdigit()]


def cpu_mask(cpus: Sequence[int]) -> str:
    """tracefs's tracing_cpumask: hex, comma-separated 32-bit words, the highest first."""
    mask = sum(1 << c for c in cpus)
    words = []
    while True:
        words.append(f"{mask & 0xFFFFFFFF:08x}")
        mask >>= 32
        if not mask:
            break
    return ",".join(reversed(words))


# ---------------------------------------------------------------------- into the store
class SchedSink(Protocol):
    def start_sched_capture(self, missing: str | None, facts_json: str) -> int: ...
    def add_sched(self, capture_id: int, batch: SchedBatch, facts_json: str) -> None: ...


@dataclass
class Recorder:
    """A run's capture and its row; the controller hands it each stored batch."""

    capture: Capture
    capture_id: int
    step_labels: frozenset[int]

    @classmethod
    def open(cls, sink: SchedSink, cpus: Sequence[int], softirq: bool) -> "Recorder":
        capture = Capture.open(cpus, softirq)
        return cls(capture, sink.start_sched_capture(capture.missing, capture.facts()),
                   specmod.load().label_ids("step"))

    @property
    def missing(self) -> str | None:
        return self.capture.missing

    def record(self, sink: SchedSink, measured: Sequence[Measured]) -> None:
        """The batch's figures (none without tracefs) and its agents' /proc totals."""
        batch = self.capture.attribute(measured, self.step_labels) if self.missing is None else SchedBatch()
        agents = {m.agent_id: m.pid for m in measured if m.agent_id is not None and m.pid}
        batch.agents = [t for agent_id, pid in agents.items() if (t := agent_totals(agent_id, pid)) is not None]
        sink.add_sched(self.capture_id, batch, self.capture.facts())

    def close(self) -> None:
        self.capture.close()


def missing_warning(why: str) -> str:
    """The one warning a run gives when the scheduler's view is missing."""
    return (f"metric sched: the scheduler's view (switches, busy and idle share, longest run) is not measured: {why}; "
            "time, and run-queue wait from the agent's schedstat, are measured as usual")
