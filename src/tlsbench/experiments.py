# SPDX-License-Identifier: Apache-2.0
"""Experiments in plans: a library's crypto primitives and user experiments (the public
experiment API, agent/include/tlsbench/experiment.h), run through the same controller,
store and report as the handshakes.

An agent lists its experiments in HELLO (`experiments`, primitives first, then user
experiments); a RUN names one by its 1-based position there. A plan's `[experiments]`
section selects among them by name, like `suites` among suites, and every selected
experiment becomes one configuration per payload size: library × experiment × size."""
from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import math
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence

import tomli_w

from tlsbench import spec as specmod
from tlsbench.plan import ALL, ExperimentSelection, LoadedPlan, PlanError, agents_phrase, parse
from tlsbench.store.sqlite import ConfigRow

if TYPE_CHECKING:
    from tlsbench.precision import Precision

PRIMITIVES_PLAN = "primitives.toml"  # package data: src/tlsbench/plans/ (`tlsbench primitives`)
UNSIZED = 0  # the RUN size of an experiment that takes none
EXPERIMENT_RECORD_SIZE = 1  # an experiment RUN's record size field: ignored by the agent, 1 by convention


@dataclass(frozen=True)
class ExperimentInfo:
    """One entry of an agent's HELLO `experiments`."""

    id: int  # 1-based position in the list: what RUN offset 66 carries
    name: str  # e.g. "sha256"; the same in every library
    description: str
    groups: tuple[str, ...]  # group names; a USER_GROUP span's START value indexes this
    sizes: tuple[int, ...]  # default payload sizes (bytes); () = the experiment takes no size
    source: str  # "primitive" (the library's) or "user"

    @property
    def max_size(self) -> int:
        """The largest payload the agent accepts (any size from 1 to it)."""
        return max(self.sizes, default=UNSIZED)

    @classmethod
    def from_hello(cls, entry: Mapping[str, Any]) -> "ExperimentInfo":
        return cls(int(entry["id"]), str(entry["name"]), str(entry.get("description", "")),
                   tuple(entry.get("groups", ())), tuple(int(s) for s in entry.get("sizes", ())),
                   str(entry.get("source", "")))


def offered(hello: Mapping[str, Any]) -> list[ExperimentInfo]:
    """The experiments an agent's HELLO lists (none for an agent built before the API)."""
    return [ExperimentInfo.from_hello(e) for e in hello.get("experiments", [])]


@dataclass(frozen=True)
class ExperimentConfig:
    """One experiment configuration: its `config` row and the experiment id its RUN names."""

    row: ConfigRow
    experiment_id: int  # HELLO position in this library's agent


@dataclass
class ExperimentResolution:
    """What a plan's [experiments] means against the agents' HELLOs."""

    configs: list[ExperimentConfig] = field(default_factory=list)
    not_applicable: Counter[str] = field(default_factory=Counter)  # sizes an experiment cannot take


def config_key(library: str, experiment: str, size: int) -> str:
    """Stable key of an experiment configuration (handshake keys have 8 or more fields)."""
    return f"{library}|experiment|{experiment}|{size}"


# ---------------------------------------------------------------------- selection
def _matches(pattern: str, exp: ExperimentInfo) -> bool:
    return pattern.lower() == ALL or fnmatch.fnmatchcase(exp.name, pattern.lower())


def _selected(sel: ExperimentSelection, exps: Sequence[ExperimentInfo]) -> list[ExperimentInfo]:
    return [e for e in exps
            if any(_matches(p, e) for p in sel.include) and not any(_matches(p, e) for p in sel.exclude)
            and (not sel.source or e.source in sel.source)]


