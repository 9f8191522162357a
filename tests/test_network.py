# SPDX-License-Identifier: Apache-2.0
"""Two-process runs from the host: the [network] plan section, paired REPs in the store,
link traffic attributed per repetition, retransmission flagging, the report's network
section. Loopback tests need nothing; emulated-link tests need root and /dev/net/tun
(like the link's own tests) and are skipped with the reason otherwise."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import small_plan
from stores import load_path, reader
from tlsbench import plan
from tlsbench.core import spec
from tlsbench.run import protocol
from tlsbench.analysis.derive import measures
from tlsbench.analysis.questions.network import network_results
from tlsbench.app.run import run_experiment
from tlsbench.run.link import PACKET, Window, attribute
from tlsbench.run.placement import choose
from tlsbench.run.records import pair_outcome
from tlsbench.plan.network import variants
from tlsbench.schema import PeerRepetition
from tlsbench.store.sqlite import testing
from tlsbench.app.report import report_after_run

SUITE = '["TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8"]'
PRIVILEGED = os.geteuid() == 0 and os.path.exists("/dev/net/tun")
needs_link = pytest.mark.skipif(not PRIVILEGED, reason="emulated links need root and /dev/net/tun")


def network_plan(name: str, network: str, repetitions: int = 4) -> plan.LoadedPlan:
    return small_plan(name, repetitions=repetitions, rounds=2, suites=SUITE, extra=network)


def stored_pairs(folder: Path) -> list[tuple]:
    """Each repetition, by id: (its configuration, its row, its records, its peer agent's
    peer_repetition row or None, what the link carried or None)."""
    db = folder / "tlsbench.db"
    with reader(db) as st:
        configs, traces, traffic = {c.id: c for c in st.config_rows()}, dict(st.traces()), st.link_traffic()
        reps = st.repetition_rows()
    peers = {p["repetition_id"]: p for p in testing.rows(db, "peer_repetition")}
    return [(configs[r.config_id], r, traces.get(i), peers.get(i), traffic.get(i)) for i, r in reps]


# ---------------------------------------------------------------------- the plan section
def test_sweeps_apply_to_their_transport_only():
    loaded = network_plan("p", '[network]\ntransports = ["tcp", "udp"]\nnagle = [true, false]\nmss = [0, 536]\n'
                               'dtls = { mtu = [0, 512] }\nmax_fragment = [0, 1024]\n')
    vs = variants(loaded.plan.network)
    assert sum(v.transport == "tcp" for v in vs) == 2 * 2 * 2  # nagle x mss x max_fragment
    assert sum(v.transport == "udp" for v in vs) == 2 * 2  # dtls mtu x max_fragment
    assert len({v.key() for v in vs}) == len(vs)


@pytest.mark.parametrize("section, complaint", [
    ('[network]\ntransports = ["quic"]\n', "network.transports"),
    ('[network]\ndevice = "gateway"\n', "network.device"),
    ('[network]\nmax_fragment = [100]\n', "512, 1024"),
    ('[network]\ndtls = { mtu = [100] }\n', "at least 256"),
    ('[network]\n[[network.links]]\nrate = "fast"\n', "network.links[0].rate"),
    ('[network]\n[[network.links]]\nloss = 150\n', "network.links[0].loss"),
    ('[network]\n[[network.links]]\nlos = 5\n', "did you mean loss"),
    ('transport = "tcp"\n[network]\n', "remove the top-level transport"),
    ('[network]\ndtls = { timeout_min_ms = 3000, timeout_max_ms = 1000 }\n', "timeout_min_ms (3000) is above"),
])
def test_bad_network_sections_name_the_field(section, complaint):
    with pytest.raises(plan.PlanError) as err:
        network_plan("bad", section)
    assert complaint in str(err.value)


def test_plans_without_network_keep_their_hash():
    assert "network" not in plan.load().plan.resolved_json()


# ---------------------------------------------------------------------- attribution
def _packets(*rows_: tuple) -> np.ndarray:
    """(arrival, done, bytes, dir, fate, dev_port, peer_port, proto) -> packet log records."""
    out = np.zeros(len(rows_), dtype=PACKET)
    for i, (t, done, size, d, fate, dev, peer, proto) in enumerate(rows_):
        out[i] = (t, done, size, 1, d, fate, dev, peer, proto, b"\0\0\0")
    return out


def test_flows_belong_to_the_repetition_their_first_packet_falls_in():
    packets = _packets(
        (100, 110, 60, 0, 0, 40001, 4433, 6),   # rep 0: SYN
        (120, 130, 1500, 1, 0, 40001, 4433, 6),
        (125, 0, 1500, 1, 3, 40001, 4433, 6),   # lost on the link
        (150, 160, 40, 0, 0, 40002, 4433, 6),   # warm-up flow: no window
        (205, 215, 60, 0, 0, 40003, 4433, 6),   # rep 1
        (290, 400, 52, 0, 0, 40001, 4433, 6),   # rep 0's late FIN-ACK, after its window
    )
    got = attribute(packets, [Window(0, 90, 140), Window(1, 200, 300)])
    assert set(got) == {0, 1}
    r0 = got[0]
    assert (r0.d2p_packets, r0.d2p_bytes, r0.p2d_packets, r0.p2d_bytes, r0.p2d_lost) == (2, 112, 2, 3000, 1)
    assert (r0.first_ns, r0.last_ns) == (100, 400)
    assert got[1].d2p_packets == 1 and got[1].p2d_packets == 0


# ---------------------------------------------------------------------- pairing by connection
S = spec.load()


def _device(status: str = "OK", ports: tuple[int, int] = (16389, 40001), reason: str = "") -> protocol.Rep:
    header = protocol.RepHeader(1, 5, S.status.value(status), S.peers.none, 0, 0, 0, 0, 10, 20, 1, 2, 3,
                                role=S.roles.client, client_port=ports[0], server_port=ports[1])
    return protocol.Rep(header, b"", reason)


def _peer(status: str = "OK", ports: tuple[int | None, int | None] = (16389, 40001),
          reason: str | None = None) -> PeerRepetition:
    return PeerRepetition(2, "server", status, 0, 0, 10, 20, 1, 1, 0, 1, 2, 3, b"", *ports, reason)


def test_agents_that_agree_on_the_connection_and_succeed_make_an_ok_pair():
    assert pair_outcome(S, _device(), _peer()) == ("OK", None, None)


def test_agents_that_ran_different_connections_are_never_a_valid_pair():
    status, failed_peer, why = pair_outcome(S, _device(), _peer(ports=(16390, 40001)))
    assert (status, failed_peer) == ("MISMATCHED", None)
    assert "device (16389, 40001), peer (16390, 40001)" in why
    assert "device (client): OK" in why and "peer (server): OK" in why


def test_a_pair_where_one_agent_failed_is_failed_with_both_reasons():
    late = "handshake: client: nothing from the other agent within 31500 ms"
    status, failed_peer, why = pair_outcome(S, _device("HANDSHAKE_FAILED", reason=late), _peer())
    assert (status, failed_peer) == ("HANDSHAKE_FAILED", None) and why == f"device (client): {late}; peer (server): OK"
    never = "setup: transport udp: no DTLS ClientHello for repetition 5 arrived"
    status, failed_peer, why = pair_outcome(S, _device(), _peer("SETUP_FAILED", (None, None), never))
    assert (status, failed_peer) == ("SETUP_FAILED", "server")  # a side without a connection failed: not a mismatch
    assert why == f"device (client): OK; peer (server): {never}"


# ---------------------------------------------------------------------- loopback, no root
def test_tls_and_dtls_over_loopback_pair_two_agents(tmp_path, agent_path):
    loaded = network_plan("lo", '[network]\ntransports = ["tcp", "udp"]\ndevice = ["client", "server"]\n')
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert summary.stored == 4 * 4 and summary.failed == 0 and not summary.skipped_configs
    folder = summary.folder
    paired = [(c.transport, c.device_role, r.role, p["role"], len(records), len(p["records"]))
              for c, r, records, p, _ in stored_pairs(folder) if p is not None and records is not None]
    assert len(paired) == 16
    for transport, device_role, role, peer_role, n_dev, n_peer in paired:
        assert role == device_role and peer_role != role  # the device's REP is the row, the peer's is beside it
        assert n_dev > 0 and n_peer > 0
    ds = load_path(folder / "tlsbench.db")
    results = network_results(ds, measures.measures(ds), seed=1)
    assert {(r.protocol, r.device_role) for r in results} == {(p, d) for p in ("TLS", "DTLS") for d in ("client", "server")}
    for r in results:
        assert r.n == 4 and r.wire_source == "transport" and r.processing.n == 4
        assert r.processing.median < r.duration.median  # processing is part of the stop–start time
    html = report_after_run(folder).read_text()
    assert 'id="network"' in html and "DTLS" in html
    # The statistics export carries the network section, keyed by transport and role.
    import csv
    import io

    from tlsbench.cli.options import analyze_experiment
    from tlsbench.export.csv import CsvExporter

    exported = [r for r in csv.DictReader(io.StringIO(CsvExporter().export(analyze_experiment(str(folder), None, False))))
                if r["metric"].startswith("net_")]
    stop_start = {(r["transport"], r["protocol"], r["role"]): r for r in exported if r["metric"] == "net_stop_start"}
    assert stop_start.keys() == {(t, p, d) for t, p in (("tcp", "TLS"), ("udp", "DTLS")) for d in ("client", "server")}
    by_config = {r.config_id: r for r in results}
    for r in exported:
        if r["metric"] == "net_stop_start":
            assert float(r["median"]) == by_config[int(r["config_id"])].duration.median
        if r["metric"] == "net_wire_bytes":
            assert r["source"] == "transport" and r["unit"] == "B"


@pytest.mark.skipif(os.geteuid() != 0 or len(os.sched_getaffinity(0)) < 2,
                    reason="a process above the agents' priority needs root; CPUs of their own need two CPUs")
def test_descheduling_is_seen_in_two_process_runs(tmp_path, agent_path):
    """A busy process at a higher priority than the agents, on their CPUs: over TCP the agents
    also wait for each other, so wall against CPU time says nothing; their run-queue wait
    shows the repetitions another process interrupted."""
    cpus = choose(True).agent_cpus

    def hog() -> None:  # its own scheduling group, above the agents' (run/placement.py)
        os.sched_setaffinity(0, cpus)
        os.setpriority(os.PRIO_PROCESS, 0, -20)
        if os.path.exists("/proc/self/autogroup"):
            with open("/proc/self/autogroup", "w") as group:
                group.write("-20")

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=hog, start_new_session=True)
            for _ in cpus]
    try:
        summary = run_experiment(network_plan("busy", '[network]\ntransports = ["tcp"]\n', repetitions=6), tmp_path,
                                 agent_dir=agent_path.parent)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert summary.stored == 6
    ds = load_path(summary.folder / "tlsbench.db")
    assert ds.runqueue_wait_known().all()
    assert ds.descheduled_mask().any()


# ---------------------------------------------------------------------- emulated link (root)
def namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())


@needs_link
def test_tls_and_dtls_through_the_emulator_count_the_wire(tmp_path, agent_path):
    loaded = network_plan("link", '[network]\ntransports = ["tcp", "udp"]\n'
                                  '[[network.links]]\npreset = "ieee802154"\nloss = 0\n')
    before = namespaces()
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    assert summary.stored == 2 * 4 and summary.failed == 0
    assert namespaces() <= before  # the run removed its namespaces (and a killed run's orphans, if any)
    traffic = [(c.transport, r.bytes_c2s + r.bytes_s2c, t.d2p_bytes + t.p2d_bytes, t.d2p_packets, t.p2d_packets,
                t.d2p_lost + t.p2d_lost, r.flags) for c, r, _, _, t in stored_pairs(summary.folder) if t is not None]
    assert len(traffic) == 8  # every repetition's connection was found in the packet log
    for transport, tls_bytes, wire_bytes, d2p, p2d, lost, flags in traffic:
        headers = 40 if transport == "tcp" else 28  # IPv4 + TCP / UDP, per packet at least
        assert wire_bytes >= tls_bytes + headers * (d2p + p2d), transport
        assert lost == 0 and flags == 0


@needs_link
def test_forced_loss_flags_retransmitted_repetitions(tmp_path, agent_path):
    loaded = network_plan("loss", '[network]\ntransports = ["tcp", "udp"]\ndtls = { timeout_min_ms = 200 }\n'
                                  '[[network.links]]\npreset = "none"\nloss = 30\ndelay = 1\n', repetitions=6)
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_path.parent)
    flagged = {c.transport for c, r, _, _, _ in stored_pairs(summary.folder)
               if r.status == "OK" and r.flags & 2 and r.retransmissions > 0}
    assert flagged == {"tcp", "udp"}  # with 30% loss, both transports retransmit
    ds = load_path(summary.folder / "tlsbench.db")
    for r in network_results(ds, measures.measures(ds), seed=1):
        assert r.retransmitted > 0
        assert r.duration.n == r.n  # stop–start: every successful repetition
        assert r.duration_no_retransmit is None or r.duration_no_retransmit.n == r.n - r.retransmitted
        assert r.processing is None or r.processing.n == r.n - r.retransmitted  # invariant: flagged excluded


@needs_link
def test_a_lossy_link_never_stores_a_mispaired_repetition(tmp_path, agent_path):
    """20% packet loss both ways, TLS and DTLS, the device as client and as server, with a
    warm-up per batch: DTLS flights and last flights get lost, agents give up, servers wait
    for clients that moved on. Every stored pair must be the two ends of one connection, and
    every failure must say why (both agents' reasons when they disagree)."""
    plan_text = (f'name = "lossy"\nrepetitions = 6\nrounds = 2\nwarmup = 1\nsuites = {SUITE}\n'
                 '[network]\ntransports = ["tcp", "udp"]\ndevice = ["client", "server"]\n'
                 'dtls = { timeout_min_ms = 100, timeout_max_ms = 400 }\n'
                 '[[network.links]]\npreset = "none"\nloss = 20\ndelay = 2\n')
    summary = run_experiment(plan.parse(plan_text, "lossy.toml"), tmp_path, agent_dir=agent_path.parent)
    assert summary.stored == 4 * 6 and not summary.skipped_configs
    pairs = stored_pairs(summary.folder)
    stored = [(c.transport, c.device_role, r.idx, r.status, r.error_text, r.client_port, r.server_port,
               *((p["client_port"], p["server_port"], p["status"]) if p else (None, None, None)))
              for c, r, _, p, _ in pairs]
    retransmitted = sum((r.retransmissions or 0) > 0 for _, r, _, _, _ in pairs)
    assert retransmitted > 0  # the loss did reach the handshakes
    for transport, role, idx, status, why, cport, sport, peer_cport, peer_sport, peer_status in stored:
        where = f"{transport} device {role} repetition {idx}"
        if status == "OK":
            assert peer_status == "OK" and why is None, where
            assert cport and sport and (cport, sport) == (peer_cport, peer_sport), f"{where}: a mispaired pair"
        else:
            assert status != "MISMATCHED", f"{where}: the agents ran different connections: {why}"
            assert why, f"{where}: {status} without a reason"
            if status != "AGENT_DIED":
                assert "device (" in why and "peer (" in why, f"{where}: not both agents' reasons: {why}"
        if cport and peer_cport:
            assert (cport, sport) == (peer_cport, peer_sport), f"{where}: a pair of two connections"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to drop privileges")
def test_a_link_without_privileges_fails_clearly(agent_path):
    with tempfile.TemporaryDirectory() as tmp:  # pytest's own folders are private to root
        folder = Path(tmp)
        folder.chmod(0o777)
        plan_file = folder / "p.toml"
        plan_file.write_text(f'name = "unpriv"\nrepetitions = 2\nsuites = {SUITE}\n'
                             '[network]\n[[network.links]]\npreset = "none"\n')
        cli = Path(sys.executable).parent / "tlsbench"
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(cli), "run",
                               str(plan_file), "--output", str(folder), "--no-report", "--agent-dir",
                               str(agent_path.parent)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "needs root and /dev/net/tun" in done.stderr and "memory mode keeps working" in done.stderr


@needs_link
def test_links_are_checked_by_the_emulator_before_a_run(agent_path):
    """`tlsbench-link check` judges a plan's links with the emulator's own presets and
    ranges; its reason reaches the plan error, naming the link."""
    from tlsbench.run.link import check_links
    from tlsbench.plan.network import Link

    good = [Link(preset="ieee802154", loss=5), Link(preset="lte-m", d2p={"delay": 10})]
    check_links(good, agent_path.parent, "p.toml")
    with pytest.raises(plan.PlanError) as err:
        check_links(good + [Link(preset="zigbee"), Link(preset="none", reorder_delay=1e300)], agent_path.parent,
                    "p.toml")
    assert "network.links[2] (zigbee): unknown preset" in str(err.value)
    assert "network.links[3]" in str(err.value) and "out of range" in str(err.value)
