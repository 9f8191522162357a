# SPDX-License-Identifier: Apache-2.0
"""analysis/derive/parallel.py: forked workers give what one process gives, in item order."""
from __future__ import annotations

import os
import threading

import pytest

from tlsbench.analysis.derive.parallel import map_ordered


def _answer(shared: dict, item: int) -> tuple[int, int]:
    return shared["base"] + item * item, os.getpid()  # `shared` is inherited, never sent


def test_results_come_back_in_item_order_from_several_processes():
    shared = {"base": 1000, "ballast": bytearray(10 << 20)}
    got = list(map_ordered(_answer, shared, list(range(40))))
    assert [value for value, _ in got] == [1000 + i * i for i in range(40)]
    if len(os.sched_getaffinity(0)) >= 2 and threading.active_count() == 1:
        assert os.getpid() not in {pid for _, pid in got}  # workers did it


def test_one_cpu_or_one_item_runs_in_this_process():
    assert list(map_ordered(_answer, {"base": 0}, [3])) == [(9, os.getpid())]
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})
        assert {pid for _, pid in map_ordered(_answer, {"base": 0}, list(range(5)))} == {os.getpid()}
    finally:
        os.sched_setaffinity(0, before)


def _fails(shared: None, item: int) -> int:
    if item == 3:
        raise ValueError("item 3 is bad")
    return item


def test_a_worker_error_reaches_the_caller():
    with pytest.raises(ValueError, match="item 3 is bad"):
        list(map_ordered(_fails, None, list(range(6))))


def test_a_process_with_other_threads_works_alone():
    """A fork copies the calling thread only: with another thread running, no worker."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert {pid for _, pid in map_ordered(_answer, {"base": 0}, list(range(5)))} == {os.getpid()}
    finally:
        stop.set()
        other.join()


def test_results_left_unread_end_the_workers():
    """A caller that fails before reading (a template error while the figures are drawn)
    leaves no worker behind."""
    import gc
    import multiprocessing

    results = map_ordered(_answer, {"base": 0}, list(range(5)))
    del results
    gc.collect()
    assert multiprocessing.active_children() == []
