# SPDX-License-Identifier: Apache-2.0
"""Crypto primitives with the REAL agents: `tlsbench primitives` on a subset of three
libraries, an interrupted experiment run resumed, handshakes and experiments in one plan,
and adaptive precision growing experiment configurations."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlsbench import plan
from tlsbench.core import spec
from tlsbench.app.run import run_experiment
from tlsbench.run import agents, controller
from tlsbench.run.session import start
from stores import load_path
from tlsbench.analysis.questions.primitives import analyze_store
from tlsbench.analysis.pipeline import analyze
from tlsbench.cli import main
from tlsbench.store.locator import locate
from tlsbench.store.sqlite import DB_FILE

S = spec.load()
OK = S.status.name(S.status.OK)
LIBRARIES = ("mbedtls", "openssl", "wolfssl")


@pytest.fixture(scope="module")
def agent_dir() -> Path:
    try:
        return agents.find_agent(LIBRARIES[0]).parent
    except agents.AgentError as exc:
        pytest.fail(f"these tests need the agents: {exc}")


def stored_once(db: Path) -> Counter:
    with locate(db).reader() as st:
        keys = {c.id: c.key for c in st.config_rows()}
        return Counter((keys[r.config_id], r.idx) for _, r in st.repetition_rows())


def test_tlsbench_primitives_on_a_subset_of_three_libraries(tmp_path, agent_dir):
    args = ["primitives", *(f"--library={lib}" for lib in LIBRARIES), "--experiment=sha256",
            "--experiment=ecdsa-p256", "--size=16", "--size=64", "--reps=6", "--output", str(tmp_path)]
    out = CliRunner().invoke(main, args, env={"TLSBENCH_AGENT_DIR": str(agent_dir)})
    assert out.exit_code == 0, out.output
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("primitives-mbedtls-openssl-wolfssl-6reps-subset-")
    with locate(folder).reader() as st:
        configs = st.config_rows()
        reps = [r for _, r in st.repetition_rows()]
    assert sorted(c.key for c in configs) == sorted(
        f"{lib}|experiment|{name}|{size}" for lib in LIBRARIES for name, size in
        (("sha256", 16), ("sha256", 64), ("ecdsa-p256", 0)))
    groups = {c.experiment: json.loads(c.experiment_groups) for c in configs}
    assert groups == {"sha256": ["hash"], "ecdsa-p256": ["sign", "verify"]}
    assert {c.experiment_source for c in configs} == {"primitive"} and not any(c.skip_reason for c in configs)
    assert len(reps) == 9 * 6 and {r.status for r in reps} == {OK} and all(r.n_events >= 6 for r in reps)

    with locate(folder).reader() as st:
        p = analyze_store(st, st)
    assert p.libraries == list(LIBRARIES) and len(p.results) == 3 * (2 + 2) and not p.missing
    for r in p.results:
        lo, hi = r.summary.median_ci
        # a repetition another process interrupted is excluded (descheduled), as for handshakes
        assert r.summary.n + r.summary.excluded == 6 and r.summary.n >= 3
        assert 0 < lo <= r.summary.median <= hi and math.isfinite(r.summary.median_ci_pct)
    assert all(c.fastest in LIBRARIES and len(c.vs_fastest) == 2 for c in p.cells)
    html = (folder / "report.html").read_text()
    for text in ('id="primitives"', 'id="fig-primitives_throughput"', 'id="fig-primitives_asymmetric"',
                 "ecdsa-p256", "verify", "vs fastest", "54 experiment repetitions of 9 configurations"):
        assert text in html
    assert 'id="winners"' not in html  # no handshakes in this plan
    assert "Crypto primitives" in out.output and "MB/s" in out.output and "report: " in out.output


class StopAfter(controller.QuietObserver):
    """Asks the controller to stop after the n-th stored repetition, as a first Ctrl-C does."""

    def __init__(self, stop: controller.StopFlag, after: int):
        self.stop, self.after, self.count = stop, after, 0

    def stored(self, config, idx, status, agent):
        self.count += 1
        if self.count == self.after:
            self.stop.requested = True


EXPERIMENTS_ONLY = '''name = "resume-primitives"
libraries = ["mbedtls", "openssl"]
repetitions = 6
rounds = 3
warmup = 0
[experiments]
include = ["sha256", "ecdh-x25519"]
sizes = [64]
'''


def test_an_interrupted_experiment_run_resumes_exactly_once(tmp_path, agent_dir):
    loaded = plan.parse(EXPERIMENTS_ONLY, "resume.toml")
    paths = agents.locate_agents(loaded, agent_dir)
    stop = controller.StopFlag()
    with locate(tmp_path / "resume-primitives").writer() as st:
        first = start(loaded, st, paths, StopAfter(stop, 7), stop).run()
    assert first.interrupted and 7 <= first.stored < 4 * 6  # the stop lands after the batch being stored
    again = run_experiment(loaded, tmp_path, resume=True, agent_dir=agent_dir)
    assert not again.interrupted and again.already == first.stored and again.stored == 4 * 6 - first.stored
    counts = stored_once(tmp_path / "resume-primitives" / DB_FILE)
    assert len(counts) == 4 * 6 and set(counts.values()) == {1}


def test_handshakes_and_experiments_in_one_plan_are_analysed_apart(tmp_path, agent_dir):
    loaded = plan.parse('name = "mixed"\nrepetitions = 4\nrounds = 2\nwarmup = 0\n'
                        'suites = ["TLS-PSK-WITH-AES-128-GCM-SHA256"]\n'
                        '[experiments]\ninclude = "aes128-gcm"\nsizes = 1024\n', "mixed.toml")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_dir)
    assert summary.stored == 2 * 4 and summary.failed == 0
    a = analyze(load_path(tmp_path / "mixed" / DB_FILE))
    assert [c.suite_name for c in a.results.configs.values()] == ["TLS-PSK-WITH-AES-128-GCM-SHA256"]
    assert {r.metric for r in a.results.rows} >= {"handshake_processing", "step"}
    p = a.results.primitives
    assert [(r.experiment, r.size, r.group) for r in p.results] == [("aes128-gcm", 1024, "encrypt"),
                                                                    ("aes128-gcm", 1024, "decrypt")]


def test_precision_target_grows_experiment_configurations(tmp_path, agent_dir):
    loaded = plan.parse('name = "precise"\nrepetitions = 4\nrounds = 2\nwarmup = 0\n'
                        '[experiments]\ninclude = "sha256"\nsizes = [64]\n'
                        '[precision]\ntarget_ci_percent = 1e-6\nmax_repetitions = 6\n', "precise.toml")
    summary = run_experiment(loaded, tmp_path, agent_dir=agent_dir)
    assert not summary.interrupted and summary.stored == 6
    assert set(stored_once(tmp_path / "precise" / DB_FILE)) == {("mbedtls|experiment|sha256|64", i) for i in range(6)}


def test_scenarios_take_the_hash_and_signature_as_parameters(tmp_path, agent_dir):
    """sender/receiver over SHA3-256 and secp256k1 (and the others a library offers), picked by
    a pattern on the parameters, measured by every library that has them, exported as columns."""
    args = ["primitives", *(f"--library={lib}" for lib in LIBRARIES), "--experiment=sender-sha3-256-*",
            "--experiment=receiver-sha256-ecdsa-secp256k1", "--reps=4", "--output", str(tmp_path)]
    out = CliRunner().invoke(main, args, env={"TLSBENCH_AGENT_DIR": str(agent_dir)})
    assert out.exit_code == 0, out.output
    (folder,) = tmp_path.iterdir()
    with locate(folder).reader() as st:
        p = analyze_store(st, st)
    measured = {(r.library, r.experiment, r.group) for r in p.results if r.summary.n > 0}  # descheduled ones are left out
    sha3 = {f"sender-sha3-256-{sig}" for sig in ("ecdsa-p256", "ecdsa-secp256k1", "ed25519")}
    for lib in ("openssl", "wolfssl"):  # both have SHA3-256, secp256k1 and Ed25519
        assert {(lib, name, g) for name in sha3 for g in ("hash", "sign")} <= measured
    # mbed TLS 2.28 has no SHA-3: only the SHA-256 receiver, the others said missing
    assert {e for lib, e, _ in measured if lib == "mbedtls"} == {"receiver-sha256-ecdsa-secp256k1"}
    assert all("mbedtls" in p.missing[name] for name in sha3)
    res = CliRunner().invoke(main, ["export", str(folder), "--level", "repetition", "--format", "csv"])
    assert res.exit_code == 0, res.output
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert {(r["experiment"], r["scenario_hash"], r["scenario_signature"]) for r in rows} == {
        *((name, "sha3-256", name.removeprefix("sender-sha3-256-")) for name in sha3),
        ("receiver-sha256-ecdsa-secp256k1", "sha256", "ecdsa-secp256k1")}
    assert {r["status"] for r in rows} == {OK}
