# SPDX-License-Identifier: Apache-2.0
"""DTLS 1.3 with connection IDs and raw public keys (protocol 5), with the REAL wolfSSL 5.7
agent (the cached wolfssl@5.7 build, `make agent`): two agents over UDP on loopback, plain,
with CONNECTION_ID and with MUTUAL_AUTH, certificates against raw public keys. What the
wire shows is what each option must change: a raw public key makes the server's flight
smaller by the certificate minus its SubjectPublicKeyInfo, a connection ID adds its bytes to
every protected record. Agents that lack an option refuse it with their reason."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import small_plan
from stores import load_path
from tlsbench.analysis.derive.measures import METRIC, measures
from tlsbench.app.run import run_experiment
from tlsbench.core import spec
from tlsbench.run import agents

pytestmark = pytest.mark.library_build  # needs the cached wolfssl@5.7 (tests/test_library_builds.py)

S = spec.load()
SUITE = "TLS_AES_128_CCM_SHA256"
CID_BYTES = 2  # what the wolfSSL agent asks for (wolfSSL 5.7's largest)
PLAN = f"""libraries = ["wolfssl@5.7"]
credentials = ["ecdsa-p256", "rpk-ecdsa"]
options = [[], ["CONNECTION_ID"], ["MUTUAL_AUTH"]]
[payload]
total_bytes = 256
record_size = 64
direction = "c2s"
[network]
transports = ["udp"]
"""


@pytest.fixture(scope="module")
def agent() -> Path:
    try:
        return agents.find_agent("wolfssl@5.7")
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the wolfSSL 5.7 agent (make agent builds it from the cached wolfssl@5.7): {exc}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory, agent) -> Path:
    """The experiment folder of PLAN's run. About 10 s."""
    loaded = small_plan("dtls13-options", repetitions=3, rounds=1, suites=f'["{SUITE}"]', extra=PLAN)
    summary = run_experiment(loaded, tmp_path_factory.mktemp("dtls13"), agent_dir=agent.parent)
    assert summary.failed == 0 and not summary.skipped_configs, summary
    return summary.folder


@pytest.fixture(scope="module")
def cells(folder) -> dict[tuple[str, str], dict]:
    """(credential, options) -> what the device (the client) measured: its flights' bytes
    (median), the bytes each way (median, transport counters), its records' overhead."""
    ds = load_path(folder / "tlsbench.db")
    table = measures(ds)
    flight = table.metric == METRIC["flight_bytes"]
    out = {}
    for cid, c in ds.configs.items():
        rows = ds.reps.config_id == cid
        mine = np.isin(table.rep, ds.reps.id[rows])
        options = ",".join(o for o in ("CONNECTION_ID", "MUTUAL_AUTH") if c.options & S.options.value(o))
        out[(c.credential, options)] = {
            "ok": int(np.count_nonzero(rows)),
            "flights": {int(f): float(np.median(table.value[mine & flight & (table.label == f)]))
                        for f in np.unique(table.label[mine & flight])},
            "c2s": float(np.median(ds.reps.bytes_c2s[rows])), "s2c": float(np.median(ds.reps.bytes_s2c[rows])),
            "overhead": table.value[mine & (table.metric == METRIC["record_overhead"])]}
    return out


def test_every_cell_ran(cells):
    assert sorted(cells) == sorted((c, o) for c in ("ecdsa-p256", "rpk-ecdsa") for o in ("", "CONNECTION_ID", "MUTUAL_AUTH"))
    assert all(cell["ok"] == 3 for cell in cells.values())


def test_a_raw_public_key_shrinks_the_certificate_flights(cells):
    """The server's Certificate: an X.509 leaf (~400 bytes here) against a 91-byte P-256
    SubjectPublicKeyInfo (RFC 7250); with MUTUAL_AUTH the client's too."""
    cert, rpk = cells[("ecdsa-p256", "")], cells[("rpk-ecdsa", "")]
    assert cert["s2c"] - rpk["s2c"] > 200
    # the client's first flight grows: it offers the certificate types (two extensions)
    assert 0 < rpk["flights"][1] - cert["flights"][1] < 20
    mutual_cert, mutual_rpk = cells[("ecdsa-p256", "MUTUAL_AUTH")], cells[("rpk-ecdsa", "MUTUAL_AUTH")]
    assert mutual_cert["flights"][3] - mutual_rpk["flights"][3] > 200


