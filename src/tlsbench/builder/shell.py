# SPDX-License-Identifier: Apache-2.0
"""Running the commands of a build: output into a log, and on failure one error that carries
the compiler's error lines (or the output's tail) and where the full log is."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tlsbench.core import inputs
from tlsbench.core.errors import UserError


class BuildError(UserError, RuntimeError):
    """A step of a build failed; the message says what to do (the command line's error
    boundary prints it as it is: cli/__init__.py). `output`: the failed command's whole
    output, for a caller that recognises a failure in it (firmware.py: a region overflow)."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


def require_config(config: Path) -> None:
    """A library config header is a regular file: a FIFO would hold the build up for ever, a
    device (/dev/null) or a folder is a slip of the user's."""
    problem = inputs.not_a_regular_file(config)
    if problem:
        raise BuildError(f"config header {config} {problem}: name a C header file (configs/ holds examples)")


def excerpt(output: str) -> str:
    """The compiler's error lines when there are some (an #error naming what the config lacks
    comes first), else the output's tail."""
    lines = output.strip().splitlines()
    errors = sorted(dict.fromkeys(line for line in lines if "error:" in line),  # once each (-j repeats them)
                    key=lambda line: "#error" not in line)
    return "\n".join(errors[:12] if errors else lines[-25:])


def run(cmd: list[str], what: str, cwd: Path | None = None, log: Path | None = None,
        env: dict[str, str] | None = None) -> str:
    """Runs a command and returns its output; on failure raises with its errors (the full
    log is kept). `env` adds variables to the current environment."""
    try:
        done = subprocess.run(cmd, check=False, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={**os.environ, **env} if env else None)
    except FileNotFoundError:
        raise BuildError(f"{what}: {cmd[0]} is not installed (scripts/install-deps.sh installs it)") from None
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as f:
            f.write(f"$ {' '.join(cmd)}\n{done.stdout}\n")
    if done.returncode != 0:
        where = f" (full log: {log})" if log else ""
        raise BuildError(f"{what} failed (exit {done.returncode}){where}:\n{excerpt(done.stdout)}", done.stdout)
    return done.stdout


def query(cmd: list[str]) -> str:
    """A command's output, or "" when it fails or is missing."""
    try:
        done = subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except FileNotFoundError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
