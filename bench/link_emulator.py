# SPDX-License-Identifier: Apache-2.0
"""tlsbench-link: forwarding capacity (unshaped) and accuracy against its settings (root only).

Capacity: a TCP bulk transfer and a flood of small UDP datagrams from the device namespace
to the peer namespace through an unshaped link. Accuracy: the figures of the namespace tests
(link/tests/test_link_netns.py: loss, delay + jitter, rate). Updates the "Link
emulator" section of docs/benchmarks.md. Without root it says so and changes nothing.

    sudo .venv/bin/python bench/link_emulator.py [--link path/to/tlsbench-link] [--no-update]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, machine, today, update_section  # noqa: E402

TESTS = REPO / "agent" / "link" / "tests"
sys.path.insert(0, str(TESTS))
import test_link_netns as t  # noqa: E402

CANDIDATES = [REPO / ".venv" / "bin" / "tlsbench-link", REPO / "build" / "link" / "tlsbench-link"]
TCP_BYTES = 200_000_000
UDP_PACKETS = 200_000


def capacity(link_bin: str) -> dict:
    out = {}
    with t.Link(link_bin, f"tbb-cap-{os.getpid()}") as link:
        link.start("--slots", "16384")
        sink = link.server(t.PEER, "tcp-sink", "--port", "7710", "--bytes", str(TCP_BYTES), "--deadline", "60")
        link.client(t.DEV, "tcp-source", "--to", t.PEER_ADDR, "--port", "7710", "--bytes", str(TCP_BYTES),
                    timeout=90)
        r = t.result(sink, timeout=90)
        tcp = link.stop()
        secs = (r["last_ns"] - r["first_ns"]) / 1e9
        pkts = tcp["d2p"]["delivered"]["packets"] + tcp["p2d"]["delivered"]["packets"]
        out["tcp_goodput_mbps"] = r["bytes"] * 8 / secs / 1e6
        out["tcp_pps"] = pkts / secs
        out["tcp_secs"] = secs
        out["tcp_late_us"] = tcp["d2p"]["late_us"]

        link.start("--slots", "16384")
        rx = link.server(t.PEER, "recv", "--port", "7711", "--count", str(UDP_PACKETS), "--deadline", "30")
        snd = link.client(t.DEV, "send", "--to", t.PEER_ADDR, "--port", "7711", "--count", str(UDP_PACKETS),
                          "--size", "64", "--interval-us", "0", timeout=60)
        got = len(t.result(rx, timeout=40)["seqs"])
        udp = link.stop()["d2p"]
        out["udp_offered_pps"] = UDP_PACKETS / snd["elapsed_s"]
        out["udp_forwarded_pps"] = udp["delivered"]["packets"] / snd["elapsed_s"]
        out["udp_arrived"] = udp["sent"]["packets"]
        out["udp_delivered"] = udp["delivered"]["packets"]
        out["udp_received"] = got
        out["udp_send_errors"] = snd["errors"]
    return out


def accuracy(link_bin: str) -> dict:
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in ("loss", "delay", "rate"):
            report = Path(tmp) / f"{case}.json"
            rc = subprocess.run([sys.executable, str(TESTS / "test_link_netns.py"), "--link", link_bin,
                                 "--report", str(report), case]).returncode
            figures.update(json.loads(report.read_text()) if report.exists() else {})
            figures[f"{case}_ok"] = rc == 0
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--link", help="the tlsbench-link binary (default: .venv/bin, then build/link)")
    ap.add_argument("--no-update", action="store_true", help="do not write docs/benchmarks.md")
    a = ap.parse_args()
    if not t.privileged():
        print("link_emulator: needs root and /dev/net/tun: skipped, docs/benchmarks.md unchanged")
        return 0
    link_bin = a.link or next((str(p) for p in CANDIDATES if p.exists()), None)
    if not link_bin:
        print("link_emulator: tlsbench-link not found (make agent)")
        return 1
    cap = capacity(link_bin)
    acc = accuracy(link_bin)
    print(json.dumps({"capacity": cap, "accuracy": acc}, indent=1))
    ok = all(acc.get(f"{c}_ok") for c in ("loss", "delay", "rate"))
    if a.no_update:
        return 0 if ok else 1
    yes = lambda c: "yes" if acc.get(f"{c}_ok") else "**no**"
    update_section("Link emulator", f"""
