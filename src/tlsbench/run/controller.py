# SPDX-License-Identifier: Apache-2.0
"""The controller: configurations -> schedule -> batches on exchanges -> records in a sink.

Design (docs/host.md): a batch's repetitions go to the sink in one transaction once the
batch has ended, so the store is always consistent and a resume only needs the set of
stored (config, idx); a kill loses at most the batches not stored yet, never part of one.
While a batch runs the controller leaves its agent alone (run/endpoints/collect.py); with CPUs of
their own for the agents (`lookahead`), the next batch's RUN is queued before this one is
collected, so the agent goes on while the host stores. The schedule interleaves the
configurations of every library; each batch runs on the exchange of its configuration
(run/exchange.py). An agent that dies or sends a corrupt frame costs exactly the repetition
in flight, recorded as AGENT_DIED with the reason; the batch goes on with the next
repetition on a new agent. With an owner thread (a matrix over several devices), each
device's batches form a lane and the lanes run at once, one per host CPU (run/lanes.py);
every write still happens on the owner thread."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Protocol, TypeVar

from tlsbench.core import spec as specmod
from tlsbench.core.errors import UserError
from tlsbench.plan.configs import Configuration, Resolution
from tlsbench.plan.model import LoadedPlan
from tlsbench.run import schedule
from tlsbench.run.endpoints import AgentError, AgentRejected
from tlsbench.run.exchange import (AgentDied, AgentRef, BatchTraffic, Exchange, Outcome, Repetition, Sink,
                                   StopFlag)
from tlsbench.run.device import does_not_fit
from tlsbench.run.lanes import OwnerThread, run_lanes
from tlsbench.run.precision import MeasurePrecision, Precision, needing_more
from tlsbench.run.records import died_row, repetition_row
from tlsbench.schema import StoredRepetition
from tlsbench.run.topologies import Place, Route
from tlsbench.run.tracefs import Measured, Recorder

T = TypeVar("T")
MAX_CONSECUTIVE_DEATHS = 3  # then the configuration is given up (and the run says so)
# The exit reason of agent rows a killed host left open, written by the next run (resume).
STALE_AGENT_REASON = "host ended without closing it (killed, or its disk was full)"
# ERROR codes that mean "this configuration cannot run here" (skip it, report it) rather
# than a controller bug.
SKIPPABLE_ERRORS = ("unknown_suite", "unsupported")

METRIC_WARMUP = 2  # warm-ups per RUN of a metric twin (docs/metrics.md)


class ControllerError(UserError, RuntimeError):
    """The run cannot go on (after what was stored so far, which stays valid)."""


class Observer(Protocol):
    """What the controller reports while it runs (the CLI draws a progress bar)."""

    def start(self, total: int, done: int, configs: int) -> None: ...
    def batch(self, config: str, round: int, first_index: int, count: int) -> None: ...
    def stored(self, config: str, idx: int, status: str, agent: AgentRef) -> None: ...
    def note(self, message: str) -> None: ...
    def extend(self, extra: int) -> None: ...


class QuietObserver:
    def start(self, total: int, done: int, configs: int) -> None: pass
    def batch(self, config: str, round: int, first_index: int, count: int) -> None: pass
    def stored(self, config: str, idx: int, status: str, agent: AgentRef) -> None: pass
    def note(self, message: str) -> None: pass
    def extend(self, extra: int) -> None: pass


@dataclass
class RunSummary:
    """What one `tlsbench run` did."""

    folder: Path = Path()  # the experiment folder (set by whoever opened the store)
    planned: int = 0  # repetitions of all runnable configs
    already: int = 0  # stored before this run started (resume)
    stored: int = 0  # stored by this run
    failed: int = 0  # stored with a status other than OK (by this run)
    agent_deaths: int = 0
    skipped_configs: dict[str, str] = field(default_factory=dict)  # key -> why
    given_up: dict[str, str] = field(default_factory=dict)  # skipped because their agent kept dying: failed
    lost_lanes: dict[str, str] = field(default_factory=dict)  # target (and build) -> why it did not boot: given up
    interrupted: bool = False
    seconds: float = 0.0
    budget: BudgetStop | None = None  # the precision rounds' time budget stopped them


@dataclass(frozen=True)
class BudgetStop:
    """Where the time budget stopped the precision rounds, and how precise the configurations
    that still needed repetitions were then (the report has every interval)."""

    budget_s: float
    round: int  # 0-based: the round that did not start, or stopped after its current batch
    target_pct: float
    above: dict[str, float]  # configuration key -> 95% CI half-width (% of the median), still above target
    configs: int  # configurations measured


class Controller:
    """Runs a resolved plan's configurations through their exchanges into a sink."""

    def __init__(self, loaded: LoadedPlan, resolution: Resolution, sink: Sink,
                 exchanges: Mapping[Route, Exchange], route: Callable[[Configuration], Route],
                 observer: Observer | None = None, stop: StopFlag | None = None,
                 done: Mapping[str, set[int]] | None = None, measure_precision: MeasurePrecision | None = None,
                 lookahead: bool = False, sched: Recorder | None = None, owner: OwnerThread | None = None,
                 lane_cpus: tuple[int, ...] = ()):
        """`exchanges` by route, `route` picks one per configuration; `done`: the repetition
        indices already stored per configuration key (a resume); `measure_precision`: how
        precisely each configuration is known so far (plans with [precision]; without it,
        only the planned rounds run); `lookahead`: queue the next batch's RUN before
        collecting this one (the agents have CPUs of their own: run/placement.py); `sched`:
        the scheduler's view of each stored batch (plans with metrics "sched": run/tracefs.py);
        `owner`: run the device exchanges' batches as parallel lanes on `lane_cpus` (all:
        empty), writing through the owner thread (the exchanges' sinks must write through it too)."""
        self.loaded, self.plan, self.resolution = loaded, loaded.plan, resolution
        self.sink, self.exchanges, self.route = sink, exchanges, route
        self.observer = observer or QuietObserver()
        self.stop = stop or StopFlag()
        self.done: dict[str, set[int]] = {key: set(indices) for key, indices in (done or {}).items()}
        self.measure_precision = measure_precision
        self.lookahead = lookahead
        self.sched = sched
        self.owner, self.lane_cpus = owner, lane_cpus
        self.sent_ahead: schedule.Batch | None = None  # the batch whose RUN waits in its agent's input
        self.spec = specmod.load()
        self.configs: dict[str, Configuration] = {}
        self.config_ids: dict[str, int] = {}
        self.deaths: Counter[str] = Counter()  # consecutive deaths per config
        self.prepared: list[schedule.Batch] | None = None
        self.started = time.monotonic()

    def exchange_for(self, key: str) -> Exchange:
        """The exchange that runs a configuration's batches."""
        return self.exchanges[self.route(self.configs[key])]

    def prepare(self) -> list[schedule.Batch]:
        """Configuration rows (a resume tries skipped ones again; those the resolution says are
        not run are stored with why), the matrix cells that fell out, and the pending schedule."""
        self.sink.set_skipped_cells(self.resolution.skipped)
        for config in self.resolution.configs:
            config_id = self.sink.upsert_config(config.row)
            self.sink.set_skip_reason(config_id, self.resolution.not_run.get(config.key))
            self.config_ids[config.key] = config_id
            if config.key not in self.resolution.not_run:
                self.configs[config.key] = config
        self.prepared = schedule.pending(self._schedule(), self.done)
        return self.prepared

    def repetitions(self, key: str) -> int:
        """Repetitions planned for a configuration: a metric twin's are the plan's
        metric_repetitions (its values are exact or deterministic: a few suffice)."""
        return self.plan.metric_repetitions if self.configs[key].row.collect else self.plan.repetitions

    def warmup(self, key: str) -> int:
        """Warm-ups per RUN: a metric twin's at least METRIC_WARMUP (wolfSSL's FP_ECC cache
        needs more than one use before its counts and heap settle)."""
        return max(self.plan.warmup, METRIC_WARMUP) if self.configs[key].row.collect else self.plan.warmup

    def _schedule(self) -> list[schedule.Batch]:
        """Time configurations in the plan's rounds; metric twins in as many rounds (at most
        their repetitions), each round's after the time batches of that round."""
        twins = [k for k, c in self.configs.items() if c.row.collect]
        timed = [k for k in self.configs if k not in twins]
        batches = schedule.build(timed, self.plan.repetitions, self.plan.rounds, self.plan.seed)
        if twins:
            rounds = min(self.plan.rounds, self.plan.metric_repetitions)
            batches += schedule.build(twins, self.plan.metric_repetitions, rounds, self.plan.seed)
        return sorted(batches, key=lambda b: b.round)

    def close(self) -> None:
        """Stops every exchange's processes."""
        for exchange in self.exchanges.values():
            exchange.close("interrupted" if self.stop.requested else "")

    # ------------------------------------------------------------------ the sweep
    def run(self) -> RunSummary:
        started = self.started = time.monotonic()
        summary = RunSummary()
        try:
            batches = self.prepared if self.prepared is not None else self.prepare()
            summary.planned = sum(self.repetitions(k) for k in self.configs)
            summary.already = summary.planned - sum(b.count for b in batches)
            summary.skipped_configs.update(self.resolution.not_run)
            self.observer.start(summary.planned, summary.already, len(self.configs))
            self._run_batches(batches, summary)
            if self.plan.precision and self.measure_precision and not self.stop.requested:
                self._extend_for_precision(summary)
            summary.interrupted = self.stop.requested
        finally:
            self.close()
            summary.seconds = time.monotonic() - started
        return summary

    def run_handed(self, batches: list[schedule.Batch], done: Mapping[str, set[int]]) -> RunSummary:
        """Batches handed over from outside (a fleet worker's, app/worker.py), minus the
        repetitions `done` holds; the exchanges stay open for the next ones (close() ends them)."""
        self.done = {key: set(indices) for key, indices in done.items()}
        summary = RunSummary()
        started = time.monotonic()
        self._run_batches(schedule.pending(batches, self.done), summary)
        summary.interrupted = self.stop.requested
        summary.seconds = time.monotonic() - started
        return summary

    def _extend_for_precision(self, summary: RunSummary) -> None:
        """Extra rounds, one at a time, for the configurations whose median is not yet known
        to the plan's target; measured from the store, so a resumed run picks up where an
        interrupted extension stopped."""
        target = self.plan.precision
        assert target is not None and self.measure_precision is not None
        size = -(-self.plan.repetitions // self.plan.rounds)  # a planned round's size
        deadline = self.started + target.time_budget_s
        keys = None  # first check: every configuration; then only those that were above target
        for round_no in range(self.plan.rounds, 10**6):
            measured = self.measure_precision(keys)
            keys = [k for k in needing_more(measured, target.target_ci_percent, target.max_repetitions)
                    if k in self.configs and k not in summary.skipped_configs and not self.configs[k].row.collect]
            if not keys or self.stop.requested:
                return
            if time.monotonic() >= deadline:
                self._budget_stop(summary, round_no, measured, keys)
                return
            next_index = {k: max(self.done.get(k, {-1})) + 1 for k in keys}
            batches = schedule.extension(next_index, size, target.max_repetitions, round_no, self.plan.seed)
            self.observer.note(f"precision: {len(keys)} configuration(s) above ±{target.target_ci_percent:g}%: "
                               f"round {round_no + 1} adds up to {size} repetitions each")
            self.observer.extend(sum(b.count for b in batches))
            self._run_batches(batches, summary, deadline)
            if time.monotonic() >= deadline and not self.stop.requested:
                self._budget_stop(summary, round_no, self.measure_precision(keys), keys)
                return

    def _budget_stop(self, summary: RunSummary, round_no: int, measured: Mapping[str, Precision],
                     keys: list[str]) -> None:
        """The budget is spent: no more precision rounds; says how precise the rest got."""
        target = self.plan.precision
        assert target is not None
        above = {k: measured[k].half_width_pct for k in keys
                 if k in measured and measured[k].half_width_pct > target.target_ci_percent}
        summary.budget = BudgetStop(target.time_budget_s, round_no, target.target_ci_percent, above,
                                    len(self.configs))
        self.observer.note(f"precision: the time budget of {target.time_budget_s:g} s is spent: no more rounds")

    def _run_batches(self, batches: list[schedule.Batch], summary: RunSummary, deadline: float | None = None) -> None:
        """The batches in order (with an owner thread: each device's in a lane of its own, the
        lanes at once, then the rest in order); with a `deadline` (precision rounds), none
        starts after it."""
        lanes: dict[Exchange, list[schedule.Batch]] = {}
        if self.owner is not None:
            for batch in batches:
                if self.route(self.configs[batch.config]).place is Place.DEVICE:
                    lanes.setdefault(self.exchange_for(batch.config), []).append(batch)
        if len(lanes) > 1:
            run_lanes([self._lane(exchange, lane, summary, deadline) for exchange, lane in lanes.items()],
                      self.owner, self.lane_cpus)
            laned = {id(b) for lane in lanes.values() for b in lane}
            batches = [b for b in batches if id(b) not in laned]
        self._in_order(batches, summary, deadline)

    def _lane(self, exchange: Exchange, batches: list[schedule.Batch], summary: RunSummary,
              deadline: float | None) -> Callable[[], None]:
        """One device's batches in order, then its exchange closed by the thread that ran them
        (the processes it started end with that thread: run/lanes.py)."""
        def lane() -> None:
            try:
                self._in_order(batches, summary, deadline)
            except AgentError as exc:  # its target did not boot (again): the other lanes go on
                if isinstance(exc, AgentRejected):
                    raise
                self._owned(self._lose_lane, batches, str(exc), summary)
            finally:
                exchange.close("interrupted" if self.stop.requested else "")
        return lane

    def _lose_lane(self, batches: list[schedule.Batch], why: str, summary: RunSummary) -> None:
        """Gives up a lane whose target did not boot: its configurations not stored in full,
        each with the reason (a resume tries them again), in one line naming the target."""
        row = self.configs[batches[0].config].row
        several_builds = self.plan.device is not None and len(self.plan.device.libraries) > 1
        target = f"{row.target} ({row.library})" if several_builds else row.target or batches[0].config
        keys = [k for k in dict.fromkeys(b.config for b in batches)
                if k not in summary.skipped_configs and len(self.done.get(k, ())) < self.repetitions(k)]
        reason = f"target {target} did not boot: {why.splitlines()[0] if why else 'no reason given'}"
        for key in keys:
            self.sink.set_skip_reason(self.config_ids[key], reason)
            summary.skipped_configs[key] = summary.given_up[key] = reason
        summary.lost_lanes[target] = reason
        self.observer.note(f"{reason}; skipping its {len(keys)} remaining configuration(s), the other targets go on")

    def _in_order(self, batches: list[schedule.Batch], summary: RunSummary, deadline: float | None) -> None:
        for i, batch in enumerate(batches):
            if self.stop.requested or (deadline is not None and time.monotonic() >= deadline):
                return
            # A batch sent ahead is collected even if its configuration was skipped since (the
            # agent refuses it again, or runs it: then its repetitions are stored as usual).
            if batch.config not in summary.skipped_configs or batch == self.sent_ahead:
                self._run_batch(batch, summary, batches[i + 1] if i + 1 < len(batches) else None)

    def _send_ahead(self, batch: schedule.Batch, after: schedule.Batch | None, summary: RunSummary) -> None:
        """Queues `after`'s RUN behind `batch`'s when both run on one exchange (and `after`'s
        configuration is not skipped)."""
        if (not self.lookahead or after is None or after.config in summary.skipped_configs
                or self.exchange_for(after.config) is not self.exchange_for(batch.config)):
            return
        if self.exchange_for(after.config).send_ahead(self.config_ids[after.config], self.configs[after.config], after,
                                                      self.warmup(after.config)):
            self.sent_ahead = after

    def _run_batch(self, batch: schedule.Batch, summary: RunSummary, after: schedule.Batch | None = None) -> None:
        """One batch on its exchange, stored when it has ended; continues after an agent death
        with the next repetition."""
        config, config_id = self.configs[batch.config], self.config_ids[batch.config]
        exchange = self.exchange_for(batch.config)
        next_idx, end = batch.first_index, batch.first_index + batch.count
        while next_idx < end and not self.stop.requested:
            part = schedule.Batch(batch.config, batch.round, next_idx, end - next_idx)
            self._owned(self.observer.batch, batch.config, batch.round, next_idx, part.count)
            outcomes: list[Outcome] = []
            try:
                if self.sent_ahead == batch:
                    self.sent_ahead = None
                running = exchange.run(config_id, config, part, self.warmup(batch.config))
                if self.sent_ahead is None:
                    self._send_ahead(batch, after, summary)
                outcomes.extend(running)
            except AgentRejected as rejected:
                self._owned(self._store, outcomes, part, config_id, summary)
                if batch.config not in summary.skipped_configs:
                    self._owned(self._skip, batch.config, config_id, str(rejected), summary,
                                rejected.code not in SKIPPABLE_ERRORS)
                return
            except AgentDied as died:
                self.sent_ahead = None  # a dead agent's queued RUNs died with it
                self._owned(self._store, outcomes, part, config_id, summary)
                next_idx = self._owned(self._record_death, part, config_id, died, summary)
                if batch.config in summary.skipped_configs:
                    return
                continue
            next_idx = self._owned(self._store, outcomes, part, config_id, summary) or next_idx
            if next_idx < end and not self.stop.requested:
                raise ControllerError(f"{batch.config}: the exchange ended repetition {next_idx} of "
                                      f"{batch.first_index}..{end - 1} without a reason")

    def _owned(self, fn: Callable[..., T], *args: object) -> T:
        """fn(*args) on the owner thread (the store's) when lanes run, else here."""
        return self.owner.call(fn, *args) if self.owner is not None else fn(*args)

    def _store(self, outcomes: list[Outcome], batch: schedule.Batch, config_id: int,
               summary: RunSummary) -> int | None:
        """Stores what an exchange yielded for a batch (its repetitions in one transaction,
        then the link's traffic); the index after the last stored repetition."""
        reps = [o for o in outcomes if isinstance(o, Repetition)]
        rows = [StoredRepetition(repetition_row(self.spec, o.rep, config_id, batch.round, o.agent.agent_id, o.peer),
                                 o.rep.records, o.peer, o.counts) for o in reps]
        if rows:
            self.sink.add_repetitions(rows)
            if self.sched is not None:
                self.sched.record(self.sink, [Measured(config_id, s.row.idx, o.agent.agent_id, o.agent.pid, o.rep.records)
                                              for s, o in zip(rows, reps)])  # type: ignore[arg-type]
        for traffic in (o for o in outcomes if isinstance(o, BatchTraffic)):
            self.sink.add_link_traffic(config_id, traffic.traffic)
        ok = self.spec.status.name(self.spec.status.OK)
        for stored, outcome in zip(rows, reps):
            self.done.setdefault(batch.config, set()).add(stored.row.idx)
            self.deaths[batch.config] = 0
            summary.stored += 1
            summary.failed += stored.row.status != ok
            self.observer.stored(batch.config, stored.row.idx, stored.row.status, outcome.agent)
        too_big = next((why for why in (does_not_fit(s.row.error_text) for s in rows) if why), None)
        if too_big and batch.config not in summary.skipped_configs:  # the part's RAM: its other repetitions would too
            self._skip(batch.config, config_id, too_big, summary)
        return rows[-1].row.idx + 1 if rows else None

    def _record_death(self, batch: schedule.Batch, config_id: int, died: AgentDied, summary: RunSummary) -> int:
        """Stores the repetition in flight as AGENT_DIED; returns the next index to run."""
        self.sink.add_repetition(died_row(self.spec, config_id, died.idx, batch.round, died.agent_id, died.reason),
                                 b"")
        self.done.setdefault(batch.config, set()).add(died.idx)
        summary.stored += 1
        summary.failed += 1
        summary.agent_deaths += 1
        self.deaths[batch.config] += 1
        self.observer.note(f"agent died during {batch.config} repetition {died.idx}: {died.reason}")
        if self.deaths[batch.config] >= MAX_CONSECUTIVE_DEATHS:
            self._skip(batch.config, config_id, f"given up after {MAX_CONSECUTIVE_DEATHS} consecutive agent "
                                                f"deaths; last: {died.reason}", summary)
            summary.given_up[batch.config] = summary.skipped_configs[batch.config]
        return died.idx + 1

    def _skip(self, key: str, config_id: int, why: str, summary: RunSummary, fatal: bool = False) -> None:
        if fatal:
            raise ControllerError(f"{key}: {why}")
        self.sink.set_skip_reason(config_id, why)
        summary.skipped_configs[key] = why
        self.observer.note(f"skipping {key}: {why}")


def budget_text(stop: BudgetStop) -> str:
    """One line: where the budget stopped the precision rounds and how precise they got."""
    head = (f"precision: the time budget ({stop.budget_s:g} s, [precision] time_budget_s) stopped the extra rounds "
            f"at round {stop.round + 1}")
    if not stop.above:
        return head + f": every configuration is now within ±{stop.target_pct:g}%"
    worst_key, worst = max(stop.above.items(), key=lambda kv: kv[1])
    return (head + f": {len(stop.above)} of {stop.configs} configuration(s) above ±{stop.target_pct:g}% "
            f"(worst ±{worst:.2f}%: {worst_key}); the report lists them. More time: raise time_budget_s, or run "
            "the same command with --resume")
