# SPDX-License-Identifier: Apache-2.0
"""Per-step class counts (docs/cycles.md, "Per-step cycles"): the device firmware calls
tb_trace_stepped once per trace record, the plugin snapshots it, and run/cycles.py count_steps
gives each shipped record its counts. One TLS 1.3 handshake of the mbedtls@3.6 firmware on the
M4, plain and under the plugin: about 10 s once the firmware is built."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from tlsbench.analysis.models.cycles import board_cpi, modelled_cycles
from tlsbench.builder import cycles as tool
from tlsbench.builder import firmware
from tlsbench.core import spec as specmod
from tlsbench.core import targets
from tlsbench.core.boards import board
from tlsbench.run import protocol, tracefs
from tlsbench.run.cycles import CountingError, count_steps, match_reps, run_reps, segments
from tlsbench.run.endpoints.firmware import FirmwareImage
from tlsbench.run.endpoints.qemu import QemuEndpoint
from tlsbench.run.timeouts import Timeouts

CLASSES = ("alu", "mul", "mull", "div", "load", "load_literal", "store", "load_double", "load_multiple",
           "store_multiple", "branch", "it", "system", "fpu")
TARGET = "qemu-mps2-an386"


def _handshake() -> protocol.RunRequest:
    spec = specmod.load()
    return protocol.RunRequest(1, 0x1301, spec.groups.by_name["x25519"], spec.credentials.by_name["ecdsa-p256"],
                               0, 0, 1, 0, 0, 1, 0)


@pytest.fixture(scope="module")
def boots():
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.fail("these tests need qemu-system-arm and gcc-arm-none-eabi: scripts/install-deps.sh installs them")
    target = targets.load().emulated[TARGET]
    built = firmware.ensure_firmware(firmware.FirmwareRequest.of_target(TARGET, library="mbedtls@3.6")).image("counting")
    image = FirmwareImage(built.variant, built.path, built.sha256)
    link = QemuEndpoint(target, image, Timeouts().greeting)
    try:
        plain = run_reps(link, _handshake())
    finally:
        link.end()
        link.close()
    counted = count_steps(target, image, tool.plugin(), board("stm32f411").memory.plugin_args(), [_handshake()])
    return plain, counted[0]


def test_every_record_has_its_counts_and_the_counter_is_unchanged_by_the_plugin(boots):
    plain, (rep,) = boots
    assert len(plain) == 1 and len(rep.records) == len(rep.counts) > 50
    assert [r[3] for r in rep.records] == [r[3] for r in tracefs.decode(plain[0])]  # the same counter readings
    whole = rep.step(0, len(rep.records) - 1)
    assert sum(whole[k] for k in CLASSES) == whole["instructions"] > 50_000_000  # each instruction in one class


def test_a_steps_modelled_cycles_come_from_its_own_counts(boots):
    _, (rep,) = boots
    spec, f411 = specmod.load(), board("stm32f411")
    label = spec.label_by_name["PK_SIGN"].id
    start, stop = (i for i, r in enumerate(rep.records) if r[0] == label)
    step = rep.step(start, stop)
    instructions = rep.records[stop][3] - rep.records[start][3]
    cycles = modelled_cycles(step, f411)
    # ECDSA signing: its modelled CPI is its own, near but not equal to the reference workload's
    assert cycles != pytest.approx(instructions * board_cpi(f411), rel=1e-3)
    assert cycles == pytest.approx(instructions * board_cpi(f411), rel=0.3)


def test_a_repetition_without_its_snapshots_is_refused():
    segs = segments(np.array([0, 1, 1, 0, 1]), np.array([[0], [10], [50], [60], [70]], dtype=np.uint64))
    assert [s.tolist() for s in segs] == [[[10], [50]], [[10]]]
    record = tracefs.RECORD.pack
    two = record(1, 0, 0, 0, 100, 0, 0) + record(1, 1, 0, 1, 140, 0, 0)
    assert [r.counts.tolist() for r in match_reps(("instructions",), segs, [two])] == [[[10], [50]]]
    with pytest.raises(CountingError, match="no run of trace snapshots matches a repetition of 2 records"):
        match_reps(("instructions",), segs, [two, two])
    far = record(1, 0, 0, 0, 100, 0, 0) + record(1, 1, 0, 1, 100_000, 0, 0)  # not the code the plugin counted
    with pytest.raises(CountingError):
        match_reps(("instructions",), segs, [far])
