# SPDX-License-Identifier: Apache-2.0
"""Estimates: the formula on a hand-written trace with exact times, and the label
"estimate (profile X)" on every table row, export, HTML cell and figure legend."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from analysis_support import TraceBuilder, store_with_trace
from stores import load_path
from tlsbench.analysis.pipeline import analyze
from tlsbench.cli import main
from tlsbench.analysis.models.energy import profiles as P
from tlsbench.analysis.models.energy.results import collect
from tlsbench.report.energy import html_section
from tlsbench.report.html import build_html

PROFILE = '''
name = "board"
description = "a test board"
default_frequency_mhz = 64
[[sources]]
id = "ds"
document = "Board datasheet"
section = "Table 1"
[[cpu]]
frequency_mhz = 64
power_mw = 100
source = "ds"
[radio_tx]
power_mw = 300
source = "ds"
[radio_rx]
power_mw = 200
source = "ds"
[idle]
power_mw = 10
source = "ds"
[time_scale]
factor = 2.0
basis = "test"
'''
CPU, TX, RX = (0.100 - 0.010) * 2, 0.300 - 0.010, 0.200 - 0.010  # W above idle (CPU scaled by the time factor)


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    b = TraceBuilder()
    b.ev("REPETITION", "START", "none", 0).ev("HANDSHAKE", "START", "none", 100)
    b.ev("CLIENT_HELLO", "START", "client", 1000)
    b.ev("SEND", "START", "client", 1500).ev("SEND", "STOP", "client", 1800, 100)          # TX 300 ns
    b.ev("CLIENT_HELLO", "STOP", "client", 3000)                                          # processing 1700
    b.ev("CLIENT_HELLO", "START", "server", 3000)
    b.ev("RECV", "START", "server", 3100).ev("RECV", "STOP", "server", 3300, 100)          # RX 200 ns
    b.ev("PK_SIGN", "START", "server", 3400).ev("PK_SIGN", "STOP", "server", 4400)
    b.ev("CLIENT_HELLO", "STOP", "server", 6000)                                          # processing 2800
    b.ev("SERVER_HELLO", "START", "client", 6000)
    b.ev("RECV", "START", "client", 6000).ev("RECV", "STOP", "client", 6100, 0)           # RX 100 ns (waited)
    b.ev("SERVER_HELLO", "STOP", "client", 6500)                                          # processing 400
    b.ev("HANDSHAKE", "STOP", "none", 7000).ev("REPETITION", "STOP", "none", 8000)
    path = store_with_trace(tmp_path_factory.mktemp("est") / "tlsbench.db", b.blob(), 0.0, 0.0)
    return analyze(load_path(path))


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("profile") / "board.toml"
    path.write_text(PROFILE)
    return path


def test_estimate_is_power_times_measured_time(analysis, profile):
    res = collect(analysis, str(profile), measured=False)
    cid = next(iter(analysis.results.configs))
    value = lambda kind, peer, label="": res.find(cid, kind, peer, label, res.profile.label).summary.median  # noqa: E731
    client_hello = CPU * 1700e-9 + TX * 300e-9
    server_hello = CPU * 2800e-9 + RX * 200e-9  # PK_SIGN is processing of its step
    server_hello_client = CPU * 400e-9 + RX * 100e-9
    assert value("step", "client", "CLIENT_HELLO") == pytest.approx(client_hello)
    assert value("step", "server", "CLIENT_HELLO") == pytest.approx(server_hello)
    assert value("step", "client", "SERVER_HELLO") == pytest.approx(server_hello_client)
    assert value("handshake", "client") == pytest.approx(client_hello + server_hello_client)
    assert value("handshake", "server") == pytest.approx(server_hello)
    assert value("handshake_window", "none") == pytest.approx(client_hello + server_hello + server_hello_client)
    assert res.capture is None and res.sources == ["estimate (profile board-64mhz)"]


def test_every_estimate_is_labelled(analysis, profile):
    op = P.resolve(str(profile))
    res = collect(analysis, op, measured=False)
    assert res.rows and {r.source for r in res.rows} == {"estimate (profile board-64mhz)"}
    section = html_section(analysis, op)
    html = build_html(analysis, energy=section)
    energy = html[html.index('id="energy"'):html.index('id="figures"')]
    cells = re.findall(r'<td class="l">(estimate \(profile [^)]*\)|measured \(capture [^)]*\))</td>', energy)
    assert len(cells) >= 5 and set(cells) == {op.label}  # every row of every energy table says its source
    svg = str(section["figure"])  # inline SVG markup
    assert op.label in svg  # the figure's legend


def test_cli_estimate_exports_carry_the_label(analysis, profile):
    db = str(analysis.ds.reader.location)
    out = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", str(profile), "--format", "csv"])
    assert out.exit_code == 0, out.output
    header, *rows = [r.split(",") for r in out.output.splitlines()]
    assert header[5] == "source" and rows and {r[5] for r in rows} == {"estimate (profile board-64mhz)"}
    out = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", str(profile), "--format", "json"])
    doc = json.loads(out.output)
    assert doc["sources"] == ["estimate (profile board-64mhz)"]
    assert {r["source"] for r in doc["rows"]} == {"estimate (profile board-64mhz)"}
    out = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", str(profile), "--steps"], terminal_width=250)
    assert out.exit_code == 0 and "estimate (profile board-64mhz)" in out.output and "CLIENT_HELLO" in out.output
    piped = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", str(profile)], terminal_width=60)
    assert piped.exit_code == 0 and "…" not in piped.output  # not a terminal: plain aligned lines, nothing cut
    assert any(line.startswith("TLS-") and "estimate (profile board-64mhz)" in line for line in piped.output.splitlines())


def test_builtin_device_profiles_warn_about_what_they_assume(analysis):
    res = collect(analysis, P.scaled(P.resolve("esp32"), 40.0), measured=False)
    text = " ".join(res.warnings)
    assert "host time × 40 (--device-scale, given)" in text and "in memory the I/O is a copy" in text
    assert "approximate or assumed" in " ".join(collect(analysis, "host", measured=False).warnings)


@pytest.mark.parametrize("device", ["esp32", "nrf52840"])
def test_a_host_run_is_never_a_devices_time_without_a_scale(analysis, device):
    """x86 time × an MCU's power is refused, in one line that says what to do."""
    with pytest.raises(P.EnergyError, match="ran on this host: its times are this machine.s"):
        collect(analysis, device, measured=False)
    db = str(analysis.ds.reader.location)
    out = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", device])
    assert out.exit_code == 1 and out.output.count("\n") == 1 and "Traceback" not in out.output
    out = CliRunner().invoke(main, ["energy", "estimate", db, "--profile", device, "--device-scale", "40",
                                    "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["conversion"]["basis"] == "host time × 40 (--device-scale, given)"


def test_no_energy_section_without_profile_or_capture(analysis):
    assert html_section(analysis) is None
    assert 'id="energy"' not in build_html(analysis)
