# SPDX-License-Identifier: Apache-2.0
"""Each step's cycles (model) from its own class counts (docs/cycles.md "Per-step cycles"): a
device run with the cycle model's plugin attached stores every record's cumulative counts
(`trace_counts`); a step (a START/STOP span the analysis derives) counts STOP − START, and
`modelled_cycles` makes them that step's cycles on the board.

What the one conversion (conversion.py) takes from here: seconds of the part per unit of a
step's processing, per (configuration, peer, step label): Σ cycles (model) ÷ Σ instructions the
plugin counted over that step's spans, ÷ f. The step's processing (its span minus nested I/O)
is then converted with its own code's CPI, not the board's reference workload's."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from tlsbench.analysis.models.cycles import INSTRUCTIONS, modelled_cycles
from tlsbench.analysis.vocab import vocab
from tlsbench.core.boards import Board

HANDSHAKE = -1  # the label key of a peer's whole handshake: all its steps together


@dataclass(frozen=True)
class StepTimes:
    """Per (configuration id, peer code, step label; HANDSHAKE: all of the peer's steps):
    the part's seconds per unit of processing, from the steps' own counts."""

    seconds: dict[tuple[int, int, int], float]
    spans: int  # step spans converted from their counts
    steps: int  # step spans in all (the rest: the CPI route)
    missing: dict[int, str] = field(default_factory=dict)  # repetition id -> why it has no counts


def step_times(ds, board: Board, frequency_hz: float) -> StepTimes | None:  # ds: Dataset
    """Each stored step's seconds per unit on `board` at `frequency_hz` from its counts; None
    when the run stored none (no plugin, or its counts are of another board's memory system)."""
    stored_counts = ds.trace_counts()
    counted = {r: c for r, c in stored_counts.items() if c.board == board.name}
    if not any(c.counts is not None for c in counted.values()):
        return None
    sl, voc = ds.slices, vocab()
    steps = np.flatnonzero((sl.category == voc.role_cat("step")) & ~sl.open & ~sl.instant)
    config = ds.reps.config_id[ds.rep_index(sl.rep[steps])]
    cycles: dict[tuple[int, int, int], float] = defaultdict(float)
    counts_of: dict[tuple[int, int, int], float] = defaultdict(float)
    spans = 0
    for rep in np.unique(sl.rep[steps]).tolist():
        stored = counted.get(rep)
        if stored is None or stored.counts is None:
            continue
        names = stored.features.split(",")
        table = np.frombuffer(stored.counts, "<u8").reshape(-1, len(names))
        mine = np.flatnonzero(sl.rep[steps] == rep)
        idx = steps[mine]
        deltas = (table[sl.stop_pos[idx]] - table[sl.start_pos[idx]]).tolist()
        for k, i, delta in zip(mine.tolist(), idx.tolist(), deltas):
            step = dict(zip(names, delta))
            modelled = modelled_cycles(step, board)
            for key in ((int(config[k]), int(sl.peer[i]), int(sl.label[i])), (int(config[k]), int(sl.peer[i]), HANDSHAKE)):
                cycles[key] += modelled
                counts_of[key] += step[INSTRUCTIONS]
            spans += 1
    seconds = {key: cycles[key] / counts_of[key] / frequency_hz for key in cycles if counts_of[key] > 0}
    missing = {r: c.reason or "" for r, c in stored_counts.items() if c.counts is None}
    return StepTimes(seconds, spans, len(steps), missing)
