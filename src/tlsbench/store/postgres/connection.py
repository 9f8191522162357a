# SPDX-License-Identifier: Apache-2.0
"""Reaching a PostgreSQL store: its URL (and the experiment after `#`), a connection, the
schema's version checked and brought up to date, an experiment's row by its name."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator
from urllib.parse import urlsplit, urlunsplit

from tlsbench.schema import Experiment
from tlsbench.store.api import RUN_RETRY, StoreDamaged, StoreError
from tlsbench.store.postgres.schema import ALL_TABLES, DDL_LOCK, VERSION_TABLE, additions, ddl, migrations
from tlsbench.store.sqlite.schema import latest


def split(name: str) -> tuple[str, str | None]:
    """(the database's URL, the experiment after `#` or None)."""
    url, _, experiment = name.partition("#")
    return url, experiment or None


def display(url: str) -> str:
    """The URL without its password (messages, str() of a location)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[1]}"))


def connect(url: str, read_only: bool = False):  # -> psycopg.Connection
    """A connection in autocommit mode (transactions are explicit), named after this process
    (pg_stat_activity shows which tlsbench holds what)."""
    import psycopg  # loaded by the commands that reach a shared store only

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10,
                               application_name=f"tlsbench {os.getpid()}")
    except psycopg.Error as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise StoreError(f"cannot reach the store {display(url)}: {why.replace(url, display(url))}; check that the "
                         "server runs and the URL (user, host, port, database; a password in ~/.pgpass)") from None
    if read_only:
        conn.execute("SET default_transaction_read_only = on")
    return conn


def columns_of(conn) -> dict[str, set[str]]:
    """table -> its columns, in the connection's schema."""
    out: dict[str, set[str]] = {}
    for table, column in conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                      "WHERE table_schema = current_schema()"):
        out.setdefault(table, set()).add(column)
    return out


def version_of(conn, where: str, existing: dict[str, set[str]]) -> int | None:
    """The store's schema version (None: an empty database); StoreDamaged for tables that are
    not a whole tlsbench store, StoreError for a newer one."""
    ours = {t.name for t in ALL_TABLES}
    if VERSION_TABLE not in existing:
        if ours & set(existing):
            raise StoreDamaged(f"{where} has tlsbench's tables ({', '.join(sorted(ours & set(existing)))}) but no "
                               f"{VERSION_TABLE} table: damaged or not a tlsbench store; it was left untouched")
        return None
    version = conn.execute(f"SELECT max(version) FROM {VERSION_TABLE}").fetchone()[0]
    if version is None:
        raise StoreDamaged(f"{where}: its {VERSION_TABLE} table is empty: damaged; it was left untouched")
    if version > latest():
        raise StoreError(f"{where} was written by a newer tlsbench (schema {version}, this one knows up to "
                         f"{latest()}): upgrade tlsbench to read it")
    if version == latest():
        missing = [t.name for t in ALL_TABLES if t.name not in existing]
        missing += [f"{t.name}.{c.name}" for t in ALL_TABLES if t.name in existing for c in t.columns
                    if c.name not in existing[t.name]]
        if missing:
            raise StoreDamaged(f"{where} lacks {', '.join(missing[:5])} although its schema is "
                               f"version {version}: damaged; it was left untouched (restore a backup)")
    return int(version)


def bring_up_to_date(conn, where: str) -> None:
    """Creates the tables of an empty database, or adds what a store of an older version lacks
    (one process at a time: a transaction-scoped advisory lock)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK,))
        existing = columns_of(conn)
        version = version_of(conn, where, existing)
        if version == latest():
            return
        if version is None:
            for statement in ddl():
                conn.execute(statement)
            return
        for number, file in migrations():
            if number > version:
                conn.execute(file.read_text())
        for statement in additions(columns_of(conn)):
            conn.execute(statement)
        conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (latest(),))


def experiment_row(conn, name: str) -> tuple[int, Experiment] | None:
    from psycopg.rows import dict_row

    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM experiment WHERE name = %s", (name,)).fetchone()
    if row is None:
        return None
    return int(row["id"]), Experiment(**{k: row[k] for k in ("name", "plan_toml", "plan_json", "plan_hash", "seed",
                                                             "host_json", "created_at")})


class Connected:
    """What holds a connection to a shared store (an experiment's PostgresStore, the fleet's
    Queue): closed with it (`with`), its writes in transaction() blocks, where a connection
    the server lost is one line that says what is safe and what to do (`retry`)."""

    def __init__(self, conn: Any, location: Any, retry: str = RUN_RETRY):
        self.conn, self.location, self.retry = conn, location, retry

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        import psycopg

        try:
            with self.conn.transaction():
                yield self.conn
        except (psycopg.IntegrityError, psycopg.errors.ReadOnlySqlTransaction):
            raise
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot write the store {self.location}: {' '.join(str(exc).split())}. Everything "
                             f"already stored is safe; {self.retry}") from None
