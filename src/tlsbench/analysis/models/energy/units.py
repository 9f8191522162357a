# SPDX-License-Identifier: Apache-2.0
"""Capture formats and units (kept free of numpy: the CLI builds its options from them)."""
from __future__ import annotations

FORMATS = ("ppk2", "joulescope", "generic")
DEFAULT_MARKER = {"ppk2": "D0", "joulescope": "in0", "generic": "marker"}

# Unit name (lower case) -> factor to SI, per quantity.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}
CURRENT_UNITS = {"a": 1.0, "ma": 1e-3, "ua": 1e-6, "µa": 1e-6, "μa": 1e-6, "na": 1e-9}
VOLTAGE_UNITS = {"v": 1.0, "mv": 1e-3}
