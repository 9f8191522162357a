# SPDX-License-Identifier: Apache-2.0
"""The firmware builder (tlsbench.builder.firmware, docs/porting.md) and the cross-built library
cache under it (tlsbench.builder.cross): cache keys follow config and toolchain, an archive built
for another CPU or float ABI is refused, the warm cache answers without building, image sizes
are read from the ELF, bad input is one line. The images themselves run in ctest
(agent/tests/device_smoke.py), built by `make firmware`."""
from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tlsbench.builder import cross, firmware
from tlsbench.builder.shell import BuildError

TC = cross.CORTEX_M4
needs_toolchain = pytest.mark.skipif(shutil.which(TC.compiler) is None,
                                     reason="arm-none-eabi-gcc missing: scripts/install-deps.sh installs it")
CPU = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def _archive(tmp: Path, name: str, flags: list[str]) -> Path:
    src = tmp / f"{name}.c"
    src.write_text("float twice(float x) { return 2 * x; }\n")
    obj = tmp / f"{name}.o"
    subprocess.run([TC.compiler, *flags, "-c", str(src), "-o", str(obj)], check=True)
    archive = tmp / f"lib{name}.a"
    subprocess.run(["arm-none-eabi-ar", "rcs", str(archive), str(obj)], check=True)
    return archive


def test_cache_key_follows_version_config_and_toolchain():
    src = cross.cross_source("mbedtls@2.28")
    tc = {"name": "cortex-m4", "file": "x.cmake", "file_sha256": "a", "compiler": "gcc 12.2"}
    base = cross.entry_name(src, "2.28.3-1", b"#define A\n", tc)
    assert base.startswith("mbedtls-2.28.3_1-cortex-m4-")
    assert base == cross.entry_name(src, "2.28.3-1", b"#define A\n", dict(tc))
    others = {cross.entry_name(src, "2.28.3-2", b"#define A\n", tc),
              cross.entry_name(src, "2.28.3-1", b"#define B\n", tc),
              cross.entry_name(src, "2.28.3-1", b"#define A\n", {**tc, "compiler": "gcc 13.1"}),
              cross.entry_name(src, "2.28.3-1", b"#define A\n", {**tc, "file_sha256": "b"})}
    assert base not in others and len(others) == 4


@needs_toolchain
def test_archive_for_another_cpu_or_float_abi_is_refused(tmp_path):
    cross.check_attributes(TC, [_archive(tmp_path, "m4", CPU)])
    with pytest.raises(BuildError, match=r"libdefault\.a was not built for cortex-m4 \(found Tag_CPU_arch: v4T; expected Tag_CPU_arch: v7E-M\)"):
        cross.check_attributes(TC, [_archive(tmp_path, "default", [])])  # the compiler's default CPU
    soft = _archive(tmp_path, "soft", [*CPU[:2], "-mfloat-abi=softfp", "-mfpu=fpv4-sp-d16"])
    with pytest.raises(BuildError, match="Tag_ABI_VFP_args"):
        cross.check_attributes(TC, [soft])
    with pytest.raises(BuildError, match="installed no libmissing.a"):
        cross.check_attributes(TC, [tmp_path / "libmissing.a"])


def test_entry_without_stamp_or_of_another_revision_is_invisible(tmp_path):
    prefix = tmp_path / "mbedtls-2.28.3_1-cortex-m4-0123456789"
    (prefix / "lib").mkdir(parents=True)
    for a in cross.ARCHIVES:
        (prefix / "lib" / a).write_bytes(b"!<arch>\n")
    assert cross.CrossLibrary.load(prefix) is None  # no build.json: a build that did not finish
    entry = cross.CrossLibrary(prefix, "mbedtls@2.28", "mbedtls", "2.28.3", "2.28.3-1", "c.h", "ab",
                               {"name": "cortex-m4"})
    (prefix / cross.STAMP).write_text(json.dumps(entry.to_json()))
    assert cross.CrossLibrary.load(prefix) == entry
    (prefix / cross.STAMP).write_text(json.dumps({**entry.to_json(), "revision": cross.REVISION + 1}))
    assert cross.CrossLibrary.load(prefix) is None
    (prefix / cross.STAMP).write_text(json.dumps(entry.to_json()))
    (prefix / "lib" / cross.ARCHIVES[0]).unlink()
    assert cross.CrossLibrary.load(prefix) is None


@needs_toolchain
def test_the_library_is_built_once_for_the_board_config():
    """The default firmware's library (built by `make firmware`, or here the first time):
    its archives are for the Cortex-M4, its entry names the config and the compiler, and a
    second call is a lookup that returns the same entry."""
    lib = cross.ensure("mbedtls@2.28", firmware.DEFAULT_CONFIG, TC)
    assert lib.version.startswith("2.28.")
    assert lib.config_name == "device-mps2.h" and lib.toolchain["compiler"].startswith("arm-none-eabi-gcc")
    assert (lib.include / cross.CONFIG_HEADER).read_bytes() == firmware.DEFAULT_CONFIG.read_bytes()
    cross.check_attributes(TC, lib.archive_paths())
    stamp = (lib.prefix / cross.STAMP).stat().st_mtime_ns
    assert cross.ensure("mbedtls@2.28", firmware.DEFAULT_CONFIG, TC) == lib
    assert (lib.prefix / cross.STAMP).stat().st_mtime_ns == stamp


@needs_toolchain
def test_image_sizes_come_from_the_elf(tmp_path):
    src = tmp_path / "image.c"
    src.write_text("unsigned char table[4096] = {1};\nunsigned char zeros[8192];\n"
                   "int main(void) { return table[0] + zeros[1]; }\n")
    elf = tmp_path / "image.elf"
    subprocess.run([TC.compiler, *CPU, "-nostdlib", "-e", "main", str(src), "-o", str(elf)], check=True)
    text, data, bss = firmware.image_sizes(TC.size_tool, elf)
    assert 0 < text < 4096 and data >= 4096 and bss >= 8192


def test_bad_input_is_one_line(tmp_path, capsys):
    with pytest.raises(BuildError, match="unknown board 'nrf52840'; known: mps2-an386"):
        firmware.build_firmware(dataclasses.replace(firmware.FirmwareRequest(), board="nrf52840"))
    with pytest.raises(BuildError, match="no cross build of 'wolfssl@5.7'; known: mbedtls@2.28"):
        cross.cross_source("wolfssl@5.7")
    assert firmware.main(["--config", str(tmp_path / "none.h"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: config header ") and err[-1].endswith("none.h not found: name a C header file (configs/ holds examples)"), err


def test_image_name_and_folder_follow_library_and_config(tmp_path):
    req = firmware.FirmwareRequest(config=Path("configs/mbedtls/tiny.h"), build_root=tmp_path)
    assert req.image_name == "mbedtls-tiny" and req.folder == tmp_path / "mbedtls-tiny"
    assert dataclasses.replace(req, name="mine").image_name == "mine"
