# SPDX-License-Identifier: Apache-2.0
"""The Python API: an experiment's results as pandas DataFrames, for notebooks.

    import tlsbench
    e = tlsbench.open("results/device")      # an experiment folder, or its tlsbench.db
    e.configurations   # one row per configuration, every field a column
    e.repetitions      # one row per repetition: status, flags, round, per-peer measures
    e.slices           # one row per step occurrence, crypto operation, record, experiment group
    e.statistics       # the statistics CSV (`tlsbench export`): the report's numbers

Every table is computed on first use and kept; the store is only read. The tables are the
exports' (export/tidy.py, export/csv.py), so a notebook and a file agree; docs/export.md
describes each column, docs/python-api.md shows a session.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from tlsbench.analysis.results import Analysis
    from tlsbench.store.api import Location


def _locate(path: str | Path) -> "Location":
    """An experiment folder's store, a store file as it is, `sqlite:PATH`, or an experiment
    name under the default plan's output folder (as the command line resolves them)."""
    from tlsbench.plan.model import load as load_plan
    from tlsbench.store.locator import locate

    return locate(path, load_plan().plan.output)


class Experiment:
    """One experiment's results (`tlsbench.open`)."""

    def __init__(self, path: str | Path, include_flagged: bool = False, profile: str | None = None):
        self.location = _locate(path)
        self.include_flagged = include_flagged  # statistics: keep failed and flagged repetitions
        self.profile = profile  # statistics: add energy estimates from this power profile
        with self.location.reader() as store:  # a missing or foreign file fails here, in one line
            row = store.experiment()
        self.name = row.name if row else self.location.folder.name

    def __repr__(self) -> str:
        return f"<tlsbench experiment {self.name!r} at {self.location}>"

    @cached_property
    def configurations(self) -> "pd.DataFrame":
        """One row per configuration (every kind), indexed by nothing: `config_id` is a column."""
        from tlsbench.analysis.derive.load import load
        from tlsbench.export.tidy import config_table

        with self.location.reader() as store:
            table, _ = config_table(load(store, store, rep_ids=[], kind="all"))
        return table.to_pandas().astype({c: str for c in table.column_names
                                         if str(table.schema.field(c).type).startswith("dictionary")})

    @cached_property
    def repetitions(self) -> "pd.DataFrame":
        """One row per repetition; names are categoricals (memory), times in `counter_unit`."""
        from tlsbench.export.tidy import read_table

        with self.location.reader() as store:
            return read_table(store, "repetition").to_pandas()

    @cached_property
    def slices(self) -> "pd.DataFrame":
        """One row per slice (large: ~100 per repetition; `tlsbench export --level slice
        --format parquet` and pandas.read_parquet(columns=...) read a part of it)."""
        from tlsbench.export.tidy import read_table

        with self.location.reader() as store:
            return read_table(store, "slice").to_pandas()

    @cached_property
    def analysis(self) -> "Analysis":
        """The report's analysis (analysis/pipeline.py), for what the tables do not hold."""
        from tlsbench.analysis.derive.load import load
        from tlsbench.analysis.pipeline import analyze

        with self.location.reader() as store:
            return analyze(load(store, store), include_flagged=self.include_flagged)

    @cached_property
    def statistics(self) -> "pd.DataFrame":
        """The statistics CSV's rows (measures, experiment groups, network, energy, footprint)."""
        import pandas as pd

        from tlsbench.export.csv import COLUMNS, all_rows

        frame = pd.DataFrame(all_rows(self.analysis, self.profile), columns=list(COLUMNS))
        numeric = [c for c in STATISTICS_NUMERIC if c in frame.columns]
        frame[numeric] = frame[numeric].apply(pd.to_numeric, errors="coerce")
        return frame

    def compare(self, other: "Experiment | None" = None, config_a: int | None = None, config_b: int | None = None,
                noise_floor: float = 0.01) -> "pd.DataFrame":
        """B/A per matched configuration and measure (`tlsbench compare --format csv`): this
        experiment is A, `other` B; or two configuration ids of this one."""
        import pandas as pd

        from tlsbench.analysis.questions.compare import compare
        from tlsbench.export.compare import COLUMNS, rows

        b = other.analysis if other is not None else self.analysis
        c = compare(self.analysis, b, self.analysis.results.context.seed, noise_floor, config_a, config_b)
        return pd.DataFrame(rows(c, [self.analysis], [b]), columns=list(COLUMNS))


STATISTICS_NUMERIC = ("n", "excluded_reps", "median", "median_ci_lo", "median_ci_hi", "median_ci_pct", "mean",
                      "mean_ci_lo", "mean_ci_hi", "sd", "q1", "q3", "iqr", "min", "p95", "max", "outliers_mild",
                      "outliers_severe", "identical", "rounds", "round_spread_pct")


def open(path: str | Path, include_flagged: bool = False, profile: str | None = None) -> Experiment:  # noqa: A001
    """An experiment's results: a folder, its tlsbench.db, or a name under the default output."""
    return Experiment(path, include_flagged, profile)
