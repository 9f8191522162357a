# SPDX-License-Identifier: Apache-2.0
"""Plans over several libraries, against the REAL agents: validation (agents, cross-library
suite selection), a two-library run end to end, resume across libraries, and the report's
side-by-side sections and per-library winners."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tlsbench import plan
from tlsbench.core import spec
from tlsbench.run import agents, controller
from tlsbench.app.run import run_experiment
from tlsbench.plan.suites import resolve as resolve_suites
from tlsbench.run.session import start
from tlsbench.store.locator import locate

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
        agents.locate_agents(loaded, agent_dir)
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
    (tmp_path / "tlsbench-agent-mbedtls-small").symlink_to((agent_dir / "tlsbench-agent-mbedtls").resolve())  # a relative agent dir too
    loaded = parse('libraries = ["mbedtls-small"]')
    assert agents.locate_agents(loaded, tmp_path) == {"mbedtls-small": tmp_path / "tlsbench-agent-mbedtls-small"}
    assert "mbedtls-small" in agents.available_agents(tmp_path)


def test_library_shorthand_keeps_the_plan_hash():
    one = parse('library = "wolfssl"').plan
    assert one.libraries == ["wolfssl"] and one == parse('libraries = ["wolfssl"]').plan
    assert '"library":"wolfssl"' in one.resolved_json()  # stores made before `libraries` still resume
    with pytest.raises(plan.PlanError, match="library and libraries are both given"):
        parse('library = "wolfssl"\nlibraries = ["openssl"]')
    with pytest.raises(plan.PlanError, match="listed twice: wolfssl"):
        parse('libraries = ["wolfssl", "wolfssl"]')


def test_name_at_version_is_the_agent_suffix_and_keeps_hashes_and_keys():
    """openssl@3.5 and openssl-3.5 are one library: shown with @, hashed and keyed by the agent's
    name as plans had it before, so stores made with either spelling resume."""
    at, dash = parse('libraries = ["openssl@3.5", "mbedtls@2.28"]').plan, parse('libraries = ["openssl-3.5", "mbedtls"]').plan
    assert at.libraries == dash.libraries == ["openssl@3.5", "mbedtls"] and at.hash() == dash.hash()
    assert '"libraries":["openssl-3.5","mbedtls"]' in at.resolved_json()
    assert agents.executable_name("openssl@3.5") == "tlsbench-agent-openssl-3.5"
    assert resolve_suites(parse('library = "wolfssl@5.7"\nsuites = [0x1301]'), {"wolfssl@5.7": [{
        "id": 0x1301, "name": "TLS_AES_128_GCM_SHA256", "key_exchange": "any", "authentication": "any",
        "cipher": "AES-128-GCM", "mac": "SHA256", "min_version": "TLS1.3", "max_version": "TLS1.3",
        "credentials": ["ecdsa-p256"]}]}).configs[0].key.startswith("wolfssl-5.7|TLS_AES_128_GCM_SHA256|")
    with pytest.raises(plan.PlanError, match=r"listed twice: openssl@3.5 \(as 'openssl-3.5' and 'openssl@3.5'\)"):
        parse('libraries = ["openssl-3.5", "openssl@3.5"]')


def test_an_unknown_version_lists_the_known_ones_and_how_to_build(agent_dir):
    with pytest.raises(plan.PlanError) as info:
        agents.locate_agents(parse('libraries = ["openssl@3.9"]'), agent_dir, ("openssl@3.5", "wolfssl@5.7"))
    first = info.value.problems[0]
    assert first.startswith("libraries[0]: 'openssl@3.9' is not valid: openssl@3.9 is not a known version of openssl")
    assert "openssl (Debian 12's 3.0)" in first and "openssl@3.5" in first and "wolfssl" not in first
    assert "tlsbench libs build" in first
    missing = agents.missing_version("wolfssl@5.7", ["openssl", "wolfssl"], ("wolfssl@5.7",))
    assert missing.startswith("wolfssl@5.7 is known but not built here") and "tlsbench libs build wolfssl@5.7" in missing


def test_suites_cli_takes_a_version(agent_dir):
    from click.testing import CliRunner

    from tlsbench.cli import main

    env = {"TLSBENCH_AGENT_DIR": str(agent_dir)}
    out = CliRunner().invoke(main, ["suites", "--library", "openssl@3.5", "--json"], env=env)
    assert out.exit_code == 0, out.output
    listed = json.loads(out.output)
    assert listed["agent"]["library_version"].startswith("3.5") and any(s["id"] == 0x1301 for s in listed["suites"])
    out = CliRunner().invoke(main, ["suites", "--library", "openssl@0.9"], env=env)
    assert out.exit_code == 1 and "not a known version of openssl" in out.output and "Traceback" not in out.output


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
    # ML-DSA certificates: only OpenSSL >= 3.5 (not these Debian 12 agents) lists them
    loaded = parse('libraries = ["openssl", "wolfssl"]\ngroups = ["x25519", "ffdhe2048"]\n'
                   'credentials = ["ecdsa-p256", "mldsa44"]\n[suites]\ninclude = "0x1301"\nprotocol = "TLS1.3"')
    res = resolve_suites(loaded, {lib: suites_of[lib] for lib in PAIR})
    cells = sorted((c.row.library, c.row.grp, c.row.credential) for c in res.configs)
    # a TLS 1.3 suite takes any group: its key exchange is "any"
    assert cells == [(lib, g, "ecdsa-p256") for lib in PAIR for g in ("ffdhe2048", "x25519")]
    assert res.not_applicable == Counter({f"{lib}: credential mldsa44 not usable by the suite": 2 for lib in PAIR})
    assert all(c.row.max_version == "TLS1.3" for c in res.configs)


# ---------------------------------------------------------------------- running
TWO_LIBS = f'libraries = ["openssl", "wolfssl"]\nsuites = ["{TLS13_AES128}"]\ngroups = "x25519"\n' \
           'credentials = "ecdsa-p256"\n'


def stored_keys(folder: Path) -> Counter:
    with locate(folder).reader() as st:
        keys = {c.id: c.key for c in st.config_rows()}
        return Counter((keys[r.config_id], r.idx) for _, r in st.repetition_rows())


@pytest.fixture(scope="module")
def two_library_run(tmp_path_factory, agent_dir) -> Path:
    out = tmp_path_factory.mktemp("two")
    summary = run_experiment(parse(TWO_LIBS, "two"), out, agent_dir=agent_dir)
    assert summary.stored == 8 and summary.failed == 0 and not summary.interrupted
    return out / "two"


def test_two_libraries_end_to_end(two_library_run):
    with locate(two_library_run).reader() as st:
        configs = st.config_rows()
        assert sorted(r.library for r in configs) == list(PAIR)
        assert {r.suite_id for r in configs} == {0x1301}
        by_lib = {r.library: r.id for r in configs}
        agent_rows = st.agent_rows()
        assert sorted(a.library for a in agent_rows) == list(PAIR)  # one agent process per library
        assert all(a.exit_reason.startswith("quit") for a in agent_rows)
        library = {a.id: a.library for a in agent_rows}
        reps = [r for _, r in st.repetition_rows()]
        assert {r.status for r in reps} == {OK}
        assert all(by_lib[library[r.agent_id]] == r.config_id for r in reps)  # each library's agent ran its configs
        # rounds interleave the libraries: round 0 of both before round 1 of either
        assert [r.round for r in reps] == [0, 0, 0, 0, 1, 1, 1, 1]
        assert {library[r.agent_id] for r in reps[:4]} == set(PAIR)


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
    paths = agents.locate_agents(loaded, agent_dir)
    stop = controller.StopFlag()
    with locate(tmp_path / "resume").writer() as st:
        first = start(loaded, st, paths, StopAfter(5, stop), stop).run()
    # The stop takes effect after the batch being stored (the observer hears of a batch at once).
    assert first.interrupted and 5 <= first.stored < 16
    again = run_experiment(loaded, tmp_path, resume=True, agent_dir=agent_dir)
    assert again.already == first.stored and again.stored == 16 - first.stored and not again.interrupted
    counts = stored_keys(tmp_path / "resume")
    assert len(counts) == 16 and set(counts.values()) == {1}  # every (config, idx) exactly once
    assert {k.split("|")[0] for k, _ in counts} == set(PAIR)
    with locate(tmp_path / "resume").reader() as st:
        rows = st.agent_rows()
    assert [a.library for a in rows] == list(PAIR) * 2  # each run started one agent per library
    assert [a.exit_reason for a in rows[:2]] == ["interrupted"] * 2


# ---------------------------------------------------------------------- analysis and report
@pytest.fixture(scope="module")
def two_library_analysis(two_library_run):
    from stores import load_path
    from tlsbench.analysis.pipeline import analyze

    return analyze(load_path(two_library_run / "tlsbench.db"))


def section(html: str, anchor: str) -> str:
    """The HTML from one <h2 id=...> to the next <h2>."""
    start = html.index(f'<h2 id="{anchor}">')
    end = html.find("<h2 ", start + 1)
    return html[start:end if end > 0 else None]


def test_libraries_side_by_side_and_compared(two_library_analysis):
    from tlsbench.report.html import build_html

    libs = two_library_analysis.results.libraries
    assert libs.order == list(PAIR) and libs.granularity == {"openssl": "state", "wolfssl": "turn"}
    (cell,) = libs.cells
    assert set(cell.configs) == set(PAIR) and cell.label == TLS13_AES128
    (lc,) = libs.comparisons
    assert (lc.baseline, lc.other, lc.steps_compared) == ("openssl", "wolfssl", False)
    measured = {(r.peer, r.metric) for r in lc.comparison.rows}
    assert {("client", "handshake_processing"), ("server", "handshake_processing")} <= measured
    assert any(m == "crypto" for _, m in measured) and not any(m == "step" for _, m in measured)

    html = build_html(two_library_analysis)
    side = section(html, "libraries")
    assert all(f"<th colspan=\"2\">{lib}</th>" in side for lib in PAIR) and TLS13_AES128 in side
    assert side.count("<td>–</td>") == 0  # both libraries measured the one cell, both peers
    assert "turns are not messages" in side
    compared = section(html, "libraries-compared")
    assert "wolfssl / openssl" in compared and "steps not compared" in compared
    assert compared.count("handshake") >= 1 and compared.count("<td class=\"l\">client</td>") >= 1
    context = section(html, "context")
    for lib, granularity in (("openssl", "state"), ("wolfssl", "turn")):
        assert f"tlsbench-agent-{lib}" in context and granularity in context
    assert 'id="fig-libraries_handshake"' in html


def test_per_library_winners(two_library_analysis):
    from tlsbench.report.html import build_html

    res = two_library_analysis.results
    winners = res.libraries.winners
    assert list(winners) == list(PAIR)
    for lib, ws in winners.items():
        assert ws and all(res.configs[w.winner.config_id].library == lib for w in ws)
    overall = {w.question.title: w.winner.config_id for w in res.winners}
    assert all(overall[w.question.title] in {ws[i].winner.config_id for ws in winners.values()}
               for i, w in enumerate(next(iter(winners.values()))))  # the overall winner is a library's winner
    both = build_html(two_library_analysis)
    per_lib = section(both, "winners-per-library")
    assert "<h3>openssl</h3>" in per_lib and "<h3>wolfssl</h3>" in per_lib
    only_overall = build_html(two_library_analysis, winners="overall")
    assert 'id="winners"' in only_overall and 'id="winners-per-library"' not in only_overall
    only_per_lib = build_html(two_library_analysis, winners="per-library")
    assert 'id="winners"' not in only_per_lib and 'id="winners-per-library"' in only_per_lib


def test_report_cli_winners_option(two_library_run, tmp_path):
    from click.testing import CliRunner

    from tlsbench.cli import main

    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(two_library_run), "--out", str(out), "--winners", "per-library"])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert 'id="winners-per-library"' in html and 'id="winners"' not in html and 'id="libraries"' in html


def test_one_library_report_has_no_library_sections():
    from analysis_support import GOLDEN_DB
    from stores import load_path
    from tlsbench.analysis.pipeline import analyze
    from tlsbench.report.html import build_html

    html = build_html(analyze(load_path(GOLDEN_DB)))
    assert 'id="winners"' in html  # with one library, --winners both shows the overall table only
    for anchor in ("winners-per-library", "libraries", "libraries-compared", "fig-libraries_handshake"):
        assert f'id="{anchor}"' not in html


def test_markdown_export_has_the_side_by_side_table(two_library_analysis):
    from tlsbench.export import exporter

    text = exporter("markdown").export(two_library_analysis)
    head, row = text.split("## Libraries side by side")[1].strip().splitlines()[2:5:2]
    assert head == "| Configuration | openssl client (ms) | openssl server (ms) | wolfssl client (ms) | wolfssl server (ms) |"
    assert row.startswith(f"| {TLS13_AES128} |") and "–" not in row
