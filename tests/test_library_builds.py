# SPDX-License-Identifier: Apache-2.0
"""The current library versions built from Debian 13 sources (`tlsbench libs`, docs/libraries.md):
each cached build's static libraries carry and report their version, the openssl CLI makes
ML-DSA keys, an agent links against the cached OpenSSL 3.5, and the cache's rules (entries
without build.json are invisible, a failed build names the version and the retry command).

The first run builds the three libraries into the shared cache (a few minutes on 2 cores);
later runs only look them up. `-m library_build` selects these tests, `-m 'not library_build'`
skips them."""
from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlsbench.run import agents
from tlsbench.builder import libraries
from tlsbench.builder.shell import BuildError
from tlsbench.cli import main

pytestmark = pytest.mark.library_build
REPO = Path(__file__).resolve().parents[1]

# What the archive must contain verbatim: the library's own version text (mbed TLS copies its
# "Mbed TLS x.y.z" with immediate stores, so only the bare version string is there as text).
VERSION_TEXT = {"mbedtls": "{v}", "openssl": "OpenSSL {v}", "wolfssl": "{v}"}
VERSION_ARCHIVE = {"mbedtls": "libmbedcrypto.a", "openssl": "libcrypto.a", "wolfssl": "libwolfssl.a"}
# Features each recipe exists for (docs/libraries.md), as the linked library reports them.
REQUIRED = {
    "mbedtls": ("MBEDTLS_SSL_PROTO_TLS1_3", "MBEDTLS_SSL_PROTO_TLS1_2", "MBEDTLS_SSL_PROTO_DTLS",
                "MBEDTLS_SSL_SESSION_TICKETS", "MBEDTLS_PLATFORM_MEMORY"),
    "openssl": ("ML-KEM-768", "X25519MLKEM768", "SecP256r1MLKEM768", "ML-DSA-44", "ML-DSA-65"),
    "wolfssl": ("WOLFSSL_TLS13", "WOLFSSL_DTLS13", "WOLFSSL_HAVE_KYBER", "WOLFSSL_ML_KEM", "ECC_MIN_KEY_SZ<=192"),
}
ABSENT = {"mbedtls": (), "openssl": (), "wolfssl": ("HAVE_ECH",)}  # GREASE ECH would distort ClientHello bytes


def _ensure(spec: str) -> libraries.CachedLibrary:
    try:
        return libraries.ensure(spec)
    except BuildError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module", params=list(libraries.RECIPES))
def entry(request) -> libraries.CachedLibrary:
    return _ensure(request.param)


def test_archive_carries_the_debian_version(entry):
    rec = libraries.recipe(entry.spec)
    assert entry.version.startswith(rec.series + ".")
    assert entry.debian_version.startswith(entry.version)  # Debian's version extends upstream's
    text = VERSION_TEXT[entry.library].format(v=entry.version).encode()
    assert text in (entry.lib / VERSION_ARCHIVE[entry.library]).read_bytes()


def test_linked_library_reports_its_version_and_features(entry, tmp_path):
    rec = libraries.recipe(entry.spec)
    version, features = libraries.probe(entry, rec, tmp_path)
    assert version == entry.version
    missing = [name for name in REQUIRED[entry.library] if not features.get(name)]
    assert not missing, f"{entry.spec} lacks {missing}"
    assert not [name for name in ABSENT[entry.library] if features.get(name)]


def test_warm_cache_is_reused_without_building(entry):
    stamp = entry.prefix / libraries.STAMP
    before = stamp.stat().st_mtime_ns
    again = libraries.ensure(entry.spec)
    assert again.prefix == entry.prefix
    assert stamp.stat().st_mtime_ns == before
    assert json.loads(stamp.read_text())["options"] == list(libraries.recipe(entry.spec).options)


def test_openssl_cli_makes_ml_dsa_keys(tmp_path):
    openssl = _ensure("openssl@3.5").bin / "openssl"
    out = subprocess.run([str(openssl), "version"], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert out.startswith("OpenSSL 3.5.")
    key = tmp_path / "mldsa44.key"
    subprocess.run([str(openssl), "genpkey", "-quiet", "-algorithm", "ML-DSA-44", "-out", str(key)], check=True)
    text = subprocess.run([str(openssl), "pkey", "-in", str(key), "-noout", "-text"], check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    assert "ML-DSA-44" in text


def test_agent_builds_against_the_cached_openssl(tmp_path):
    """The OpenSSL backend, unchanged, linked against openssl@3.5: HELLO says 3.5.x and a
    TLS 1.3 handshake runs."""
    prefix = _ensure("openssl@3.5").prefix
    build = tmp_path / "agent"
    subprocess.run(["cmake", "-S", str(REPO / "agent"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    "-DBUILD_TESTING=OFF", f"-DTB_OPENSSL35_PREFIX={prefix}"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "-j2", "--target", "tlsbench-agent-openssl-3.5"],
                   check=True, stdout=subprocess.DEVNULL)
    hello, suites = agents.query_suites("openssl-3.5", build)
    assert hello["library_version"].startswith("3.5.")
    assert any(s["name"] == "TLS_AES_128_GCM_SHA256" for s in suites)
    done = subprocess.run([str(build / "tlsbench-agent-openssl-3.5"), "run", "--suite", "TLS_AES_128_GCM_SHA256",
                           "--reps", "2", "--group", "x25519"], stdout=subprocess.PIPE, text=True)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stdout


def test_entry_without_stamp_is_invisible(tmp_path):
    """A build killed before build.json was written leaves a folder nothing uses."""
    rec = libraries.recipe("wolfssl@5.7")
    partial = tmp_path / "libs" / rec.entry("5.7.2-0.1+deb13u2")
    (partial / "lib").mkdir(parents=True)
    (partial / "lib" / "libwolfssl.a").write_bytes(b"!<arch>\n")
    assert libraries.cached(rec, tmp_path) is None


def test_failed_build_names_the_version_and_the_retry_command(tmp_path):
    """A real build that fails (an option mbed TLS does not know) in a cache of its own."""
    broken = dataclasses.replace(libraries.recipe("mbedtls@3.6"), options=("set MBEDTLS_NO_SUCH_OPTION",))
    with pytest.raises(BuildError) as info:
        libraries.ensure(broken, cache=tmp_path)
    message = str(info.value)
    assert message.startswith("mbedtls@3.6: Debian trixie mbedtls 3.6.")
    assert "MBEDTLS_NO_SUCH_OPTION" in message
    assert message.rstrip().endswith("retry with: tlsbench libs build mbedtls@3.6")
    assert libraries.cached(broken, tmp_path) is None
    assert not list((tmp_path / "libs").glob(f"*/{libraries.STAMP}"))


def test_cli_path_and_unknown_version():
    runner = CliRunner()
    prefix = _ensure("wolfssl@5.7").prefix
    out = runner.invoke(main, ["libs", "path", "wolfssl@5.7"])
    assert out.exit_code == 0 and out.output.strip() == str(prefix)
    out = runner.invoke(main, ["libs", "build", "wolfssl@9.9"])
    assert out.exit_code == 1
    assert "unknown library version 'wolfssl@9.9'; known: mbedtls@3.6, openssl@3.5, wolfssl@5.7" in out.output
