# SPDX-License-Identifier: Apache-2.0
"""Runs of equal keys in sorted arrays: how samples, batches and configurations are cut out
of one sort instead of one mask each."""
from __future__ import annotations

import numpy as np


def runs(*sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal keys starts in arrays sorted by them, and where it ends."""
    n = len(sorted_keys[0])
    change = np.zeros(n, bool)
    change[:1] = True
    for k in sorted_keys:
        change[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(change)
    return starts, np.append(starts[1:], n) if n else starts
