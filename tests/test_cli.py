# SPDX-License-Identifier: Apache-2.0
"""The CLI as a user meets it: real agent, real store, click's runner."""
import json
import tomllib

import pytest
from click.testing import CliRunner

from tlsbench.core import spec
from tlsbench.cli import main

S = spec.load()


def invoke(*args, agent_dir=None):
    env = {"TLSBENCH_AGENT_DIR": str(agent_dir)} if agent_dir else {}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_plan_show_resolves_defaults_as_toml_and_json(agent_path, agent_suites):
    """Every default filled in; as TOML comments, the configurations it means and an estimate."""
    out = invoke("plan", "show", "host", agent_dir=agent_path.parent)  # the host plan
    assert out.exit_code == 0
    resolved = tomllib.loads(out.output)
    assert resolved["name"] == "host" and resolved["suites"]["include"] == ["all"]
    comments = [l for l in out.output.splitlines() if l.startswith("# ")]
    assert comments[0].startswith(f"# host.toml (embedded): {len(agent_suites)} configurations (")
    assert "estimated duration: about" in out.output and "TLS-PSK-WITH-AES-128-CCM-8" in comments[2]
    json_out = invoke("plan", "show", "host", "--format", "json", "--no-resolve")
    assert json.loads(json_out.output) == resolved
    old = CliRunner().invoke(main, ["plan", "show", "default", "--format", "json", "--no-resolve"])
    assert json.loads(old.stdout) == resolved  # the old name still loads it, and says the new one in one line
    assert old.stderr == "note: the plan `default` is named `host` now: `tlsbench run host` (`make run PLAN=host`)\n"


def test_invalid_plan_is_one_clear_message(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nrepetitions = 0\n')
    out = CliRunner().invoke(main, ["run", str(bad)])
    assert out.exit_code == 1 and "repetitions: 0 is not valid" in out.output
    assert "Traceback" not in out.output


def test_suites_json_lists_the_agent_build(agent_path):
    out = invoke("suites", "--json", agent_dir=agent_path.parent)
    suites = json.loads(out.output)["suites"]
    assert len(suites) > 10 and all({"id", "name", "credentials"} <= set(s) for s in suites)


def test_missing_agent_says_run_make(tmp_path):
    out = CliRunner().invoke(main, ["suites"], env={"TLSBENCH_AGENT_DIR": str(tmp_path)})
    assert out.exit_code == 1 and "run `make`" in out.output


def test_run_status_and_trace_show(tmp_path, agent_path):
    plan_file = tmp_path / "p.toml"
    plan_file.write_text('name = "cli"\nrepetitions = 2\nrounds = 1\nwarmup = 0\n'
                         'suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n')
    out = invoke("run", str(plan_file), "--output", str(tmp_path / "out"), agent_dir=agent_path.parent)
    assert out.exit_code == 0, out.output
    assert "stored 2 repetitions" in out.output
    status = invoke("status", "cli", "--output", str(tmp_path / "out"), "--all")
    assert status.exit_code == 0 and "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256" in status.output
    tree = invoke("trace", "show", str(tmp_path / "out" / "cli"), "--config", "*ECDSA*", "--rep", "1")
    assert tree.exit_code == 0, tree.output
    category = {l.name: l.category for l in S.labels}
    rows = [(len(l) - len(l.lstrip()), l.split()[0]) for l in tree.output.splitlines()[2:] if l.strip()]
    rows = [(indent, name) for indent, name in rows if name in category]
    # I/O nested under a step: an io line right below a step line, indented one level deeper
    nested = [(a, b) for a, b in zip(rows, rows[1:])
              if category[a[1]] == "step" and category[b[1]] == "io" and b[0] > a[0]]
    assert nested, tree.output
    assert {category[name] for _, name in rows} >= {"phase", "step", "io", "crypto"}
    missing = invoke("trace", "show", str(tmp_path / "out" / "cli"), "--rep", "5")
    assert missing.exit_code == 1 and "not stored" in missing.output


def test_timeouts_come_from_the_option_or_the_environment(agent_path):
    from tlsbench.run import agents, timeouts

    assert timeouts.parse_timeouts(["greeting=5", "silence=600"]) == timeouts.Timeouts(greeting=5, silence=600)
    out = CliRunner().invoke(main, ["suites", "--timeout", "greeting=0"])
    assert out.exit_code == 2 and "greeting=0.0: input should be greater than 0" in out.output
    out = CliRunner().invoke(main, ["suites", "--json"], env={"TLSBENCH_TIMEOUT": "greeting=20 ready=5",
                                                              "TLSBENCH_AGENT_DIR": str(agent_path.parent)})
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(main, ["suites"], env={"TLSBENCH_TIMEOUT": "greeting=soon"})
    assert out.exit_code == 2 and "greeting=soon" in out.output


@pytest.mark.parametrize("text, kept", [
    ('[network]\n[[network.links]]\nrate = "1x"\n', "[kMG]"),
    ('transport = "tcp"\n[network]\n', "described by a [network] section"),
])
def test_error_text_is_never_markup(tmp_path, text, kept):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'name = "x"\nrepetitions = 2\n{text}')
    out = CliRunner().invoke(main, ["plan", "show", str(bad)])
    assert out.exit_code == 1 and kept in out.output


def test_a_reader_that_leaves_ends_the_command_quietly():
    """`tlsbench export ... | head`: the pipe closes under a large output; no traceback."""
    import subprocess
    import sys
    from pathlib import Path

    golden = Path(__file__).parent / "fixtures" / "golden.db"
    proc = subprocess.Popen([sys.executable, "-m", "tlsbench.cli", "export", str(golden), "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the ~200 kB of JSON is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1 and err == ""


def test_quick_run_without_a_plan_prints_the_answer_first(tmp_path, agent_path):
    """`run --suite ...`: a plan made of the options, the answer before the report's path, the
    same command again finds its store; options that need --suite say so. About 10 s."""
    args = ("run", "--suite", "TLS-PSK-WITH-AES-128-CCM-8", "--suite", "TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8",
            "--repetitions", "3", "--output", str(tmp_path))
    out = invoke(*args, agent_dir=agent_path.parent)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("Every configuration"))
    assert "host (" in lines[head] and "not a device" in lines[head]
    rows = [l for l in lines[head:] if l.startswith("TLS-")]
    assert [r.split()[0] for r in rows] == ["TLS-PSK-WITH-AES-128-CCM-8", "TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8"]
    assert "recommended" in rows[0] and max(i for i, l in enumerate(lines) if l.startswith("report: ")) > head
    folder = next(tmp_path.glob("quick-*"))
    assert (folder / "report.html").is_file()
    shown = invoke("report", str(folder), "--out", str(tmp_path / "again.html"))  # the same first screen
    first = lines[head:next(i for i, l in enumerate(lines) if l.startswith("report: "))]
    assert shown.exit_code == 0 and shown.stdout.splitlines() == [*first, f"report: {tmp_path / 'again.html'}"]
    again = invoke(*args, agent_dir=agent_path.parent)
    assert again.exit_code == 0 and list(tmp_path.glob("quick-*")) == [folder]
    for wrong, says in ((("run", "--repetitions", "3"), "only with --suite"),
                        (("run", "plan.toml", "--suite", "X"), "not both")):
        out = CliRunner().invoke(main, list(wrong))
        assert out.exit_code == 2 and says in out.output
