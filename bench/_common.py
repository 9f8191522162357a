# SPDX-License-Identifier: Apache-2.0
"""Shared by the benchmark scripts: machine facts and updating docs/benchmarks.md."""
from __future__ import annotations

import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
# Stores opened as the command line opens them (tests/stores.py).
from stores import load_path, on, reader, writer  # noqa: E402,F401
BENCHMARKS_MD = REPO / "docs" / "benchmarks.md"
TLSBENCH = Path(sys.executable).parent / "tlsbench"
HEADER = "# Benchmarks of tlsbench itself\n\nEach section is written by the script named in it; rerun it to update.\n"


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor() or "?")
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def today() -> str:
    return datetime.date.today().isoformat()


def update_section(title: str, body: str) -> None:
    """Replaces (or appends) the `## title` section of docs/benchmarks.md."""
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else HEADER
    section = f"## {title}\n\n{body.strip()}\n\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    BENCHMARKS_MD.parent.mkdir(exist_ok=True)
    BENCHMARKS_MD.write_text(text.rstrip() + "\n")


def library_build_times(spec: str) -> tuple[float, float, dict[str, float]]:
    """`tlsbench libs build SPEC` into an empty cache (apt's source index, the source, compile,
    probe), then again with that cache warm (a lookup): wall seconds of each command, and the
    stages the cache entry recorded (fetch, build, build_cpu, probe)."""
    from tlsbench.builder import libraries  # the caller has the package on its path

    with tempfile.TemporaryDirectory(prefix="tlsbench-cache-") as folder:
        env = {**os.environ, libraries.CACHE_ENV: folder}
        walls = []
        for _ in range(2):
            started = time.monotonic()
            subprocess.run([str(TLSBENCH), "libs", "build", spec], check=True, env=env, capture_output=True)
            walls.append(time.monotonic() - started)
        entry = libraries.cached(spec, Path(folder))
        return walls[0], walls[1], dict(entry.seconds) if entry else {}
