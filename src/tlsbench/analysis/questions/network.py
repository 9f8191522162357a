# SPDX-License-Identifier: Apache-2.0
"""Two-process configurations: what the link did to the handshake, next to what the
device computed, from the same repetitions (docs/networks.md, "What the report shows").

- duration: the device agent's handshake stop–start time (`handshake_wall_ns`): processing,
  I/O and network waiting; every successful repetition, retransmitted ones included (the
  link's effect is what is measured);
- processing: the device peer's network-invariant handshake cost (sum of step − nested
  I/O − tracer cost); retransmitted repetitions excluded by default, like every
  invariant figure (a retransmission is a step that ran twice);
- CPU: the device thread's CPU time over the handshake phase (processing plus the CPU
  cost of its own socket calls); unlike step wall times it does not grow when the
  scheduler gives the core to the peer agent or anything else, so on a busy machine it is
  the steadier invariant figure;
- bytes, packets and link-layer fragments on the wire: what the emulated link carried for
  the repetition's connection, IP headers and ACKs included (a link with a frame size cuts
  each packet into fragments); on loopback the agents' transport counters (TLS/DTLS bytes),
  labelled as such."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from tlsbench.analysis.derive.dataset import Dataset, excluding_flags, ok_status
from tlsbench.analysis.derive.measures import METRIC, NO_LABEL, MeasureTable
from tlsbench.analysis.stats.stats import Summary, rng_for, summarize
from tlsbench.analysis.vocab import option_names, vocab


VARIANT_SWEEPS = ("dtls_mtu", "mss", "max_fragment")  # swept by the [network] section itself


@dataclass(frozen=True)
class NetworkRow:
    """One two-process configuration's results."""

    config_id: int
    library: str
    peer_library: str
    suite: str
    group: str
    credential: str
    transport: str  # tcp / udp
    protocol: str  # TLS / DTLS
    device_role: str
    link: str  # label: "loopback" or the link's name / preset and parameters
    variant: dict[str, Any]  # config.network_json
    n: int  # successful repetitions
    retransmitted: int  # of which flagged RETRANSMITTED
    failed: int
    duration: Summary | None  # ns
    processing: Summary | None  # ns, device peer
    cpu: Summary | None  # ns, the device thread's CPU time in the handshake phase
    wire_bytes: Summary | None  # both directions
    wire_packets: Summary | None
    wire_source: str  # "link" (IP packets on the emulated link) or "transport" (agent counters)
    wire_fragments: Summary | None = None  # link-layer frames (= packets on a link without a frame size)
    duration_no_retransmit: Summary | None = None  # ns: stop–start of the successful repetitions that did not retransmit
    options: str = ""  # the RUN options set (spec [options] names), e.g. "CONNECTION_ID MUTUAL_AUTH"

    @property
    def ci_ratio(self) -> float:
        """How much narrower the processing CI is than the stop–start CI (± % over ± %)."""
        if not self.duration or not self.processing or self.processing.median_ci_pct <= 0:
            return float("nan")
        return self.duration.median_ci_pct / self.processing.median_ci_pct


def _link_traffic(ds: Dataset) -> dict[int, tuple[float, float, float]]:
    """repetition id -> (bytes, packets, link-layer fragments) on the link, both directions."""
    return {rep: (float(t.d2p_bytes + t.p2d_bytes), float(t.d2p_packets + t.p2d_packets),
                  float(t.d2p_fragments + t.p2d_fragments)) for rep, t in ds.link_traffic.items()}


def _summary(values: np.ndarray, seed: int, *key: object) -> Summary | None:
    return summarize(values, rng_for(seed, *key), mean_ci=False) if len(values) else None


def network_results(ds: Dataset, table: MeasureTable, seed: int, include_flagged: bool = False) -> list[NetworkRow]:
    """One row per two-process configuration, in config order."""
    configs = {cid: c for cid, c in ds.configs.items() if getattr(c, "network_json", None)}
    if not configs:
        return []
    peers, reps = vocab().peers, ds.reps
    ok = reps.status == ok_status()
    retransmitted = (reps.flags & vocab().flags["RETRANSMITTED"]) != 0
    invariant = ok & (include_flagged | ((reps.flags & excluding_flags()) == 0))
    link = _link_traffic(ds)
    hp = table.metric == METRIC["handshake_processing"]
    rows = []
    for cid, c in configs.items():
        mine = reps.config_id == cid
        if c.skip_reason and not mine.any():
            continue  # refused by an agent before any repetition: the status lists why
        sel = np.flatnonzero(mine & ok)
        device_peer = peers[c.device_role]
        inv_ids = reps.id[mine & invariant]
        proc = table.value[hp & (table.peer == device_peer) & (table.label == NO_LABEL) & np.isin(table.rep, inv_ids)]
        on_link = [link[i] for i in reps.id[sel] if i in link]
        if on_link:
            wire = np.array(on_link)
            source = "link"
        else:
            wire = np.column_stack([reps.bytes_c2s[sel] + reps.bytes_s2c[sel], np.full((len(sel), 2), np.nan)])
            source = "transport"
        cpu = reps.handshake_cpu_ns[mine & invariant]
        variant = json.loads(c.network_json)
        rows.append(NetworkRow(
            cid, c.library, c.peer_library or c.library, c.suite_name, c.grp, c.credential, c.transport,
            "DTLS" if c.transport == "udp" else "TLS", c.device_role, c.link_label or "loopback", variant,
            len(sel), int(np.count_nonzero(retransmitted[sel])), int(np.count_nonzero(mine & ~ok)),
            _summary(reps.handshake_wall_ns[sel].astype(float), seed, "net-duration", cid),
            _summary(proc, seed, "net-processing", cid),
            _summary(cpu[(cpu >= 0)].astype(float), seed, "net-cpu", cid),
            _summary(wire[:, 0], seed, "net-bytes", cid),
            _summary(wire[:, 1], seed, "net-packets", cid) if source == "link" else None,
            source, _summary(wire[:, 2], seed, "net-fragments", cid) if source == "link" else None,
            _summary(reps.handshake_wall_ns[mine & ok & ~retransmitted].astype(float), seed, "net-duration-clean", cid),
            option_names(c.options or 0)))
    return rows


def swept_parameters(rows: list[NetworkRow]) -> list[str]:
    """Link parameters (and the DTLS MTU / max fragment) set in every row and differing
    between rows: the x axes of the sweep figures (a sweep sets its parameter everywhere,
    e.g. loss = 0 and loss = 5)."""
    values: dict[str, list[str]] = {}
    for r in rows:
        params = {**(r.variant.get("link") or {}), **{k: r.variant.get(k) for k in VARIANT_SWEEPS}}
        for k, v in params.items():
            if k not in ("name", "preset", "d2p", "p2d") and v is not None:
                values.setdefault(k, []).append(json.dumps(v))
    return [k for k, vs in values.items() if len(set(vs)) > 1]


def sweep_value(row: NetworkRow, param: str) -> float | None:
    """The row's value of a swept parameter; None where the row does not set it (a TCP row
    has no DTLS MTU; a link without the parameter keeps its preset's, unknown here)."""
    value = (row.variant.get("link") or {}).get(param, row.variant.get(param))
    if value is None:
        return None
    return float(str(value).rstrip("kMG")) * {"k": 1e3, "M": 1e6, "G": 1e9}.get(str(value)[-1:], 1)
