# SPDX-License-Identifier: Apache-2.0
"""A fleet on one machine (docs/fleet.md), against a PostgreSQL server of its own: throughput
of 1, 2 and 4 `tlsbench worker` processes on one queued plan (repetitions stored per second,
speed-up over one, the database's share of the workers' time); random SIGKILLs of workers
during a sweep (every repetition stored exactly once); connections to a remote agent server
without the controller key (all refused, none given an agent); `tlsbench report` from
PostgreSQL and from SQLite for the same experiment. Updates the "Fleet" section of
docs/benchmarks.md. About 6 minutes on 2 CPUs.

Run: PYTHONPATH=src .venv/bin/python bench/fleet.py"""
from __future__ import annotations

import os
import random
import re
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

from tlsbench.run.remote import AGENT_NAME, FleetKeys, make_keys  # noqa: E402
from tlsbench.store.postgres.testing import free_port, local_server, table_rows  # noqa: E402

CLI = [sys.executable, "-m", "tlsbench.cli"]
SUITES = ('["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", '
          '"TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256", "TLS-PSK-WITH-AES-256-GCM-SHA384"]')
WORKERS = (1, 2, 4)
KILLS = 12


DEVICE = ('suites = ["TLS-PSK-WITH-AES-128-CCM-8", "TLS-PSK-WITH-AES-128-GCM-SHA256"]\n'
          '[payload]\ntotal_bytes = 1024\nrecord_size = 1024\ndirection = "both"\n'
          '[device]\ntarget = "qemu-mps2-an386"\nprotocols = ["tls", "dtls"]\n')  # 4 configurations on QEMU


def plan(folder: Path, name: str, reps: int, rounds: int, body: str = f"suites = {SUITES}\n") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nrepetitions = {reps}\nrounds = {rounds}\nwarmup = 0\n{body}')
    return path


def enqueue(url: str, path: Path, folder: Path) -> None:
    subprocess.run([*CLI, "run", str(path), "--store", url, "--enqueue", "--output", str(folder)], check=True,
                   capture_output=True)


def stored(url: str, name: str) -> tuple[int, int]:
    return table_rows(url, "SELECT count(*), count(DISTINCT (r.config_id, r.idx)) FROM repetition r "
                           "JOIN experiment e ON e.id = r.experiment_id WHERE e.name = %s", name)[0]


def worker(url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "worker", "--store", url, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def throughput(url: str, folder: Path, kind: str, reps: int, rounds: int, body: str,
               args: tuple[str, ...] = ()) -> list[tuple[str, int, int, float, float, float]]:
    """(plan kind, workers, repetitions, wall s, worker s summed, database s summed) per worker count."""
    rows = []
    for n in WORKERS:
        name = f"{kind}{n}"
        enqueue(url, plan(folder, name, reps, rounds, body), folder)
        started = time.monotonic()
        procs = [worker(url, "--name", f"{name}-{i}", *args) for i in range(n)]
        outputs = [p.communicate()[0] for p in procs]
        wall = time.monotonic() - started
        times = [re.search(r"in ([0-9.]+) s, ([0-9.]+) s of it in the database", o) for o in outputs]
        assert all(times), outputs
        count, distinct = stored(url, name)
        assert count == distinct == reps * 4, (count, distinct)
        rows.append((kind, n, count, wall, sum(float(t[1]) for t in times), sum(float(t[2]) for t in times)))
    return rows


def kills(url: str, folder: Path, reps: int, rounds: int) -> tuple[int, int, int, int, int]:
    """(kills, planned, stored, distinct, batches handed out again)."""
    enqueue(url, plan(folder, "killed", reps, rounds), folder)
    rng = random.Random(7)
    running = {f"k{i}": worker(url, "--name", f"k{i}", "--lease", "2", "--wait") for i in range(2)}
    done = 0
    while done < KILLS:
        time.sleep(rng.uniform(0.2, 1.0))
        holding = [r[0] for r in table_rows(url, "SELECT name FROM worker WHERE work_id IS NOT NULL "
                                                 "AND ended_at IS NULL") if r[0] in running]
        if not holding:
            continue  # only a worker in the middle of a batch is worth killing
        victim = rng.choice(holding)
        running[victim].kill()
        running.pop(victim).wait()
        done += 1
        running[f"k{2 + done}"] = worker(url, "--name", f"k{2 + done}", "--lease", "2", "--wait")
    deadline = time.monotonic() + 600
    while stored(url, "killed")[0] < reps * 4 and time.monotonic() < deadline:
        time.sleep(0.5)
    for proc in running.values():
        proc.terminate()
        proc.wait()
    count, distinct = stored(url, "killed")
    again = table_rows(url, "SELECT sum(w.attempts - 1) FROM work w JOIN experiment e ON e.id = w.experiment_id "
                            "WHERE e.name = 'killed'")[0][0]
    return done, reps * 4, count, distinct, again


def refusals(folder: Path, attempts: int) -> tuple[int, int, int]:
    """(attempts, refused, agents started) against a `remote serve` by clients without the key."""
    keys, other = make_keys(folder / "keys"), make_keys(folder / "other")
    port = free_port()
    log = folder / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([*CLI, "remote", "serve", "--listen", f"127.0.0.1:{port}", "--keys",
                                   str(keys.folder), "--library", "mbedtls"], stdout=out, stderr=subprocess.STDOUT)
    while "listening" not in log.read_text():
        time.sleep(0.05)

    def tls(trust: FleetKeys, pair: FleetKeys | None, side: str = "controller") -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # an attacker does not care who answers
        if pair:
            ctx.load_cert_chain(pair.file(f"{side}.pem"), pair.file(f"{side}.key"))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                    ctx.wrap_socket(raw, server_hostname=AGENT_NAME) as s:
                s.sendall(b"tlsbench-agent-mbedtls\n")
                s.recv(4096)
        except (OSError, ssl.SSLError):
            pass

    def plain() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"tlsbench-agent-mbedtls\n")
            try:
                s.recv(4096)
            except OSError:
                pass
    kinds = [plain, lambda: tls(keys, None), lambda: tls(keys, other), lambda: tls(keys, keys, "agent")]
    for i in range(attempts):
        kinds[i % len(kinds)]()
    time.sleep(1)
    server.kill()
    server.wait()
    text = log.read_text().splitlines()
    return attempts, sum(l.startswith("refused") for l in text), sum(l.startswith("accepted") for l in text)


