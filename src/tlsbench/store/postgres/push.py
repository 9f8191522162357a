# SPDX-License-Identifier: Apache-2.0
"""`tlsbench store push`: a SQLite experiment merged into a shared store, in one transaction
(whole or not at all), idempotently: what is there already is recognised by its natural key
(a configuration by its key, a repetition by its configuration and index, an agent by what
started it and when) and left as it is. The ids the SQLite store assigned are mapped to the
shared store's as the rows go in, following the declared references (schema/tables.py).

The derived cache is not pushed: it is rebuilt from the records (`tlsbench derive`). A
repetition that exists in both with another measurement (two runs of one plan under one
name) is a conflict: the push is refused and nothing is written. An experiment the push
creates keeps the SQLite store's ids (its report is the same to the last bit: statistics are
seeded by configuration ids); one it adds to gives new rows the experiment's next ids."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlsbench.schema import DERIVED_BATCH, DERIVED_STATS, EXPERIMENT, TABLES, Table
from tlsbench.store.api import StoreError, plan_mismatch
from tlsbench.store.postgres.connection import bring_up_to_date, connect, experiment_row
from tlsbench.store.postgres.schema import COUNTER_TABLE, NEXT_ID
from tlsbench.store.postgres.location import PgLocation
from tlsbench.store.rows import now_iso
from tlsbench.store.sqlite.files import open_checked

PUSHED = [t for t in TABLES if t not in (EXPERIMENT, DERIVED_BATCH, DERIVED_STATS)]
# What identifies a row of a table whose id the store assigns, beyond the id itself.
NATURAL = {"agent": ("library", "executable", "pid", "started_at"), "config": ("key",),
           "repetition": ("config_id", "idx"), "energy_capture": ("sha256", "options_json"),
           "sched_capture": ("started_at",)}
# Columns that hold another table's id without declaring it (their tables predate references).
UNDECLARED = {("sched_step", "config_id"): "config"}


class PushConflict(StoreError):
    """The shared experiment holds other measurements of the same repetitions."""


@dataclass
class PushSummary:
    experiment: str
    added: dict[str, int] = field(default_factory=dict)  # table -> rows added
    kept: dict[str, int] = field(default_factory=dict)  # table -> rows that were there already

    @property
    def nothing_new(self) -> bool:
        return not any(self.added.values())


def _target(table: Table, column: str) -> str | None:
    c = table.column(column)
    return c.references or UNDECLARED.get((table.name, column))


def push(source: Path, target: PgLocation) -> PushSummary:
    """Merges the SQLite store `source` into the experiment `target` names."""
    with contextlib.closing(open_checked(source)) as lite, contextlib.closing(connect(target.url)) as pg:
        bring_up_to_date(pg, str(target))
        exp = lite.execute("SELECT * FROM experiment WHERE id = 1").fetchone()
        summary = PushSummary(target.name)
        with pg.transaction():
            pg.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"push/{target.name}",))
            eid, fresh = _experiment(pg, target, dict(exp))
            ids: dict[str, dict[int, int]] = {}
            for table in PUSHED:
                _copy(lite, pg, eid, table, ids, summary, fresh)
        return summary


def _experiment(pg: Any, target: PgLocation, row: dict[str, Any]) -> tuple[int, bool]:
    """The experiment's id, and whether this push creates it."""
    found = experiment_row(pg, target.name)
    if found is not None:
        if found[1].plan_hash != row["plan_hash"]:
            raise plan_mismatch(target, found[1], row["plan_hash"])
        return found[0], False
    names = [n for n in EXPERIMENT.names if n != "id"]
    values = {**row, "name": target.name, "created_at": row.get("created_at") or now_iso()}
    return int(pg.execute(f"INSERT INTO experiment ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))}) "
                          "RETURNING id", [values[n] for n in names]).fetchone()[0]), True