def _unmatched(key: str, patterns: Sequence[str], pooled: Sequence[ExperimentInfo], where: str) -> list[str]:
    names = sorted({e.name for e in pooled})
    problems = []
    for pattern in patterns:
        if not any(_matches(pattern, e) for e in pooled):
            close = difflib.get_close_matches(pattern.lower(), names, n=3, cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            problems.append(f"experiments.{key}: {pattern!r} matches no experiment of {where}{hint} "
                            f"(they have: {', '.join(names) or 'none'}; `tlsbench experiments --library NAME` lists them)")
    return problems


def select_per_library(loaded: LoadedPlan, offered_by_library: Mapping[str, Sequence[ExperimentInfo]]
                       ) -> dict[str, list[ExperimentInfo]]:
    """Per library, the experiments the plan selects, in the agent's order. As for suites,
    every include/exclude entry must match an experiment of at least one library (names are
    the same in every library; a library may lack some), and every library must keep one."""
    sel = loaded.plan.experiments
    assert sel is not None
    pooled = [e for exps in offered_by_library.values() for e in exps]
    where = agents_phrase(offered_by_library)
    problems = _unmatched("include", sel.include, pooled, where) + _unmatched("exclude", sel.exclude, pooled, where)
    if problems:
        raise PlanError(loaded.source, problems)
    chosen = {library: _selected(sel, exps) for library, exps in offered_by_library.items()}
    empty = [library for library, exps in chosen.items() if not exps]
    if empty:
        raise PlanError(loaded.source, [
            f"experiments: the selection is empty for library {library} (include minus exclude"
            f"{', of source ' + '/'.join(sel.source) if sel.source else ''} leaves none of its "
            f"{len(offered_by_library[library])} experiments); widen it or remove {library} from libraries "
            f"(`tlsbench experiments --library {library}` lists them)" for library in empty])
    return chosen


# ---------------------------------------------------------------------- configurations
def _row(loaded: LoadedPlan, library: str, exp: ExperimentInfo, size: int) -> ConfigRow:
    """The `config` row of one cell: the RUN fields an experiment does not use at their
    neutral values (spec value 0: default group, auto credential, memory, no direction)."""
    s = specmod.load()
    no_suite = dict.fromkeys(("key_exchange", "authentication", "cipher", "mac", "min_version", "max_version"), "")
    return ConfigRow(key=config_key(library, exp.name, size), library=library, suite_id=0, suite_name=exp.name,
                     **no_suite, grp=s.groups.name(0), credential=s.credentials.name(0),
                     transport=s.transports.name(0), direction=s.directions.name(0), total_bytes=size,
                     record_size=EXPERIMENT_RECORD_SIZE, repetitions=loaded.plan.repetitions,
                     experiment=exp.name, experiment_groups=json.dumps(list(exp.groups)),
                     experiment_source=exp.source, experiment_description=exp.description)


def _sizes(sel: ExperimentSelection, exp: ExperimentInfo) -> list[int]:
    """The plan's sizes (else the experiment's own) for a sized experiment; UNSIZED otherwise."""
    if not exp.sizes:
        return [UNSIZED]
    return list(sel.sizes) if sel.sizes else list(exp.sizes)


def resolve(loaded: LoadedPlan, hellos: Mapping[str, Mapping[str, Any]]) -> ExperimentResolution:
    """The plan's experiment matrix (library × experiment × size) against each library's
    HELLO; sizes above what an experiment takes are counted, not run."""
    out = ExperimentResolution()
    if loaded.plan.experiments is None:
        return out
    sel = loaded.plan.experiments
    several = len(hellos) > 1
    chosen = select_per_library(loaded, {library: offered(hello) for library, hello in hellos.items()})
    for library, exps in chosen.items():
        prefix = f"{library}: " if several else ""
        for exp in exps:
            for size in _sizes(sel, exp):
                if size > exp.max_size:
                    out.not_applicable[f"{prefix}size {size} is above the largest {exp.name} takes "
                                       f"({exp.max_size})"] += 1
                    continue
                out.configs.append(ExperimentConfig(_row(loaded, library, exp, size), exp.id))
    return out


# ---------------------------------------------------------------------- precision
def measure_precision(store: Path, seed: int, only: Collection[str] | None = None) -> dict[str, "Precision"]:
    """Configuration key -> how precisely it is known: the worst of its groups' 95% CI
    half-widths of the median (% of it), as precision.measure does for a handshake's peers."""
    from tlsbench.analysis.primitives import analyze_store
    from tlsbench.precision import MIN_SAMPLE, Precision  # scipy: loaded only when a run needs it

    found = analyze_store(store, seed)
    if found is None:
        return {}
    worst: dict[int, float] = {}
    for r in found.results:
        s = r.summary
        known = s.n >= MIN_SAMPLE and math.isfinite(s.median_ci_pct)
        worst[r.config_id] = max(worst.get(r.config_id, 0.0), s.median_ci_pct if known else math.inf)
    keys = {c.config_id: config_key(c.library, c.experiment, c.size) for c in found.counts}
    return {keys[c.config_id]: Precision(worst.get(c.config_id, math.inf), c.used, c.stored)
            for c in found.counts if only is None or keys[c.config_id] in only}


# ---------------------------------------------------------------------- `tlsbench primitives`
@dataclass(frozen=True)
class PrimitivesOverrides:
    """What `tlsbench primitives` options change in the embedded plan."""

    libraries: tuple[str, ...] = ()
    repetitions: int | None = None  # exactly this many per configuration (no [precision] extension)
    experiments: tuple[str, ...] = ()  # names or fnmatch patterns (include)
    sizes: tuple[int, ...] = ()

    def name_suffix(self) -> list[str]:
        """Readable parts for libraries and repetitions; a short digest for a subset (patterns
        may hold characters a name may not)."""
        subset = json.dumps([self.experiments, self.sizes])
        return ([*self.libraries] + ([f"{self.repetitions}reps"] if self.repetitions else [])
                + ([f"subset-{hashlib.sha256(subset.encode()).hexdigest()[:6]}"]
                   if self.experiments or self.sizes else []))


def primitives_plan(overrides: PrimitivesOverrides = PrimitivesOverrides()) -> LoadedPlan:
    """The embedded primitives plan, with the command line's overrides. An override also
    renames the experiment (primitives-<libraries>-<N>reps[-subset-<digest>]), so a run with
    other choices gets its own folder instead of being refused as another plan."""
    text = resources.files("tlsbench").joinpath("plans", PRIMITIVES_PLAN).read_text()
    if overrides == PrimitivesOverrides():
        return parse(text, f"{PRIMITIVES_PLAN} (embedded)")
    raw = tomllib.loads(text)
    if overrides.libraries:
        raw["libraries"] = list(overrides.libraries)
    if overrides.repetitions:  # exactly that many: no precision extension
        raw["repetitions"] = overrides.repetitions
        raw["rounds"] = min(raw.get("rounds", overrides.repetitions), overrides.repetitions)
        raw.pop("precision", None)
    if overrides.experiments:
        raw["experiments"]["include"] = list(overrides.experiments)
    if overrides.sizes:
        raw["experiments"]["sizes"] = list(overrides.sizes)
    suffix = overrides.name_suffix()
    raw["name"] = "-".join([raw["name"], *suffix])
    return parse(tomli_w.dumps(raw), f"{PRIMITIVES_PLAN} (embedded, with {', '.join(suffix)})")
