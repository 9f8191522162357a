# SPDX-License-Identifier: Apache-2.0
"""Exports: one Exporter interface over one result type (cf. hyperfine src/export/mod.rs).

Every exporter turns an `Analysis` (its `Results`, and for traces its slices) into text.
"""
from __future__ import annotations

from typing import Protocol

from tlsbench.analysis.results import Analysis


class Exporter(Protocol):
    """Serialises an analysis. ``reps`` selects repetitions where the format shows traces."""

    suffix: str  # file name suffix, e.g. ".csv"

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str: ...


def exporter(fmt: str, profile: str | None = None) -> Exporter:
    """The exporter of a format name (see FORMATS); csv and json add energy estimates with a
    power `profile`."""
    from tlsbench.export.csv import CsvExporter
    from tlsbench.export.json import JsonExporter
    from tlsbench.export.markdown import MarkdownExporter
    from tlsbench.export.perfetto import PerfettoExporter

    table = {"csv": CsvExporter, "json": JsonExporter, "markdown": MarkdownExporter,
             "perfetto": PerfettoExporter}
    return table[fmt](profile) if fmt in WITH_PROFILE else table[fmt]()


FORMATS = ("csv", "json", "markdown", "perfetto")
WITH_PROFILE = ("csv", "json")
