# SPDX-License-Identifier: Apache-2.0
"""The derive step between run and report: each repetition's summaries and each
configuration's statistics stored (analysis/derive/), so that reports read them instead of
decoding every record and drawing every bootstrap again. `tlsbench run` takes it when a sweep
ends, `tlsbench derive` on demand; the raw records stay as they are."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tlsbench.store.lock import AGAIN, writer_lock
from tlsbench.store.sqlite import Store

# Where a derive that cannot write may go instead.
RETRY = ("copy the experiment folder to a writable disk with room and derive there (a report derives what is "
         "not stored)")


@dataclass(frozen=True)
class Derivation:
    """What one derive stored."""

    repetitions: int
    batches: int
    configs: int  # configurations whose statistics were stored


def derive_into(store: Store, rebuild: bool = False) -> Derivation:
    """Derives what has no summary of the current version (`rebuild`: all of it), in a store
    open for writing (its writer holds the lock)."""
    from tlsbench.analysis.derive.statcache import derive_all  # numpy loads here

    return Derivation(*derive_all(store, rebuild))


def derive(path: Path, rebuild: bool = False) -> Derivation:
    """`tlsbench derive`: the store at `path`, under its writer lock (a second writer is
    refused; a killed derive leaves whole batches and the next one derives the rest)."""
    with writer_lock(path.parent, RETRY, AGAIN), Store.open(path, create=False, retry=RETRY) as store:
        return derive_into(store, rebuild)