Machine: {machine()}; {today()}.

`tlsbench-link` between two namespaces (TUN devices, one forwarding process), device → peer.

Forwarding capacity, unshaped (no rate, delay or loss):

| traffic | result | packets/s through the emulator | emulator late (mean / max) |
|---|---:|---:|---:|
| TCP bulk, {TCP_BYTES // 1_000_000} MB, 1500-byte MTU | {cap['tcp_goodput_mbps']:.0f} Mbit/s goodput in {cap['tcp_secs']:.2f} s | {cap['tcp_pps']:.0f} (data + ACKs) | {cap['tcp_late_us']['mean']:.0f} / {cap['tcp_late_us']['max']:.0f} µs |
| UDP flood, {UDP_PACKETS} × 64-byte payload (92-byte packets), one Python sender | {cap['udp_offered_pps']:.0f} datagrams/s offered | {cap['udp_forwarded_pps']:.0f} | |

UDP flood: {cap['udp_arrived']} of {UDP_PACKETS} packets reached the emulator (the others were
dropped silently by the device namespace's TUN transmit queue, 500 packets, because the
forwarder drained them slower than the sender offered), {cap['udp_delivered']} were forwarded,
{cap['udp_received']} read by the receiver, {cap['udp_send_errors']} send errors. The Python sender,
the forwarder and both namespaces' softirqs share 2 CPUs, so these figures are what this
machine sustains end to end, a lower bound of the forwarder alone.

Accuracy against the settings (the namespace tests' own measurements, one run each):

| property | setting | measured | tolerance | pass |
|---|---|---|---|---|
| packet loss, {acc.get('loss_packets', 0)} UDP datagrams, seed 1 | {acc.get('loss_set', 0):.1%} | {acc.get('loss_measured', 0):.2%} | ± 1.5 points | {yes('loss')} |
| one-way delay (median of 50) | {acc.get('delay_set_ms', 0)} ms | {acc.get('one_way_median_ms', 0):.2f} ms | ± 10% | {yes('delay')} |
| ICMP echo RTT, answered by the peer's kernel (median of {acc.get('rtt_count', 0)}) | 2 × {acc.get('delay_set_ms', 0)} ms | {acc.get('rtt_median_ms', 0):.2f} ms | ± 10% | {yes('delay')} |
| delay with jitter (100 datagrams) | 20 ± {acc.get('jitter_set_ms', 0)} ms uniform | median {acc.get('jitter_median_ms', 0):.2f}, σ {acc.get('jitter_stdev_ms', 0):.2f} (uniform: 2.89), range {acc.get('jitter_min_ms', 0):.2f}..{acc.get('jitter_max_ms', 0):.2f} ms | median ± 10%, σ ± 25% | {yes('delay')} |
| emulator lateness (delivery after the model's time, --realtime) | 0 | mean {acc.get('late_mean_us', 0):.0f} µs, max {acc.get('late_max_us', 0):.0f} µs | mean < 1 ms | {yes('delay')} |
| rate, {acc.get('rate_bytes', 0) // 1000} KB over TCP | {acc.get('rate_set_bps', 0) / 1e6:.1f} Mbit/s | IP level {acc.get('rate_ip_bps', 0) / 1e6:.3f}, goodput {acc.get('rate_goodput_bps', 0) / 1e6:.3f} Mbit/s | ± 10% | {yes('rate')} |

One-way delays: sender's CLOCK_REALTIME stamp before `sendto` to the receiving socket's
kernel timestamp (SO_TIMESTAMPNS), so the receiving process's wake-up is excluded; the
emulator's own lateness is reported separately. Goodput is
below the rate by the TCP/IP headers (52 of 1500 bytes with timestamps).
Rerun: `.venv/bin/python bench/link_emulator.py` (as root).
""")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
