# SPDX-License-Identifier: Apache-2.0
"""Predictions per configuration and link: the simulation (sim.py) of each usable
repetition's script (script.py), repeated with seeded random losses on a lossy link, and the
device's energy from a power profile (docs/predict.md).

A prediction is a distribution, never one number: over the measured repetitions (their
processing varies) and, on a lossy link, over the losses (Monte Carlo draws; the same draw
seeds for every configuration and sweep point: common random numbers, so differences between
configurations are not drowned by drawing noise). Its summary has the median with a 95%
bootstrap CI of the median and the 5-95% range of single handshakes."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from tlsbench.analysis.models.conversion import NS, Conversion, identity
from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.analysis.derive.dataset import Config, Dataset
from tlsbench.analysis.stats.stats import Summary, cis_overlap, rng_for, summarize
from tlsbench.analysis.models.predict import PredictError
from tlsbench.analysis.models.predict.links import Link, unmodelled
from tlsbench.analysis.models.predict.script import Script, Sources, dtls_timer_ms, interface_mtu
from tlsbench.analysis.models.predict.sim import Outcome, Stack, simulate
from tlsbench.analysis.vocab import vocab

DRAWS = 200  # Monte Carlo draws per configuration on a lossy link
MAX_SCRIPTS = 60  # repetitions a prediction reads (evenly spread over the stored ones)
WAITING = ("idle", "rx")  # what the device draws while it waits: idle, or its radio listening
LABEL = "prediction"  # every table, column and figure of this package says so


@dataclass(frozen=True)
class Options:
    """How to predict; None takes the stored configuration's own setting."""

    device: str | None = None  # client / server; None: the configuration's device role (memory: client)
    nagle: bool | None = None  # TCP; None: the configuration's (memory: the kernel's default, on)
    sack: bool | None = None
    iface_mtu: int | None = None  # None: the plan's tun_mtu, else 1500, lowered to the link's MTU for memory
    dtls_min_ms: float | None = None
    dtls_max_ms: float | None = None
    draws: int = DRAWS
    max_scripts: int = MAX_SCRIPTS
    seed: int = 1
    profile: OperatingPoint | None = None
    device_scale: float | None = None  # a host run: device ns per host ns (given, explicit)
    conversion: Conversion | None = None  # the one conversion of the stored values (results.collect sets it)
    waiting: str = "idle"


@dataclass
class Prediction:
    """One configuration over one link: predicted, not measured."""

    config_id: int
    label: str  # the configuration's report label
    link: Link
    device: str
    transport: str  # tcp / udp
    duration: Summary  # ns, the device's handshake stop–start
    p5_ns: float
    p95_ns: float
    bytes: Summary  # IP bytes on the link, both directions, the whole connection
    packets: Summary
    energy: Summary | None  # J above idle (the profile's convention, docs/energy.md)
    energy_total: Summary | None  # J including idle over the handshake
    processing_ns: float  # median device processing of the scripts (scaled)
    sent_bytes: float  # median TLS/DTLS bytes both peers hand their stacks in the handshake
    failed: int  # draws that did not finish within the simulation's limit
    n_scripts: int
    n_draws: int
    samples: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # duration, energy, bytes, retransmitted

    @property
    def retransmitted(self) -> float:
        """Fraction of the simulated handshakes that retransmitted (TCP segments, DTLS flights)."""
        r = self.samples.get("retransmitted")
        return float(r.mean()) if r is not None and len(r) else math.nan


def transport_of(config: Config) -> str:
    """TLS over TCP, DTLS over UDP; an in-memory (TLS) configuration as TLS over TCP."""
    return "udp" if config.transport == "udp" else "tcp"


