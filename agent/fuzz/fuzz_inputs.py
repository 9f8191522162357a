#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fuzz targets of the host tool's user files, next to the frame fuzzer: plan files and
energy captures. Whatever the bytes, reading them either succeeds or raises the tool's own
user error (PlanError, EnergyError: one clear line); any other exception is a bug.

Inputs are drawn by hypothesis: seeds (the repository's plans, small captures of every
format) mutated byte by byte and token by token, and plans built from the plan's own field
names with values of every TOML type. `make test` runs each target for a few seconds
(tests/test_fuzz_inputs.py); longer, e.g.:

    .venv/bin/python agent/fuzz/fuzz_inputs.py plan --examples 200000
    .venv/bin/python agent/fuzz/fuzz_inputs.py capture --examples 20000
"""
from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import numpy as np
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlsbench.plan import model as plan
from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy import capture as cap
from tlsbench.analysis.models.energy.units import CURRENT_UNITS, FORMATS, TIME_UNITS, VOLTAGE_UNITS
from tlsbench.plan.network import variants

ROOT = Path(__file__).resolve().parents[2]
WORK = Path(tempfile.mkdtemp(prefix="tlsbench-fuzz-"))  # one file per target, rewritten per input


# ---------------------------------------------------------------------- mutations
# Tokens that often sit on a parser's edge: numbers out of range or not numbers at all,
# separators, quotes, brackets, the PPK2 digital levels, a BOM, non-ASCII digits.
TOKENS = [b"", b"0", b"-1", b"1e309", b"nan", b"inf", b"-inf", b"0x10", b"1_000", b"9" * 40, b"\xef\xbb\xbf",
          b",", b",,", b"\n", b"\r\n", b"\"", b"'", b"[", b"]", b"{", b"}", b"=", b"#", b"X", b"-", b"D0-D7",
          b"\xd9\xa1", b"\xff\xfe", b"\x00", b"true", b"[[network.links]]", b"[network]", b"all", b"(ms)", b"_mA"]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with a few byte, token and line edits."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(("flip", "insert", "delete", "token", "dup_line", "cut")))
        if op == "flip" and pos < len(data):
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 16))]
        elif op == "token":
            data[pos:pos + draw(st.integers(0, 4))] = draw(st.sampled_from(TOKENS))
        elif op == "dup_line":
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end + 1
            data[end:end] = data[start:end]
        elif op == "cut":
            del data[pos:]
    return bytes(data)


# ---------------------------------------------------------------------- plans
PLAN_SEEDS = [p.read_bytes() for p in sorted((ROOT / "plans").glob("*.toml"))
              + sorted((ROOT / "src" / "tlsbench" / "plans").glob("*.toml"))]
SECTIONS = {name: list(model.model_fields) for name, model in (
    ("suites", plan.SuiteSelection), ("payload", plan.Payload), ("precision", plan.PrecisionTarget),
    ("experiments", plan.ExperimentSelection))}
TOML_SCALARS = st.one_of(st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=True, allow_infinity=True),
                         st.booleans(), st.text(max_size=12), st.sampled_from(["all", "default", "auto", "tcp", "udp",
                                                                               "c2s", "both", "TLS-*", "0xC02B"]))
TOML_VALUES = st.recursive(TOML_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                 st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                           max_leaves=8)


@st.composite
def built_plan(draw: st.DrawFn) -> bytes:
    """A plan of the plan's own field names (and a few others) with values of every type."""
    names = list(plan.Plan.model_fields) + ["library", "bogus"]
    raw = {name: draw(TOML_VALUES) for name in draw(st.lists(st.sampled_from(names), max_size=8, unique=True))}
    for section, fields in SECTIONS.items():
        if draw(st.booleans()):
            raw[section] = {f: draw(TOML_VALUES) for f in draw(st.lists(st.sampled_from(fields), max_size=4, unique=True))}
    if draw(st.booleans()):
        raw.setdefault("name", "fuzz")
        raw.setdefault("repetitions", draw(st.integers(-2, 5)))
    try:
        return tomli_w.dumps(raw).encode()
    except (TypeError, ValueError):  # a value TOML cannot hold (NaN keys, ...): mutate a seed instead
        return PLAN_SEEDS[0]


