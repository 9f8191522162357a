# SPDX-License-Identifier: Apache-2.0
"""Output files (reports, exports, figures, predictions): what a user names is written by what
it is, and replaced only when it is a regular file (docs/report.md "Where outputs go"):

    a new name, a regular file   atomically: a hidden temporary sibling, fsync, then a rename
    a symbolic link              through the link: the file it points at is written (as above)
    a character device, a FIFO   written through: opened for writing, nothing created or renamed
    `-`, /dev/stdout, /dev/fd/N  standard output, this process's descriptor N (as the shell's `>`)
    a folder, a block device, a socket, a dangling link: refused

Every failure (a missing or read-only folder, a full disk, /dev/full, a FIFO whose reader
left) is an OutputError: one line that says what to do, and no temporary file left behind.
A temporary file's name holds its writer's PID: one left by a killed writer is removed when
the same output is written again, and by `tlsbench clean` (remove_stale)."""
from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import stat
import sys
import time
from pathlib import Path
from typing import BinaryIO, ContextManager, Iterator

from tlsbench.core.errors import UserError
from tlsbench.core.processes import alive

STDOUT = "-"  # a FILE option's standard output
_STANDARD_OUTPUT = "standard output"
FIFO_READER_WAIT_S = 60.0  # a FIFO opened before its reader: wait for it as a shell's `>` does, not for ever
# `.NAME.<writer's PID>.<random>.partial`; and the names of earlier versions (no PID: `.NAME.partial`
# of the streamed exports, `.NAME.<random>.tmp` of the others).
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.partial")
_EARLIER = re.compile(r"\.(?P<name>.+?)(\.[0-9a-f]{8}\.tmp|\.partial)")

# errno -> what the user can do about it ({where}: the option that chooses another place)
_ADVICE = {errno.ENOSPC: "the disk is full: free space or write elsewhere ({where})",
           errno.EDQUOT: "the disk quota is used up: free space or write elsewhere ({where})",
           errno.EROFS: "the folder is read-only: write elsewhere ({where})",
           errno.EACCES: "the folder is not writable by this user: write elsewhere ({where})",
           errno.EPERM: "the folder is not writable by this user: write elsewhere ({where})",
           errno.ENOENT: "the folder does not exist: create it or write elsewhere ({where})",
           errno.ENOTDIR: "a file stands where a folder is expected: write elsewhere ({where})",
           errno.EEXIST: "a file stands where the folder is to be: write elsewhere ({where})"}
# ... when the bytes go through to a device, a FIFO or a descriptor (nothing of ours to remove)
_THROUGH_ADVICE = {errno.EPIPE: "its reader stopped reading before the end: keep it reading until tlsbench "
                                "is done, or write to a file ({where})",
                   errno.ENXIO: "nothing reads it: start its reader first, or write to a file ({where})",
                   errno.EBADF: "it is not open for writing: write elsewhere ({where})"}
# What is refused, by what the name is: (test of its mode, what to say)
_REFUSED = ((stat.S_ISDIR, "a folder: name a file in it"),
            (stat.S_ISBLK, "a block device (a disk): tlsbench writes files, character devices and FIFOs only"),
            (stat.S_ISSOCK, "a socket: tlsbench writes files, character devices and FIFOs only"))
