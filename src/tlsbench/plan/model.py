# SPDX-License-Identifier: Apache-2.0
"""Experiment plans: TOML files validated with pydantic (format: docs/plan-format.md).

Errors name the field (dotted path), the bad value and what is allowed. Which suites and
experiments a plan selects is only known once the agents have listed theirs (plan/select.py)."""
from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, Sequence

from pydantic import (AfterValidator, BeforeValidator, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from tlsbench.core import spec as specmod
from tlsbench.core.errors import UserError
from tlsbench.plan.device import DEVICE_REPETITIONS, DEVICE_WARMUP, DevicePlan
from tlsbench.plan.libraries import LIBRARIES, LIBRARY_PATTERN, agent_name, canonical
from tlsbench.plan.network import NetworkPlan
from tlsbench.core.validation import Strict, UserPath, dotted, no_duplicates, problem
from tlsbench.core.validation import as_list as _as_list
from tlsbench.core.validation import spec_name as _spec_name

DEFAULT_PLAN = "device.toml"  # package data: src/tlsbench/plans/ (`make run`; this host's times: `run host`)
RENAMED_PLANS = {"default": "host"}  # old embedded name -> new: still loaded, with a note
MAX_RECORD_SIZE = 16384  # TLS plaintext limit (RUN record size 1..16384)
U32 = 2**32 - 1
DEFAULT_ROUNDS = 10
ALL = "all"
PLAN_ITSELF = "(plan)"  # where an error about the whole plan points
# Views a plan's `metrics` may add that are not spec metrics carried by records: "sched", the
# scheduler's view of the time repetitions (run/tracefs.py).
HOST_VIEWS = ("sched",)


class PlanError(UserError, ValueError):
    """A plan is invalid; `problems` holds one line per mistake."""

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"plan {source} is invalid:\n" + "\n".join(f"  - {p}" for p in self.problems))


def _zero(table: str) -> str:
    """The name of a spec table's value 0: its neutral default (default group, auto
    credential, no data, the in-memory transport)."""
    return getattr(specmod.load(), table).name(0)


GroupName = Annotated[str, AfterValidator(_spec_name("groups"))]
CredentialName = Annotated[str, AfterValidator(_spec_name("credentials"))]
DirectionName = Annotated[str, AfterValidator(_spec_name("directions"))]
TransportName = Annotated[str, AfterValidator(_spec_name("transports"))]
OptionName = Annotated[str, AfterValidator(_spec_name("options"))]
TIME_METRIC = "time"
METRIC_REPETITIONS = 20  # counts are exact and memory deterministic up to a few hundred bytes


def _metric_name(value: str) -> str:
    """A metric a plan can choose (spec [metric.*] `plan` names, and the host's views)."""
    choices = [*specmod.load().metric_choices, *HOST_VIEWS]
    if value not in choices:
        raise ValueError(f"{value!r} is not a metric; allowed: {', '.join(choices)}")
    return value


MetricName = Annotated[str, AfterValidator(_metric_name)]
SuiteRef = Annotated[str | int, Field(union_mode="left_to_right")]


class SuiteSelection(Strict):
    """Which of the agent's suites to run: include minus exclude, then metadata filters."""

    include: Annotated[list[SuiteRef], BeforeValidator(_as_list), Field(min_length=1)] = [ALL]
    exclude: Annotated[list[SuiteRef], BeforeValidator(_as_list)] = []
    key_exchange: Annotated[list[str], BeforeValidator(_as_list)] = []
    authentication: Annotated[list[str], BeforeValidator(_as_list)] = []
    cipher: Annotated[list[str], BeforeValidator(_as_list)] = []
    mac: Annotated[list[str], BeforeValidator(_as_list)] = []
    min_version: Annotated[list[str], BeforeValidator(_as_list)] = []
    max_version: Annotated[list[str], BeforeValidator(_as_list)] = []
    protocol: Annotated[list[str], BeforeValidator(_as_list)] = []  # the version run: TLS1.2, TLS1.3


