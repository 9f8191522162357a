# SPDX-License-Identifier: Apache-2.0
"""kill -9 of every command in the middle of its work leaves nothing behind: the real command
runs as a subprocess in a session of its own and is killed at a moment of its work (agents
started, repetitions stored, forked workers busy, a streamed file half written, a store's
writer lock held or its write under way). Then: no process it had started is left (forked
workers, agents, the link forwarder), nothing reaches the terminal after the kill, the store
passes SQLite's integrity check, and the same command completes; what a kill leaves (a hidden
partial file, a link run's namespaces) goes at the next start, or with `tlsbench clean`.
About 45 s (the emulated link's part needs root and /dev/net/tun)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow.parquet as pq
import pytest

from tlsbench.core.processes import alive
from tlsbench.run.link import Namespaces, link_binary, owned_name
from stores import reader
from tlsbench.store.api import StoreError
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import DB_FILE, testing

TRACEBACK = "Traceback (most recent call last)"
SUITES = '["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", ' \
         '"TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]'
PLAN = f'name = "kills"\nrepetitions = 200\nrounds = 2\nwarmup = 0\nsuites = {SUITES}\n'
PLANNED = 3 * 200
LINK_PLAN = '''name = "{name}"
repetitions = {reps}
rounds = 4
warmup = 0
suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8"]
[network]
transports = ["udp"]
[[network.links]]
preset = "none"
'''
LINK_REPS = 160  # four batches (rounds) of 40, ~0.5 s each over DTLS: two kills mid-sweep
PARTIAL = re.compile(r"\..+\.\d+\.[0-9a-f]{8}\.partial")
SETTLE_S = 1.0  # after the kill: what a process left behind would print, it prints now
PRIVILEGED = os.geteuid() == 0 and os.path.exists("/dev/net/tun")


# ---------------------------------------------------------------------- processes
def processes() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (parent pid, session id, command line) of every process now."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            table[int(entry)] = (int(stat[1]), int(stat[3]), Path(f"/proc/{entry}/cmdline").read_bytes())
    return table


def descendants(pid: int, table: dict[int, tuple[int, int, bytes]]) -> set[int]:
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (parent, _, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def forked_workers(pid: int) -> bool:
    """Whether the command has forked workers (children with its own command line) at work."""
    table = processes()
    return pid in table and any(cmd == table[pid][2] for p, (parent, _, cmd) in table.items() if parent == pid)


def started_agents(pid: int) -> bool:
    table = processes()
    return any(b"tlsbench-agent-" in table[p][2] for p in descendants(pid, table) if p in table)


def writer(folder: Path) -> str | None:
    """The PID holding the store's writer lock."""
    return locate(folder).lock.holder()


def repetitions(db: Path) -> int:
    try:
        with reader(db) as store:
            return len(store.repetition_columns())
    except StoreError:
        return 0


def intact(db: Path) -> None:
    with reader(db) as store:
        assert store.integrity_check() == "ok"
        cols = store.repetition_columns()
    assert len(cols) == len(set(zip(cols.config_id.tolist(), cols.idx.tolist()))), "a repetition stored twice"
    assert writer(db.parent) is None, "the writer lock outlived its writer"


# ---------------------------------------------------------------------- running and killing
ENV = dict(os.environ, COLUMNS="200")
ENV.pop("TLSBENCH_TIMEOUT", None)


def command(*args: object) -> list[str]:
    return [sys.executable, "-m", "tlsbench.cli", *map(str, args)]


# A run that stored every repetition but whose timings a busy machine descheduled all: it ran to
# its end (exit 1 says the statistics have nothing to use); these tests check what is stored.
ALL_DESCHEDULED = re.compile(r"error: the run produced no data: all \d+ stored repetitions were excluded "
                             r"\(descheduled \d+\)")


def completes(*args: object, timeout: float = 180) -> str:
    """The command run to its end: exit status 0 (or a run all descheduled), no traceback; its output."""
    done = subprocess.run(command(*args), env=ENV, capture_output=True, text=True, timeout=timeout)
    ended = done.returncode == 0 or (done.returncode == 1 and ALL_DESCHEDULED.search(done.stderr))
    assert ended and TRACEBACK not in done.stderr, done.stdout + done.stderr
    return done.stdout + done.stderr


@dataclass
class Killed:
    pid: int
    family: set[int]  # the command and every process it had started when it was killed


