# SPDX-License-Identifier: Apache-2.0
"""The cycle model's counting tool and what it counts (docs/cycles.md):

    <cache>/cycles/<key>/libtb_cycles.so       the QEMU TCG plugin (agent/tools/cycles/tb_cycles.c)
    <cache>/cycles/<key>/fw/<build>-<core>.elf  a validation program: a library's P-256 operations

Both are built on first use (a second, a few seconds per program), keyed by their sources.
`count()` boots a program under QEMU with the plugin and returns the executed instructions of
each operation by class: what `tlsbench validate cycles` turns into cycles for a board.

The validation programs are a stopgap until the device firmware runs the primitives
experiments on every core (issue 29): they run the same library code (p256-m from mbed TLS
3.6, wolfCrypt's single-precision P-256 with its Cortex-M or Thumb assembly), built with the
options the published figures name."""
from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from tlsbench.builder.libraries import default_cache, source_tree
from tlsbench.builder.shell import BuildError, run
from tlsbench.core.boards import Core, MemorySystem

TOOL_DIR = Path(__file__).resolve().parents[3] / "agent" / "tools" / "cycles"
PROGRAM_DIR = TOOL_DIR / "validate"
QEMU_FLAGS = ["-display", "none", "-monitor", "none", "-serial", "null", "-semihosting-config",
              "enable=on,target=native", "-icount", "shift=0"]
SNAP_EXIT = 0xFFFF_FFFF
QEMU_TIMEOUT_S = 300
ARMV6M = ("cortex-m0", "cortex-m0plus")
ARM_STREAMS = ("armv6-m", "armv7-m")
# wolfCrypt's files a P-256 program links (ecc over sp_int, the DRBG, SHA-256, DER signatures).
WOLFCRYPT = ("ecc.c", "sp_int.c", "sp_cortexm.c", "sp_armthumb.c", "sp_c32.c", "random.c", "sha256.c", "memory.c",
             "wolfmath.c", "logging.c", "hash.c", "wc_port.c", "asn.c", "coding.c")


@dataclass(frozen=True)
class Arch:
    """How a validation program of one instruction stream (spec/cores.toml `stream`) is built and booted."""

    prefix: str  # the gcc triplet's tools: <prefix>gcc, <prefix>nm
    cflags: tuple[str, ...]  # besides -O and the sections (the core's -mcpu or -march)
    start: str  # validate/<start>.c: the entry and the semihosting call
    link: tuple[str, ...]  # the C library and the entry
    qemu: tuple[str, ...]  # QEMU's binary and flags before -M's machine flags
    flash: tuple[int, int]  # where code and constants sit (validate.ld's FLASH): base, size
    ram: tuple[int, int]
    plugin: tuple[str, ...] = ()  # the plugin's arguments for this stream's disassembly


_ARM = Arch("arm-none-eabi-", ("-mthumb",), "arm", ("--specs=nosys.specs",), ("qemu-system-arm",),
            (0x0, 0x40_0000), (0x2000_0000, 0x4_0000))
# RV32IMC: Debian's picolibc has no rv32imc multilib; rv32imac's is the same code without atomics.
ARCHES: Mapping[str, Arch] = {
    "armv6-m": _ARM, "armv7-m": _ARM,
    "rv32": Arch("riscv64-unknown-elf-", ("-march=rv32imac", "-mabi=ilp32"), "riscv",
                 ("--specs=picolibc.specs", "-Wl,-e,_start"), ("qemu-system-riscv32", "-bios", "none"),
                 (0x8000_0000, 0x40_0000), (0x8040_0000, 0x4_0000), ("isa=riscv",)),
}


@dataclass(frozen=True)
class Build:
    """A device library build a validation program is made of (a published row's `library`)."""

    library: str  # spec/libraries.toml
    program: str  # validate/<program>.c
    meaning: str
    asm: bool = False  # wolfCrypt's assembly: sp_cortexm.c (ARMv7-M and later) or sp_armthumb.c (ARMv6-M)
    small: bool = False  # WOLFSSL_SP_SMALL


