# SPDX-License-Identifier: Apache-2.0
"""The column tables of docs/export.md and docs/store.md, written from their one declaration
(export/columns.py and export/tidy.py for the exports, schema/tables.py for the store):

    python -m tlsbench.export.docs docs/            # rewrite them
    python -m tlsbench.export.docs docs/ --check    # exit 1 when a table is not what they say

Each table sits between `<!-- columns: NAME -->` and `<!-- /columns -->`."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterable

from tlsbench.schema import TABLES, Table
from tlsbench.schema.columns import SQL_TYPES

from tlsbench.export import tidy
from tlsbench.export.columns import CONFIG_COLUMNS, Column

_BLOCK = re.compile(r"(<!-- columns: (\S+) -->\n)(.*?)(<!-- /columns -->)", re.S)


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def export_table(columns: Iterable[Column]) -> str:
    rows = [f"| `{c.name}` | {c.type} | {_escape(c.meaning)} |" for c in columns]
    return "\n".join(["| column | type | meaning |", "|---|---|---|", *rows]) + "\n"


def store_table(table: Table) -> str:
    rows = []
    for c in table.columns:
        key = "key" if c.primary_key or c.name in table.primary_key else "unique" if c.unique else ""
        refers = f" → `{c.references}`" if c.references else ""
        rows.append(f"| `{c.name}` | {SQL_TYPES[c.type]}{'' if c.nullable else ' not null'} | {key}{refers} | "
                    f"{_escape(c.meaning)} |")
    head = f"{table.meaning}\n\n| column | type | key | meaning |\n|---|---|---|---|\n"
    return head + "\n".join(rows) + "\n"


def blocks() -> dict[str, str]:
    """Every generated table by its block name."""
    by_name = {c.name: c for c in tidy.REPETITION_COLUMNS}
    out = {"config": export_table(CONFIG_COLUMNS),
           "repetition": export_table(tidy.columns("repetition")[1 + len(CONFIG_COLUMNS):]),
           "slice": export_table(c for c in tidy.columns("slice")[1 + len(CONFIG_COLUMNS):]
                                 if c.name not in by_name)}
    out |= {f"store.{t.name}": store_table(t) for t in TABLES}
    return out


def rewrite(text: str, generated: dict[str, str]) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + generated[m.group(2)] + m.group(4), text)


def main(argv: list[str]) -> int:
    folder, check = Path(argv[0]), "--check" in argv[1:]
    generated, stale = blocks(), []
    for name in ("export.md", "store.md"):
        path = folder / name
        text = path.read_text()
        new = rewrite(text, generated)
        if new != text:
            stale.append(str(path))
            if not check:
                path.write_text(new)
    if check and stale:
        print(f"{', '.join(stale)}: column tables differ from their declaration; run "
              f"`python -m tlsbench.export.docs {folder}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
