# SPDX-License-Identifier: Apache-2.0
"""One conversion from a device's count to a part's time (analysis/models/conversion.py): a
device run whose plan names `board = "nrf52840"` (the real firmware under QEMU, one suite, 2
repetitions: about 25 s with the four commands) shows the same basis, band and numbers in the report, `energy
estimate`, `predict` and the JSON export; predict no longer reads instructions as ns. Twice: with the
cycle model's plugin off (`cycles = false`: the board's reference CPI) and on (the default with a
board: each step's own cycles (model) from the counts stored with its records; about 20 s more)."""
from __future__ import annotations

import json
import shutil
from collections import defaultdict

import numpy as np
import pytest
from click.testing import CliRunner
from markupsafe import escape

from tlsbench import plan
from tlsbench.analysis.models.cycles import INSTRUCTIONS, board_cpi, fitted, modelled_cycles
from tlsbench.app.run import run_experiment
from tlsbench.builder import firmware
from tlsbench.cli import main
from tlsbench.core import targets
from tlsbench.core import spec as specmod
from tlsbench.core.boards import board, stream_of
from tlsbench.run import tracefs
from stores import reader

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


def _run(tmp_path_factory, agent_path, text: str):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    firmware.ensure_firmware(firmware.FirmwareRequest())
    folder = tmp_path_factory.mktemp("conv")
    summary = run_experiment(plan.parse(text, "conv.toml"), folder, agent_dir=agent_path.parent)
    assert summary.failed == 0
    return folder / "conv"


@pytest.fixture(scope="module")
def device_run(tmp_path_factory, agent_path):
    """The board's reference CPI: the cycle model's plugin left off."""
    return _run(tmp_path_factory, agent_path, PLAN + "cycles = false\n")


@pytest.fixture(scope="module")
def counted_run(tmp_path_factory, agent_path):
    """The same plan with the plugin on (the default with a board and an emulated target)."""
    return _run(tmp_path_factory, agent_path, PLAN)


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
    assert conv["per_step"] is None  # no counts stored: the CPI route alone
    with reader(device_run) as store:
        assert store.trace_counts() == {}
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


# ---------------------------------------------------------------------- per-step cycles (model)
def _handshake_s(run, peer: str, f_hz: float) -> dict[int, float]:
    """Per configuration, the peer's handshake seconds per instruction from the stored counts,
    worked out here from the raw records: Σ cycles (model) ÷ Σ plugin instructions over its
    step spans (START/STOP of a step label; a step's counts are STOP − START)."""
    spec, nrf = specmod.load(), board("nrf52840")
    steps = {lab.id for lab in spec.labels if lab.category == "step"}  # the report's steps (spec/labels)
    code = spec.peers.by_name[peer]
    cycles: dict[int, float] = defaultdict(float)
    counted: dict[int, float] = defaultdict(float)
    with reader(run) as store:
        counts, reps = store.trace_counts(), store.repetition_columns()
        config = dict(zip(reps.id.tolist(), reps.config_id.tolist()))
        for rep_id, raw in store.traces():
            stored = counts[rep_id]
            names = stored.features.split(",")
            table = np.frombuffer(stored.counts, "<u8").reshape(-1, len(names))
            open_at: dict[int, int] = {}
            for i, (label, kind, who, _) in enumerate(tracefs.decode(raw)):
                if label not in steps or who != code:
                    continue
                if kind == spec.kinds.START:
                    open_at[label] = i
                elif kind == spec.kinds.STOP and label in open_at:
                    delta = dict(zip(names, (table[i] - table[open_at.pop(label)]).tolist()))
                    cycles[config[rep_id]] += modelled_cycles(delta, nrf)
                    counted[config[rep_id]] += delta[INSTRUCTIONS]
    return {cid: cycles[cid] / counted[cid] / f_hz for cid in cycles}


def test_a_run_with_a_board_stores_each_records_counts(counted_run, device_run):
    """Every repetition has its class counts, one row per record; the counter's records are the
    same with the plugin as without it (the counts never change what the counter measured)."""
    with reader(counted_run) as store, reader(device_run) as plain:
        counts, traces = store.trace_counts(), dict(store.traces())
        reps = store.repetition_columns()
        assert sorted(counts) == sorted(reps.id.tolist()) and len(counts) >= 2
        for rep_id, stored in counts.items():
            assert stored.board == "nrf52840" and stored.reason is None
            names = stored.features.split(",")
            assert names[0] == INSTRUCTIONS and "load" in names and "fetch_miss_taken" in names
            assert len(stored.counts) == 8 * len(names) * len(traces[rep_id]) // tracefs.RECORD.size
        assert dict(plain.traces()) == traces  # record for record, byte for byte


def test_each_steps_own_cycles_everywhere(counted_run, tmp_path):
    """The report, `energy estimate`, `predict` and the export show the per-step basis and the
    same numbers: a peer's handshake ms = its processing × (its steps' cycles (model) ÷ their
    instructions) ÷ f, from the stored counts; the band the CPI route's."""
    energy = json.loads(cli("energy", "estimate", str(counted_run), "--format", "json"))
    export = json.loads(cli("export", str(counted_run), "--format", "json"))
    predict = json.loads(cli("predict", str(counted_run), "--link", "ieee802154", "--format", "json"))
    cli("report", str(counted_run), "--out", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()

    conv = energy["conversion"]
    per_step = conv["per_step"]
    assert per_step["basis"].startswith("cycles (model) of nrf52840, per step: each step's own instruction classes")
    assert per_step["steps"] == per_step["of_steps"] > 10  # every step span had its counts
    # the CPI route's band: the tables are validated on p256-m code only (conversion.of_dataset)
    assert per_step["band_worst_abs_error"] == fitted().run_band.worst
    assert export["energy"]["conversion"] == predict["conversion"] == conv
    assert str(escape(per_step["basis"])) in html and "model error ±" in html

    cid = next(r["config_id"] for r in export["rows"] if r["metric"] == "handshake_processing")
    expected = _handshake_s(counted_run, "client", 64e6)[cid]
    assert expected != pytest.approx(conv["seconds_per_unit"], rel=1e-3)  # not the reference CPI's
    assert expected == pytest.approx(conv["seconds_per_unit"], rel=0.3)
    count = next(r["summary"]["median"] for r in export["rows"]
                 if r["metric"] == "handshake_processing" and r["peer"] == "client")
    predicted = predict["links"][0]["predictions"][0]["device_processing_ms"]
    assert predicted == pytest.approx(count * expected * 1e3, rel=1e-3)
    assert f"<td>{count * expected * 1e3:,.1f} <span" in html  # the report's cell
    key = lambda r: (r["config_id"], r["kind"], r["peer"], r["label"])  # noqa: E731
    mine = {key(r): r["median"] for r in energy["rows"]}
    theirs = {key(r): r["summary"]["median"] for r in export["energy"]["rows"]}
    assert mine and all(theirs[k] == pytest.approx(v) for k, v in mine.items())
