# SPDX-License-Identifier: Apache-2.0
"""One writer per store (issue 27): `tlsbench derive` takes the store's writer lock like `run`
and `energy import`; a derived batch is stored once per (kind, version, configuration, first
repetition), so a second derivation replaces instead of adding; and a store that two derives
at once left with every batch twice (and statistics counting every value twice) is read
right and repaired by a plain `derive`.

Real runs of the mbed TLS agent and real `tlsbench derive` processes; "the report's n" is
checked through `tlsbench export --format csv`, which lays out the report's statistics: each
configuration's n plus its excluded repetitions is what the store holds, once."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import small_plan
from stores import reader, writer
from tlsbench.analysis.derive import derived, statcache
from tlsbench.analysis.derive.derived import DERIVE_VERSION, STORED_KINDS
from tlsbench.app.run import run_experiment
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import DB_FILE, SqliteStore, schema, testing

TRACEBACK = "Traceback (most recent call last)"
BUSY = "being written by another tlsbench"
BEFORE_UNIQUE_KEY = 14  # the last schema whose derived batches could be stored twice


def _plan():
    """Many configurations (48) of few repetitions: a derive writes a batch per configuration,
    long enough (about a second) for two started together to overlap."""
    return small_plan("writers", repetitions=2, rounds=1, suites='["TLS-ECDHE-*", "TLS-PSK-*"]')


@pytest.fixture(scope="module")
def finished(tmp_path_factory, agent_path) -> Path:
    """A real run's store (its sweep derived: summaries and statistics stored)."""
    folder = tmp_path_factory.mktemp("writers")
    return run_experiment(_plan(), folder, agent_dir=agent_path.parent).folder / DB_FILE


def _copy(db: Path, folder: Path) -> Path:
    """The store in a folder of its own (SQLite's backup: the WAL's commits included)."""
    folder.mkdir(parents=True)
    testing.backup(db, folder / DB_FILE)
    return folder / DB_FILE


def _cli(*args: str | Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tlsbench.cli", *map(str, args)], env=dict(os.environ, COLUMNS="200"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ended(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    assert TRACEBACK not in out + err, out + err
    return proc.returncode, out, err


def _batches(db: Path) -> Counter:
    """Stored derived batches of this version per (kind, configuration)."""
    with reader(db) as store:
        return Counter((b.kind, b.config_id) for kind in STORED_KINDS
                       for b in store.derived_batches(kind, DERIVE_VERSION, measures=False))


def _stored_per_config(db: Path) -> Counter:
    with reader(db) as store:
        return Counter(store.repetition_columns().config_id.tolist())


def _handshake_n(db: Path, include_flagged: bool = True) -> dict[tuple[int, str], int]:
    """The report's n of each configuration's handshake processing per peer, as exported;
    checked to count each stored repetition once: n + excluded = stored (descheduled ones kept:
    on a busy machine a configuration may lose every one, and leave the export)."""
    stored = _stored_per_config(db)
    code, out, _ = _ended(_cli("export", db, "--format", "csv", *["--include-flagged"] * include_flagged))
    assert code == 0
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["metric"] == "handshake_processing"]
    shown = {int(r["config_id"]) for r in rows}
    # Without the flagged ones, a configuration whose every repetition was descheduled is left out.
    assert shown == set(stored) if include_flagged else shown and shown <= set(stored)
    for r in rows:
        assert int(r["n"]) + int(r["excluded_reps"]) == stored[int(r["config_id"])], r
    return {(int(r["config_id"]), r["peer"]): int(r["n"]) for r in rows}


def _assert_counted_once(db: Path) -> None:
    """One batch per configuration (the run's batches hold one configuration each), and the
    report's statistics count each stored repetition once."""
    assert _batches(db) == Counter({("handshakes", cid): 1 for cid in _stored_per_config(db)})
    _handshake_n(db)


