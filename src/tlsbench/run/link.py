# SPDX-License-Identifier: Apache-2.0
"""The link emulator seen from the host: namespaces up/down, one forwarder per link
configuration, and its packet log attributed to repetitions (docs/link-emulator.md).

Attribution: every repetition of a two-agent run opens a fresh connection, so a fresh
client port. Packets are grouped into flows by (protocol, device port, peer port); a flow
belongs to the repetition whose time window (the client agent's start .. start + wall
time, on CLOCK_MONOTONIC like the log) holds its first packet. Warm-up repetitions ship no
REP: their flows match no window and are left out."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Sequence

import numpy as np

from tlsbench.core.errors import UserError
from tlsbench.core.processes import alive, dying_with_us, owned_folder, remove_dead_owners_folders
from tlsbench.plan.model import PlanError
from tlsbench.plan.network import Link
from tlsbench.run.agents import find_program
from tlsbench.run.endpoints import AgentError
from tlsbench.schema import LinkTraffic

LINK_BINARY = "tlsbench-link"
LINK_BUILD_DIR = Path(__file__).resolve().parents[3] / "build" / "link"  # `make link` in a source checkout
DEVICE_ADDRESS, PEER_ADDRESS = "10.77.0.1", "10.77.0.2"  # fixed by tlsbench-link up
EXIT_NOT_PRIVILEGED = 77
NOT_PRIVILEGED = ("an emulated link (plan [[network.links]]) needs root and /dev/net/tun: run as root, or drop "
                  "the links to measure over loopback; memory mode keeps working")
# 32-byte records of `tlsbench-link run --packet-log` (link/link.h).
PACKET = np.dtype([("arrival_ns", "<u8"), ("done_ns", "<u8"), ("bytes", "<u4"), ("fragments", "<u2"),
                   ("dir", "u1"), ("fate", "u1"), ("dev_port", "<u2"), ("peer_port", "<u2"), ("proto", "u1"),
                   ("pad", "V3")])
assert PACKET.itemsize == 32
D2P, P2D = 0, 1
DELIVERED = 0  # fate 0; anything else is a drop cause
QUIESCE_TIMEOUT_S = 30.0  # packets still in flight (a slow link's queue) after a batch
START_TIMEOUT_S = 10.0  # the forwarder attaches both TUN devices and opens its packet log


class LinkUnavailable(UserError, RuntimeError):
    """The emulator cannot run here (not root, no /dev/net/tun) or failed."""


def link_binary(agent_dir: str | Path | None = None) -> Path:
    """tlsbench-link, installed where the agents are (or built in build/link)."""
    try:
        return find_program(LINK_BINARY, agent_dir, LINK_BUILD_DIR)
    except AgentError as exc:
        raise LinkUnavailable(str(exc)) from None


COMMAND_TIMEOUT_S = 60.0  # `tlsbench-link up/down/check`: a few `ip` commands


def _run(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              preexec_fn=dying_with_us())
    except subprocess.TimeoutExpired:
        raise LinkUnavailable(f"`{' '.join(cmd)}` did not finish within {COMMAND_TIMEOUT_S:g} s") from None


def check_links(links: Sequence[Link], agent_dir: str | Path | None, source: str) -> None:
    """Asks the emulator whether it accepts each link of a plan (its own presets and parameter
    ranges: `tlsbench-link check`), before anything is started; raises PlanError naming the link
    and passing on the emulator's reason."""
    binary = link_binary(agent_dir)
    problems = []
    for i, link in enumerate(links):
        done = _run([str(binary), "check", *link.run_args()])
        if done.returncode == EXIT_NOT_PRIVILEGED:
            raise LinkUnavailable(NOT_PRIVILEGED)
        if done.returncode != 0:
            why = done.stderr.strip().removeprefix(f"{LINK_BINARY}: ") or f"exit code {done.returncode}"
            problems.append(f"network.links[{i}] ({link.label()}): {why}")
    if problems:
        raise PlanError(source, problems)


