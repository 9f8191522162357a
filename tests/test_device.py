# SPDX-License-Identifier: Apache-2.0
"""A plan with [device] end to end, on the real firmware under real QEMU (mps2-an386,
-icount shift=0): the store, the report (counts in their unit, the footprint, the energy
estimate from counts), a target that hangs (SIGSTOP) or was built from other specs, the
same counts in two runs, and a board on a serial line (QEMU's pty chardev with a monitor
that resets it). The firmware images come from the firmware cache (built by `make
firmware`, or here the first time)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench import plan
from tlsbench.core import spec
from tlsbench.analysis.questions.device import identity
from stores import load_path, reader
from tlsbench.builder import firmware
from tlsbench.app.run import run_experiment
from tlsbench.run.endpoints.firmware import DeviceError
from tlsbench.run.exchange import AgentRef
from tlsbench.run.timeouts import Timeouts

S = spec.load()
OK, DIED = S.status.name(S.status.OK), S.status.name(S.status.AGENT_DIED)
PSK, ECDHE = "TLS-PSK-WITH-AES-128-CCM-8", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
UNIT = "instructions (QEMU icount)"


@pytest.fixture(scope="module")
def images(agent_path) -> firmware.FirmwareBuild:
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    return firmware.ensure_firmware(firmware.FirmwareRequest())


def device_plan(name: str, suites: list[str], device: str, repetitions: int = 3, extra: str = "") -> plan.LoadedPlan:
    text = (f'name = "{name}"\nsuites = {json.dumps(suites)}\nrepetitions = {repetitions}\n{extra}'
            '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
            f'[device]\n{device}\n')
    return plan.parse(text, f"{name}.toml")


EMULATED = 'target = "qemu-mps2-an386"\nprotocols = ["tls", "dtls"]\nmemory = true\nhost = true'


def test_device_plan_through_store_and_report(tmp_path, images, agent_path):
    loaded = device_plan("dev", [PSK, ECDHE], EMULATED)
    summary = run_experiment(loaded, tmp_path / "a", agent_dir=agent_path.parent)
    # 2 suites x (TLS, DTLS) x (counting, memory) on the device + the same 4 on the host
    assert summary.failed == 0 and summary.stored == 12 * 3
    db = tmp_path / "a" / "dev" / "tlsbench.db"
    with reader(db) as st:
        devices = {d.variant: d for d in st.devices()}
        assert set(devices) == {"counting", "memory"}
        counting = devices["counting"]
        assert (counting.target, counting.counter_unit) == ("qemu-mps2-an386", UNIT)
        assert counting.firmware_sha256 == images.image("counting").sha256
        assert counting.config.startswith("device-mps2.h") and counting.text == images.image("counting").text
        places = {(c.target, c.image, c.protocol) for c in st.config_rows()}
        assert places == {("qemu-mps2-an386", i, p) for i in ("counting", "memory") for p in (None, "dtls")} | \
            {(None, None, None), (None, None, "dtls")}

    from tlsbench.analysis.pipeline import analyze
    from tlsbench.report.html import build_html
    from tlsbench.report.energy import html_section

    # The host's few repetitions share 2 busy cores: keep the descheduled ones, for this check of layout.
    analysis = analyze(load_path(db), include_flagged=True)
    assert analysis.ds.unit.name == UNIT and analysis.ds.target == "qemu-mps2-an386"
    assert len(analysis.ds.configs) == 4 and len(analysis.ds.host.configs) == 4  # counts and times kept apart
    assert {r.unit for r in analysis.results.rows if r.metric == "step"} == {UNIT}
    device = analysis.results.device
    rows = {(f.label, f.peer): f.values for f in device.footprint.rows}
    assert len(rows) == 8 and device.footprint.shared.most > 10_000
    psk, ecdhe = (next(v for (label, peer), v in rows.items() if label.startswith(f"{s} [") and "DTLS" in label
                       and peer == "client") for s in (PSK, ECDHE))
    assert 10_000 < psk["HEAP_PEAK_HANDSHAKE"].most < ecdhe["HEAP_PEAK_HANDSHAKE"].most  # ECC needs more heap
    assert psk["HEAP_KEPT"].most <= psk["HEAP_PEAK_HANDSHAKE"].most and psk["STACK_HIGH_WATER"].most > 1000
    ranks = {(r.config.split(" ")[0], r.peer): r for r in device.vs_host.ranks if "DTLS" not in r.config}
    assert ranks[(ECDHE, "client")].device > 50 * ranks[(PSK, "client")].device  # public-key vs symmetric
    assert all(r.host < 1e9 for r in ranks.values())  # the host's values are ns, the device's counts
    html = build_html(analysis, figures=[], energy=html_section(analysis, "nrf52840"))
    for text in ("M instructions", "k instructions", "identical in 3 repetitions", "heap peak, handshake",
                 "stack high-water", "instructions per host ns", "cycles (model) of nrf52840: instructions × CPI",
                 "model error ±", "model band (mJ)", "estimate (profile nrf52840-64mhz)",
                 images.image("counting").sha256[:16]):
        assert text in html, text
    assert " ms</td>" not in html.split('id="device-vs-host"')[0]  # no count is shown as a time


def test_two_runs_count_the_same(tmp_path, images):
    loaded = device_plan("twice", [PSK], 'target = "qemu-mps2-an386"\nprotocols = ["tls", "dtls"]', repetitions=2)
    for run in ("a", "b"):
        assert run_experiment(loaded, tmp_path / run).failed == 0
    a, b = (load_path(tmp_path / run / "twice" / "tlsbench.db") for run in ("a", "b"))
    same = identity(a, b)
    assert same.repetitions == 4 and same.values > 1000 and same.differing == 0, same.examples
    # What the check reports when counts do differ: one record's value changed in run b.
    b.events.rec = b.events.rec.copy()  # decoded in place from the stored blobs: read-only
    b.events.rec["t_ns"][b.events.rep_first[0] + 5] += 40
    assert identity(a, b).differing == 1


def _qemu_children() -> list[int]:
    """This process's QEMU children (the booted board)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text.split("(", 1)[1].rsplit(")", 1)
        if int(rest.split()[1]) == os.getpid() and comm.startswith("qemu-system"):
            pids.append(int(stat.parent.name))
    return pids


