# SPDX-License-Identifier: Apache-2.0
"""Where the controller and its agents run (docs/host.md "A quiet controller").

With two or more CPUs the controller (and every thread and helper process it starts: the
frame readers, the link forwarder) keeps to the first CPU it may use and the agents to the
others, so its decoding and SQLite work never competes with a measured repetition for a
CPU. The agents also ask for the highest ordinary priority, nice AGENT_NICE, which only a
privileged user (root, CAP_SYS_NICE, or an RLIMIT_NICE that allows it) gets; elsewhere they
keep the default and the agent row says why. Each agent runs in a session of its own
(run/agents.py), hence in a scheduling group of its own where the kernel groups tasks by
session (autogroup, on in Debian's kernels): there a task's nice only orders the tasks of
its own group, and every other user's session gets an equal share whatever its tasks'
nice, so the agent's group gets the same nice (/proc/PID/autogroup).

Why nice −20: a pinned agent cannot move away from another process that wants its CPU. At
nice −10 such a process still gets about a tenth of the CPU, in slices of a millisecond or
more, and hit 10% of 5 ms mbed TLS handshakes here (2.7% for the unpinned agent alone); at
−20 it gets about 1% (1.3% of the handshakes hit). Not SCHED_FIFO: an agent never sleeps
within a batch, so a real-time agent would hold its CPU for whole batches, and the kernel's
real-time throttling (sched_rt_runtime_us: 950 ms of every second) would then stop it for
50 ms each second: descheduling of its own making; where throttling is off it would starve
the kernel's per-CPU threads. A nice value needs no more privilege than any other priority
change, and the CPU the controller keeps stays for everyone else.

Each agent row records what the agent got (`placement_json`), read back from the kernel."""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Iterator, Sequence

from tlsbench.core.errors import UserError

AGENT_NICE = -20
AUTOGROUP = "/proc/{pid}/autogroup"  # "/autogroup-42 nice -20"; absent without autogroup scheduling
NICE_REFUSED = "raising an agent's priority needs root, CAP_SYS_NICE or an RLIMIT_NICE that allows it"


@dataclass(frozen=True)
class Placement:
    """CPUs of the controller and of the agents (empty: not pinned) and the agents' nice."""

    controller_cpus: tuple[int, ...] = ()
    agent_cpus: tuple[int, ...] = ()
    agent_nice: int | None = None  # asked for; None: left as inherited
    from_plan: bool = False  # the agents' CPUs are the plan's `cpus`

    @property
    def pinned(self) -> bool:
        """The agents have CPUs of their own: the controller may work while a batch runs."""
        return bool(self.controller_cpus and self.agent_cpus)

    def in_child(self) -> None:
        """Applied in an agent's process before it executes (subprocess preexec_fn, after the
        new session): a refusal is not an error here, the parent reads back what it got."""
        if self.agent_cpus:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, self.agent_cpus)
        if self.agent_nice is not None:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, 0, self.agent_nice)
            with contextlib.suppress(OSError), open(AUTOGROUP.format(pid="self"), "w") as group:
                group.write(str(self.agent_nice))

    def record(self, pid: int) -> str:
        """What an agent process got, as stored in its `agent` row (JSON)."""
        try:
            cpus = sorted(os.sched_getaffinity(pid))
            nice = os.getpriority(os.PRIO_PROCESS, pid)
        except OSError as exc:  # it is already gone: its death is reported elsewhere
            return json.dumps({"unknown": exc.strerror or str(exc)})
        facts: dict[str, object] = {"cpus": cpus, "controller_cpus": list(self.controller_cpus), "nice": nice,
                                    "policy": "SCHED_OTHER"}
        group = autogroup_nice(pid)
        if group is not None:
            facts["autogroup_nice"] = group
            nice = max(nice, group)  # both must have been raised
        if self.agent_nice is not None and nice != self.agent_nice:
            facts["nice_asked"] = self.agent_nice
            facts["nice_refused"] = NICE_REFUSED
        if self.from_plan:
            facts["cpus_from_plan"] = list(self.agent_cpus)
        if not self.pinned:
            facts["not_pinned"] = ("the plan's cpus leave no CPU to the controller" if self.from_plan else
                                   "fewer than two CPUs to run on" if len(os.sched_getaffinity(0)) < 2 else "--no-pin")
        return json.dumps(facts)


def autogroup_nice(pid: int) -> int | None:
    """The nice of a process's scheduling group (None: no autogroup scheduling here)."""
    try:
        text = open(AUTOGROUP.format(pid=pid)).read().split()
        return int(text[text.index("nice") + 1])
    except (OSError, ValueError, IndexError):
        return None


class PlacementError(UserError, ValueError):
    """A plan's `cpus` this machine cannot give."""


def choose(pin: bool = True, cpus: Sequence[int] | None = None) -> Placement:
    """The controller on the first CPU this process may use, the agents on the others;
    nothing pinned with fewer than two CPUs or without `pin`. A plan's `cpus` override that
    (whatever `pin`): the agents on exactly those, the controller on the first other CPU
    (none left: it is not pinned, and batches are not sent ahead)."""
    allowed = sorted(os.sched_getaffinity(0))
    if cpus:
        return plan_placement(cpus, allowed)
    if not pin or len(allowed) < 2:
        return Placement()
    return Placement((allowed[0],), tuple(allowed[1:]), AGENT_NICE)


@contextlib.contextmanager
def controller_on(placement: Placement) -> Iterator[None]:
    """The calling thread (and the threads and processes it starts) on the controller's
    CPUs for the block; its former CPUs afterwards."""
    if not placement.controller_cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, placement.controller_cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def plan_placement(cpus: Sequence[int], allowed: Sequence[int]) -> Placement:
    outside = sorted(set(cpus) - set(allowed))
    if outside:
        raise PlacementError(f"cpus = {sorted(cpus)}: this machine offers CPUs {', '.join(map(str, allowed))} "
                             f"to tlsbench ({', '.join(map(str, outside))} not among them); use a subset")
    spare = [c for c in allowed if c not in cpus]
    return Placement(tuple(spare[:1]), tuple(sorted(cpus)), AGENT_NICE, from_plan=True)
