#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the library cache costs: `tlsbench libs build SPEC` for every known version
(mbedtls@3.6, openssl@3.5, wolfssl@5.7) into an empty cache (apt's Debian 13 source index,
the source package, the compile, the probe), then the same command again with that cache
warm (a lookup). Wall times of the commands on a shared machine, and the compile's CPU time
(user + system of the compiler processes), which other work on the machine does not inflate.
The agents' own build (`make agent`) comes on top and is not in these figures.

    .venv/bin/python bench/library_builds.py [SPEC...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import library_build_times, machine, today, update_section  # noqa: E402

from tlsbench.builder import libraries  # noqa: E402


def row(spec: str) -> str:
    first, cached, seconds = library_build_times(spec)
    entry = libraries.cached(spec)
    version = entry.version if entry else "?"
    stage = lambda name: f"{seconds[name]:.1f}" if name in seconds else "—"  # noqa: E731
    return (f"| {spec} | {version} | {first:.1f} | {stage('fetch')} | {stage('build')} | {stage('build_cpu')} "
            f"| {cached:.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="*", default=list(libraries.RECIPES), help="library versions (default: all)")
    args = ap.parse_args()
    rows = "\n".join(row(spec) for spec in args.specs)
    body = f"""
Script: `bench/library_builds.py` ({today()}; {machine()}; one run each: the machine is shared,
so wall times vary by tens of percent). `tlsbench libs build SPEC` into an empty cache
(`TLSBENCH_CACHE` set to a new folder: apt's Debian 13 source index, the source package, the
compile with all cores, the probe), then the same command again with that cache warm (a lookup
of the stamp, Python's start-up included). Seconds; fetch and compile are the stages the cache
entry recorded, compile CPU the compiler processes' user + system time.

| library | version | first build (wall) | fetch | compile (wall) | compile CPU | cached (wall) |
|---|---|---:|---:|---:|---:|---:|
{rows}

The agents' build against the cache (`make agent`: tlsbench-agent-<lib>-<series> and its tests)
comes on top; `make agent` runs these builds only when an entry is missing.

Rerun: `.venv/bin/python bench/library_builds.py`.
"""
    print(body)
    update_section("Library builds: first time and cached", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
