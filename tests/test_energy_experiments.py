# SPDX-License-Identifier: Apache-2.0
"""Energy of experiments: one real run of handshakes and crypto primitives together (the
mbed TLS agent, its marker recorded by the posix port), a synthetic capture with a known
current per handshake step and per experiment group, imported with the CLI. The capture's
pulses mark both kinds of repetition; the report shows energy per operation, measured and
estimated, each table under its source."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from energy_support import Model, run_marked, synthesize, write_joulescope
from stores import load_path, reader
from tlsbench.analysis.vocab import vocab
from tlsbench.cli import main

REPS = 3
TOLERANCE = 0.01  # per group, for groups of at least MIN_SAMPLES samples
MIN_SAMPLES = 100
RATE = 2e6


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, agent_path) -> tuple[Path, tuple[np.ndarray, np.ndarray]]:
    return run_marked(f'name = "mixed"\nrepetitions = {REPS}\nrounds = 1\nwarmup = 1\n'
                      'suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n'
                      '[experiments]\ninclude = ["ecdsa-p256", "aes128-gcm"]\nsizes = [4096]\n',
                      tmp_path_factory.mktemp("energy-experiments"), agent_path.parent)


@pytest.fixture
def folder(mixed, tmp_path) -> Path:
    return Path(shutil.copytree(mixed[0], tmp_path / "mixed"))


@pytest.fixture(scope="module")
def truth(mixed):
    return synthesize(load_path(mixed[0] / "tlsbench.db", experiments=None), Model(sample_rate_hz=RATE),
                      marker_ns=mixed[1])


def stored_groups(folder: Path) -> dict[tuple[int, int], tuple[float, int]]:
    """(repetition, group index) -> (J, Σ window ns) of the stored USER_GROUP energies."""
    with reader(folder / "tlsbench.db") as st:
        e = st.window_energies(st.energy_capture().id)
    group = vocab().role_label("user_group")
    return {(r, g): (j, d) for r, g, lab, j, d in
            zip(e.repetition_id, e.group_index, e.label, e.energy_j, e.duration_ns) if lab == group}


def test_every_stored_repetition_is_marked(mixed):
    rising, falling = mixed[1]
    configs = 1 + 1 + 1  # the handshake, ecdsa-p256, aes128-gcm at 4096 B
    assert len(rising) == len(falling) == configs * REPS


def test_group_energy_matches_the_truth(folder, truth, tmp_path):
    out = CliRunner().invoke(main, ["energy", "import", str(write_joulescope(truth, tmp_path / "js.csv")),
                                    "--experiment", str(folder)])
    assert out.exit_code == 0, out.output
    assert f"{3 * REPS} repetitions" in out.output
    got = stored_groups(folder)
    assert set(got) == set(truth.groups)  # sign, verify, encrypt, decrypt of every repetition
    long = 0
    for key, want in truth.groups.items():
        joules, ns = got[key]
        if ns * 1e-9 * RATE >= MIN_SAMPLES:
            long += 1
            assert joules == pytest.approx(want, rel=TOLERANCE), key
    assert long >= 2 * REPS  # ECDSA sign and verify take hundreds of µs in mbed TLS


def test_report_shows_energy_per_operation_by_source(folder, truth, tmp_path):
    assert CliRunner().invoke(main, ["energy", "import", str(write_joulescope(truth, tmp_path / "js.csv")),
                                     "--experiment", str(folder)]).exit_code == 0
    out = CliRunner().invoke(main, ["report", str(folder), "--profile", "esp32-160mhz", "--include-flagged",
                                    "--out", str(tmp_path / "r.html")])
    assert out.exit_code == 1 and "ran on this host" in out.output  # a host run is not the ESP32's time
    out = CliRunner().invoke(main, ["report", str(folder), "--profile", "esp32-160mhz", "--device-scale", "30",
                                    "--include-flagged", "--out", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    html = (tmp_path / "r.html").read_text()
    section = html[html.index('id="primitives"'):]
    measured = section.index("Energy per operation: measured (capture js.csv)")
    estimated = section.index("Energy per operation: estimate (profile esp32-160mhz)")
    assert measured < estimated  # measured first, each in its own table
    table = section[measured:estimated]
    assert "ecdsa-p256" in table and "sign" in table and "µJ" in table


def test_without_capture_or_profile_there_is_no_energy_table(folder, tmp_path):
    out = CliRunner().invoke(main, ["report", str(folder), "--out", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    assert "Energy per operation" not in (tmp_path / "r.html").read_text()