def _assert_one_line_or_won(code: int, out: str, err: str) -> bool:
    """A derive that ran (exit 0), or the one line a second writer gets; True when it ran."""
    if code == 0:
        return True
    assert code == 1 and BUSY in err and "run the same command again" in err, err
    assert len(err.strip().splitlines()) == 1, err
    return False


def test_a_derive_while_another_writer_holds_the_store_is_one_line(finished, tmp_path):
    db = _copy(finished, tmp_path / "held")
    before = _batches(db)
    with locate(db).lock.hold():
        code, out, err = _ended(_cli("derive", db.parent, "--rebuild"))
    assert not _assert_one_line_or_won(code, out, err) and f"PID {os.getpid()}" in err
    assert _batches(db) == before  # nothing written


@pytest.mark.parametrize("rebuild", [True, False], ids=["rebuild", "without-summaries"])
def test_two_derives_at_once_leave_one_copy(finished, tmp_path, rebuild):
    """Two real `derive --rebuild` started together on one store, and two plain `derive` on a
    store without summaries: one derives, the other gets one line (or runs after it); each
    configuration ends with one batch, and its n in the statistics is its repetitions once."""
    db = _copy(finished, tmp_path / "two")
    if not rebuild:
        with locate(db).lock.hold(), writer(db, create=False) as store:
            store.drop_derived()  # the summaries and statistics: a store as a run killed before its end leaves it
        assert not _batches(db)
    args = ["derive", db.parent] + (["--rebuild"] if rebuild else [])
    ran = [_assert_one_line_or_won(*_ended(p)) for p in [_cli(*args), _cli(*args)]]
    assert any(ran)
    _assert_counted_once(db)


def test_a_store_two_old_derives_doubled_is_read_right_and_repaired(tmp_path, agent_path, monkeypatch):
    """The store as two derives at once left it before the writer lock and migration 015: a
    run at schema 14, its batches stored twice and statistics computed from them (the reader
    of then counted every value twice). A report of it counts each repetition once (those
    copies and their statistics are not used); a plain `derive` drops the copies and the
    statistics, and stores them again."""
    old = schema.migrations()
    with monkeypatch.context() as m:
        (tmp_path / "old").mkdir()
        testing.at_migration(tmp_path / "old" / DB_FILE, BEFORE_UNIQUE_KEY)  # as that tlsbench created it
        m.setattr(schema, "migrations", lambda: [v for v in old if v[0] <= BEFORE_UNIQUE_KEY])
        m.setattr(SqliteStore, "set_skipped_cells", lambda self, cells: None)  # migration 016's table: not there yet
        m.setattr(SqliteStore, "add_agent", testing.add_agent_before_017)  # nor 017's columns
        db = run_experiment(small_plan("old", repetitions=6), tmp_path, agent_dir=agent_path.parent).folder / DB_FILE
        with writer(db, create=False) as store:
            batches = list(store.derived_batches("handshakes", DERIVE_VERSION))
            store.drop_derived()
            store.add_derived_batches(batches)  # the first derive
            store.add_derived_batches(batches)  # the second, at the same time
            m.setattr(derived, "stored_twice", lambda ids: False)  # the reader of then
            statcache.store_stats(store, store)
            doubled = {cid: statcache.decode(s) for cid, s in store.derived_stats("handshakes").items()
                       if cid != statcache.GROUPS}
    assert set(_batches(db).values()) == {2}
    read = _handshake_n(db, include_flagged=False)  # read as it is (a reader never migrates), as its statistics were
    assert read and {k: 2 * n for k, n in read.items()} == {  # every value twice: the bug, reproduced
        (cid, r.peer): r.summary.n for cid, rows in doubled.items() for r in rows if r.metric == "handshake_processing"}

    code, out, err = _ended(_cli("derive", db.parent))
    assert code == 0, err
    assert testing.pragma(db, "user_version") == old[-1][0]
    _assert_counted_once(db)