def stack_for(ds: Dataset, config: Config, link: Link, opts: Options) -> Stack:
    """The stack a configuration ran with (or would run with), the options over it."""
    net = json.loads(config.network_json) if config.network_json else {}
    plan_net = json.loads(ds.experiment.get("plan_json") or "{}").get("network") or {}
    mtu = opts.iface_mtu
    if mtu is None:
        mtu = interface_mtu(ds) if config.network_json else 1500
        link_mtu = min([m for m in (link.d2p.mtu, link.p2d.mtu) if m] or [mtu])
        mtu = mtu if config.network_json else min(mtu, link_mtu)  # a deployment uses its path MTU
    lo, hi = dtls_timer_ms(ds)
    conv = opts.conversion or identity()
    # Part ns per unit of each peer's handshake: its steps' own cycles (model) where counted; the
    # other peer's is its own time unless both ran on the part (a device's counts)
    device = device_of(config, opts)
    other = "server" if device == "client" else "client"
    device_ns = conv.step_s(config.id, vocab().peers[device]) / NS
    other_ns = conv.step_s(config.id, vocab().peers[other]) / NS if conv.counted else 1.0
    return Stack(transport_of(config),
                 nagle=net.get("nagle", True) if opts.nagle is None else opts.nagle,
                 sack=bool(plan_net.get("sack", True)) if opts.sack is None else opts.sack,
                 mss=int(net.get("mss") or 0), iface_mtu=mtu,
                 dtls_min_ms=opts.dtls_min_ms or lo, dtls_max_ms=opts.dtls_max_ms or hi, device_scale=device_ns,
                 peer_scale=other_ns)


def device_of(config: Config, opts: Options) -> str:
    return opts.device or (config.device_role if config.network_json else "client")


def energies(outcome: Outcome, device: str, point: OperatingPoint, waiting: str) -> tuple[float, float]:
    """(above idle, total) in J of the device's handshake (docs/energy.md's convention:
    (P − P_idle) × time per state; the I/O calls count as CPU time, air time as radio time)."""
    busy = outcome.cpu_ns[device] + outcome.local_ns[device]
    tx, rx = outcome.tx_ns[device], outcome.rx_ns[device]
    duration = outcome.duration_ns(device)
    idle = point.idle_w
    above = (point.cpu_w - idle) * busy + (point.tx_w - idle) * tx + (point.rx_w - idle) * rx
    if waiting == "rx":
        above += (point.rx_w - idle) * max(0.0, duration - busy - tx - rx)
    return above * 1e-9, (above + idle * duration) * 1e-9


def run_draws(scripts: Sequence[Script], link: Link, stack: Stack, device: str, draws: int,
              seed: int) -> list[Outcome]:
    """One run per script on a lossless link; `draws` runs on a lossy one, script k mod n
    with draw k's generator (the same for every configuration: common random numbers)."""
    if not link.lossy:
        return [simulate(s, link, stack, device) for s in scripts]
    n = max(draws, len(scripts))
    return [simulate(scripts[k % len(scripts)], link, stack, device, np.random.default_rng([seed, k]))
            for k in range(n)]


def predict(sources: Sources, config_id: int, label: str, link: Link, opts: Options,
            scripts: Sequence[Script] | None = None) -> Prediction:
    """The prediction of one stored configuration over one link."""
    ds = sources.ds
    config = ds.configs[config_id]
    scripts = list(scripts) if scripts is not None else sources.scripts(config_id, opts.max_scripts)
    if not scripts:
        raise PredictError(f"{label}: no repetition to predict from (none succeeded without retransmissions, "
                           "or the store lacks the peer's traces)")
    device = device_of(config, opts)
    stack = stack_for(ds, config, link, opts)
    outcomes = run_draws(scripts, link, stack, device, opts.draws, opts.seed)
    return summarize_outcomes(outcomes, scripts, config_id, label, link, device, stack, opts)


