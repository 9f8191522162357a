# SPDX-License-Identifier: Apache-2.0
"""The prediction model (docs/predict.md) on cases computed by hand: two flights of known
bytes over a link of known rate and delay, over UDP and over TCP; seeded loss; the link
presets shared with tlsbench-link; crossovers. No agent, no store."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tlsbench.analysis.models.energy.profiles import operating_point, parse
from tlsbench.analysis.models.predict import PredictError
from tlsbench.analysis.models.predict.links import Direction, Link, parse_link, presets, presets_file
from tlsbench.analysis.models.predict.model import energies, rank, run_draws, summarize_outcomes, Options
from tlsbench.analysis.models.predict.script import CPU, NEED, SEND, PeerScript, Script
from tlsbench.analysis.models.predict.sim import Stack, simulate
from tlsbench.analysis.models.predict.sweep import find_crossovers

ROOT = Path(__file__).resolve().parents[1]
MS = 1e6
# 80 kbit/s: one byte is 100 µs on the air; 10 ms one way.
LINK = Link("hand", Direction(rate=80_000, delay=10), Direction(rate=80_000, delay=10))


def two_flights(client_bytes: int = 100, server_bytes: int = 200, server_cpu_ms: float = 1.0) -> Script:
    """The client sends one flight and waits for the server's; the server computes, answers."""
    client = PeerScript(((SEND, client_bytes), (NEED, server_bytes)), handshake_end=2)
    server = PeerScript(((NEED, client_bytes), (CPU, server_cpu_ms * MS), (SEND, server_bytes)), handshake_end=3)
    return Script(1, client, server)


def test_two_flights_over_udp_take_serialization_delay_and_processing():
    out = simulate(two_flights(), LINK, Stack("udp"), "client")
    # client: 100 + 28 header bytes = 12.8 ms on the air + 10 ms; the server starts then, computes 1 ms,
    # its 200 + 28 bytes take 22.8 ms + 10 ms back.
    assert out.completed
    assert out.start_ns["server"] == pytest.approx(22.8 * MS)
    assert out.duration_ns("client") == pytest.approx((12.8 + 10 + 1 + 22.8 + 10) * MS)
    assert out.duration_ns("server") == pytest.approx(1 * MS)  # it answers and is done
    assert out.bytes == {"d2p": 128, "p2d": 228} and out.packets == {"d2p": 1, "p2d": 1}
    assert out.tx_ns["client"] == pytest.approx(12.8 * MS) and out.rx_ns["client"] == pytest.approx(22.8 * MS)


def test_the_device_on_the_other_side_sends_on_the_uplink():
    out = simulate(two_flights(), LINK, Stack("udp"), "server")
    assert out.bytes == {"d2p": 228, "p2d": 128}  # d2p is the device's (the server's) direction now


def test_two_flights_over_tcp_follow_the_handshake_and_the_acks():
    out = simulate(two_flights(), LINK, Stack("tcp", nagle=False), "client")
    # SYN (60 B) 6 ms + 10, SYN-ACK back: the client starts at 32 ms and sends its ACK (52 B,
    # 5.2 ms) and then its 100 bytes (152 B, 15.2 ms): they arrive at 37.2 + 15.2 + 10 = 62.4 ms.
    # The server (quick-ack mode) acknowledges at once (5.2 ms on the air), computes 1 ms and
    # sends 252 bytes behind its ACK: 67.6 + 25.2 + 10 = 102.8 ms.
    assert out.completed
    assert out.start_ns["client"] == pytest.approx(32 * MS)
    assert out.start_ns["server"] == pytest.approx(47.2 * MS)  # the ACK of the handshake arrived
    assert out.end_ns["client"] == pytest.approx(102.8 * MS)
    assert out.duration_ns("client") == pytest.approx(70.8 * MS)
    assert out.retransmissions == 0


def test_a_link_mtu_below_the_packets_is_a_handshake_that_never_finishes():
    link = Link("mtu", Direction(rate=80_000, delay=10, mtu=200), Direction(rate=80_000, delay=10, mtu=200))
    out = simulate(two_flights(server_bytes=400), link, Stack("udp", iface_mtu=1500), "client")
    assert not out.completed and math.isinf(out.duration_ns("client"))