NETNS_DIR = Path("/run/netns")  # where iproute2 keeps named namespaces (link/netns.c)
# A run's namespaces and temporary folders name the PID of the run that owns them (pair.link_name,
# core/processes.owned_folder): once that process is dead, they are a killed run's leftovers.
_NAMESPACE = re.compile(r"tbl-(?P<name>tb[0-9a-f]+-(?P<pid>\d+))-(dev|peer)")
_EARLIER_NAMESPACE = re.compile(r"tbl-tb[0-9a-f]{10}-(dev|peer)")


def owned_name(base: str) -> str:
    """`base` (letters and digits) tagged with this process as the owner of its namespaces."""
    return f"{base}-{os.getpid()}"


def remove_orphans(agent_dir: str | Path | None = None) -> list[str]:
    """Removes what killed runs left behind, whatever plan they ran: their namespaces
    (`tlsbench-link down`, as root) and their temporary folders (forwarder files, pace
    tables). Returns what it did, one line each; what a live run owns is left alone."""
    done = []
    orphans: dict[str, list[str]] = {}
    for entry in _listing(NETNS_DIR):
        m = _NAMESPACE.fullmatch(entry)
        if m and not alive(int(m["pid"])):
            orphans.setdefault(m["name"], []).append(entry)
        elif _EARLIER_NAMESPACE.fullmatch(entry):
            done.append(f"left namespace {entry} alone: an earlier tlsbench's, which names no owner; "
                        f"`ip netns del {entry}` once no run uses it")
    for name, namespaces in sorted(orphans.items()):
        Namespaces(link_binary(agent_dir), name).down()
        done += [f"removed namespace {ns}" if not (NETNS_DIR / ns).exists() else
                 f"could not remove namespace {ns}: run `tlsbench clean` as root" for ns in sorted(namespaces)]
    done += remove_dead_owners_folders()
    return done


