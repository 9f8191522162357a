# SPDX-License-Identifier: Apache-2.0
"""How a table is declared: a dataclass whose fields are its columns, each with its meaning
and what the store must know of it (key, reference, a default of the store's own), plus
the table's key columns the row does not carry (an id the store assigns, a time it stamps).

The dataclass is what the code builds and reads; the table (its columns in order, types,
nullability, keys, indexes) is derived from it, and so are a store's DDL
(store/sqlite/schema.py) and the exported column docs (export/). Types follow the
annotations: int, str, bytes, float; `X | None` may be NULL."""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

FIRST = ""  # `after=FIRST`: the table's first column
SQL_TYPES = {int: "INTEGER", str: "TEXT", bytes: "BLOB", float: "REAL"}  # every store has these four


@dataclass(frozen=True)
class Column:
    """One column of a table."""

    name: str
    type: type  # int, str, bytes or float
    nullable: bool
    meaning: str
    primary_key: bool = False  # the table's key on its own (a key of several columns: Table.primary_key)
    unique: bool = False
    default: int | None = None  # what the store writes when a row leaves it out (older rows, older writers)
    references: str | None = None  # the table whose `id` (or one-column key) this column names
    cascade: bool = False  # rows here go with the row they reference
    after: str | None = None  # placed after this column (FIRST: first); None: in the row's field order


def column(meaning: str, *, default: Any = dataclasses.MISSING, primary_key: bool = False, unique: bool = False,
           store_default: int | None = None, references: str | None = None, cascade: bool = False,
           after: str | None = None) -> Any:
    """A dataclass field that is a column: `default` is the dataclass's, `store_default` the
    store's (a column added to a table that already had rows needs one)."""
    info = {"meaning": meaning, "primary_key": primary_key, "unique": unique, "default": store_default,
            "references": references, "cascade": cascade, "after": after}
    return dataclasses.field(default=default, metadata={"column": info})


def key_column(name: str, meaning: str, *, type: type = int, after: str | None = FIRST,
               references: str | None = None, primary_key: bool = True, nullable: bool = False,
               default: int | None = None) -> Column:
    """A column the row type does not carry: the id the store assigns, a time it stamps, the
    key a row is written under."""
    return Column(name, type, nullable, meaning, primary_key, default=default, references=references, after=after)


def _sql_type(annotation: Any) -> tuple[type, bool]:
    """(int | str | bytes | float, nullable) of a field's annotation."""
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) == 1 and kinds[0] in SQL_TYPES:
            return kinds[0], True
    elif annotation in SQL_TYPES:
        return annotation, False
    raise TypeError(f"a column must be int, str, bytes or float (or X | None), not {annotation!r}")


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class Table:
    """A table: its row type's fields and the key columns it adds, in the table's order."""

    name: str
    meaning: str
    row: type  # a dataclass whose fields (declared with column()) are columns
    extra: tuple[Column, ...] = ()  # columns the row type does not carry
    primary_key: tuple[str, ...] = ()  # a key of several columns
    unique: tuple[tuple[str, ...], ...] = ()  # UNIQUE constraints of several columns
    indexes: tuple[Index, ...] = ()
    singleton: bool = False  # one row per store (the experiment: one per SQLite file)
    per_experiment: bool = True  # its rows belong to an experiment (a shared store keys them by it); not a singleton's

    @property
    def keyed(self) -> bool:
        """Whether a store of many experiments adds the experiment's id to its every key."""
        return self.per_experiment and not self.singleton

    @functools.cached_property
    def columns(self) -> tuple[Column, ...]:
        hints = typing.get_type_hints(self.row)
        declared = []
        for f in dataclasses.fields(self.row):
            if "column" not in f.metadata:
                raise TypeError(f"{self.row.__name__}.{f.name}: declare it with schema.column()")
            kind, nullable = _sql_type(hints[f.name])
            declared.append(Column(f.name, kind, nullable, **f.metadata["column"]))
        ordered = [c for c in declared if c.after is None]
        for c in [c for c in (*self.extra, *declared) if c.after is not None]:
            at = 0 if c.after == FIRST else [o.name for o in ordered].index(c.after) + 1
            ordered.insert(at, c)
        names = [c.name for c in ordered]
        assert len(names) == len(set(names)), f"{self.name}: a column declared twice"
        return tuple(ordered)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def row_names(self) -> tuple[str, ...]:
        """The row type's fields (the columns it carries), in its own order."""
        return field_names(self.row)

    @property
    def key(self) -> tuple[str, ...]:
        """What identifies a row within its experiment."""
        return self.primary_key or tuple(c.name for c in self.columns if c.primary_key)


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


T = TypeVar("T")


def view_of(table: Table, rename: Mapping[str, str] | None = None) -> Callable[[type[T]], type[T]]:
    """A class whose fields are some of a table's columns (a projection, or the arrays of a
    columnar read): declared by name only, its meanings and types are the table's. Refused at
    import when a field names no column (`rename`: field -> column, where they differ)."""
    def check(cls: type[T]) -> type[T]:
        rename_ = rename or {}
        unknown = [n for n in field_names(cls) if rename_.get(n, n) not in table.names]
        if unknown:
            raise TypeError(f"{cls.__name__}: {unknown} are not columns of table {table.name}")
        cls.__table__ = table  # type: ignore[attr-defined]
        return cls
    return check
