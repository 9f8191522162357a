# SPDX-License-Identifier: Apache-2.0
"""The committed test credentials (agent/creds/fixed/, docs/benchmarks.md "Reproducible
images"): every chain verifies at the clock counting runs fix (2030-01-01), each .pub is its
key's, the embedded source depends on the files' bytes only, and two firmware builds in two
folders give byte-identical images (the point: counts that do not move from build to build)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tlsbench.builder import firmware, libraries

CREDS = firmware.REPO / "agent" / "creds"
CLASSIC = ["rsa2048", "rsa3072", "ecdsa-p256", "ecdsa-p384", "ed25519", "ecdh-rsa"]
ML_DSA = ["mldsa44", "mldsa65", "mldsa87"]
COUNTING_CLOCK = "1893456000"  # 2030-01-01T00:00:00Z: the wall clock of counting runs (docs/metrics.md)


def _openssl_for(name: str) -> str:
    """The system openssl for the classic chains, the cached openssl@3.5's for ML-DSA."""
    if name not in ML_DSA:
        return "openssl"
    cached = libraries.cached("openssl@3.5")
    if cached is None:
        pytest.skip("the ML-DSA chains need an openssl >= 3.5: the cached openssl@3.5 (make agent) is not built")
    return str(cached.prefix / "bin" / "openssl")


@pytest.mark.parametrize("name", CLASSIC + ML_DSA)
def test_a_committed_chain_verifies_at_the_counting_clock(name):
    openssl, folder = _openssl_for(name), CREDS / "fixed" / name
    subprocess.run([openssl, "verify", "-attime", COUNTING_CLOCK, "-CAfile", folder / "ca.crt",
                    folder / "server.crt", folder / "client.crt"], check=True, capture_output=True)
    for role in ("server", "client"):
        pub = subprocess.run([openssl, "pkey", "-in", folder / f"{role}.key", "-pubout"], check=True,
                             capture_output=True, text=True).stdout
        assert pub == (folder / f"{role}.pub").read_text(), f"{name}/{role}.pub is not {role}.key's"


def _embed(creds: Path, out: Path, *options: str) -> str:
    subprocess.run([sys.executable, CREDS / "embed_creds.py", *options, creds, out], check=True)
    return out.read_text()


def test_the_embedded_source_is_the_files_bytes_only(tmp_path):
    """From another folder (another checkout) the same source; ML-DSA only when asked (a
    firmware image carries none)."""
    copy = tmp_path / "elsewhere" / "fixed"
    shutil.copytree(CREDS / "fixed", copy)
    plain = _embed(CREDS / "fixed", tmp_path / "a.c")
    assert plain == _embed(copy, tmp_path / "b.c")
    assert "BEGIN CERTIFICATE" in plain and "mldsa" not in plain
    assert all(f"tb_{n.replace('-', '_')}_server_key" in plain for n in CLASSIC)
    assert "TB_CREDENTIAL_MLDSA87" in _embed(copy, tmp_path / "c.c", "--ml-dsa")


def _binary(elf: Path, out: Path) -> bytes:
    subprocess.run([f"{firmware.DEFAULT_TARGET.arch.toolchain}-objcopy", "-O", "binary", elf, out], check=True)
    return out.read_bytes()


def test_two_firmware_builds_in_two_folders_are_byte_identical(tmp_path):
    """The default image (the firmware cache's, built by `make firmware` or here) and the same
    request built afresh in a folder of another path: the same bytes, so the same counts.
    One firmware build (the library is cached): 20 s alone, 36 s beside an agent build."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.fail("arm-none-eabi-gcc is missing: scripts/install-deps.sh installs it")
    built = firmware.ensure_firmware(firmware.FirmwareRequest())
    again = firmware.build_firmware(firmware.FirmwareRequest(build_root=tmp_path / "another" / "checkout"))
    for variant in ("counting", "memory"):
        a, b = built.image(variant).path, again.image(variant).path
        assert a.parent != b.parent
        assert _binary(a, tmp_path / "a.bin") == _binary(b, tmp_path / "b.bin"), f"the {variant} images differ"
