# SPDX-License-Identifier: Apache-2.0
"""The controller: plan -> configurations -> schedule -> RUN batches -> stored repetitions.

Design (docs/host.md): every repetition is stored in its own transaction as it arrives, so
the store is always consistent and a resume only needs the set of stored (config, idx).
One agent process per library of the plan, kept alive across rounds; the schedule
interleaves the configurations of all libraries. An agent that dies or sends a corrupt
frame costs exactly the repetition in flight, which is stored as AGENT_DIED with the
reason; that library's agent is restarted and the sweep goes on."""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
import signal
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from tlsbench import __version__, experiments, protocol, schedule
from tlsbench import spec as specmod
from tlsbench.agents import AgentError, AgentProcess, AgentRejected, Timeouts, find_agent
from tlsbench.network.link import check_links
from tlsbench.network.pair import NetworkRunner, PairDied, pair_outcome
from tlsbench.network.plan import NetworkPlan, Variant, variants
from tlsbench.plan import LoadedPlan, locate_agents, select_per_library
from tlsbench.store.lock import refuse_if_busy, writer_lock
from tlsbench.store.sqlite import (DB_FILE, ConfigRow, Experiment, PeerRepetition, RepetitionRow, Store, StoreError,
                                   plan_mismatch, stored_experiment)

MAX_CONSECUTIVE_DEATHS = 3  # then the configuration is given up (and the run says so)
# The exit reason of agent rows a killed host left open, written by the next run (resume).
STALE_AGENT_REASON = "host ended without closing it (killed, or its disk was full)"
# ERROR codes that mean "this configuration cannot run here" (skip it, report it) rather
# than a controller bug.
SKIPPABLE_ERRORS = ("unknown_suite", "unsupported")


class ControllerError(RuntimeError):
    """The run cannot go on (after what was stored so far, which stays valid)."""


class Interrupted(Exception):
    """The user asked to stop; raised after the store was left consistent."""


@dataclass(frozen=True)
class Configuration:
    """One measured configuration: a `config` row plus the RUN fields it maps to."""

    row: ConfigRow
    suite_id: int
    group: int  # spec [group] value
    credential: int  # spec [credential] value (resolved: never auto)
    direction: int
    transport: int
    options: int = 0  # RUN options bits
    variant: Variant | None = None  # two-process configurations (network/plan.py)
    experiment: int = 0  # 0: a handshake; n: the n-th entry of the agent's HELLO `experiments`

    @property
    def key(self) -> str:
        return self.row.key

    @classmethod
    def of_experiment(cls, found: experiments.ExperimentConfig) -> "Configuration":
        """An experiment's RUN: no connection, so suite, group, credential, direction and
        transport at their value 0 (none, memory); the payload size in total_bytes."""
        return cls(found.row, 0, 0, 0, 0, 0, 0, experiment=found.experiment_id)

    def request(self, config_id: int, batch: schedule.Batch, warmup: int, **network: Any) -> protocol.RunRequest:
        """The RUN of a batch; `network` holds the two-process fields (network/pair.py)."""
        return protocol.RunRequest(config_id, self.suite_id, self.group, self.credential, self.direction,
                                   self.transport, batch.count, warmup, self.row.total_bytes,
                                   self.row.record_size, batch.first_index, self.options,
                                   experiment=self.experiment, **network)


@dataclass
class Resolution:
    """What a plan means against one agent build."""

    configs: list[Configuration]
    not_runnable: list[str]  # suites the agent lists but cannot run (with why)
    not_applicable: Counter[str] = field(default_factory=Counter)  # matrix cells skipped, by reason


def group_applies(key_exchange: str, group: int) -> bool:
    """Whether a suite's key exchange takes the group (spec [key_exchange])."""
    return specmod.load().group_applies(key_exchange, group)


def config_key(library: str, suite: str, grp: str, credential: str, transport: str, direction: str,
               total_bytes: int, record_size: int, options: Sequence[str] = (), variant: Variant | None = None) -> str:
    key = f"{library}|{suite}|{grp}|{credential}|{transport}|{direction}|{total_bytes}|{record_size}"
    key += "".join(f"|{o}" for o in sorted(options))  # no suffix without options: keys stay stable
    return key + (f"|net:{variant.key()}" if variant else "")


