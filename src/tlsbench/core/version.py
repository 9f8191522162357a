# SPDX-License-Identifier: Apache-2.0
"""Which tlsbench measured: its version and, from a source checkout, the commit (what a
fleet's history is keyed by, beside the experiment, the device and the library build)."""
from __future__ import annotations

import functools
import socket
import subprocess
from pathlib import Path

from tlsbench import __version__

SOURCE = Path(__file__).resolve().parents[3]  # the checkout an editable install runs from


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(SOURCE), *args], capture_output=True, text=True, timeout=5)


@functools.cache
def tool_version() -> str:
    """`0.1.0`, or `0.1.0+g1a2b3c4` from a checkout at that commit (`.dirty`: with changes)."""
    try:
        head = _git("rev-parse", "--short=10", "HEAD")
        if head.returncode != 0 or not (SOURCE / ".git").exists():
            return __version__
        dirty = _git("diff-index", "--quiet", "HEAD", "--").returncode != 0
    except (OSError, subprocess.SubprocessError):
        return __version__
    return f"{__version__}+g{head.stdout.strip()}" + (".dirty" if dirty else "")


def host_name() -> str:
    return socket.gethostname()
