# SPDX-License-Identifier: Apache-2.0
"""Predictions from real runs (docs/predict.md): a small in-memory experiment predicted over
link presets through the command line (tables, JSON, CSV and SVG files, the report's
section), and a short run through the emulator checked against its prediction (root)."""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import small_plan
from tlsbench.cli import main
from tlsbench.app.report import report_after_run
from tlsbench.app.run import run_experiment

SUITES = '["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]'
PRIVILEGED = os.geteuid() == 0 and os.path.exists("/dev/net/tun")


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def memory_run(tmp_path_factory, agent_path) -> Path:
    folder = tmp_path_factory.mktemp("predict")
    summary = run_experiment(small_plan("predict", repetitions=6, rounds=2, suites=SUITES), folder,
                             agent_dir=agent_path.parent)
    assert summary.failed == 0
    return summary.folder


def test_a_memory_run_is_predicted_over_a_preset(memory_run):
    out = cli("predict", str(memory_run), "--link", "ieee802154", "--link", "nb-iot,loss=5", "--draws", "40",
              "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["kind"] == "prediction"
    assert [lk["link"] for lk in doc["links"]] == ["ieee802154", "nb-iot,loss=5"]
    for link in doc["links"]:
        rows = link["predictions"]
        assert len(rows) == 2 and all(r["kind"] == "prediction" for r in rows)
        assert sorted(r["rank"] for r in rows)[0] == 1
        for r in rows:
            assert r["transport"] == "tcp"  # TLS measured in memory, predicted over TCP
            assert r["duration_ms_median"] > r["device_processing_ms"]  # the link adds to the processing
            assert r["bytes_median"] > r["tls_bytes"]  # IP and TCP headers, ACKs, the TCP handshake
            assert r["duration_ms_p5"] <= r["duration_ms_median"] <= r["duration_ms_p95"]
    slow, lossy = doc["links"]
    by_config = {r["config"]: r for r in slow["predictions"]}
    for r in lossy["predictions"]:  # 62.5/26 kbit/s and 300 ms take longer than 250 kbit/s and 5 ms
        assert r["duration_ms_median"] > by_config[r["config"]]["duration_ms_median"]
        assert r["n_draws"] == 40  # a lossy link: Monte Carlo draws


def test_a_sweep_writes_crossovers_that_are_where_the_lines_swap(memory_run, tmp_path):
    args = ("predict", str(memory_run), "--link", "lte-m", "--sweep", "rate", "--points", "9",
            "--profile", "nrf52840", "--device-scale", "40")
    out = cli(*args, "--out", str(tmp_path / "lte-m.csv"), "--figures", str(tmp_path))
    assert out.exit_code == 0, out.output
    assert "Predicted over lte-m (a model, not a measurement)" in out.output  # the table, beside the file
    assert "…" not in out.output  # not a terminal: plain aligned lines, nothing cut
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"lte-m.csv", "sweep_rate.csv", "crossovers_rate.csv", "predict_rate_duration.svg",
                     "predict_rate_energy.svg"}
    assert {r["kind"] for r in csv.DictReader((tmp_path / "lte-m.csv").open())} == {"prediction"}
    old = cli(*args, "--out", str(tmp_path))  # --out was a folder: one line says where things go now
    assert old.exit_code == 2 and "--out is a file now" in old.output and "--figures DIR" in old.output
    sweep = list(csv.DictReader((tmp_path / "sweep_rate.csv").open()))
    assert len(sweep) == 2 * 9 and {r["kind"] for r in sweep} == {"prediction"}
    line = {}
    for r in sweep:
        line.setdefault(r["config"], []).append((float(r["x"]), float(r["duration_ms_median"])))
    for c in csv.DictReader((tmp_path / "crossovers_rate.csv").open()):
        if c["metric"] != "duration":
            continue
        x = float(c["x"])
        below = dict(line[c["better_below"]])
        above = dict(line[c["better_above"]])
        xs = sorted(below)
        lo = max(v for v in xs if v < x)
        hi = min(v for v in xs if v > x)
        assert below[lo] <= above[lo] and below[hi] >= above[hi]  # they swap between the two points


