# SPDX-License-Identifier: Apache-2.0
"""The derive step between run and report: each repetition's summaries and each
configuration's statistics stored (analysis/derive/cache.py), so that reports read them
instead of decoding every record and drawing every bootstrap again. `tlsbench run` takes it
when a sweep ends, `tlsbench derive` on demand; the raw records stay as they are."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tlsbench.store.api import AGAIN, Location

if TYPE_CHECKING:
    from tlsbench.analysis.derive.cache import Derivation

# Where a derive that cannot write may go instead.
RETRY = ("copy the experiment folder to a writable disk with room and derive there (a report derives what is "
         "not stored)")


def derive(where: Location, rebuild: bool = False) -> "Derivation":
    """`tlsbench derive`: the store `where` names, under its writer lock (a second writer is
    refused; a killed derive leaves whole batches and the next one derives the rest)."""
    from tlsbench.analysis.derive.cache import derive as derive_cache  # numpy loads here

    with where.lock.hold(RETRY, AGAIN), where.writer(create=False, retry=RETRY) as store:
        return derive_cache(store, store, rebuild)
