# SPDX-License-Identifier: Apache-2.0
"""Five ratios of crypto primitives across cores (docs/benchmarks.md "Device primitives: five
ratios across cores"): one plan with [device] target = [every target of spec/targets.toml] and
[experiments], mbed TLS 3.6 on every target (it has SHA3; --library picks another build), through `tlsbench run`
(the targets' QEMUs in parallel). Per target, the counts of the operations (median of the
repetitions, analysis/questions/device_primitives.py, what the report's section shows) and
five ratios of two counts of the same core:

    X25519 / P-256       ecdh-x25519 vs ecdh-p256, key generation + shared secret (an ECDHE)
    ChaCha20 / AES-GCM   chacha20-poly1305 vs aes128-gcm, encrypt 1 KiB
    ECDSA / RSA verify   ecdsa-p256 vs rsa2048 verification (what a client pays per signature)
    SHA3 / SHA-256       sha3-256 vs sha256 over 1 KiB (Keccak's 64-bit lanes on 32-bit cores)
    ECDSA / RSA sign     ecdsa-p256 vs rsa2048 signature (what a server pays)

ML-KEM-768 vs X25519 needs a build with ML-KEM: by default wolfssl@5.7 runs after mbed TLS 3.6
and each ratio is taken from the first build that has both operations (every target's wolfSSL
is cross-built first: minutes per core).

    .venv/bin/python bench/device_ratios.py [--library mbedtls@3.6 wolfssl@5.7] [--repetitions 2] [--no-update]

Counts are exact (random keys and nonces move an asymmetric one by about 1% between
repetitions); the wall time is the shared machine's."""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.questions import device_primitives  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.core import targets  # noqa: E402
from tlsbench.core.errors import UserError  # noqa: E402

KIB = 1024
EXPERIMENTS = ["ecdh-x25519", "ecdh-p256", "chacha20-poly1305", "aes128-gcm", "ecdsa-p256", "rsa2048", "sha256",
               "sha3-256", "mlkem768"]
# name -> (numerator, denominator): each a list of (experiment, payload, group) summed.
ECDHE = ("keygen", "shared-secret")
RATIOS = {
    "X25519 / P-256 (ECDHE)": ([("ecdh-x25519", 0, g) for g in ECDHE], [("ecdh-p256", 0, g) for g in ECDHE]),
    "ChaCha20-Poly1305 / AES-128-GCM (encrypt 1 KiB)": ([("chacha20-poly1305", KIB, "encrypt")],
                                                         [("aes128-gcm", KIB, "encrypt")]),
    "ECDSA P-256 / RSA-2048 (verify)": ([("ecdsa-p256", 0, "verify")], [("rsa2048", 0, "verify")]),
    "ECDSA P-256 / RSA-2048 (sign)": ([("ecdsa-p256", 0, "sign")], [("rsa2048", 0, "sign")]),
    "SHA3-256 / SHA-256 (1 KiB)": ([("sha3-256", KIB, "hash")], [("sha256", KIB, "hash")]),
    "ML-KEM-768 / X25519 (key exchange)": ([("mlkem768", 0, g) for g in ("keygen", "encapsulate", "decapsulate")],
                                           [("ecdh-x25519", 0, g) for g in ECDHE]),
}


def matrix_plan(names: list[str], library: str | None, repetitions: int, offered: list[str]) -> plan.LoadedPlan:
    text = (f'name = "ratios"\nrepetitions = {repetitions}\n[experiments]\ninclude = {json.dumps(offered)}\n'
            f'[device]\ntarget = {json.dumps(names)}\n' + (f'library = "{library}"\n' if library else ""))
    return plan.parse(text, "ratios.toml")


def counts(db: Path) -> tuple[dict, dict[str, str], str]:
    """(target, experiment, size, group) -> median count; target -> core; the unit."""
    ds = load_path(db, kind="device_experiments")
    dp = device_primitives.analyze(ds)
    out = {(t, o.experiment, o.size, o.group): c.median for o in dp.operations for (t, _), c in o.counts.items()}
    return out, dp.cores, dp.unit


def ratio(found: dict, target: str, parts: tuple[list, list]) -> float | None:
    num, den = ([found.get((target, *k)) for k in side] for side in parts)
    if None in num or None in den:
        return None
    return sum(num) / sum(den)


