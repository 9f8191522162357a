# SPDX-License-Identifier: Apache-2.0
"""Plans over several libraries, against the REAL agents: validation (agents, cross-library
suite selection), a two-library run end to end, resume across libraries, and the report's
side-by-side sections and per-library winners."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tlsbench import agents, controller, plan, spec
from tlsbench.controller import Controller, run_experiment
from tlsbench.store.sqlite import Store

S = spec.load()
OK = S.status.name(S.status.OK)
PAIR = ("openssl", "wolfssl")  # both have TLS 1.3; mbed TLS 2.28 has none
TLS13_AES128 = "TLS_AES_128_GCM_SHA256"


@pytest.fixture(scope="module")
def agent_dir() -> Path:
    try:
        paths = [agents.find_agent(lib) for lib in PAIR + ("mbedtls",)]
    except agents.AgentError as exc:
        pytest.fail(f"these tests need the mbedtls, openssl and wolfssl agents: {exc}")
    assert len({p.parent for p in paths}) == 1, "the agents are expected side by side (make installs them so)"
    return paths[0].parent


@pytest.fixture(scope="module")
def suites_of(agent_dir) -> dict[str, list[dict]]:
    out = {}
    for lib in PAIR + ("mbedtls",):
        _, out[lib] = agents.query_suites(lib, agent_dir)
    return out


def parse(body: str, name: str = "libs") -> plan.LoadedPlan:
    return plan.parse(f'name = "{name}"\nrepetitions = 4\nrounds = 2\nwarmup = 0\n{body}', f"{name}.toml")


# ---------------------------------------------------------------------- validation
def test_unknown_library_lists_the_agents_found(agent_dir):
    loaded = parse('libraries = ["openssl", "boringssl"]')
    with pytest.raises(plan.PlanError) as info:
        plan.locate_agents(loaded, agent_dir)
    first, found = info.value.problems
    assert first.startswith("libraries[1]: 'boringssl'") and "tlsbench-agent-boringssl" in first
    assert found.startswith("agents found:") and all(lib in found for lib in PAIR + ("mbedtls",))


def test_unknown_library_is_one_clear_cli_error(tmp_path, agent_dir):
    from click.testing import CliRunner

    from tlsbench.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nrepetitions = 2\nlibraries = ["wolfssl", "nosuchtls"]\n')
    out = CliRunner().invoke(main, ["run", str(bad), "-o", str(tmp_path)], env={"TLSBENCH_AGENT_DIR": str(agent_dir)})
    assert out.exit_code == 1 and "nosuchtls" in out.output and "agents found: " in out.output
    assert "Traceback" not in out.output and not (tmp_path / "x").exists()


def test_custom_agent_name_is_a_library(tmp_path, agent_dir):
    """Any installed tlsbench-agent-<name> (e.g. a custom mbed TLS build) is a library."""
    (tmp_path / "tlsbench-agent-mbedtls-small").symlink_to(agent_dir / "tlsbench-agent-mbedtls")
    loaded = parse('libraries = ["mbedtls-small"]')
    assert plan.locate_agents(loaded, tmp_path) == {"mbedtls-small": tmp_path / "tlsbench-agent-mbedtls-small"}
    assert "mbedtls-small" in agents.available_agents(tmp_path)


def test_library_shorthand_keeps_the_plan_hash():
    one = parse('library = "wolfssl"').plan
    assert one.libraries == ["wolfssl"] and one == parse('libraries = ["wolfssl"]').plan
    assert '"library":"wolfssl"' in one.resolved_json()  # stores made before `libraries` still resume
    with pytest.raises(plan.PlanError, match="library and libraries are both given"):
        parse('library = "wolfssl"\nlibraries = ["openssl"]')
    with pytest.raises(plan.PlanError, match="listed twice: wolfssl"):
        parse('libraries = ["wolfssl", "wolfssl"]')


def test_a_name_matching_in_one_library_only_is_fine(suites_of):
    picked = plan.select_per_library(parse('suites = ["0x1301", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"]\n'
                                           'libraries = ["mbedtls", "wolfssl"]'),
                                     {lib: suites_of[lib] for lib in ("mbedtls", "wolfssl")})
    # 0x1301 is TLS 1.3 (wolfSSL only); the mbed TLS name also selects wolfSSL's IANA-named twin.
    assert [s["id"] for s in picked["mbedtls"]] == [0xC02B]
    assert sorted(s["id"] for s in picked["wolfssl"]) == [0x1301, 0xC02B]


def test_a_reference_matching_in_no_library_is_an_error(suites_of):
    with pytest.raises(plan.PlanError) as info:
        plan.select_per_library(parse('suites = ["0x1301", "TLS_NOPE_*"]\nlibraries = ["openssl", "wolfssl"]'),
                                {lib: suites_of[lib] for lib in PAIR})
    (msg,) = info.value.problems
    assert msg.startswith("suites.include: 'TLS_NOPE_*' matches no suite of any of the agents (openssl, wolfssl)")


def test_a_library_left_without_suites_is_an_error(suites_of):
    loaded = parse('libraries = ["mbedtls", "wolfssl"]\n[suites]\nprotocol = "TLS1.3"')
    with pytest.raises(plan.PlanError, match="selection is empty for library mbedtls"):
        plan.select_per_library(loaded, {lib: suites_of[lib] for lib in ("mbedtls", "wolfssl")})


def test_protocol_filter_and_tls13_groups_across_libraries(suites_of):
    loaded = parse('libraries = ["openssl", "wolfssl"]\ngroups = ["x25519", "ffdhe2048"]\n'
                   'credentials = ["ecdsa-p256", "psk"]\n[suites]\ninclude = "0x1301"\nprotocol = "TLS1.3"')
    res = controller.resolve(loaded, {lib: suites_of[lib] for lib in PAIR})
    cells = sorted((c.row.library, c.row.grp, c.row.credential) for c in res.configs)
    # a TLS 1.3 suite takes any group: its key exchange is "any"
    assert cells == [(lib, g, "ecdsa-p256") for lib in PAIR for g in ("ffdhe2048", "x25519")]
    assert res.not_applicable == Counter({f"{lib}: credential psk not usable by the suite": 2 for lib in PAIR})
    assert all(c.row.max_version == "TLS1.3" for c in res.configs)


# ---------------------------------------------------------------------- running
TWO_LIBS = f'libraries = ["openssl", "wolfssl"]\nsuites = ["{TLS13_AES128}"]\ngroups = "x25519"\n' \
           'credentials = "ecdsa-p256"\n'


def stored_keys(folder: Path) -> Counter:
    with Store.in_folder(folder, create=False) as st:
        return Counter(st.conn.execute("SELECT c.key, r.idx FROM repetition r JOIN config c ON c.id = r.config_id"))


@pytest.fixture(scope="module")
def two_library_run(tmp_path_factory, agent_dir) -> Path:
    out = tmp_path_factory.mktemp("two")
    summary = run_experiment(parse(TWO_LIBS, "two"), out, agent_dir=agent_dir)
    assert summary.stored == 8 and summary.failed == 0 and not summary.interrupted
    return out / "two"


def test_two_libraries_end_to_end(two_library_run):
    with Store.in_folder(two_library_run, create=False) as st:
        configs = st.configs()
        assert sorted(r["library"] for r in configs) == list(PAIR)
        assert {r["suite_id"] for r in configs} == {0x1301}
        by_lib = {r["library"]: r["id"] for r in configs}
        agent_rows = st.agents()
        assert sorted(a["library"] for a in agent_rows) == list(PAIR)  # one agent process per library
        assert all(a["exit_reason"].startswith("quit") for a in agent_rows)
        reps = st.conn.execute("SELECT r.config_id, r.round, r.status, a.library FROM repetition r "
                               "JOIN agent a ON a.id = r.agent_id ORDER BY r.id").fetchall()
        assert {r["status"] for r in reps} == {OK}
        assert all(by_lib[r["library"]] == r["config_id"] for r in reps)  # each library's agent ran its configs
        # rounds interleave the libraries: round 0 of both before round 1 of either
        assert [r["round"] for r in reps] == [0, 0, 0, 0, 1, 1, 1, 1]
        assert {r["library"] for r in reps[:4]} == set(PAIR)


class StopAfter(controller.QuietObserver):
    """Asks the controller to stop (as a first Ctrl-C does) after n stored repetitions."""

    def __init__(self, n: int, stop: controller.StopFlag):
        self.n, self.count, self.stop = n, 0, stop

    def stored(self, config, idx, status, agent):
        self.count += 1
        if self.count == self.n:
            self.stop.requested = True


def test_resume_across_two_libraries(tmp_path, agent_dir):
    loaded = parse(TWO_LIBS.replace('groups = "x25519"', 'groups = ["x25519", "secp256r1"]'), "resume")
    paths = plan.locate_agents(loaded, agent_dir)
    stop = controller.StopFlag()
    with Store.in_folder(tmp_path / "resume") as st:
        first = Controller(loaded, st, paths, StopAfter(5, stop), stop).run()
    assert first.interrupted and first.stored == 5
    again = run_experiment(loaded, tmp_path, resume=True, agent_dir=agent_dir)
    assert again.already == 5 and again.stored == 16 - 5 and not again.interrupted
    counts = stored_keys(tmp_path / "resume")
    assert len(counts) == 16 and set(counts.values()) == {1}  # every (config, idx) exactly once
    assert {k.split("|")[0] for k, _ in counts} == set(PAIR)
    with Store.in_folder(tmp_path / "resume", create=False) as st:
        rows = st.agents()
    assert [a["library"] for a in rows] == list(PAIR) * 2  # each run started one agent per library
    assert [a["exit_reason"] for a in rows[:2]] == ["interrupted"] * 2
