# SPDX-License-Identifier: Apache-2.0
"""A few seconds of the user-file fuzz targets (agent/fuzz/fuzz_inputs.py) on every test
run: any exception other than the tool's own user errors escaping a plan or capture read
fails here, with the input that caused it. TLSBENCH_FUZZ_EXAMPLES runs longer."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent" / "fuzz"))
import fuzz_inputs  # noqa: E402

# A few seconds each on this machine (about 5 ms a plan, 3 ms a capture, generation included).
EXAMPLES = {"plan": 800, "capture": 1000}


@pytest.mark.parametrize("target", sorted(EXAMPLES))
def test_user_files_raise_only_user_errors(target):
    examples = int(os.environ.get("TLSBENCH_FUZZ_EXAMPLES", EXAMPLES[target]))
    fuzz_inputs.TARGETS[target](examples)


def test_the_seeds_themselves_are_valid():
    """The mutations start from real inputs: every seed reads without an error."""
    for seed in fuzz_inputs.PLAN_SEEDS:
        (fuzz_inputs.WORK / "seed.toml").write_bytes(seed)
        fuzz_inputs.plan.load(fuzz_inputs.WORK / "seed.toml")
    for seed, fmt in fuzz_inputs.SEED_FORMATS.items():
        (fuzz_inputs.WORK / "seed.csv").write_bytes(seed)
        assert len(fuzz_inputs.cap.read(fuzz_inputs.WORK / "seed.csv", fmt).t) == 12
