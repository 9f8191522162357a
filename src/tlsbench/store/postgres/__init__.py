# SPDX-License-Identifier: Apache-2.0
"""The PostgreSQL store: many experiments in one database, shared by a fleet (docs/fleet.md).
location.py names an experiment in it and holds its writer lock; schema.py derives its tables
from schema/; store.py implements store/api.py's roles; queue.py hands out an experiment's
schedule to workers; push.py merges a SQLite experiment in; testing.py starts a local server."""
