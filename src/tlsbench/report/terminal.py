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

from tlsbench.analysis.questions.coverage import Coverage, Unmeasured, reasons_text
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


def print_summary(console: Console, summary: RunSummary, resume_command: str, coverage: Coverage) -> None:
    """The run's closing lines: what was not measured and why, what was stored, what the
    statistics leave out."""
    for why, names in _by_reason(coverage.unmeasured).items():
        console.print(f"[yellow]not measured[/] ({escape(why)}): {escape(', '.join(names))}")
    console.print(f"stored {summary.stored} repetitions in {summary.seconds:.1f} s "
                  f"({summary.failed} failed, {summary.agent_deaths} agent deaths) into {escape(str(summary.folder))}")
    if coverage.excluded:
        console.print(f"[yellow]excluded from statistics:[/] {sum(coverage.excluded.values())} of {coverage.stored} "
                      f"stored repetitions ({escape(reasons_text(coverage.excluded))})")
    if coverage.unjudged:
        console.print(f"[dim]{_unjudged(coverage)}[/]")
    if summary.budget:
        console.print(escape(budget_text(summary.budget)), style="yellow", highlight=False)
    if summary.interrupted:
        console.print(f"[yellow]interrupted: the store is consistent; resume with:[/] {escape(resume_command)}")


def _by_reason(unmeasured: Sequence[Unmeasured]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for u in unmeasured:
        out.setdefault(u.why, []).append(u.name)
    return out


def _unjudged(coverage: Coverage) -> str:
    return (f"{coverage.unjudged} repetition(s) without stored summaries are not judged descheduled yet: the end of "
            "the sweep or `tlsbench derive` stores them")


def status_tables(st: ExperimentStatus, all_configs: bool, coverage: Coverage) -> list[Table]:
    head = Table(title=f"{st.name}  ({escape(str(st.folder))}, created {st.created_at}, seed {st.seed}, "
                       f"{st.agents} agent process(es))")
    for col in ("configs", "not measured", "stored", "planned", "failed", "flagged", "excluded"):
        head.add_column(col, justify="right")
    excluded = coverage.excluded
    head.add_row(str(len(st.configs)), str(len(coverage.unmeasured)), str(st.stored), str(st.planned), str(st.failed),
                 str(st.flagged), str(sum(excluded.values())))
    if excluded or coverage.unjudged:
        head.caption = escape("excluded from statistics: " + (reasons_text(excluded) or "none")
                              + (f"; {_unjudged(coverage)}" if coverage.unjudged else ""))
    rounds = Table(title="per round")
    for col in ("round", "stored", "planned", "done"):
        rounds.add_column(col, justify="right")
    for r in st.rounds:
        done = "✓" if r.stored >= r.planned else f"{100 * r.stored / max(r.planned, 1):.0f}%"
        rounds.add_row(str(r.round + 1), str(r.stored), str(r.planned), done)
    configs = Table(title="configurations" if all_configs else "configurations needing attention", box=None)
    for col, just in (("id", "right"), ("library", "left"), ("suite", "left"), ("group", "left"), ("credential", "left"),
                      ("payload", "left"), ("stored", "right"), ("planned", "right"), ("failed", "right"),
                      ("flagged", "right"), ("excluded", "right"), ("note", "left")):
        configs.add_column(col, justify=just, no_wrap=col == "suite")
    for c in st.configs:
        x = coverage.found.get(c.id)
        lost = x.excluded if x else 0
        note = "; ".join(n for n in (c.skip_reason, x.no_data if x and x.stored and not x.used else "") if n)
        if all_configs or c.failed or c.flagged or note or (x is not None and x.heavy):
            configs.add_row(str(c.id), c.library, c.suite, c.group, c.credential, c.payload, str(c.stored), str(c.planned),
                            str(c.failed), str(c.flagged), str(lost), escape(note))
    cells = Table(title="not measured", box=None)
    for col in ("configuration or matrix cell", "why"):
        cells.add_column(col)
    for u in coverage.unmeasured:
        cells.add_row(escape(u.name), escape(u.why))
    return [head, rounds] + [t for t in (configs, cells) if t.row_count]


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
