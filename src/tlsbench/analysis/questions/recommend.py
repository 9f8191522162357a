# SPDX-License-Identifier: Apache-2.0
"""The first answer of a report: per key-exchange class (PSK, ECDHE-PSK, ECDHE-ECDSA,
ECDHE-RSA, TLS 1.3 per group; spec/recommendations.toml), the cheapest configuration a
firmware engineer may pick, with what it costs the device's peer (processing; heap and stack;
flash where known; bytes on the wire) and whether its lead is clear; recommended suites first,
obsolete ones apart; a budget (RAM, flash, time) keeps only what fits.

A class's pick is its cheapest configuration of the best status it has (recommended, else
other); obsolete suites are never picked. Its lead over the next ones is judged as the winners'
(winners.rank: the ratio's bootstrap interval beyond the noise floor), or exactly where the
values are exact (a device's counts: one value, or every value the same): then only the noise
floor separates them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tlsbench.core.errors import UserError
from tlsbench.core.recommendations import OBSOLETE, Policy, Status, load as load_policy, suite_fields
from tlsbench.analysis.derive.dataset import Config
from tlsbench.analysis.questions.answers import QUESTIONS, Answers, Question
from tlsbench.analysis.questions.device import Budget, DeviceResults, host_key, library_bytes, peer_needs
from tlsbench.analysis.questions.winners import exact, judge
from tlsbench.analysis.stats.stats import Ratio, Summary, rng_for
from tlsbench.analysis.units import Unit

KIB = 1024
RUNNERS_UP = 3  # configurations after a class's pick that its lead is judged against
ROLES = {"client": QUESTIONS[2], "server": QUESTIONS[3]}  # the device's peer -> the question that ranks


# ---------------------------------------------------------------------- the budget
BUDGET_KEYS = tuple(Budget.__dataclass_fields__)


class BudgetError(UserError, ValueError):
    """A budget that does not parse."""


def parse_budget(text: str | None) -> Budget:
    """`ram_kb=32,flash_kb=256,ms=500` (any of them, comma-separated) as a Budget."""
    if not text:
        return Budget()
    values: dict[str, float] = {}
    for item in (i.strip() for i in text.split(",") if i.strip()):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in BUDGET_KEYS:
            raise BudgetError(f"budget {item!r}: the keys are {', '.join(BUDGET_KEYS)} (e.g. ram_kb=32,flash_kb=256,ms=500)")
        try:
            number = float(value)
        except ValueError:
            raise BudgetError(f"budget {item!r}: {value.strip()!r} is not a number") from None
        if not number > 0:
            raise BudgetError(f"budget {item!r}: give a positive number")
        values[key] = number
    return Budget(**values)


# ---------------------------------------------------------------------- device time
@dataclass(frozen=True)
class DeviceTime:
    """How a device's count becomes the part's time and energy: an estimate, always labelled
    (the one conversion's basis: a board's cycle model, or a profile's stated CPI)."""

    label: str  # e.g. "estimate, cycles (model) of nrf52840: instructions × CPI 1.73 ÷ 64 MHz"
    seconds_per_unit: float
    band_pct: float | None = None  # the model's measured error, ± % (None: not known)
    energy_j: Callable[[int, str], float | None] = lambda config_id, peer: None  # median J above idle
    # A configuration's peer's handshake: its steps' own cycles (model) where they were counted
    handshake_s: Callable[[int, str], float] | None = None

    def ms(self, count: float, config_id: int | None = None, peer: str | None = None) -> float:
        per_unit = (self.handshake_s(config_id, peer) if self.handshake_s and config_id is not None and peer
                    else self.seconds_per_unit)
        return count * per_unit * 1e3


# ---------------------------------------------------------------------- the answer
@dataclass(frozen=True)
class Candidate:
    """One configuration as the first screen weighs it, for the device's peer (`role`)."""

    config_id: int
    label: str
    cls: str | None  # its key-exchange class; None: an obsolete key exchange
    order: int  # its class's place in the declaration (DTLS after TLS)
    status: Status
    cost: Summary | None  # handshake processing of the role's peer (the dataset's unit)
    other_cost: Summary | None  # the other peer's
    exact: bool  # its values are exact: a count of one value, or every value the same
    ram: int | None  # bytes: the peer's heap peak + stack high-water + heap shared by the peers
    flash: int | None  # bytes
    wire: float | None  # handshake bytes, both directions (median)
    ms: float | None  # the role's handshake processing in ms: a host's time, or a device's estimate
    mj: float | None  # energy of the role's handshake (an estimate), mJ
    over: tuple[str, ...] = ()  # what the budget refuses it for ("RAM 41.2 KiB > 32")

    @property
    def fits(self) -> bool:
        return not self.over


@dataclass(frozen=True)
class ClassAnswer:
    cls: str
    pick: Candidate | None  # None: nothing of the class fits the budget (or has data)
    tied: list[Candidate]  # the next ones within noise of the pick (no clear winner then)
    runner_up: Candidate | None  # the next one, when the pick leads clearly
    ratio: Ratio | None  # runner_up (or the first tied) / pick
    considered: int  # configurations of the class with data, not obsolete
    cheaper: list[Candidate]  # of a lesser status than the pick yet cheaper (shown: recommended first is a choice)
    over_budget: list[Candidate]  # refused by the budget
    no_data: int  # configurations of the class without data

    @property
    def clear(self) -> bool:
        return self.pick is not None and not self.tied


@dataclass
class Recommendations:
    role: str
    unit: Unit
    budget: Budget
    classes: list[ClassAnswer]
    obsolete: list[Candidate]  # folded away: why each is obsolete
    policy: Policy
    device_time: DeviceTime | None
    unknown: list[str] = field(default_factory=list)  # budget items no configuration has a value for, and why
    ram_what: str = ""  # what the RAM column is
    flash_what: str = ""
    candidates: list[Candidate] = field(default_factory=list)  # every configuration, weighed (the terminal's rows)

    @property
    def shown(self) -> bool:
        return bool(self.classes or self.obsolete)


# What a budget item needs, when the run has no value for it.
WHY_UNKNOWN = {
    "ram_kb": "this run measured no heap: a device plan with `memory = true` in [device], or a host plan with "
              "metrics = [\"heap\", \"stack\"]",
    "flash_kb": "flash is known from a device's firmware image only (a [device] plan)",
    "ms": "a device's count becomes ms only through a model of the part: `--profile` (count × CPI ÷ f) or a "
          "board's cycle model",
}


def classes_of(configs: dict[int, Config]) -> list[frozenset[int]]:
    """Configuration ids by key-exchange class (those with a class): the groups whose
    cheapest answers a report keeps the values of (pipeline.shown_answers)."""
    policy, out = load_policy(), {}
    for cid, c in configs.items():
        found = _class(policy, c)
        if found is not None:
            out.setdefault(found, set()).add(cid)
    return [frozenset(v) for v in out.values()]


def _class(policy: Policy, c: Config) -> tuple[int, str] | None:
    protocol = c.protocol or ("dtls" if c.transport == "udp" else None)
    return policy.key_exchange_class(suite_fields(c), c.grp, protocol)


@dataclass(frozen=True)
class Inputs:
    """What the recommendations are computed from (an analysis, taken apart)."""

    configs: dict[int, Config]
    labels: dict[int, str]
    find: Callable[..., object]  # Results.find
    answers: Answers
    no_data: dict[int, str]
    unit: Unit
    seed: int
    device: DeviceResults | None = None
    host_memory: dict[tuple[str, str], int] | None = None  # (config key, peer) -> heap peak + stack (host twins)


def inputs_of(analysis, host_memory: dict[tuple[str, str], int] | None = None) -> Inputs:  # (Analysis)
    """An analysis as the recommendations read it."""
    res = analysis.results
    return Inputs(res.configs, res.config_labels, res.find, analysis.samples.answers, res.no_data, analysis.ds.unit,
                  res.context.seed, res.device, host_memory)


def recommend(inp: Inputs, role: str = "client", budget: Budget = Budget(),
              device_time: DeviceTime | None = None) -> Recommendations:
    """The recommendations per class for the device as `role` (client: the initiator)."""
    policy, q = load_policy(), ROLES[role]
    memory, ram_what = _memory(inp, role)
    flash, flash_what = _flash(inp)
    candidates = [_candidate(inp, cid, policy, q, role, memory, flash, device_time)
                  for cid in sorted(inp.configs, key=inp.labels.__getitem__) if inp.configs[cid].experiment is None]
    unknown = [f"{key}: {WHY_UNKNOWN[key]}" for key in BUDGET_KEYS if getattr(budget, key) is not None
               and all(getattr(c, _FIELD[key]) is None for c in candidates)]
    candidates = [_judged(c, budget) for c in candidates]
    classes: dict[tuple[int, str], list[Candidate]] = {}
    for c in candidates:
        if c.cls is not None and c.status.name != OBSOLETE:
            classes.setdefault((c.order, c.cls), []).append(c)
    answers = [_answer(cls, members, inp, q) for (_, cls), members in sorted(classes.items())]
    obsolete = [c for c in candidates if c.cls is None or c.status.name == OBSOLETE]
    return Recommendations(role, inp.unit, budget, answers, obsolete, policy, device_time, unknown, ram_what,
                           flash_what, candidates)


_FIELD = {"ram_kb": "ram", "flash_kb": "flash", "ms": "ms"}


def _candidate(inp: Inputs, cid: int, policy: Policy, q: Question, role: str, memory: dict, flash: int | None,
               device_time: DeviceTime | None) -> Candidate:
    c = inp.configs[cid]
    other = "server" if role == "client" else "client"
    cost, other_cost = (_summary(inp.find(cid, "handshake_processing", p)) for p in (role, other))
    values = inp.answers.values[q].get(cid, (np.empty(0),))[0]
    wire = [_summary(inp.find(cid, "handshake_bytes", p)) for p in ("client", "server")]
    wire_bytes = sum(s.median for s in wire) if all(s is not None and s.n for s in wire) else None
    if cost is None or not cost.n:
        ms = None
    elif inp.unit.is_time:
        ms = cost.median / 1e6
    else:
        ms = device_time.ms(cost.median, cid, role) if device_time else None
    energy = device_time.energy_j(cid, role) if device_time else None
    order, cls = _class(policy, c) or (-1, None)
    return Candidate(cid, inp.labels[cid], cls, order, policy.status(suite_fields(c)), cost, other_cost,
                     exact(values, inp.unit) if len(values) else bool(cost and cost.n and cost.min == cost.max),
                     memory.get(cid), flash, wire_bytes, ms, energy * 1e3 if energy is not None else None)


def _summary(row) -> Summary | None:
    return row.summary if row is not None else None


def _judged(c: Candidate, budget: Budget) -> Candidate:
    over = []
    if budget.ram_kb is not None and c.ram is not None and c.ram > budget.ram_kb * KIB:
        over.append(f"RAM {c.ram / KIB:,.1f} KiB > {budget.ram_kb:g}")
    if budget.flash_kb is not None and c.flash is not None and c.flash > budget.flash_kb * KIB:
        over.append(f"flash {c.flash / KIB:,.0f} KiB > {budget.flash_kb:g}")
    if budget.ms is not None and c.ms is not None and c.ms > budget.ms:
        over.append(f"{c.ms:,.1f} ms > {budget.ms:g}")
    return Candidate(**{**vars(c), "over": tuple(over)}) if over else c


def _answer(cls: str, members: list[Candidate], inp: Inputs, q: Question) -> ClassAnswer:
    with_data = [c for c in members if c.cost is not None and c.cost.n and c.config_id in inp.answers.medians[q]]
    fitting = [c for c in with_data if c.fits]
    fitting.sort(key=lambda c: (c.status.rank, inp.answers.medians[q][c.config_id], c.label))
    no_data = len(members) - len(with_data)
    over = [c for c in with_data if not c.fits]
    if not fitting:
        return ClassAnswer(cls, None, [], None, None, len(with_data), [], over, no_data)
    pick, rest = fitting[0], [c for c in fitting[1:] if c.status.name == fitting[0].status.name][:RUNNERS_UP]
    median = inp.answers.medians[q]
    cheaper = [c for c in fitting if c.status.rank > pick.status.rank and median[c.config_id] < median[pick.config_id]]
    held = inp.answers.values[q]
    tied, ratio, runner_up = [], None, None
    for c in rest:
        if pick.config_id not in held or c.config_id not in held:
            break  # values not held (beyond the report's shown configurations): no judgement made
        r = judge(held[pick.config_id][0], held[c.config_id][0], inp.unit,
                  rng_for(inp.seed, "recommend", q.title, pick.config_id, c.config_id))
        ratio = ratio or r
        if r.significant:
            runner_up = None if tied else c
            break
        tied.append(c)
    return ClassAnswer(cls, pick, tied, runner_up, ratio, len(with_data), cheaper[:RUNNERS_UP], over, no_data)


def _memory(inp: Inputs, role: str) -> tuple[dict[int, int], str]:
    """config id -> RAM of the role's peer in bytes, and what that is."""
    fp = inp.device.footprint if inp.device else None
    if fp is not None:
        shared = fp.shared.most if fp.shared else 0
        library = library_bytes(inp.device)
        by_key = {host_key(c.key): cid for cid, c in inp.configs.items()}
        out = {by_key[row.host_key]: peer_needs(row.values, library, shared)[0]
               for row in fp.rows if row.peer == role and row.host_key in by_key}
        return out, (f"the library's static RAM + the {role}'s heap peak + stack high-water + the heap neither peer "
                     "owns (credentials, DRBG: an upper bound), from the link map and the memory image")
    if inp.host_memory:
        out = {cid: inp.host_memory[(c.key, role)] for cid, c in inp.configs.items() if (c.key, role) in inp.host_memory}
        return out, f"the {role}'s heap peak + stack peak on this host (metrics heap, stack)"
    return {}, ""


def _flash(inp: Inputs) -> tuple[int | None, str]:
    """The flash of the image that ran the counts, and what it holds."""
    images = [im for im in (inp.device.images if inp.device else []) if im.variant == "counting"]
    if not images:
        return None, ""
    library = library_bytes(inp.device)
    if library.get("flash"):
        return library["flash"], "the library's own flash (the link map's: the harness and C runtime apart)"
    return images[0].flash, "the whole firmware image (library, agent and its buffers' code): an upper bound"
