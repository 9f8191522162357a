# SPDX-License-Identifier: Apache-2.0
"""`tlsbench validate cycles`: the cycle model against published silicon figures (docs/cycles.md).

Each row of a table (TOML, one [[row]] per figure: id, board, library, experiment, group,
cycles or ms, source) names a primitive experiment's group of a device library build: the
device firmware of that build (builder/firmware.py, the image a `[device]` plan boots) runs the
experiment on the emulated target of the board's core under the counting plugin
(run/cycles.py), and the model's cycles of the group's counts (analysis/models/cycles.py) are
compared with the published ones. A row that cannot run (unknown board, build or experiment)
is skipped with its reason; the command fails only when no row ran. A row whose published
build is not the one run here (`not_reproducible`: another library version, hardware
acceleration, other compiler flags) is run and shown apart: it never calibrates and never
counts in the band. `--write-model` (the shipped table only) writes spec/cycles/model.toml:
each core's calibration factor from its ONE calibration row, each board's cycles per
instruction on the reference workload, and the band: median and worst |error| over the
comparable rows not used for calibration."""
from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping

from tlsbench.analysis.models.cycles import Band, band_of, error, fitted, raw_cycles
from tlsbench.builder import cycles as tool
from tlsbench.builder import firmware
from tlsbench.builder.shell import BuildError
from tlsbench.core import libraries, targets
from tlsbench.core.boards import Board, board, boards
from tlsbench.core.errors import UserError
from tlsbench.core.spec import SPEC_DIR
from tlsbench.run.cycles import count_groups
from tlsbench.run.endpoints.firmware import DeviceError, FirmwareImage

PUBLISHED = SPEC_DIR / "cycles" / "published.toml"
MODEL = SPEC_DIR / "cycles" / "model.toml"
REFERENCE = "mbedtls@3.6+p256m"  # the workload a board's CPI is measured on: P-256 as TLS runs it
REFERENCE_EXPERIMENTS = ("ecdh-p256", "ecdsa-p256")  # its four operations: what a handshake spends most on
REPETITIONS = 2  # of each experiment: counts differ only through random keys and nonces (0.1-0.3%)
REQUIRED = ("id", "board", "library", "experiment", "group", "source")
OPTIONAL = ("note", "not_reproducible", "config")
VALIDATION, CALIBRATION, NOT_COMPARABLE = "validation", "calibration", "not comparable"  # a result's role


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
    not_reproducible: str = ""  # why the published build is not the one run here ("": it is)
    config: str = ""  # the library's config header, relative to the repository ("": the build's own)

    @property
    def config_path(self) -> Path | None:
        return firmware.REPO / self.config if self.config else None

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
    role: str  # VALIDATION, CALIBRATION or NOT_COMPARABLE (published build not reproducible here)
    source: str
    note: str
    not_reproducible: str = ""