class Payload(Strict):
    """Application data of each repetition, after the handshake."""

    total_bytes: Annotated[int, Field(ge=0, le=U32)] = 0  # per direction
    record_size: Annotated[int, Field(ge=1, le=MAX_RECORD_SIZE)] = 1024  # plaintext bytes per write
    direction: DirectionName = _zero("directions")

    @model_validator(mode="after")
    def _consistent(self) -> "Payload":
        moves = self.total_bytes > 0
        if moves != (self.direction != _zero("directions")):
            raise ValueError(f"total_bytes = {self.total_bytes} and direction = {self.direction!r} disagree: "
                             "data needs a direction and a direction needs total_bytes > 0")
        return self


DEFAULT_TIME_BUDGET_S = 600.0  # a run never keeps adding precision rounds for hours unasked


class PrecisionTarget(Strict):
    """Adaptive repetitions: after the planned rounds, configurations whose median handshake
    processing (either peer) is not yet known to `target_ci_percent` get more rounds."""

    target_ci_percent: Annotated[float, Field(gt=0, le=100)] = 1.0  # 95% CI half-width, % of the median
    max_repetitions: Annotated[int, Field(ge=1, le=10_000_000)]  # per configuration, stored ones included
    # Seconds since the run started after which no precision round starts, and the one under way
    # stops after its current batch (every configuration keeps whole rounds); planned rounds
    # always run. How long to try, not what is measured: left out of the plan's hash.
    time_budget_s: Annotated[float, Field(gt=0)] = DEFAULT_TIME_BUDGET_S


# Fields of the handshake matrix: a plan of experiments only (no `suites`) has none of them.
HANDSHAKE_FIELDS = ("groups", "credentials", "payload", "transport", "options", "network", "metrics", "metric_repetitions")
EXPERIMENT_SOURCES = ("primitive", "user")  # HELLO experiments[].source: the library's, or linked in by a user


class ExperimentSelection(Strict):
    """Which of the agents' experiments to run (HELLO `experiments`): primitives and user
    experiments, each over payload sizes (docs/plan-format.md, `[experiments]`)."""

    include: Annotated[list[str], BeforeValidator(_as_list), Field(min_length=1)] = [ALL]  # names, fnmatch patterns
    exclude: Annotated[list[str], BeforeValidator(_as_list)] = []
    source: Annotated[list[Literal[EXPERIMENT_SOURCES]], BeforeValidator(_as_list)] = []  # [] = both
    # Payload sizes (bytes) of the experiments that take one; absent: each experiment's own list.
    sizes: Annotated[list[Annotated[int, Field(ge=1, le=U32)]], BeforeValidator(_as_list),
                     Field(min_length=1)] | None = None

    @field_validator("sizes")
    @classmethod
    def _distinct_sizes(cls, sizes: list[int] | None) -> list[int] | None:
        if sizes and len(set(sizes)) < len(sizes):
            raise ValueError(f"listed twice: {', '.join(str(s) for s in sorted({s for s in sizes if sizes.count(s) > 1}))}")
        return sizes


def _option_sets(value: Any) -> Any:
    """`options = ["A", "B"]`: one set of RUN options for every configuration; `options = [[],
    ["RESUME"]]`: a sweep, each set a configuration of its own."""
    value = _as_list(value)
    if not isinstance(value, list) or not any(isinstance(v, list) for v in value):
        return [value]
    if not all(isinstance(v, list) for v in value):
        raise ValueError("mixes names and lists: write a list of names (the options of every configuration) or "
                         "a list of lists (a sweep: each list one configuration's options, [] for none)")
    return value


def _distinct_sets(sets: list[list[str]]) -> list[list[str]]:
    for i, options in enumerate(sets):
        no_duplicates(options)
        if frozenset(options) in map(frozenset, sets[:i]):
            raise ValueError(f"the set {options} is listed twice (the order of names does not matter)")
    return sets


def _suites_shorthand(value: Any) -> Any:
    """`suites = "all"` or `suites = [...]` are shorthands for `[suites] include = ...`."""
    return {"include": _as_list(value)} if isinstance(value, (str, int, list)) else value