def resolve(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Mapping[str, Any]]]) -> Resolution:
    """The plan's matrix (library × suite × group × credential × payload) against each
    library's SUITES. Reasons are prefixed with the library when the plan has several."""
    out = Resolution([], [])
    if loaded.plan.suites is None:  # a plan of experiments only
        return out
    seen: set[str] = set()
    several = len(suites_by_library) > 1
    for library, chosen in select_per_library(loaded, suites_by_library).items():
        prefix = f"{library}: " if several else ""
        for suite in chosen:
            _resolve_suite(loaded, library, suite, prefix, out, seen)
    return out


def _resolve_suite(loaded: LoadedPlan, library: str, suite: Mapping[str, Any], prefix: str,
                   out: Resolution, seen: set[str]) -> None:
    """The cells of one suite of one library: group × credential × payload."""
    s, plan = specmod.load(), loaded.plan
    usable = list(suite.get("credentials", []))
    if not usable:
        out.not_runnable.append(f"{prefix}{suite['name']}: "
                                f"{suite.get('why_unsupported') or 'no usable credential in this agent'}")
        return
    for grp in plan.groups:
        if not group_applies(suite["key_exchange"], s.groups.value(grp)):
            out.not_applicable[f"{prefix}group {grp} does not apply to {suite['key_exchange']} key exchange"] += 1
            continue
        for wanted in plan.credentials:
            cred = usable[0] if wanted == s.credentials.name(s.credentials.auto) else wanted
            if cred not in usable:
                out.not_applicable[f"{prefix}credential {cred} not usable by the suite"] += 1
                continue
            for pay, variant in itertools.product(plan.payload, variants(plan.network) if plan.network else [None]):
                if variant and variant.protocol == "dtls" and not suite.get("dtls", True):
                    out.not_applicable[f"{prefix}suite not usable over DTLS"] += 1
                    continue
                transport = variant.transport if variant else plan.transport
                options = [*plan.options, *(network_options(plan.network, variant) if variant else [])]
                key = config_key(library, suite["name"], grp, cred, transport, pay.direction,
                                 pay.total_bytes, pay.record_size, options, variant)
                if key in seen:  # e.g. "auto" and the credential it resolves to
                    continue
                seen.add(key)
                bits = sum(s.options.value(o) for o in options)
                row = ConfigRow(key, library, suite["id"], suite["name"], suite["key_exchange"],
                                suite["authentication"], suite["cipher"], suite["mac"],
                                suite["min_version"], suite["max_version"], grp, cred, transport,
                                pay.direction, pay.total_bytes, pay.record_size, plan.repetitions, bits,
                                *(network_columns(variant, library) if variant else ()))
                out.configs.append(Configuration(row, suite["id"], s.groups.value(grp), s.credentials.value(cred),
                                                 s.directions.value(pay.direction),
                                                 s.transports.value(transport), bits, variant))


def network_options(net: NetworkPlan, variant: Variant) -> list[str]:
    """The spec [options] a network configuration sets (RUN option bits)."""
    wanted = {"NODELAY": variant.transport == "tcp" and not variant.nagle,
              "QUICKACK": variant.transport == "tcp" and net.quickack,
              "DTLS_COOKIES": variant.transport == "udp" and net.dtls.cookies}
    return [name for name, on in wanted.items() if on]


def network_columns(variant: Variant, library: str) -> tuple[str, str, str, str]:
    """network_json, device_role, peer_library, link_label of a config row."""
    described = variant.describe()
    return (json.dumps(described, sort_keys=True), variant.device_role, variant.peer_library or library,
            described["link_label"])


def host_facts() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        pass
    return {"host": socket.gethostname(), "system": platform.system(), "kernel": platform.release(),
            "machine": platform.machine(), "cpu": cpu, "cpus": os.cpu_count(),
            "python": platform.python_version(), "tlsbench": __version__}


