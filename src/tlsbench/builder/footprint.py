# SPDX-License-Identifier: Apache-2.0
"""What a firmware image spends on the TLS library itself, read from the linker's map
(-Wl,-Map, agent/firmware/CMakeLists.txt): every input section the link kept, charged to the
archive or object it came from, as flash (code, constants, initial values) and static RAM
(initialised and zeroed variables). The library's archives (the cache entry's) are reported
apart from the harness (the agent, its trace and queue buffers, the board) and the C runtime
(newlib, libgcc), so "does it fit" reads the library's own numbers (docs/porting.md)."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

# Output sections and where their bytes live: .data is stored in flash and copied to RAM.
FLASH_SECTIONS = (".text", ".rodata", ".ARM.exidx", ".ARM.extab", ".init_array", ".fini_array")
RAM_SECTIONS = (".bss",)
BOTH_SECTIONS = (".data",)
RUNTIME_ARCHIVES = ("libc.a", "libc_nano.a", "libm.a", "libgcc.a", "libnosys.a", "libg.a")
PARTS = ("library", "harness", "runtime")  # what a byte is charged to

OUTPUT = re.compile(r"^(\.[A-Za-z0-9_.]+)\s")  # an output section's line starts in column 0
# An input section: " .name  0xADDR  0xSIZE origin" on one line, or its name alone on the line
# before (a long name), then "  0xADDR  0xSIZE origin".
INPUT = re.compile(r"^ (\S+)?\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$")
ARCHIVE_MEMBER = re.compile(r"^(?P<archive>.+\.a)\((?P<member>[^)]+)\)$")


@dataclass
class Bytes:
    flash: int = 0
    ram: int = 0

    def add(self, section: str, size: int) -> None:
        if section.startswith(BOTH_SECTIONS):
            self.flash += size
            self.ram += size
        elif section.startswith(RAM_SECTIONS):
            self.ram += size
        elif section.startswith(FLASH_SECTIONS):
            self.flash += size


@dataclass
class Footprint:
    """Bytes per part (library, harness, runtime) and per origin (archive or object file)."""

    parts: dict[str, Bytes] = field(default_factory=lambda: {p: Bytes() for p in PARTS})
    origins: dict[str, Bytes] = field(default_factory=dict)
    library_members: dict[str, Bytes] = field(default_factory=dict)  # the library's objects

    @property
    def library(self) -> Bytes:
        return self.parts["library"]

    def to_json(self) -> dict:
        """For firmware.json: the parts, the archives, and the library's ten largest objects."""
        top = sorted(self.library_members.items(), key=lambda kv: -(kv[1].flash + kv[1].ram))[:10]
        return {"parts": {p: asdict(b) for p, b in self.parts.items()},
                "origins": {o: asdict(b) for o, b in sorted(self.origins.items())},
                "library_objects": {m: asdict(b) for m, b in top}}


def _origin(text: str, library_archives: set[str]) -> tuple[str, str, str]:
    """(part, origin name, library object) of an input section's file."""
    found = ARCHIVE_MEMBER.match(text.strip())
    if found:
        archive = Path(found["archive"]).name
        if archive in library_archives:
            return "library", archive, found["member"]
        return ("runtime" if archive in RUNTIME_ARCHIVES else "harness"), archive, ""
    name = Path(text.strip()).name
    return ("runtime" if name.startswith(("crt", "_")) and name.endswith(".o") else "harness"), name, ""


def parse_map(lines: Iterable[str], library_archives: Iterable[str]) -> Footprint:
    """The footprint of a GNU ld map's "Linker script and memory map" part; `library_archives`:
    the library's archive file names (libmbedcrypto.a, libwolfssl.a...)."""
    archives = {Path(a).name for a in library_archives}
    out = Footprint()
    section, pending, started = "", "", False
    for line in lines:
        line = line.rstrip("\n")
        if not started:
            started = line.startswith("Linker script and memory map")
            continue
        head = OUTPUT.match(line)
        if head:
            section = head[1]
            continue
        if line.startswith(" ") and not line.startswith("  ") and len(line.split()) == 1:
            pending = line.strip()  # a long input section name; its numbers follow
            continue
        found = INPUT.match(line)
        if not found or not (found[1] or pending) or found[4].startswith(("load address", "*")):
            pending = ""
            continue
        pending = ""
        size = int(found[3], 16)
        if size == 0 or not found[4].strip() or "=" in found[4]:
            continue
        part, origin, member = _origin(found[4], archives)
        for where in (out.parts[part], out.origins.setdefault(origin, Bytes())):
            where.add(section, size)
        if member:
            out.library_members.setdefault(member, Bytes()).add(section, size)
    return out


def of_map(path: Path, library_archives: Iterable[str]) -> Footprint:
    with path.open(errors="replace") as f:
        return parse_map(f, library_archives)