def test_the_report_gets_a_prediction_section_when_asked(memory_run, tmp_path):
    target = tmp_path / "r.html"
    out = cli("report", str(memory_run), "--predict", "lte-m", "--profile", "nrf52840", "--out", str(target))
    assert out.exit_code == 1 and "ran on this host" in out.output  # the host's time is not the nRF52840's
    out = cli("report", str(memory_run), "--predict", "lte-m", "--profile", "nrf52840", "--device-scale", "40",
              "--out", str(target))
    assert out.exit_code == 0, out.output
    html = target.read_text()
    assert 'id="predict"' in html and "a model, not measurements" in html
    assert "Predicted ranking over lte-m" in html and "predicted energy above idle" in html
    assert "fig-predict_rate_duration" in html  # the crossover plot, swept around the first link
    plain = cli("report", str(memory_run), "--out", str(tmp_path / "plain.html"))
    assert plain.exit_code == 0 and 'id="predict"' not in (tmp_path / "plain.html").read_text()


@pytest.mark.parametrize("args, says", [
    (("--link", "carrier-pigeon"), "unknown link preset 'carrier-pigeon'"),
    (("--link", "ieee802154,los=5"), "did you mean loss"),
    (("--validate",), "no configuration over an emulated link"),
    (("--sweep", "rate"), "give at least one --link"),
])
def test_wrong_predictions_fail_in_one_line(memory_run, args, says):
    out = CliRunner().invoke(main, ["predict", str(memory_run), *args])
    assert out.exit_code != 0
    assert says in out.output and "Traceback" not in out.output


# ---------------------------------------------------------------------- through the emulator (root)
@pytest.mark.skipif(not PRIVILEGED, reason="emulated links need root and /dev/net/tun")
def test_predictions_agree_with_the_emulator_over_one_link(tmp_path, agent_path):
    network = ('[network]\ntransports = ["tcp", "udp"]\ndtls = { timeout_min_ms = 2000 }\n'
               '[[network.links]]\npreset = "none"\n[[network.links]]\npreset = "ieee802154"\n')
    plan = small_plan("check", repetitions=3, rounds=1, suites='["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]',
                      extra=network)
    summary = run_experiment(plan, tmp_path, agent_dir=agent_path.parent)
    assert summary.failed == 0
    out = cli("predict", str(summary.folder), "--validate", "--format", "json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)["validation"]
    assert {(r["protocol"], r["link"]) for r in rows} == {("TLS", "ieee802154"), ("DTLS", "ieee802154")}
    for r in rows:
        # The link's serialization and delay dominate (~0.1 s against a few ms of processing): a
        # model that misses a flight, an ACK or a header is off by far more than these bounds.
        assert abs(r["duration_error_pct"]) < 30, r
        assert abs(r["bytes_error_pct"]) < 15, r
        assert r["measured_n"] == 3 and math.isfinite(r["predicted_duration_ms"])
    html = report_after_run(summary.folder / "tlsbench.db").read_text()
    assert "Predicted vs measured over the emulated links" in html


def test_a_device_scale_alone_scales_the_device_processing(memory_run):
    """--device-scale without a profile: durations only, the device's processing × the scale, said."""
    docs = [json.loads(cli("predict", str(memory_run), "--link", "ieee802154", "--format", "json", *extra).output)
            for extra in ((), ("--device-scale", "30"))]
    plain, scaled = ({r["config"]: r["device_processing_ms"] for r in d["links"][0]["predictions"]} for d in docs)
    assert all(scaled[c] == pytest.approx(30 * plain[c]) for c in plain)
    assert docs[0]["conversion"]["basis"] == "host time (this machine's, as measured)"
    assert docs[1]["conversion"]["basis"] == "host time × 30 (--device-scale, given)"
