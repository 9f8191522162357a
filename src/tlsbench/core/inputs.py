# SPDX-License-Identifier: Apache-2.0
"""What a path a user named turned out to be, in the words a refusal uses: a config header
that is a FIFO, a serial port that is a regular file, a firmware image that is /dev/null are
each one line naming what was found (docs/host.md "Foreseen failures")."""
from __future__ import annotations

import os
import stat
from pathlib import Path

KINDS = {stat.S_IFREG: "a regular file", stat.S_IFDIR: "a folder", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket"}


def kind(mode: int) -> str:
    """The kind of file an `st_mode` says (symbolic links are followed before)."""
    return KINDS.get(stat.S_IFMT(mode), "a special file")


def what_is(path: str | Path) -> str:
    """"not found", "is a FIFO (named pipe)", "cannot be examined (Permission denied)"..."""
    try:
        return f"is {kind(os.stat(path).st_mode)}"
    except FileNotFoundError:
        return "not found"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"


def not_a_regular_file(path: str | Path) -> str | None:
    """None for a regular file (or a link to one); else what it is, as what_is says it."""
    return None if Path(path).is_file() else what_is(path)
