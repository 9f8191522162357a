# SPDX-License-Identifier: Apache-2.0
"""run/lanes.py without QEMU: lanes run at once on worker threads, every call they hand over
runs on the owner thread (the store's), and a lane's error reaches the caller once every lane
has ended."""
from __future__ import annotations

import os
import threading

import pytest

from tlsbench.run.lanes import OwnedSink, OwnerThread, run_lanes


class Recorder:
    """A sink that notes the thread of each write (a SQLite connection would refuse another)."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, threading.Thread]] = []

    def add(self, what: str, suffix: str = "") -> int:
        self.writes.append((what + suffix, threading.current_thread()))
        return len(self.writes)


def test_lanes_run_at_once_and_write_on_the_owner_thread():
    owner, sink = OwnerThread(), Recorder()
    owned = OwnedSink(sink, owner)
    cpus = sorted(os.sched_getaffinity(0))[:2]
    both = threading.Barrier(2, timeout=10) if len(cpus) == 2 else None
    lane_threads = []

    def lane(name: str):
        def run() -> None:
            lane_threads.append(threading.current_thread())
            if both is not None and name in ("a", "b"):
                both.wait()  # two lanes at the same moment, or BrokenBarrierError
            for i in range(3):
                assert owned.add(name, suffix=str(i)) >= 1
        return run

    before = os.sched_getaffinity(0)
    run_lanes([lane(n) for n in "abc"], owner, cpus)
    assert sorted(w for w, _ in sink.writes) == sorted(f"{n}{i}" for n in "abc" for i in range(3))
    assert {t for _, t in sink.writes} == {threading.current_thread()}
    assert threading.current_thread() not in lane_threads
    assert os.sched_getaffinity(0) == before  # the workers took the CPUs, not the caller


def test_a_lane_error_reaches_the_caller_after_the_others_end():
    owner, sink = OwnerThread(), Recorder()
    done = []

    def bad() -> None:
        raise ValueError("lane a broke")

    def good() -> None:
        owner.call(sink.add, "b")
        done.append("b")

    with pytest.raises(ValueError, match="lane a broke"):
        run_lanes([bad, good], owner, sorted(os.sched_getaffinity(0))[:1])
    assert done == ["b"] and [w for w, _ in sink.writes] == ["b"]


def test_an_error_of_a_handed_over_call_is_raised_in_the_lane():
    owner = OwnerThread()
    seen = []

    def failing() -> None:
        raise KeyError("no such row")

    def lane() -> None:
        with pytest.raises(KeyError):
            owner.call(failing)
        seen.append("raised in the lane")

    run_lanes([lane], owner)
    assert seen == ["raised in the lane"]