def plan_input(data: bytes) -> None:
    """The target: a plan file's bytes through `plan.load`, and a valid plan through what
    `plan show` and `run` do with it before any agent is involved."""
    path = WORK / "plan.toml"
    path.write_bytes(data)
    try:
        loaded = plan.load(path)
    except plan.PlanError:
        return
    p = loaded.plan
    shown = tomli_w.dumps(p.resolved())  # `plan show`
    assert len(p.hash()) == 64
    for v in variants(p.network) if p.network else []:  # config keys and link labels
        v.key()
    again = plan.parse(shown, "shown.toml").plan  # what `plan show` prints is a valid plan...
    assert again.hash() == p.hash(), "plan show printed a plan that measures something else"  # ...the same one


# ---------------------------------------------------------------------- captures
def _capture_seeds() -> list[bytes]:
    t = np.arange(12) * 1e-3
    level = (np.arange(12) // 3) % 2
    ppk2 = "Timestamp(ms),Current(uA),D0-D7\n" + "".join(f"{x * 1e3:.3f},{100 + i},{l}0000000\n"
                                                        for i, (x, l) in enumerate(zip(t, level)))
    ppk2_cols = "Timestamp(ms),Current(uA),D0,D1\n" + "".join(f"{x * 1e3:.3f},{100 + i},{l},X\n"
                                                          for i, (x, l) in enumerate(zip(t, level)))
    ppk2_bits = "Timestamp(ms),Current(uA),Bits\n" + "".join(f"{x * 1e3:.3f},{100 + i},0000000{l}\n"
                                                          for i, (x, l) in enumerate(zip(t, level)))
    joule = "#time (s),current (A),voltage (V)\n" + "".join(f"{x},{1e-3 * (1 + i)},3.3\n" for i, x in enumerate(t))
    joule_bare = "".join(f"{x},{1e-3},3.3\n" for x in t)
    generic = "time (ms),current_mA,voltage_V,marker\n" + "".join(f"{x * 1e3},{2.5},{3.3},{l}\n"
                                                                  for x, l in zip(t, level))
    return {s.encode(): fmt for s, fmt in ((ppk2, "auto"), (ppk2_cols, "auto"), (ppk2_bits, "auto"), (joule, "auto"),
                                            (joule_bare, "joulescope"), (generic, "auto"))}


SEED_FORMATS = _capture_seeds()  # seed -> the format it reads as (a bare Joulescope export is not detected)
CAPTURE_SEEDS = list(SEED_FORMATS)
UNITS = st.builds(cap.Units, st.none() | st.sampled_from(sorted(TIME_UNITS)),
                  st.none() | st.sampled_from(sorted(CURRENT_UNITS)), st.none() | st.sampled_from(sorted(VOLTAGE_UNITS)))
MARKERS = st.none() | st.sampled_from(["D0", "d7", "D9", "in0", "marker", "current", "", "voltage"])


def capture_input(data: bytes, fmt: str = "auto", units: cap.Units = cap.Units(), marker: str | None = None) -> None:
    """The target: a capture file's bytes through `capture.read` as `energy import` calls it;
    what it returns is what the alignment may assume."""
    path = WORK / "capture.csv"
    path.write_bytes(data)
    try:
        c = cap.read(path, fmt, units, marker)
    except EnergyError:
        return
    assert len(c.t) == len(c.current) >= 2 and np.all(np.diff(c.t) > 0)
    assert np.isfinite(c.t).all() and np.isfinite(c.current).all()
    assert c.voltage is None or (len(c.voltage) == len(c.t) and np.isfinite(c.voltage).all())
    assert math.isfinite(c.sample_period) and c.sample_period > 0
    try:
        level = c.marker()
    except EnergyError:
        return
    assert len(level) == len(c.t)


# ---------------------------------------------------------------------- running
def fuzz_plans(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(mutated(PLAN_SEEDS), built_plan()))
    def target(data: bytes) -> None:
        plan_input(data)

    target()


def fuzz_captures(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(mutated(CAPTURE_SEEDS), st.sampled_from(("auto",) + FORMATS), UNITS, MARKERS)
    def target(data: bytes, fmt: str, units: cap.Units, marker: str | None) -> None:
        capture_input(data, fmt, units, marker)

    target()


TARGETS = {"plan": fuzz_plans, "capture": fuzz_captures}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--examples", type=int, default=20000, help="inputs to try")
    args = parser.parse_args()
    TARGETS[args.target](args.examples)
    print(f"{args.target}: {args.examples} inputs, no escape")
