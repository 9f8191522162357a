# SPDX-License-Identifier: Apache-2.0
"""Samples: the values of every measure per (configuration, peer, metric, label) after
exclusions, their statistics, and the intermediate products (`Measured`) that winners,
group-bys, libraries and comparisons are computed from."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .load import Config, Dataset
from .measures import METRIC, METRICS, NO_LABEL, NO_PEER, MeasureTable, SliceCosts, label_text, slice_costs
from .stats import Summary, rng_for, summarize
from .vocab import vocab

# Measures whose mean CI is shown (the mean's resampling costs n draws per resample).
HEADLINE = frozenset({"handshake_processing", "handshake_time", "write_processing",
                      "write_processing_post", "write_total", "read_processing",
                      "read_processing_pre", "read_total"})

GroupKey = tuple[int, int, int, int]  # (config id, peer, metric code, label)
COUNTER = "ns"  # a METRICS unit: the agent's counter (HELLO clock.unit; ns on a host)


@dataclass
class Samples:
    """Values per (config, peer, metric, label) after exclusions."""

    values: dict[GroupKey, np.ndarray]
    excluded_reps: dict[int, int]      # config id -> repetitions excluded
    used_reps: dict[int, int]          # config id -> repetitions used
    rounds: dict[GroupKey, np.ndarray] = field(default_factory=dict)  # the round of each value

    def get(self, config: int, metric: str, peer: int = NO_PEER, label: int = NO_LABEL) -> np.ndarray:
        return self.values.get((config, peer, METRIC[metric], label), np.empty(0))


def split_samples(ds: Dataset, mt: MeasureTable, include_flagged: bool = False) -> Samples:
    """The values of every (config, peer, metric, label) of the repetitions kept, in table
    order within each sample (a stable split); one configuration at a time, so the working
    memory beyond the samples is a few bytes per table row."""
    excl = ds.excluded_mask(include_flagged)
    cfg_ids = np.unique(ds.reps.config_id)
    rep_cfg = np.searchsorted(cfg_ids, ds.reps.config_id).astype(np.int32)  # dense config index
    rep_cfg[excl] = -1
    row_cfg = rep_cfg[ds.rep_index(mt.rep)] if len(mt) else np.empty(0, np.int32)
    rows = np.argsort(row_cfg, kind="stable")  # rows of each configuration, in table order
    first = np.searchsorted(row_cfg[rows], np.arange(-1, len(cfg_ids) + 1))
    del row_cfg
    values = np.empty(len(rows) - first[1])
    rounds = np.empty(len(values), dtype=ds.reps.round.dtype)
    out_v: dict[GroupKey, np.ndarray] = {}
    out_r: dict[GroupKey, np.ndarray] = {}
    for i, cid in enumerate(cfg_ids.tolist()):
        mine = rows[first[i + 1]:first[i + 2]]
        mine = mine[np.lexsort((mt.label[mine], mt.metric[mine], mt.peer[mine]))]
        at = first[i + 1] - first[1]
        values[at:at + len(mine)] = mt.value[mine]
        rounds[at:at + len(mine)] = ds.reps.round[ds.rep_index(mt.rep[mine])]
        cols = [mt.peer[mine], mt.metric[mine], mt.label[mine]]
        change = np.r_[True, np.any([c[1:] != c[:-1] for c in cols], axis=0)] if len(mine) else np.empty(0, bool)
        starts = np.flatnonzero(change)
        for s, e in zip(starts.tolist(), np.r_[starts[1:], len(mine)].tolist()):
            key = (cid, *(int(c[s]) for c in cols))
            out_v[key], out_r[key] = values[at + s:at + e], rounds[at + s:at + e]
    ex_cfg = ds.reps.config_id[excl]
    return Samples(out_v,
                   excluded_reps={c: int(np.count_nonzero(ex_cfg == c)) for c in ds.configs},
                   used_reps={c: int(np.count_nonzero((ds.reps.config_id == c) & ~excl)) for c in ds.configs},
                   rounds=out_r)


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
    (analysis/precision.py) decides on this very interval (one seed, one key)."""
    cid, peer, metric, label = key
    m = METRICS[metric]
    return summarize(samples.values[key], rng_for(seed, cid, peer, m.name, label), mean_ci=m.name in HEADLINE,
                     excluded=samples.excluded_reps.get(cid, 0), rounds=samples.rounds.get(key))


def summarize_all(samples: Samples, seed: int, counter_unit: str = COUNTER) -> list[Row]:
    """Statistics of every sample; a measure of the counter is in `counter_unit` (the
    dataset's: ns on a host, instructions on a device)."""
    voc = vocab()
    rows = []
    for key in samples.values:
        cid, peer, metric, label = key
        m = METRICS[metric]
        rows.append(Row(cid, voc.peer_name(peer), m.name, label_text(m.name, label),
                        counter_unit if m.unit == COUNTER else m.unit, summarize_group(samples, key, seed)))
    return rows


@dataclass
class Measured:
    """The intermediate products of one dataset, kept for figures and comparisons."""

    ds: Dataset
    computed_costs: SliceCosts | None  # None until `costs` is first asked for
    table: MeasureTable
    samples: Samples
    labels: dict[int, str]  # configuration id -> display name (config_labels)

    @property
    def costs(self) -> SliceCosts:
        """Every slice's processing, I/O and overhead: decodes every trace (analysis/derived.py
        spares a report this), so only what needs every slice asks."""
        if self.computed_costs is None:
            self.computed_costs = slice_costs(self.ds)
        return self.computed_costs