def test_frames_add_their_overhead_and_datagrams_fragment_at_the_interface_mtu():
    link = Link("frames", Direction(rate=80_000, delay=0, frame=100, frame_overhead=10), Direction(rate=80_000))
    out = simulate(two_flights(client_bytes=1000), link, Stack("udp", iface_mtu=576), "client")
    # 1008 bytes of UDP in fragments of 552 (576 − 20, a multiple of 8): 552 + 456, each + 20 of IP
    assert out.packets["d2p"] == 2 and out.bytes["d2p"] == 1048
    assert out.fragments["d2p"] == 6 + 5  # ceil(572/100) + ceil(476/100)
    assert out.tx_ns["client"] == pytest.approx((1048 + 11 * 10) * 100e3)


def test_dtls_loses_a_flight_and_retransmits_it_when_its_timer_expires():
    lossy = Link("lossy", Direction(rate=80_000, delay=10, loss=30), Direction(rate=80_000, delay=10, loss=30))
    stack = Stack("udp", dtls_min_ms=1000)
    lossless = simulate(two_flights(), LINK, stack, "client").duration_ns("client")
    outs = [simulate(two_flights(), lossy, stack, "client", np.random.default_rng([7, k])) for k in range(300)]
    d = np.array([o.duration_ns("client") for o in outs])
    assert all(o.completed for o in outs)
    assert np.isclose(d, lossless).mean() == pytest.approx(0.7 * 0.7, abs=0.08)  # neither flight lost
    # a loss costs a timer at least (a resent answer skips the server's 1 ms of processing)
    assert (d[~np.isclose(d, lossless)] >= lossless + 1000 * MS - 1 * MS - 1).all()
    again = [simulate(two_flights(), lossy, stack, "client", np.random.default_rng([7, k])).duration_ns("client")
             for k in range(300)]
    assert np.array_equal(d, again)  # seeded: the same draws, the same predictions


def test_tcp_recovers_a_lost_segment():
    lossy = Link("lossy", Direction(rate=80_000, delay=10, loss=20), Direction(rate=80_000, delay=10, loss=20))
    outs = [simulate(two_flights(), lossy, Stack("tcp"), "client", np.random.default_rng([3, k])) for k in range(200)]
    # (the 3-way handshake's timers fire on a tick: 1 s, 2 s, ... plus half a tick)
    assert all(o.completed for o in outs)
    assert any(o.retransmissions for o in outs)
    lossless = simulate(two_flights(), LINK, Stack("tcp"), "client").duration_ns("client")
    assert min(o.duration_ns("client") for o in outs) == pytest.approx(lossless)


def test_a_lossy_link_gives_a_distribution_with_the_lossless_case_inside():
    lossy = Link("lossy", Direction(rate=80_000, delay=10, loss=10), Direction(rate=80_000, delay=10, loss=10))
    outs = run_draws([two_flights()], lossy, Stack("udp"), "client", draws=100, seed=1)
    p = summarize_outcomes(outs, [two_flights()], 1, "hand", lossy, "client", Stack("udp"), Options())
    assert p.n_draws == 100 and p.duration.n == 100
    assert p.p5_ns <= p.duration.median <= p.p95_ns and p.p95_ns > p.p5_ns


def test_energy_charges_cpu_and_radio_above_idle():
    profile = parse('''name = "hand"
description = "hand"
supply_voltage_v = 1.0
default_frequency_mhz = 10
[[sources]]
id = "x"
document = "d"
section = "s"
[[cpu]]
frequency_mhz = 10
power_mw = 11
source = "x"
[radio_tx]
power_mw = 21
source = "x"
[radio_rx]
power_mw = 31
source = "x"
[idle]
power_mw = 1
source = "x"
''', "hand.toml")
    point = operating_point(profile)
    out = simulate(two_flights(), LINK, Stack("udp"), "server")  # the server computes 1 ms
    above, total = energies(out, "server", point, "idle")
    # server: 1 ms CPU; it sends nothing within its handshake window and receives before it starts
    assert above == pytest.approx(10e-3 * 1e-3)
    assert total == pytest.approx(above + 1e-3 * 1e-3)
    out = simulate(two_flights(), LINK, Stack("udp"), "client")
    above, total = energies(out, "client", point, "idle")
    assert above == pytest.approx(20e-3 * 12.8e-3 + 30e-3 * 22.8e-3)
    listening, _ = energies(out, "client", point, "rx")
    assert listening > above  # waiting with the radio on costs more than idling


