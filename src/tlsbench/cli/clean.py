# SPDX-License-Identifier: Apache-2.0
"""`tlsbench clean`: what killed commands left behind, removed now rather than at their next
start (docs/host.md "Kills"). What a live process owns is never touched: a file or namespace
names its owner's PID, and a folder whose store a writer holds is skipped whole."""
from __future__ import annotations

import os
from pathlib import Path

import click

from tlsbench.cli.options import agent_dir_option
from tlsbench.core.files import remove_stale
from tlsbench.run.link import remove_orphans
from tlsbench.store.locator import locate


@click.command()
@click.argument("folder", default=".", type=click.Path(file_okay=False, exists=True))
@agent_dir_option
def clean(folder: str, agent_dir: str | None) -> None:
    """Remove what killed commands left: the hidden temporary files of outputs (reports, exports,
    figures) under FOLDER (default: here), the network namespaces and forwarder files of killed
    link runs; say what was removed."""
    done = []
    for here, subfolders, _ in os.walk(folder):
        pid = locate(Path(here)).lock.holder()
        if pid is not None:
            done.append(f"left {here} alone: its store is being written by PID {pid}")
            subfolders.clear()
            continue
        done += [f"removed {path}" for path in remove_stale(Path(here))]
    done += remove_orphans(agent_dir)
    for line in done:
        click.echo(line)
    removed = sum(line.startswith("removed") for line in done)
    click.echo(f"clean: {removed} removed" if removed else "clean: nothing left behind by a killed command")