BUILDS: Mapping[str, Build] = {
    "mbedtls@3.6+p256m": Build("mbedtls@3.6", "p256m", "p256-m, the P-256 driver mbed TLS 3.6 ships (3rdparty/p256-m)"),
    "wolfssl@5.7": Build("wolfssl@5.7", "wolfcrypt", "wolfCrypt single-precision P-256 in C (sp_c32.c)"),
    "wolfssl@5.7+sp-asm": Build("wolfssl@5.7", "wolfcrypt", "wolfCrypt single-precision P-256 with its Cortex-M "
                                "assembly (sp_cortexm.c; sp_armthumb.c on ARMv6-M)", asm=True),
    "wolfssl@5.7+sp-asm-small": Build("wolfssl@5.7", "wolfcrypt", "as +sp-asm, built WOLFSSL_SP_SMALL (the "
                                      "smaller, slower variant)", asm=True, small=True),
}


@dataclass(frozen=True)
class Operation:
    """One measured call of a validation program: its counts by feature (the plugin's names)."""

    name: str  # "ecdh-p256/keygen"
    counts: dict[str, int]


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:16]


def _sources_key() -> str:
    files = sorted(TOOL_DIR.glob("*.[ch]")) + sorted(PROGRAM_DIR.iterdir())
    return _digest(*(f.name.encode() + f.read_bytes() for f in files))


def folder(cache: Path | None = None) -> Path:
    return (cache or default_cache()) / "cycles" / _sources_key()


def plugin(cache: Path | None = None) -> Path:
    """The plugin, built on first use with the host's gcc against the API v1 declarations
    (qemu_plugin_v1.h: Debian's QEMU packages ship no header)."""
    out = folder(cache) / "libtb_cycles.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        run(["gcc", "-O2", "-shared", "-fPIC", "-Wall", "-o", str(tmp), str(TOOL_DIR / "tb_cycles.c")], "cycles plugin")
        tmp.rename(out)
    return out


def _defines(build: Build, core: Core) -> list[str]:
    if build.program != "wolfcrypt":
        return ["-DMBEDTLS_PSA_P256M_DRIVER_ENABLED"]
    flags = ["-DWOLFSSL_USER_SETTINGS", "-DNO_ASN_TIME"]
    if build.asm and core.stream not in ARM_STREAMS:
        raise BuildError(f"wolfSSL 5.7's single-precision assembly is for Arm cores, not {core.name}")
    if build.asm:
        flags.append("-DWOLFSSL_SP_ARM_THUMB_ASM" if core.isa in ARMV6M else "-DWOLFSSL_SP_ARM_CORTEX_M_ASM")
    return flags + (["-DWOLFSSL_SP_SMALL"] if build.small else [])


def _shims(work: Path, arch: Arch) -> None:
    """p256-m as mbed TLS ships it includes two mbed TLS headers for one function each."""
    (work / "mbedtls").mkdir(parents=True, exist_ok=True)
    (work / "psa").mkdir(exist_ok=True)
    (work / "mbedtls" / "platform_util.h").write_text("#include <stddef.h>\n"
                                                       "void mbedtls_platform_zeroize(void *buf, size_t len);\n")
    (work / "psa" / "crypto.h").write_text("#include <stddef.h>\n#include <stdint.h>\ntypedef int32_t psa_status_t;\n"
                                           "psa_status_t psa_generate_random(uint8_t *output, size_t output_size);\n")
    (work / "memory.ld").write_text(f"MEMORY {{ FLASH (rx) : ORIGIN = {arch.flash[0]:#x}, LENGTH = {arch.flash[1]:#x}\n"
                                    f"         RAM (rwx) : ORIGIN = {arch.ram[0]:#x}, LENGTH = {arch.ram[1]:#x} }}\n")


