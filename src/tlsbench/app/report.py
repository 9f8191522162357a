# SPDX-License-Identifier: Apache-2.0
"""Reading an experiment for a report, and the report a run writes when its sweep ends (with
the predictions any report carries over links): plain functions, numpy, scipy and matplotlib
loaded only when called."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from tlsbench.store.api import Location
from tlsbench.store.locator import locate

Note = Callable[[str], None]  # where a line for the user goes
DERIVE_HINT_REPS = 1000  # fewer derive in well under a second: not worth a line


def quiet(message: str) -> None:
    pass


def load_experiment(where: Location, name: str, note: Note = quiet):  # -> Dataset
    """An experiment's store loaded (one visit to it, read-only: the reader is its derived
    cache too); past DERIVE_HINT_REPS repetitions that had no stored summaries, `note` says
    how to store them (`name`: the experiment as the user named it)."""
    from tlsbench.analysis.derive.load import load

    with where.reader() as reader:
        ds = load(reader, reader)
    if ds.derived_now >= DERIVE_HINT_REPS:
        note(f"note: {ds.derived_now} repetitions had no stored summaries and were derived from their records now; "
             f"`tlsbench derive {name}` stores them for the next report.")
    return ds


def analyze_experiment(where: Location, name: str, include_flagged: bool, note: Note = quiet):  # -> Analysis
    """An experiment loaded and analysed."""
    from tlsbench.analysis.pipeline import analyze

    return analyze(load_experiment(where, name, note), include_flagged=include_flagged)


def report_after_run(store: Location | Path, note: Note = quiet, first: Callable[[Any], None] | None = None) -> Path:
    """The report `tlsbench run` writes when a sweep ends: report.html next to the store
    (with predicted vs measured when the plan ran emulated links and their reference).
    `store`: its location, a store file or its experiment folder; `first` is handed the
    analysis before the report is drawn (the run prints the answer first)."""
    from tlsbench.report.html import write_html

    where = locate(store) if isinstance(store, Path) else store
    analysis = analyze_experiment(where, str(where), False, note)
    where.folder.mkdir(parents=True, exist_ok=True)  # a shared store's experiment has no folder of its own yet
    if first is not None:
        first(analysis)
    return write_html(analysis, where.folder / "report.html",
                      where=f"the store is complete: `tlsbench report {where} --out FILE`",
                      predictions=predictions_for(analysis, (), None, None))


def predictions_for(analysis, links: tuple[str, ...], sweep: str | None, profile=None):  # -> PredictResults | None
    """The report's predictions: over `links` (`--predict`), and the check against the
    emulator whenever the store ran emulated links with a reference; None: neither."""
    from tlsbench.analysis.models.predict.model import Options
    from tlsbench.analysis.models.predict.results import collect, sources_of
    from tlsbench.analysis.models.predict.validate import has_validation
    from tlsbench.analysis.models.energy.profiles import resolve

    ds = analysis.ds
    if not links and not has_validation(ds.configs):
        return None
    opts = Options(seed=analysis.results.context.seed or 1, profile=resolve(profile) if isinstance(profile, str) else profile)
    return collect(sources_of(ds), analysis.results.config_labels, links, opts, sweep if links else None)
