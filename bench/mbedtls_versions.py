#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mbed TLS 2.28 (Debian 12) against mbed TLS 3.6 (the library cache's Debian 13 build):
handshake processing per step, full and resumed, server-only and mutual authentication, and
what building 3.6 costs (first build into an empty cache, then the cached lookup).

Three plans through `tlsbench run` (in memory, ECDSA P-256, handshake only; [precision]
asks ±1% for each peer's median handshake processing): TLS 1.3 TLS_AES_128_GCM_SHA256 over
x25519 and secp256r1 (3.6 only: 2.28 has no TLS 1.3) and TLS 1.2 ECDHE-ECDSA-AES128-GCM over
secp256r1 (both), with no option, RESUME, and MUTUAL_AUTH. Figures come from
`tlsbench export --format csv` (medians with 95% bootstrap CIs; flagged and descheduled
repetitions excluded, as in the report).

    .venv/bin/python bench/mbedtls_versions.py [--output DIR] [--reuse] [--no-build-times]
"""
from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import TLSBENCH, library_build_times, machine, today, update_section  # noqa: E402


US = 1000.0
MIN_STEP_NS = 1000.0  # steps below 1 µs in every case are left out of the step tables
VARIANTS = {"full": "[]", "resumed": '["RESUME"]', "mutual": '["MUTUAL_AUTH"]'}
PLAN = '''name = "mbedtls-{variant}"
libraries = ["mbedtls", "mbedtls@3.6"]
suites = ["0x1301", "0xC02B"]
groups = ["x25519", "secp256r1"]
credentials = ["ecdsa-p256"]
options = {options}
repetitions = 200
rounds = 10
warmup = 2
[precision]
target_ci_percent = 1.0
max_repetitions = 1000
'''
# (row name, library, suite as its agent names it, group)
CASES = (
    ("TLS 1.3 x25519, 3.6", "mbedtls@3.6", "TLS1-3-AES-128-GCM-SHA256", "x25519"),
    ("TLS 1.3 secp256r1, 3.6", "mbedtls@3.6", "TLS1-3-AES-128-GCM-SHA256", "secp256r1"),
    ("TLS 1.2 secp256r1, 2.28", "mbedtls", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "secp256r1"),
    ("TLS 1.2 secp256r1, 3.6", "mbedtls@3.6", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "secp256r1"),
)


@dataclass(frozen=True)
class Stat:
    median: float  # ns
    lo: float
    hi: float
    n: int

    def us(self) -> str:
        """median ± CI half-width, µs"""
        half = (self.hi - self.lo) / 2
        return f"{self.median / US:,.1f} ± {half / US:,.1f}"


def run_variant(output: Path, variant: str, reuse: bool) -> list[dict[str, str]]:
    name = f"mbedtls-{variant}"
    if not reuse:
        plan = output / f"{name}.toml"
        plan.write_text(PLAN.format(variant=variant, options=VARIANTS[variant]))
        subprocess.run([str(TLSBENCH), "run", str(plan), "--output", str(output), "--no-report"], check=True)
    out = subprocess.run([str(TLSBENCH), "export", name, "--output", str(output), "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def pick(rows: list[dict[str, str]], library: str, suite: str, group: str, peer: str, metric: str,
         label: str = "") -> Stat | None:
    """One configuration's row (the export names it "SUITE [library, group]")."""
    config = f"{suite} [{library}, {group}]"
    for r in rows:
        if r["config"] == config and r["peer"] == peer and r["metric"] == metric and r["label"] == label:
            return Stat(float(r["median"]), float(r["median_ci_lo"] or r["median"]),
                        float(r["median_ci_hi"] or r["median"]), int(r["n"]))
    return None


def fmt(s: Stat | None) -> str:
    return s.us() if s else "—"


def handshake_table(results: dict[str, list[dict[str, str]]]) -> str:
    head = ("| configuration | peer | " + " | ".join(f"{v}: handshake processing, µs" for v in VARIANTS) +
            " |\n|---|---|" + "---:|" * len(VARIANTS) + "\n")
    rows = []
    for title, lib, suite, group in CASES:
        for peer in ("client", "server"):
            cells = [fmt(pick(results[v], lib, suite, group, peer, "handshake_processing")) for v in VARIANTS]
            rows.append(f"| {title} | {peer} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def step_table(rows_of: list[dict[str, str]]) -> str:
    """Per step and peer, each case's median ± CI (µs); steps in the order they first appear."""
    labels: list[tuple[str, str]] = []
    for r in rows_of:
        key = (r["peer"], r["label"])
        if r["metric"] == "step" and key not in labels:
            labels.append(key)
    head = "| peer | step | " + " | ".join(c[0] for c in CASES) + " |\n|---|---|" + "---:|" * len(CASES) + "\n"
    lines = []
    for peer, label in sorted(labels):
        stats = [pick(rows_of, lib, suite, group, peer, "step", label) for _, lib, suite, group in CASES]
        if any(s and abs(s.median) >= MIN_STEP_NS for s in stats):  # the others are bookkeeping states
            lines.append(f"| {peer} | {label} | " + " | ".join(fmt(s) for s in stats) + " |")
    return head + "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the runs (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="export finished runs in --output, do not run")
    ap.add_argument("--no-build-times", action="store_true", help="skip building mbedtls@3.6 into an empty cache")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-mbedtls-versions-"))
    output.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    results = {v: run_variant(output, v, args.reuse) for v in VARIANTS}
    wall = time.monotonic() - started
    builds = ""
    if not args.no_build_times:
        first, cached, seconds = library_build_times("mbedtls@3.6")
        builds = f"""
Building mbedtls@3.6 (`tlsbench libs build mbedtls@3.6`, wall time of the command): into an
empty cache {first:.1f} s (apt's source index, the source, compile {seconds.get('build', float('nan')):.1f} s,
probe); again with the cache warm {cached:.2f} s (a lookup, Python's start-up included). The
agent build against it (`tlsbench-agent-mbedtls-3.6` and its tests) comes on top with `make agent`.
"""
    body = f"""
Script: `bench/mbedtls_versions.py` ({today()}; {machine()}; the machine is shared, so wall
times vary; the medians are of each peer's processing: steps minus their I/O and the tracer's
overhead). In memory, ECDSA P-256 certificates, handshake only; `[precision]` ±1% up to 1000
repetitions per configuration; {wall:.0f} s for the three plans. Median ± 95% CI half-width, µs.

{handshake_table(results)}

Per step (steps of at least 1 µs somewhere; a step that waited for its message is summed),
full handshakes, server authentication only:

{step_table(results["full"])}

Per step, resumed (RESUME: TLS 1.3 ticket with psk_dhe_ke, TLS 1.2 ticket):

{step_table(results["resumed"])}

Per step, mutual authentication (MUTUAL_AUTH):

{step_table(results["mutual"])}
{builds}
Rerun: `.venv/bin/python bench/mbedtls_versions.py`.
"""
    print(body)
    if not args.reuse:
        update_section("mbed TLS 2.28 and 3.6", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