def summarize_outcomes(outcomes: list[Outcome], scripts: Sequence[Script], config_id: int, label: str,
                       link: Link, device: str, stack: Stack, opts: Options) -> Prediction:
    done = [o for o in outcomes if o.completed]
    key = (config_id, link.label, device)
    dur = np.array([o.duration_ns(device) for o in done])
    wire = np.array([sum(o.bytes.values()) for o in done], dtype=float)
    packets = np.array([sum(o.packets.values()) for o in done], dtype=float)
    energy = total = None
    samples = {"duration_ns": dur, "bytes": wire,
               "retransmitted": np.array([o.retransmissions > 0 for o in done], dtype=bool)}
    if opts.profile is not None:
        pairs = np.array([energies(o, device, opts.profile, opts.waiting) for o in done]).reshape(-1, 2)
        energy = summarize(pairs[:, 0], rng_for(opts.seed, "predict-energy", *key), mean_ci=False)
        total = summarize(pairs[:, 1], rng_for(opts.seed, "predict-energy-total", *key), mean_ci=False)
        samples["energy_j"] = pairs[:, 0]
    p5, p95 = np.percentile(dur, [5, 95]) if len(dur) else (math.nan, math.nan)
    return Prediction(
        config_id, label, link, device, stack.transport,
        summarize(dur, rng_for(opts.seed, "predict-duration", *key), mean_ci=False), float(p5), float(p95),
        summarize(wire, rng_for(opts.seed, "predict-bytes", *key), mean_ci=False),
        summarize(packets, rng_for(opts.seed, "predict-packets", *key), mean_ci=False),
        energy, total,
        float(np.median([s.peer(device).processing_ns for s in scripts])) * stack.device_scale,
        float(np.median([s.client.sent(True) + s.server.sent(True) for s in scripts])),
        len(outcomes) - len(done), len(scripts), len(outcomes), samples)


# ---------------------------------------------------------------------- rankings
@dataclass(frozen=True)
class Ranked:
    """A prediction's place on its link."""

    rank: int  # 1 = the shortest predicted duration (or the least energy)
    tied: bool  # its CI overlaps the one ranked just before it
    prediction: Prediction


def rank(predictions: Sequence[Prediction], by: str = "duration") -> list[Ranked]:
    """Ordered by median; a rank is shared while the medians' CIs overlap the previous one's."""
    def summary(p: Prediction) -> Summary | None:
        return p.duration if by == "duration" else p.energy

    usable = [p for p in predictions if summary(p) is not None and summary(p).n]  # type: ignore[union-attr]
    usable.sort(key=lambda p: summary(p).median)  # type: ignore[union-attr]
    out: list[Ranked] = []
    for i, p in enumerate(usable):
        tied = bool(i) and _tied(summary(usable[i - 1]), summary(p))  # type: ignore[arg-type]
        out.append(Ranked(out[-1].rank if tied else i + 1, tied, p))
    return out


def _tied(a: Summary, b: Summary) -> bool:
    """Overlapping intervals tie; without an interval (one value, a device's exact count) only
    equal values do: 130 and 217 ms are never "=1"."""
    if a.has_interval and b.has_interval:
        return cis_overlap(a.median_ci, b.median_ci)
    return a.median == b.median


def warnings_for(link: Link, predictions: Sequence[Prediction], opts: Options) -> list[str]:
    """What the reader must know about these predictions."""
    out = []
    gone = unmodelled(link)
    if gone:
        out.append(f"link {link.label}: {', '.join(gone)} set but not modelled (the prediction ignores them)")
    if link.d2p.jitter or link.p2d.jitter:
        out.append(f"link {link.label}: jitter is modelled by its mean (no jitter); the emulator keeps order, "
                   "so real deliveries come slightly later")
    failed = [p for p in predictions if p.failed]
    for p in failed:
        out.append(f"{p.label} over {link.label}: {p.failed} of {p.n_draws} simulated handshakes did not finish "
                   "(e.g. packets above the link's MTU: set the interface MTU with --mtu)")
    conv = opts.conversion or identity()
    out.append(f"device processing from {conv.text}; {conv.band_text()}")
    return out
