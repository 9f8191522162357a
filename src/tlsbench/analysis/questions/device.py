# SPDX-License-Identifier: Apache-2.0
"""What a device run adds to the analysis (docs/report.md "Device"):

- the footprint: per configuration and peer, the heap and stack the memory image's
  footprint records report (bytes; labels of category `memory`), and each image's layout;
- device vs host: the same configurations' counts on the device beside their times on the
  host (the same store's host configurations, or a second experiment), each step's share
  of its peer's handshake in both places and the instructions per host ns, and the two
  rankings side by side, so the reader sees where the x86 ranking misleads;
- identity: two runs of a device compared value by value (the counts of a deterministic
  target are the same run after run; this counts the values that are not).

Counts and times are never mixed in one number except in the stated ratio (count per ns)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tlsbench.store.api import DeviceImage

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.derive.measures import METRIC, METRICS, NO_LABEL, label_text
from tlsbench.analysis.derive.samples import Measured
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.units import Unit
from tlsbench.analysis.vocab import vocab

# What a device configuration's key adds to the host's (plan/resolve.py placed()).
_PLACE_SUFFIX = re.compile(r"\|target:[^|]*(\|image:[^|]*)?$")


def host_key(key: str) -> str:
    """The key the same configuration has on the host."""
    return _PLACE_SUFFIX.sub("", key)


# ---------------------------------------------------------------- footprint
# Footprint labels in the order a table shows them (spec/labels.toml, category memory).
FOOTPRINT_LABELS = ("HEAP_PEAK_HANDSHAKE", "HEAP_KEPT", "HEAP_PEAK_CONNECTED", "STACK_HIGH_WATER")
SHARED_LABEL = "HEAP_SHARED"


@dataclass(frozen=True)
class Bytes:
    """One footprint value over the repetitions: the most (what a build must hold) and the least."""

    most: int
    least: int
    n: int


@dataclass(frozen=True)
class FootprintRow:
    """One peer of one configuration (the counting configuration it is the footprint of)."""

    config_id: int  # the memory image's configuration
    host_key: str  # the configuration's key without its place: matches its counting twin
    label: str  # display name
    peer: str
    values: dict[str, Bytes]  # FOOTPRINT_LABELS -> bytes


@dataclass
class Footprint:
    rows: list[FootprintRow]
    shared: Bytes | None  # heap held outside both peers (credentials, DRBG)
    not_measured: dict[str, str] = field(default_factory=dict)  # label -> why ("does not fit in RAM (...)")


def footprint(ds: Dataset | None, labels: dict[str, str] | None = None) -> Footprint | None:
    """The memory image's footprint records, per configuration and peer (OK repetitions);
    `labels`: display names by host_key (those of the counting configurations)."""
    if ds is None or not len(ds.reps):
        return None
    voc = vocab()
    rec, rep = ds.events.rec, ds.events.rep
    ok = set(ds.reps.id[ds.reps.status == "OK"].tolist())
    inst = (rec["kind"] == voc.kinds["INSTANT"]) & np.isin(rep, list(ok))
    config_of = dict(zip(ds.reps.id.tolist(), ds.reps.config_id.tolist()))
    values: dict[tuple[int, int, str], list[int]] = {}
    for name in (*FOOTPRINT_LABELS, SHARED_LABEL):
        sel = np.flatnonzero(inst & (rec["label"] == voc.label_id[name]))
        for r, peer, value in zip(rep[sel].tolist(), rec["peer"][sel].tolist(), rec["value"][sel].tolist()):
            values.setdefault((config_of[r], peer, name), []).append(int(value))
    names = {cid: (labels or {}).get(host_key(c.key), c.suite_name) for cid, c in ds.configs.items()}
    rows = []
    for cid in sorted(ds.configs, key=names.__getitem__):
        for peer in ("client", "server"):
            found = {name: _bytes(values.get((cid, voc.peers[peer], name), [])) for name in FOOTPRINT_LABELS}
            if any(found.values()):
                rows.append(FootprintRow(cid, host_key(ds.configs[cid].key), names[cid], peer,
                                         {k: v for k, v in found.items() if v}))
    shared = [v for (_, _, name), vs in values.items() if name == SHARED_LABEL for v in vs]
    return Footprint(rows, _bytes(shared), {names[cid]: c.skip_reason for cid, c in ds.configs.items() if c.skip_reason})


def _bytes(values: list[int]) -> Bytes | None:
    return Bytes(max(values), min(values), len(values)) if values else None


# ---------------------------------------------------------------- device vs host
@dataclass(frozen=True)
class SideBySide:
    """One measure of one configuration: its count on the device, its time on the host."""

    config: str
    peer: str
    metric: str  # handshake_processing, step, crypto, write_processing_post, read_processing_pre
    label: str
    device: Summary  # in the device's unit
    host: Summary  # ns
    device_share: float  # % of the peer's handshake processing (steps and crypto); NaN otherwise
    host_share: float

    @property
    def per_host_ns(self) -> float:
        """Device units per ns of host time: constant if the two machines ranked alike."""
        return self.device.median / self.host.median if self.host.median > 0 else float("nan")


@dataclass(frozen=True)
class Rank:
    """A configuration's handshake processing (one peer) and its rank in each place."""

    config: str
    peer: str
    device: float
    host: float
    device_rank: int
    host_rank: int


