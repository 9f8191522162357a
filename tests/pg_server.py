# SPDX-License-Identifier: Apache-2.0
"""The PostgreSQL server the tests share: started on first use (Debian's server, a data
folder and port of its own: store/postgres/testing.py), stopped when pytest exits. Each test
gets a database of its own."""
from __future__ import annotations

import atexit
import itertools
import os

from tlsbench.store.postgres.testing import LocalServer, local_server

_server: LocalServer | None = None
_names = itertools.count()


def server() -> LocalServer:
    global _server
    if _server is None:
        running = local_server()
        _server = running.__enter__()
        atexit.register(running.__exit__, None, None, None)
    return _server


def database(prefix: str = "t") -> str:
    """The URL of a new, empty database."""
    return server().database(f"{prefix}_{os.getpid()}_{next(_names)}")
