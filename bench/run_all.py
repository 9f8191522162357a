#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs every benchmark script of bench/ (each updates its section of docs/benchmarks.md)."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != Path(__file__).name)
    failed = [p.name for p in scripts if subprocess.run([sys.executable, str(p)]).returncode != 0]
    if failed:
        print(f"benchmarks below target or failing: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