def test_rank_shares_a_place_while_intervals_overlap():
    def pred(samples: list[float], cid: int):
        outs = []
        for s in samples:
            o = simulate(two_flights(server_cpu_ms=s), LINK, Stack("udp"), "client")
            outs.append(o)
        return summarize_outcomes(outs, [two_flights()], cid, str(cid), LINK, "client", Stack("udp"), Options())

    fast, same, slow = pred([1, 1.1, 0.9], 1), pred([1, 1.05, 0.95], 2), pred([50, 51, 49], 3)
    ranked = rank([slow, same, fast])
    assert [r.prediction.config_id for r in ranked][2] == 3 and ranked[2].rank == 3 and not ranked[2].tied
    assert ranked[1].tied and ranked[1].rank == 1


def test_crossovers_are_interpolated_where_two_lines_swap():
    xs = np.array([1e3, 1e4, 1e5, 1e6])
    a = np.array([100.0, 50.0, 10.0, 5.0])  # more bytes, less processing: slow on slow links
    b = np.array([60.0, 30.0, 12.0, 9.0])
    found = find_crossovers(xs, {1: a, 2: b}, "duration", True, lambda i, j: math.nan)
    assert len(found) == 1
    c = found[0]
    assert 1e4 < c.x < 1e5 and c.below == 2 and c.above == 1
    t = (20.0) / (20.0 + 2.0)  # where a − b goes from +20 to −2, in log x
    assert c.x == pytest.approx(10 ** (4 + t))


def test_links_from_presets_overrides_and_parameters():
    nb = parse_link("nb-iot")
    assert nb.d2p.rate == 62_500 and nb.p2d.rate == 26_000 and nb.d2p.mtu == 1280 and nb.d2p.delay == 300
    assert any(c.source == "ts36306" for c in nb.citations)
    lossy = parse_link("ieee802154,loss=5,p2d-rate=100k")
    assert lossy.d2p.loss == lossy.p2d.loss == 5 and lossy.d2p.rate == 250_000 and lossy.p2d.rate == 100_000
    free = parse_link("rate=62.5k,delay=300")
    assert free.d2p.rate == 62_500 and free.p2d.delay == 300 and free.preset is None
    for bad, says in (("carrier-pigeon", "unknown link preset"), ("ieee802154,los=5", "did you mean loss"),
                      ("rate=fast", "not a number"), ("loss=150", "at most 100"), ("ieee802154,5", "key=value")):
        with pytest.raises(PredictError, match=says):
            parse_link(bad)


def test_every_preset_figure_cites_a_declared_source():
    doc = presets_file()
    ids = {s.id for s in doc.source} | {"assumption"}
    for p in doc.preset:
        assert p.summary and p.description
        for part in (p.both, p.d2p, p.p2d):
            for _, fig in part:
                assert fig is None or fig.source in ids


def test_the_emulator_table_is_generated_from_the_same_presets(tmp_path):
    out = tmp_path / "gen.h"
    subprocess.run([sys.executable, str(ROOT / "link" / "tools" / "genpresets.py"), str(ROOT / "spec" / "links.toml"),
                    str(out)], check=True)
    text = out.read_text()
    for name, link in presets().items():
        line = next(line for line in text.splitlines() if line.strip().startswith(f'{{"{name}"'))
        for d in (link.d2p, link.p2d):
            if d.rate:
                assert f".rate_bps = UINT64_C({int(d.rate)})" in line
            if d.delay:
                assert f".delay_ns = UINT64_C({int(d.delay * 1e6)})" in line
            if d.frame:
                assert f".frame_bytes = {d.frame}u" in line
