# SPDX-License-Identifier: Apache-2.0
"""Does it fit: `[device] ram_kb` caps each peer's heap in the memory image at what the part's
RAM leaves the library (RAM minus the library's and the C runtime's static RAM, from the link
map); an allocation beyond it fails in the firmware, and the configuration is stored with
"does not fit in RAM (heap needed > N bytes available)" while a smaller suite runs. The real
firmware (mbed TLS 2.28 on the Cortex-M0 target) under real QEMU; about 15 s (the image is
rebuilt first: seconds when nothing changed)."""
from __future__ import annotations

import re
import shutil

import pytest

from tlsbench import plan
from tlsbench.app.run import run_experiment
from tlsbench.builder import firmware
from tlsbench.core.errors import UserError
from stores import reader
from tlsbench.store.progress import status_of

TARGET = "qemu-cortex-m0"
PSK, RSA = "TLS-PSK-WITH-AES-128-CCM-8", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"
RAM_KB = 52  # mbed TLS 2.28's default 16 KiB records: a PSK peer holds about 37.5 KB of heap, an RSA one 44 KB


def fit_plan(extra: str = "memory = true\nram_kb = 52\n") -> plan.LoadedPlan:
    return plan.parse(f'name = "fit"\nsuites = ["{PSK}", "{RSA}"]\nrepetitions = 1\n'
                      f'[device]\ntarget = "{TARGET}"\n{extra}', "fit.toml")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    build = firmware.build_firmware(firmware.FirmwareRequest.of_target(TARGET))  # this checkout's agent sources
    parts = build.image("memory").footprint["parts"]
    available = RAM_KB * 1024 - parts["library"]["ram"] - parts["runtime"]["ram"]
    out = tmp_path_factory.mktemp("fit")
    summary = run_experiment(fit_plan(), out)
    return summary, out / "fit" / "tlsbench.db", available


def test_a_suite_that_needs_more_heap_than_the_part_leaves_is_stored_as_not_fitting(stored):
    summary, db, available = stored
    why = f"does not fit in RAM (heap needed > {available} bytes available)"
    with reader(db) as st:
        configs = {c.id: c for c in st.config_rows()}
        reps = [(configs[r.config_id], r) for _, r in st.repetition_rows()]
    memory = {c.suite_name: (c, r) for c, r in reps if c.image == "memory"}
    assert memory[RSA][0].skip_reason == why and summary.skipped_configs == {memory[RSA][0].key: why}
    needed = int(re.search(r"a peer needed at least (\d+) bytes", memory[RSA][1].error_text)[1])
    assert needed > available and memory[RSA][1].status != "OK"
    assert memory[PSK][1].status == "OK" and memory[PSK][0].skip_reason is None  # the PSK suite fits and runs
    # The counting image keeps the emulated board's RAM: both suites counted.
    assert {c.suite_name: r.status for c, r in reps if c.image != "memory"} == {PSK: "OK", RSA: "OK"}


def test_the_psk_peers_heap_stays_under_the_cap(stored):
    from tlsbench.analysis.questions.device import footprint
    from stores import load_path

    _, db, available = stored
    fp = footprint(load_path(db, kind="footprint"))
    psk = [r for r in fp.rows if r.label.startswith(PSK)]
    assert len(psk) == 2 and all(0 < r.values["HEAP_PEAK_HANDSHAKE"].most <= available for r in psk)
    assert list(fp.not_measured.values()) == [f"does not fit in RAM (heap needed > {available} bytes available)"]


def test_ram_kb_needs_the_memory_image_of_an_emulated_target():
    with pytest.raises(UserError, match="ram_kb caps each peer's heap in the memory image"):
        fit_plan("ram_kb = 52\n")


def test_status_counts_a_configuration_refused_after_it_ran_as_planned(stored):
    """The memory image's RSA handshake ran and was refused by the cap: stored with its reason,
    and planned too (`tlsbench status` said "stored 4, planned 3")."""
    _, db, _ = stored
    with reader(db) as st:
        status = status_of(st, db.parent)
    assert status.planned == status.stored == 4 and [r.planned for r in status.rounds] == [4]
