# SPDX-License-Identifier: Apache-2.0
"""The modelled time of each handshake step on a part, for a paced host agent (docs/networks.md
"Paced peers"): a device run's per-step counts (median over its repetitions, each step summed
over its calls, as the report's `step` measure) through the one conversion
(analysis/models/conversion.py), never a second one. A configuration matches its device twin on
library, protocol, suite, group, credential and RUN options (MUTUAL_AUTH adds steps; the
socket options aside): the handshake's steps do not depend on the payload or the transport
under it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset, ok_status
from tlsbench.analysis.derive.measures import METRIC
from tlsbench.analysis.derive.samples import measured
from tlsbench.analysis.models.conversion import NS, Conversion, of_dataset
from tlsbench.analysis.models.energy.profiles import board_point
from tlsbench.analysis.vocab import option_names, vocab
from tlsbench.core import spec
from tlsbench.core.boards import boards
from tlsbench.core.errors import UserError

Match = tuple[str, str, str, str, str, int]  # library, protocol, suite, group, credential, RUN options
StepNs = dict[tuple[str, int], float]  # (peer name, step label id) -> modelled ns per handshake


class PaceError(UserError):
    """A paced plan that cannot get its steps' modelled times."""


# RUN options of the kernel's sockets, not of the handshake: a device twin in memory never has them.
SOCKET_OPTIONS = ("NODELAY", "QUICKACK")


def match_key(library: str, protocol: str | None, suite: str, group: str, credential: str, options: int) -> Match:
    socket = sum(spec.load().options.by_name[name] for name in SOCKET_OPTIONS)
    return library, protocol or "tls", suite, group, credential, (options or 0) & ~socket


def match_text(m: Match) -> str:
    library, protocol, suite, group, credential, options = m
    named = [group, credential] + ([option_names(options)] if options else [])
    return f"{library} {protocol.upper()} {suite} [{', '.join(named)}]"


@dataclass(frozen=True)
class PacedSteps:
    """Every device configuration's modelled step times on one board, and how they were had."""

    source: str
    board: str
    conversion: Conversion
    steps: dict[Match, StepNs]


def modelled_steps(ds: Dataset, board: str) -> PacedSteps:
    """The modelled ns of each step of each configuration of a device run `ds` on `board`."""
    if ds.unit.is_time:
        raise PaceError(f"{ds.name} ran on this host: its step times are this machine's, not a part's; pace from a "
                        "device run of the same configurations ([device] in a plan, e.g. plans/pace-device.toml)")
    conv = of_dataset(ds, board_point(boards()[board]))
    samples, voc, step = measured(ds, ds.excluded_mask()).samples, vocab(), METRIC["step"]
    steps: dict[Match, StepNs] = {}
    for cid, c in ds.configs.items():
        if c.image not in (None, "counting"):  # the memory image's counts include its bookkeeping
            continue
        found = {(voc.peer_name(peer), int(label)): float(np.median(values)) * conv.step_s(cid, peer, label) / NS
                 for (_, peer, metric, label), (values, _) in samples.of_config(cid).items()
                 if metric == step and len(values)}
        if found:
            steps[match_key(c.library, c.protocol, c.suite_name, c.grp, c.credential, c.options)] = found
    return PacedSteps(ds.name, board, conv, steps)


@dataclass(frozen=True)
class TimerCause:
    """Why one DTLS configuration's retransmission timers fired: a repetition that retransmitted
    while the link lost none of its packets (or over loopback) fired for computation, not loss."""

    config: int
    repetitions: int  # successful ones
    retransmitted: int
    lossless: int  # of those, how many lost no packet on the link: a timer that fired for computation

    @property
    def for_loss(self) -> int:
        return self.retransmitted - self.lossless


def timer_causes(ds: Dataset) -> list[TimerCause]:
    """Per DTLS configuration of a two-process run: retransmitting repetitions, split by
    whether the link lost anything of the connection (flag RETRANSMITTED, the link's counts)."""
    reps, flag = ds.reps, vocab().flags["RETRANSMITTED"]
    ok = reps.status == ok_status()
    out = []
    for cid, c in ds.configs.items():
        if c.transport != "udp":
            continue
        mine = np.flatnonzero((reps.config_id == cid) & ok)
        retrans = [int(reps.id[i]) for i in mine if reps.flags[i] & flag]
        lossless = sum(1 for r in retrans if (t := ds.link_traffic.get(r)) is None or t.d2p_lost + t.p2d_lost == 0)
        out.append(TimerCause(cid, len(mine), len(retrans), lossless))
    return out


@dataclass(frozen=True)
class Holds:
    """The device agent's PACE_HOLD spans of one configuration: how many, and how many found
    the host's own work already past the model (counted, never hidden)."""

    holds: int
    overruns: int
    worst_overrun_ns: int


def holds(ds: Dataset) -> dict[int, Holds]:
    """Per configuration, the device agent's holds (its trace; a paced peer's are in its own)."""
    sl = ds.slices
    mine = np.flatnonzero(sl.label == vocab().role_label("pace_hold"))
    config_of = dict(zip(ds.reps.id.tolist(), ds.reps.config_id.tolist()))
    out: dict[int, list[int]] = {}
    for i in mine:
        out.setdefault(config_of[int(sl.rep[i])], []).append(int(np.int64(np.uint64(sl.value[i]))))
    return {cid: Holds(len(v), sum(1 for x in v if x > 0), max(v, default=0)) for cid, v in out.items()}
