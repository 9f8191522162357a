# SPDX-License-Identifier: Apache-2.0
"""A PostgreSQL server of its own for tests and benchmarks: Debian's server binaries, a data
folder and a port of its own, a Unix socket in that folder only (no TCP: nothing else on the
machine reaches it), fsync off (what a test writes need not survive a power cut). initdb
refuses to run as root: the cluster belongs to the `postgres` user then."""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


class NoServer(RuntimeError):
    """PostgreSQL's server binaries are not installed (scripts/install-deps.sh installs them)."""


def server_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise NoServer("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): run scripts/install-deps.sh")
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalServer:
    folder: Path
    port: int
    tcp: bool = False

    @property
    def url(self) -> str:
        """The server's maintenance database (postgres), over its socket (or loopback TCP)."""
        host = "127.0.0.1" if self.tcp else str(self.folder)
        return f"postgresql://postgres@/postgres?host={host}&port={self.port}"

    def database(self, name: str) -> str:
        """A URL of a database created empty (idempotent)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.replace("/postgres?", f"/{name}?")

    def _as_owner(self, *argv: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else list(argv)

    def start(self) -> "LocalServer":
        bin_dir = server_bin()
        data = self.folder / "data"
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
        subprocess.run(self._as_owner(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                      "--no-sync", "-E", "UTF8"), check=True, capture_output=True)
        listen = "127.0.0.1" if self.tcp else "''"
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses={listen} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        subprocess.run(self._as_owner(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                                      str(self.folder / "server.log"), "-w", "-t", "60", "start"),
                       check=True, capture_output=True)
        return self

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, NoServer):
            subprocess.run(self._as_owner(str(server_bin() / "pg_ctl"), "-D", str(self.folder / "data"), "-m",
                                          "immediate", "-w", "stop"), check=True, capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def local_server(tcp: bool = False) -> Iterator[LocalServer]:
    """A server running for the `with` block, removed with its data after. Its folder is made
    under /tmp, which the postgres user can reach (a test's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="tlsbench-pg-", dir="/tmp"))
    server = LocalServer(folder, free_port(), tcp)
    try:
        yield server.start()
    finally:
        server.stop()


def raw(url: str, statement: str) -> None:
    """A statement run as it is (a test damages a store; benchmarks reset one)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def dump(url: str) -> dict[str, list[tuple]]:
    """Every table of a database and its rows, sorted: equal dumps, nothing was written."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = current_schema() ORDER BY 1")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}


def table_rows(url: str, query: str, *params: object) -> list[tuple]:
    """The rows a query gives (tests read a table to assert what was stored)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(query, params).fetchall()
