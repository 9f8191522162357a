# SPDX-License-Identifier: Apache-2.0
"""One conversion from a device's count to a part's time (analysis/models/conversion.py): a
device run whose plan names `board = "nrf52840"` (the real firmware under QEMU, one suite, 2
repetitions: about 25 s with the four commands) shows the same basis, band and numbers in the report, `energy
estimate`, `predict` and the JSON export; predict no longer reads instructions as ns."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tlsbench import plan
from tlsbench.analysis.models.cycles import board_cpi, fitted
from tlsbench.app.run import run_experiment
from tlsbench.builder import firmware
from tlsbench.cli import main
from tlsbench.core import targets
from tlsbench.core.boards import board, stream_of

ECDHE = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
PLAN = f'''name = "conv"
suites = ["{ECDHE}"]
repetitions = 2
[payload]
total_bytes = 256
record_size = 256
direction = "both"
[device]
target = "qemu-mps2-an386"
board = "nrf52840"
'''


@pytest.fixture(scope="module")
def device_run(tmp_path_factory, agent_path):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    firmware.ensure_firmware(firmware.FirmwareRequest())
    folder = tmp_path_factory.mktemp("conv")
    summary = run_experiment(plan.parse(PLAN, "conv.toml"), folder, agent_dir=agent_path.parent)
    assert summary.failed == 0
    return folder / "conv"


def cli(*args: str) -> str:
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def test_the_same_conversion_and_numbers_everywhere(device_run, tmp_path):
    energy = json.loads(cli("energy", "estimate", str(device_run), "--format", "json"))  # the plan's board
    export = json.loads(cli("export", str(device_run), "--format", "json"))
    predict = json.loads(cli("predict", str(device_run), "--link", "ieee802154", "--format", "json"))
    cli("report", str(device_run), "--out", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()

    conv = energy["conversion"]
    nrf = board("nrf52840")
    assert conv["basis"] == f"cycles (model) of nrf52840: instructions × CPI {board_cpi(nrf):.2f} ÷ 64 MHz"
    assert conv["seconds_per_unit"] == pytest.approx(board_cpi(nrf) / 64e6)
    assert conv["band_worst_abs_error"] == fitted().run_band.worst  # the validation's band, widened by the CPI's spread
    assert export["energy"]["conversion"] == predict["conversion"] == conv
    assert conv["basis"] in html and "model band (mJ)" in html and "model error ±" in html
    assert "processing, estimate (ms)" in html

    # The number: predict's device processing is the stored count × the same seconds per unit
    # (not the count read as ns: 6-7 M instructions would be 6-7 ms, the board takes ~180 ms).
    count = next(r["summary"]["median"] for r in export["rows"]
                 if r["metric"] == "handshake_processing" and r["peer"] == "client")
    predicted = predict["links"][0]["predictions"][0]["device_processing_ms"]
    assert predicted == pytest.approx(count * conv["seconds_per_unit"] * 1e3, rel=0.01)
    assert predicted > 20 * count / 1e6  # count / 1e6: the count read as ns, in ms
    part_ms = f"{count * conv['seconds_per_unit'] * 1e3:,.1f}"  # the report's cell
    assert f"<td>{part_ms} <span" in html
    # Energy: export and `energy estimate` agree row for row.
    key = lambda r: (r["config_id"], r["kind"], r["peer"], r["label"])  # noqa: E731
    mine = {key(r): r["median"] for r in energy["rows"]}
    theirs = {key(r): r["summary"]["median"] for r in export["energy"]["rows"]}
    assert mine and all(theirs[k] == pytest.approx(v) for k, v in mine.items())


def test_a_device_run_without_a_board_gives_counts_only(device_run):
    """Instructions never become time without a part: predict says what to give."""
    out = CliRunner().invoke(main, ["predict", str(device_run), "--link", "ieee802154", "--profile", "esp32",
                                    "--format", "json"])
    assert out.exit_code == 1 and out.output.count("\n") == 1
    assert "no declared board" in out.output


def test_counts_of_one_instruction_stream_are_not_another_cores(device_run):
    """Cortex-M4 (Thumb-2) counts on a Cortex-M0 board (Thumb only): refused, with what to do."""
    out = CliRunner().invoke(main, ["energy", "estimate", str(device_run), "--profile", "stm32f091"])
    assert out.exit_code == 1 and out.output.count("\n") == 1
    assert "another instruction stream: run the firmware built for that core" in out.output


def test_every_targets_counts_have_a_known_instruction_stream():
    """The stream check needs each firmware's cpu (HELLO device.cpu) to name a stream: the
    RV32IMAC target's counts were once converted with an Arm board's timing for want of one."""
    assert {t.cpu: stream_of(t.cpu) for t in targets.load().all}["rv32imac"] == "rv32"
    assert all(stream_of(t.cpu) for t in targets.load().all) and stream_of("z80") is None
