# SPDX-License-Identifier: Apache-2.0
"""What `make agent` runs before configuring the agents (tlsbench.builder.prefixes): the CMake
options of the cached library versions, and a version that cannot be fetched left out with
its one error while the others keep their prefixes. The fetch failure is real: apt is pointed
at a mirror that refuses connections, in an empty cache."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench.builder import libraries, prefixes
from tlsbench.builder.shell import BuildError


def test_every_known_version_has_a_cmake_variable():
    assert set(prefixes.CMAKE_VARIABLES) == set(libraries.RECIPES)
    assert prefixes.wanted([]) == prefixes.wanted(["all"]) == list(prefixes.CMAKE_VARIABLES)
    assert prefixes.wanted(["none"]) == []
    with pytest.raises(BuildError, match="known: "):
        prefixes.wanted(["mbedtls@9.9"])


def test_a_version_that_cannot_be_fetched_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(libraries, "system_mirror",
                        lambda: ("http://127.0.0.1:9/debian", Path("/usr/share/keyrings/debian-archive-keyring.gpg")))
    found = prefixes.ensure_prefixes(["mbedtls@3.6"], cache=tmp_path)
    assert found.found == {spec: None for spec in prefixes.CMAKE_VARIABLES}
    assert len(found.errors) == 1
    error = found.errors[0]
    assert error.startswith("mbedtls@3.6: ") and "could not download the Debian trixie source index" in error
    assert error.endswith("retry with: tlsbench libs build mbedtls@3.6")
    assert found.cmake_options() == ["-DTB_MBEDTLS36_PREFIX=", "-DTB_OPENSSL35_PREFIX=", "-DTB_WOLFSSL57_PREFIX="]


def test_sources_come_from_the_systems_apt_only(tmp_path, monkeypatch):
    """The mirror is the one apt's own sources name; without one, the version is left out with
    one error that says what to add (no mirror is assumed)."""
    from tlsbench.builder import custom, debian

    monkeypatch.setattr(custom, "APT_LIST", tmp_path / "sources.list")
    monkeypatch.setattr(custom, "APT_SOURCES", tmp_path / "sources.list.d")
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "other.list").write_text("deb https://packages.example.com/apt stable main\n")
    with pytest.raises(BuildError, match=r"name no Debian mirror .*: add the one this machine installs from"):
        debian.system_mirror()
    found = prefixes.ensure_prefixes(["mbedtls@3.6"], cache=tmp_path / "cache")
    assert found.found["mbedtls@3.6"] is None and len(found.errors) == 1
    assert "name no Debian mirror" in found.errors[0] and found.errors[0].endswith("libs build mbedtls@3.6")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\nComponents: main\nSigned-By: /k.gpg\n")
    assert debian.system_mirror() == ("http://mirror.invalid/debian", Path("/k.gpg"))


def test_a_cached_version_is_found_without_network(tmp_path):
    """An entry that looks finished (build.json, archives) is a lookup: no apt at all."""
    rec = libraries.recipe("mbedtls@3.6")
    version = "3.6.0-1"
    prefix = tmp_path / "libs" / rec.entry(version)
    (prefix / "lib").mkdir(parents=True)
    for archive in rec.archives:
        (prefix / "lib" / archive).write_bytes(b"!<arch>\n")
    entry = libraries.CachedLibrary(prefix, rec.spec, rec.name, "3.6.0", version, rec.options, rec.archives,
                                    rec.system_libs)
    (prefix / libraries.STAMP).write_text(json.dumps(entry.to_json()))
    found = prefixes.ensure_prefixes(["mbedtls@3.6"], cache=tmp_path)
    assert found.errors == () and found.found["mbedtls@3.6"] == prefix
    assert f"-DTB_MBEDTLS36_PREFIX={prefix}" in found.cmake_options()


def test_the_module_entry_prints_options_and_errors_apart():
    done = subprocess.run([sys.executable, "-m", "tlsbench.builder.prefixes", "none"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stdout.split() == prefixes.Prefixes(
        dict.fromkeys(prefixes.CMAKE_VARIABLES), ()).cmake_options()
    bad = subprocess.run([sys.executable, "-m", "tlsbench.builder.prefixes", "wolfssl@1.0"], capture_output=True,
                         text=True, check=False)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.startswith("error: unknown library version")
