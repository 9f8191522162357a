# SPDX-License-Identifier: Apache-2.0
"""Samples: the values of every measure per (configuration, peer, metric, label) after
exclusions, their statistics, and the intermediate products (`Measured`) that winners,
group-bys, libraries and comparisons are computed from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tlsbench.analysis.derive.derived import EMPTY_TABLE, merged, take_rows
from tlsbench.analysis.derive.dataset import Config, Dataset
from tlsbench.analysis.derive.parallel import map_ordered
from tlsbench.analysis.questions.answers import QUESTION_CODES, Answer, Answers, Question, answers_of
from tlsbench.analysis.derive.runs import runs
from tlsbench.analysis.derive.measures import (METRIC, METRICS, NO_LABEL, NO_PEER, MeasureTable, SliceCosts, label_text, slice_costs)
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.vocab import vocab

# Measures whose mean CI is shown (the mean's resampling costs n draws per resample).
HEADLINE = frozenset({"handshake_processing", "handshake_time", "write_processing",
                      "write_processing_post", "write_total", "read_processing",
                      "read_processing_pre", "read_total"})

GroupKey = tuple[int, int, int, int]  # (config id, peer, metric code, label)
COUNTER = "ns"  # a METRICS unit: the agent's counter (HELLO clock.unit; ns on a host)


# The measure whose rows (with their repetitions) the precision and drift checks, the network
# section and the timeline's choice of repetition read: Measured.table holds only these.
TABLE_CODES = np.array([METRIC["handshake_processing"]])

ConfigSamples = dict[GroupKey, tuple[np.ndarray, np.ndarray]]  # (values, the round of each)


@dataclass
class Samples:
    """Values per (config, peer, metric, label) after exclusions: every one where the dataset
    was split whole (split_samples, as the precision rule does), else any configuration's on
    request (`of_config`) and the answers to the winners' questions (summarize_dataset)."""

    values: dict[GroupKey, np.ndarray]
    excluded_reps: dict[int, int]      # config id -> repetitions excluded
    used_reps: dict[int, int]          # config id -> repetitions used
    rounds: dict[GroupKey, np.ndarray] = field(default_factory=dict)  # the round of each value
    answers: Answers = field(default_factory=Answers)
    read_config: Callable[[int], ConfigSamples] | None = None  # every sample of one configuration
    _last: tuple[int, ConfigSamples] | None = None  # the configuration read last (a comparison reads it again)

    def get(self, config: int, metric: str, peer: int = NO_PEER, label: int = NO_LABEL) -> np.ndarray:
        return self.values.get((config, peer, METRIC[metric], label), np.empty(0))

    def of_config(self, config: int) -> ConfigSamples:
        """Every sample of one configuration, values and rounds (read again from the store
        where the values are not held)."""
        if self.read_config is None:
            return {k: (v, self.rounds[k]) for k, v in self.values.items() if k[0] == config}
        if self._last is None or self._last[0] != config:
            self._last = (config, self.read_config(config))
        return self._last[1]


def split_config(ds: Dataset, table: MeasureTable, excluded: np.ndarray) -> ConfigSamples:
    """The samples of one configuration's measure rows: the repetitions not `excluded` (per
    repetition of ds.reps), each sample's values in table order (a stable split)."""
    mine = np.flatnonzero(~excluded[ds.rep_index(table.rep)]) if len(table) else np.empty(0, np.int64)
    mine = mine[np.lexsort((table.label[mine], table.metric[mine], table.peer[mine]))]
    values, rounds = table.value[mine], ds.reps.round[ds.rep_index(table.rep[mine])]
    cols = [table.peer[mine], table.metric[mine], table.label[mine]]
    out: ConfigSamples = {}
    cid = int(ds.reps.config_id[ds.rep_index(table.rep[0])]) if len(table) else -1
    for s, e in zip(*(bound.tolist() for bound in runs(*cols))):
        out[(cid, *(int(c[s]) for c in cols))] = (values[s:e], rounds[s:e])
    return out