def _copy(lite: Any, pg: Any, eid: int, table: Table, ids: dict[str, dict[int, int]], summary: PushSummary,
          fresh: bool) -> None:
    if not lite.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,)).fetchone():
        return  # an older store without it
    identity = "id" in table.names and table.column("id").primary_key
    columns = [c for c in table.columns if not (identity and c.name == "id")]
    names = [c.name for c in columns]
    refs = {n: _target(table, n) for n in names if _target(table, n)}
    rows = []
    for source in lite.execute(f"SELECT * FROM {table.name} ORDER BY rowid"):
        present = set(source.keys())
        row = {c.name: source[c.name] if c.name in present else c.default for c in columns}
        for name, other in refs.items():
            if row[name] is not None:
                row[name] = ids[other][row[name]]
        rows.append((source["id"] if identity else None, row))
    if identity:
        _copy_identities(pg, eid, table, names, rows, ids, summary, fresh)
        return
    query = (f"INSERT INTO {table.name} (experiment_id, {', '.join(names)}) VALUES "
             f"({', '.join(['%s'] * (len(names) + 1))}) ON CONFLICT DO NOTHING")
    count = f"SELECT count(*) FROM {table.name} WHERE experiment_id = %s"
    before = pg.execute(count, (eid,)).fetchone()[0]
    with pg.cursor() as cur:
        cur.executemany(query, [(eid, *(r[n] for n in names)) for _, r in rows])
    summary.added[table.name] = pg.execute(count, (eid,)).fetchone()[0] - before
    summary.kept[table.name] = len(rows) - summary.added[table.name]


def _copy_identities(pg: Any, eid: int, table: Table, names: list[str], rows: list[tuple[int, dict[str, Any]]],
                     ids: dict[str, dict[int, int]], summary: PushSummary, fresh: bool) -> None:
    """Rows whose id the store assigns: those there already (by NATURAL key) mapped to their
    ids, the others inserted (with their own ids into an experiment the push creates); a
    repetition there with another measurement is a conflict."""
    natural = NATURAL[table.name]
    check = "stored_at" if table.name == "repetition" else None
    existing = {tuple(r[:len(natural)]): (r[len(natural)], r[-1]) for r in pg.execute(
        f"SELECT {', '.join(natural)}, id, {check or 'NULL'} FROM {table.name} WHERE experiment_id = %s", (eid,))}
    mapped = ids.setdefault(table.name, {})
    new = []
    for old_id, row in rows:
        key = tuple(row[n] for n in natural)
        if key in existing:
            mapped[old_id], stored = existing[key]
            if check and stored != row[check]:
                raise PushConflict(f"experiment {summary.experiment!r} already holds another measurement of "
                                   f"repetition {row['idx']} of configuration {row['config_id']} (stored at {stored}, "
                                   f"this one at {row[check]}): push it under another name (URL#OTHER); nothing "
                                   "was written")
        else:
            new.append((old_id, row))
    summary.added[table.name] = len(new)
    summary.kept[table.name] = len(rows) - len(new)
    if not new:
        return
    marks = ", ".join(["%s"] * len(names))
    new_id = "%s" if fresh else f"{NEXT_ID}(%s, '{table.name}')"
    query = (f"INSERT INTO {table.name} (experiment_id, id, {', '.join(names)}) VALUES (%s, {new_id}, {marks}) "
             "RETURNING id")
    with pg.cursor() as cur:
        cur.executemany(query, [(eid, old_id if fresh else eid, *(r[n] for n in names)) for old_id, r in new],
                        returning=True)
        for old_id, _ in new:
            mapped[old_id] = int(cur.fetchone()[0])
            cur.nextset()
    if fresh:  # the experiment's next ids come after the ones kept
        pg.execute(f"INSERT INTO {COUNTER_TABLE} (experiment_id, tbl, last) VALUES (%s, %s, %s) ON CONFLICT "
                   f"(experiment_id, tbl) DO UPDATE SET last = greatest({COUNTER_TABLE}.last, EXCLUDED.last)",
                   (eid, table.name, max(mapped.values())))