def test_a_connection_id_adds_its_bytes_to_every_record(cells):
    for cred in ("ecdsa-p256", "rpk-ecdsa"):
        plain, cid = cells[(cred, "")]["overhead"], cells[(cred, "CONNECTION_ID")]["overhead"]
        assert len(plain) == len(cid) == 3 * 4  # 4 records of 64 bytes per repetition
        # DTLS 1.3 unified header (1 + 2-byte sequence + 2-byte length), content type, 16-byte tag
        assert set(plain) == {5 + 1 + 16}
        assert set(cid) == {5 + 1 + 16 + CID_BYTES}


def test_the_wire_section_sets_the_drafts_figures_beside_the_measured(folder):
    from tlsbench.analysis.pipeline import analyze

    # descheduled repetitions (a busy machine) are excluded by default; their bytes are the same
    wire = analyze(load_path(folder / "tlsbench.db"), seed=1, include_flagged=True).results.wire
    rows = {(r.authentication, r.cid): r for r in wire.rows}
    assert len(wire.rows) == 6 and "draft-ietf-iotops-security-protocol-comparison-08" in wire.source["document"]
    mutual = rows[("rpk-mutual", False)]
    assert mutual.reference.flights == (179, 447, 254) and mutual.reference.record_overhead == 11
    assert mutual.protocol == "DTLS1.3" and mutual.record_overhead.median == 5 + 1 + 16
    assert mutual.total is None and set(mutual.flights) == {1, 3}  # the client's flights: one peer traced
    assert rows[("rpk", True)].reference.flights == ()  # server-only RPK: the draft has no figure
    assert rows[("rpk", True)].reference.record_overhead == 12
    assert rows[("certificate", True)].record_overhead.median == 5 + 1 + 16 + CID_BYTES
    assert any("16-byte tag" in d for d in mutual.differences)


