# SPDX-License-Identifier: Apache-2.0
"""The first screen: which suites are recommended or obsolete (spec/recommendations.toml), the
key-exchange classes, the cheapest configuration per class within a budget, exact values
without intervals, the matrix arithmetic, and where it was measured said in every header."""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from analysis_support import golden  # noqa: F401
from tlsbench.analysis.questions.place import place_of
from tlsbench.analysis.questions.recommend import BudgetError, parse_budget
from tlsbench.report.terminal import answer_table
from tlsbench.analysis.questions.winners import exact, judge
from tlsbench.analysis.units import TIME, Unit
from tlsbench.core.recommendations import load

COUNT = Unit("instructions (QEMU icount)")
from tlsbench.report.html import answer, build_html, matrix_text


def _suite(name, kx, auth, cipher, mac, id_=0, version="TLS1.2"):
    return {"id": id_, "name": name, "key_exchange": kx, "authentication": auth, "cipher": cipher, "mac": mac,
            "max_version": version}


@pytest.mark.parametrize("suite, status", [
    (_suite("TLS-PSK-WITH-AES-128-CCM-8", "PSK", "PSK", "AES-128-CCM", "SHA256", 0xC0A8), "recommended"),
    (_suite("TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256"), "recommended"),
    (_suite("TLS_AES_128_GCM_SHA256", "ECDHE", "ANY", "AES-128-GCM", "SHA256", 0x1301, "TLS1.3"), "recommended"),
    (_suite("TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", "DHE", "RSA", "AES-128-GCM", "SHA256"), "obsolete"),
    (_suite("TLS-RSA-WITH-AES-128-GCM-SHA256", "RSA", "RSA", "AES-128-GCM", "SHA256"), "obsolete"),
    (_suite("TLS-ECDHE-ECDSA-WITH-CAMELLIA-128-GCM-SHA256", "ECDHE", "ECDSA", "CAMELLIA-128-GCM", "SHA256"), "obsolete"),
    (_suite("TLS-ECDHE-ECDSA-WITH-AES-128-CBC-SHA", "ECDHE", "ECDSA", "AES-128-CBC", "SHA1"), "obsolete"),
    (_suite("TLS-ECDHE-PSK-WITH-AES-128-CBC-SHA256", "ECDHE-PSK", "PSK", "AES-128-CBC", "SHA256"), "other"),
])
def test_status_of_a_suite_with_its_sources(suite, status):
    policy = load()
    st = policy.status(suite)
    assert st.name == status
    if status != "other":
        assert st.why and re.search(r"RFC \d{4}|draft-|IANA", policy.cited(st))


@pytest.mark.parametrize("suite, credential, group, protocol, label", [
    (_suite("TLS-PSK-WITH-AES-128-CCM-8", "PSK", "PSK", "AES-128-CCM", "SHA256"), "psk", "", None, "PSK (TLS 1.2)"),
    (_suite("TLS-ECDHE-PSK-WITH-AES-128-CBC-SHA256", "ECDHE-PSK", "PSK", "AES-128-CBC", "SHA256"), "psk", "", "dtls",
     "ECDHE-PSK (DTLS 1.2)"),
    (_suite("TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8", "ECDHE", "ECDSA", "AES-128-CCM", "SHA256"), "ecdsa-p256", "", None,
     "ECDHE-ECDSA certificate (TLS 1.2)"),
    (_suite("TLS_AES_128_GCM_SHA256", "ECDHE", "ANY", "AES-128-GCM", "SHA256", 0x1301, "TLS1.3"), "ecdsa-p256",
     "x25519", None, "TLS 1.3 certificate, x25519"),
    (_suite("TLS_AES_128_CCM_SHA256", "ECDHE", "ANY", "AES-128-CCM", "SHA256", 0x1304, "TLS1.3"), "rpk-ecdsa",
     "secp256r1", "dtls", "DTLS 1.3 raw public key, secp256r1"),
    (_suite("TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8", "ECDHE", "ECDSA", "AES-128-CCM", "SHA256"), "rpk-ecdsa", "", None,
     "ECDHE-ECDSA raw public key (TLS 1.2)"),
    (_suite("TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", "DHE", "RSA", "AES-128-GCM", "SHA256"), "rsa2048", "", None, None),
])
def test_key_exchange_class(suite, credential, group, protocol, label):
    found = load().key_exchange_class({**suite, "credential": credential}, group, protocol)
    assert (found[1] if found else None) == label


def test_exact_values_need_no_interval_and_tie_only_within_the_noise_floor():
    one, other = np.array([130.0]), np.array([217.0])
    assert exact(one, COUNT) and not exact(one, TIME) and exact(np.array([5.0, 5.0]), TIME)
    r = judge(one, other, COUNT, np.random.default_rng(0))
    assert r.significant and r.ci == (r.ratio, r.ratio) and r.ratio == pytest.approx(217 / 130)
    assert not judge(np.array([100.0]), np.array([100.5]), COUNT, np.random.default_rng(0)).significant
    assert not judge(one, other, TIME, np.random.default_rng(0)).significant  # one time: a sample, no interval


