# SPDX-License-Identifier: Apache-2.0
"""A matrix over three cores ([device] target = [...]): ARMv6-M (the Cortex-M0 target),
ARMv8-M mainline (Cortex-M33, MPS2 AN505) and RV32IMAC (QEMU virt), the real firmware under
real QEMU, the targets' QEMUs in parallel: every target's configurations and boots stored
under its name, the same counts in two runs on every core, the cores' counts differ, and a
target that hangs costs that target one repetition while the others go on. The images come
from the firmware cache (`make firmware` builds every target's; here the first time: about
40 s per target). About 40 s with the images built."""
from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from tlsbench import plan
from tlsbench.analysis.questions.device import _records, identity
from tlsbench.app.device import setups_for
from tlsbench.app.run import run_experiment
from tlsbench.builder import firmware
from tlsbench.core import spec
from tlsbench.run.session import RunSettings, resolve_plan
from tlsbench.run.timeouts import Timeouts
from stores import load_path, reader
from test_device import _qemu_children

S = spec.load()
OK, DIED = S.status.name(S.status.OK), S.status.name(S.status.AGENT_DIED)
PSK = "TLS-PSK-WITH-AES-128-CCM-8"
CORES = {"qemu-cortex-m0": "cortex-m0", "qemu-mps2-an505": "cortex-m33", "qemu-riscv32-virt": "rv32imac"}


@pytest.fixture(scope="module")
def images() -> dict[str, firmware.FirmwareBuild]:
    for qemu in ("qemu-system-arm", "qemu-system-riscv32"):
        if shutil.which(qemu) is None:
            pytest.fail(f"these tests need {qemu}: scripts/install-deps.sh installs it")
    return {t: firmware.ensure_firmware(firmware.FirmwareRequest.of_target(t)) for t in CORES}


def matrix_plan(name: str, repetitions: int = 2, extra: str = "") -> plan.LoadedPlan:
    text = (f'name = "{name}"\nsuites = ["{PSK}"]\nrepetitions = {repetitions}\n{extra}'
            '[payload]\ntotal_bytes = 256\nrecord_size = 256\ndirection = "both"\n'
            f'[device]\ntarget = {json.dumps(list(CORES))}\n')
    return plan.parse(text, f"{name}.toml")


def test_a_matrix_of_cores_counts_the_same_twice_and_differs_by_core(tmp_path, images):
    loaded = matrix_plan("cores")
    for run in ("a", "b"):
        summary = run_experiment(loaded, tmp_path / run)
        assert summary.failed == 0 and summary.stored == 2 * len(CORES)
    with reader(tmp_path / "a" / "cores" / "tlsbench.db") as st:
        assert {d.target: d.firmware_sha256 for d in st.devices()} == \
            {t: b.image("counting").sha256 for t, b in images.items()}
        assert {c.target for c in st.config_rows()} == set(CORES)
        cpus = {a.target: json.loads(a.hello_json)["device"]["cpu"] for a in st.agent_rows()}
    assert cpus == CORES
    a, b = (load_path(tmp_path / run / "cores" / "tlsbench.db") for run in ("a", "b"))
    same = identity(a, b)
    assert same.repetitions == 2 * len(CORES) and same.values > 1000 and same.differing == 0, same.examples
    ends = {}  # the last count of each target's first repetition: one handshake and the records after it
    for cid, config in a.configs.items():
        pos = a.reps.config_id.tolist().index(cid)
        ends[config.key.split("|target:")[1].split("|")[0]] = int(_records(a, pos)["t_ns"][-1])
    assert set(ends) == set(CORES) and len(set(ends.values())) == len(CORES), ends  # another core, other counts


class FreezeAfterFirstStored:
    """An observer that freezes (SIGSTOP) the QEMU of the first target a repetition is stored
    for, between two of its batches (its lane's next batch then hangs)."""

    def __init__(self) -> None:
        self.frozen: int | None = None

    def start(self, total: int, done: int, configs: int) -> None: pass
    def note(self, message: str) -> None: pass
    def extend(self, extra: int) -> None: pass
    def batch(self, config: str, round: int, first_index: int, count: int) -> None: pass

    def stored(self, config: str, idx: int, status: str, agent: object) -> None:
        if self.frozen is not None:
            return
        target = config.split("|target:")[1].split("|")[0]
        for pid in _qemu_children():
            if f"-{target}.elf" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                self.frozen = pid
                os.kill(pid, signal.SIGSTOP)


