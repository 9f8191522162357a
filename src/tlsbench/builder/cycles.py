# SPDX-License-Identifier: Apache-2.0
"""The cycle model's counting tool (docs/cycles.md):

    <cache>/cycles/<key>/libtb_cycles.so       the QEMU TCG plugin (agent/tools/cycles/tb_cycles.c)

built on first use with the host's gcc (a second), keyed by its sources. What it counts are the
device firmware's primitive experiments (run/cycles.py boots the firmware with it)."""
from __future__ import annotations

import hashlib
from pathlib import Path

from tlsbench.builder.libraries import default_cache
from tlsbench.builder.shell import run

TOOL_DIR = Path(__file__).resolve().parents[3] / "agent" / "tools" / "cycles"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:16]


def _sources_key() -> str:
    files = sorted(TOOL_DIR.glob("*.[ch]"))
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


if __name__ == "__main__":  # `make firmware`: the plugin built beside the firmware
    print(plugin())
