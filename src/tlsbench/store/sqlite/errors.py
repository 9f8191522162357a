# SPDX-License-Identifier: Apache-2.0
"""A failed open or write of a SQLite store as one line that says what to do."""
from __future__ import annotations

import contextlib
import errno
import shutil
import sqlite3
from pathlib import Path

from tlsbench.store.api import RUN_RETRY, StoreDamaged, StoreError

# Why a write failed -> what the user can do, by SQLite result code (prefix) and errno.
FULL, READ_ONLY, IO = "full", "read-only", "io"
_SQLITE_CAUSES = {"SQLITE_FULL": FULL, "SQLITE_READONLY": READ_ONLY, "SQLITE_CANTOPEN": READ_ONLY,
                  "SQLITE_PERM": READ_ONLY, "SQLITE_AUTH": READ_ONLY, "SQLITE_IOERR": IO}
_ERRNO_CAUSES = {errno.ENOSPC: FULL, errno.EDQUOT: FULL, errno.EROFS: READ_ONLY, errno.EACCES: READ_ONLY,
                 errno.EPERM: READ_ONLY}
_ADVICE = {FULL: "the disk is full: free disk space and run the same command again, or {retry}",
           READ_ONLY: "the folder is read-only or not writable by this user: make it writable, or {retry}",
           IO: "the disk reported an I/O error: check it (dmesg), or {retry}"}
DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


ALMOST_FULL_BYTES = 1 << 20  # an I/O error with less free space than this is a full disk


def error_name(exc: BaseException) -> str:
    """SQLite's result code name of an error ('' for others)."""
    return getattr(exc, "sqlite_errorname", "") or ""


def _cause(exc: BaseException, path: Path) -> str | None:
    """FULL, READ_ONLY, IO, or None when the error says nothing about the disk. SQLite
    reports a full disk as an I/O error when it hits its shared-memory file: the free space
    tells them apart."""
    if isinstance(exc, sqlite3.Error):
        cause = next((cause for prefix, cause in _SQLITE_CAUSES.items() if error_name(exc).startswith(prefix)), None)
    else:
        cause = _ERRNO_CAUSES.get(getattr(exc, "errno", None) or -1)
    if cause == IO:
        with contextlib.suppress(OSError):
            if shutil.disk_usage(path.parent).free < ALMOST_FULL_BYTES:
                return FULL
    return cause


def cannot_write(exc: Exception, path: Path, retry: str = RUN_RETRY) -> StoreError:
    """A failed open or write as one line: the damaged-file advice when SQLite finds the file
    damaged, else what the disk said and what to do about it."""
    if isinstance(exc, sqlite3.Error) and error_name(exc).startswith(DAMAGED):
        return damaged(path, str(exc))
    cause = _cause(exc, path)
    advice = _ADVICE[cause].format(retry=retry) if cause else retry
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return StoreError(f"cannot write the store {path}: {detail}. Everything already stored is safe; {advice}")


def damaged(path: Path, why: str) -> StoreDamaged:
    return StoreDamaged(f"{path} is damaged or not a tlsbench store ({why}); it was left untouched. "
                        f"Recover what it holds with `sqlite3 {path} .recover | sqlite3 recovered.db`, or restore "
                        "a backup; move the file away (or choose another --output) to start afresh")