def kill_when(tmp: Path, ready: Callable[[int], bool], *args: object, timeout: float = 120,
              attempts: int = 3) -> Killed:
    """Starts the command in a session of its own, kills it (SIGKILL) once `ready(pid)`; checks
    that nothing it started outlives it and nothing reaches its terminal after the kill. A
    moment that passed unseen (workers that lived a tenth of a second on a quiet machine):
    the command, which then ended, is started again."""
    streams = (tmp / "stdout", tmp / "stderr")
    for _ in range(attempts):
        with open(streams[0], "wb") as out, open(streams[1], "wb") as err:
            proc = subprocess.Popen(command(*args), env=ENV, stdout=out, stderr=err, start_new_session=True)
        family = _family_at_the_moment(proc, ready, timeout)
        with contextlib.suppress(ProcessLookupError):  # ended (and reaped) before its moment came
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if family:
            break
        assert proc.returncode == 0, f"{args} failed: {streams[1].read_text()}"
    else:
        pytest.fail(f"{args} ended {attempts} times before the moment to kill it")
    printed = [path.stat().st_size for path in streams]  # the killed command's own output ends here
    deadline = time.monotonic() + 10
    while any(alive(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(SETTLE_S)
    left = {p for p, (_, session, _) in processes().items() if session == proc.pid and alive(p)}
    left |= {p for p in family if alive(p)}
    for p in left:  # not into the next test
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    assert not left, f"{args}: processes outlived the kill: {left}"
    later = [path.read_bytes()[size:] for path, size in zip(streams, printed)]
    assert later == [b"", b""], f"{args}: printed after the kill: {later}"
    return Killed(proc.pid, family)


def _family_at_the_moment(proc: subprocess.Popen, ready: Callable[[int], bool], timeout: float) -> set[int]:
    """The command and what it started once `ready`; empty when it ended first."""
    deadline = time.monotonic() + timeout
    while not ready(proc.pid):
        if proc.poll() is not None:
            return set()
        assert time.monotonic() < deadline, "the moment to kill it never came"
        time.sleep(0.002)
    return {proc.pid} | descendants(proc.pid, processes())


# ---------------------------------------------------------------------- an experiment
@pytest.fixture(scope="module")
def experiment(tmp_path_factory, agent_path) -> Path:
    """A real run (600 repetitions): enough work for derive, report and export to fork workers."""
    base = tmp_path_factory.mktemp("kills")
    (base / "plan.toml").write_text(PLAN)
    completes("run", base / "plan.toml", "--output", base / "out", "--no-report")
    return base / "out" / "kills"


def copy_of(experiment: Path, where: Path) -> Path:
    folder = where / "kills"
    folder.mkdir()
    shutil.copy(experiment / DB_FILE, folder / DB_FILE)
    return folder


def test_run_killed_as_it_starts_and_mid_sweep_completes_each_repetition_once(tmp_path, agent_path):
    (tmp_path / "plan.toml").write_text(PLAN)
    db = tmp_path / "out" / "kills" / DB_FILE
    run = ("run", tmp_path / "plan.toml", "--output", tmp_path / "out", "--no-report")
    early = kill_when(tmp_path, started_agents, *run)
    assert len(early.family) > 1 and repetitions(db) < PLANNED  # killed with its agents running
    kill_when(tmp_path, lambda pid: repetitions(db) > 0, *run)
    assert 0 < repetitions(db) < PLANNED
    intact(db)
    completes(*run)
    assert repetitions(db) == PLANNED
    intact(db)


CYCLES_PLAN = """name = "kills-cycles"
repetitions = 6
rounds = 3
warmup = 0
suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]
[device]
target = "qemu-mps2-an386"
board = "nrf52840"
"""


def counted(db: Path) -> tuple[set[int], dict]:
    """The stored repetition ids and their cycle-model counts (plan [device] cycles)."""
    with reader(db) as store:
        return set(store.repetition_columns().id.tolist()), store.trace_counts()


def test_a_device_run_with_the_cycle_model_killed_mid_sweep_resumes_each_repetition_with_its_counts(tmp_path):
    """kill -9 between two batches of a device run under the cycle model's plugin: what was
    stored has its counts (same transaction), the resumed run adds the rest with theirs, and no
    plugin file is left behind. Three batches of two PSK handshakes: about 20 s."""
    (tmp_path / "plan.toml").write_text(CYCLES_PLAN)
    db = tmp_path / "out" / "kills-cycles" / DB_FILE
    run = ("run", tmp_path / "plan.toml", "--output", tmp_path / "out", "--no-report")
    before = set(Path(tempfile.gettempdir()).glob("tb-steps-*"))
    kill_when(tmp_path, lambda pid: repetitions(db) > 0, *run, timeout=300)
    assert 0 < repetitions(db) < 6
    intact(db)
    ids, counts = counted(db)
    assert set(counts) == ids and all(c.counts is not None for c in counts.values())
    completes(*run, timeout=300)
    intact(db)
    ids, counts = counted(db)
    assert len(ids) == 6 and set(counts) == ids
    assert all(c.counts is not None or c.reason for c in counts.values())
    assert set(Path(tempfile.gettempdir()).glob("tb-steps-*")) == before  # the killed boot's file went with it


@pytest.mark.parametrize("argv", [["derive", "{folder}", "--rebuild"], ["report", "{folder}"],
                                  ["export", "{folder}", "--out", "{folder}/statistics.csv"]])
def test_killed_while_its_workers_work(tmp_path, experiment, argv):
    """derive, report and export fork workers (analysis/derive/parallel.py): killed while they work,
    none outlives the command or prints a BrokenPipeError into its terminal."""
    folder = copy_of(experiment, tmp_path)
    args = [a.format(folder=folder) for a in argv]
    killed = kill_when(tmp_path, forked_workers, *args)
    assert len(killed.family) > 1
    intact(folder / DB_FILE)
    completes(*args)
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_a_killed_streamed_export_leaves_a_partial_file_to_its_next_start_and_clean(tmp_path, experiment):
    folder = copy_of(experiment, tmp_path)
    out = tmp_path / "slices.parquet"
    export = ("export", folder, "--level", "slice", "--format", "parquet", "--out", out)
    half_written = lambda pid: any(PARTIAL.fullmatch(name) for name in os.listdir(tmp_path))  # noqa: E731
    for then in ("the same export", "tlsbench clean"):
        kill_when(tmp_path, half_written, *export)
        (partial,) = [name for name in os.listdir(tmp_path) if PARTIAL.fullmatch(name)]
        assert not out.exists() or then == "tlsbench clean"  # never a half file under the name
        said = completes(*export) if then == "the same export" else completes("clean", tmp_path)
        assert not (tmp_path / partial).exists(), f"{partial} outlived {then}"
        if then == "tlsbench clean":
            assert f"removed {tmp_path / partial}" in said
    assert pq.read_table(out).num_rows > PLANNED
    intact(folder / DB_FILE)


@pytest.fixture(scope="module")
def capture(experiment, tmp_path_factory) -> Path:
    """A current capture that aligns with the experiment (tests/energy_support.py's model)."""
    from energy_support import Model, synthesize, write_generic

    from stores import load_path

    synthetic = synthesize(load_path(experiment / DB_FILE, experiments=None), Model(sample_rate_hz=2e5))
    return write_generic(synthetic, tmp_path_factory.mktemp("capture") / "capture.csv")


def test_energy_import_killed_holding_the_lock_and_writing(tmp_path, experiment, capture):
    folder = copy_of(experiment, tmp_path)
    db, wal = folder / DB_FILE, folder / f"{DB_FILE}-wal"
    importing = ("energy", "import", capture, "--experiment", folder)
    kill_when(tmp_path, lambda pid: writer(folder) == str(pid), *importing)
    intact(db)
    size = wal.stat().st_size if wal.exists() else 0
    kill_when(tmp_path, lambda pid: wal.exists() and wal.stat().st_size > size, *importing)
    intact(db)
    said = completes(*importing)  # the second kill may have come after the commit: then nothing is left to do
    assert "imported capture.csv" in said or "already imported" in said, said
    intact(db)
    assert len(testing.rows(db, "energy_capture")) == 1


def test_primitives_killed_mid_sweep_resume(tmp_path, agent_path):
    primitives = ("primitives", "--library", "mbedtls", "--experiment", "sha256", "--size", "64", "--reps", "400",
                  "--output", tmp_path / "out", "--no-pin")
    stored = lambda pid: any(repetitions(db) > 0 for db in (tmp_path / "out").glob(f"*/{DB_FILE}"))  # noqa: E731
    kill_when(tmp_path, stored, *primitives)
    (db,) = (tmp_path / "out").glob(f"*/{DB_FILE}")
    before = repetitions(db)
    intact(db)
    completes(*primitives)
    assert repetitions(db) > before
    intact(db)


# ---------------------------------------------------------------------- link runs: namespaces
def namespaces_of(pid: int) -> list[str]:
    return sorted(name for name in os.listdir("/run/netns") if name.endswith((f"-{pid}-dev", f"-{pid}-peer"))) \
        if os.path.isdir("/run/netns") else []


def forwarder_files_of(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"tlsbench-link-{pid}-*"))


@pytest.mark.skipif(not PRIVILEGED, reason="emulated links need root and /dev/net/tun")
def test_a_killed_link_runs_namespaces_go_at_any_next_link_run_and_with_clean(tmp_path, agent_path):
    """A killed link run's namespaces (up for the whole run) are removed by the next run of
    another plan, or by `tlsbench clean`; so are a forwarder's files, left when the kill comes
    while a batch's forwarder runs (a forwarder is started per batch: the kill may fall
    between two, so a dead run's folder of forwarder files is also made by hand); a live
    run's are left alone."""
    for name, reps in (("killed-link", LINK_REPS), ("other-link", 4)):
        (tmp_path / f"{name}.toml").write_text(LINK_PLAN.format(name=name, reps=reps))
    db = tmp_path / "out" / "killed-link" / DB_FILE
    run = ("run", tmp_path / "killed-link.toml", "--output", tmp_path / "out", "--no-report", "--no-pin")
    first = kill_when(tmp_path, lambda pid: repetitions(db) > 0, *run)
    assert repetitions(db) < LINK_REPS and len(namespaces_of(first.pid)) == 2  # what a kill -9 leaves
    made = Path(tempfile.mkdtemp(prefix=f"tlsbench-link-{first.pid}-"))
    (made / "packets.bin").write_bytes(bytes(64))
    completes("run", tmp_path / "other-link.toml", "--output", tmp_path / "out", "--no-report", "--no-pin")
    assert namespaces_of(first.pid) == [] and forwarder_files_of(first.pid) == []  # another plan's start removed them
    before = repetitions(db)
    second = kill_when(tmp_path, lambda pid: repetitions(db) > before, *run)
    leftovers = namespaces_of(second.pid)
    assert repetitions(db) < LINK_REPS and len(leftovers) == 2
    made = Path(tempfile.mkdtemp(prefix=f"tlsbench-link-{second.pid}-"))
    live = Namespaces(link_binary(), owned_name("tb0123456789"))  # this process's: alive
    live.up(1500, [])
    live_files = Path(tempfile.mkdtemp(prefix=f"tlsbench-link-{os.getpid()}-"))
    try:
        said = completes("clean", tmp_path)
        assert len(namespaces_of(os.getpid())) == 2 and live_files.exists()  # a live owner's are left alone
    finally:
        live.down()
        shutil.rmtree(live_files)
    assert all(f"removed namespace {ns}" in said for ns in leftovers), said
    assert f"removed link forwarder files {made}" in said, said
    assert namespaces_of(second.pid) == [] and forwarder_files_of(second.pid) == []
    completes(*run)
    assert repetitions(db) == LINK_REPS
    intact(db)


# A parent that starts a child and is killed between the fork and the child's call to
# dying_with_us()'s function: the child's preexec_fn sleeps first, so the kill falls there.
KILLED_WHILE_FORKING = """
import subprocess, sys, time
from tlsbench.core.processes import dying_with_us
die = dying_with_us()
subprocess.Popen([sys.executable, "-c", "import time; print('child runs', flush=True); time.sleep(30)"],
                 preexec_fn=lambda: (time.sleep(1.0), die()))
"""


def test_a_child_forked_as_its_parent_is_killed_does_not_live_on(tmp_path):
    """The race a kill -9 of a run can hit while it starts an agent or a forwarder: the child,
    adopted before it asked to die with its parent, must not run its command."""
    out = tmp_path / "out"
    with open(out, "wb") as sink:
        parent = subprocess.Popen([sys.executable, "-c", KILLED_WHILE_FORKING], env=ENV, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        time.sleep(0.5)  # forked, the child's preexec_fn sleeping
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    time.sleep(2.0)  # past the child's sleep: had it lived on, it would run now
    left = {p for p, (_, session, _) in processes().items() if session == parent.pid and alive(p)}
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left and b"child runs" not in out.read_bytes(), out.read_text()