_THROUGH = ((stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a FIFO"))


class OutputError(UserError):
    """An output could not be written; no temporary file was left behind."""


def _failed(path: object, exc: OSError, where: str, through: str | None = None) -> OutputError:
    if through:
        advice = _THROUGH_ADVICE.get(exc.errno or 0, "write elsewhere ({where})").format(where=where)
        kind = "" if path == through else f" ({through}, written through)"  # standard output needs no words
        return OutputError(f"cannot write {path}{kind}: {exc.strerror or exc}; {advice}")
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


def folder_path(folder: str | Path, where: str = "--out") -> Path:
    """An output folder's path, checked before any work: `-` is refused (a folder option has
    no standard output)."""
    if str(folder) == STDOUT:
        raise OutputError(f"{where} takes a folder; `-` (standard output) is for options that write one file")
    return Path(folder)


def make_folder(folder: str | Path, where: str = "--out") -> Path:
    """Creates an output folder (and its parents); OutputError with advice when it cannot."""
    folder = folder_path(folder, where)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _failed(folder, exc, where) from None
    return folder


def write_output(target: str | Path, data: str | bytes, where: str = "--out") -> Path:
    """Writes `data` (text as UTF-8) to `target` by what it is (the module's table); raises
    OutputError naming the output, the cause and what to do (`where`: the option that picks
    another place)."""
    with open_output(target, where) as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(target)


def open_output(target: str | Path, where: str = "--out") -> ContextManager[BinaryIO]:
    """A binary file to write one output into, by what `target` is (the module's table); the
    output is complete once the block ends without an error (an error inside it removes the
    temporary file). Write errors raise OutputError."""
    if str(target) == STDOUT:
        return _standard_output(where)
    path = Path(target)
    fd = _own_descriptor(path)
    if fd is not None:
        return _through(path, lambda: os.dup(fd), f"descriptor {fd} of this process", where)
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise OutputError(f"cannot write {path}: it is a symbolic link to {os.readlink(path)}, which does not "
                              f"exist; create that file first, or write elsewhere ({where})") from None
        return _atomic(path, None, where)
    except OSError as exc:
        raise _failed(path, exc, where) from None
    for test, what in _REFUSED:
        if test(st.st_mode):
            raise OutputError(f"cannot write {path}: it is {what} ({where})")
    for test, what in _THROUGH:
        if test(st.st_mode):
            return _through(path, lambda: _open_through(path, what, where), what, where)
    return _atomic(Path(os.path.realpath(path)), st, where)  # a link stays a link: its target is replaced


class _Output(io.RawIOBase):
    """An output's stream: every write complete (a pipe may take a part at a time), a failure an
    OutputError naming the output and what to do (standard output's EPIPE excepted: the reader
    left, as in `| head`, and the command line stops quietly)."""

    def __init__(self, stream: BinaryIO, name: object, where: str, through: str | None):
        super().__init__()
        self.stream, self.label, self.where, self.through = stream, name, where, through

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        size = len(view)
        with self._errors():
            while view:
                view = view[self.stream.write(view):]
        return size

    def flush(self) -> None:
        if not self.closed and not self.stream.closed:
            with self._errors():
                self.stream.flush()

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) and self.through == _STANDARD_OUTPUT:
                raise
            raise _failed(self.label, exc, self.where, self.through) from None


@contextlib.contextmanager
def _standard_output(where: str) -> Iterator[BinaryIO]:
    sys.stdout.flush()
    out = _Output(sys.stdout.buffer, _STANDARD_OUTPUT, where, _STANDARD_OUTPUT)
    yield out  # type: ignore[misc]
    out.flush()


@contextlib.contextmanager
def _through(path: Path, opener, what: str, where: str) -> Iterator[BinaryIO]:
    """Writes into what `opener` opens (a descriptor), as it is: nothing created, nothing renamed."""
    try:
        fd = opener()
    except OSError as exc:
        raise _failed(path, exc, where, what) from None
    with open(fd, "wb", buffering=0) as stream:
        out = _Output(stream, path, where, what)
        yield out  # type: ignore[misc]
        out.flush()


def _open_through(path: Path, what: str, where: str) -> int:
    """A character device or a FIFO opened for writing, never created; a FIFO without a
    reader is waited for FIFO_READER_WAIT_S (non-blocking opens: a wait that ends)."""
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise _failed(path, exc, where, what) from None
            time.sleep(0.05)
    os.set_blocking(fd, True)
    return fd


_DESCRIPTOR = re.compile(r"/proc/(\d+)/fd/(\d+)")


def _own_descriptor(path: Path) -> int | None:
    """N when `path` names this process's descriptor N (/dev/stdout, /dev/fd/N, a shell's
    process substitution): written through it as the shell's `>` would, whatever it is open
    on (a file opened with `>>` keeps what it held). Links are followed one at a time, since
    the last one (a descriptor's) names no real path."""
    text = os.path.abspath(path)
    for _ in range(40):  # the kernel's limit of links followed
        text = os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))
        match = _DESCRIPTOR.fullmatch(text)
        if match:
            return int(match[2]) if int(match[1]) == os.getpid() else None
        if not os.path.islink(text):
            return None
        text = os.path.join(os.path.dirname(text), os.readlink(text))
    return None


@contextlib.contextmanager
def _atomic(target: Path, replaced: os.stat_result | None, where: str) -> Iterator[BinaryIO]:
    """A temporary sibling named for this writer, renamed over `target` once complete and on
    disk; a replaced file keeps its owner and permissions."""
    remove_stale(target.parent, target.name)
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)  # the umask applies
    except OSError as exc:
        raise _failed(target, exc, where) from None
    try:
        with open(fd, "wb", buffering=0) as stream:
            out = _Output(stream, target, where, None)
            yield out  # type: ignore[misc]
            if replaced:
                _keep_owner_and_mode(fd, replaced)
            with out._errors():
                os.fsync(fd)  # the rename must not publish a file whose bytes are still only in memory
        with out._errors():
            os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _keep_owner_and_mode(fd: int, was: os.stat_result) -> None:
    """Best effort: only root gives a file away, and some file systems (FAT) keep neither."""
    with contextlib.suppress(OSError):
        os.fchown(fd, was.st_uid, was.st_gid)
    with contextlib.suppress(OSError):
        os.fchmod(fd, stat.S_IMODE(was.st_mode) & 0o777)


def remove_stale(folder: Path, name: str | None = None) -> list[Path]:
    """Removes the temporary files of outputs in `folder` whose writer is no longer alive (of
    output `name` only, when given: then an earlier version's too, which named no writer and
    whose names, without the output's beside them, could be anyone's); returns them."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        mine = _TEMPORARY.fullmatch(entry.name)
        match = mine or (_EARLIER.fullmatch(entry.name) if name is not None else None)
        if (not match or (name is not None and match["name"] != name) or (mine and alive(int(mine["pid"])))
                or not entry.is_file(follow_symlinks=False)):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed
