# SPDX-License-Identifier: Apache-2.0
"""A firmware image: its sizes as the linker laid them out (what a build reports, build/, and
what a stored boot reports, store/, both read as flash and static RAM the same way), and
whether a file is an image a target can boot at all (checked before QEMU starts, run/endpoints/qemu.py)."""
from __future__ import annotations

import struct
from dataclasses import dataclass


class ImageSizes:
    """For a dataclass with `text` (code and constants), `data` (initialised variables) and
    `bss` (zeroed variables), in bytes."""

    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def static_ram(self) -> int:
        return self.data + self.bss


# ---------------------------------------------------------------- what a target boots
# ELF's own numbers (the System V ABI): e_ident class and byte order, e_type, e_machine,
# and where each class keeps its program headers.
ELF_MAGIC = b"\x7fELF"
ELF_CLASSES = {1: 32, 2: 64}
ELF_BYTE_ORDERS = {1: True, 2: False}  # little-endian?
ET_EXEC, PT_LOAD = 2, 1
ELF_TYPES = {1: "a relocatable object (.o), not a linked image", 3: "a shared object, not a firmware image",
             4: "a core dump, not a firmware image"}
MACHINES = {3: "x86", 8: "MIPS", 20: "PowerPC", 40: "ARM", 62: "x86-64", 183: "AArch64", 243: "RISC-V"}


@dataclass(frozen=True)
class ElfLayout:
    """Where an ELF class keeps its program headers, and each header's fields."""

    word: str  # struct format of an address or offset
    header: int  # bytes of the file header
    phoff: int  # offset of e_phoff
    phnum: int  # offset of e_phentsize (e_phnum follows)
    p_offset: int  # offsets inside a program header
    p_filesz: int


ELF_LAYOUTS = {32: ElfLayout("I", 52, 28, 42, 4, 16), 64: ElfLayout("Q", 64, 32, 54, 8, 32)}


@dataclass(frozen=True)
class ElfKind:
    """The ELF images a target boots: class, byte order and machine (e_machine)."""

    bits: int
    little_endian: bool
    machine: int

    def __str__(self) -> str:
        order = "little" if self.little_endian else "big"
        return f"{self.bits}-bit {order}-endian {MACHINES.get(self.machine, f'machine {self.machine}')} ELF"


def elf_problem(data: bytes, expected: ElfKind) -> str | None:
    """What keeps an image's bytes from being a whole executable ELF of the expected kind,
    as the end of a sentence about the file ("is empty (0 bytes)"); None when nothing does.
    Whole: every segment it loads lies inside the file (a cut copy does not)."""
    if not data:
        return "is empty (0 bytes)"
    if not data.startswith(ELF_MAGIC):
        return "is not an ELF file (a raw binary, a hex file or something else)"
    bits, little = ELF_CLASSES.get(data[4]), ELF_BYTE_ORDERS.get(data[5])
    layout = ELF_LAYOUTS.get(bits or 0)
    if layout is None or little is None or len(data) < layout.header:
        return f"is a damaged or truncated ELF file ({len(data):,} bytes; its header is incomplete)"
    order = "<" if little else ">"
    e_type, machine = struct.unpack_from(f"{order}HH", data, 16)
    found = ElfKind(bits, little, machine)  # type: ignore[arg-type]
    if found != expected:
        return f"is a {found}"
    if e_type != ET_EXEC:
        return f"is {ELF_TYPES.get(e_type, f'an ELF file of type {e_type}, not an executable image')}"
    phoff, = struct.unpack_from(f"{order}{layout.word}", data, layout.phoff)
    entry_size, count = struct.unpack_from(f"{order}HH", data, layout.phnum)
    needed, loads = phoff + entry_size * count, 0
    for header in range(phoff, phoff + entry_size * count, entry_size):
        if header + entry_size > len(data):
            break
        p_type, = struct.unpack_from(f"{order}I", data, header)
        offset, = struct.unpack_from(f"{order}{layout.word}", data, header + layout.p_offset)
        size, = struct.unpack_from(f"{order}{layout.word}", data, header + layout.p_filesz)
        if p_type == PT_LOAD:
            loads += 1
            needed = max(needed, offset + size)
    if needed > len(data):
        return f"is truncated: {len(data):,} bytes where its segments need {needed:,}"
    if not loads:
        return "loads nothing (an ELF file without a loadable segment)"
    return None
