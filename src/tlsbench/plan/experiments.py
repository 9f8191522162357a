# SPDX-License-Identifier: Apache-2.0
"""Experiments in plans: a library's crypto primitives and user experiments (the public
experiment API, agent/include/tlsbench/experiment.h), run through the same controller,
store and report as the handshakes.

An agent lists its experiments in HELLO (`experiments`, primitives first, then user
experiments); a RUN names one by its 1-based position there. A plan's `[experiments]`
section selects among them by name, like `suites` among suites, and every selected
experiment becomes one configuration per payload size: library × experiment × size."""
from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping, Sequence

import tomli_w

from tlsbench.core import spec as specmod
from tlsbench.plan.configs import Configuration, Resolution
from tlsbench.plan.libraries import agent_name
from tlsbench.plan.model import ALL, ExperimentSelection, LoadedPlan, parse, validate
from tlsbench.plan.select import Catalog, select
from tlsbench.schema import ConfigRow

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


Hello = Mapping[str, Any]  # an agent's HELLO (docs/protocol.md)


def offered(hello: Hello) -> list[ExperimentInfo]:
    """The experiments an agent's HELLO lists (none for an agent built before the API)."""
    return [ExperimentInfo.from_hello(e) for e in hello.get("experiments", [])]


def config_key(library: str, experiment: str, size: int) -> str:
    """Stable key of an experiment configuration (handshake keys have 8 or more fields); the
    library by its agent's name, as in handshake keys."""
    return f"{agent_name(library)}|experiment|{experiment}|{size}"


# ---------------------------------------------------------------------- selection
def _matches(pattern: str, exp: ExperimentInfo) -> bool:
    return pattern.lower() == ALL or fnmatch.fnmatchcase(exp.name, pattern.lower())


def _catalog(sel: ExperimentSelection) -> Catalog[ExperimentInfo, str]:
    source = f", of source {'/'.join(sel.source)}" if sel.source else ""
    return Catalog(
        "experiments", _matches, lambda exp: exp.name, lambda pattern: pattern.lower(),
        lambda where, names: f"experiment of {where} (they have: {names or 'none'}; "
                             "`tlsbench experiments --library NAME` lists them)",
        lambda library, offered: f"(include minus exclude{source} leaves none of its {offered} experiments); "
                                 f"widen it or remove {library} from libraries (`tlsbench experiments --library "
                                 f"{library}` lists them)")


def select_per_library(loaded: LoadedPlan, offered_by_library: Mapping[str, Sequence[ExperimentInfo]]
                       ) -> dict[str, list[ExperimentInfo]]:
    """Per library, the experiments the plan selects, in the agent's order (plan/select.py;
    names are the same in every library, a library may lack some)."""
    sel = loaded.plan.experiments
    assert sel is not None
    return select(_catalog(sel), sel.include, sel.exclude, offered_by_library, loaded.source,
                  keep=lambda exp: not sel.source or exp.source in sel.source)


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


def resolve(loaded: LoadedPlan, hellos: Mapping[str, Hello]) -> Resolution:
    """The plan's experiment matrix (library × experiment × size) against each library's
    HELLO; sizes above what an experiment takes are counted, not run. An experiment's RUN
    has no connection: suite, group, credential, direction and transport at their value 0
    (none, memory), the payload size in total_bytes."""
    out = Resolution()
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
                    out.skip(config_key(library, exp.name, size),
                             f"{prefix}size {size} is above the largest {exp.name} takes ({exp.max_size})")
                    continue
                out.configs.append(Configuration(_row(loaded, library, exp, size), 0, 0, 0, 0, 0, 0,
                                                 experiment_id=exp.id))
    return out


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
        return ([agent_name(lib) for lib in self.libraries] + ([f"{self.repetitions}reps"] if self.repetitions else [])
                + ([f"subset-{hashlib.sha256(subset.encode()).hexdigest()[:6]}"]
                   if self.experiments or self.sizes else []))


def primitives_plan(overrides: PrimitivesOverrides = PrimitivesOverrides()) -> LoadedPlan:
    """The embedded primitives plan, with the command line's overrides applied to its
    validated model (and validated again: an override is checked like a plan's field). An
    override also renames the experiment (primitives-<libraries>-<N>reps[-subset-<digest>]),
    so a run with other choices gets its own folder instead of being refused as another plan."""
    text = resources.files("tlsbench").joinpath("plans", PRIMITIVES_PLAN).read_text()
    loaded = parse(text, f"{PRIMITIVES_PLAN} (embedded)")
    if overrides == PrimitivesOverrides():
        return loaded
    plan = loaded.plan
    assert plan.experiments is not None
    changes: dict[str, Any] = {}
    if overrides.libraries:
        changes["libraries"] = list(overrides.libraries)
    if overrides.repetitions:  # exactly that many: no precision extension
        changes.update(repetitions=overrides.repetitions, rounds=min(plan.rounds, overrides.repetitions),
                       precision=None)
    selection = {**({"include": list(overrides.experiments)} if overrides.experiments else {}),
                 **({"sizes": list(overrides.sizes)} if overrides.sizes else {})}
    if selection:
        changes["experiments"] = plan.experiments.model_copy(update=selection)
    suffix = overrides.name_suffix()
    changes["name"] = "-".join([plan.name, *suffix])
    source = f"{PRIMITIVES_PLAN} (embedded, with {', '.join(suffix)})"
    changed = validate(plan.model_copy(update=changes).model_dump(), source)
    return LoadedPlan(changed, tomli_w.dumps(changed.resolved()), source)  # the text stored is the plan that runs
