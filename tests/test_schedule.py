# SPDX-License-Identifier: Apache-2.0
from collections import Counter

from hypothesis import given, strategies as st

from tlsbench.run import schedule

KEYS = [f"c{i}" for i in range(7)]


@given(reps=st.integers(1, 60), rounds=st.integers(1, 12), n=st.integers(1, 8), seed=st.integers(0, 2**32))
def test_rounds_cover_every_repetition_exactly_once(reps, rounds, n, seed):
    rounds = min(rounds, reps)
    keys = KEYS[:n] + ["extra"] * (n > 7)
    batches = schedule.build(keys, reps, rounds, seed)
    seen = Counter((b.config, i) for b in batches for i in b.indices)
    assert set(seen.values()) == {1}
    assert set(seen) == {(k, i) for k in set(keys) for i in range(reps)}
    # Rounds run in order, and each round visits every configuration once.
    assert [b.round for b in batches] == sorted(b.round for b in batches)
    for r in range(rounds):
        assert sorted(b.config for b in batches if b.round == r) == sorted(set(keys))


def test_round_sizes_differ_by_at_most_one():
    sizes = [stop - start for start, stop in schedule.round_bounds(10, 4)]
    assert sizes == [3, 3, 2, 2]
    assert schedule.round_of(9, 10, 4) == 3


def test_same_seed_same_schedule_and_input_order_does_not_matter():
    a = schedule.build(KEYS, 20, 5, seed=7)
    assert a == schedule.build(list(reversed(KEYS)), 20, 5, seed=7)


def test_different_seeds_give_different_orders():
    orders = {tuple(b.config for b in schedule.build(KEYS, 20, 5, seed)) for seed in range(5)}
    assert len(orders) == 5


def test_pending_cuts_batches_around_stored_repetitions():
    batches = schedule.build(["a", "b"], 10, 2, seed=1)
    done = {"a": {0, 1, 3, 7}, "b": set(range(10))}
    left = schedule.pending(batches, done)
    assert all(b.config == "a" for b in left)
    assert sorted(i for b in left for i in b.indices) == [2, 4, 5, 6, 8, 9]
    assert {(b.first_index, b.count) for b in left} == {(2, 1), (4, 1), (5, 2), (8, 2)}


def test_extension_round_starts_at_the_next_free_index_and_stops_at_the_limit():
    batches = schedule.extension({"a": 10, "b": 18, "c": 20}, size=5, limit=20, round=2, seed=1)
    assert {(b.config, b.first_index, b.count, b.round) for b in batches} == {("a", 10, 5, 2), ("b", 18, 2, 2)}
    again = schedule.extension({"a": 10, "b": 18, "c": 20}, size=5, limit=20, round=2, seed=1)
    assert [b.config for b in batches] == [b.config for b in again]  # seeded: reproducible order