class FreezeBeforeFirstBatch:
    """An observer that freezes the board's QEMU (SIGSTOP) just before the first batch's RUN:
    repetitions are stored per batch, so the batch is the first moment an observer sees."""

    def __init__(self) -> None:
        self.frozen: int | None = None

    def start(self, total: int, done: int, configs: int) -> None: pass
    def note(self, message: str) -> None: pass
    def extend(self, extra: int) -> None: pass
    def stored(self, config: str, idx: int, status: str, agent: AgentRef) -> None: pass

    def batch(self, config: str, round: int, first_index: int, count: int) -> None:
        if self.frozen is None and (qemu := _qemu_children()):
            self.frozen = qemu[0]
            os.kill(self.frozen, signal.SIGSTOP)


def test_a_hung_target_costs_one_repetition_and_the_sweep_goes_on(tmp_path, images):
    loaded = device_plan("hang", [ECDHE], 'target = "qemu-mps2-an386"', repetitions=4, extra="rounds = 1\n")
    observer = FreezeBeforeFirstBatch()
    summary = run_experiment(loaded, tmp_path, observer=observer, timeouts=Timeouts(silence=6))
    assert observer.frozen and summary.agent_deaths == 1 and summary.stored == 4
    with reader(tmp_path / "hang" / "tlsbench.db") as st:
        reps = sorted((r for _, r in st.repetition_rows()), key=lambda r: r.idx)
        agents = st.agent_rows()
    died = [r for r in reps if r.status == DIED]
    assert len(died) == 1 and [r.status for r in reps if r.idx > died[0].idx] == [OK] * (3 - died[0].idx)
    assert "target hung: no frame for 6 s (QEMU was stopped (SIGSTOP)" in died[0].error_text
    assert "killed by SIGKILL" in died[0].error_text
    assert len(agents) == 2 and agents[0].pid == observer.frozen and agents[0].exit_reason.startswith("died: target hung")
    assert agents[1].exit_reason == "quit (QEMU exit status 0: QUIT)"


def test_a_firmware_of_other_specs_is_refused_with_the_rebuild_advice(tmp_path, images):
    """The counting image with the labels CRC-32 its HELLO reports changed: what a firmware
    built from another labels.toml says."""
    elf = images.image("counting").path.read_bytes()
    ours = S.labels_crc32.to_bytes(4, "little")
    assert elf.count(ours) == 1
    other = tmp_path / "other-specs.elf"
    other.write_bytes(elf.replace(ours, (S.labels_crc32 ^ 1).to_bytes(4, "little")))
    loaded = device_plan("other", [PSK], f'target = "qemu-mps2-an386"\nfirmware = "{other}"')
    with pytest.raises(DeviceError, match=r"other-specs\.elf on qemu-mps2-an386: agent .* built from other specs "
                                          r".*: rebuild the firmware: tlsbench build firmware$"):
        run_experiment(loaded, tmp_path)
    assert not (tmp_path / "other").exists()  # refused before anything was written


