# SPDX-License-Identifier: Apache-2.0
"""`tlsbench validate cycles`: the cycle model against published silicon figures (docs/cycles.md).

Each row of a table (TOML, one [[row]] per figure: id, board, library, experiment, group,
cycles or ms, source) runs the same code on the emulated core with the counting plugin
(builder/cycles.py) and compares the model's cycles (analysis/models/cycles.py) with the
published ones. A row that cannot run (unknown board, build or experiment) is skipped with its
reason; the command fails only when no row ran. `--write-model` (the shipped table only)
writes spec/cycles/model.toml: each core's calibration factor from its ONE calibration row,
each board's cycles per instruction on the reference workload, and the band: median and
worst |error| over the rows not used for calibration."""
from __future__ import annotations

import statistics
import tomllib
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping

from tlsbench.analysis.models.cycles import Band, band_of, error, fitted, raw_cycles
from tlsbench.builder import cycles as tool
from tlsbench.builder.shell import BuildError
from tlsbench.core.boards import Board, board, boards
from tlsbench.core.errors import UserError
from tlsbench.core.spec import SPEC_DIR

PUBLISHED = SPEC_DIR / "cycles" / "published.toml"
MODEL = SPEC_DIR / "cycles" / "model.toml"
REFERENCE = "mbedtls@3.6+p256m"  # the workload a board's CPI is measured on: P-256 as TLS runs it
REQUIRED = ("id", "board", "library", "experiment", "group", "source")


class TableError(UserError, ValueError):
    """A validation table that cannot be read: one line naming the row and field."""


class NothingRan(UserError, RuntimeError):
    """No row of the table could run."""


@dataclass(frozen=True)
class Row:
    id: str
    board: str
    library: str
    experiment: str
    group: str
    source: str
    cycles: float | None = None
    ms: float | None = None
    note: str = ""

    def published_cycles(self, b: Board) -> float:
        return self.cycles if self.cycles is not None else self.ms * 1e-3 * b.clock_hz  # type: ignore[operator]


@dataclass(frozen=True)
class Result:
    id: str
    board: str
    clock_mhz: float
    library: str
    experiment: str
    group: str
    instructions: float
    predicted_cycles: float
    published_cycles: float
    error: float  # predicted / published - 1
    role: str  # "validation" or "calibration"
    source: str
    note: str


@dataclass
class Validation:
    results: list[Result] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {id, reason}

    @property
    def band(self) -> Band | None:
        return band_of([r.error for r in self.results if r.role == "validation"])

    def to_json(self) -> dict:
        b = self.band
        return {"rows": [asdict(r) for r in self.results], "skipped": self.skipped,
                "summary": {"median_abs_error": b.median if b else None, "worst_abs_error": b.worst if b else None,
                            "validation_rows": b.rows if b else 0,
                            "calibration_rows": [r.id for r in self.results if r.role == "calibration"]}}


def read_table(path: Path) -> list[Row]:
    """The rows of a validation table; a mistake is one line naming the row and field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TableError(f"cannot read the table {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TableError(f"{path}: not a TOML table ({exc}); write one [[row]] per published figure") from None
    rows = raw.get("row")
    if not isinstance(rows, list) or not rows:
        raise TableError(f"{path}: no [[row]]; each row needs {', '.join(REQUIRED)} and cycles or ms")
    out = []
    for i, r in enumerate(rows, 1):
        where = f"{path.name} row {i}" + (f" ({r.get('id')})" if isinstance(r, dict) and r.get("id") else "")
        missing = [k for k in REQUIRED if not isinstance(r.get(k), str) or not r.get(k)]
        if missing:
            raise TableError(f"{where}: {', '.join(missing)} missing (text)")
        figures = [k for k in ("cycles", "ms") if k in r]
        if len(figures) != 1 or not isinstance(r[figures[0]], (int, float)) or r[figures[0]] <= 0:
            raise TableError(f"{where}: give exactly one of cycles or ms, a positive number")
        unknown = set(r) - set(REQUIRED) - {"cycles", "ms", "note"}
        if unknown:
            raise TableError(f"{where}: unknown field {', '.join(sorted(unknown))}")
        out.append(Row(**{k: r[k] for k in r}))
    ids = [r.id for r in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise TableError(f"{path.name}: row id {', '.join(twice)} given twice")
    return out


class _Runs:
    """Each (library build, board) runs once: every operation's counts, averaged over its repetitions."""

    def __init__(self, cache: Path | None):
        self.cache = cache
        self.done: dict[tuple[str, str], dict[str, dict[str, float]]] = {}

    def operations(self, library: str, b: Board) -> dict[str, dict[str, float]]:
        key = (library, b.name)
        if key not in self.done:
            ops = tool.count(tool.firmware(library, b.core, self.cache), b.core, b.memory, self.cache)
            by_name: dict[str, list[dict[str, int]]] = defaultdict(list)
            for op in ops:
                by_name[op.name].append(op.counts)
            self.done[key] = {name: {f: statistics.fmean(c[f] for c in runs) for f in runs[0]}
                              for name, runs in by_name.items()}
        return self.done[key]


