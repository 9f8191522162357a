# SPDX-License-Identifier: Apache-2.0
"""The SQLite form of the tables (schema/tables.py): a new store is created from the
declaration; an older one is brought to it by the numbered files of migrations/
(`NNN_name.sql`, applied in order by `PRAGMA user_version`, the number of the last one
applied). tests/test_schema.py checks that a store migrated from the first file has the
tables, columns and indexes of a new one, so the two cannot drift apart: a change to the
tables is a new migration and the same change to the declaration."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from tlsbench.schema import TABLES, Column, Table
from tlsbench.schema.columns import SQL_TYPES

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d+)_.*\.sql$")


def migrations() -> list[tuple[int, Path]]:
    """(version, file) of every migration, in order."""
    found = [(int(m.group(1)), p) for p in MIGRATIONS_DIR.iterdir() if (m := _MIGRATION_NAME.match(p.name))]
    return sorted(found)


def latest() -> int:
    """The schema version of a new store: the last migration's number."""
    return migrations()[-1][0]


def _column(table: Table, c: Column) -> str:
    parts = [c.name, SQL_TYPES[c.type]]
    if c.primary_key:
        parts.append("PRIMARY KEY" + (f" CHECK ({c.name} = 1)" if table.singleton else ""))
    elif not c.nullable:
        parts.append("NOT NULL")
    if c.unique:
        parts.append("UNIQUE")
    if c.default is not None:
        parts.append(f"DEFAULT {int(c.default)}")
    if c.references:
        parts.append(f"REFERENCES {c.references}(id)" + (" ON DELETE CASCADE" if c.cascade else ""))
    return " ".join(parts)


def table_ddl(table: Table) -> str:
    """CREATE TABLE and CREATE INDEX statements of one table."""
    lines = [_column(table, c) for c in table.columns]
    if table.primary_key:
        lines.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    lines += [f"UNIQUE ({', '.join(u)})" for u in table.unique]
    body = ",\n    ".join(lines)
    statements = [f"CREATE TABLE {table.name} (\n    {body}\n);"]
    statements += [f"CREATE {'UNIQUE ' if i.unique else ''}INDEX {i.name} ON {table.name}({', '.join(i.columns)});"
                   for i in table.indexes]
    return "\n".join(statements)


def ddl() -> str:
    """The whole schema of a new store."""
    return "\n".join(table_ddl(t) for t in TABLES)


def bring_up_to_date(conn: sqlite3.Connection) -> None:
    """Creates the tables of an empty database, or applies the migrations an older store
    lacks; each in one transaction with its version."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current == 0 and not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
        conn.executescript(f"BEGIN;\n{ddl()}\nPRAGMA user_version = {latest()};\nCOMMIT;")
        return
    for version, file in migrations():
        if version > current:
            # executescript runs the whole file + the version bump as one transaction.
            conn.executescript(f"BEGIN;\n{file.read_text()}\nPRAGMA user_version = {version};\nCOMMIT;")