def test_the_planning_boots_wait_stopped_and_end_on_their_own(images):
    """Each lane's firmware is booted to list its suites, then stopped (SIGSTOP) until the run
    ends these boots (each lane boots its own): an idle firmware polls its UART, so a matrix's
    booted lanes each took a host CPU from the next boot (35 lanes: 174 s of planning, now
    18 s). Stopped ones still end."""
    loaded = matrix_plan("listing")
    greeted = resolve_plan(loaded, RunSettings({}, devices=setups_for(loaded.plan.device).setups))
    pids = [link.pid for link in greeted.devices]
    try:
        assert len(pids) == len(CORES) and sorted(pids) == sorted(_qemu_children())
        assert {Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] for pid in pids} == {"T"}
    finally:
        greeted.close()
    assert not _qemu_children()


def test_a_hung_target_in_a_matrix_costs_it_one_repetition_and_the_others_go_on(tmp_path, images):
    loaded = matrix_plan("hang", repetitions=3, extra="rounds = 3\n")
    observer = FreezeAfterFirstStored()
    summary = run_experiment(loaded, tmp_path, observer=observer, timeouts=Timeouts(silence=6))
    assert observer.frozen and summary.agent_deaths == 1 and summary.stored == 3 * len(CORES)
    with reader(tmp_path / "hang" / "tlsbench.db") as st:
        target_of = {c.id: c.target for c in st.config_rows()}
        died = [(target_of[r.config_id], r) for _, r in st.repetition_rows() if r.status == DIED]
        ok = [target_of[r.config_id] for _, r in st.repetition_rows() if r.status == OK]
        agents = st.agent_rows()
    assert len(died) == 1 and "target hung" in died[0][1].error_text
    hung = died[0][0]
    assert {t: ok.count(t) for t in CORES} == {t: 2 if t == hung else 3 for t in CORES}
    # Each target: the boot that listed its suites, the lane's boot; the hung one booted again.
    assert sorted(a.target for a in agents) == sorted([*CORES, *CORES, hung])
    assert sum(a.exit_reason.startswith("died: target hung") for a in agents) == 1


class FreezeAndBreak(FreezeAfterFirstStored):
    """Freezes the first target a repetition is stored for and names it in `marker`: the QEMU
    wrappers (below) then refuse to boot that target again, as a board that does not come back."""

    def __init__(self, marker: Path) -> None:
        super().__init__()
        self.marker = marker

    def stored(self, config: str, idx: int, status: str, agent: object) -> None:
        if self.frozen is None:
            self.marker.write_text(config.split("|target:")[1].split("|")[0])
        super().stored(config, idx, status, agent)


def test_a_target_that_does_not_boot_again_loses_its_lane_and_the_others_go_on(tmp_path, images, monkeypatch,
                                                                               capsys):
    """About 20 s: the frozen target is declared hung after 6 s of silence, its restart fails."""
    from tlsbench.cli.run import _fail_if_given_up

    marker, wrappers = tmp_path / "broken-target", tmp_path / "bin"
    wrappers.mkdir()
    for qemu in ("qemu-system-arm", "qemu-system-riscv32"):  # the real QEMU, but not for the broken target
        (wrappers / qemu).write_text(
            f'#!/bin/sh\ncase "$*" in *"-$(cat {marker} 2>/dev/null).elf"*)\n'
            '  echo "qemu: could not load kernel: the board does not come back" >&2; exit 1;;\nesac\n'
            f'exec {shutil.which(qemu)} "$@"\n')
        (wrappers / qemu).chmod(0o755)
    marker.write_text("none yet")
    monkeypatch.setenv("PATH", f"{wrappers}:{os.environ['PATH']}")
    observer = FreezeAndBreak(marker)
    summary = run_experiment(matrix_plan("lost", repetitions=3, extra="rounds = 3\n"), tmp_path, observer=observer,
                             timeouts=Timeouts(silence=6))
    lost = marker.read_text()
    assert observer.frozen and list(summary.lost_lanes) == [lost]
    assert "did not boot" in summary.lost_lanes[lost] and "does not come back" in summary.lost_lanes[lost]
    with reader(tmp_path / "lost" / "tlsbench.db") as st:
        configs = {c.id: c for c in st.config_rows()}
        ok = [configs[r.config_id].target for _, r in st.repetition_rows() if r.status == OK]
    assert {t: ok.count(t) for t in CORES} == {t: 1 if t == lost else 3 for t in CORES}  # the others ran in full
    skipped = {c.target: c.skip_reason for c in configs.values() if c.skip_reason}
    assert skipped == {lost: summary.lost_lanes[lost]}  # stored: the report and status show why
    with pytest.raises(SystemExit) as ended:
        _fail_if_given_up(summary)
    assert ended.value.code == 1 and f"no data from {lost}" in capsys.readouterr().err
