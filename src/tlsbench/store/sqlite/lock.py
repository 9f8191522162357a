# SPDX-License-Identifier: Apache-2.0
"""One writer per store: an exclusive OS lock (flock) on `tlsbench.lock` next to the store.

Every command that writes a store holds it for the whole of its writing (`run`, `primitives`,
`derive`, `energy import`; opening a store to write migrates it, so the lock comes first), and
it is released by the kernel however the process ends, kill -9 included, so a lock file left
behind never blocks anyone. The file holds the PID of the last writer, for the message a
second writer gets. Readers (status, report, export, trace show) take no lock: SQLite's WAL
lets them read a consistent snapshot while a run writes."""
from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tlsbench.store.api import ELSEWHERE, RUN_RETRY, StoreBusy
from tlsbench.store.sqlite.errors import cannot_write

LOCK_FILE = "tlsbench.lock"
_HELD: set[Path] = set()  # folders this process holds the lock of (its own reads are not another writer's)


def _pid(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 32).decode(errors="replace").strip() or "unknown"


def _busy(folder: Path, pid: str, instead: str = ELSEWHERE) -> StoreBusy:
    return StoreBusy(f"{folder} is being written by another tlsbench (PID {pid}): wait for it to end, "
                     f"or stop it (`kill -INT {pid}`: what it stored stays), {instead}")


def writer(folder: Path) -> str | None:
    """The PID of the process that holds the folder's writer lock, None when nobody does.
    Creates nothing; the shared lock it takes and drops at once never refuses another check."""
    if folder.resolve() in _HELD:
        return None
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY)
    except OSError:  # no lock file (or unreadable): nobody has written here yet
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return _pid(fd)
    finally:
        os.close(fd)


def refuse_if_busy(folder: Path) -> None:
    """Raises StoreBusy when a writer holds the folder's lock."""
    pid = writer(folder)
    if pid is not None:
        raise _busy(folder, pid)


@contextlib.contextmanager
def writer_lock(folder: Path, retry: str = RUN_RETRY, instead: str = ELSEWHERE) -> Iterator[None]:
    """Holds the folder's writer lock (creating the folder); StoreBusy at once when another
    process holds it, saying what to do `instead` of waiting."""
    path = folder / LOCK_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise cannot_write(exc, path, retry) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(folder, _pid(fd), instead) from None
        _write_pid(fd)
        _HELD.add(folder.resolve())
        try:
            yield
        finally:
            _HELD.discard(folder.resolve())
    finally:
        os.close(fd)  # releases the lock


def _write_pid(fd: int) -> None:
    """Best effort: a full disk must not stop a writer that may still have room in its WAL."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


@dataclass(frozen=True)
class FolderLock:
    """The writer lock of the store in `folder` (store/api.py WriterLock)."""

    folder: Path

    def holder(self) -> str | None:
        return writer(self.folder)

    def hold(self, retry: str = RUN_RETRY, instead: str = ELSEWHERE) -> contextlib.AbstractContextManager[None]:
        return writer_lock(self.folder, retry, instead)

    def refuse_if_busy(self) -> None:
        refuse_if_busy(self.folder)