@dataclass
class Validation:
    results: list[Result] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {id, reason}

    @property
    def band(self) -> Band | None:
        """The model's error: comparable rows (the published build is the one run here) only."""
        return band_of([r.error for r in self.results if r.role == VALIDATION])

    @property
    def all_rows_band(self) -> Band | None:
        """Beside it: every row not used for calibration, not comparable ones included."""
        return band_of([r.error for r in self.results if r.role != CALIBRATION])

    def to_json(self) -> dict:
        b, every = self.band, self.all_rows_band
        return {"rows": [asdict(r) for r in self.results], "skipped": self.skipped,
                "summary": {"median_abs_error": b.median if b else None, "worst_abs_error": b.worst if b else None,
                            "validation_rows": b.rows if b else 0,
                            "calibration_rows": [r.id for r in self.results if r.role == CALIBRATION],
                            "not_comparable_rows": [r.id for r in self.results if r.role == NOT_COMPARABLE],
                            "all_rows": {"median_abs_error": every.median if every else None,
                                         "worst_abs_error": every.worst if every else None,
                                         "rows": every.rows if every else 0}}}


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
        unknown = set(r) - set(REQUIRED) - {"cycles", "ms", *OPTIONAL}
        if unknown:
            raise TableError(f"{where}: unknown field {', '.join(sorted(unknown))}")
        out.append(Row(**{k: r[k] for k in r}))
    ids = [r.id for r in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise TableError(f"{path.name}: row id {', '.join(twice)} given twice")
    return out


class _Runs:
    """Each (library build, board) boots once: the device firmware of the build on the emulated
    target of the board's core, its primitive experiments counted under the plugin with the
    board's cache geometry; each group's counts, averaged over its repetitions."""

    def __init__(self, cache: Path | None, experiments: tuple[str, ...]):
        self.cache, self.experiments = cache, experiments
        self.done: dict[tuple[str, Path | None, str], dict[str, Mapping[str, float]]] = {}

    def groups(self, library: str, b: Board, config: Path | None = None) -> dict[str, Mapping[str, float]]:
        key = (library, config, b.name)
        if key not in self.done:
            target = targets.load().emulated[b.core.target]
            build = firmware.ensure_firmware(firmware.FirmwareRequest.of_target(target.name, config, library))
            image = build.image("counting")
            counted = count_groups(target, FirmwareImage(image.variant, image.path, image.sha256),
                                   tool.plugin(self.cache), b.memory.plugin_args(), self.experiments, REPETITIONS)
            self.done[key] = {f"{e}/{g}": c.counts for (e, g), c in counted.items()}
        return self.done[key]


def _skip_reason(row: Row) -> str | None:
    if row.board not in boards():
        return f"unknown board {row.board!r} (spec/boards.toml declares {', '.join(boards())})"
    build = libraries.load().device_build(row.library)
    if build is None:
        known = ", ".join(b.name for b in libraries.load().device)
        return f"unknown build {row.library!r} (the device library builds: {known})"
    target = targets.load().emulated[board(row.board).core.target]
    if not build.builds_for(target.arch.name):
        return (f"{row.library} does not build for {target.name} ({board(row.board).core.name}): spec/libraries.toml "
                f"declares it for {', '.join(build.arch)}")
    if row.config_path is not None and not row.config_path.is_file():
        return f"no config header {row.config} in the repository"
    return None


def _runs(rows: list[Row], cache: Path | None) -> _Runs:
    return _Runs(cache, tuple(dict.fromkeys([*REFERENCE_EXPERIMENTS, *(r.experiment for r in rows)])))


def validate(rows: list[Row], cache: Path | None = None, factors: Mapping[str, float] | None = None,
             runs: _Runs | None = None) -> Validation:
    """Every row predicted and compared; `factors` (core -> k) default to the fitted model's."""
    runs, out = runs or _runs(rows, cache), Validation()
    k_of = dict(fitted().factors if factors is None else factors)
    calibration = {c.calibration_row for c in {b.core.name: b.core for b in boards().values()}.values()}
    for row in rows:
        reason = _skip_reason(row)
        b = board(row.board) if reason is None else None
        if b is not None:
            try:
                ops = runs.groups(row.library, b, row.config_path)
            except (BuildError, DeviceError) as exc:
                reason = (f"{row.library} does not build or run on {b.core.target} ({b.core.name}): "
                          f"{str(exc).splitlines()[0]}")
            else:
                name = f"{row.experiment}/{row.group}"
                if name not in ops:
                    reason = (f"the {row.library} firmware has no experiment group {name} (counted: "
                              f"{', '.join(ops) or 'none'}; `tlsbench experiments` lists the primitives' groups)")
        if reason or b is None:
            out.skipped.append({"id": row.id, "reason": reason or "?"})
            continue
        counts = ops[name]
        predicted = k_of.get(b.core.name, 1.0) * raw_cycles(counts, b)
        published = row.published_cycles(b)
        role = NOT_COMPARABLE if row.not_reproducible else CALIBRATION if row.id in calibration else VALIDATION
        out.results.append(Result(row.id, b.name, b.clock_mhz, row.library, row.experiment, row.group,
                                  counts["instructions"], predicted, published, error(predicted, published),
                                  role, row.source, row.note, row.not_reproducible))
    if not out.results:
        raise NothingRan("no row of the table could run: " + "; ".join(f"{s['id']}: {s['reason']}" for s in out.skipped))
    return out


def fit(rows: list[Row], cache: Path | None = None) -> tuple[Validation, str]:
    """Calibrates each core on its calibration row (raw model, factor = published / model),
    validates every other row with those factors, and measures each board's CPI on the
    reference workload: (the validation, the text of spec/cycles/model.toml)."""
    by_id = {r.id: r for r in rows}
    runs = _runs(rows, cache)
    factors, lines = {}, []
    for core in {b.core.name: b.core for b in boards().values()}.values():
        row = by_id.get(core.calibration_row or "")
        if row is None:
            continue
        if row.not_reproducible:
            raise TableError(f"{core.name} calibrates on {row.id}, a row whose published build is not the one run "
                             f"here ({row.not_reproducible}): name a comparable row in spec/cores.toml")
        b = board(row.board)
        counts = runs.groups(row.library, b, row.config_path)[f"{row.experiment}/{row.group}"]
        factors[core.name] = row.published_cycles(b) / raw_cycles(counts, b)
        lines += [f"[core.{core.name}]", f"factor = {factors[core.name]:.4f}", f'calibrated_on = "{row.id}"', ""]
    result = validate(rows, cache, factors, runs)
    spread: list[float] = []  # |CPI(group) / CPI(reference) - 1| of every other code's group, on its board
    for b in boards().values():
        if _skip_reason(Row("", b.name, REFERENCE, "", "", "")):
            continue
        try:
            groups = runs.groups(REFERENCE, b)
        except (BuildError, DeviceError):
            continue  # no firmware of the reference build for this core: its board has no CPI (said when used)
        ops = [groups[name] for name in groups if name.split("/")[0] in REFERENCE_EXPERIMENTS]
        total = {f: sum(o.get(f, 0) for o in ops) for f in ops[0]}
        k = factors.get(b.core.name, 1.0)
        cpi = k * raw_cycles(total, b) / total["instructions"]
        lines += [f"[board.{b.name}]", f"cpi = {cpi:.4f}", ""]
        spread += [abs(k * raw_cycles(c, b) / c["instructions"] / cpi - 1)
                   for (library, config, name), counted in runs.done.items()
                   if name == b.name and (library, config) != (REFERENCE, None) for c in counted.values()]
    band, code = result.band, band_of(spread)
    head = ["# SPDX-License-Identifier: Apache-2.0",
            "# Written by `tlsbench validate cycles --write-model` (app/validate.py): do not edit by hand.",
            "# core factor: published / model of the core's ONE calibration row (spec/cores.toml);",
            f"# board cpi: modelled cycles per instruction of {REFERENCE}'s four P-256 operations (the device",
            "# firmware's ecdh-p256 and ecdsa-p256 groups) on the board; band: |error| over the published rows",
            "# not used for calibration whose build is the one run here (spec/cycles/published.toml);",
            "# code_spread: |CPI(group) / board cpi - 1| over every other code's group counted on the board:",
            "# how far the CPI moves with the code, added to the band of a device run's estimate.",
            f'reference = "{REFERENCE}"', ""]
    if band:
        head += ["[band]", f"median = {band.median:.4f}", f"worst = {band.worst:.4f}", f"rows = {band.rows}", ""]
    if code:
        head += ["[code_spread]", f"median = {code.median:.4f}", f"worst = {code.worst:.4f}", f"groups = {code.rows}",
                 ""]
    return result, "\n".join(head + lines)
