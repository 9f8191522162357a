#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the cycle model's plugin costs a `tlsbench run` of a device plan (docs/cycles.md,
"Per-step cycles"; issue 30: target ≤ 2×): the same plan (mbed TLS 3.6 firmware on the emulated
Cortex-M4, an ECDHE-ECDSA TLS 1.2 and a TLS 1.3 suite over P-256 and X25519, board nrf52840) run with
`cycles = false` and with the plugin on (the default with a board), interleaved, each run
`tlsbench run --no-report` from start to end (firmware cached, boots, greeting, the sweep, the
store): wall seconds, the median of --runs. Checks that every stored repetition of the plugin's
runs has its counts and that the records are the same as without it.

    .venv/bin/python bench/run_cycles.py [--runs 3] [--repetitions 5] [--no-update]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench.builder import firmware
from tlsbench.store.locator import locate

SUITES = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS1-3-AES-128-GCM-SHA256"]
PLAN = """name = "cost"
suites = {suites}
groups = ["secp256r1", "x25519"]
repetitions = {repetitions}
[device]
target = "qemu-mps2-an386"
library = "mbedtls@3.6"
board = "nrf52840"
{cycles}"""
WAYS = {"plain": "cycles = false\n", "plugin": ""}


def run(folder: Path, cycles: str, repetitions: int) -> tuple[float, Path]:
    """One `tlsbench run` of the plan: wall seconds and its store."""
    (folder / "plan.toml").write_text(PLAN.format(suites=SUITES, repetitions=repetitions, cycles=cycles))
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(folder / "plan.toml"), "--output",
                    str(folder / "out"), "--no-report"], check=True, capture_output=True)
    return time.monotonic() - t0, folder / "out" / "cost"


def stored(store: Path) -> tuple[dict[tuple[int, int], bytes], dict]:
    """(config id, idx) -> records, and the trace_counts rows."""
    with locate(store).reader() as r:
        cols = r.repetition_columns()
        key = dict(zip(cols.id.tolist(), zip(cols.config_id.tolist(), cols.idx.tolist())))
        return {key[i]: raw for i, raw in r.traces()}, r.trace_counts()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--no-update", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = ap.parse_args()
    firmware.ensure_firmware(firmware.FirmwareRequest.of_target("qemu-mps2-an386", None, "mbedtls@3.6"))
    seconds: dict[str, list[float]] = {w: [] for w in WAYS}
    with tempfile.TemporaryDirectory(prefix="tb-run-cycles-") as tmp:
        for i in range(args.runs):
            order = list(WAYS) if i % 2 == 0 else list(reversed(WAYS))  # interleaved, alternating first
            stores = {}
            for way in order:
                folder = Path(tmp) / f"{way}-{i}"
                folder.mkdir()
                s, stores[way] = run(folder, WAYS[way], args.repetitions)
                seconds[way].append(s)
            plain, _ = stored(stores["plain"])
            records, counts = stored(stores["plugin"])
            assert records == plain, "the counter's records differ with the plugin attached"
            assert len(counts) == len(records) and all(c.counts is not None for c in counts.values()), \
                "a stored repetition without its counts"
            n = len(records)
    med = {w: statistics.median(v) for w, v in seconds.items()}
    body = (f"Written by bench/run_cycles.py on {today()} ({machine()}). `tlsbench run --no-report` of a device "
            f"plan (mbedtls@3.6 firmware on qemu-mps2-an386, board nrf52840; {', '.join(SUITES)} × secp256r1, x25519: "
            f"{n} stored repetitions, a warm-up per batch) from start to end, firmware cached; {args.runs} runs each way, "
            "interleaved; median wall seconds.\n\n"
            "| run | median s | runs (s) |\n|---|---:|---|\n"
            + "".join(f"| {'`cycles = false`' if w == 'plain' else 'the plugin (default with a board)'} | "
                      f"{med[w]:.2f} | {', '.join(f'{s:.2f}' for s in seconds[w])} |\n" for w in WAYS)
            + f"\nThe plugin costs **{med['plugin'] / med['plain']:.2f}×** a run without it (target ≤ 2×). Every "
            f"stored repetition had its counts ({n} per run), and the counter's records were the same byte for byte "
            "with and without the plugin.")
    print(body)
    if not args.no_update:
        update_section("Cycle model attached to a device run", body)


if __name__ == "__main__":
    main()