def firmware(name: str, core: Core, cache: Path | None = None) -> Path:
    """The validation program of build `name` for `core`, built on first use."""
    build, arch = BUILDS[name], ARCHES[core.stream]
    _, tree = source_tree(build.library, cache)
    out = folder(cache) / "fw" / f"{name.replace('@', '-')}-{core.name}.elf"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tb-cycles-") as tmp:
        work = Path(tmp)
        _shims(work, arch)
        if build.program == "p256m":
            src = tree / "3rdparty" / "p256-m" / "p256-m"
            sources, includes = [src / "p256-m.c"], [src]
        else:
            sources, includes = [tree / "wolfcrypt" / "src" / f for f in WOLFCRYPT], [tree]
        cpu = [] if core.stream == "rv32" else [f"-mcpu={core.isa}"]
        cmd = [f"{arch.prefix}gcc", *cpu, *arch.cflags, "-Os", "-ffunction-sections", "-fdata-sections",
               *_defines(build, core), f"-I{work}", f"-I{PROGRAM_DIR}", *(f"-I{i}" for i in includes),
               *(str(PROGRAM_DIR / f"{f}.c") for f in ("startup", arch.start, build.program)), *map(str, sources),
               "-nostartfiles", *arch.link, "-Wl,--gc-sections", f"-L{work}",
               "-T", str(PROGRAM_DIR / "validate.ld"), "-o", str(out.with_suffix(".tmp"))]
        run(cmd, f"validation program {name} for {core.name}")
    out.with_suffix(".tmp").rename(out)
    return out


def _symbol(image: Path, name: str, arch: Arch) -> int:
    out = subprocess.run([f"{arch.prefix}nm", str(image)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise BuildError(f"{image.name} has no symbol {name}")


def read_snapshots(data: bytes) -> tuple[list[str], list[tuple[int, list[int]]]]:
    """The plugin's file: (feature names, rows of (snapshot index, cumulative counts))."""
    if data[:4] != b"TBCY":
        raise BuildError("the cycles plugin wrote no snapshot file (or another format)")
    _, n = struct.unpack_from("<II", data, 4)
    pos, names = 12, []
    for _ in range(n):
        end = data.index(b"\0", pos)
        names.append(data[pos:end].decode())
        pos = end + 1
    rows, size = [], 8 + 8 * n
    while pos + size <= len(data):
        index, _holds = struct.unpack_from("<II", data, pos)
        rows.append((index, list(struct.unpack_from(f"<{n}Q", data, pos + 8))))
        pos += size
    return names, rows


def count(image: Path, core: Core, memory: MemorySystem, cache: Path | None = None,
          plugin_path: Path | None = None) -> list[Operation]:
    """Boots a validation program with the plugin (the board's cache geometry): each
    operation's counts, in the order the program ran them."""
    lib, arch = plugin_path or plugin(cache), ARCHES[core.stream]
    mark = _symbol(image, "tb_mark", arch)
    with tempfile.TemporaryDirectory(prefix="tb-cycles-") as tmp:
        out = Path(tmp) / "counts.bin"
        args = [f"out={out}", f"snap={mark:#x}", f"flash={arch.flash[0]:#x}:{arch.flash[1]:#x}",
                *memory.plugin_args(), *arch.plugin]
        cmd = [shutil.which(arch.qemu[0]) or arch.qemu[0], *arch.qemu[1:], "-M", core.machine, *QEMU_FLAGS,
               "-plugin", f"{lib}," + ",".join(args), "-kernel", str(image)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=QEMU_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{image.name} did not finish within {QEMU_TIMEOUT_S} s under QEMU") from None
        if done.returncode != 0:
            raise BuildError(f"{image.name} failed under QEMU (exit {done.returncode}): "
                             f"{(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        names, rows = read_snapshots(out.read_bytes())
    ops = [line[3:] for line in done.stderr.splitlines() if line.startswith("op ")]
    marks = [counts for index, counts in rows if index != SNAP_EXIT]
    if len(marks) != 2 * len(ops):
        raise BuildError(f"{image.name}: {len(ops)} operations but {len(marks)} snapshots (expected two each)")
    return [Operation(op, {f: after - before for f, before, after in zip(names, marks[2 * i], marks[2 * i + 1])})
            for i, op in enumerate(ops)]


if __name__ == "__main__":  # `make firmware`: the plugin built beside the firmware
    print(plugin())