class Observer(Protocol):
    """What the controller reports while it runs (the CLI draws a progress bar)."""

    def start(self, total: int, done: int, configs: int) -> None: ...
    def batch(self, config: str, round: int, first_index: int, count: int) -> None: ...
    def stored(self, config: str, idx: int, status: str, agent: AgentProcess) -> None: ...
    def note(self, message: str) -> None: ...
    def extend(self, extra: int) -> None: ...


class QuietObserver:
    def start(self, total: int, done: int, configs: int) -> None: pass
    def batch(self, config: str, round: int, first_index: int, count: int) -> None: pass
    def stored(self, config: str, idx: int, status: str, agent: AgentProcess) -> None: pass
    def note(self, message: str) -> None: pass
    def extend(self, extra: int) -> None: pass


@dataclass
class RunSummary:
    """What one `tlsbench run` did."""

    folder: Path
    planned: int = 0  # repetitions of all runnable configs
    already: int = 0  # stored before this run started (resume)
    stored: int = 0  # stored by this run
    failed: int = 0  # stored with a status other than OK (by this run)
    agent_deaths: int = 0
    skipped_configs: dict[str, str] = field(default_factory=dict)  # key -> why
    not_runnable: list[str] = field(default_factory=list)
    not_applicable: dict[str, int] = field(default_factory=dict)
    given_up: dict[str, str] = field(default_factory=dict)  # skipped because their agent kept dying: failed
    interrupted: bool = False
    seconds: float = 0.0


class _AgentDied(Exception):
    """Internal: the agent stopped answering properly while repetition `idx` was in flight."""

    def __init__(self, idx: int, reason: str):
        super().__init__(reason)
        self.idx = idx
        self.reason = reason


