# SPDX-License-Identifier: Apache-2.0
"""What every store implementation does alike with rows, outside SQL: the time it stamps,
a record's values in column order, a column of words read as one text, who measured."""
from __future__ import annotations

import datetime
from typing import Any

import numpy as np

from tlsbench.core.version import host_name, tool_version
from tlsbench.schema.columns import field_names


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def values(row: Any) -> tuple[Any, ...]:
    """A record's fields in order, as they are: `astuple` deep-copies every value (half the
    host's time per repetition when a batch of fast handshakes is stored)."""
    return tuple(getattr(row, name) for name in field_names(type(row)))


def words(text: str) -> np.ndarray:
    """A comma-separated text's words, each distinct word one object (a status per repetition
    would otherwise cost a string of its own: 50 bytes)."""
    found, where = np.unique(np.array(text.split(","), dtype=object), return_inverse=True)
    return found[where.reshape(-1)]


def who_measured(worker: str | None) -> tuple[str, str | None, str]:
    """agent.host, .worker and .tool_version of an agent this process starts (migration 017)."""
    return host_name(), worker, tool_version()