@dataclass
class DeviceVsHost:
    source: str  # where the host's times come from
    rows: list[SideBySide]
    ranks: list[Rank]
    unmatched: list[str] = field(default_factory=list)  # device configurations the host did not run

    def of(self, config: str) -> list[SideBySide]:
        return [r for r in self.rows if r.config == config]

    @property
    def configs(self) -> list[str]:
        return list(dict.fromkeys(r.config for r in self.rows))

    @property
    def rank_changes(self) -> int:
        return sum(r.device_rank != r.host_rank for r in self.ranks)


SIDE_BY_SIDE = ("handshake_processing", "step", "crypto", "write_processing_post", "read_processing_pre")


def device_vs_host(device: Measured, host: Measured, source: str) -> DeviceVsHost | None:
    """The device's configurations beside the same configurations on the host."""
    if device.ds.unit.is_time or not host.ds.unit.is_time:
        return None
    by_key = {c.key: cid for cid, c in host.ds.configs.items()}
    pairs = [(cid, by_key.get(host_key(c.key))) for cid, c in device.ds.configs.items()]
    matched = [(d, h) for d, h in pairs if h is not None]
    unmatched = sorted(device.labels[d] for d, h in pairs if h is None)
    if not matched:
        return DeviceVsHost(source, [], [], unmatched)
    rows = []
    for d, h in sorted(matched, key=lambda p: device.labels[p[0]]):
        found = _rows(device, host, d, h)
        rows += found
        if not found:
            unmatched.append(f"{device.labels[d]} (no repetition of it on the host is in the statistics: failed, "
                             "flagged or descheduled; more host repetitions, or a quieter host)")
    return DeviceVsHost(source, rows, _ranks(rows), unmatched)


def _rows(device: Measured, host: Measured, d: int, h: int) -> list[SideBySide]:
    voc, wanted = vocab(), {METRIC[m] for m in SIDE_BY_SIDE}
    of_device, of_host = device.samples.of_config(d), host.samples.of_config(h)
    keys = sorted((k for k in of_device if k[2] in wanted),
                  key=lambda k: (k[1], SIDE_BY_SIDE.index(METRICS[k[2]].name), k[3]))
    out = []
    for _, peer, metric, label in keys:
        dv, hv = of_device[(d, peer, metric, label)][0], of_host.get((h, peer, metric, label), (None,))[0]
        if hv is None or not len(dv) or not len(hv):
            continue
        name = METRICS[metric].name
        totals = [of.get((c, peer, METRIC["handshake_processing"], NO_LABEL), (np.empty(0),))[0]
                  for of, c in ((of_device, d), (of_host, h))]
        share = [100 * float(np.median(v)) / float(np.median(t)) if name in ("step", "crypto") and len(t) else
                 float("nan") for v, t in zip((dv, hv), totals)]
        rng = rng_for(0, "device-vs-host", d, h, peer, metric, label)
        out.append(SideBySide(device.labels[d], voc.peer_name(peer), name, label_text(name, label),
                              summarize(dv, rng, mean_ci=False), summarize(hv, rng, mean_ci=False), *share))
    return out


