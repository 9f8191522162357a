# SPDX-License-Identifier: Apache-2.0
"""Terminal views of the host tool (rich): suite tables, the run's progress bar,
status tables and run summaries. Pure presentation: no decisions are made here."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from tlsbench.run.controller import RunSummary, budget_text
from tlsbench.run.exchange import AgentRef
from tlsbench.store.progress import ExperimentStatus

SUITE_COLUMNS = ("name", "key_exchange", "authentication", "cipher", "mac")
# HELLO fields that say which build an agent is (for `tlsbench suites --json`).
AGENT_FACTS = ("agent", "library", "library_name", "library_version", "step_granularity")


def agent_facts(hello: Mapping[str, Any]) -> dict[str, Any]:
    return {k: hello.get(k) for k in AGENT_FACTS} | ({"device": hello["device"]} if "device" in hello else {})


def suites_table(hello: Mapping[str, Any], suites: Sequence[Mapping[str, Any]]) -> Table:
    device = hello.get("device") or {}
    where = f" on {device.get('target')} ({device.get('cpu')})" if device else ""
    title = (f"{hello.get('agent', '?')}{where}: {hello.get('library_name', hello.get('library', '?'))} "
             f"{hello.get('library_version', '')}, steps per {hello.get('step_granularity', '?')}: "
             f"{len(suites)} suites (credentials: the first is what auto picks)")
    table = Table(title=title, box=None)
    table.add_column("id", justify="right", no_wrap=True)
    for col in SUITE_COLUMNS:
        table.add_column(col, no_wrap=col == "name")
    table.add_column("versions")
    table.add_column("dtls")
    table.add_column("credentials")
    for s in suites:
        versions = s["min_version"] if s["min_version"] == s["max_version"] else f"{s['min_version']}-{s['max_version']}"
        creds = ", ".join(s.get("credentials", [])) or f"[red]cannot run: {escape(str(s.get('why_unsupported', '?')))}[/]"
        table.add_row(f"0x{s['id']:04X}", *[str(s.get(c, "")) for c in SUITE_COLUMNS], versions,
                      "yes" if s.get("dtls") else "no", creds)
    return table


class ProgressObserver:
    """A progress bar with ETA and the configuration being measured."""

    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=console, transient=False)
        self.task = None

    def __enter__(self) -> "ProgressObserver":
        return self  # the bar appears when measuring starts: a refused start draws nothing

    def __exit__(self, *exc: Any) -> None:
        if self.task is not None:
            self.progress.stop()

    def start(self, total: int, done: int, configs: int) -> None:
        if done:
            self.console.print(f"resuming: {done} of {total} repetitions already stored")
        self.console.print(f"{configs} configurations, {total} repetitions planned")
        self.progress.start()
        self.task = self.progress.add_task("starting", total=total, completed=done)

    def batch(self, config: str, round: int, first_index: int, count: int) -> None:
        what = " ".join(config.split("|")[:2])  # library and suite: rounds interleave libraries
        self.progress.update(self.task, description=f"round {round + 1} {what[:56]:<56}")

    def stored(self, config: str, idx: int, status: str, agent: AgentRef) -> None:
        self.progress.advance(self.task)

    def note(self, message: str) -> None:
        self.console.print(message, style="yellow", markup=False, highlight=False)

    def extend(self, extra: int) -> None:
        task = next(t for t in self.progress.tasks if t.id == self.task)
        self.progress.update(self.task, total=(task.total or 0) + extra)


def print_summary(console: Console, summary: RunSummary, resume_command: str) -> None:
    for line in summary.not_runnable:
        console.print(f"[yellow]not runnable in this agent:[/] {escape(line)}")
    for why, n in summary.not_applicable.items():
        console.print(f"[dim]skipped {n} matrix cell(s): {escape(why)}[/]")
    for key, why in summary.skipped_configs.items():
        console.print(f"[red]skipped[/] {escape(key)}: {escape(why)}")
    console.print(f"stored {summary.stored} repetitions in {summary.seconds:.1f} s "
                  f"({summary.failed} failed, {summary.agent_deaths} agent deaths) into {escape(str(summary.folder))}")
    if summary.budget:
        console.print(escape(budget_text(summary.budget)), style="yellow", highlight=False)
    if summary.interrupted:
        console.print(f"[yellow]interrupted: the store is consistent; resume with:[/] {escape(resume_command)}")


def status_tables(st: ExperimentStatus, all_configs: bool) -> list[Table]:
    head = Table(title=f"{st.name}  ({escape(str(st.folder))}, created {st.created_at}, seed {st.seed}, "
                       f"{st.agents} agent process(es))")
    for col in ("configs", "skipped", "stored", "planned", "failed", "flagged"):
        head.add_column(col, justify="right")
    skipped = sum(1 for c in st.configs if c.skip_reason)
    head.add_row(str(len(st.configs)), str(skipped), str(st.stored), str(st.planned), str(st.failed), str(st.flagged))
    rounds = Table(title="per round")
    for col in ("round", "stored", "planned", "done"):
        rounds.add_column(col, justify="right")
    for r in st.rounds:
        done = "✓" if r.stored >= r.planned else f"{100 * r.stored / max(r.planned, 1):.0f}%"
        rounds.add_row(str(r.round + 1), str(r.stored), str(r.planned), done)
    configs = Table(title="configurations" if all_configs else "configurations needing attention", box=None)
    for col, just in (("id", "right"), ("library", "left"), ("suite", "left"), ("group", "left"), ("credential", "left"),
                      ("payload", "left"), ("stored", "right"), ("planned", "right"), ("failed", "right"),
                      ("flagged", "right"), ("note", "left")):
        configs.add_column(col, justify=just, no_wrap=col == "suite")
    for c in st.configs:
        if all_configs or c.failed or c.flagged or c.skip_reason:
            configs.add_row(str(c.id), c.library, c.suite, c.group, c.credential, c.payload, str(c.stored), str(c.planned),
                            str(c.failed), str(c.flagged), escape(c.skip_reason or ""))
    return [head, rounds] + ([configs] if configs.row_count else [])


def experiments_table(hello: Mapping[str, Any]) -> Table:
    """An agent's experiments (HELLO `experiments`): primitives, then user experiments."""
    listed = hello.get("experiments", [])
    table = Table(title=f"{hello.get('agent', '?')}: {hello.get('library_name', hello.get('library', '?'))} "
                        f"{hello.get('library_version', '')}: {len(listed)} experiments", box=None)
    for col, just in (("id", "right"), ("name", "left"), ("source", "left"), ("groups", "left"),
                      ("sizes (bytes)", "left"), ("what it measures", "left")):
        table.add_column(col, justify=just, no_wrap=col == "name")
    for e in listed:
        table.add_row(str(e["id"]), e["name"], e.get("source", ""), ", ".join(e.get("groups", [])),
                      ", ".join(str(s) for s in e.get("sizes", [])) or "–", e.get("description", ""))
    return table