class Plan(Strict):
    """A whole experiment; see docs/plan-format.md for every field."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)]
    libraries: Annotated[list[Annotated[str, Field(pattern=LIBRARY_PATTERN, max_length=100)]],
                         BeforeValidator(_as_list), Field(min_length=1)] = [LIBRARIES[0]]
    # None: no handshakes (a plan with [experiments] and no `suites` key)
    suites: Annotated[SuiteSelection | None, BeforeValidator(_suites_shorthand)] = SuiteSelection()
    groups: Annotated[list[GroupName], BeforeValidator(_as_list), Field(min_length=1)] = [_zero("groups")]
    credentials: Annotated[list[CredentialName], BeforeValidator(_as_list), Field(min_length=1)] = [_zero("credentials")]
    repetitions: Annotated[int, Field(ge=1, le=10_000_000)]
    warmup: Annotated[int, Field(ge=0, le=U32)] = 2
    rounds: Annotated[int, Field(ge=1)] = DEFAULT_ROUNDS
    payload: Annotated[list[Payload], BeforeValidator(_as_list), Field(min_length=1)] = [Payload()]
    transport: TransportName = _zero("transports")
    # spec [options] (RUN bits): one set for every configuration, or a sweep of sets (_option_sets)
    options: Annotated[list[list[OptionName]], BeforeValidator(_option_sets), AfterValidator(_distinct_sets),
                       Field(min_length=1)] = [[]]
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 1
    output: UserPath = "results"
    precision: PrecisionTarget | None = None  # absent: exactly `repetitions` per configuration
    network: NetworkPlan | None = None  # absent: both peers in one agent, in memory
    # absent: handshakes only; `experiments = "all"` / `[...]` is a shorthand for include, as for suites
    experiments: Annotated[ExperimentSelection | None, BeforeValidator(_suites_shorthand)] = None
    device: DevicePlan | None = None  # absent: the agents run on the host (plan/device.py)
    # What every handshake step carries besides time (docs/metrics.md): each metric beyond
    # time comes from twin configurations of its own, metric_repetitions each; "sched" adds the
    # scheduler's view of the time repetitions themselves (run/tracefs.py).
    metrics: Annotated[list[MetricName], BeforeValidator(_as_list), Field(min_length=1)] = [TIME_METRIC]
    metric_repetitions: Annotated[int, Field(ge=1, le=1_000_000)] = METRIC_REPETITIONS
    # absent: the default placement (run/placement.py); else the CPUs the agents run on
    cpus: Annotated[list[Annotated[int, Field(ge=0, le=4095)]], BeforeValidator(_as_list),
                    Field(min_length=1)] | None = None

    @field_validator("metrics")
    @classmethod
    def _time_always(cls, value: list[str]) -> list[str]:
        """Time is always measured: the other metrics come on top (docs/metrics.md)."""
        return [TIME_METRIC] + [m for m in no_duplicates(value) if m != TIME_METRIC]

    @field_validator("cpus")
    @classmethod
    def _no_duplicates_when_given(cls, value: list[Any] | None) -> list[Any] | None:
        return None if value is None else no_duplicates(value)

    def measures(self, metric: str) -> bool:
        """Whether the plan asks for a metric (time always)."""
        return metric in self.metrics

    @field_validator("libraries")
    @classmethod
    def _canonical_libraries(cls, value: list[str]) -> list[str]:
        """openssl-3.5 and openssl@3.5 are one library: the canonical spelling is kept, and two
        spellings of one are a duplicate (plan/libraries.py)."""
        names = [canonical(v) for v in value]
        twice = {n: [repr(v) for v, m in zip(value, names) if m == n] for n in names if names.count(n) > 1}
        if twice:
            raise ValueError("listed twice: " + ", ".join(f"{n} (as {' and '.join(vs)})" for n, vs in twice.items()))
        return names

    @field_validator("groups", "credentials")
    @classmethod
    def _no_duplicates(cls, value: list[str]) -> list[str]:
        return no_duplicates(value)

    @model_validator(mode="before")
    @classmethod
    def _library_shorthand(cls, raw: Any) -> Any:
        """`library = "x"` is a shorthand for `libraries = ["x"]`."""
        if not isinstance(raw, dict) or "library" not in raw:
            return raw
        if "libraries" in raw:
            raise ValueError("library and libraries are both given: keep libraries (library = \"x\" "
                             "is a shorthand for libraries = [\"x\"])")
        rest = {k: v for k, v in raw.items() if k != "library"}
        return {**rest, "libraries": raw["library"]}

    @model_validator(mode="before")
    @classmethod
    def _experiments_without_handshakes(cls, raw: Any) -> Any:
        """A plan with [experiments] measures handshakes only when it names `suites` too;
        without them, the handshake fields would be silently unused: an error."""
        if not (isinstance(raw, dict) and "experiments" in raw and "suites" not in raw):
            return raw
        unused = [f for f in HANDSHAKE_FIELDS if f in raw]
        if unused:
            raise ValueError(f"{', '.join(unused)} describe handshakes, and this plan measures none: "
                             "a plan with an experiments section runs handshakes only when it has `suites` too")
        return {**raw, "suites": None}

    @model_validator(mode="before")
    @classmethod
    def _default_rounds(cls, raw: Any) -> Any:
        """rounds defaults to DEFAULT_ROUNDS, or to repetitions when there are fewer. A device
        plan's repetitions and warm-up default to a few (plan/device.py says why)."""
        if isinstance(raw, dict) and isinstance(raw.get("device"), dict):
            raw = {"repetitions": DEVICE_REPETITIONS, "warmup": DEVICE_WARMUP, **raw}
        if isinstance(raw, dict) and "rounds" not in raw and isinstance(raw.get("repetitions"), int):
            return {**raw, "rounds": max(1, min(DEFAULT_ROUNDS, raw["repetitions"]))}
        return raw

    @model_validator(mode="before")
    @classmethod
    def _device_runs_handshakes_in_memory(cls, raw: Any) -> Any:
        """Both peers run on the device, over its memory transport: a [network] (one peer per
        process) does not apply to it yet. [experiments] run on the device's firmware too."""
        if not (isinstance(raw, dict) and raw.get("device") is not None):
            return raw
        if raw.get("network") is not None:
            raise ValueError("network cannot be combined with device: the device runs both peers of each "
                             "handshake over its memory transport; measure a link on the host in a plan of its own")
        if raw.get("transport", "memory") != "memory":
            raise ValueError(f"transport = {raw['transport']!r} cannot be combined with device: both peers run on "
                             "the device over its memory transport")
        return raw

    @field_validator("precision")
    @classmethod
    def _room_to_grow(cls, target: PrecisionTarget | None, info: ValidationInfo) -> PrecisionTarget | None:
        repetitions = info.data.get("repetitions")
        if target and repetitions is not None and target.max_repetitions < repetitions:
            raise ValueError(f"max_repetitions ({target.max_repetitions}) is below repetitions ({repetitions})")
        return target

    @field_validator("network")
    @classmethod
    def _one_transport_setting(cls, network: NetworkPlan | None, info: ValidationInfo) -> NetworkPlan | None:
        transport = info.data.get("transport")
        if transport is not None and transport != _zero("transports"):
            raise ValueError(f"transport = {transport!r}: two-process runs are described by a [network] section "
                             "(transports = [\"tcp\", \"udp\"]); remove the top-level transport")
        return network

    @field_validator("rounds")
    @classmethod
    def _rounds_fit(cls, rounds: int, info: ValidationInfo) -> int:
        repetitions = info.data.get("repetitions")
        if repetitions is not None and rounds > repetitions:
            raise ValueError(f"more rounds than repetitions ({repetitions}): "
                             "every round needs at least one repetition of each configuration")
        return rounds

    def resolved(self) -> dict[str, Any]:
        """The plan with every default filled in (what `plan show` prints); a plan of
        experiments only shows no handshake fields."""
        unused = set(HANDSHAKE_FIELDS) if self.suites is None else set()
        out = self.model_dump(mode="json", exclude_none=True, exclude=unused)  # TOML has no null: absent means unset
        if "options" in out and len(self.options) == 1:  # one set: a list of names, as written (and hashed) before sweeps
            out["options"] = out["options"][0]
        return out

    def resolved_json(self) -> str:
        """Canonical JSON of what is measured; `output` (where results go) is left out so
        the same plan resumes wherever its folder lives."""
        body = {k: v for k, v in self.resolved().items() if k != "output"}
        # Libraries by their agents' names, as plans named them before `name@version`: a plan
        # hashes the same whichever spelling it uses, and as it did then.
        body["libraries"] = [agent_name(lib) for lib in self.libraries]
        if self.network and self.network.peer_library:
            body["network"]["peer_library"] = agent_name(self.network.peer_library)
        if self.network and self.network.pace is None:  # likewise for the later `pace` (docs/networks.md)
            body["network"].pop("pace", None)
        if len(self.libraries) == 1:  # the form plans had before `libraries`: their stores still resume
            body["library"] = body.pop("libraries")[0]
        if self.device and len(self.device.targets) == 1:  # likewise for a matrix of device targets
            body["device"]["target"] = self.device.targets[0]
        if self.device and self.device.library and len(self.device.library) == 1:  # and of device builds
            body["device"]["library"] = self.device.library[0]
        if self.suites and not self.suites.protocol:  # likewise for the later `protocol` filter
            del body["suites"]["protocol"]
        if "precision" in body:  # how long to try, not what is measured: a new budget resumes the store
            del body["precision"]["time_budget_s"]
        if self.metrics == [TIME_METRIC]:  # likewise for the later `metrics` (docs/metrics.md)
            body.pop("metrics", None)
            body.pop("metric_repetitions", None)
        return json.dumps(body, sort_keys=True, separators=(",", ":"))

    def hash(self) -> str:
        return hashlib.sha256(self.resolved_json().encode()).hexdigest()


