# SPDX-License-Identifier: Apache-2.0
"""scripts/install-deps.sh: `make run` installs what the default plan needs and nothing the
tests alone need, `make test` everything (the groups' lists read with --list: nothing is
installed). About 1 s."""
from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from tlsbench.plan.model import load

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "install-deps.sh"


def listed(*groups: str) -> list[str]:
    return subprocess.run([SCRIPT, "--list", *groups], check=True, capture_output=True, text=True).stdout.split()


def test_make_run_installs_the_default_targets_toolchain_and_not_what_only_the_tests_need():
    spec = tomllib.loads((REPO / "spec" / "targets.toml").read_text())
    run, everything = listed("python", "run"), listed()
    for target in load().plan.device.target:  # the default plan's
        assert set(spec["arch"][spec["target"][target]["arch"]]["packages"].split()) <= set(run)
    assert "python3-venv" in run and set(run) < set(everything)
    assert not {"chromium", "postgresql", "valgrind", "clang", "libwolfssl-dev"} & set(run)
    assert all(set(a["packages"].split()) <= set(everything) for a in spec["arch"].values())  # every target
    assert len(everything) == len(set(everything))  # each package once
    assert "iproute2" in listed("host")  # `ip`: a minimal Debian has none, the link emulator needs it


def test_an_unknown_group_is_one_line():
    out = subprocess.run([SCRIPT, "--list", "device"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1 and "run, host, test" in out.stderr
