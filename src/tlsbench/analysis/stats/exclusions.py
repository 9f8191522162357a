# SPDX-License-Identifier: Apache-2.0
"""What was left out of the statistics, per configuration and why, so that nothing drops out
of a table silently: a configuration whose repetitions were all excluded stays in tables,
exports and the winners as "no data: N excluded (why)", and a run under heavy load says how
much each configuration lost and what to do (docs/report.md)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset, excluding_flags, ok_status
from tlsbench.analysis.vocab import vocab

DESCHEDULED = "descheduled"
# Heavy load: this share of a configuration's repetitions descheduled, or of all of them.
HEAVY_CONFIG_SHARE = 0.20
HEAVY_RUN_SHARE = 0.05


@dataclass(frozen=True)
class Exclusions:
    """One configuration's repetitions: stored, used, and the excluded ones by reason (each
    counted once, under its first reason: its status, a flag, then descheduling)."""

    stored: int
    used: int
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def excluded(self) -> int:
        return self.stored - self.used

    @property
    def text(self) -> str:
        """"240 excluded (descheduled 200, HANDSHAKE_FAILED 40)"."""
        why = ", ".join(f"{reason} {n}" for reason, n in sorted(self.reasons.items(), key=lambda kv: -kv[1]))
        return f"{self.excluded} excluded" + (f" ({why})" if why else "")

    @property
    def heavy(self) -> bool:
        """A large share of its repetitions left out (the share a heavy-load warning names)."""
        return self.stored > 0 and self.excluded >= HEAVY_CONFIG_SHARE * self.stored

    @property
    def no_data(self) -> str:
        """What a table shows for a configuration without a usable repetition."""
        return f"no data: {self.text}" if self.stored else "no data: nothing stored"


def exclusions(ds: Dataset, include_flagged: bool = False, descheduling: bool = True) -> dict[int, Exclusions]:
    """Per configuration id, what its repetitions became (include_flagged: none excluded;
    without `descheduling`, descheduled ones are kept: exact counts, a memory image)."""
    n = len(ds.reps)
    reason = np.full(n, "", dtype=object)
    if not include_flagged:
        flags = vocab().flags
        if descheduling:
            reason[ds.descheduled_mask()] = DESCHEDULED
        for name in sorted(flags, key=flags.get, reverse=True):  # the first flag wins: lowest bit last
            if flags[name] & excluding_flags():
                reason[(ds.reps.flags & flags[name]) != 0] = name
        failed = ds.reps.status != ok_status()
        reason[failed] = ds.reps.status[failed]
    out = {}
    for cid in ds.configs:
        mine = reason[ds.reps.config_id == cid]
        counts = Counter(r for r in mine.tolist() if r)
        out[cid] = Exclusions(len(mine), len(mine) - sum(counts.values()), dict(counts))
    return out


def load_warning(found: dict[int, Exclusions], labels: dict[int, str]) -> str | None:
    """One warning when descheduling took a large share of the run or of a configuration:
    how much, where, and what to do."""
    stored = sum(e.stored for e in found.values())
    lost = sum(e.reasons.get(DESCHEDULED, 0) for e in found.values())
    heavy = sorted((cid for cid, e in found.items() if e.stored and e.reasons.get(DESCHEDULED, 0)
                    >= HEAVY_CONFIG_SHARE * e.stored), key=lambda c: -found[c].reasons[DESCHEDULED] / found[c].stored)
    if not stored or (lost < HEAVY_RUN_SHARE * stored and not heavy):
        return None
    worst = "; ".join(f"{labels[c]}: {found[c].reasons[DESCHEDULED]} of {found[c].stored}" for c in heavy[:5])
    more = f" and {len(heavy) - 5} more" if len(heavy) > 5 else ""
    return (f"Heavy load: {lost} of {stored} repetitions ({100 * lost / stored:.0f}%) were descheduled (another "
            f"process ran in the middle of them) and left out" + (f"; most in {worst}{more}" if heavy else "")
            + ". The exclusions table lists each configuration's losses. What to do: stop other work on this "
            "machine (or use a quieter one) and run the same plan again into a new folder; keep `tlsbench run`'s "
            "default --pin (agents on CPUs of their own); a plan's [precision] adds rounds where too few "
            "repetitions are left.")
