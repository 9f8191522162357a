# SPDX-License-Identifier: Apache-2.0
"""The mbed TLS 3.6 agent through the host tool, end to end: `tlsbench run` of a small plan
with `libraries = ["mbedtls-3.6"]` (a TLS 1.3 and a TLS 1.2 suite, full and resumed, server
and mutual authentication), then `tlsbench export`: every repetition stored OK, and the
steps and crypto operations of both peers where mbed TLS 3.6 does them. `make agent` builds
the agent from the library cache (docs/libraries.md); these tests fail when it is missing."""
from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tlsbench.run import agents

LIBRARY = "mbedtls-3.6"
TLS13, TLS12 = "TLS1-3-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
PLAN = f'''name = "m36"
libraries = ["{LIBRARY}"]
suites = ["0x1301", "0xC02B"]
credentials = ["ecdsa-p256"]
options = {{options}}
repetitions = 3
rounds = 1
warmup = 1
'''


def _tlsbench(*args: str, cwd: Path) -> str:
    program = Path(sys.executable).parent / "tlsbench"
    done = subprocess.run([str(program), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"tlsbench {' '.join(args)}: {done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def agent_dir() -> Path:
    try:
        return agents.find_agent(LIBRARY).parent
    except agents.AgentError as exc:
        pytest.fail(f"these tests need {agents.executable_name(LIBRARY)}: {exc} (make agent builds it from the "
                    "library cache; its error says why it could not)")


def _measured(tmp_path: Path, agent_dir: Path, options: str) -> dict[tuple[str, str, str], set[str]]:
    """Runs the plan and exports its statistics: (config, peer, metric) -> labels."""
    (tmp_path / "p.toml").write_text(PLAN.format(options=options))
    out = _tlsbench("run", "p.toml", "--output", "out", "--no-report", "--agent-dir", str(agent_dir), cwd=tmp_path)
    assert "stored 6 repetitions" in out and "(0 failed, 0 agent deaths)" in out, out
    rows = csv.DictReader(io.StringIO(_tlsbench("export", "m36", "--output", "out", "--format", "csv",
                                                "--include-flagged", cwd=tmp_path)))
    seen: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for row in rows:
        seen[(row["config"], row["peer"], row["metric"])].add(row["label"])
    return seen


def test_tls13_and_tls12_steps_and_crypto_for_both_peers(tmp_path, agent_dir):
    seen = _measured(tmp_path, agent_dir, "[]")
    # TLS 1.3: the server signs in its CertificateVerify, the client verifies the chain and
    # that signature; both make a key share and agree on the secret through PSA; HKDF.
    assert {"CLIENT_HELLO", "SERVER_HELLO", "SERVER_CERTIFICATE", "SERVER_CERTIFICATE_VERIFY",
            "SERVER_FINISHED", "CLIENT_FINISHED"} <= seen[(TLS13, "client", "step")]
    assert {"SERVER_HELLO", "ENCRYPTED_EXTENSIONS", "SERVER_CERTIFICATE_VERIFY"} <= seen[(TLS13, "server", "step")]
    assert {"KEY_GENERATE", "SHARED_SECRET", "CHAIN_VERIFY", "PK_VERIFY", "KDF"} <= seen[(TLS13, "client", "crypto")]
    assert {"KEY_GENERATE", "SHARED_SECRET", "PK_SIGN", "KDF"} <= seen[(TLS13, "server", "crypto")]
    assert "CERTIFICATE_VERIFY" not in seen[(TLS13, "client", "step")]  # the client's, unasked
    # TLS 1.2: the legacy ECDH and signature calls, the key derivation.
    assert {"SERVER_KEY_EXCHANGE", "CLIENT_KEY_EXCHANGE", "CERTIFICATE_VERIFY"} <= seen[(TLS12, "client", "step")]
    assert {"ECDH_READ_PARAMS", "ECDH_MAKE_PUBLIC", "ECDH_CALC_SECRET", "PK_VERIFY", "CHAIN_VERIFY",
            "DERIVE_KEYS"} <= seen[(TLS12, "client", "crypto")]
    assert {"ECDH_MAKE_PARAMS", "PK_SIGN", "ECDH_CALC_SECRET", "DERIVE_KEYS"} <= seen[(TLS12, "server", "crypto")]


def test_resumed_handshakes_skip_the_certificates(tmp_path, agent_dir):
    seen = _measured(tmp_path, agent_dir, '["RESUME"]')
    for config in (TLS13, TLS12):
        for peer in ("client", "server"):
            assert not {"CHAIN_VERIFY", "PK_SIGN", "PK_VERIFY"} & seen[(config, peer, "crypto")], (config, peer)
            assert "SERVER_CERTIFICATE" not in seen[(config, peer, "step")], (config, peer)
    # TLS 1.3 resumes with psk_dhe_ke (the key share still runs) and gets a new ticket
    assert {"KEY_GENERATE", "SHARED_SECRET"} <= seen[(TLS13, "client", "crypto")]
    assert "NEW_SESSION_TICKET" in seen[(TLS13, "server", "step")]


def test_mutual_authentication_adds_the_clients_certificate_steps(tmp_path, agent_dir):
    seen = _measured(tmp_path, agent_dir, '["MUTUAL_AUTH"]')
    for config in (TLS13, TLS12):
        assert {"CLIENT_CERTIFICATE", "CERTIFICATE_VERIFY"} <= seen[(config, "client", "step")]
        assert "PK_SIGN" in seen[(config, "client", "crypto")]
        assert {"CHAIN_VERIFY", "PK_VERIFY"} <= seen[(config, "server", "crypto")]
