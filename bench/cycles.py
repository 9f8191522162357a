#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The cycle model's figures (docs/benchmarks.md, "Cycle model: validation, cost, handshakes per
board"; docs/cycles.md):

1. `tlsbench validate cycles` on the shipped table: predicted vs published cycles per row (the
   device firmware's primitive experiments under the plugin), the median and worst |error| over
   the comparable rows not used for calibration, and beside it over every row.
2. The plugin's cost: the device firmware of two builds running the same primitive experiments
   under QEMU -icount shift=0, plain and with the plugin (the board's cache simulated), wall
   seconds (best of 3); determinism: every count of every build on every board, two boots.
3. ECDHE-ECDSA P-256 TLS 1.2 and TLS 1.3 X25519 handshakes (the device firmware, mbed TLS 3.6,
   both peers on the emulated Cortex-M4) in ms and mJ per declared board, with the model's band.

    .venv/bin/python bench/cycles.py [--no-update]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.models.conversion import conversion, counted_cpu  # noqa: E402
from tlsbench.analysis.models.cycles import fitted  # noqa: E402
from tlsbench.core.errors import UserError  # noqa: E402
from tlsbench.analysis.models.energy.profiles import board_point  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402
from tlsbench.app import validate as app  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.builder import cycles as tool  # noqa: E402
from tlsbench.builder import firmware  # noqa: E402
from tlsbench.core import targets  # noqa: E402
from tlsbench.core.boards import boards  # noqa: E402
from tlsbench.run.cycles import count_groups, run_experiments  # noqa: E402
from tlsbench.run.endpoints.firmware import FirmwareImage  # noqa: E402
from tlsbench.run.endpoints.qemu import QemuEndpoint  # noqa: E402

ECDHE, TLS13 = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS1-3-AES-128-GCM-SHA256"
# The two handshakes shown, by IANA suite id and group: ECDHE-ECDSA AES-128-GCM (0xC02B), TLS_AES_128_GCM_SHA256 (0x1301).
HANDSHAKES = {"ECDHE-ECDSA P-256, TLS 1.2": (0xC02B, "secp256r1"), "X25519, TLS 1.3 (ECDSA P-256)": (0x1301, "x25519")}
DEVICE_LIBRARY = "mbedtls@3.6"
PLAN = (f'name = "hs"\nsuites = ["{ECDHE}", "{TLS13}"]\ngroups = ["secp256r1", "x25519"]\nrepetitions = 3\n'
        '[payload]\ntotal_bytes = 256\nrecord_size = 256\ndirection = "both"\n'
        f'[device]\ntarget = "qemu-mps2-an386"\nlibrary = "{DEVICE_LIBRARY}"\n')
COST_BUILDS = ("mbedtls@3.6+p256m", "wolfssl@5.7+sp-asm")


def _rows(results: list) -> list[str]:
    lines = ["| id | board @ clock | library | operation | instructions (M) | cycles (model, M) | published (M) "
             "| error | role |", "|---|---|---|---|--:|--:|--:|--:|---|"]
    for r in results:
        lines.append(f"| {r.id} | {r.board} @ {r.clock_mhz:g} MHz | {r.library} | {r.experiment}/{r.group} | "
                     f"{r.instructions / 1e6:.3f} | {r.predicted_cycles / 1e6:.3f} | {r.published_cycles / 1e6:.3f} | "
                     f"{r.error:+.1%} | {r.role} |")
    return lines


def validation() -> tuple[str, app.Validation]:
    result = app.validate(app.read_table(app.PUBLISHED))
    comparable = [r for r in result.results if r.role != app.NOT_COMPARABLE]
    others = [r for r in result.results if r.role == app.NOT_COMPARABLE]
    band, every = result.band, result.all_rows_band
    calibrated = ", ".join(f"{core} on {row} (factor {fitted().factors[core]:.3f})"
                           for core, row in fitted().calibrated_on.items())
    why = "\n".join(f"- {', '.join(r.id for r in others if r.not_reproducible == reason)}: {reason}"
                    for reason in dict.fromkeys(r.not_reproducible for r in others))
    text = ("**Comparable rows** (the published build is the one run here):\n\n" + "\n".join(_rows(comparable))
            + (f"\n\n**Median |error| {band.median:.1%}, worst {band.worst:.1%} over {band.rows} comparable "
               "validation rows** (targets: median ≤ 10%, worst ≤ 20%)" if band else "\n\nNo comparable validation row")
            + f". Calibrated (one comparable figure per core, not counted above): {calibrated}; the other cores run "
            "their timing tables as they are (factor 1).\n\n**Rows not comparable** (shown apart, never calibrated, "
            "never in the band):\n\n" + "\n".join(_rows(others)) + f"\n\nWhy:\n\n{why}\n\n"
            + (f"Over every row not used for calibration (not comparable ones included): median |error| "
               f"{every.median:.1%}, worst {every.worst:.1%} over {every.rows} rows." if every else ""))
    return text, result


def _wall(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.monotonic()
        run()
        best = min(best, time.monotonic() - t)
    return best


def _image(name: str, target: str) -> FirmwareImage:
    image = firmware.ensure_firmware(firmware.FirmwareRequest.of_target(target, library=name)).image("counting")
    return FirmwareImage("counting", image.path, image.sha256)


def cost_and_determinism() -> str:
    rows, differing, values = [], 0, 0
    plugin, experiments = tool.plugin(), app.REFERENCE_EXPERIMENTS
    b = boards()["stm32f411"]
    target = targets.load().emulated[b.core.target]
    for name in COST_BUILDS:
        image = _image(name, target.name)

        def plain() -> None:
            link = QemuEndpoint(target, image, 30.0)
            try:
                run_experiments(link, experiments, app.REPETITIONS)
            finally:
                link.end()
                link.close()

        counted = count_groups(target, image, plugin, b.memory.plugin_args(), experiments, app.REPETITIONS)
        a, p = _wall(plain), _wall(lambda: count_groups(target, image, plugin, b.memory.plugin_args(), experiments,
                                                          app.REPETITIONS))
        insns = sum(g.counts["instructions"] * g.repetitions for g in counted.values())
        rows.append(f"| {name} on {b.core.name} | {insns / 1e6:.1f} | {a:.2f} | {p:.2f} | {p / a:.2f}× |")
    for b in boards().values():
        target = targets.load().emulated[b.core.target]
        for name in COST_BUILDS if b.core.stream != "rv32" else COST_BUILDS[:1]:  # wolfSSL's SP assembly: Arm only
            image = _image(name, target.name)
            one, two = (count_groups(target, image, plugin, b.memory.plugin_args(), experiments, app.REPETITIONS)
                        for _ in range(2))
            values += sum(len(g.counts) for g in one.values())
            differing += sum(one[k].counts[f] != two[k].counts[f] for k in one for f in one[k].counts)
    return ("The whole boot (greeting, the RUNs of ecdh-p256 and ecdsa-p256, 2 repetitions each), wall seconds, best "
            "of 3.\n\n| firmware | group instructions (M) | plain icount (s) | with the plugin (s) | cost |\n"
            "|---|--:|--:|--:|--:|\n" + "\n".join(rows) + f"\n\nDeterminism: {differing} differing values of "
            f"{values:,} (every count of both builds' groups on every board, p256-m only on the RISC-V one, two boots).")


def handshakes() -> str:
    firmware.ensure_firmware(firmware.FirmwareRequest.of_target("qemu-mps2-an386", library=DEVICE_LIBRARY))
    with tempfile.TemporaryDirectory() as tmp:
        run_experiment(plan.parse(PLAN, "hs.toml"), Path(tmp))
        analysis = analyze(load_path(Path(tmp) / "hs" / "tlsbench.db"))
    counts = {}
    for r in analysis.results.rows:
        if r.metric == "handshake_processing":
            c = analysis.results.configs[r.config_id]
            counts[(c.suite_id, c.grp, r.peer)] = r.summary.median
    band = fitted().band
    head = "| board | core, clock | CPI (model) | " + " | ".join(
        f"{h}: client ms | client mJ | server ms | server mJ" for h in HANDSHAKES) + " | band |"
    lines = [head, "|---|---|--:|" + "--:|" * 4 * len(HANDSHAKES) + "---|"]
    for b in boards().values():
        op = board_point(b)
        try:
            conv = conversion(analysis.ds.unit, op, cpu=counted_cpu(analysis.ds))
        except UserError as exc:  # another instruction stream, or no model for the core
            lines.append(f"| {b.name} | {b.core.name}, {b.clock_mhz:g} MHz | – | " + "– | " * 4 * len(HANDSHAKES)
                         + f"{exc} |")
            continue
        cells = []
        for suite, group in HANDSHAKES.values():
            for peer in ("client", "server"):
                sec = counts[(suite, group, peer)] * conv.processing_s
                cells += [f"{sec * 1e3:,.0f}", f"{(op.cpu_w - op.idle_w) * sec * 1e3:,.2f}"]
        stream = "" if b.core.name == "cortex-m4" else " (the Cortex-M4's Thumb-2 stream, as this core runs it)"
        lines.append(f"| {b.name} | {b.core.name}, {b.clock_mhz:g} MHz{stream} | {conv.processing_s * b.clock_hz:.2f} | "
                     f"{' | '.join(cells)} | {conv.band_text()} |")
    counted = "; ".join(f"{h}: client {counts[(s, g, 'client')] / 1e6:.2f} M, server {counts[(s, g, 'server')] / 1e6:.2f} M"
                        for h, (s, g) in HANDSHAKES.items())
    return (f"Handshake processing counted on the device ({DEVICE_LIBRARY}, ECDSA P-256 certificates, median of 3): "
            f"{counted} instructions. Each board: instructions × its modelled CPI ÷ clock; mJ = (run − sleep power) × "
            "time, CPU only (no radio: in memory). Every value an estimate with the model's band.\n\n"
            + "\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    text, result = validation()
    body = (f"Written by bench/cycles.py on {today()} ({machine()}).\n\n### Validation against published silicon "
            f"figures\n\n{text}\n\n### The plugin's cost and determinism\n\n{cost_and_determinism()}\n\n"
            f"### ECDHE-ECDSA P-256 TLS 1.2 and X25519 TLS 1.3 handshakes per board\n\n{handshakes()}")
    print(body)
    if not args.no_update:
        update_section("Cycle model: validation, cost, handshakes per board", body)
    band = result.band
    return 0 if band and band.median <= 0.10 and band.worst <= 0.20 else 1


if __name__ == "__main__":
    sys.exit(main())