def _skip_reason(row: Row) -> str | None:
    if row.board not in boards():
        return f"unknown board {row.board!r} (spec/boards.toml declares {', '.join(boards())})"
    if row.library not in tool.BUILDS:
        return f"unknown build {row.library!r} (known: {', '.join(tool.BUILDS)})"
    return None


def validate(rows: list[Row], cache: Path | None = None, factors: Mapping[str, float] | None = None,
             runs: _Runs | None = None) -> Validation:
    """Every row predicted and compared; `factors` (core -> k) default to the fitted model's."""
    runs, out = runs or _Runs(cache), Validation()
    k_of = dict(fitted().factors if factors is None else factors)
    calibration = {c.calibration_row for c in {b.core.name: b.core for b in boards().values()}.values()}
    for row in rows:
        reason = _skip_reason(row)
        b = board(row.board) if reason is None else None
        if b is not None:
            try:
                ops = runs.operations(row.library, b)
            except BuildError as exc:
                reason = f"{row.library} does not build or run for {b.core.name}: {exc}"
            else:
                name = f"{row.experiment}/{row.group}"
                if name not in ops:
                    reason = f"no operation {name} in {row.library}'s program (it runs {', '.join(ops)})"
        if reason or b is None:
            out.skipped.append({"id": row.id, "reason": reason or "?"})
            continue
        counts = ops[name]
        predicted = k_of.get(b.core.name, 1.0) * raw_cycles(counts, b)
        published = row.published_cycles(b)
        out.results.append(Result(row.id, b.name, b.clock_mhz, row.library, row.experiment, row.group,
                                  counts["instructions"], predicted, published, error(predicted, published),
                                  "calibration" if row.id in calibration else "validation", row.source, row.note))
    if not out.results:
        raise NothingRan("no row of the table could run: " + "; ".join(f"{s['id']}: {s['reason']}" for s in out.skipped))
    return out


def fit(rows: list[Row], cache: Path | None = None) -> tuple[Validation, str]:
    """Calibrates each core on its calibration row (raw model, factor = published / model),
    validates every other row with those factors, and measures each board's CPI on the
    reference workload: (the validation, the text of spec/cycles/model.toml)."""
    by_id = {r.id: r for r in rows}
    runs = _Runs(cache)
    factors, lines = {}, []
    for core in {b.core.name: b.core for b in boards().values()}.values():
        row = by_id.get(core.calibration_row or "")
        if row is None:
            continue
        b = board(row.board)
        counts = runs.operations(row.library, b)[f"{row.experiment}/{row.group}"]
        factors[core.name] = row.published_cycles(b) / raw_cycles(counts, b)
        lines += [f"[core.{core.name}]", f"factor = {factors[core.name]:.4f}", f'calibrated_on = "{row.id}"', ""]
    result = validate(rows, cache, factors, runs)
    for b in boards().values():
        if _skip_reason(Row("", b.name, REFERENCE, "", "", "")):
            continue
        ops = runs.operations(REFERENCE, b).values()
        total = {f: sum(o.get(f, 0) for o in ops) for f in next(iter(ops))}
        cpi = factors.get(b.core.name, 1.0) * raw_cycles(total, b) / total["instructions"]
        lines += [f"[board.{b.name}]", f"cpi = {cpi:.4f}", ""]
    band = result.band
    head = ["# SPDX-License-Identifier: Apache-2.0",
            "# Written by `tlsbench validate cycles --write-model` (app/validate.py): do not edit by hand.",
            "# core factor: published / model of the core's ONE calibration row (spec/cores.toml);",
            f"# board cpi: modelled cycles per instruction of {REFERENCE}'s four P-256 operations on the",
            "# board; band: |error| over the published rows not used for calibration (spec/cycles/published.toml).",
            f'reference = "{REFERENCE}"', ""]
    if band:
        head += ["[band]", f"median = {band.median:.4f}", f"worst = {band.worst:.4f}", f"rows = {band.rows}", ""]
    return result, "\n".join(head + lines)
