# SPDX-License-Identifier: Apache-2.0
"""Remote agents behind mutually authenticated TLS (run/remote.py, docs/fleet.md): a real
`tlsbench remote serve` process on a loopback port, a real worker running a queued plan through
it, and every way in without the fleet's controller key refused, logged, and given no agent:
no TLS at all, no client certificate, another fleet's certificate, the agents' own
certificate, a recorded session played again. About 15 s."""
from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pg_server import database
from tlsbench.cli import main
from tlsbench.run.remote import AGENT_NAME, FleetKeys, make_keys
from tlsbench.store.postgres.testing import free_port, table_rows

AGENT = "tlsbench-agent-mbedtls"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, agent_path):
    tmp = tmp_path_factory.mktemp("remote")
    keys, other = make_keys(tmp / "keys"), make_keys(tmp / "other")
    port = free_port()
    log = tmp / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "remote", "serve", "--listen",
                                   f"127.0.0.1:{port}", "--keys", str(keys.folder), "--library", "mbedtls",
                                   "--agent-dir", str(agent_path.parent)], stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "listening" not in log.read_text():
        assert server.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    yield keys, other, port, log
    server.kill()
    server.wait()


def lines(log: Path, word: str) -> int:
    return sum(line.startswith(word) for line in log.read_text().splitlines())


def refused_after(log: Path, attempt) -> None:
    """The attempt is refused and logged, and no agent starts for it."""
    refused, accepted = lines(log, "refused"), lines(log, "accepted")
    got = attempt()
    deadline = time.monotonic() + 10
    while lines(log, "refused") == refused:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    assert lines(log, "accepted") == accepted
    assert b"protocol" not in (got or b"")  # no HELLO reached it


def tls_client(keys: FleetKeys, cert: str | None, port: int) -> bytes:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(keys.file("ca.pem"))
    if cert:
        ctx.load_cert_chain(keys.file(f"{cert}.pem"), keys.file(f"{cert}.key"))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                ctx.wrap_socket(raw, server_hostname=AGENT_NAME) as tls:
            tls.sendall(f"{AGENT}\n".encode())
            return tls.recv(4096)
    except (ssl.SSLError, OSError):
        return b""


def test_a_worker_runs_queued_work_on_the_remote_agent(fleet, tmp_path):
    keys, _, port, log = fleet
    url = database("remote")
    plan = tmp_path / "far.toml"
    plan.write_text('name = "far"\nrepetitions = 2\nrounds = 1\nwarmup = 0\n'
                    'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]\n')
    queued = CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output", str(tmp_path)],
                                catch_exceptions=False)
    assert queued.exit_code == 0, queued.output
    accepted = lines(log, "accepted")
    out = subprocess.run([sys.executable, "-m", "tlsbench.cli", "worker", "--store", url, "--remote",
                          f"127.0.0.1:{port}", "--keys", str(keys.folder), "--library", "mbedtls"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert table_rows(url, "SELECT count(*) FROM repetition") == [(2,)]
    assert lines(log, "accepted") > accepted  # the agents ran behind the server
    assert table_rows(url, "SELECT device FROM worker") == [(f"127.0.0.1:{port}",)]


def remote_run(plan: Path, output: Path, port: int, keys: FleetKeys) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(output),
                           "--no-report", "--remote", f"127.0.0.1:{port}", "--keys", str(keys.folder)],
                          capture_output=True, text=True, timeout=120)


