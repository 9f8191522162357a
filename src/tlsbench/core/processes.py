# SPDX-License-Identifier: Apache-2.0
"""Processes that never outlive the one that started them, and whether a process still lives:
what tells a kill's leftovers (a dead owner's temporary files, namespaces) from a live run's."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Callable

# The kernel sends a child SIGKILL when the thread that started it exits (kill -9 included).
PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls into it


def die_with(parent: int) -> None:
    """In a child forked by `parent`: dies with it. The check after the call closes the race
    in which the parent died between the fork and the call (the child was then adopted)."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def dying_with_us() -> Callable[[], None]:
    """The preexec_fn of every child process the host starts (agents, QEMU, the link forwarder,
    a live report): the child dies with this process however it ends (kill -9 included), when
    the thread that started it exits. Our PID is taken here, in the parent: a child that read
    it with getppid() after a kill that fell between the fork and the call would read its new
    parent's and live on."""
    parent = os.getpid()
    return lambda: die_with(parent)


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


# Temporary folders a run keeps while it runs, by kind: `tlsbench-<kind>-<owner's PID>-*`, so a
# killed run's are told from a live one's and removed by the next run or `tlsbench clean`.
OWNED_FOLDERS = {"link": "link forwarder files", "pace": "pace tables"}
_OWNED = re.compile(rf"tlsbench-(?P<kind>{'|'.join(OWNED_FOLDERS)})-(?P<pid>\d+)-.+")


def owned_folder(kind: str) -> Path:
    """A new temporary folder of `kind` (OWNED_FOLDERS) that names this process as its owner."""
    return Path(tempfile.mkdtemp(prefix=f"tlsbench-{kind}-{os.getpid()}-"))


def remove_dead_owners_folders() -> list[str]:
    """Removes the owned temporary folders whose owner is dead; one line for each."""
    temp, done = Path(tempfile.gettempdir()), []
    try:
        entries = os.listdir(temp)
    except OSError:
        return []
    for entry in sorted(entries):
        m = _OWNED.fullmatch(entry)
        if m and not alive(int(m["pid"])):
            shutil.rmtree(temp / entry, ignore_errors=True)
            done.append(f"removed {OWNED_FOLDERS[m['kind']]} {temp / entry}")
    return done
