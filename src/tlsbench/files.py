# SPDX-License-Identifier: Apache-2.0
"""Writing output files (reports, exports, figures) so that a failure never leaves a
truncated one: the bytes go to a temporary file in the same folder, which is renamed over
the target only once complete (a rename within one file system is atomic)."""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

# errno -> what the user can do about it ({where}: the option that chooses another place)
_ADVICE = {errno.ENOSPC: "the disk is full: free space or write elsewhere ({where})",
           errno.EDQUOT: "the disk quota is used up: free space or write elsewhere ({where})",
           errno.EROFS: "the folder is read-only: write elsewhere ({where})",
           errno.EACCES: "the folder is not writable by this user: write elsewhere ({where})",
           errno.EPERM: "the folder is not writable by this user: write elsewhere ({where})",
           errno.ENOENT: "the folder does not exist: create it or write elsewhere ({where})",
           errno.ENOTDIR: "a file stands where a folder is expected: write elsewhere ({where})"}


class OutputError(RuntimeError):
    """An output file could not be written; no partial file was left behind."""


def _failed(path: Path, exc: OSError, where: str) -> OutputError:
    advice = _ADVICE.get(exc.errno or 0, "write elsewhere ({where})").format(where=where)
    return OutputError(f"cannot write {path}: {exc.strerror or exc}; {advice}. Nothing was written "
                       "(no partial file is left)")


# The errors that are about the disk, whichever file they hit (a cache, a temporary file).
DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def disk_advice(exc: BaseException) -> str | None:
    """For an OSError that is about the disk (full, read-only): what happened and what to do,
    in one line; None for anything else."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRNOS:
        return None
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{exc.strerror}{where}: " + _ADVICE[exc.errno].format(where="another folder or a disk with room")


def make_folder(folder: Path, where: str = "--out") -> Path:
    """Creates an output folder (and its parents); OutputError with advice when it cannot."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _failed(folder, exc, where) from None
    return folder


def write_atomic(target: str | Path, data: str | bytes, where: str = "--out") -> Path:
    """Writes `data` (text as UTF-8) to `target` through a temporary sibling and a rename;
    raises OutputError naming the file, the cause and what to do (`where`: the option that
    picks another place)."""
    target = Path(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)  # the rename must not publish a file whose bytes are still only in memory
        finally:
            os.close(fd)
        os.replace(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise _failed(target, exc, where) from None
    return target
