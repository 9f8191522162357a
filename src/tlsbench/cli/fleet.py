# SPDX-License-Identifier: Apache-2.0
"""Commands of a fleet (docs/fleet.md): `store push` merges a SQLite experiment into a shared
PostgreSQL store, `worker` runs the batches of queued experiments from one, `history` reads
it across experiments, `remote` serves agents to other machines behind mutual TLS; and the
fleet's tables of `status --store`. Each a few calls into app/worker.py, run/remote.py and
store/postgres/."""
from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from tlsbench.cli.options import (STORE_ENV, agent_dir_option, note_line, output_option, remote_bridge,
                                  remote_options, store_location, timeout_option)
from tlsbench.core.errors import UserError
from tlsbench.plan.device import TARGETS
from tlsbench.run.timeouts import Timeouts

console = Console()
store_url_option = click.option("--store", "url", required=True, envvar=STORE_ENV, metavar="URL",
                                help=f"The shared PostgreSQL store (default ${STORE_ENV}).")


def _checked(url: str) -> str:
    """The URL, or one clear line when it is not a PostgreSQL store's."""
    from tlsbench.store.locator import POSTGRES

    if not url.startswith(POSTGRES):
        raise UserError(f"--store takes a postgresql:// URL (user@host/database), not {url!r} (docs/fleet.md)")
    return url


@click.group(name="store")
def store_group() -> None:
    """Shared stores: what SQLite experiments add to one."""


@store_group.command(name="push")
@click.argument("experiment")
@click.argument("url", metavar="postgresql://...[#NAME]")
@output_option
def store_push(experiment: str, url: str, output: str | None) -> None:
    """Merge a SQLite experiment into a shared store (under #NAME, default its own name); pushing
    it again adds only what is new."""
    from tlsbench.store.locator import in_store
    from tlsbench.store.postgres.push import push
    from tlsbench.store.sqlite import SqliteLocation

    source = store_location(experiment, output)
    if not isinstance(source, SqliteLocation):
        raise UserError(f"{source} is not a SQLite experiment: push takes an experiment folder, name or tlsbench.db")
    stored = source.stored_experiment()
    if stored is None:
        raise UserError(f"{source} holds no experiment yet: nothing to push")
    name = url.partition("#")[2] or stored.name
    target = in_store(name, url)
    summary = push(source.path, target)  # type: ignore[arg-type]
    added = ", ".join(f"{n} {t}" for t, n in summary.added.items() if n) or "nothing new"
    console.print(f"pushed {source} to {target}: {added}", highlight=False, markup=False)


@click.command()
@store_url_option
@click.option("--device", "target", type=click.Choice(TARGETS), metavar="TARGET",
              help="Run batches of plans with this [device] target (its firmware on QEMU); default: host agents.")
@click.option("--place", metavar="NAME", help="Run batches of plans whose [device] place is this labgrid place.")
@click.option("--library", "libraries", multiple=True, metavar="NAME",
              help="A library whose batches it takes (repeatable); default: every library with an agent here.")
@click.option("--name", default="", help="The worker's name in status (default host:pid).")
@click.option("--device-name", "device", default="", metavar="NAME",
              help="The device its results are measured on (default: this host's name, or TARGET@host): an "
                   "experiment is measured on one device, the first that takes a batch of it.")
@click.option("--lease", "lease_s", type=click.FloatRange(min=1), default=60.0, show_default=True, metavar="SECONDS",
              help="A batch whose worker is silent this long goes to another worker.")
@click.option("--wait", is_flag=True, help="When the queue is empty, wait for more work instead of ending.")
@remote_options
@agent_dir_option
@timeout_option
def worker(url: str, target: str | None, place: str | None, libraries: tuple[str, ...], name: str, device: str,
           lease_s: float, wait: bool, remote: str, keys: str, agent_dir: str | None, timeouts: Timeouts) -> None:
    """Take batches of queued experiments (`run --enqueue --store`) from a shared store and run
    them here, one repetition per transaction, until the queue is empty (docs/fleet.md)."""
    import signal

    from tlsbench.app.worker import Worker
    from tlsbench.run.exchange import STOPPING

    _checked(url)
    if target and place:
        raise click.UsageError("--device or --place: a worker runs one kind of device")
    target = f"place {place}" if place else target
    remote_bridge(remote, keys)
    runner = Worker(url, target, libraries, name, device, remote, keys, agent_dir, timeouts, lease_s, wait, note_line)
    for sig in STOPPING:
        signal.signal(sig, runner.stop)
    done = runner.run()
    console.print(f"worker {runner.name}: {done.batches} batches, {done.stored} repetitions stored "
                  f"({done.failed} failed, {done.again} already stored by another worker) in {done.seconds:.1f} s, "
                  f"{done.database_s:.2f} s of it in the database; {done.reason}",
                  highlight=False, markup=False)


