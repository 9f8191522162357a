# SPDX-License-Identifier: Apache-2.0
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tlsbench.core import spec


def test_labels_and_enums_come_from_the_files():
    s = spec.load()
    raw = (spec.SPEC_DIR / spec.LABELS_FILE).read_bytes()
    assert s.labels_crc32 == zlib.crc32(raw)
    assert all(s.label_by_id[l.id] is l for l in s.labels)
    assert len(s.label_by_name) == len(s.labels)  # names are unique
    assert set(s.label_ids("step")) <= set(s.label_by_id)
    assert s.frames.name(s.frames.REP) == "REP"
    assert s.flags.by_name[next(iter(s.flags))] == 1  # masks, not bit numbers


def test_name_table_errors_list_allowed_values():
    with pytest.raises(KeyError, match="allowed: .*x25519"):
        spec.load().groups.value("curve25519")


def test_agent_built_from_other_specs_is_refused():
    s = spec.load()
    hello = {"agent": "a", "labels_crc32": s.labels_crc32 ^ 1, "protocol_crc32": s.protocol_crc32,
             "protocol": s.protocol_version}
    with pytest.raises(spec.SpecMismatch, match="rebuild it with make"):
        s.check_agent(hello)
    s.check_agent(dict(hello, labels_crc32=s.labels_crc32))


REPO = Path(__file__).resolve().parents[1]


def test_docs_tables_are_generated_from_the_spec():
    """docs/protocol.md's layout and key-exchange tables are what genspec.py writes from
    spec/protocol.toml: edit the spec, then run the command this test prints."""
    check = subprocess.run([sys.executable, str(REPO / "agent" / "tools" / "genspec.py"), "docs",
                            str(REPO / "spec" / "protocol.toml"), str(REPO / "docs" / "protocol.md"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_layout_offsets_follow_from_order_and_types():
    s = spec.load()
    for layout in s.layouts.values():
        assert layout.struct.size == layout.size
        at = 0
        for f in layout.fields:
            assert f.offset == at, (layout.name, f.name)
            at += f.size
    assert [s.layouts[n].size for n in ("frame_header", "run_request", "rep_header", "record")] == [8, 72, 96, 32]


@pytest.mark.parametrize("old, new, message", [
    (b'{ offset = 4,  name = "suite_id"', b'{ offset = 5,  name = "suite_id"',
     "run_request] suite_id: offset 5, but the fields before it end at 4"),
    (b"size = 96", b"size = 98", "rep_header] size 98, but its fields take 96 bytes"),
    (b'name = "dropped",            type = "u32"', b'name = "dropped",            type = "u24"', "unknown type 'u24'"),
])
def test_the_generator_refuses_a_layout_that_contradicts_itself(tmp_path, old, new, message):
    """genspec.py, which every agent build runs, is where offsets are checked."""
    raw = (spec.SPEC_DIR / spec.PROTOCOL_FILE).read_bytes()
    assert old in raw
    (tmp_path / "protocol.toml").write_bytes(raw.replace(old, new))
    run = subprocess.run([sys.executable, str(REPO / "agent" / "tools" / "genspec.py"), "header",
                          str(spec.SPEC_DIR / spec.LABELS_FILE), str(tmp_path / "protocol.toml"), str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and message in run.stderr, run.stderr
    assert not (tmp_path / "out" / "spec_gen.h").exists()


@pytest.mark.parametrize("key_exchange, group, applies", [
    ("ECDHE", 0, True), ("ECDHE", 23, True), ("ECDHE", 29, True), ("ECDHE", 256, False),
    ("ECDHE-PSK", 24, True), ("DHE", 257, True), ("DHE", 23, False), ("any", 29, True), ("ANY", 256, True),
    ("(EC)DHE", 30, True), ("RSA", 0, True), ("RSA", 23, False), ("PSK", 256, False), ("ECDH", 23, False),
    ("ECDH", 0, True),
])
def test_groups_a_key_exchange_takes(key_exchange, group, applies):
    assert spec.load().group_applies(key_exchange, group) is applies


def test_every_declared_library_build_has_what_its_builders_need():
    """spec/libraries.toml is the one list of versions: each Debian 13 build has a recipe and a
    CMake variable, each backend a source file, each device build a firmware backend; the bare
    names are the Debian 12 builds, the default first."""
    from tlsbench.builder import cross, custom_version, libraries, prefixes
    from tlsbench.core import libraries as declared
    from tlsbench.plan.libraries import LIBRARIES

    builds = declared.load()
    debian13 = {lib.spec for lib in builds.from_source(declared.DEBIAN13)}
    assert debian13 == set(libraries.RECIPES) == set(prefixes.CMAKE_VARIABLES) and debian13
    assert set(custom_version.CUSTOM_RECIPES) == {lib.spec for lib in builds.all if lib.custom} & debian13
    assert set(cross.CROSS_SOURCES) == {b.name for b in builds.device} >= {"mbedtls@2.28", "mbedtls@3.6", "wolfssl@5.7"}
    for lib in builds.all:
        assert (REPO / "agent" / "src" / "backends" / f"{lib.backend}.c").is_file(), lib
    for build in builds.device:
        assert build.config.is_file(), build
        assert (REPO / "agent" / "firmware" / "backends" / f"{build.library.backend}.cmake").is_file(), build
    assert LIBRARIES == ("mbedtls", "openssl", "wolfssl") and builds.bare_build("openssl").spec == "openssl@3.0"


@pytest.mark.parametrize("text, message", [
    ('[library."mbedtls"]\nsource = "debian12"\npackage = "p"\nbackend = "b"\n', "name it <library>@<major>.<minor>"),
    ('[library."mbedtls@2.28"]\nsource = "debian11"\npackage = "p"\nbackend = "b"\n', "source: one of debian12"),
    ('[library."a@1.0"]\nsource = "debian12"\npackage = "p"\nbackend = "b"\n'
     '[library."a@1.1"]\nsource = "debian12"\npackage = "p"\nbackend = "b"\n', "a bare name must mean one build"),
])
def test_a_library_declaration_that_contradicts_itself_is_refused(text, message):
    from tlsbench.core import libraries as declared

    with pytest.raises(ValueError, match=message):
        declared.parse(text)


def test_the_declared_targets_are_what_plans_take_and_the_run_boots(tmp_path):
    """spec/targets.toml is the one list of targets: a plan's [device] target takes the emulated
    ones, the default first, and the run boots the default with the command line it always had."""
    from tlsbench.core import targets
    from tlsbench.plan.device import TARGETS

    declared = targets.load()
    assert TARGETS == tuple(declared.emulated) and TARGETS[0] == "qemu-mps2-an386" and len(TARGETS) == 7
    image = tmp_path / "fw.elf"
    assert declared.emulated["qemu-mps2-an386"].command(image) == [
        "qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor", "none", "-semihosting-config",
        "enable=on,target=native", "-icount", "shift=0", "-serial", "stdio", "-kernel", str(image)]
    assert (declared.emulated["qemu-mps2-an386"].elf.bits, declared.emulated["qemu-mps2-an386"].elf.machine) == (32, 40)
    default = declared.default
    assert default.attributes == ("Tag_CPU_arch: v7E-M", "Tag_ABI_VFP_args: VFP registers") and default.has_fpu
    assert default.counter.units_per_tick * default.counter.clock_hz == 10**9  # 1 ns per instruction: 40 x 25 MHz
