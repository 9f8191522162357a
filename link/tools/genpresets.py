#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate tlsbench-link's preset table from spec/links.toml (the one declaration of the
presets; the host's predictions read the same file).

    genpresets.py LINKS.toml OUT.h

Stdlib only (tomllib), so building the emulator needs no Python packages. OUT.h defines
TB_LINK_PRESETS_GEN, the initializer list of tb_link_presets[] (link/model.c)."""
import sys
import tomllib
from pathlib import Path

DIRECTIONS = ("d2p", "p2d")
# TOML field -> (C member of tb_link_params, factor from the TOML unit to the C unit, C literal kind)
FIELDS = {
    "rate": ("rate_bps", 1, "u64"),
    "queue": ("queue_bytes", 1, "u64"),
    "delay": ("delay_ns", 1_000_000, "u64"),
    "jitter": ("jitter_ns", 1_000_000, "u64"),
    "loss": ("loss", 0.01, "double"),
    "frame": ("frame_bytes", 1, "u32"),
    "frame_overhead": ("frame_overhead", 1, "u32"),
    "mtu": ("mtu", 1, "u32"),
    "reorder": ("reorder", 0.01, "double"),
    "reorder_delay": ("reorder_delay_ns", 1_000_000, "u64"),
}


class PresetError(Exception):
    pass


def direction(preset: dict, d: str) -> dict[str, float]:
    """A direction's figures: [preset.both], then [preset.<d>] over it."""
    out = {}
    for part in ("both", d):
        for key, figure in (preset.get(part) or {}).items():
            if key not in FIELDS:
                raise PresetError(f"preset {preset['name']}: unknown field {part}.{key} (allowed: {', '.join(FIELDS)})")
            out[key] = figure["value"] if isinstance(figure, dict) else figure
    return out


def literal(key: str, value: float) -> str:
    member, factor, kind = FIELDS[key]
    v = value * factor
    if kind == "double":
        return f".{member} = {v!r}"
    if v != int(v) or v < 0:
        raise PresetError(f"{key} = {value}: not a whole number of the emulator's unit")
    return f".{member} = UINT64_C({int(v)})" if kind == "u64" else f".{member} = {int(v)}u"


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header(spec: dict) -> str:
    lines = ["/* Generated from spec/links.toml by link/tools/genpresets.py: do not edit. */",
             "#ifndef TLSBENCH_LINK_PRESETS_GEN_H", "#define TLSBENCH_LINK_PRESETS_GEN_H", "",
             "#define TB_LINK_PRESETS_GEN \\"]
    for p in spec["preset"]:
        dirs = []
        for d in DIRECTIONS:
            fields = ", ".join(literal(k, v) for k, v in sorted(direction(p, d).items()))
            dirs.append("{" + (fields or ".rate_bps = 0") + "}")  # C11 has no empty initializer
        lines.append(f"    {{{c_string(p['name'])}, {c_string(p['summary'])}, {{{', '.join(dirs)}}}}}, \\")
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        text = header(tomllib.loads(Path(sys.argv[1]).read_text()))
    except (PresetError, tomllib.TOMLDecodeError, KeyError) as exc:
        print(f"genpresets: {sys.argv[1]}: {exc}", file=sys.stderr)
        return 1
    out = Path(sys.argv[2])
    if not out.exists() or out.read_text() != text:  # unchanged: no rebuild of model.c
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