def fleet_tables(url: str) -> list[Table]:
    """`tlsbench status --store URL`: per worker what it runs and its rate; per experiment
    what is done, failed and left, and when it ends at the running workers' rate."""
    from tlsbench.app.worker import fleet_status

    workers, queues = fleet_status(url)
    people = Table(title="workers")
    for head in ("id", "name", "host", "device", "state", "running", "batches", "stored", "failed", "rep/s"):
        people.add_column(head)
    for w in workers:
        people.add_row(str(w.id), w.name, w.host, w.device, w.state, w.running, str(w.batches), str(w.stored),
                       str(w.failed), f"{w.rate:.2f}")
    rate = sum(w.rate for w in workers if w.state == "running")
    work = Table(title="queued experiments")
    for head in ("experiment", "device", "batches done", "stored/planned", "failed", "handed out again", "ETA"):
        work.add_column(head)
    for q in queues:
        left = max(q.repetitions - q.stored, 0)
        eta = "done" if left == 0 else (f"{left / rate:.0f} s" if rate > 0 else "no worker running")
        work.add_row(q.experiment, q.target, f"{q.batches_done}/{q.batches}", f"{q.stored}/{q.repetitions}",
                     str(q.failed), str(q.handed_again), eta)
    return [people, work]


@click.group(name="remote")
def remote_group() -> None:
    """Agents on other machines behind mutually authenticated TLS (docs/fleet.md)."""


keys_option = click.option("--keys", "keys", required=True, type=click.Path(file_okay=False), metavar="DIR",
                           help="The fleet's key folder (`tlsbench remote keys DIR`).")


@remote_group.command(name="keys")
@click.argument("folder", type=click.Path(file_okay=False))
def remote_keys(folder: str) -> None:
    """Make a fleet's keys in FOLDER: an authority, the agents' and the controllers' pairs. A
    device needs ca.pem, agent.pem and agent.key; a controller ca.pem and its own pair."""
    from pathlib import Path

    from tlsbench.run.remote import make_keys

    keys = make_keys(Path(folder))
    console.print(f"fleet keys in {keys.folder}: keep ca.key apart; copy ca.pem, agent.pem and agent.key to each "
                  "device", highlight=False, markup=False)


@remote_group.command(name="serve")
@click.option("--listen", required=True, metavar="HOST:PORT",
              help="The address to listen on (required: an agent is never reachable on every interface unasked).")
@keys_option
@click.option("--library", "libraries", multiple=True, metavar="NAME",
              help="A library whose agent it serves (repeatable); default: every one found here.")
@agent_dir_option
def remote_serve(listen: str, keys: str, libraries: tuple[str, ...], agent_dir: str | None) -> None:
    """Serve this machine's agents to authenticated controllers: each connection that shows the
    fleet's controller certificate gets the agent it names; every other is refused and logged."""
    from pathlib import Path

    from tlsbench.app.worker import found_libraries
    from tlsbench.run.agents import find_agent
    from tlsbench.run.remote import FleetKeys, Server, parse_address

    paths = [find_agent(lib, agent_dir) for lib in libraries or found_libraries(agent_dir)]
    server = Server(parse_address(listen), FleetKeys(Path(keys)), {p.name: p for p in paths})
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print(f"served {server.served}, refused {server.refused} connection(s)", highlight=False)


@remote_group.command(name="connect", hidden=True)
@click.argument("address", metavar="HOST:PORT")
@keys_option
@click.argument("command", nargs=-1, required=True)
def remote_connect(address: str, keys: str, command: tuple[str, ...]) -> None:
    """The bridge a run starts in place of a host agent: stdin and stdout are the remote
    agent's (COMMAND is how the agent would start here: its file name names it)."""
    import sys
    from pathlib import Path

    from tlsbench.run.remote import FleetKeys, bridge, parse_address

    sys.exit(bridge(parse_address(address), FleetKeys(Path(keys)), command))


@click.command()
@store_url_option
@click.option("--suite", metavar="PATTERN", help="Only suites matching this (fnmatch: TLS-ECDHE-*).")
@click.option("--library", metavar="PATTERN", help="Only configurations of libraries matching this.")
@click.option("--device", metavar="NAME", help="Only results measured on this device.")
def history(url: str, suite: str | None, library: str | None, device: str | None) -> None:
    """Results across the store's experiments, per experiment x device x library build x
    tlsbench commit, latest first: what was measured where, with what, by which version."""
    from tlsbench.store.postgres.history import history as rows_of

    _checked(url)
    table = Table(title="history")
    for head in ("experiment", "device", "library build", "tlsbench", "configs", "repetitions", "failed", "last stored"):
        table.add_column(head)
    for r in rows_of(url, suite, library, device):
        table.add_row(r.experiment, r.device, r.build, r.tool_version, str(r.configurations), str(r.repetitions),
                      str(r.failed), r.last_stored[:19])
    console.print(table)