def test_a_plain_run_measures_on_the_remote_agent(fleet, tmp_path):
    """`tlsbench run --remote`: the sweep of a plan measured here on another machine's agent;
    with another fleet's keys one line, and nothing stored."""
    from stores import reader

    keys, other, port, log = fleet
    plan = tmp_path / "afar.toml"
    plan.write_text('name = "afar"\nrepetitions = 3\nrounds = 1\nwarmup = 0\n'
                    'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]\n')
    refused = lines(log, "refused")
    wrong = remote_run(plan, tmp_path / "wrong", port, other)
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr and "CERTIFICATE_VERIFY_FAILED" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1 and not (tmp_path / "wrong" / "afar").exists()
    assert lines(log, "refused") > refused
    accepted = lines(log, "accepted")
    done = remote_run(plan, tmp_path / "right", port, keys)
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines(log, "accepted") > accepted  # the agents ran behind the server
    with reader(tmp_path / "right" / "afar" / "tlsbench.db") as st:
        assert sum(len(idx) for idx in st.stored_indices().values()) == 3
        assert {a.exit_reason for a in st.agent_rows()} == {"quit (exit code 0)"}


def test_a_worker_with_another_fleets_keys_gets_one_line_and_stores_nothing(fleet, tmp_path):
    _, other, port, log = fleet
    url = database("remote_wrong")
    plan = tmp_path / "wrong.toml"
    plan.write_text('name = "wrong"\nrepetitions = 2\nrounds = 1\nwarmup = 0\n'
                    'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]\n')
    assert CliRunner().invoke(main, ["run", str(plan), "--store", url, "--enqueue", "--output",
                                     str(tmp_path)]).exit_code == 0
    refused = lines(log, "refused")
    out = subprocess.run([sys.executable, "-m", "tlsbench.cli", "worker", "--store", url, "--remote",
                          f"127.0.0.1:{port}", "--keys", str(other.folder), "--library", "mbedtls"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert out.stderr.strip().startswith("error:") and "CERTIFICATE_VERIFY_FAILED" in out.stderr, out.stderr
    assert table_rows(url, "SELECT count(*) FROM repetition") == [(0,)]
    assert lines(log, "refused") > refused


def test_every_way_in_without_the_controller_key_is_refused(fleet, tmp_path):
    keys, other, port, log = fleet

    def plain() -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(f"{AGENT}\n".encode() + b"\x00" * 64)
            try:
                return s.recv(4096)
            except OSError:
                return b""
    refused_after(log, plain)
    refused_after(log, lambda: tls_client(keys, None, port))  # no client certificate
    refused_after(log, lambda: tls_client(keys, "agent", port))  # a device's certificate is no controller's
    mixed = tmp_path / "mixed"  # trusts the fleet, shows another fleet's controller pair
    mixed.mkdir()
    (mixed / "ca.pem").write_bytes(keys.file("ca.pem").read_bytes())
    for name in ("controller.pem", "controller.key"):
        (mixed / name).write_bytes(other.file(name).read_bytes())
    refused_after(log, lambda: tls_client(FleetKeys(mixed), "controller", port))


def test_a_recorded_session_played_again_is_refused(fleet):
    keys, _, port, log = fleet
    recorded = bytearray()
    proxy = socket.create_server(("127.0.0.1", 0))

    def relay() -> None:  # records what the controller sent through it
        client, _ = proxy.accept()
        upstream = socket.create_connection(("127.0.0.1", port))

        def copy(src, dst, keep) -> None:
            try:
                while data := src.recv(65536):
                    keep(data)
                    dst.sendall(data)
                dst.shutdown(socket.SHUT_WR)
            except OSError:  # the other side closed first
                pass
        back = threading.Thread(target=copy, args=(upstream, client, lambda d: None), daemon=True)
        back.start()
        copy(client, upstream, recorded.extend)
        back.join(5)
    threading.Thread(target=relay, daemon=True).start()
    greeting = tls_client(keys, "controller", proxy.getsockname()[1])
    assert greeting.startswith(b"TB")  # the genuine session got the agent's HELLO
    time.sleep(0.5)

    def replay() -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(bytes(recorded))
            got = b""
            try:
                while part := s.recv(4096):
                    got += part
            except OSError:
                pass
            return got
    refused_after(log, replay)


def test_serve_listens_only_where_told():
    out = CliRunner().invoke(main, ["remote", "serve", "--keys", "/nonexistent"])
    assert out.exit_code == 2 and "--listen" in out.output