def _ranks(rows: list[SideBySide]) -> list[Rank]:
    """Rank of each configuration by handshake processing, per peer, in both places (1 = cheapest)."""
    out = []
    for peer in ("client", "server"):
        totals = [r for r in rows if r.metric == "handshake_processing" and r.peer == peer]
        on_device = {r.config: i + 1 for i, r in enumerate(sorted(totals, key=lambda r: r.device.median))}
        on_host = {r.config: i + 1 for i, r in enumerate(sorted(totals, key=lambda r: r.host.median))}
        out += [Rank(r.config, peer, r.device.median, r.host.median, on_device[r.config], on_host[r.config])
                for r in sorted(totals, key=lambda r: r.device.median)]
    return out


# ---------------------------------------------------------------- identity of two runs
@dataclass(frozen=True)
class Identity:
    """Two device runs compared value by value: every record field of every repetition both
    stored (matched by configuration key and index), and the repetitions' header counts."""

    repetitions: int  # compared
    values: int  # compared
    differing: int
    only_one: int  # repetitions stored by one run only
    examples: list[str]  # the first few differences


RECORD_FIELDS = ("label", "kind", "peer", "seq", "t_ns", "cpu_ns", "value")
HEADER_FIELDS = ("status", "bytes_c2s", "bytes_s2c", "handshake_wall_ns", "handshake_cpu_ns")


def identity(a: Dataset, b: Dataset, examples: int = 5) -> Identity:
    """Count the values two runs disagree on (0 for a deterministic target, same image, plan)."""
    index_b = _by_repetition(b)
    compared = values = differing = only = 0
    seen: list[str] = []
    for (key, idx), pos_a in _by_repetition(a).items():
        pos_b = index_b.pop((key, idx), None)
        if pos_b is None:
            only += 1
            continue
        compared += 1
        ra, rb = _records(a, pos_a), _records(b, pos_b)
        n = min(len(ra), len(rb))
        header = [f for f in HEADER_FIELDS if getattr(a.reps, f)[pos_a] != getattr(b.reps, f)[pos_b]]
        off = {f: int(np.count_nonzero(ra[f][:n] != rb[f][:n])) for f in RECORD_FIELDS}
        extra = abs(len(ra) - len(rb)) * len(RECORD_FIELDS)
        values += len(HEADER_FIELDS) + n * len(RECORD_FIELDS) + extra
        differing += len(header) + sum(off.values()) + extra
        wrong = header + [f"{k} in {v} records" for k, v in off.items() if v]
        if (wrong or extra) and len(seen) < examples:
            seen.append(f"{key} repetition {idx}: {', '.join(wrong[:3]) or f'{len(ra)} vs {len(rb)} records'}")
    return Identity(compared, values, differing, only + len(index_b), seen)


def _by_repetition(ds: Dataset) -> dict[tuple[str, int], int]:
    keys = {cid: c.key for cid, c in ds.configs.items()}
    return {(keys[c], int(i)): pos for pos, (c, i) in enumerate(zip(ds.reps.config_id.tolist(), ds.reps.idx.tolist()))
            if c in keys}


def _records(ds: Dataset, pos: int) -> np.ndarray:
    where = np.searchsorted(ds.events.rep_ids, ds.reps.id[pos])
    if where >= len(ds.events.rep_ids) or ds.events.rep_ids[where] != ds.reps.id[pos]:
        return ds.events.rec[:0]
    first, count = ds.events.rep_first[where], ds.events.rep_count[where]
    return ds.events.rec[first:first + count]


