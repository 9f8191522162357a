# SPDX-License-Identifier: Apache-2.0
"""Lanes: the batches of several exchanges run at once, one worker thread per host CPU (a
matrix over device targets: one QEMU per target, each on a core of its own), while the
thread that opened the store does every write.

Why the writes stay on one thread: a SQLite connection belongs to the thread that opened it,
and the controller's bookkeeping (stored indices, deaths, skips, the observer's progress) is
then never shared. A worker hands each write to that thread (OwnerThread.call) and waits for
it, so a batch is stored before its lane goes on, exactly as in a sequential sweep.

Why a lane closes its own exchange: a process started by a thread dies when that thread
ends (core/processes.py dying_with_us), so the QEMU a worker booted is ended by that worker,
with QUIT, before the worker moves on."""
from __future__ import annotations

import functools
import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
POLL_S = 0.1  # how often the owner looks at the lanes while no write is asked for


class OwnerGone(RuntimeError):
    """The owner thread stopped serving (a second Ctrl-C, an error): a worker's write is refused."""


class OwnerThread:
    """Runs calls on the thread that created it (the store's), from any thread."""

    def __init__(self) -> None:
        self.owner = threading.current_thread()
        self.asked: queue.Queue[tuple[Callable[[], Any], Future]] = queue.Queue()
        self.gone = False

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(*args, **kwargs) on the owner thread (at once when called there), its result or
        error here."""
        if threading.current_thread() is self.owner:
            return fn(*args, **kwargs)
        if self.gone:
            raise OwnerGone("the run stopped: nothing more is stored")
        done: Future = Future()
        self.asked.put((functools.partial(fn, *args, **kwargs), done))
        while True:
            try:
                return done.result(timeout=POLL_S)
            except FutureTimeout:
                if self.gone:  # asked after the owner's last look at the queue
                    raise OwnerGone("the run stopped: nothing more is stored") from None

    def serve(self, until: Sequence[Future]) -> None:
        """Runs the calls the workers ask for until every future in `until` is done; leaving
        early (an exception here), it refuses every call still asked for or to come."""
        try:
            while True:
                try:
                    fn, done = self.asked.get(timeout=POLL_S)
                except queue.Empty:
                    if all(f.done() for f in until):
                        return
                    continue
                try:
                    done.set_result(fn())
                except BaseException as exc:  # the worker raises it, as if it had called fn itself
                    done.set_exception(exc)
        except BaseException:
            self.gone = True
            while not self.asked.empty():
                self.asked.get_nowait()[1].set_exception(OwnerGone("the run stopped: nothing more is stored"))
            raise


class OwnedSink:
    """A sink whose every call runs on the owner thread (what an exchange writes: its agent rows)."""

    def __init__(self, sink: Any, owner: OwnerThread):
        self._sink, self._owner = sink, owner

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._sink, name)
        return lambda *args, **kwargs: self._owner.call(method, *args, **kwargs)


def run_lanes(lanes: Sequence[Callable[[], None]], owner: OwnerThread, cpus: Sequence[int] = ()) -> None:
    """Runs every lane on max(1, len(cpus) or the CPUs this process may use) workers, serving
    their writes on this (the owner) thread; a lane's error is raised here once all have ended.
    `cpus`: where the workers (and the processes they start) may run."""
    allowed = tuple(cpus) or tuple(sorted(os.sched_getaffinity(0)))

    def on_cpus() -> None:
        os.sched_setaffinity(0, allowed)  # this worker thread only: the owner keeps its CPU

    with ThreadPoolExecutor(max_workers=max(1, min(len(allowed), len(lanes))), initializer=on_cpus,
                            thread_name_prefix="lane") as pool:
        futures = [pool.submit(lane) for lane in lanes]
        owner.serve(futures)
    for future in futures:
        future.result()
