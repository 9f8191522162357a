# SPDX-License-Identifier: Apache-2.0
"""What the plan asked for and did not get, so nothing drops out silently: the matrix cells
that never became a configuration (stored with the experiment: migration 016), the
configurations the controller stopped running (agent refused, kept dying), and those left
without a usable repetition (all failed, flagged or descheduled). `tlsbench run` and
`primitives` name them in their closing lines, `tlsbench status` lists them with the
repetitions excluded by reason, and the report's first section names them (docs/report.md)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from tlsbench.schema import SkippedCell
from tlsbench.store.api import DerivedReads, StoreReader

from tlsbench.analysis.derive.derived import STORED_KINDS
from tlsbench.analysis.stats.exclusions import Exclusions, exclusions
from tlsbench.analysis.derive.dataset import Config

# The kinds whose statistics leave descheduled repetitions out (analysis/pipeline.py and
from tlsbench.analysis.derive.load import load_tables, summaries

# The kinds whose statistics leave descheduled repetitions out (analysis/pipeline.py and
# primitives.py); exact counts and the memory image keep them (metrics.py, device.py).
TIMED_KINDS = ("handshakes", "device", "experiments")


@dataclass(frozen=True)
class Unmeasured:
    """A planned cell or configuration without a usable value, and why."""

    name: str  # a configuration key (or label), or a matrix cell
    why: str


def unmeasured(cells: Sequence[SkippedCell], configs: Mapping[int, Config], found: Mapping[int, Exclusions],
               labels: Mapping[int, str] | None = None) -> list[Unmeasured]:
    """The matrix cells left out, then each configuration the controller skipped or that kept
    no usable repetition of those stored (one not run yet is pending, not unmeasured)."""
    out = [Unmeasured(c.cell, c.reason) for c in cells]
    name = {cid: (labels or {}).get(cid, c.key) for cid, c in configs.items()}
    for cid in sorted(configs, key=name.__getitem__):
        x = found.get(cid)
        why = [f"skipped: {configs[cid].skip_reason}"] if configs[cid].skip_reason else []
        why += [x.no_data] if x is not None and x.stored and not x.used else []
        if why:
            out.append(Unmeasured(name[cid], "; ".join(why)))
    return out


def excluded_by_reason(found: Mapping[int, Exclusions]) -> Counter[str]:
    """Repetitions left out of the statistics, by reason, over every configuration."""
    total: Counter[str] = Counter()
    for x in found.values():
        total.update(x.reasons)
    return total


def reasons_text(counts: Counter[str]) -> str:
    """"descheduled 40, TRACE_OVERFLOW 4", most first."""
    return ", ".join(f"{reason} {n}" for reason, n in counts.most_common())


@dataclass
class Coverage:
    """A store's planned work against what it holds."""

    unmeasured: list[Unmeasured] = field(default_factory=list)
    found: dict[int, Exclusions] = field(default_factory=dict)  # config id -> its repetitions, every kind
    unjudged: int = 0  # repetitions without stored summaries: whether they were descheduled is not known yet

    @property
    def stored(self) -> int:
        return sum(x.stored for x in self.found.values())

    @property
    def used(self) -> int:
        return sum(x.used for x in self.found.values())

    @property
    def excluded(self) -> Counter[str]:
        return excluded_by_reason(self.found)


def read_coverage(store: StoreReader, cache: DerivedReads) -> Coverage:
    """The coverage of a store, from its tables and the stored summaries alone (as cheap as a
    status must be while a run writes): a repetition without summaries is not judged
    descheduled, and counted as such."""
    out = Coverage()
    configs: dict[int, Config] = {}
    cells = store.skipped_cells()
    for kind in STORED_KINDS:
        if not store.has(kind):
            continue
        ds = load_tables(store, cache, kind)
        ds.stored, missing = summaries(store, cache, ds, derive=False)
        out.found |= exclusions(ds, descheduling=kind in TIMED_KINDS)
        out.unjudged += missing if kind in TIMED_KINDS else 0
        configs |= ds.configs
    out.unmeasured = unmeasured(cells, configs, out.found)
    return out