class StopFlag:
    """Set by the first Ctrl-C; a second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True


class Controller:
    """Runs one plan into one store with one agent per library (each restarted when it dies)."""

    def __init__(self, loaded: LoadedPlan, store: Store | None, agent_paths: Path | Mapping[str, Path],
                 observer: Observer | None = None, stop: StopFlag | None = None,
                 hang_timeout: float | None = None, agent_dir: str | Path | None = None,
                 timeouts: Timeouts = Timeouts()):
        self.loaded = loaded
        self.plan = loaded.plan
        self.store: Store = store  # type: ignore[assignment]  # None until resolve_plan() is done (run_experiment)
        # One path is the agent of a single-library plan.
        self.agent_paths = (dict(agent_paths) if isinstance(agent_paths, Mapping)
                            else {self.plan.libraries[0]: agent_paths})
        self.observer = observer or QuietObserver()
        self.stop = stop or StopFlag()
        self.timeouts = timeouts
        self.hang_timeout = hang_timeout or timeouts.silence
        self.spec = specmod.load()
        self.agents: dict[str, AgentProcess] = {}  # library -> its running agent
        self.agent_ids: dict[str, int] = {}  # library -> `agent` row of that process
        self.library = self.plan.libraries[0]  # the library of the batch in flight
        self.config_ids: dict[str, int] = {}
        self.configs: dict[str, Configuration] = {}
        self.deaths: Counter[str] = Counter()  # consecutive deaths per config
        self._last_frame = time.monotonic()
        self._watch = False
        self._hung = False
        self.resolution: Resolution | None = None
        self.prepared: tuple[Resolution, list[schedule.Batch]] | None = None
        self.agent_dir = agent_dir
        self.network = NetworkRunner(self)  # two-process configurations (network/pair.py)

    # ------------------------------------------------------------------ agents
    @property
    def agent(self) -> AgentProcess | None:
        """The agent of the batch in flight (or of the last one)."""
        return self.agents.get(self.library)

    @property
    def agent_id(self) -> int:
        return self.agent_ids.get(self.library, 0)

    def _start_agent(self, library: str) -> AgentProcess:
        agent = AgentProcess.start(self.agent_paths[library], greeting_s=self.timeouts.greeting)
        self.agents[library] = agent
        self._last_frame = time.monotonic()  # the watchdog judges the new agent from now
        if self.store is not None:  # else recorded by prepare(), once the store exists
            self._record_agent(library)
        return agent

    def _record_agent(self, library: str) -> None:
        agent = self.agents[library]
        self.agent_ids[library] = self.store.add_agent(library, agent.path.name, agent.pid, agent.hello_raw,
                                                       agent.suites_raw)

    def agent_path(self, library: str) -> Path:
        """The agent of a library, also one the plan names only as a network peer."""
        return self.agent_paths.get(library) or find_agent(library, self.agent_dir)

    def note_frame(self) -> None:
        self._last_frame = time.monotonic()

    def _end_agent(self, library: str, reason: str) -> None:
        agent = self.agents.pop(library, None)
        if agent is None:
            return
        try:
            if library in self.agent_ids:
                self.store.end_agent(self.agent_ids.pop(library), reason)
        except StoreError:  # e.g. the disk is full: the row stays open and the next run closes it
            pass
        finally:
            agent.close()

    def close_agents(self, reason: str = "") -> None:
        """Quits every agent still running (their rows get `reason` or the exit code)."""
        for library in list(self.agents):
            code = self.agents[library].quit()
            self._end_agent(library, reason or f"quit (exit code {code})")

    def _watchdog(self) -> None:
        """Kills an agent that sends nothing for hang_timeout during a batch (a hang
        would otherwise block the sweep forever); the death path then records it."""
        while self._watch:
            time.sleep(min(1.0, self.hang_timeout / 4))
            agent = self.agent
            if self._watch and agent and time.monotonic() - self._last_frame > self.hang_timeout:
                self._hung = True
                agent.kill()

    # ------------------------------------------------------------------ setup
    def resolve_plan(self) -> Resolution:
        """Starts one agent per library and resolves the plan against their SUITES and
        HELLO: what can fail because of the plan fails here, before anything is stored."""
        if self.resolution is None:
            started = {library: self.agents.get(library) or self._start_agent(library) for library in self.agent_paths}
            resolution = resolve(self.loaded, {library: agent.suites for library, agent in started.items()})
            found = experiments.resolve(self.loaded, {library: agent.hello for library, agent in started.items()})
            resolution.configs += [Configuration.of_experiment(c) for c in found.configs]
            resolution.not_applicable.update(found.not_applicable)
            self.resolution = resolution
        return self.resolution

    def prepare(self) -> tuple[Resolution, list[schedule.Batch]]:
        """Experiment row, agent rows, configurations and the pending schedule."""
        plan_json = self.plan.resolved_json()
        self.store.init_experiment(Experiment(self.plan.name, self.loaded.text, plan_json,
                                              hashlib.sha256(plan_json.encode()).hexdigest(),
                                              self.plan.seed, json.dumps(host_facts())))
        closed = self.store.close_stale_agents(STALE_AGENT_REASON)  # before this run's rows exist
        if closed:
            self.observer.note(f"closed {closed} agent record(s) an earlier host left open")
        resolution = self.resolve_plan()
        for library in self.agents:
            if library not in self.agent_ids:
                self._record_agent(library)
        for config in resolution.configs:
            config_id = self.store.upsert_config(config.row)
            self.store.set_skip_reason(config_id, None)  # a resume tries again
            self.config_ids[config.key] = config_id
            self.configs[config.key] = config
        by_id = {v: k for k, v in self.config_ids.items()}
        done = {by_id[c]: idx for c, idx in self.store.done().items() if c in by_id}
        batches = schedule.build(self.configs, self.plan.repetitions, self.plan.rounds, self.plan.seed)
        self.prepared = resolution, schedule.pending(batches, done)
        if self.plan.network:  # every configuration runs on agent pairs: the listing agents are done
            for library in list(self.agents):
                self._end_agent(library, f"quit (exit code {self.agents[library].quit()}): suites listed")
        return self.prepared

    # ------------------------------------------------------------------ the sweep
    def run(self) -> RunSummary:
        started = time.monotonic()
        summary = RunSummary(self.store.path.parent)
        try:
            resolution, batches = self.prepared or self.prepare()
            summary.not_runnable = resolution.not_runnable
            summary.not_applicable = dict(resolution.not_applicable)
            summary.planned = len(self.configs) * self.plan.repetitions
            todo = sum(b.count for b in batches)
            summary.already = summary.planned - todo
            self.observer.start(summary.planned, summary.already, len(self.configs))
            self._watch = True
            threading.Thread(target=self._watchdog, daemon=True).start()
            for batch in batches:
                if self.stop.requested:
                    summary.interrupted = True
                    break
                if batch.config in summary.skipped_configs:
                    continue
                self._run_batch(batch, summary)
            if self.plan.precision and not (summary.interrupted or self.stop.requested):
                self._extend_for_precision(summary)
            summary.interrupted = summary.interrupted or self.stop.requested
        finally:
            self._watch = False
            self.close_agents("interrupted" if self.stop.requested else "")
            self.network.close("interrupted" if self.stop.requested else "")
            summary.seconds = time.monotonic() - started
        return summary

    def _extend_for_precision(self, summary: RunSummary) -> None:
        """Extra rounds, one at a time, for the configurations whose median handshake
        processing is not yet known to the plan's target; measured from the store, so a
        resumed run picks up where an interrupted extension stopped."""
        from tlsbench import precision  # the analysis (numpy, scipy): loaded when a plan asks for it

        target = self.plan.precision
        size = -(-self.plan.repetitions // self.plan.rounds)  # a planned round's size
        keys = None  # first check: every configuration; then only those that were above target
        for round_no in range(self.plan.rounds, 10**6):
            measured = precision.measure(self.store.path, self.plan.seed, only=keys)
            measured |= experiments.measure_precision(self.store.path, self.plan.seed, only=keys)
            keys = [k for k in precision.needing_more(measured, target.target_ci_percent, target.max_repetitions)
                    if k in self.configs and k not in summary.skipped_configs]
            if not keys or self.stop.requested:
                return
            done = self.store.done()
            next_index = {k: max(done.get(self.config_ids[k], {-1})) + 1 for k in keys}
            batches = schedule.extension(next_index, size, target.max_repetitions, round_no, self.plan.seed)
            self.observer.note(f"precision: {len(keys)} configuration(s) above ±{target.target_ci_percent:g}%: "
                               f"round {round_no + 1} adds up to {size} repetitions each")
            self.observer.extend(sum(b.count for b in batches))
            for batch in batches:
                if self.stop.requested:
                    return
                self._run_batch(batch, summary)

    def _run_batch(self, batch: schedule.Batch, summary: RunSummary) -> None:
        """One RUN request; continues after an agent death with the next repetition."""
        config = self.configs[batch.config]
        config_id = self.config_ids[batch.config]
        self.library = config.row.library
        next_idx, end = batch.first_index, batch.first_index + batch.count
        while next_idx < end and not self.stop.requested:
            part = schedule.Batch(batch.config, batch.round, next_idx, end - next_idx)
            self.observer.batch(batch.config, batch.round, next_idx, part.count)
            exchange = self.network.exchange if config.variant else self._exchange
            try:
                next_idx = exchange(config, config_id, part, summary)
            except AgentRejected as rejected:
                self._skip(batch.config, config_id, str(rejected), summary,
                           fatal=rejected.code not in SKIPPABLE_ERRORS)
                return
            except (_AgentDied, PairDied) as died:
                next_idx = self._record_death(batch, config_id, died.idx, died.reason, summary, config.variant)
                if batch.config in summary.skipped_configs:
                    return

    def _exchange(self, config: Configuration, config_id: int, batch: schedule.Batch, summary: RunSummary) -> int:
        """Sends RUN and stores REPs until DONE. Returns the index after the last stored
        repetition (== end of the batch unless stopped)."""
        agent = self.agent or self._start_agent(self.library)
        expected, end = batch.first_index, batch.first_index + batch.count
        self._last_frame = time.monotonic()
        try:
            agent.run(config.request(config_id, batch, self.plan.warmup))
        except (BrokenPipeError, OSError) as exc:
            raise _AgentDied(expected, f"cannot send RUN: {exc}; {agent.death_reason()}") from None
        frames = self.spec.frames
        while True:
            try:
                frame = agent.read_frame()
            except protocol.FrameError as exc:
                raise _AgentDied(expected, f"corrupt frame: {exc}; {agent.death_reason()}") from None
            self._last_frame = time.monotonic()
            if frame is None:
                hang = f"no frame for {self.hang_timeout:.0f} s, killed as hung; " if self._hung else ""
                self._hung = False
                raise _AgentDied(expected, f"{hang}end of stream; {agent.death_reason()}")
            if frame.type == frames.REP:
                self._store_rep(frame, config_id, batch, expected, summary)
                expected += 1
                if self.stop.requested:
                    return expected
            elif frame.type == frames.DONE:
                if expected != end:
                    raise _AgentDied(expected, f"protocol violation: DONE after {expected - batch.first_index} "
                                               f"of {batch.count} repetitions (frame at offset {frame.offset})")
                return expected
            elif frame.type == frames.ERROR:
                raise AgentRejected(frame.json())
            else:
                raise _AgentDied(expected, f"protocol violation: unexpected {frame.type_name} frame "
                                           f"at offset {frame.offset} during a RUN")

    def _store_rep(self, frame: protocol.Frame, config_id: int, batch: schedule.Batch, expected: int,
                   summary: RunSummary) -> None:
        try:
            rep = protocol.decode_rep(frame)
        except protocol.FrameError as exc:
            raise _AgentDied(expected, f"corrupt REP: {exc}") from None
        h = rep.header
        if (h.config_id, h.index) != (config_id, expected):
            raise _AgentDied(expected, f"protocol violation: REP for config {h.config_id} repetition {h.index} "
                                       f"where config {config_id} repetition {expected} was expected "
                                       f"(frame at offset {frame.offset})")
        row = self._repetition_row(rep, config_id, batch, self.agent_id)
        self.store.add_repetition(row, rep.records)
        assert self.agent is not None
        self._stored(batch, row, summary, self.agent)

    def _repetition_row(self, rep: protocol.Rep, config_id: int, batch: schedule.Batch, agent_id: int | None,
                        peer: PeerRepetition | None = None) -> RepetitionRow:
        """A REP as a row; with the peer agent's REP of the same repetition, the first failure
        of either side, or MISMATCHED when the two name different connections, with both
        agents' reasons, and the flags and retransmissions of both."""
        h = rep.header
        status = self.spec.status.name(h.status)
        failed_peer = self.spec.peers.by_value.get(h.failed_peer) if h.failed_peer != self.spec.peers.none else None
        flags, retransmissions, reason = h.flags, h.retransmissions, rep.reason or None
        if peer:
            status, failed_peer, reason = pair_outcome(self.spec, rep, peer)
            flags |= peer.flags
            retransmissions += peer.retransmissions
        ports = h.connection if any(h.connection) else (None, None)
        return RepetitionRow(config_id, h.index, batch.round, agent_id, status, failed_peer, h.error_code, reason,
                             flags, h.bytes_c2s, h.bytes_s2c, h.start_ns, h.handshake_wall_ns, h.handshake_cpu_ns,
                             h.n_records, h.dropped, h.packets_c2s, h.packets_s2c, retransmissions,
                             self.spec.roles.name(h.role), h.repetition_wall_ns, *ports)

    def _stored(self, batch: schedule.Batch, row: RepetitionRow, summary: RunSummary, agent: AgentProcess) -> None:
        self.deaths[batch.config] = 0
        summary.stored += 1
        summary.failed += row.status != self.spec.status.name(self.spec.status.OK)
        self.observer.stored(batch.config, row.idx, row.status, agent)

    def store_pair(self, config_id: int, batch: schedule.Batch, device_rep: protocol.Rep, agent: AgentProcess,
                   agent_id: int, peer: PeerRepetition, summary: RunSummary) -> int:
        """A two-process repetition (network/pair.py): the device's REP and the peer's."""
        row = self._repetition_row(device_rep, config_id, batch, agent_id, peer)
        rep_id = self.store.add_paired_repetition(row, device_rep.records, peer)
        self._stored(batch, row, summary, agent)
        return rep_id

    def _record_death(self, batch: schedule.Batch, config_id: int, idx: int, reason: str,
                      summary: RunSummary, variant: Variant | None = None) -> int:
        """Stores the repetition in flight as AGENT_DIED, restarts the agent(s); returns the
        next index to run."""
        if variant:  # the pair is restarted by the next batch
            dead_id = None
            self.network.stop_all(f"died: {reason}")
        else:
            if self.agent is not None:
                self.agent.kill()
            dead_id = self.agent_id
            self._end_agent(self.library, f"died: {reason}")
        self.store.add_repetition(RepetitionRow(
            config_id, idx, batch.round, dead_id, self.spec.status.name(self.spec.status.AGENT_DIED),
            None, 0, reason, 0, None, None, None, None, None, 0, 0), b"")
        summary.stored += 1
        summary.failed += 1
        summary.agent_deaths += 1
        self.deaths[batch.config] += 1
        self.observer.note(f"agent died during {batch.config} repetition {idx}: {reason}")
        if self.deaths[batch.config] >= MAX_CONSECUTIVE_DEATHS:
            self._skip(batch.config, config_id, f"given up after {MAX_CONSECUTIVE_DEATHS} consecutive agent "
                                                f"deaths; last: {reason}", summary)
            summary.given_up[batch.config] = summary.skipped_configs[batch.config]
        if not variant:
            self._start_agent(self.library)
        return idx + 1

    def _skip(self, key: str, config_id: int, why: str, summary: RunSummary, fatal: bool = False) -> None:
        if fatal:
            raise ControllerError(f"{key}: {why}")
        self.store.set_skip_reason(config_id, why)
        summary.skipped_configs[key] = why
        self.observer.note(f"skipping {key}: {why}")