def _counts(ds: Dataset, excl: np.ndarray) -> tuple[dict[int, int], dict[int, int]]:
    """Per configuration: repetitions excluded, repetitions used."""
    ex_cfg = ds.reps.config_id[excl]
    return ({c: int(np.count_nonzero(ex_cfg == c)) for c in ds.configs},
            {c: int(np.count_nonzero((ds.reps.config_id == c) & ~excl)) for c in ds.configs})


def split_samples(ds: Dataset, mt: MeasureTable | None = None, include_flagged: bool = False) -> Samples:
    """Every sample of the dataset (of `mt`, else of its measures), all in memory."""
    excl = ds.excluded_mask(include_flagged)
    values: dict[GroupKey, np.ndarray] = {}
    rounds: dict[GroupKey, np.ndarray] = {}
    for _, table in ds.config_tables(mt):
        for key, (v, r) in split_config(ds, table, excl).items():
            values[key], rounds[key] = v, r
    return Samples(values, *_counts(ds, excl), rounds=rounds)


@dataclass
class Summarized:
    """A dataset's statistics with what its views across configurations need."""

    samples: Samples                   # the answers to the winners' questions; any configuration's: of_config
    rows: list[Row]
    table: MeasureTable                # the TABLE_CODES measures' rows, each metric's by repetition
    computed: dict[int, list[Row]]     # the configurations whose statistics were computed now


def summarize_dataset(ds: Dataset, seed: int, include_flagged: bool = False,
                      known: dict[int, Callable[[], list[Row]]] | None = None,
                      answers: Answers | None = None) -> Summarized:
    """The statistics of every sample, a configuration at a time (a few in memory at once,
    on every CPU where the store holds the summaries), but those `known` (analysis/derive/statcache.py);
    the configurations' `answers` to the winners' questions (by default, of those a report
    can show) and the TABLE_CODES measure rows, with a way back to any configuration's samples."""
    excl = ds.excluded_mask(include_flagged)
    excluded_reps, used_reps = _counts(ds, excl)
    job = _ConfigJob(ds, excl, excluded_reps, seed, known or {})
    if ds.summaries is None and ds.stored is not None:  # each worker reads its configurations from the store
        parts = map_ordered(_summarize_config, job, np.unique(ds.reps.config_id).tolist())
    else:
        parts = (job.summarize(cid, table) for cid, table in ds.config_tables())
    answers = Answers() if answers is None else answers
    rows: list[Row] = []
    tables: list[MeasureTable] = []
    computed: dict[int, list[Row]] = {}
    for cid, config_rows, answered, table_rows in parts:
        rows += config_rows
        if cid not in job.known:
            computed[cid] = config_rows
        answers.add(cid, answered)
        tables.append(table_rows)
    table = merged(*tables, EMPTY_TABLE)
    table.incomplete_records = ds.incomplete_records
    return Summarized(Samples({}, excluded_reps, used_reps, {}, answers, _reader(ds, excl)), rows, table, computed)


def _reader(ds: Dataset, excluded: np.ndarray) -> Callable[[int], ConfigSamples]:
    """Reads one configuration's samples, the `excluded` repetitions left out."""
    def read_config(cid: int) -> ConfigSamples:
        return next((split_config(ds, t, excluded) for _, t in ds.config_tables(wanted=[cid])), {})

    return read_config


def measured(ds: Dataset, excluded: np.ndarray) -> "Measured":
    """A dataset's samples without their statistics, each configuration's read on request (what
    a comparison needs of an experiment); the `excluded` repetitions left out."""
    excluded_reps, used_reps = _counts(ds, excluded)
    samples = Samples({}, excluded_reps, used_reps, read_config=_reader(ds, excluded))
    return Measured(ds, None, EMPTY_TABLE, samples, config_labels(ds.configs))


@dataclass(frozen=True)
class _ConfigJob:
    """What summarising one configuration needs of its dataset."""

    ds: Dataset
    excluded: np.ndarray  # per repetition
    excluded_reps: dict[int, int]
    seed: int
    known: dict[int, Callable[[], list[Row]]]  # configurations whose rows of statistics are stored: reads them

    def summarize(self, cid: int, table: MeasureTable) -> tuple[int, list[Row], dict[Question, Answer], MeasureTable]:
        """One configuration's rows of statistics, its answers and its TABLE_CODES rows."""
        table_rows = take_rows(table, np.flatnonzero(np.isin(table.metric, TABLE_CODES)))
        if cid in self.known:
            asked = take_rows(table, np.flatnonzero(np.isin(table.metric, QUESTION_CODES)))
            return cid, self.known[cid](), answers_of(split_config(self.ds, asked, self.excluded)), table_rows
        split = split_config(self.ds, table, self.excluded)
        rows = [summary_row(key, v, r, self.excluded_reps.get(key[0], 0), self.seed, self.ds.unit.name)
                for key, (v, r) in split.items()]
        return cid, rows, answers_of(split), table_rows