# The board's reset line: QEMU's monitor, told to reset once its prompt is up, and heard to be done.
RESET_THROUGH_MONITOR = """import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def prompt():
    seen = b""
    while not seen.endswith(b"(qemu) "):
        seen += s.recv(4096) or sys.exit("the monitor closed")
prompt()
s.sendall(b"system_reset\\n")
prompt()
"""


def test_a_board_on_a_serial_line(tmp_path, images):
    """QEMU as the board: its UART on a pty (a serial device), reset through its monitor."""
    monitor = tmp_path / "monitor.sock"
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-display", "none",
                             "-monitor", f"unix:{monitor},server=on,wait=off",
                             "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                             "-serial", "pty", "-kernel", str(images.image("counting").path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = re.search(r"/dev/pts/\d+", qemu.stdout.readline())[0]  # type: ignore[index, union-attr]
        reset_script = tmp_path / "reset.py"
        reset_script.write_text(RESET_THROUGH_MONITOR)
        reset = f"{sys.executable} {reset_script} {monitor}"
        loaded = device_plan("board", [PSK], f'serial = "{port}"\nbaud = 115200\nreset = {json.dumps(reset)}\n'
                                             f'firmware = "{images.image("counting").path}"', repetitions=2)
        summary = run_experiment(loaded, tmp_path, timeouts=Timeouts(greeting=30))
        assert summary.stored == 2 and summary.failed == 0
        with reader(tmp_path / "board" / "tlsbench.db") as st:
            agents = st.agent_rows()
            assert [(a.pid, a.target, a.counter_unit) for a in agents] == [(None, "qemu-mps2-an386", UNIT)]
            assert {c.target for c in st.config_rows()} == {"qemu-mps2-an386"}
    finally:
        qemu.kill()
        qemu.wait()


def test_the_hang_wait_follows_the_largest_repetition_of_a_configuration():
    """No QEMU: the derivation alone (run/endpoints/firmware.py hang_seconds)."""
    from tlsbench.plan.configs import Configuration
    from tlsbench.schema import ConfigRow
    from tlsbench.run.endpoints.firmware import hang_seconds

    def config(group: str, total: int = 0) -> Configuration:
        row = ConfigRow("k", "mbedtls", 0x6B, "TLS-DHE-RSA", "DHE", "RSA", "AES", "SHA256", "TLS1.2", "TLS1.2", group,
                        "rsa2048", "memory", "both", total, 1024, 1)
        return Configuration(row, 0x6B, 0, 0, 0, 0)

    qemu = {"device": {"counter": {"board_clock_hz": 25_000_000}}}
    default = Timeouts()
    assert hang_seconds(config("default"), 1, qemu, default, emulated=True) == default.silence  # 34 s < 120 s
    big = hang_seconds(config("ffdhe4096"), 1, qemu, default, emulated=True)
    assert big > default.silence and big == pytest.approx(2 * 7e9 / 1e8 + 10)
    assert hang_seconds(config("ffdhe4096"), 3, qemu, default, emulated=True) == pytest.approx(2 * big - 10)
    assert hang_seconds(config("ffdhe4096"), 1, qemu, Timeouts(silence=5), emulated=True) == 5  # the user's word
    board = {"device": {"counter": {"board_clock_hz": 16_000_000}}}  # a slow board counting cycles
    assert hang_seconds(config("ffdhe2048"), 1, board, default, emulated=False) == pytest.approx(2 * 1.2e9 / 8e6 + 10)


def test_plan_show_resolves_a_device_plan_against_its_firmware(tmp_path, images, agent_path):
    """`plan show` boots the firmware for its SUITES and shows the configurations it means
    (a device plan once raised a TypeError there)."""
    path = tmp_path / "d.toml"
    path.write_text(f'name = "d"\nsuites = ["{PSK}"]\n[device]\ntarget = "qemu-mps2-an386"\n')
    shown = subprocess.run([sys.executable, "-m", "tlsbench.cli", "plan", "show", str(path)], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, TLSBENCH_AGENT_DIR=str(agent_path.parent)))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# d.toml: 1 configuration (1 suite)") and PSK in shown.stdout, shown.stdout[:400]
