# SPDX-License-Identifier: Apache-2.0
"""Post-quantum TLS 1.3 end to end with the REAL OpenSSL 3.5 agent (the cached openssl@3.5
build, `make agent`): `tlsbench run` of a small plan, classical X25519 against the hybrid
X25519MLKEM768 and pure MLKEM768, with ECDSA P-256 and ML-DSA-44 certificates. The stored
traces put the KEM operations in the right peer's steps, and the REP byte counters show what
post-quantum key shares and certificates add per flight."""
from __future__ import annotations

import struct
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlsbench.core import spec
from tlsbench.run import agents
from tlsbench.cli import main
from tlsbench.store.locator import locate

pytestmark = pytest.mark.library_build  # needs the cached openssl@3.5 (tests/test_library_builds.py)

S = spec.load()
LABEL = {name: label.id for name, label in S.label_by_name.items()}
CLIENT, SERVER = S.peers.value("client"), S.peers.value("server")
START = S.kinds.value("START")
RECORD = struct.Struct("<HBBIQQQ")  # spec [layout.record]: label, kind, peer, seq, t, cpu, value
assert RECORD.size == S.layouts["record"].size

PLAN = """name = "pq-e2e"
libraries = ["openssl@3.5"]
suites = ["TLS_AES_128_GCM_SHA256"]
groups = ["x25519", "X25519MLKEM768", "MLKEM768"]
credentials = ["ecdsa-p256", "mldsa44"]
repetitions = 4
rounds = 2
warmup = 1
"""


@pytest.fixture(scope="module")
def agent_dir() -> Path:
    try:
        return agents.find_agent("openssl@3.5").parent
    except agents.AgentError as exc:
        pytest.fail(f"this test needs the OpenSSL 3.5 agent (make agent builds it from the cached "
                    f"openssl@3.5): {exc}")


def spans_in_steps(blob: bytes) -> dict[tuple[int, str], list[str]]:
    """(peer, crypto label) -> the step labels each of its spans started in."""
    stack: dict[int, list[int]] = defaultdict(list)
    seen: dict[tuple[int, str], list[str]] = defaultdict(list)
    steps = S.label_ids("step")
    for label, kind, peer, *_ in RECORD.iter_unpack(blob):
        if kind == START:
            step = next((l for l in reversed(stack[peer]) if l in steps), None)
            if step is not None:
                seen[(peer, S.label_by_id[label].name)].append(S.label_by_id[step].name)
            stack[peer].append(label)
        elif kind == START + 1 and stack[peer]:
            stack[peer].pop()
    return seen


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, agent_dir) -> Path:
    """The experiment folder of one `tlsbench run` of PLAN (its report written too)."""
    out = tmp_path_factory.mktemp("pq")
    plan = out / "pq.toml"
    plan.write_text(PLAN)
    result = CliRunner().invoke(main, ["run", str(plan), "--output", str(out)],
                                env={"TLSBENCH_AGENT_DIR": str(agent_dir)})
    assert result.exit_code == 0, result.output
    return out / "pq-e2e"


@pytest.fixture(scope="module")
def stored(run_folder) -> dict[tuple[str, str], list[dict]]:
    """(group, credential) -> its stored repetitions, each with its decoded spans."""
    cells: dict[tuple[str, str], list[dict]] = defaultdict(list)
    with locate(run_folder).reader() as st:
        configs, traces = {c.id: c for c in st.config_rows()}, dict(st.traces())
        rows = [(configs[r.config_id], r, traces[i]) for i, r in st.repetition_rows() if i in traces]
    for c, r, records in rows:
        cells[(c.grp, c.credential)].append({"status": r.status, "c2s": r.bytes_c2s, "s2c": r.bytes_s2c,
                                             "spans": spans_in_steps(records)})
    return cells


def test_every_cell_ran_every_repetition(stored):
    assert sorted(stored) == sorted((g, c) for g in ("x25519", "X25519MLKEM768", "MLKEM768")
                                    for c in ("ecdsa-p256", "mldsa44"))
    assert all(len(reps) == 4 and {r["status"] for r in reps} == {S.status.name(S.status.OK)}
               for reps in stored.values())


def test_kem_operations_sit_in_the_right_peer_steps(stored):
    for cred in ("ecdsa-p256", "mldsa44"):
        for rep in stored[("MLKEM768", cred)]:
            s = rep["spans"]
            assert s[(SERVER, "KEM_ENCAPSULATE")] == ["SERVER_HELLO"]  # the server answers the key share
            assert s[(CLIENT, "KEM_DECAPSULATE")] == ["SERVER_HELLO"]  # the client reads its ciphertext
            assert s[(CLIENT, "KEY_GENERATE")] == ["CLIENT_HELLO"]  # the ML-KEM key share
            assert not s.get((CLIENT, "KEM_ENCAPSULATE")) and not s.get((SERVER, "KEM_DECAPSULATE"))
            assert not s.get((SERVER, "SHARED_SECRET")) and not s.get((CLIENT, "SHARED_SECRET"))
        for rep in stored[("X25519MLKEM768", cred)]:
            s = rep["spans"]
            # the hybrid's outer encapsulation holds its ML-KEM half and its X25519 half
            assert s[(SERVER, "KEM_ENCAPSULATE")] == ["SERVER_HELLO", "SERVER_HELLO"]
            assert s[(SERVER, "SHARED_SECRET")] == ["SERVER_HELLO"]
            assert s[(CLIENT, "KEM_DECAPSULATE")] == ["SERVER_HELLO", "SERVER_HELLO"]
        for rep in stored[("x25519", cred)]:
            assert not rep["spans"].get((SERVER, "KEM_ENCAPSULATE"))
            assert rep["spans"][(SERVER, "SHARED_SECRET")] == ["SERVER_HELLO"]
    for group in ("x25519", "MLKEM768"):  # ML-DSA: the server signs its CertificateVerify, the client verifies
        for rep in stored[(group, "mldsa44")]:
            assert rep["spans"][(SERVER, "PK_SIGN")] == ["SERVER_CERTIFICATE_VERIFY"]
            assert "SERVER_CERTIFICATE_VERIFY" in rep["spans"][(CLIENT, "PK_VERIFY")]