def _summarize_config(job: _ConfigJob, cid: int) -> tuple[int, list[Row], dict[Question, Answer], MeasureTable]:
    return job.summarize(cid, next(job.ds.config_tables(wanted=[cid]))[1])


@dataclass(frozen=True)
class Row:
    """Statistics of one measure of one configuration."""

    config_id: int
    peer: str            # spec peer name
    metric: str          # a METRICS name
    label: str           # step/crypto/record label name, "" for whole-peer measures
    unit: str
    summary: Summary


def config_labels(configs: dict[int, Config]) -> dict[int, str]:
    """Display names: the suite name plus only the fields that vary between configs."""
    varying = [f for f in ("library", "grp", "credential", "direction", "record_size", "total_bytes", "transport",
                           "device_role", "link_label", "protocol", "target")
               if len({_shown(c, f) for c in configs.values()}) > 1]
    out = {}
    for cid, c in configs.items():
        extra = ", ".join(_shown(c, f) for f in varying)
        out[cid] = c.suite_name + (f" [{extra}]" if extra else "")
    if len(set(out.values())) < len(out):  # still ambiguous: add the id
        out = {cid: f"{name} #{cid}" for cid, name in out.items()}
    return out


# How a field absent from a configuration reads in its label: TLS over memory, on the host.
_ABSENT = {"protocol": "TLS", "target": "host"}


def _shown(c: Config, name: str) -> str:
    value = getattr(c, name, None)
    return _ABSENT.get(name, "None") if value is None else str(value).upper() if name == "protocol" else str(value)


def summarize_group(samples: Samples, key: GroupKey, seed: int) -> Summary:
    """The statistics of one group, exactly as the report shows them: the precision rule
    (analysis/stats/precision.py) decides on this very interval (one seed, one key)."""
    return summarize_values(key, samples.values[key], samples.rounds.get(key), samples.excluded_reps.get(key[0], 0),
                            seed)


def summarize_values(key: GroupKey, values: np.ndarray, rounds: np.ndarray | None, excluded: int, seed: int) -> Summary:
    cid, peer, metric, label = key
    m = METRICS[metric]
    return summarize(values, rng_for(seed, cid, peer, m.name, label), mean_ci=m.name in HEADLINE,
                     excluded=excluded, rounds=rounds)


def summary_row(key: GroupKey, values: np.ndarray, rounds: np.ndarray | None, excluded: int, seed: int,
                counter_unit: str = COUNTER) -> Row:
    """The statistics of one sample as a row; a measure of the counter is in `counter_unit`
    (the dataset's: ns on a host, instructions on a device)."""
    cid, peer, metric, label = key
    m = METRICS[metric]
    return Row(cid, vocab().peer_name(peer), m.name, label_text(m.name, label),
               counter_unit if m.unit == COUNTER else m.unit, summarize_values(key, values, rounds, excluded, seed))


@dataclass
class Measured:
    """The intermediate products of one dataset, kept for figures and comparisons."""

    ds: Dataset
    computed_costs: SliceCosts | None  # None until `costs` is first asked for
    table: MeasureTable  # the rows of the TABLE_CODES measures (every row: ds.table)
    samples: Samples     # the answers to the winners' questions; any configuration's: samples.of_config
    labels: dict[int, str]  # configuration id -> display name (config_labels)

    @property
    def costs(self) -> SliceCosts:
        """Every slice's processing, I/O and overhead: decodes every trace (analysis/derive/derived.py
        spares a report this), so only what needs every slice asks."""
        if self.computed_costs is None:
            self.computed_costs = slice_costs(self.ds)
        return self.computed_costs
