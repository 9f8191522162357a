# SPDX-License-Identifier: Apache-2.0
"""`tlsbench build mbedtls`: real builds of the shipped example configs (Debian's source,
fetched once into build/mbedtls-src and reused), their agents' suites and handshakes, and
the config recorded in HELLO and the store. About 35 s: the tiny and extended libraries
are each compiled once per session (into a temporary folder, so nothing stale is tested)."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlsbench.core import spec
from tlsbench.builder import custom as custom_build
from tlsbench.run import agents
from tlsbench.cli import main
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import DB_FILE

pytestmark = pytest.mark.custom_build

CONFIGS = custom_build.REPO / "configs" / "mbedtls"
TINY_SUITES = {"TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8", "TLS-PSK-WITH-AES-128-CCM-8",
               "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"}
S = spec.load()


def _build(tmp_path_factory: pytest.TempPathFactory, config: str) -> custom_build.BuildResult:
    root = tmp_path_factory.mktemp(f"build-{config}")
    request = custom_build.BuildRequest(config=CONFIGS / f"{config}.h", name=config, source=None,
                                        install_dir=root / "bin", build_root=root)
    try:
        return custom_build.build(request)
    except custom_build.BuildError as exc:
        pytest.fail(f"building the {config} config failed: {exc}")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> custom_build.BuildResult:
    return _build(tmp_path_factory, "tiny")


@pytest.fixture(scope="module")
def tiny_agent(tiny) -> tuple[dict, list[dict]]:
    return agents.query_suites("mbedtls-tiny", tiny.agents[0].parent)


def test_build_installs_both_agents_named_after_the_config(tiny):
    assert [p.name for p in tiny.agents] == ["tlsbench-agent-mbedtls-tiny", "tlsbench-agent-mbedtls-tiny-notrace"]
    assert (tiny.prefix / "lib" / "libmbedtls.a").exists()
    # The Debian source is the installed package's version, cached in the build folder.
    assert tiny.source.parent.parent == custom_build.SOURCE_CACHE
    assert tiny.source.parent.name == custom_build.installed_version()[1]


def test_tiny_lists_exactly_its_suites_with_usable_credentials(tiny):
    out = CliRunner().invoke(main, ["suites", "--library", "mbedtls-tiny", "--json"],
                             env={agents.AGENT_DIR_ENV: str(tiny.agents[0].parent)}, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    suites = {s["name"]: s for s in json.loads(out.output)["suites"]}
    assert set(suites) == TINY_SUITES
    # P-384 and RSA are compiled out: only the credentials the build can parse are offered.
    assert {tuple(s["credentials"]) for s in suites.values()} == {("ecdsa-p256",), ("psk",)}
    assert all(s["max_version"] == "TLS1.2" for s in suites.values())


def test_hello_carries_the_config_and_the_unusable_credentials(tiny_agent):
    hello, _ = tiny_agent
    build = hello["build"]
    text = (CONFIGS / "tiny.h").read_bytes()
    assert build["config"] == {"origin": "custom", "name": "tiny.h", "sha256": hashlib.sha256(text).hexdigest(),
                               "text": text.decode()}
    assert build["out_content_len"] == 2048 and build["suites"] == 3 and hello["agent"] == "tlsbench-agent-mbedtls-tiny"
    creds = build["credentials"]
    assert creds["ecdsa-p256"] == "ready" and creds["rsa2048"] == "not in this build: RSA"
    assert creds["ecdsa-p384"] == "not in this build: the key's curve"


def test_every_tiny_suite_runs_and_the_store_records_the_config(tiny, tmp_path):
    """Records of 16 KiB through 2 KiB buffers: the library writes them in several parts."""
    plan_file = tmp_path / "tiny.toml"
    plan_file.write_text('name = "tiny"\nlibraries = ["mbedtls-tiny"]\nrepetitions = 2\nrounds = 1\nwarmup = 0\n'
                         '[payload]\ntotal_bytes = 40000\nrecord_size = 16384\ndirection = "both"\n')
    out = CliRunner().invoke(main, ["run", str(plan_file), "--output", str(tmp_path / "out"), "--no-report"],
                             env={agents.AGENT_DIR_ENV: str(tiny.agents[0].parent)}, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    with locate(tmp_path / "out" / "tiny" / DB_FILE).reader() as st:
        names = {c.id: c.suite_name for c in st.config_rows()}
        reps = [(names[r.config_id], r.status) for _, r in st.repetition_rows()]
        first_agent = st.agent_rows()[0]
    hello = json.loads(first_agent.hello_json)
    assert {name for name, _ in reps} == TINY_SUITES and len(reps) == 6
    assert {status for _, status in reps} == {S.status.name(S.status.OK)}
    assert hello["build"]["config"]["sha256"] == hashlib.sha256((CONFIGS / "tiny.h").read_bytes()).hexdigest()


def test_extended_has_more_suites_than_debians_build(tmp_path_factory, agent_path):
    extended = _build(tmp_path_factory, "extended")
    _, more = agents.query_suites("mbedtls-extended", extended.agents[0].parent)
    hello, debian = agents.query_suites("mbedtls", agent_path.parent)
    assert hello["build"]["config"]["origin"] == "library" and "text" not in hello["build"]["config"]
    names = {s["name"] for s in more}
    assert len(more) > len(debian) and names > {s["name"] for s in debian}
    assert any("-NULL-" in n for n in names) and any("-ARIA-" in n for n in names)
    assert any("-3DES-" in n for n in names) and any("-RC4-" in n for n in names)
    assert all(s["credentials"] for s in more), "every suite of Debian's algorithms has a usable credential"


# ---------------------------------------------------------------------- without building
def test_a_source_tree_of_another_version_is_refused(tmp_path):
    (tmp_path / "include" / "mbedtls").mkdir(parents=True)
    (tmp_path / "CMakeLists.txt").write_text("")
    (tmp_path / "include" / "mbedtls" / "version.h").write_text('#define MBEDTLS_VERSION_STRING "3.5.0"\n')
    with pytest.raises(custom_build.BuildError, match="2.28.x only"):
        custom_build.check_source(tmp_path)
    with pytest.raises(custom_build.BuildError, match="not an mbed TLS source tree"):
        custom_build.check_source(tmp_path / "include")


def test_a_name_with_a_dash_is_refused():
    with pytest.raises(custom_build.BuildError, match="--name"):
        custom_build.check_name("my-build")


def test_deb_src_twins_keep_mirror_suites_components_and_key():
    entries = custom_build._one_line_entries(
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian bookworm main contrib\n"
        "deb https://packages.example.com/apt stable main\n")
    entries += custom_build._deb822_stanzas("Types: deb\nURIs: http://mirror.invalid/debian-security\n"
                                            "Suites: bookworm-security\nComponents: main\n\n# a comment\n")
    text = custom_build.deb_src_stanzas(entries)
    assert text == ("Types: deb-src\nURIs: http://mirror.invalid/debian\nSuites: bookworm\n"
                    "Components: main contrib\nSigned-By: /k.gpg\n\n"
                    "Types: deb-src\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n"
                    "Components: main\n")


def test_fetching_without_root_says_to_use_source():
    """As an unprivileged user with an empty cache: one clear message, nothing touched."""
    with tempfile.TemporaryDirectory() as folder:  # not under pytest's tmp_path: private to root
        Path(folder).chmod(0o777)
        code = ("from pathlib import Path; from tlsbench.builder import custom as c\n"
                f"try: c.fetch_debian_source(Path({folder!r}) / 'cache')\n"
                "except c.BuildError as e: print(e)")
        done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable,
                               "-c", code], check=False, capture_output=True, text=True)
    if done.returncode != 0 and "setpriv" in done.stderr:
        pytest.skip(f"cannot drop privileges here: {done.stderr.strip()}")
    assert "needs root to fetch Debian's source" in done.stdout and "pass --source DIR" in done.stdout, done.stderr
