# SPDX-License-Identifier: Apache-2.0
"""The SQLite store: one file per experiment (store.py), checked before it is opened
(files.py), created from the declared tables or upgraded by its migrations (schema.py), one
writer at a time (lock.py); traces compressed by blobs.py."""
from tlsbench.store.sqlite.files import DB_FILE
from tlsbench.store.sqlite.location import SqliteLocation
from tlsbench.store.sqlite.store import SqliteStore

__all__ = ["DB_FILE", "SqliteLocation", "SqliteStore"]