def _listing(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # no such folder: nothing of ours there
        return []


@dataclass
class Namespaces:
    """The device and peer namespaces of one link name (`tlsbench-link up/down`)."""

    binary: Path
    name: str

    def up(self, tun_mtu: int, sysctls: Sequence[str]) -> None:
        cmd = [str(self.binary), "up", "--name", self.name, "--mtu", str(tun_mtu)]
        for kv in sysctls:
            cmd += ["--sysctl", kv]
        done = _run(cmd)
        if done.returncode == EXIT_NOT_PRIVILEGED:
            raise LinkUnavailable(NOT_PRIVILEGED)
        if done.returncode != 0:
            raise LinkUnavailable(f"`{' '.join(cmd)}` failed: {done.stderr.strip()}")

    def down(self) -> None:
        _run([str(self.binary), "down", "--name", self.name])

    def exec_prefix(self, side: str) -> list[str]:
        """`ip netns exec` into "dev" or "peer"."""
        return ["ip", "netns", "exec", f"tbl-{self.name}-{side}"]


@dataclass
class Forwarder:
    """One `tlsbench-link run` with one link's parameters; its packet log read batch by batch."""

    binary: Path
    name: str
    link: Link
    seed: int
    workdir: Path = field(default_factory=lambda: owned_folder("link"))
    proc: subprocess.Popen[bytes] | None = None
    stderr: BinaryIO | None = None  # the forwarder's stderr, kept for error messages
    offset: int = 0  # bytes of the packet log already read
    _stderr_text: str = ""  # the forwarder's stderr once stop() removed its file

    @property
    def stats_path(self) -> Path:
        return self.workdir / "stats.json"

    @property
    def log_path(self) -> Path:
        return self.workdir / "packets.bin"

    def start(self) -> None:
        cmd = [str(self.binary), "run", "--name", self.name, *self.link.run_args(), "--seed", str(self.seed),
               "--stats", str(self.stats_path), "--packet-log", str(self.log_path)]
        self.stderr = open(self.workdir / "stderr.txt", "wb")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.stderr, process_group=0,
                                     preexec_fn=dying_with_us())
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.log_path.exists():  # the log is opened once both TUN devices are attached
            if self.proc.poll() is not None or time.monotonic() > deadline:
                late = self.proc.poll() is None
                self.stop()  # the forwarder's stderr is read first: stop() removes the file
                why = (f"no packet log after {START_TIMEOUT_S:g} s" if late else
                       f"exit code {self.proc.returncode}") + (f": {self._stderr_text}" if self._stderr_text else "")
                raise LinkUnavailable(f"`{' '.join(cmd)}` did not start ({why})")
            time.sleep(0.01)

    def _stderr(self) -> str:
        try:
            return (self.workdir / "stderr.txt").read_text(errors="replace").strip()[-2000:]
        except OSError:
            return self._stderr_text  # kept by stop(), which removes the file

    def _stats(self) -> dict:
        """Counters now: SIGUSR1, then wait for the stats file to be replaced (atomic rename),
        which also means the packet log is flushed up to this moment."""
        assert self.proc is not None
        before = self.stats_path.stat().st_mtime_ns if self.stats_path.exists() else 0
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.stats_path.exists() and self.stats_path.stat().st_mtime_ns != before:
                return json.loads(self.stats_path.read_text())
            if self.proc.poll() is not None:
                raise LinkUnavailable(f"the link emulator exited: {self._stderr()}")
            time.sleep(0.002)
        raise LinkUnavailable("the link emulator did not answer SIGUSR1 within 5 s")

    def _in_flight(self) -> int:
        stats = self._stats()
        return sum(stats[d]["in_flight"] for d in ("d2p", "p2d"))

    def drain(self) -> np.ndarray:
        """Every packet logged since the last call, once none is in flight any more."""
        deadline = time.monotonic() + QUIESCE_TIMEOUT_S
        while self._in_flight() and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(self.log_path, "rb") as log:
            log.seek(self.offset)
            data = log.read()
        whole = len(data) // PACKET.itemsize * PACKET.itemsize
        self.offset += whole
        return np.frombuffer(data[:whole], dtype=PACKET)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.stderr:
            self.stderr.close()
            self._stderr_text = self._stderr()
        for f in (self.stats_path, self.log_path, self.workdir / "stderr.txt"):
            f.unlink(missing_ok=True)
        try:
            os.rmdir(self.workdir)
        except OSError:
            pass


@dataclass(frozen=True)
class Window:
    """One shipped repetition's time span on the client agent's clock."""

    index: int
    start_ns: int
    end_ns: int


def attribute(packets: np.ndarray, windows: Sequence[Window]) -> dict[int, LinkTraffic]:
    """Repetition index -> the link traffic of its connection (see the module docstring)."""
    if not len(packets) or not windows:
        return {}
    ordered = sorted(windows, key=lambda w: w.start_ns)
    starts = [w.start_ns for w in ordered]

    def owner(t: int) -> int | None:
        i = bisect_right(starts, t) - 1
        return ordered[i].index if i >= 0 and t <= ordered[i].end_ns else None

    packets = np.sort(packets, order="arrival_ns")
    flow_owner: dict[tuple[int, int, int], int | None] = {}
    rows: dict[int, list[int]] = {}
    for p in packets:
        key = (int(p["proto"]), int(p["dev_port"]), int(p["peer_port"]))
        t = int(p["arrival_ns"])
        idx = owner(t) if key[0] == 0 else flow_owner.setdefault(key, owner(t))
        if idx is None:
            continue
        row = rows.setdefault(idx, [0, 0, 0, 0, 0, 0, 0, 0, t, t])
        base = 0 if p["dir"] == D2P else 4
        row[base] += 1
        row[base + 1] += int(p["bytes"])
        row[base + 2] += int(p["fragments"])
        row[base + 3] += int(p["fate"] != DELIVERED)
        row[9] = max(row[9], int(p["done_ns"]) or t)
    return {idx: LinkTraffic(*row) for idx, row in rows.items()}
