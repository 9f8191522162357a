# SPDX-License-Identifier: Apache-2.0
"""The cycle model's parts on real QEMU (docs/cycles.md): the plugin, attached to the device
firmware a `[device]` plan boots, counts its primitive experiments deterministically, every
executed instruction in one class and as many as the firmware's own counter; `tlsbench
validate cycles` runs a table's rows, skips what cannot run with its reason, shows a row of
another build apart, fails only when nothing ran, and the shipped model (spec/cycles/
model.toml) is in step with the plugin, the timing tables and the published figures it was
calibrated on. The mbedtls@3.6+p256m firmware on the M4 (its -Os variant for the calibration
rows), the RISC-V target's own build: about 30 s once the firmware is built (a library cache
without the -Os variant adds its cross build, about 2 minutes)."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tlsbench.analysis.models.cycles import fitted
from tlsbench.app.validate import NOT_COMPARABLE, PUBLISHED, read_table, validate
from tlsbench.builder import cycles as tool
from tlsbench.builder import firmware
from tlsbench.cli import main
from tlsbench.core import targets
from tlsbench.core.boards import board, boards, cores
from tlsbench.run.cycles import CountingError, count_groups
from tlsbench.run.endpoints.firmware import FirmwareImage

# The plugin's classes: each executed instruction is exactly one of them.
CLASSES = ("alu", "mul", "mull", "div", "load", "load_literal", "store", "load_double", "load_multiple",
           "store_multiple", "branch", "it", "system", "fpu")
ROW = '''[[row]]
id = "{id}"
board = "{board}"
library = "{library}"
experiment = "ecdh-p256"
group = "keygen"
ms = {ms}
source = "a test"
'''


def _counts(core_target: str, board_name: str, library: str = "mbedtls@3.6+p256m"):
    build = firmware.ensure_firmware(firmware.FirmwareRequest.of_target(core_target, library=library))
    image = build.image("counting")
    return count_groups(targets.load().emulated[core_target], FirmwareImage("counting", image.path, image.sha256),
                        tool.plugin(), board(board_name).memory.plugin_args(), ["ecdh-p256", "ecdsa-p256", "none"])


@pytest.fixture(scope="module")
def f411_counts():
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.fail("these tests need qemu-system-arm and gcc-arm-none-eabi: scripts/install-deps.sh installs them")
    return [_counts("qemu-mps2-an386", "stm32f411") for _ in range(2)]


def test_counts_are_deterministic_and_every_instruction_has_one_class(f411_counts):
    first, second = f411_counts
    assert list(first) == [("ecdh-p256", "keygen"), ("ecdh-p256", "shared-secret"), ("ecdsa-p256", "sign"),
                           ("ecdsa-p256", "verify")]  # "none" is no experiment of the firmware: left out
    assert first == second  # 0 differing values over two boots
    for group in first.values():
        c = group.counts
        assert group.repetitions == 2
        assert sum(c[k] for k in CLASSES) == c["instructions"] > 4_000_000
        assert c["taken"] + c["not_taken"] > c["branch"] // 2 and c["mull"] > 0  # UMAAL/UMULL on the M4


def test_snapshots_that_do_not_pair_with_the_groups_are_refused():
    from tlsbench.run.cycles import _assign

    rows = [(0, [1]), (1, [5]), (0, [9])]  # a begin without its end
    with pytest.raises(CountingError, match="3 group marks where the firmware reported 1 groups"):
        _assign(["instructions"], rows, [("x", ("g",), [[4]])])
    with pytest.raises(CountingError, match="not the same code"):
        _assign(["instructions"], rows[:2], [("x", ("g",), [[40_000]])])


def test_every_entry_cites_a_source_and_every_board_names_a_core():
    for core in cores().values():
        assert core.cycles and set(core.cycles) == set(core.notes)
        for feature, note in core.notes.items():
            assert note.split(":")[0] in core.sources or note.startswith("assumption"), (core.name, feature)
    for b in boards().values():
        assert b.core.name in cores() and b.clock_mhz > 0 and {"memory", "power"} <= set(b.sources)


def test_the_shipped_model_reproduces_its_calibration_rows():
    """A core's factor, applied to today's counts, gives its calibration figure back: the
    model file is in step with the plugin and the tables (run --write-model when not)."""
    rows = [r for r in read_table(PUBLISHED) if r.id in ("p256m-f411-ecdh", "p256m-f411-keygen")]
    result = validate(rows)
    roles = {r.id: r.role for r in result.results}
    assert roles == {"p256m-f411-ecdh": "calibration", "p256m-f411-keygen": NOT_COMPARABLE}
    (calibration,) = [r for r in result.results if r.role == "calibration"]
    assert abs(calibration.error) < 0.005, calibration
    assert result.band is None and result.all_rows_band.rows == 1  # a row not comparable is shown, never in the band
    assert fitted().band is not None and fitted().band.rows >= 4


def test_validate_with_a_users_table(tmp_path):
    table = tmp_path / "mine.toml"
    table.write_text(ROW.format(id="mine", board="stm32l4a6", library="mbedtls@3.6+p256m", ms=160)
                     + ROW.format(id="nowhere", board="stm32xyz", library="mbedtls@3.6+p256m", ms=1)
                     + ROW.format(id="nolib", board="stm32f411", library="openssl@3.5", ms=1)
                     + ROW.format(id="nogroup", board="stm32l4a6", library="mbedtls@3.6+p256m", ms=1)
                     .replace('group = "keygen"', 'group = "encapsulate"')
                     + ROW.format(id="noconfig", board="stm32l4a6", library="mbedtls@3.6+p256m", ms=1)
                     + 'config = "configs/none.h"\n'
                     + ROW.format(id="noarch", board="esp32c3", library="wolfssl@5.7+sp-asm", ms=1))
    out = CliRunner().invoke(main, ["validate", "cycles", "--table", str(table), "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    (row,) = doc["rows"]
    assert row["id"] == "mine" and row["published_cycles"] == pytest.approx(160e-3 * 80e6)
    assert row["error"] == pytest.approx(row["predicted_cycles"] / row["published_cycles"] - 1)
    assert row["role"] == "validation" and row["predicted_cycles"] > row["instructions"]
    assert {s["id"]: s["reason"].split(" ")[1] for s in doc["skipped"]} == {"nowhere": "board", "nolib": "build",
                                                                            "nogroup": "mbedtls@3.6+p256m",
                                                                            "noconfig": "config",
                                                                            "noarch": "does"}  # not build for it
    assert "ecdh-p256/keygen" in next(s["reason"] for s in doc["skipped"] if s["id"] == "nogroup")
    assert doc["summary"]["validation_rows"] == 1


def test_a_calibration_row_of_another_build_is_refused():
    """A factor fitted to another build's figure would carry its difference into every estimate."""
    from dataclasses import replace

    from tlsbench.app.validate import TableError, fit

    rows = [replace(r, not_reproducible="another build") if r.id == board("stm32f411").core.calibration_row else r
            for r in read_table(PUBLISHED)]
    with pytest.raises(TableError, match="calibrates on p256m-f411-ecdh, a row whose published build is not"):
        fit(rows)