@dataclass(frozen=True)
class LoadedPlan:
    """A validated plan and the text it came from."""

    plan: Plan
    text: str  # the TOML as written (stored in the experiment row)
    source: str  # file name, or "device.toml (embedded)"
    note: str = ""  # one line for the user: an old plan name's new one


# ---------------------------------------------------------------------- errors
_UNION_BRANCHES = ("str", "int")  # loc parts pydantic adds for the branches of `str | int`


def _problem(err: Mapping[str, Any], raw: Mapping[str, Any]) -> str:
    if err["loc"] and err["loc"][-1] in _UNION_BRANCHES:  # a suite reference that is neither str nor int
        return (f"{dotted(err['loc'], raw, PLAN_ITSELF)}: {err['input']!r} is not valid: must be a suite name, "
                "an fnmatch pattern or an IANA id")
    return problem(err, Plan, raw, PLAN_ITSELF)


def validate(raw: Mapping[str, Any], source: str) -> Plan:
    try:
        return Plan.model_validate(raw)
    except ValidationError as exc:
        # Union branches report the same mistake twice (as str and as int): keep one.
        problems = list(dict.fromkeys(_problem(e, raw) for e in exc.errors()))
        raise PlanError(source, problems) from None


def parse(text: str, source: str) -> LoadedPlan:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(source, [f"not valid TOML: {exc}"]) from None
    return LoadedPlan(validate(raw, source), text, source)


