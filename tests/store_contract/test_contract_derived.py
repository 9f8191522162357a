# SPDX-License-Identifier: Apache-2.0
"""The derived cache (DerivedCache): batches replace, never add; statistics per kind and
configuration; dropping keeps what it is told to keep."""
from __future__ import annotations

from store_contract.samples import config, experiment
from tlsbench.schema import DerivedBatch, StoredStats


def batch(config_id: int | None, first: int, version: int = 2, kind: str = "handshakes", n: int = 3) -> DerivedBatch:
    return DerivedBatch(version, kind, first, first + n - 1, n, 5 * n, 1, bytes([first]) * 8, bytes([n]) * 16,
                        config_id)


def test_a_batch_of_the_same_key_replaces_the_stored_one(where):
    with where.writer() as store:
        store.init_experiment(experiment())
        cid = store.upsert_config(config())
        store.add_derived_batches([batch(cid, 1), batch(cid, 4)])
        store.add_derived_batches([batch(cid, 1, n=2)])  # (kind, version, configuration, first repetition): again
        store.add_derived_batches([batch(cid, 1, version=3)])  # another version: beside it
    with where.reader() as cache:
        assert list(cache.derived_batches("handshakes", 2)) == [batch(cid, 1, n=2), batch(cid, 4)]
        assert list(cache.derived_batches("handshakes", 3)) == [batch(cid, 1, version=3)]
        assert [b.first_rep for b in cache.derived_batches("handshakes", 2, config_id=cid)] == [1, 4]
        assert list(cache.derived_batches("handshakes", 2, config_id=cid + 1)) == []
        assert list(cache.derived_batches("experiments")) == []
        light = list(cache.derived_batches("handshakes", 2, measures=False))
        assert [b.measures for b in light] == [b"", b""] and [b.reps for b in light] == [b"\x01" * 8, b"\x04" * 8]


def test_statistics_are_kept_per_kind_and_configuration(where):
    with where.writer() as store:
        store.init_experiment(experiment())
        store.put_derived_stats("handshakes", [StoredStats(1, "d1", 2, b"x"), StoredStats(-1, "g", 1, b"g")])
        store.put_derived_stats("device", [StoredStats(1, "d2", 3, b"y")])
        store.put_derived_stats("handshakes", [StoredStats(1, "d3", 4, b"z")])  # replaces configuration 1's
    with where.reader() as cache:
        assert cache.derived_stats("handshakes") == {1: StoredStats(1, "d3", 4, b"z"),
                                                     -1: StoredStats(-1, "g", 1, b"g")}
        assert cache.derived_stats("device") == {1: StoredStats(1, "d2", 3, b"y")}
        assert cache.derived_stats("experiments") == {}


def test_dropping_keeps_a_version_or_drops_everything_derived(where):
    with where.writer() as store:
        store.init_experiment(experiment())
        store.add_derived_batches([batch(1, 1, version=1), batch(1, 1), batch(2, 5, kind="experiments")])
        store.put_derived_stats("handshakes", [StoredStats(1, "d", 1, b"s")])
        store.drop_derived(keep_version=2)  # other versions' batches go, the statistics stay
        assert list(store.derived_batches("handshakes")) == [batch(1, 1)]
        assert store.derived_stats("handshakes")
        store.drop_derived(kind="experiments")
        assert list(store.derived_batches("experiments")) == [] and list(store.derived_batches("handshakes"))
        store.drop_derived()  # everything derived: rebuilt from the records
        assert list(store.derived_batches("handshakes")) == [] and store.derived_stats("handshakes") == {}
