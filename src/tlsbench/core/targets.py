# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/targets.toml: every device target declared once (its core, how QEMU
boots it, what it counts, its memory, its board and default library build). Plans, the run
and the builders read targets from here; the firmware build generates its board header and
memory map from the same file (agent/tools/gentarget.py)."""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tlsbench.core.image import ElfKind
from tlsbench.core.spec import SPEC_DIR

TARGETS_FILE = "targets.toml"
NO_FPU = "none"


@dataclass(frozen=True)
class Arch:
    """What every target of an architecture shares ([arch.<name>]): agent/arch/<name>/."""

    name: str  # cortex-m, riscv
    toolchain: str  # the gcc triplet: cmake/<toolchain>.cmake
    packages: str  # the Debian packages of the toolchain and its C library
    elf: ElfKind  # the images its targets boot
    isa_tag: str  # the readelf -A attribute naming an object's architecture: Tag_CPU_arch


@dataclass(frozen=True)
class Qemu:
    """How the host boots an emulated target ([target.<name>.qemu])."""

    binary: str  # qemu-system-arm
    machine: str  # -M
    flags: tuple[str, ...]  # between -M and -kernel

    def command(self, image: Path, semihosting_args: tuple[str, ...] = ()) -> list[str]:
        """`semihosting_args`: the firmware's command line (SYS_GET_CMDLINE), e.g. heap_cap=N."""
        flags = list(self.flags)
        if semihosting_args and "-semihosting-config" in flags:
            at = flags.index("-semihosting-config") + 1
            flags[at] += "".join(f",arg={a}" for a in semihosting_args)
        return [self.binary, "-M", self.machine, *flags, "-kernel", str(image)]


@dataclass(frozen=True)
class Counter:
    """What the firmware counts ([target.<name>.counter]): HELLO's clock."""

    name: str
    unit: str  # "instructions (QEMU icount)": never a time
    clock_hz: int  # the clock the counter counts
    units_per_tick: float  # one tick in the unit (31.25 on a 32 MHz SysTick under icount)


@dataclass(frozen=True)
class Region:
    base: int
    size: int


@dataclass(frozen=True)
class Memory:
    flash: Region
    ram: Region
    stack: int  # bytes at the top of RAM


@dataclass(frozen=True)
class Target:
    """One device target ([target.<name>])."""

    name: str  # HELLO device.target: qemu-mps2-an386
    meaning: str
    arch: Arch
    board: str  # agent/boards/<board>/
    cpu: str  # -mcpu (Arm), -march (RISC-V)
    isa: str  # the architecture of its objects (readelf -A: arch.isa_tag)
    fpu: str  # -mfpu; NO_FPU: none
    float_abi: str  # -mfloat-abi (Arm), -mabi (RISC-V)
    library: str  # the default library build (spec/libraries.toml)
    config: Path  # its default config header
    counter: Counter
    memory: Memory
    peripherals: Mapping[str, int]  # uart, baud, marker (optional), uart_clock_hz (optional)
    qemu: Qemu | None = None  # None: a board reached over serial only

    @property
    def has_fpu(self) -> bool:
        return self.fpu != NO_FPU

    @property
    def elf(self) -> ElfKind:
        """The ELF images it boots (checked before QEMU starts: a raw file would run as code)."""
        return self.arch.elf

    @property
    def machine(self) -> str:
        return self.qemu.machine if self.qemu else ""

    def command(self, image: Path, semihosting_args: tuple[str, ...] = ()) -> list[str]:
        """QEMU's command line booting `image` (an emulated target only)."""
        if self.qemu is None:
            raise ValueError(f"{self.name} is not emulated: it has no QEMU command line")
        return self.qemu.command(image, semihosting_args)

    @property
    def attributes(self) -> tuple[str, ...]:
        """`Tag: value` lines readelf -A must show for every object built for it (values as
        isa_name() reads them): the core's architecture, and the float ABI where values travel
        in Arm FPU registers (a RISC-V linker refuses to mix float ABIs itself)."""
        vfp = ("Tag_ABI_VFP_args: VFP registers",) if self.float_abi == "hard" else ()
        return (f"{self.arch.isa_tag}: {self.isa}", *vfp)


@dataclass(frozen=True)
class Targets:
    """Every declared target, in the file's order (the first is the default)."""

    all: tuple[Target, ...]

    @property
    def default(self) -> Target:
        return self.all[0]

    @property
    def emulated(self) -> dict[str, Target]:
        """The targets the host boots itself under QEMU, by name."""
        return {t.name: t for t in self.all if t.qemu is not None}


def isa_name(value: str) -> str:
    """An architecture attribute's value as targets.toml names it: Arm's as readelf prints it
    ("v8-M.mainline"); RISC-V's versioned list ("rv32i2p1_m2p0_a2p1_c2p0_zmmul1p0") as its
    single-letter extensions (rv32imac), since the versions follow the compiler and the Z
    extensions its ISA spec, not the core."""
    value = value.strip().strip('"')
    if not value.startswith("rv"):
        return value
    parts = value[4:].split("_")
    return value[:4] + "".join(part[0] for part in parts if part and part[0] not in "zsx")


def _arch(name: str, raw: Mapping[str, Any]) -> Arch:
    return Arch(name, raw["toolchain"], raw["packages"], ElfKind(**raw["elf"]), raw["isa_tag"])


def _target(name: str, raw: Mapping[str, Any], arches: Mapping[str, Arch], repo: Path) -> Target:
    if raw["arch"] not in arches:
        raise ValueError(f"{TARGETS_FILE}: [target.{name}] arch {raw['arch']!r} is not declared "
                         f"([arch.*]: {', '.join(arches)})")
    memory = raw["memory"]
    qemu = raw.get("qemu")
    return Target(name, raw.get("meaning", ""), arches[raw["arch"]], raw["board"], raw["cpu"], raw["isa"],
                  raw["fpu"], raw["float_abi"], raw["library"], repo / raw["config"], Counter(**raw["counter"]),
                  Memory(Region(**memory["flash"]), Region(**memory["ram"]), memory["stack"]),
                  dict(raw["peripherals"]), Qemu(qemu["binary"], qemu["machine"], tuple(qemu["flags"])) if qemu else None)


def parse(text: str, repo: Path) -> Targets:
    """The targets of a targets.toml; `repo`: where its config paths start."""
    raw = tomllib.loads(text)
    arches = {name: _arch(name, a) for name, a in raw["arch"].items()}
    return Targets(tuple(_target(name, t, arches, repo) for name, t in raw["target"].items()))


@functools.cache
def load(directory: Path = SPEC_DIR) -> Targets:
    """The declared targets, read once per process (config paths from the repository root)."""
    return parse((directory / TARGETS_FILE).read_text(), directory.resolve().parent)
