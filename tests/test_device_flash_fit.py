# SPDX-License-Identifier: Apache-2.0
"""Does it fit the flash: wolfSSL 5.7's firmware outgrows the AN547's 512 KiB ITCM (the real
cross linker says by how much). The builder reports that as a result, not a failed build; a
plan over two targets with it runs the lane that fits and stores each configuration of the other
with "does not fit in flash (...)", which `tlsbench status`, `tlsbench matrix` and the exports
show; a resume relinks only and stores the same reason; a plan none of whose lanes fits stores
that and ends with one line. The real firmware under real QEMU and the real cross linker; about
20 s with the images and objects built (measured 14-23 s), the first time about two minutes (the
wolfSSL cross build for the M55 and two firmware builds)."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tlsbench import plan
from tlsbench.app.matrix import device_matrix, markdown
from tlsbench.app.run import run_experiment
from tlsbench.builder import firmware
from tlsbench.builder.shell import BuildError
from tlsbench.cli import main
from tlsbench.core import targets
from tlsbench.export import tidy
from stores import reader

FITS, SMALL = "qemu-mps2-an386", "qemu-mps3-an547"  # 4 MiB of image memory; the M55's 512 KiB ITCM
BIG = "wolfssl@5.7"
TLS13 = "TLS_AES_128_GCM_SHA256"


def fit_plan(name: str, on: list[str]) -> str:
    return (f'name = "{name}"\nsuites = ["{TLS13}"]\ngroups = ["x25519"]\nrepetitions = 1\n'
            f'[device]\ntarget = {json.dumps(on)}\nlibrary = "{BIG}"\n')


@pytest.fixture(scope="module")
def too_big() -> firmware.DoesNotFit:
    """The real linker's verdict on the AN547's image."""
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    with pytest.raises(firmware.DoesNotFit) as caught:
        firmware.ensure_firmware(firmware.FirmwareRequest.of_target(SMALL, library=BIG))
    return caught.value


@pytest.fixture(scope="module")
def stored(tmp_path_factory, too_big):
    out = tmp_path_factory.mktemp("flash")
    summary = run_experiment(plan.parse(fit_plan("flash", [FITS, SMALL]), "flash.toml"), out)
    return summary, out / "flash"


def test_the_linkers_overflow_is_a_result_with_the_parts_size(too_big):
    o = too_big.overflow
    assert (too_big.target, too_big.library, o.image, o.region) == (SMALL, BIG, "counting", "flash")
    assert o.size == targets.load().emulated[SMALL].memory.flash.size == 512 * 1024
    assert 100_000 < o.over < 1_000_000  # about 318 KB with Debian's gcc 12.2
    assert o.reason == f"does not fit in flash (the image needs {o.over:,} bytes more than the part's 524,288)"


def test_a_build_not_made_for_the_core_is_a_result_before_any_build():
    with pytest.raises(firmware.NotForCore, match="not built for riscv cores"):
        firmware.build_firmware(firmware.FirmwareRequest.of_target("qemu-riscv32-virt", library="wolfssl@5.7+sp-asm"))


@pytest.mark.parametrize("line, region, over", [
    (".../arm-none-eabi/bin/ld: region `FLASH' overflowed by 318480 bytes", "FLASH", 318480),
    (".../riscv64-unknown-elf/bin/ld: region `RAM' overflowed by 1 byte", "RAM", 1)])  # both toolchains' GNU ld
def test_the_linkers_words_are_read(line, region, over):
    found = firmware.OVERFLOW.search(line)
    assert found and (found[1], int(found[2])) == (region, over) and found[1] in firmware.REGIONS


def test_other_build_failures_stay_errors():
    failed = BuildError("building the firmware failed", "main.c:1: error: unknown type name 'x'\n")
    request = firmware.FirmwareRequest.of_target(SMALL, library=BIG)
    assert firmware._overflow(failed, request, targets.load().emulated[SMALL], request.folder / "build.log") is None


def test_the_lane_that_fits_runs_and_the_others_configurations_say_why_not(stored, too_big):
    summary, folder = stored
    assert summary.failed == 0 and summary.stored == 1
    with reader(folder / "tlsbench.db") as st:
        rows = st.config_rows("all")
        measured = {r.config_id for _, r in st.repetition_rows()}
    ran = [c for c in rows if c.target == FITS]
    unfit = [c for c in rows if c.target == SMALL]
    assert len(ran) == 1 and ran[0].skip_reason is None and measured == {ran[0].id}
    # The same configurations as the lane of the same build that fits, on the other target.
    assert [c.key.replace(SMALL, FITS) for c in unfit] == [c.key for c in ran]
    assert [c.skip_reason for c in unfit] == [too_big.overflow.reason]
    assert summary.skipped_configs == {c.key: too_big.overflow.reason for c in unfit}


def test_status_the_matrix_and_the_export_show_it_per_configuration(stored, too_big):
    folder = stored[1]
    status = CliRunner().invoke(main, ["status", str(folder)], env={"COLUMNS": "400"}, catch_exceptions=False)
    assert status.exit_code == 0
    line = next(line for line in status.output.splitlines() if f"target:{SMALL}" in line)
    assert too_big.overflow.reason in line
    m = device_matrix([folder])
    assert [(c.target, c.core) for c in m.columns] == [(FITS, "cortex-m4"), (SMALL, "cortex-m55")]
    (row,) = m.rows
    assert m.cells[(row, 1)].not_run == too_big.overflow.reason and not m.cells[(row, 1)].count
    text = markdown(m)
    assert "| does not fit in flash |" in text
    assert f"- cortex-m55 {BIG}: {too_big.overflow.reason}" in text
    with reader(folder / "tlsbench.db") as st:
        exported = {r["target"]: (r["core"], r["counter_unit"], r["skip_reason"]) for r in tidy.config_rows(st)}
    unit = "instructions (QEMU icount)"  # a lane that never booted: its target's declared core and unit
    assert exported == {FITS: ("cortex-m4", unit, ""), SMALL: ("cortex-m55", unit, too_big.overflow.reason)}


def test_a_resume_relinks_only_and_stores_the_same_reason(stored, too_big):
    summary, folder = stored
    again = run_experiment(plan.parse(fit_plan("flash", [FITS, SMALL]), "flash.toml"), folder.parent, resume=True)
    assert again.stored == 0 and again.skipped_configs == summary.skipped_configs
    with reader(folder / "tlsbench.db") as st:
        assert sorted(c.skip_reason or "" for c in st.config_rows("all")) == ["", too_big.overflow.reason]
    log = (firmware.FirmwareRequest.of_target(SMALL, library=BIG).folder / "build.log").read_text()
    assert "overflowed by" in log and "Building C object" not in log  # nothing compiled again: the links only


def test_a_plan_none_of_whose_lanes_fits_stores_that_and_ends_with_one_line(tmp_path, too_big):
    path = tmp_path / "none.toml"
    path.write_text(fit_plan("none", [SMALL]))
    run = CliRunner().invoke(main, ["run", str(path), "--output", str(tmp_path / "out")], catch_exceptions=False)
    assert run.exit_code == 1
    error = [line for line in run.output.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and too_big.overflow.reason in error[0] and "tlsbench status" in error[0]
    with reader(tmp_path / "out" / "none" / "tlsbench.db") as st:
        cells = [(c.cell, c.reason) for c in st.skipped_cells()]
    assert cells == [(SMALL, f"{SMALL}: {too_big.overflow.reason}; no lane of the plan with the same library "
                             "build has an image, so its configurations are not known")]
    status = CliRunner().invoke(main, ["status", str(tmp_path / "out" / "none")], env={"COLUMNS": "400"},
                                catch_exceptions=False)
    assert status.exit_code == 0 and too_big.overflow.reason in status.output
