#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-step cycles (model) of device handshakes against the CPI route (docs/cycles.md,
"Per-step cycles"; issue 30 item 2):

1. The firmware (mbed TLS 3.6, both peers on the emulated Cortex-M4) runs an ECDHE-ECDSA P-256
   TLS 1.2 and a TLS 1.3 X25519 handshake, plain and under the plugin with a snapshot at every
   trace record (run/cycles.py count_steps), per board's cache geometry: wall seconds of each.
2. Checks: every record's counter reading is the same with and without the plugin, and two
   boots under the plugin give the same counts (values that differ: 0 expected).
3. Per step (a START/STOP span of a label and peer): instructions, cycles by the CPI route
   (instructions x the board's reference CPI) and cycles (model) from the step's class counts.

    .venv/bin/python bench/steps_cycles.py [--boards nrf52840,stm32f411] [--repetitions 2] [--no-update]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench.analysis.models.cycles import board_cpi, modelled_cycles
from tlsbench.builder import cycles as tool
from tlsbench.builder import firmware
from tlsbench.core import spec as specmod
from tlsbench.core import targets
from tlsbench.core.boards import board
from tlsbench.run import protocol, tracefs
from tlsbench.run.cycles import CountedRep, count_steps, run_reps
from tlsbench.run.endpoints.firmware import FirmwareImage
from tlsbench.run.endpoints.qemu import QemuEndpoint
from tlsbench.run.timeouts import Timeouts

HANDSHAKES = {  # name: (suite, group, credential)
    "tls12-ecdhe-ecdsa-p256": (0xC02B, "secp256r1", "ecdsa-p256"),
    "tls13-x25519": (0x1301, "x25519", "ecdsa-p256"),
}


def requests(repetitions: int) -> list[protocol.RunRequest]:
    spec = specmod.load()
    return [protocol.RunRequest(i, suite, spec.groups.by_name[g], spec.credentials.by_name[c], 0, 0,
                                repetitions, 0, 0, 1, 0)
            for i, (suite, g, c) in enumerate(HANDSHAKES.values(), 1)]


BOOTS = 3  # each way: the wall seconds are the best of these; two give the determinism check


def timed(work):
    t0 = time.monotonic()
    out = work()
    return time.monotonic() - t0, out


def plain(target, image, reqs) -> tuple[float, list[list[bytes]]]:
    """The same RUNs without the plugin: wall seconds and each repetition's records."""
    def work():
        link = QemuEndpoint(target, image, Timeouts().greeting)
        try:
            return [run_reps(link, r) for r in reqs]
        finally:
            link.end()
            link.close()
    return timed(work)


def steps(rep: CountedRep) -> list[tuple[str, int, int, dict[str, int]]]:
    """(label, peer, instructions, class counts) of every START/STOP pair, in stop order."""
    spec, open_ = specmod.load(), defaultdict(list)
    out = []
    for i, (label, kind, peer, t) in enumerate(rep.records):
        if kind == spec.kinds.START:
            open_[(label, peer)].append(i)
        elif kind == spec.kinds.STOP and open_[(label, peer)]:
            j = open_[(label, peer)].pop()
            delta = rep.step(j, i)
            out.append((spec.label_by_id[label].name, peer, rep.records[i][3] - rep.records[j][3], delta))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", default="nrf52840,stm32f411")
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--no-update", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = ap.parse_args()
    reqs = requests(args.repetitions)
    lines = [f"Written by bench/steps_cycles.py on {today()} ({machine()}). The mbedtls@3.6 firmware, both "
             "peers on the emulated Cortex-M4, the board's cache geometry in the plugin; wall seconds of the "
             f"whole boot (greeting, both handshakes, {args.repetitions} repetitions each), best of {BOOTS}.", ""]
    for name in args.boards.split(","):
        b = board(name)
        target = targets.load().emulated[b.core.target]
        built = firmware.ensure_firmware(firmware.FirmwareRequest.of_target(target.name, None, "mbedtls@3.6")).image("counting")
        image = FirmwareImage(built.variant, built.path, built.sha256)
        plains = [plain(target, image, reqs) for _ in range(BOOTS)]
        plain_s, plain_ran = min(s for s, _ in plains), plains[0][1]
        boots = [timed(lambda: count_steps(target, image, tool.plugin(), b.memory.plugin_args(), reqs))
                 for _ in range(BOOTS)]
        s1, (ran1, ran2) = min(s for s, _ in boots), (boots[0][1], boots[1][1])
        t_diff = sum(a[3] != p[3] for reps, preps in zip(ran1, plain_ran) for r, raw in zip(reps, preps)
                     for a, p in zip(r.records, tracefs.decode(raw)))
        c_diff = sum(int((r1.counts != r2.counts).sum()) for reps1, reps2 in zip(ran1, ran2)
                     for r1, r2 in zip(reps1, reps2))
        n_values = sum(r.counts.size for reps in ran1 for r in reps)
        lines += [f"### {name} ({b.core.name}, {b.clock_mhz:g} MHz)", "",
                  f"Plain {plain_s:.2f} s, with the plugin and a snapshot per record {s1:.2f} s: "
                  f"**{s1 / plain_s:.2f}×**. Counter readings that differ with the plugin attached: {t_diff}. "
                  f"Counts that differ over two boots: {c_diff} of {n_values:,}."]
        cpi = board_cpi(b)
        peer_name = {v: k for k, v in specmod.load().peers.by_name.items()}
        for hs, reps in zip(HANDSHAKES, ran1):
            per = defaultdict(lambda: [0, 0.0, 0])
            for rep in reps[:1]:
                for label, peer, insns, delta in steps(rep):
                    key = (label, peer_name[peer])
                    per[key][0] += insns
                    per[key][1] += modelled_cycles(delta, b)
                    per[key][2] += delta["instructions"]
            whole = per[("REPETITION", "none")][0]
            lines += ["", f"{hs} (repetition 1); CPI route: {cpi:.3f} cycles per instruction; "
                      "the steps of at least 1% of the repetition:", "",
                      "| step | peer | instructions | ms (CPI route) | ms (model, per step) | model ÷ CPI route |",
                      "|---|---|---:|---:|---:|---:|"]
            for (label, peer), (insns, model, _) in sorted(per.items(), key=lambda kv: -kv[1][0]):
                if insns >= whole / 100:
                    lines.append(f"| {label} | {peer} | {insns:,} | {insns * cpi / b.clock_hz * 1e3:,.1f} | "
                                 f"{model / b.clock_hz * 1e3:,.1f} | {model / (insns * cpi):.3f} |")
        lines.append("")
    print("\n".join(lines))
    if not args.no_update:
        update_section("Per-step cycles (model) of device handshakes", "\n".join(lines))


if __name__ == "__main__":
    main()
