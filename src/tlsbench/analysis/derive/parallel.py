# SPDX-License-Identifier: Apache-2.0
"""Independent pieces of an analysis on every CPU this process may use: forked workers
inherit what the parent holds (a dataset), answer for one item at a time and send back
small results; they come back in item order, so the outcome is the same as one process's
(every statistic draws from its own seeded generator: stats.rng_for)."""
from __future__ import annotations

import ctypes
import ctypes.util
import io
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence, TypeVar

from tlsbench.core.processes import die_with

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 8
_malloc_trim = getattr(ctypes.CDLL(ctypes.util.find_library("c") or None), "malloc_trim", None)  # glibc only
_job: tuple[Callable[[Any, Any], Any], Any] | None = None  # what forked workers inherit


def map_ordered(fn: Callable[[Any, T], R], shared: Any, items: Sequence[T]) -> Iterator[R]:
    """fn(shared, item) for each item, in order; over several processes where there are
    several CPUs (fork: `shared` is not copied until written, and never sent). The workers
    start at the call, so the caller may do other work before it reads the results; read
    them all (or close the iterator): that ends the workers."""
    global _job
    workers = min(len(os.sched_getaffinity(0)), len(items), MAX_WORKERS)
    # A fork copies only the calling thread: another thread's lock (the controller's pumps at
    # the end of a run, a pool's own threads) would stay held in the worker. Such a process works alone.
    if workers < 2 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return (fn(shared, item) for item in items)
    _job = (fn, shared)
    trim_heap()  # the workers inherit the parent's pages: fewer, if its heap's free ones go first
    # Ctrl-C waits until the pool stands: one arriving in a fork's own hooks would be swallowed
    # there ("Exception ignored") and the command would go on as if never interrupted.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_starts, initargs=(os.getpid(),))
        results = _results(pool, pool.imap(_run, items))
        weakref.finalize(results, pool.terminate)  # a caller that stops early, or never reads, ends them too
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return results


def trim_heap() -> None:
    """Gives the heap's free pages back to the system (glibc: freed blocks of a few MB, such as
    the texts a store's columns are parsed from, otherwise stay resident until reused)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def _results(pool: Any, results: Iterator[R]) -> Iterator[R]:
    global _job
    try:
        with pool:
            yield from results
    finally:
        _job = None


def _worker_starts(parent: int) -> None:
    """A worker dies with its parent (kill -9 included), leaves Ctrl-C to it (the parent ends
    the pool), dies of the SIGTERM the pool ends it with (not the run's stop handler it
    inherits), and prints nothing once the parent is gone: its last words then are only a
    BrokenPipeError of the result pipe, written into a terminal that has moved on."""
    die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.stderr = _WhileAlive(sys.stderr, parent)


class _WhileAlive(io.TextIOBase):
    """A worker's stderr that falls silent when the parent that forked the worker is gone."""

    def __init__(self, stream: Any, parent: int):
        super().__init__()
        self.stream, self.parent = stream, parent

    def write(self, text: str) -> int:
        return self.stream.write(text) if os.getppid() == self.parent else len(text)

    def flush(self) -> None:
        if os.getppid() == self.parent:
            self.stream.flush()


def _run(item: Any) -> Any:
    assert _job is not None, "a worker without its job (not forked from map_ordered)"
    fn, shared = _job
    return fn(shared, item)
