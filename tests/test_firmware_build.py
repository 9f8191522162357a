# SPDX-License-Identifier: Apache-2.0
"""The firmware builder (tlsbench.builder.firmware, docs/porting.md) and the cross-built library
cache under it (tlsbench.builder.cross): cache keys follow config and toolchain, an archive built
for another CPU or float ABI is refused, the warm cache answers without building, image sizes
are read from the ELF, bad input is one line, a config header that includes its base is built
as the whole configuration, the target's board header and memory map are generated from
spec/targets.toml. The images themselves run in ctest (agent/tests/device_smoke.py), built by
`make firmware`."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench.builder import cross, firmware, libraries
from tlsbench.builder.shell import BuildError
from tlsbench.core import targets

TC = cross.DEFAULT_TOOLCHAIN
REPO = cross.REPO
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
    """One key function for every entry: a cross build's follows the Debian version, the config
    and the toolchain; a host build's name is what it was before cross builds joined the cache
    (so a user's cached Debian 13 builds stay valid)."""
    tc = {"name": "cortex-m4", "file": "x.cmake", "file_sha256": "a", "cpu": "cortex-m4", "compiler": "gcc 12.2"}
    config_a, config_b = cross.config_options(b"#define A\n"), cross.config_options(b"#define B\n")
    base = libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION, tc)
    assert base.startswith("mbedtls-2.28.3-")
    assert base == libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION, dict(tc))
    others = {libraries.entry_name("mbedtls", "mbedtls", "2.28.3-2", config_a, cross.REVISION, tc),
              libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_b, cross.REVISION, tc),
              libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION, {**tc, "compiler": "13"}),
              libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION, {**tc, "cpu": "cortex-m0"}),
              libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION + 1, tc),
              libraries.entry_name("mbedtls", "mbedtls", "2.28.3-1", config_a, cross.REVISION)}
    assert base not in others and len(others) == 6
    rec = libraries.recipe("openssl@3.5")
    before = json.dumps({"package": "openssl", "debian_version": "3.5.7-1~deb13u2", "options": rec.options,
                         "revision": libraries.REVISION}, sort_keys=True)
    assert rec.entry("3.5.7-1~deb13u2") == f"openssl-3.5.7-{hashlib.sha256(before.encode()).hexdigest()[:10]}"
    layout = cross.cross_source("mbedtls@2.28").layout(Path("/c"), TC)
    assert layout.prefix(base) == Path("/c/libs/cortex-m4") / base and rec.layout(Path("/c")).libs == Path("/c/libs")


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
    prefix = tmp_path / "cortex-m4" / "mbedtls-2.28.3-0123456789"
    (prefix / "lib").mkdir(parents=True)
    archives = libraries.ARCHIVES["mbedtls"]
    for a in archives:
        (prefix / "lib" / a).write_bytes(b"!<arch>\n")
    assert libraries.CachedLibrary.load(prefix, cross.REVISION) is None  # no build.json: a build that did not finish
    entry = libraries.CachedLibrary(prefix, "mbedtls@2.28", "mbedtls", "2.28.3", "2.28.3-1", ("c",), archives, (),
                                    toolchain={"name": "cortex-m4"}, config={"name": "c.h", "sha256": "ab"},
                                    revision=cross.REVISION).stamp()
    assert libraries.CachedLibrary.load(prefix, cross.REVISION) == entry
    assert libraries.CachedLibrary.load(prefix, cross.REVISION + 1) is None
    (prefix / "lib" / archives[0]).unlink()
    assert libraries.CachedLibrary.load(prefix, cross.REVISION) is None