def experiment_folder(loaded: LoadedPlan, output: str | Path | None) -> Path:
    return Path(output if output is not None else loaded.plan.output) / loaded.plan.name


def check_before_start(loaded: LoadedPlan, folder: Path, resume: bool, agent_dir: str | Path | None) -> None:
    """What can be refused without an agent, refused before any is started: another writer,
    nothing to resume, another plan's store, a damaged store, a link the emulator rejects."""
    refuse_if_busy(folder)
    db = folder / DB_FILE
    stored = stored_experiment(db) if db.exists() else None  # raises for a damaged or foreign file
    if resume and stored is None:
        why = f"{db} holds no experiment (an empty store: a start that stored nothing)" if db.exists() else \
            f"there is no {db}"
        raise ControllerError(f"nothing to resume in {folder}: {why}; run without --resume to start it")
    if stored is not None and stored.plan_hash != loaded.plan.hash():
        raise plan_mismatch(folder, stored, loaded.plan.hash())
    if loaded.plan.network and loaded.plan.network.links:
        check_links(loaded.plan.network.links, agent_dir, loaded.source)


def run_experiment(loaded: LoadedPlan, output: str | Path | None = None, resume: bool = False,
                   agent_dir: str | Path | None = None, observer: Observer | None = None,
                   timeouts: Timeouts = Timeouts()) -> RunSummary:
    """`tlsbench run`: the whole pipeline from a plan to a filled store. Nothing is written to
    the output folder before the plan is resolved against the agents, so a plan that fails
    there leaves nothing behind; the store is then written under its writer lock."""
    folder = experiment_folder(loaded, output)
    check_before_start(loaded, folder, resume, agent_dir)
    agent_paths = locate_agents(loaded, agent_dir)
    stop = StopFlag()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, stop) if in_main else None
    ctl = Controller(loaded, None, agent_paths, observer, stop, agent_dir=agent_dir, timeouts=timeouts)
    try:
        ctl.resolve_plan()
        with writer_lock(folder), Store.in_folder(folder) as store:
            ctl.store = store
            return ctl.run()
    finally:
        ctl.close_agents("interrupted" if stop.requested else "")
        if in_main:
            signal.signal(signal.SIGINT, previous)


__all__ = ["AgentError", "ControllerError", "StoreError", "run_experiment", "resolve", "Controller",
           "experiment_folder", "RunSummary"]
