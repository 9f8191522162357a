# SPDX-License-Identifier: Apache-2.0
"""Where a store is and who may write it: the locator, one writer at a time, a damaged store
refused and never written."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from store_contract.samples import config, experiment
from tlsbench.store.api import StoreBusy, StoreDamaged, StoreError
from tlsbench.store.locator import locate


def test_the_locator_names_a_sqlite_store_by_scheme_file_or_folder(tmp_path):
    with locate(f"sqlite:{tmp_path / 'a' / 'x.db'}").writer() as store:
        store.init_experiment(experiment())
    assert (tmp_path / "a" / "x.db").is_file()
    for name in (tmp_path / "a" / "x.db", str(tmp_path / "a" / "x.db")):  # a file, as it is
        assert locate(name).stored_experiment().name == "contract"
    with locate(tmp_path / "b").writer() as store:  # a folder: its tlsbench.db
        store.init_experiment(experiment())
    assert (tmp_path / "b" / "tlsbench.db").is_file() and locate(tmp_path / "b").folder == tmp_path / "b"
    (tmp_path / "out" / "c").mkdir(parents=True)
    with locate(tmp_path / "out" / "c").writer() as store:
        store.init_experiment(experiment())
    assert locate("c", tmp_path / "out").stored_experiment().name == "contract"  # a name under the output folder
    with pytest.raises(StoreError, match="no experiment 'nothing'.*tlsbench run"):
        locate("nothing", tmp_path / "out")


@pytest.mark.parametrize("name", ["postgresql://bench@db.example/tlsbench", "postgres://u:secret@h/db"])
def test_a_database_without_an_experiment_is_refused_in_one_line(name):
    with pytest.raises(StoreError) as refused:
        locate(name)
    message = str(refused.value)
    assert "#NAME" in message and "\n" not in message
    assert "secret" not in message  # a locator may hold credentials: never echoed


def test_an_unreachable_database_is_one_line_without_its_password():
    where = locate("postgresql://u:secret@127.0.0.1:1/lab#exp")
    assert str(where) == "postgresql://u@127.0.0.1:1/lab#exp"
    with pytest.raises(StoreError) as refused:
        where.reader()
    message = str(refused.value)
    assert message.startswith("cannot reach the store postgresql://u@127.0.0.1:1/lab")
    assert "secret" not in message and "\n" not in message


def _hold_elsewhere(where) -> subprocess.Popen:
    """Another process holding the writer lock (as a run writing it), finding the store by name."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom tlsbench.store.locator import locate\n"
                               "with locate(sys.argv[1]).lock.hold():\n print('held', flush=True); time.sleep(60)",
                               str(where)], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_one_writer_at_a_time(where):
    with where.writer() as store:
        store.init_experiment(experiment())
    assert where.lock.holder() is None
    holder = _hold_elsewhere(where)
    try:
        assert where.lock.holder() == str(holder.pid)
        with pytest.raises(StoreBusy, match=f"PID {holder.pid}"):
            with where.lock.hold():
                pass
        with pytest.raises(StoreBusy, match=f"PID {holder.pid}"):
            where.lock.refuse_if_busy()
        with where.reader() as reader:  # readers take no lock
            assert reader.experiment().name == "contract"
    finally:
        holder.kill()
        holder.wait()
    assert where.lock.holder() is None  # released however its holder ended (kill -9 here)
    with where.lock.hold():
        with where.writer(create=False) as store:
            store.upsert_config(config())


def test_a_damaged_store_is_refused_and_left_as_it_is(where, implementation):
    with where.writer() as store:
        store.init_experiment(experiment())
        store.upsert_config(config())
    implementation.damage(where)
    before = implementation.snapshot(where)
    for opening in (where.reader, where.writer, where.stored_experiment):
        with pytest.raises(StoreDamaged) as refused:
            opening()
        assert "\n" not in str(refused.value)
    assert implementation.snapshot(where) == before