@needs_toolchain
def test_the_library_is_built_once_for_the_board_config():
    """The default firmware's library (built by `make firmware`, or here the first time):
    its archives are for the Cortex-M4, its entry names the config and the compiler, and a
    second call is a lookup that returns the same entry."""
    lib = cross.ensure("mbedtls@2.28", firmware.DEFAULT_CONFIG, TC)
    assert lib.version.startswith("2.28.") and lib.prefix.parent.name == TC.name
    assert lib.config["name"] == "device-mps2.h" and lib.toolchain["compiler"].startswith("arm-none-eabi-gcc")
    assert lib.toolchain["cpu"] == "cortex-m4" and lib.debian_suite == "bookworm"
    assert (lib.include / cross.CONFIG_HEADER).read_bytes() == firmware.DEFAULT_CONFIG.read_bytes()
    cross.check_attributes(TC, lib.archive_paths())
    stamp = (lib.prefix / libraries.STAMP).stat().st_mtime_ns
    assert cross.ensure("mbedtls@2.28", firmware.DEFAULT_CONFIG, TC) == lib
    assert (lib.prefix / libraries.STAMP).stat().st_mtime_ns == stamp


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
    with pytest.raises(BuildError, match=r"unknown target 'nrf52840'; declared \(spec/targets.toml\): qemu-mps2-an386, "):
        firmware.build_firmware(dataclasses.replace(firmware.FirmwareRequest(), target="nrf52840"))
    with pytest.raises(BuildError, match=r"no device build 'wolfssl@5.5'; known: mbedtls@2.28, mbedtls@3.6, "
                                         r"mbedtls@3.6\+p256m, wolfssl@5.7, wolfssl@5.7\+sp-asm \(spec/libraries.toml"):
        cross.cross_source("wolfssl@5.5")
    assert firmware.main(["--config", str(tmp_path / "none.h"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: config header ") and err[-1].endswith("none.h not found: name a C header file (configs/ holds examples)"), err


def test_image_name_and_folder_follow_library_and_config(tmp_path):
    req = firmware.FirmwareRequest(config=Path("configs/mbedtls/tiny.h"), build_root=tmp_path)
    assert req.image_name == "mbedtls-tiny" and req.folder == tmp_path / "mbedtls-tiny"
    assert dataclasses.replace(req, name="mine").image_name == "mine"


def test_a_config_that_includes_its_base_is_the_whole_configuration(tmp_path):
    """configs/mbedtls/device-mps2-small.h is device-mps2.h plus four lines: what is built,
    keyed and recorded is the expanded header, so a change to the base rebuilds the small one."""
    small = REPO / "configs" / "mbedtls" / "device-mps2-small.h"
    text = cross.config_text(small)
    base = firmware.DEFAULT_CONFIG.read_bytes()
    assert base in text and b'#include "device-mps2.h"' not in text and b'#include "mbedtls/check_config.h"' in text
    assert text.index(b"#define MBEDTLS_SSL_MAX_CONTENT_LEN 4096") < text.index(base)
    (tmp_path / "base.h").write_text("#define A 1\n")
    (tmp_path / "small.h").write_text('#define B 2\n#include "base.h"\n#include <stdint.h>\n')
    first = cross.config_options(cross.config_text(tmp_path / "small.h"))
    assert cross.config_text(tmp_path / "small.h") == b'#define B 2\n#define A 1\n#include <stdint.h>\n'
    (tmp_path / "base.h").write_text("#define A 3\n")
    assert cross.config_options(cross.config_text(tmp_path / "small.h")) != first
    (tmp_path / "base.h").write_text('#include "small.h"\n')
    with pytest.raises(BuildError, match="includes itself"):
        cross.config_text(tmp_path / "small.h")


def test_the_board_header_and_memory_map_come_from_the_target(tmp_path):
    """agent/tools/gentarget.py (run by the firmware build) writes what targets.toml declares;
    an unknown target is one line naming the declared ones."""
    target = targets.load().default
    tool, spec = REPO / "agent" / "tools" / "gentarget.py", REPO / "spec" / "targets.toml"
    subprocess.run([sys.executable, str(tool), str(spec), target.name, str(tmp_path)], check=True)
    header = (tmp_path / "board.h").read_text()
    for line in (f'#define TB_BOARD_NAME "{target.name}"', f"#define TB_BOARD_FPU {int(target.has_fpu)}",
                 f"#define TB_BOARD_UNITS_PER_TICK_NUM {target.counter.units_per_tick}u",
                 "#define TB_BOARD_UNITS_PER_TICK_DEN 1u",
                 f'#define TB_BOARD_COUNTER_UNIT "{target.counter.unit}"', "#define TB_BOARD_UART_BASE 0x40004000u"):
        assert line in header, line
    memory = (tmp_path / "board_memory.ld").read_text()
    assert "FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 0x400000" in memory
    assert "RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 0x400000" in memory and ": 0x10000;" in memory
    assert f"set(TB_BOARD {target.board})" in (tmp_path / "target.cmake").read_text()
    bad = subprocess.run([sys.executable, str(tool), str(spec), "nrf52840", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 1 and f"declared: {target.name}, " in bad.stderr
    an547 = tmp_path / "an547"  # 31.25 instructions per tick: an exact fraction, no marker-less default
    subprocess.run([sys.executable, str(tool), str(spec), "qemu-mps3-an547", str(an547)], check=True)
    header = (an547 / "board.h").read_text()
    assert "#define TB_BOARD_UNITS_PER_TICK_NUM 125u" in header and "#define TB_BOARD_UNITS_PER_TICK_DEN 4u" in header
    assert "#define TB_BOARD_UART_CLOCK_HZ 25000000u" in header
    virt = tmp_path / "virt"  # no GPIO: no marker register
    subprocess.run([sys.executable, str(tool), str(spec), "qemu-riscv32-virt", str(virt)], check=True)
    assert "TB_BOARD_MARKER_REG" not in (virt / "board.h").read_text()


def test_every_target_names_what_exists():
    """Each target's arch, board, toolchain file and default library build exist, and the
    library can be built for a device; the builders' boards are the targets' boards."""
    from tlsbench.core import libraries as declared

    for t in targets.load().all:
        assert (REPO / "agent" / "arch" / t.arch.name / "arch.cmake").is_file(), t.name
        assert (REPO / "agent" / "boards" / t.board / f"{t.board}.ld").is_file(), t.name
        assert cross.toolchain(t).file.is_file() and t.config.is_file(), t.name
        build = declared.load().device_build(t.library)
        assert build is not None and build.builds_for(t.arch.name), t.name
        assert t.qemu is not None and "-icount" in t.qemu.flags and "shift=0" in t.qemu.flags, t.name
        assert t.counter.unit == "instructions (QEMU icount)", t.name
    assert {t.isa for t in targets.load().all} >= {"v6S-M", "v7", "v7E-M", "v8-M.mainline", "v8.1-M.mainline", "rv32imac"}


def test_a_riscv_architecture_attribute_is_read_as_its_letters():
    """readelf's versioned RISC-V ISA string is compared as the core's letters: the versions
    follow the compiler, the Z extensions GCC 12's ISA spec."""
    assert targets.isa_name('"rv32i2p1_m2p0_a2p1_c2p0_zmmul1p0"') == "rv32imac"
    assert targets.isa_name("rv32i2p0_m2p0_c2p0") == "rv32imc" and targets.isa_name("v6S-M") == "v6S-M"


@needs_toolchain
def test_an_armv7m_object_is_refused_in_an_armv6m_build(tmp_path):
    """The M0 target runs on a Cortex-M3 machine, which would execute ARMv7-M instructions an
    M0 lacks: every object must say v6S-M."""
    m0 = cross.toolchain(targets.load().emulated["qemu-cortex-m0"])
    cross.check_attributes(m0, [_archive(tmp_path, "m0", ["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"])])
    with pytest.raises(BuildError, match=r"libm3\.a was not built for cortex-m0 \(found Tag_CPU_arch: v7; "
                                         r"expected Tag_CPU_arch: v6S-M\)"):
        cross.check_attributes(m0, [_archive(tmp_path, "m3", ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"])])
