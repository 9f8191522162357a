# SPDX-License-Identifier: Apache-2.0
"""Progress of an experiment, read from its store (`tlsbench status`, `trace show`)."""
from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from tlsbench.core import spec as specmod
from tlsbench.plan.rounds import round_bounds
from tlsbench.schema import StoredConfig
from tlsbench.store.api import StoreError, StoreReader


@dataclass(frozen=True)
class ConfigProgress:
    """One configuration's repetitions."""

    id: int
    key: str
    library: str  # the agent that runs it (plans may name several)
    suite: str
    group: str
    credential: str
    payload: str  # "none" or "<direction> <total_bytes>/<record_size>"
    planned: int
    stored: int
    failed: int  # status other than OK (AGENT_DIED included)
    flagged: int  # any flag bit set (overflow, retransmission...)
    skip_reason: str | None

    @property
    def counted(self) -> bool:
        """Planned: runnable, or skipped only after it ran (a part's RAM refused its memory
        image's handshake: stored, with the reason)."""
        return not self.skip_reason or self.stored > 0


@dataclass(frozen=True)
class RoundProgress:
    round: int  # 0-based
    stored: int
    planned: int  # over the configurations still runnable


@dataclass
class ExperimentStatus:
    folder: Path
    name: str
    created_at: str
    seed: int
    agents: int  # agent processes started (restarts included)
    configs: list[ConfigProgress] = field(default_factory=list)
    rounds: list[RoundProgress] = field(default_factory=list)

    @property
    def planned(self) -> int:
        return sum(c.planned for c in self.configs if c.counted)

    @property
    def stored(self) -> int:
        return sum(c.stored for c in self.configs)

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.configs)

    @property
    def flagged(self) -> int:
        return sum(c.flagged for c in self.configs)


def status_of(store: StoreReader, folder: Path) -> ExperimentStatus:
    """The progress of the experiment in `folder`, read from its open `store`."""
    s = specmod.load()
    exp = store.experiment()
    assert exp is not None
    plan = json.loads(exp.plan_json)
    counts = store.repetition_counts(s.status.name(s.status.OK))
    status = ExperimentStatus(folder, exp.name, exp.created_at, exp.seed, len(store.agent_rows()))
    for row in store.config_rows():
        c = counts.get(row.id, {"stored": 0, "failed": 0, "flagged": 0})
        payload = row.direction if not row.total_bytes else f"{row.direction} {row.total_bytes}/{row.record_size}"
        if row.experiment:  # its payload is its size
            payload = f"{row.total_bytes} B" if row.total_bytes else "-"
        status.configs.append(ConfigProgress(row.id, row.key, row.library, row.suite_name, row.grp, row.credential,
                                             payload, row.repetitions, c["stored"], c["failed"], c["flagged"],
                                             row.skip_reason))
    per_round = store.stored_per_round()
    # Metric twins (docs/metrics.md) run metric_repetitions in at most that many rounds.
    twin_reps = int(plan.get("metric_repetitions", 0))
    twins = sum(1 for c in status.configs if c.counted and "|collect:" in c.key)
    timed = sum(1 for c in status.configs if c.counted) - twins
    planned = [timed * (stop - start) for start, stop in round_bounds(plan["repetitions"], plan["rounds"])]
    if twins and twin_reps:
        for r, (start, stop) in enumerate(round_bounds(twin_reps, min(plan["rounds"], twin_reps))):
            planned[r] += twins * (stop - start)
    status.rounds = [RoundProgress(r, per_round.get(r, 0), n) for r, n in enumerate(planned)]
    return status


@dataclass(frozen=True)
class StoredRepetition:
    """One repetition as `trace show` needs it."""

    config_key: str
    idx: int
    row: Mapping[str, Any]  # the repetition's columns by name
    records: bytes
    counter_unit: str = "ns"  # of its agent (a firmware's: migration 007)


def pick_config(store: StoreReader, wanted: str | None) -> StoredConfig:
    """A config by exact key, else by suite name (case-insensitive, fnmatch patterns allowed)."""
    rows = store.config_rows()
    if not rows:
        raise StoreError("the experiment has no configuration yet")
    if wanted is None:
        return rows[0]
    exact = [r for r in rows if r.key == wanted]
    matches = exact or [r for r in rows if fnmatch.fnmatchcase(r.suite_name.upper(), wanted.upper())]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise StoreError(f"no configuration matches {wanted!r}; `tlsbench status` lists them")
    keys = "\n  ".join(r.key for r in matches[:20])
    raise StoreError(f"{wanted!r} matches {len(matches)} configurations; give a key:\n  {keys}")


def read_repetition(store: StoreReader, config: str | None, idx: int) -> StoredRepetition:
    row = pick_config(store, config)
    found = store.repetition(row.id, idx)
    if found is None:
        raise StoreError(f"repetition {idx} of {row.key} is not stored (yet)")
    units = {a.id: a.counter_unit for a in store.agent_rows()}
    return StoredRepetition(row.key, idx, found[0], found[1], units.get(found[0]["agent_id"]) or "ns")
