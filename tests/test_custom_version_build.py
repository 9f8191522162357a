# SPDX-License-Identifier: Apache-2.0
"""Custom config builds of a cached library version (`python -m tlsbench.builder.custom_version
mbedtls@3.6 --config ...`, tlsbench.builder.custom_version): a real build of the shipped TLS
1.3-only config against the library cache's Debian 13 source, its agent's suites, HELLO and
handshakes, and the refusals that need no build. About 25 s the first time (the cache's
source is fetched once when missing, as `make agent` does)."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench.run import agents
from tlsbench.builder import custom_version
from tlsbench.builder.shell import BuildError

pytestmark = pytest.mark.custom_build

CONFIG = custom_version.REPO / "configs" / "mbedtls-3.6" / "tiny13.h"


@pytest.fixture(scope="module")
def tiny13(tmp_path_factory) -> custom_version.CustomBuild:
    root = tmp_path_factory.mktemp("build-tiny13")
    try:
        return custom_version.build_custom("mbedtls@3.6", CONFIG, install_dir=root / "bin", build_root=root)
    except BuildError as exc:
        pytest.fail(f"building tiny13 failed: {exc}")


@pytest.fixture(scope="module")
def tiny13_agent(tiny13) -> tuple[dict, list[dict]]:
    return agents.query_suites(tiny13.library, tiny13.agents[0].parent)


def _run(agent: Path, *args: str) -> str:
    done = subprocess.run([str(agent), "run", *args], capture_output=True, text=True, timeout=120, check=False)
    return done.stdout + done.stderr


def test_both_agents_are_named_after_version_and_config(tiny13):
    assert tiny13.library == "mbedtls@3.6-tiny13"  # what a plan writes; the agent's form means the same
    assert [p.name for p in tiny13.agents] == ["tlsbench-agent-mbedtls-3.6-tiny13",
                                              "tlsbench-agent-mbedtls-3.6-tiny13-notrace"]
    assert tiny13.source.name == "mbedtls-3.6.6" or tiny13.source.name.startswith("mbedtls-3.6.")
    stamp = json.loads((tiny13.prefix / "build.json").read_text())
    assert stamp["spec"] == "mbedtls@3.6" and stamp["options"][0].startswith("MBEDTLS_CONFIG_FILE=tiny13.h sha256:")
    # the installed header is the config the library was compiled with (the agent reads it)
    assert (tiny13.prefix / "include" / "mbedtls" / "mbedtls_config.h").read_bytes() == CONFIG.read_bytes()


def test_only_the_configs_tls13_suites_and_credentials(tiny13_agent):
    hello, suites = tiny13_agent
    assert {s["name"] for s in suites} == {"TLS1-3-AES-128-GCM-SHA256", "TLS1-3-AES-128-CCM-SHA256",
                                           "TLS1-3-AES-128-CCM-8-SHA256"}
    assert all(s["credentials"] == ["ecdsa-p256", "psk"] and not s["dtls"] for s in suites)
    build = hello["build"]
    assert hello["library"] == "mbedtls" and hello["library_version"].startswith("3.6.")
    assert build["config"]["origin"] == "custom" and build["config"]["name"] == "tiny13.h"
    assert build["config"]["sha256"] == hashlib.sha256(CONFIG.read_bytes()).hexdigest()
    assert build["tls1_3"] and not build["tls1_2"] and not build["dtls"] and build["in_content_len"] == 4096
    assert build["credentials"]["rsa2048"] == "not in this build: RSA"


def test_handshakes_and_what_the_build_lacks(tiny13):
    agent = tiny13.agents[0]
    assert "ok 2, failed 0" in _run(agent, "--suite", "0x1301", "--reps", "2", "--option", "MUTUAL_AUTH")
    assert "ok 2, failed 0" in _run(agent, "--suite", "0x1305", "--credential", "psk", "--option", "PSK_ONLY",
                                    "--reps", "2")
    # no ticket module: RESUME is refused before any repetition; no P-384: the group is named
    assert "option RESUME is not implemented" in _run(agent, "--suite", "0x1301", "--option", "RESUME")
    assert "group secp384r1 is not in this mbed TLS build" in _run(agent, "--suite", "0x1301", "--group",
                                                                   "secp384r1", "--reps", "1")


# ---------------------------------------------------------------------- without building
def test_unknown_versions_and_bad_names_are_refused(tmp_path):
    with pytest.raises(BuildError, match="versions with custom builds: mbedtls@3.6"):
        custom_version.build_custom("openssl@3.5", CONFIG)
    with pytest.raises(BuildError, match="tlsbench build mbedtls --config"):
        custom_version.build_custom("mbedtls", CONFIG)
    with pytest.raises(BuildError, match="--name"):
        custom_version.build_custom("mbedtls@3.6", CONFIG, name="my-build")
    with pytest.raises(BuildError, match="not found"):
        custom_version.build_custom("mbedtls@3.6", tmp_path / "missing.h")


def test_the_module_entry_gives_one_line_errors(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tlsbench.builder.custom_version", "mbedtls@9.9", "--config",
                           str(CONFIG)], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and done.stderr.startswith("error: no custom builds of 'mbedtls@9.9'")
    assert "Traceback" not in done.stderr


def test_a_failing_build_through_the_cli_is_one_line_naming_version_and_retry(tmp_path, monkeypatch):
    """`tlsbench build mbedtls@3.6 --config FILE` with a header that stops the compile: the first
    line says which version and config, where the log is and the command to run again; the
    compiler's own error follows. A real compile of the cached 3.6 source (a few seconds)."""
    from click.testing import CliRunner

    from tlsbench.cli import main

    broken = tmp_path / "broken.h"
    broken.write_text('#error "this config is deliberately broken"\n')
    monkeypatch.setattr(custom_version, "BUILD_ROOT", tmp_path / "build")
    out = CliRunner().invoke(main, ["build", "mbedtls@3.6", "--config", str(broken), "--install-dir",
                                    str(tmp_path / "bin")])
    first, *rest = out.output.strip().split("error: ", 1)[1].splitlines()
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert first.startswith("mbedtls@3.6 with broken.h did not build: compiling mbed TLS 3.6")
    assert first.endswith(f"retry with `tlsbench build mbedtls@3.6 --config {broken}`")
    assert rest == [f'{broken}:1:2: error: #error "this config is deliberately broken"']
    assert not (tmp_path / "bin").exists()