def report_times(url: str, folder: Path, reps: int) -> tuple[int, float, float]:
    """(repetitions, median s of `tlsbench report` from SQLite, from PostgreSQL), fresh processes."""
    path = plan(folder, "reported", reps, 4)
    subprocess.run([*CLI, "run", str(path), "--output", str(folder / "out")], check=True, capture_output=True)
    subprocess.run([*CLI, "store", "push", str(folder / "out" / "reported"), url], check=True, capture_output=True)
    times: dict[str, list[float]] = {"lite": [], "pg": []}
    for _ in range(3):
        for which, args in (("lite", [str(folder / "out" / "reported")]), ("pg", ["reported", "--store", url])):
            started = time.monotonic()
            subprocess.run([*CLI, "report", *args, "--out", str(folder / f"{which}.html")], check=True,
                           capture_output=True)
            times[which].append(time.monotonic() - started)
    return reps * 4, statistics.median(times["lite"]), statistics.median(times["pg"])


def main() -> int:
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="tlsbench-fleet-") as tmp, local_server() as server:
        folder = Path(tmp)
        url = server.database("fleet")
        sweep = (throughput(url, folder, "host", 150, 15, f"suites = {SUITES}\n")
                 + throughput(url, folder, "device", 48, 12, DEVICE, ("--device", "qemu-mps2-an386")))
        killed = kills(url, folder, reps=600, rounds=30)
        refused = refusals(folder, attempts=40)
        report = report_times(url, folder, reps=200)
    load.append(os.getloadavg()[0])
    one = {kind: count / wall for kind, n, count, wall, _, _ in sweep if n == 1}
    lines = "\n".join(f"| {kind} | {n} | {count} | {wall:.1f} s | {count / wall:.1f} | {count / wall / one[kind]:.2f}× | "
                      f"{100 * db / busy:.1f} % |" for kind, n, count, wall, busy, db in sweep)
    kills_n, planned, count, distinct, again = killed
    update_section("Fleet", f"""
Machine: {machine()}, shared with other jobs while it ran; {today()}. PostgreSQL 15 (Debian)
started by the script on a socket of its own, fsync off. Plans: "host", host agents (mbed TLS),
4 suites x 150 repetitions in 15 rounds (60 batches); "device", the firmware on QEMU
`qemu-mps2-an386` (`worker --device`, each worker boots its own QEMU), 2 PSK suites x TLS/DTLS
x 48 repetitions in 12 rounds (48 batches): the device matrix. Load average (1 min) before and
after: {load[0]:.1f}, {load[1]:.1f} (other engineers' jobs share the 2 CPUs: the speed-ups are
this busy machine's, not a quiet one's).

| plan | workers | repetitions | wall (enqueue excluded) | repetitions stored/s | speed-up over 1 | database share of worker time |
|---|---:|---:|---:|---:|---:|---:|
{lines}

Wall time from starting the workers to the last one ending (each starts its agents once per
experiment). The database share is the workers' own wall time spent taking and finishing
batches and storing repetitions (one transaction each), over their whole lives, summed. On 2
CPUs more than two workers only share the same two: the speed-up is bounded by the cores, not
the queue.

SIGKILL of a random worker in the middle of a batch {kills_n} times during a sweep of {planned} repetitions (lease 2 s,
a replacement started after each): {count} stored, {distinct} distinct (configuration, index):
{"every repetition exactly once" if count == distinct == planned else "NOT exactly once"};
a batch was handed out again {again} times after its worker died (a replacement takes the
lowest batch first, so one batch may be handed out, and its worker killed, more than once).

Remote agent server (`tlsbench remote serve`, mutual TLS 1.3): {refused[0]} connections without
the controller key (plain TCP, no client certificate, another fleet's certificate, the agents'
own certificate, in turn): {refused[1]} refused and logged, {refused[2]} agents started.

`tlsbench report` of one experiment ({report[0]} repetitions, fresh process, median of 3): from
SQLite {report[1]:.2f} s, from PostgreSQL (pushed) {report[2]:.2f} s.

Rerun: `PYTHONPATH=src .venv/bin/python bench/fleet.py`.
""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