def embedded(name: str) -> str | None:
    """The text of the embedded plan NAME (src/tlsbench/plans/NAME.toml), None if there is none."""
    found = resources.files("tlsbench").joinpath("plans", f"{name}.toml")
    return found.read_text() if name and "/" not in name and found.is_file() else None


def load(path: str | Path | None = None) -> LoadedPlan:
    """A plan file, or an embedded plan by its name (`device`, `host`: a name no file has; an
    old name of RENAMED_PLANS loads its new one and says so in `note`), or the embedded
    default plan when path is None."""
    name = Path(DEFAULT_PLAN).stem if path is None else str(path)
    is_file = path is not None and Path(path).exists()
    new_name = None if is_file else RENAMED_PLANS.get(name)
    text = None if is_file else embedded(new_name or name)
    if text is not None:
        loaded = parse(text, f"{new_name or name}.toml (embedded)")
        return replace(loaded, note=f"note: the plan `{name}` is named `{new_name}` now: `tlsbench run {new_name}` "
                                    f"(`make run PLAN={new_name}`)") if new_name else loaded
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PlanError(str(path), [f"cannot read it: {exc.strerror}"]) from None
    except UnicodeDecodeError as exc:
        raise PlanError(str(path), [f"not UTF-8 text (byte {exc.start}): a plan is a TOML file"]) from None
    return parse(text, path.name)
