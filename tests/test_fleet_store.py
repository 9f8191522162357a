# SPDX-License-Identifier: Apache-2.0
"""A shared PostgreSQL store from the command line (docs/fleet.md): `--store` on run, status,
derive, report, export and compare; `store push` of a SQLite experiment, idempotent; a report
from PostgreSQL the same as from SQLite for the same data. One small run into SQLite, one
into PostgreSQL, against the server the tests share (tests/pg_server.py); about 15 s."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from pg_server import database
from tlsbench.cli import main
from tlsbench.store.postgres.testing import dump, table_rows

PLAN = ('name = "{name}"\nrepetitions = 3\nrounds = 1\nwarmup = 0\n'
        'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n')


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, agent_path):
    """A database, a SQLite experiment `lite` and the same plan run into the database as `shared`."""
    tmp = tmp_path_factory.mktemp("fleet")
    url = database("fleetstore")
    for name in ("lite", "shared"):
        (tmp / f"{name}.toml").write_text(PLAN.format(name=name))
    ran = cli("run", str(tmp / "lite.toml"), "--output", str(tmp / "out"), "--agent-dir", str(agent_path.parent))
    assert ran.exit_code == 0, ran.output
    shared = cli("run", str(tmp / "shared.toml"), "--output", str(tmp / "out"), "--store", url,
                 "--agent-dir", str(agent_path.parent))
    assert shared.exit_code == 0, shared.output
    return tmp, url


def test_run_into_the_shared_store_and_read_it_back(lab):
    tmp, url = lab
    assert not (tmp / "out" / "shared" / "tlsbench.db").exists()  # the repetitions went to PostgreSQL
    stored = table_rows(url, "SELECT count(*) FROM repetition r JOIN experiment e ON e.id = r.experiment_id "
                             "WHERE e.name = 'shared'")
    assert stored == [(6,)]
    status = cli("status", "shared", "--store", url, "--all")
    assert status.exit_code == 0 and "TLS-PSK-WITH-AES-128-GCM-SHA256" in status.output
    assert cli("derive", "shared", "--store", url).exit_code == 0
    csv = cli("export", "shared", "--store", url, "--format", "csv")
    assert csv.exit_code == 0 and csv.output.count("\n") > 2


def test_push_is_idempotent_and_reports_the_same_as_sqlite(lab):
    tmp, url = lab
    folder = str(tmp / "out" / "lite")
    first = cli("store", "push", folder, url)
    assert first.exit_code == 0 and "3 repetition" not in first.output and "6 repetition" in first.output
    before = dump(url)
    again = cli("store", "push", folder, url)
    assert again.exit_code == 0 and "nothing new" in again.output
    assert dump(url) == before
    for fmt in ("json", "csv", "markdown"):
        lite = cli("export", folder, "--format", fmt)
        shared = cli("export", "lite", "--store", url, "--format", fmt)
        assert lite.exit_code == shared.exit_code == 0 and lite.output == shared.output, fmt
    html = {}
    for name, args in (("lite", [folder]), ("pg", ["lite", "--store", url])):
        out = tmp / f"{name}.html"
        assert cli("report", *args, "--out", str(out)).exit_code == 0
        html[name] = out.read_text()
    assert html["lite"] == html["pg"]
    compared = cli("compare", "lite", "shared", "--store", url)  # two experiments of the shared store
    assert compared.exit_code == 0 and "TLS-PSK-WITH-AES-128-GCM-SHA256" in compared.output


def test_push_of_another_plan_under_a_taken_name_writes_nothing(lab):
    tmp, url = lab
    before = dump(url)
    out = CliRunner().invoke(main, ["store", "push", str(tmp / "out" / "lite"), f"{url}#shared"])
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1, out.output
    assert dump(url) == before