def test_matrix_arithmetic_counts_configurations_not_products():
    c = lambda s, g, k, image=None: SimpleNamespace(library="m", suite_name=s, grp=g, credential=k,  # noqa: E731
                                                    record_size=1, image=image)
    full = [c(s, g, "ecdsa") for s in "ab" for g in ("x25519", "p256")]
    assert matrix_text(full) == "2 suites × 2 groups"
    mixed = [c("psk", "", "psk"), c("ecdsa", "", "ecdsa"), c("rsa", "", "rsa")]
    assert matrix_text(mixed).startswith("3 suites, with 3 credentials among them") and "×" not in matrix_text(mixed)
    # a product by coincidence is not one: 2 suites on the host and 2 images of a device (6 = 2 × 3 credentials)
    device = [c(s, "", k, image) for s, k in (("a", "psk"), ("b", "ecdsa")) for image in ("counting", "memory", None)]
    assert "×" not in matrix_text(device) and "2 firmware images" in matrix_text(device)


def test_budget_parses_or_says_what_to_write():
    assert parse_budget("ram_kb=32, ms=500").ram_kb == 32 and parse_budget("ms=500").ms == 500
    for bad in ("ram=32", "ms=fast", "flash_kb=-1"):
        with pytest.raises(BudgetError, match="budget"):
            parse_budget(bad)


def test_recommendations_of_a_host_run(golden):  # noqa: F811
    rec = answer(golden)
    medians = {c: golden.results.find(c, "handshake_processing", "client").summary.median for c in golden.results.configs}
    by_class = {row.cls: row for row in rec.classes}
    assert set(by_class) == {"PSK (TLS 1.2)", "ECDHE-ECDSA certificate (TLS 1.2)"}
    ecdsa = by_class["ECDHE-ECDSA certificate (TLS 1.2)"]
    members = [c for c, label in golden.results.config_labels.items() if "ECDHE-ECDSA" in label]
    assert ecdsa.pick.config_id == min(members, key=medians.__getitem__)
    assert ecdsa.pick.ms == pytest.approx(medians[ecdsa.pick.config_id] / 1e6)  # a host's time, in ms
    tight = answer(golden, parse_budget(f"ms={ecdsa.pick.ms * 0.5}"))  # below every ECDHE-ECDSA configuration
    row = next(r for r in tight.classes if r.cls == ecdsa.cls)
    assert row.pick is None and len(row.over_budget) == len(members)
    shown = answer_table(tight, place_of(golden.ds, golden.results.context.libraries, golden.results.device))
    labels = list(shown.columns[0].cells)  # the terminal's first screen keeps what fits, and says what does not
    assert labels and not any("ECDHE-ECDSA" in label for label in labels)
    assert shown.caption.endswith(f"; {len(members)} configuration(s) over the budget (ms ≤ {ecdsa.pick.ms * 0.5:g})")


def test_first_screen_says_host_and_shows_no_nan(golden):  # noqa: F811
    html = build_html(golden)
    head = html[:html.index('id="suites"')]
    assert head.index('id="recommendations"') < head.index('id="winners"')
    assert "host (" in head and "not a device" in head
    headers = re.findall(r"<h[23] id=\"[^\"]+\">(.*?)</h[23]>", html, re.S)
    assert all("host" in h for h in headers if 'class="where"' in h) and sum('class="where"' in h for h in headers) >= 5
    text = re.sub(r"<svg.*?</svg>|<script.*?</script>", "", html, flags=re.S)
    assert not re.search(r"\bnan\b|±nan", text, re.I)


def test_suites_selected_by_status_and_the_device_plan_by_name(tmp_path, monkeypatch):
    from tlsbench.plan.model import load as load_plan
    from tlsbench.plan.suites import suite_matches

    psk = _suite("TLS-PSK-WITH-AES-128-CCM-8", "PSK", "PSK", "AES-128-CCM", "SHA256", 0xC0A8)
    dhe = _suite("TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", "DHE", "RSA", "AES-128-GCM", "SHA256")
    assert suite_matches("current", psk) and suite_matches("recommended", psk) and not suite_matches("obsolete", psk)
    assert suite_matches("obsolete", dhe) and not suite_matches("current", dhe)
    device = load_plan("device")
    assert device.source == "device.toml (embedded)" and device.plan.device.target and device.plan.repetitions == 1
    assert device.plan.suites.include == ["current"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "device").write_text('name = "mine"\nrepetitions = 2\n')  # a file of that name wins
    assert load_plan("device").plan.name == "mine"


def test_predictions_without_an_interval_tie_only_when_equal():
    """One device repetition: no interval; 130 and 217 ms are ranks 1 and 2, never "=1"."""
    from tlsbench.analysis.models.predict.model import rank
    from tlsbench.analysis.stats.stats import summarize

    one = lambda ms: SimpleNamespace(duration=summarize(np.array([ms * 1e6]), np.random.default_rng(0)))  # noqa: E731
    ranked = rank([one(217.2), one(130.3), one(130.3)])
    assert [(r.rank, r.tied) for r in ranked] == [(1, False), (1, True), (3, False)]
    assert ranked[-1].prediction.duration.median == 217.2e6
