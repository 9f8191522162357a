# SPDX-License-Identifier: Apache-2.0
"""The tables are declared once (src/tlsbench/schema/tables.py): a new store is created from
the declaration, an older one is brought up to date by the migrations, and the two must be
the same store; the docs' column tables are written from the same declaration."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench.schema import TABLES, RepetitionRow, view_of
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import testing
from tlsbench.store.sqlite.schema import latest, migrations

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DB = REPO / "tests" / "fixtures" / "golden.db"


def _new(path: Path) -> dict:
    with locate(f"sqlite:{path}").writer():
        pass
    return testing.schema(path)


def test_a_store_migrated_from_the_first_schema_is_a_new_store(tmp_path):
    """Columns (name, type, not null, default, key position), indexes (name, unique, origin,
    partial, columns) and foreign keys of every table, and the version."""
    new = _new(tmp_path / "new.db")
    testing.at_migration(tmp_path / "old.db", 1)
    assert testing.pragma(tmp_path / "old.db", "user_version") == 1
    with locate(f"sqlite:{tmp_path / 'old.db'}").writer(create=False):
        pass
    assert testing.schema(tmp_path / "old.db") == new


@pytest.mark.parametrize("version", [3, 9, 12, 14])
def test_a_store_migrated_from_any_version_is_a_new_store(tmp_path, version):
    testing.at_migration(tmp_path / "old.db", version)
    with locate(f"sqlite:{tmp_path / 'old.db'}").writer(create=False):
        pass
    assert testing.schema(tmp_path / "old.db") == _new(tmp_path / "new.db")


def test_a_real_store_of_the_first_schema_migrates_to_a_new_store(tmp_path):
    """The golden store was written at migration 001, with rows, before 001 itself gained
    config.options (docs/host.md "Store schema changes": readers give its rows the default):
    that column is the one difference."""
    old = shutil.copy(GOLDEN_DB, tmp_path / "golden.db")
    assert testing.pragma(old, "user_version") == 1
    with locate(f"sqlite:{old}").writer(create=False):
        pass
    migrated, new = testing.schema(old), _new(tmp_path / "new.db")
    assert {t for t in new if migrated[t] != new[t]} == {"config"}
    names = [c[1] for c in new["config"]["columns"]]
    assert [c[1] for c in migrated["config"]["columns"]] == names[:18] + names[19:] and names[18] == "options"


def test_every_declared_table_and_no_other_is_created(tmp_path):
    made = _new(tmp_path / "new.db")
    assert made.pop("user_version") == latest() == migrations()[-1][0]
    assert set(made) == {t.name for t in TABLES}
    for t in TABLES:
        assert [c[1] for c in made[t.name]["columns"]] == list(t.names), t.name


def test_a_view_naming_an_unknown_column_is_refused():
    @dataclasses.dataclass
    class Fine:
        idx: int
        status: str

    view_of(TABLES[3])(Fine)
    with pytest.raises(TypeError, match="not columns of table repetition"):
        @view_of(TABLES[3])
        @dataclasses.dataclass
        class Wrong:
            index: int  # the export's name, not the store's


def test_row_types_are_declared_with_their_meaning():
    for t in TABLES:
        assert all(c.meaning.strip() for c in t.columns), t.name
    assert [f.name for f in dataclasses.fields(RepetitionRow)][:3] == ["config_id", "idx", "round"]


def test_docs_column_tables_are_written_from_the_declaration():
    """docs/export.md and docs/store.md: edit the declaration, then run the command this prints."""
    check = subprocess.run([sys.executable, "-m", "tlsbench.export.docs", str(REPO / "docs"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_every_table_has_a_key_within_its_experiment():
    """A store shared by experiments keys every row by (experiment, this key)."""
    keyless = [t.name for t in TABLES if not t.key]
    assert not keyless
    assert dict((t.name, t.key) for t in TABLES)["energy"] == ("capture_id", "repetition_id", "peer", "label",
                                                               "group_index")