# ---------------------------------------------------------------- does it fit
@dataclass(frozen=True)
class Budget:
    """What a part offers (`report --budget ram_kb=32,flash_kb=256,ms=500`): the RAM and flash
    one peer of a configuration must fit in (the device runs that peer alone), and the ms of its
    handshake processing (the first screen's recommendations)."""

    ram_kb: float | None = None
    flash_kb: float | None = None
    ms: float | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.ram_kb, self.flash_kb, self.ms))

    def __str__(self) -> str:
        return ", ".join(f"{name} {value:g} KiB" for name, value in (("RAM", self.ram_kb), ("flash", self.flash_kb))
                         if value is not None)

    def text(self) -> str:
        return ", ".join(f"{k} ≤ {v:g}" for k, v in vars(self).items() if v is not None)


@dataclass(frozen=True)
class Fit:
    """What one peer needs against a budget: the library's static RAM plus its heap peak, the heap
    held by neither peer (parsed credentials, DRBG: both peers' on the device, so an upper bound)
    and its stack high-water (the harness's buffers are not a product's); the library's flash."""

    ram: int
    flash: int
    verdict: str  # "fits", or what exceeds the budget and by how much


def peer_needs(values: dict[str, Bytes], library: dict[str, int], shared: int) -> tuple[int, int]:
    """The RAM and flash one peer needs on the part (bytes): the library's static RAM, its heap
    peak (handshake or connected, the larger), the heap neither peer owns and its stack; the
    library's flash (the link map's: harness and C runtime apart)."""
    heap = max((values[k].most for k in ("HEAP_PEAK_HANDSHAKE", "HEAP_PEAK_CONNECTED") if k in values), default=0)
    stack = values["STACK_HIGH_WATER"].most if "STACK_HIGH_WATER" in values else 0
    return library.get("ram", 0) + heap + shared + stack, library.get("flash", 0)


def library_bytes(device: "DeviceResults") -> dict[str, int]:
    """The library's own flash and static RAM in the counting image (builder/footprint.py)."""
    return next((im.parts.get("library", {}) for im in device.images if im.variant == "counting"), {})


def fit(values: dict[str, Bytes], library: dict[str, int], shared: int, budget: Budget) -> Fit:
    ram, flash = peer_needs(values, library, shared)
    over = [f"{what} {need / 1024:,.1f} KiB > {limit:g}" for what, need, limit in
            (("RAM", ram, budget.ram_kb), ("flash", flash, budget.flash_kb)) if limit is not None and need > limit * 1024]
    return Fit(ram, flash, "; ".join(over) if over else "fits")


def apply_budget(device: "DeviceResults", budget: Budget) -> None:
    """Each footprint row's fit against the budget, from the counting image's library bytes."""
    library = library_bytes(device)
    device.budget = budget
    if device.footprint:
        shared = device.footprint.shared.most if device.footprint.shared else 0
        device.fits = {(f.config_id, f.peer): fit(f.values, library, shared, budget) for f in device.footprint.rows}


# ---------------------------------------------------------------- the section
@dataclass
class DeviceResults:
    """Everything the report's device section shows."""

    target: str
    cpu: str  # HELLO device.cpu
    unit: Unit
    images: list[DeviceImage]  # the firmware images the store ran (layout, SHA-256, config)
    footprint: Footprint | None  # from the memory image's configurations (plan [device] memory = true)
    vs_host: DeviceVsHost | None = None  # the store's host configurations, or a second experiment's
    identity: Identity | None = None  # against a second device run (report --compare-with)
    identity_with: str = ""
    budget: Budget | None = None  # report --budget: each footprint row's fit (apply_budget)
    fits: dict[tuple[int, str], Fit] = field(default_factory=dict)


def device_results(measured: Measured, host: Measured | None = None) -> DeviceResults | None:
    """The device section of an analysed device dataset (None for a host dataset); `host`:
    the same store's host configurations, analysed."""
    ds = measured.ds
    if ds.target is None:
        return None
    hello = next((a["hello"] for a in ds.agents.values() if a.get("target") == ds.target), {})
    by_key = {host_key(c.key): measured.labels[cid] for cid, c in ds.configs.items()}
    vs_host = device_vs_host(measured, host, "the host configurations of this store") if host else None
    return DeviceResults(ds.target, str((hello.get("device") or {}).get("cpu", "?")), ds.unit, ds.devices,
                         footprint(ds.footprint, by_key), vs_host)
