# SPDX-License-Identifier: Apache-2.0
"""The tlsbench command line: a table of contents of the pipeline.

    plan (TOML) -> run (controller, agents, store) -> status / trace -> report / export

`main` is the error boundary of every command; the commands live in this package's modules
(run.py, report.py, energy.py, build.py), each a few calls into the stage that does the work."""
from __future__ import annotations

import datetime
import importlib
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from tlsbench import __version__
from tlsbench.core import files
from tlsbench.cli.options import fail
from tlsbench.core.errors import UserError

err_console = Console(stderr=True)
# click's own ways out (usage errors, --help, exit codes): click reports them itself.
CLICK_EXITS = (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort)
TRACEBACK_PREFIX = "tlsbench-traceback-"

def _traceback_file(exc: BaseException) -> Path | None:
    """Writes the traceback of an unexpected error where it can (the temporary folder, else
    ~/.cache/tlsbench); None when no place takes it (a full disk)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = f"tlsbench {__version__}, {' '.join(sys.argv)}\n\n" + "".join(traceback.format_exception(exc))
    for folder in (Path(tempfile.gettempdir()), Path.home() / ".cache" / "tlsbench"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return files.write_output(folder / f"{TRACEBACK_PREFIX}{stamp}-{os.getpid()}.txt", text)
        except (OSError, files.OutputError):
            continue
    return None


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def unexpected(exc: Exception) -> NoReturn:
    """A failure no check foresaw: one line (with the disk's advice when the disk caused it),
    the traceback in a file for the bug report."""
    advice = files.disk_advice(exc)
    where = _traceback_file(exc)
    kept = f"the full traceback is in {where}" if where else "the traceback could not be saved either"
    what = advice or f"unexpected {type(exc).__name__}: {_one_line(str(exc))}"
    fail(f"{what} ({kept}; please report it if the cause is not yours)")


class Group(click.Group):
    """The error boundary of every command (those attached from report/, energy/ and build
    included): user errors become one plain line, unexpected ones one line and a traceback
    file; never a traceback on the terminal. Its commands are COMMANDS."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, function = COMMANDS[name].split(":")
        return getattr(importlib.import_module(f"tlsbench.cli.{module}"), function)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except CLICK_EXITS:
            raise
        except UserError as exc:  # what a user can act on: one clear message, exit status 1
            fail(str(exc))
        except BrokenPipeError:  # the reader of our output left (`| head`): stop quietly, as rich does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except KeyboardInterrupt:  # Ctrl-C (a second one for run): what is left, and what to do
            advice = INTERRUPTED.get(ctx.invoked_subcommand or "", INTERRUPTED_ELSE)
            err_console.print(f"stopped at once; {advice}", style="yellow", markup=False, highlight=False,
                              soft_wrap=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the boundary: nothing else may reach the terminal
            unexpected(exc)


@click.group(cls=Group)
@click.version_option(__version__, prog_name="tlsbench")
def main() -> None:
    """Measure what TLS costs on a constrained device, per handshake step and crypto operation."""


# What a command stopped at once by Ctrl-C leaves, and what to do next, in its own words (an
# option named here is one it has: tests/test_foreseen.py): a store write is one transaction
# and an output file is replaced only when whole. `run` and `primitives` stop after the batch
# under way at the first Ctrl-C and print the command that resumes; this is a second one's.
AGAIN = "no output file was replaced by a partial one: run the same command again"
RESUMES = "every stored repetition is intact: run the same command again and it resumes where it stopped"
READS = "nothing was stored: run the same command again"
BUILDS = "finished builds stay in the cache: run the same command again to finish"
INTERRUPTED = {
    "suites": READS, "experiments": READS, "plan": READS, "run": RESUMES, "primitives": RESUMES,
    "status": READS, "trace": READS, "derive": "what it stored stays valid: run derive again to finish",
    "report": AGAIN, "matrix": AGAIN, "export": AGAIN, "compare": AGAIN, "predict": AGAIN,
    "energy": "a capture is stored whole or not at all: run the same command again", "build": BUILDS, "libs": BUILDS,
    "clean": "what was removed is gone, the rest is untouched: run clean again to finish",
    "store": "a push is one transaction, stored whole or not at all: run the same command again",
    "history": READS, "validate": AGAIN,
    "remote": "a refused or dropped connection started no agent: run the same command again",
    "worker": "every stored repetition is intact and the batch under way goes to another worker when its lease runs "
              "out: start the worker again",
}
INTERRUPTED_ELSE = "run the same command again"


# The table of contents: every command in pipeline order, and the module and function that
# hold it (this package's modules); a command's module loads when that command runs, so one
# command never waits for the imports of the others.
COMMANDS = {
    "suites": "run:suites", "experiments": "run:experiments_command", "plan": "run:plan_group", "run": "run:run",
    "primitives": "run:primitives", "status": "run:status_command", "trace": "run:trace",
    "derive": "report:derive", "report": "report:report", "matrix": "report:matrix", "export": "report:export",
    "compare": "report:compare",
    "energy": "energy:energy", "predict": "predict:predict", "build": "build:build_group", "libs": "build:libs",
    "clean": "clean:clean", "store": "fleet:store_group", "worker": "fleet:worker", "remote": "fleet:remote_group",
    "history": "fleet:history", "validate": "validate:validate",
}
