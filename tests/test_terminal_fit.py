# SPDX-License-Identifier: Apache-2.0
"""Terminal output that fits: tables whole in a pipe and readable at 80 columns, a progress
line whose numbers stay whole at 80 columns, -o never taken for a file."""
from __future__ import annotations

import io
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from analysis_support import GOLDEN_DB
from tlsbench.analysis.questions.coverage import Coverage, Unmeasured
from tlsbench.cli import main
from tlsbench.report import terminal
from tlsbench.run.controller import RunSummary

LONG = "TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256"


def _table() -> Table:
    t = Table(title="suites", caption="2 of 2")
    t.add_column("id", justify="right", no_wrap=True)
    for col in ("name", "key_exchange", "authentication", "cipher", "credentials"):
        t.add_column(col)
    t.add_row("0xCCA9", LONG, "ECDHE", "ECDSA", "CHACHA20-POLY1305", "ecdsa-p256, ecdsa-p384")
    t.add_row("0xC0A8", "TLS-PSK-WITH-AES-128-CCM-8", "PSK", "PSK", "AES-128-CCM-8", "[red]psk[/]")
    return t


def _shown(terminal_: bool, width: int) -> str:
    out = io.StringIO()
    terminal.show(Console(file=out, width=width, force_terminal=terminal_, color_system=None), _table())
    return out.getvalue()


def test_a_piped_table_is_plain_lines_with_whole_names():
    text = _shown(False, 80)
    rows = [line for line in text.splitlines() if "0x" in line]
    assert len(rows) == 2 and LONG in rows[0] and "ecdsa-p256, ecdsa-p384" in rows[0] and "…" not in text
    assert rows[1].split()[:2] == ["0xC0A8", "TLS-PSK-WITH-AES-128-CCM-8"] and "[red]" not in text
    assert text.splitlines()[0] == "suites" and text.splitlines()[-1] == "2 of 2"


def test_a_terminal_table_never_cuts_a_word():
    """Wide enough for its longest words: the table, within the width; narrower: a row a line
    (the terminal wraps it), never "P…"."""
    wide = _shown(True, 200)
    assert "…" not in wide and LONG in wide and max(map(len, wide.splitlines())) <= 200 and "━" in wide
    narrow = _shown(True, 80)
    assert "…" not in narrow and any(LONG in line and "ecdsa-p256, ecdsa-p384" in line for line in narrow.splitlines())


def test_the_progress_line_keeps_its_numbers_at_80_columns():
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    bar = terminal.ProgressObserver(console)
    bar.start(7620, 0, 127)
    bar.batch(f"mbedtls|{LONG}|ecdsa-p256", 95, 0, 60)
    for _ in range(3):
        bar.stored("x", 0, "ok", None)
    bar.progress.refresh()
    bar.progress.stop()
    line = [l for l in out.getvalue().splitlines() if "round 96" in l][-1]
    assert len(line) <= 80 and re.search(r"3/7620", line) and "ETA" in line


def test_a_run_with_everything_stored_draws_no_bar():
    """Running a finished experiment again (a second `make run`) says so and draws no bar with an
    unknown ETA."""
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    with terminal.ProgressObserver(console) as bar:
        bar.start(62, 62, 62)
    assert out.getvalue().strip() == "all 62 repetitions of the 62 configurations are already stored"


def test_the_closing_lines_name_a_few_of_each_reason():
    """A matrix lane that does not fit leaves hundreds of configurations unmeasured: the closing
    lines name a few per reason and how to list every one, not hundreds of keys."""
    unfit = [Unmeasured(f"wolfssl-5.7|suite-{i}|target:qemu-mps3-an547", "does not fit in flash") for i in range(164)]
    out = io.StringIO()
    console = Console(file=out, width=400, color_system=None)
    terminal.print_summary(console, RunSummary(folder=Path("results/cores")), "tlsbench run --resume",
                           Coverage(unfit + [Unmeasured("mbedtls|psk", "refused")]))
    text = out.getvalue()
    assert "suite-2|" in text and "suite-3|" not in text
    assert "and 161 more (`tlsbench status results/cores --all` names each)" in text
    assert "not measured (refused): mbedtls|psk" in text


def test_output_option_refuses_a_file_name(tmp_path):
    out = CliRunner().invoke(main, ["report", str(GOLDEN_DB), "-o", str(tmp_path / "rep.html")])
    assert out.exit_code == 2 and "--out FILE" in out.output and not list(tmp_path.iterdir())