def test_post_quantum_flights_carry_more_bytes(stored):
    def bytes_of(group: str, cred: str, direction: str) -> int:
        return min(r[direction] for r in stored[(group, cred)])

    for cred in ("ecdsa-p256", "mldsa44"):
        classic_c2s, classic_s2c = bytes_of("x25519", cred, "c2s"), bytes_of("x25519", cred, "s2c")
        for group in ("X25519MLKEM768", "MLKEM768"):
            # ML-KEM-768: a 1184-byte encapsulation key from the client, a 1088-byte ciphertext back
            assert bytes_of(group, cred, "c2s") > classic_c2s + 1100
            assert bytes_of(group, cred, "s2c") > classic_s2c + 1000
        assert bytes_of("X25519MLKEM768", cred, "c2s") > bytes_of("MLKEM768", cred, "c2s")  # + X25519's share
    # an ML-DSA-44 chain and signature: kilobytes more from the server, nothing more from the client
    assert bytes_of("x25519", "mldsa44", "s2c") > bytes_of("x25519", "ecdsa-p256", "s2c") + 5000
    assert bytes_of("x25519", "mldsa44", "c2s") == bytes_of("x25519", "ecdsa-p256", "c2s")



# ---------------------------------------------------------------------- the report's side-by-side section
GROUP_KINDS = {"x25519": "classical", "X25519MLKEM768": "hybrid", "MLKEM768": "post-quantum"}


@pytest.fixture(scope="module")
def analysis(run_folder):
    """Every stored repetition counted (flagged and descheduled too): with 4 per cell, a busy
    machine could otherwise leave a cell without statistics."""
    from stores import load_path
    from tlsbench.analysis.pipeline import analyze

    return analyze(load_path(run_folder / "tlsbench.db"), include_flagged=True)


@pytest.fixture(scope="module")
def side_by_side(analysis):
    (table,) = analysis.results.postquantum
    return table


def test_side_by_side_rows_are_the_measured_groups_and_credentials(side_by_side):
    assert side_by_side.library == "openssl@3.5"
    rows = {(r.group, r.credential): r for r in side_by_side.rows}
    assert sorted(rows) == sorted((g, c) for g in GROUP_KINDS for c in ("ecdsa-p256", "mldsa44"))
    assert all(r.group_kind == GROUP_KINDS[r.group] for r in rows.values())
    assert {r.credential_kind for r in rows.values()} == {"classical", "post-quantum"}
    assert [r.group for r in side_by_side.rows[:3]] == list(GROUP_KINDS)  # classical first, per credential
    for (group, cred), r in rows.items():
        assert all(r.processing[p] and r.key_exchange[p] and r.signature[p] for p in ("client", "server"))
        assert r.vs_classical["client"] == (1.0 if group == "x25519" else pytest.approx(
            r.processing["client"].median / rows[("x25519", cred)].processing["client"].median))


def test_flights_add_up_to_each_peers_handshake_bytes(side_by_side):
    assert side_by_side.flights == [1, 2, 3]  # TLS 1.3: ClientHello, the server's flight, the client's Finished
    for r in side_by_side.rows:
        client = r.flights[1].median + r.flights[3].median
        assert abs(client - r.bytes["client"].median) <= 2 and abs(r.flights[2].median - r.bytes["server"].median) <= 2
    rows = {(r.group, r.credential): r for r in side_by_side.rows}
    for cred in ("ecdsa-p256", "mldsa44"):  # the ML-KEM-768 key share is in the first flight, its ciphertext in the second
        assert rows[("MLKEM768", cred)].flights[1].median > rows[("x25519", cred)].flights[1].median + 1100
        assert rows[("MLKEM768", cred)].flights[2].median > rows[("x25519", cred)].flights[2].median + 1000
    # the ML-DSA-44 chain and signature are in the server's flight only
    assert rows[("x25519", "mldsa44")].flights[2].median > rows[("x25519", "ecdsa-p256")].flights[2].median + 5000
    assert rows[("x25519", "mldsa44")].flights[1].median == rows[("x25519", "ecdsa-p256")].flights[1].median


def test_the_report_shows_the_section_with_each_group(analysis):
    from tlsbench.report.html import build_html

    page = build_html(analysis, figures=[])
    section = page[page.index('<h2 id="postquantum">'):]
    section = section[:section.index("<h2", 10)] if "<h2" in section[10:] else section
    assert all(f"<td class=\"l\">{g}</td>" in section for g in GROUP_KINDS)
    assert "flight 2 (server, B)" in section and "openssl@3.5, server: processing per step" in section
