# SPDX-License-Identifier: Apache-2.0
"""Everything `tlsbench predict` and the report's prediction section show, computed once:
rankings per link, a crossover sweep, and the check against the emulator when the store
has one (validate.py)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from tlsbench.analysis.derive.dataset import Dataset
from tlsbench.analysis.models.conversion import of_dataset, point_for
from tlsbench.analysis.models.energy.profiles import OperatingPoint
from tlsbench.analysis.models.predict import PredictError
from tlsbench.analysis.models.predict.links import Link, parse_link
from tlsbench.analysis.models.predict.model import Options, Prediction, Ranked, predict, rank, warnings_for
from tlsbench.analysis.models.predict.script import Sources
from tlsbench.analysis.models.predict.sweep import PARAMETERS, Sweep, mark_comparable, run_sweep
from tlsbench.analysis.models.predict.validate import (Check, ErrorSummary, error_summaries, has_validation, pairs, validate)

MAX_SWEPT = 8  # configurations in one crossover figure: more lines are unreadable


@dataclass
class LinkPredictions:
    """Every predicted configuration over one link, ranked."""

    link: Link
    predictions: list[Prediction]
    by_duration: list[Ranked]
    by_energy: list[Ranked]


@dataclass
class PredictResults:
    """Predictions of one experiment: never measurements (every view labels them)."""

    experiment: str
    options: Options
    links: list[LinkPredictions] = field(default_factory=list)
    sweep: Sweep | None = None
    swept_left_out: int = 0  # configurations beyond MAX_SWEPT, not in the crossover figure
    checks: list[Check] = field(default_factory=list)
    errors: list[ErrorSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def profile(self) -> OperatingPoint | None:
        return self.options.profile


def predicted_configs(ds: Dataset, only: Sequence[str] = ()) -> list[int]:
    """The configurations predictions start from: handshakes in memory, and over a network the
    reference links (loopback, the `none` preset) when the store has them, else all; `only`
    narrows them to configuration keys or ids containing one of its strings."""
    emulated = {cid for cid, _ in pairs(ds.configs)}
    candidates = [cid for cid in ds.configs if cid not in emulated]
    if only:
        candidates = [cid for cid in ds.configs if any(o == str(cid) or o in ds.configs[cid].key for o in only)]
        if not candidates:
            raise PredictError(f"no configuration matches {', '.join(only)} (give a configuration id or part of its "
                               "key: `tlsbench status` lists them)")
    return sorted(candidates)


def collect(sources: Sources, labels: dict[int, str], link_texts: Sequence[str], opts: Options,
            sweep: str | None = None, sweep_range: tuple[float | None, float | None, int | None] = (None, None, None),
            check: bool | None = None, only: Sequence[str] = ()) -> PredictResults:
    """Predictions over each link (`--link` texts), the sweep around the first link, and the
    validation (None: when the store has emulated links with a reference)."""
    ds = sources.ds
    point = point_for(ds, opts.profile)
    opts = replace(opts, profile=point, conversion=of_dataset(ds, point, opts.device_scale))
    res = PredictResults(ds.name, opts)
    links = [parse_link(t) for t in link_texts]
    configs = predicted_configs(ds, only)
    if links and not configs:
        raise PredictError(f"{ds.name} has no handshake configuration to predict from")
    for link in links:
        preds = [predict(sources, cid, labels.get(cid, str(cid)), link, opts) for cid in configs]
        res.links.append(LinkPredictions(link, preds, rank(preds), rank(preds, "energy")))
        res.warnings += warnings_for(link, preds, opts)
    if sweep:
        if not links:
            raise PredictError("a sweep varies one parameter of a link: give --link (e.g. --link nb-iot --sweep rate)")
        order = [r.prediction.config_id for r in res.links[0].by_duration]
        chosen = order[:MAX_SWEPT]
        res.swept_left_out = len(order) - len(chosen)
        param = PARAMETERS[sweep]
        lo, hi, n = sweep_range
        xs = param.grid(lo, hi, n)
        res.sweep = run_sweep(sources, {cid: labels.get(cid, str(cid)) for cid in chosen}, links[0], sweep, opts, xs)
        mark_comparable(res.sweep, ds.configs)
    if check or (check is None and has_validation(ds.configs)):
        if not has_validation(ds.configs):
            raise PredictError(f"{ds.name} has no configuration over an emulated link with a reference to predict it "
                               "from (the same configuration over the `none` preset or loopback): run a plan such "
                               "as plans/predict-validate.toml")
        res.checks = validate(sources, labels, opts, unpredicted=res.warnings)
        res.errors = error_summaries(res.checks)
    res.warnings = list(dict.fromkeys(res.warnings))
    return res


def sources_of(ds: Dataset) -> Sources:
    """A loaded experiment with its peer agents' traces (read from its store only when it
    has two-process configurations)."""
    traces = []
    if any(c.network_json for c in ds.configs.values()):
        with ds.store() as store:
            traces = store.peer_traces()
    return Sources.of(ds, traces)
