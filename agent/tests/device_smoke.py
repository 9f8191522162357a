#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end check of the firmware on the emulated Cortex-M4 (QEMU mps2-an386), over its
UART (stdlib only; qemu_device.py drives QEMU):

- HELLO names the target, counts in instructions (never ns), lists memory as the only transport;
- TLS and DTLS suites (ECDHE-ECDSA, PSK, RSA) complete with both peers on the device;
- two boots give byte-identical REPs: every count of every record is deterministic;
- the memory image ships a footprint per peer; the counting image ships none;
- a refused RUN is answered, a corrupt frame ends the firmware with status 3;
- a target that stops answering (QEMU frozen with SIGSTOP) is caught by the read deadline.

Usage: device_smoke.py FIRMWARE_DIR   (build/firmware/<name>/, as `make firmware` builds it)"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from qemu_device import FRAME, DeviceError, QemuDevice, Rep, encode_frame, run_request

# (suite, protocol): 0 TLS, 1 DTLS. The RSA suite is the dearest (~50 M instructions).
RUNS = (("TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", 0), ("TLS-PSK-WITH-AES-128-CCM-8", 1),
        ("TLS-RSA-WITH-AES-128-GCM-SHA256", 0))
MEMORY_LABELS = ("HEAP_SHARED", "HEAP_PEAK_HANDSHAKE", "HEAP_KEPT", "HEAP_PEAK_CONNECTED", "STACK_HIGH_WATER")


def check_hello(d: QemuDevice, variant: str) -> None:
    h = d.hello
    dev = h["device"]
    assert dev["target"] == "qemu-mps2-an386" and dev["cpu"] == "cortex-m4", dev
    assert h["clock"]["unit"] == dev["counter"]["unit"] == "instructions (QEMU icount)", h["clock"]
    assert h["capabilities"] == ["memory"], h["capabilities"]
    assert dev["image"]["variant"] == variant and dev["options"]["memory_probes"] == (variant == "memory"), dev
    assert dev["image"]["text"] > 100_000 and dev["image"]["bss"] > 0, dev["image"]
    assert "NOT SECURE" in dev["entropy"], dev["entropy"]
    assert h["build"]["config"]["name"].endswith(".h") and h["build"]["config"]["text"], h["build"]["config"]
    assert len(d.suites) > 100, len(d.suites)


def run_all(d: QemuDevice) -> list[Rep]:
    reps = []
    for i, (suite, protocol) in enumerate(RUNS):
        got, done = d.run(run_request(i + 1, d.suite_id(suite), protocol=protocol, reps=1, warmup=1))
        counts = {k: done.get(k) for k in ("config_id", "shipped", "failed")}
        assert counts == {"config_id": i + 1, "shipped": 1, "failed": 0}, (suite, done)
        rep = got[0]
        assert rep.header["status"] == 0, (suite, rep.header, rep.reason)
        # Bare metal: the CPU count is the counter (read just inside the wall reads: a tick
        # apart at most); the handshake is tens of M instructions for public-key suites, about
        # one M for PSK.
        wall, cpu = rep.header["handshake_wall_ns"], rep.header["handshake_cpu_ns"]
        assert cpu > 500_000 and 0 <= wall - cpu <= 2 * d.hello["clock"]["resolution_ns"], rep.header
        assert rep.header["n_records"] > 20 and rep.header["dropped"] == 0, rep.header
        reps.append(rep)
    return reps


def boot_and_run(elf: Path, variant: str) -> list[Rep]:
    with QemuDevice(elf, timeout=60) as d:
        check_hello(d, variant)
        reps = run_all(d)
        assert d.quit() == 0, d.death_reason()
    return reps


def check_deterministic(elf: Path) -> None:
    first, second = boot_and_run(elf, "counting"), boot_and_run(elf, "counting")
    differing = sum(a.raw != b.raw for a, b in zip(first, second))
    assert differing == 0, f"{differing} of {len(first)} REPs differ between two boots"
    for rep in first:
        assert not any(rep.values(label) for label in MEMORY_LABELS), "the counting image ships no footprint"
    ecdsa = first[0].span("HANDSHAKE")
    print(f"device smoke: {len(first)} REPs identical over two boots; ECDHE-ECDSA handshake {ecdsa:,} instructions")


def check_footprint(elf: Path) -> None:
    with QemuDevice(elf, timeout=60) as d:
        check_hello(d, "memory")
        reps, _ = d.run(run_request(1, d.suite_id("TLS-PSK-WITH-AES-128-CCM-8"), reps=1, warmup=0))
        assert d.quit() == 0
    rep = reps[0]
    fp = {label: rep.values(label) for label in MEMORY_LABELS}
    assert set(fp["HEAP_SHARED"]) == {255} and fp["HEAP_SHARED"][255] > 10_000, fp  # parsed credentials, DRBG
    for peer in (0, 1):
        # Both peers hold their record buffers (2 x 16 KiB) after the handshake.
        assert fp["HEAP_PEAK_HANDSHAKE"][peer] >= fp["HEAP_KEPT"][peer] > 32_768, fp
        assert fp["HEAP_PEAK_CONNECTED"][peer] >= fp["HEAP_KEPT"][peer], fp
        assert 1_000 < fp["STACK_HIGH_WATER"][peer] < d.hello["device"]["image"]["stack_region"], fp
    print(f"device smoke: footprint {json.dumps(fp)}")


def check_refusals(elf: Path) -> None:
    with QemuDevice(elf, timeout=30) as d:
        try:
            d.run(run_request(9, 0xFFFF))
            raise AssertionError("an unknown suite was run")
        except DeviceError as exc:
            assert "unknown_suite" in str(exc), exc
        d.send(encode_frame(FRAME["RUN"], run_request(1, 0xC02B))[:-1] + b"\x00")  # bad CRC
        ftype, payload = d.read_frame()
        err = json.loads(payload)
        assert ftype == FRAME["ERROR"] and err["code"] == "bad_frame" and err["fatal"], err
        assert d.proc.wait(10) == 3, d.death_reason()


def check_hang(elf: Path) -> None:
    """A frozen target: the RUN's REP never comes; the deadline ends the wait, QEMU is killed."""
    with QemuDevice(elf, timeout=2) as d:
        d.pause()
        t = time.monotonic()
        d.send(encode_frame(FRAME["RUN"], run_request(1, d.suite_id("TLS-PSK-WITH-AES-128-CCM-8"))))
        try:
            d.read_frame()
            raise AssertionError("a frozen target answered")
        except DeviceError as exc:
            caught = str(exc)
        waited = time.monotonic() - t
        assert "target hung" in caught and "killed by signal 9" in caught, caught
        assert 1.5 < waited < 15, waited
        print(f"device smoke: a frozen target is caught after {waited:.1f} s: {caught}")


def main() -> int:
    folder = Path(sys.argv[1])
    record = folder / "firmware.json"
    if not record.is_file():
        print(f"device smoke: no firmware in {folder}: build it with `make firmware`", file=sys.stderr)
        return 1
    images = {i["variant"]: folder / i["path"] for i in json.loads(record.read_text())["images"]}
    check_deterministic(images["counting"])
    check_footprint(images["memory"])
    check_refusals(images["counting"])
    check_hang(images["counting"])
    print("device smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