def agent_run(agent: Path, *args: str) -> str:
    done = subprocess.run([str(agent), "run", "--reps", "1", "--warmup", "0", *args],
                          capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


@pytest.mark.parametrize("args, reason", [
    (["--suite", SUITE, "--option", "CONNECTION_ID"], "option CONNECTION_ID is DTLS's"),
    (["--suite", "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "--protocol", "dtls", "--option", "CONNECTION_ID"],
     "connection IDs for DTLS 1.3 only"),
    (["--suite", "TLS_AES_128_CCM_8_SHA256", "--protocol", "dtls"], "does not pad a record to the 16 bytes"),
])
def test_the_wolfssl_agent_refuses_what_it_cannot_do_with_its_reason(agent, args, reason):
    assert reason in agent_run(agent, *args)


def test_an_agent_without_raw_public_keys_refuses_the_credential():
    """mbed TLS 3.6 has no RFC 7250: its agent names the credentials the suite takes."""
    try:
        mbed = agents.find_agent("mbedtls@3.6")
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the mbed TLS 3.6 agent: {exc}")
    out = agent_run(mbed, "--suite", "TLS1-3-AES-128-GCM-SHA256", "--credential", "rpk-ecdsa")
    assert "credential rpk-ecdsa does not fit suite" in out and "ecdsa-p256" in out


def test_mbedtls_dtls12_records_carry_the_connection_id(tmp_path):
    """mbed TLS 3.6's DTLS 1.2 connection ID (RFC 9146): a CCM_8 record is 29 bytes over its
    plaintext (13-byte header, 8-byte explicit nonce, 8-byte tag: the IETF comparison's figure),
    and with a CID the CID, the inner content type and zeros up to a multiple of 16
    (MBEDTLS_SSL_CID_PADDING_GRANULARITY: a 64-byte record gets 1 + 15). About 5 s."""
    try:
        mbed = agents.find_agent("mbedtls@3.6")
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the mbed TLS 3.6 agent: {exc}")
    extra = PLAN.replace('"wolfssl@5.7"', '"mbedtls@3.6"').replace('"ecdsa-p256", "rpk-ecdsa"', '"ecdsa-p256"')
    extra = extra.replace('[[], ["CONNECTION_ID"], ["MUTUAL_AUTH"]]', '[[], ["CONNECTION_ID"]]')
    loaded = small_plan("dtls12-cid", repetitions=2, rounds=1, suites='["TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8"]',
                        extra=extra)
    summary = run_experiment(loaded, tmp_path, agent_dir=mbed.parent)
    assert summary.failed == 0 and not summary.skipped_configs, summary
    ds = load_path(summary.folder / "tlsbench.db")
    table = measures(ds)
    overhead = {bool(c.options & S.options.value("CONNECTION_ID")):
                set(table.value[np.isin(table.rep, ds.reps.id[ds.reps.config_id == cid])
                                & (table.metric == METRIC["record_overhead"])])
                for cid, c in ds.configs.items()}
    assert overhead == {False: {29.0}, True: {29.0 + CID_BYTES + 1 + 15}}


def test_openssl_raw_public_keys_pin_each_peer(tmp_path):
    """OpenSSL 3.5 (RFC 7250 since 3.2) over TLS 1.3 in memory: raw public keys both ways run,
    each peer pinning the other's key, and the server's flight loses its certificate. About 5 s."""
    try:
        ossl = agents.find_agent("openssl@3.5")
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the OpenSSL 3.5 agent: {exc}")
    extra = ('libraries = ["openssl@3.5"]\ncredentials = ["ecdsa-p256", "rpk-ecdsa"]\n'
             'options = [[], ["MUTUAL_AUTH"]]\n')
    loaded = small_plan("tls13-rpk", repetitions=2, rounds=1, suites='["TLS_AES_128_GCM_SHA256"]', extra=extra)
    summary = run_experiment(loaded, tmp_path, agent_dir=ossl.parent)
    assert summary.failed == 0 and not summary.skipped_configs and summary.stored == 8, summary
    ds = load_path(summary.folder / "tlsbench.db")
    s2c = {(c.credential, bool(c.options)): float(np.median(ds.reps.bytes_s2c[ds.reps.config_id == cid]))
           for cid, c in ds.configs.items()}
    assert s2c[("ecdsa-p256", False)] - s2c[("rpk-ecdsa", False)] > 200
    c2s = {(c.credential, bool(c.options)): float(np.median(ds.reps.bytes_c2s[ds.reps.config_id == cid]))
           for cid, c in ds.configs.items()}
    assert c2s[("ecdsa-p256", True)] - c2s[("rpk-ecdsa", True)] > 200  # the client's certificate too


TLS13_SUITE = {"id": 0x1304, "name": SUITE, "key_exchange": "any", "authentication": "any", "cipher": "AES-128-CCM",
               "mac": "SHA256", "min_version": "TLS1.3", "max_version": "TLS1.3", "dtls": True,
               "credentials": ["ecdsa-p256", "rpk-ecdsa"]}


@pytest.mark.parametrize("network, kept", [
    ("", set()),  # in memory on the host: TLS, never DTLS
    ('[network]\ntransports = ["tcp", "udp"]\n', {"udp"}),
])
def test_connection_id_cells_are_dtls_only(network, kept):
    from tlsbench.plan.suites import resolve

    loaded = small_plan("cid", suites="[0x1304]", extra=f'library = "wolfssl@5.7"\noptions = [["CONNECTION_ID"]]\n{network}')
    out = resolve(loaded, {"wolfssl@5.7": [TLS13_SUITE]})
    assert {c.row.transport for c in out.configs} == kept
    assert all("CONNECTION_ID needs DTLS" in why for why in out.not_applicable)