def measure(names: list[str], library: str, repetitions: int, tmp: Path) -> tuple[dict, dict, str, list, str, dict]:
    """One plan of the primitives on every target with `library`, without the experiments it
    lacks: (its counts, target -> core, the unit, the experiments it lacks, what was run,
    target -> why its lane had no image: stored by the run, e.g. too large for its flash)."""
    offered = EXPERIMENTS
    for attempt in range(len(EXPERIMENTS) + 1):
        folder = tmp / str(attempt)
        try:
            started = time.monotonic()
            summary = run_experiment(matrix_plan(names, library, repetitions, offered), folder)
            break
        except UserError as exc:  # experiments the build lacks: run without them (named below)
            lacking = set(re.findall(r"'([\w-]+)' matches no experiment", str(exc)))
            if not lacking:
                raise
            offered = [e for e in offered if e not in lacking]
    seconds = time.monotonic() - started
    db = folder / "ratios" / "tlsbench.db"
    found, cores, unit = counts(db)
    run = (f"{library}: {summary.stored} repetitions stored, {summary.failed} failed, {seconds:.0f} s wall on the "
           "shared machine")
    return found, cores, unit, [e for e in EXPERIMENTS if e not in offered], run, without_image(db)


def without_image(db: Path) -> dict[str, str]:
    """Target -> why its lane had no image: its configurations stored with the reason, no boot."""
    with reader(db) as st:
        booted = {a.target for a in st.agent_rows()}
        return {c.target: c.skip_reason for c in st.config_rows("all")
                if c.target and c.target not in booted and c.skip_reason}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", nargs="+", default=["mbedtls@3.6", "wolfssl@5.7"],
                    help="the device library builds on every target, in order: each ratio is taken from the "
                         "first build that offers both of its operations")
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    names = list(targets.load().emulated)
    by_build, runs, lacking, unbuilt, cores = {}, [], {}, {}, {}
    for library in args.library:
        with tempfile.TemporaryDirectory() as tmp:
            found, its_cores, unit, lacking[library], run, unbuilt[library] = measure(names, library,
                                                                                    args.repetitions, Path(tmp))
        by_build[library], cores = found, {**its_cores, **cores}
        runs.append(run)
    head = ["target", "core"] + list(RATIOS)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    source = {}  # ratio -> the build it was taken from
    for t in names:
        cells = []
        for name, parts in RATIOS.items():
            value = next(((b, r) for b, found in by_build.items() if (r := ratio(found, t, parts)) is not None), None)
            cells.append("–" if value is None else f"{value[1]:.3g}")
            if value:
                source.setdefault(name, value[0])
        lines.append(f"| {t} | {cores.get(t, '?')} | " + " | ".join(cells) + " |")
    taken = "; ".join(f"{name}: {build}" for name, build in source.items() if build != args.library[0])
    first = by_build[args.library[0]]
    ops = sorted({k[1:] for k in first})
    detail = ["| operation | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for op in ops:
        detail.append(f"| {op[0]} {op[2]}{f' {op[1]} B' if op[1] else ''} | "
                      + " | ".join(f"{first[(t, *op)] / 1e3:,.1f}" if (t, *op) in first else "–" for t in names)
                      + " |")
    missing = "; ".join([f"{b} lacks {', '.join(m)}" for b, m in lacking.items() if m]
                        + [f"{b} on {t}: {why}" for b, found in unbuilt.items() for t, why in found.items()])
    body = (f"`bench/device_ratios.py` ({today()}; {machine()}): the crypto primitives on every target, "
            f"{args.repetitions} repetitions, one plan per library build through `tlsbench run` ({'; '.join(runs)}). "
            f"Counts in {unit}, medians of the repetitions; a ratio is two counts of the same core and build "
            f"(below 1: the first is cheaper there), taken from {args.library[0]}"
            + (f" except {taken}" if taken else "") + (f" ({missing})" if missing else "")
            + ". Not times: the report's device primitives section converts a count to a board's ms with its "
            "band.\n\n" + "\n".join(lines)
            + f"\n\nThe counts of {args.library[0]} (k {unit}):\n\n" + "\n".join(detail))
    print(body)
    if not args.no_update:
        update_section("Device primitives: five ratios across cores", body)


if __name__ == "__main__":
    main()