@pytest.mark.parametrize("text, says", [
    (ROW.format(id="x", board="stm32xyz", library="mbedtls@3.6+p256m", ms=1), "no row of the table could run"),
    (ROW.format(id="x", board="stm32f411", library="mbedtls@3.6+p256m", ms=-1), "exactly one of cycles or ms"),
    ('[[row]]\nid = "x"\n', "board, library, experiment, group, source missing"),
    ("row = [", "not a TOML table"),
])
def test_a_bad_table_is_one_line(tmp_path, text, says):
    table = tmp_path / "t.toml"
    table.write_text(text)
    out = CliRunner().invoke(main, ["validate", "cycles", "--table", str(table)])
    assert out.exit_code == 1 and says in out.output and out.output.count("\n") == 1, out.output


def test_riscv_code_is_classed_and_its_model_says_it_is_not_validated():
    """QEMU's RISC-V disassembly (the encoding first) classes like Arm's; the ESP32-C3's timing
    table has no published figure behind it: its estimates say so instead of a band."""
    from tlsbench.analysis.models.conversion import conversion
    from tlsbench.analysis.models.energy.profiles import board_point
    from tlsbench.analysis.units import Unit

    b = board("esp32c3")
    target = targets.load().emulated[b.core.target]
    c = _counts(target.name, b.name, target.library)[("ecdh-p256", "keygen")].counts  # the target's own build
    assert sum(c[k] for k in CLASSES) == c["instructions"] and min(c["load"], c["store"], c["mul"], c["taken"]) > 0
    conv = conversion(Unit("instructions (QEMU icount)"), board_point(b), cpu="rv32imc")
    assert conv.band is None and conv.band_text() == "error not measured" and "no published figure" in conv.basis
