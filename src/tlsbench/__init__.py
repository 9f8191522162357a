# SPDX-License-Identifier: Apache-2.0
"""tlsbench: what TLS and DTLS cost on a constrained device."""

__version__ = "0.1.0"


def open(path, include_flagged: bool = False, profile: str | None = None):  # noqa: A001 - tlsbench.open reads as intended
    """An experiment's results as pandas DataFrames (tlsbench/api.py, docs/python-api.md):
    `tlsbench.open("results/device").repetitions`. numpy, pandas and pyarrow load here."""
    from tlsbench.api import open as open_experiment

    return open_experiment(path, include_flagged, profile)
