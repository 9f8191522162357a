# SPDX-License-Identifier: Apache-2.0
"""Plans with [experiments]: validation, selection against HELLO lists, configurations.

Selection and resolution are pure functions of the plan and the agents' HELLO
`experiments` lists, so these tests pass lists in the agent's format (data, not mocks)."""
import json

import pytest

from tlsbench import plan
from tlsbench.plan import experiments

HELLO = {"experiments": [
    {"id": 1, "name": "sha256", "description": "SHA-256", "groups": ["hash"], "sizes": [16, 64, 4096],
     "source": "primitive"},
    {"id": 2, "name": "aes128-gcm", "description": "AES-128-GCM", "groups": ["encrypt", "decrypt"],
     "sizes": [16, 1024], "source": "primitive"},
    {"id": 3, "name": "ecdsa-p256", "description": "ECDSA P-256", "groups": ["sign", "verify"], "sizes": [],
     "source": "primitive"},
    {"id": 4, "name": "sensor-json", "description": "a user's code", "groups": ["encode", "crc32"],
     "sizes": [64, 256], "source": "user"},
]}
# Another library: no AES-GCM, so its ids differ (a RUN names an experiment by its position).
OTHER = {"experiments": [e if e["id"] < 2 else {**e, "id": e["id"] - 1} for e in HELLO["experiments"]
                         if e["name"] != "aes128-gcm"]}


def parse(text: str) -> plan.LoadedPlan:
    return plan.parse('name = "x"\nrepetitions = 4\n' + text, "x.toml")


def problems(text: str) -> list[str]:
    with pytest.raises(plan.PlanError) as info:
        parse(text)
    return info.value.problems


def test_an_experiments_section_with_every_mistake_at_once():
    found = problems('[experiments]\nincldue = "sha256"\nsource = "library"\nsizes = [16, 0]\n')
    assert "experiments.incldue: unknown field; did you mean include? (allowed: include, exclude, source, sizes)" in found
    assert any(p.startswith("experiments.source: 'library' is not valid") and "'primitive' or 'user'" in p
               for p in found)
    assert any(p.startswith("experiments.sizes[1]: 0 is not valid") for p in found)
    assert problems('[experiments]\nsizes = [64, 16, 64]\n') == ["experiments.sizes: [64, 16, 64] is not valid: listed twice: 64"]


def test_handshake_fields_without_suites_are_an_error():
    (only,) = problems('groups = ["x25519"]\n[payload]\ntotal_bytes = 10\ndirection = "c2s"\n[experiments]\n')
    assert "groups, payload describe handshakes" in only and "has `suites` too" in only


def test_experiments_alone_measure_no_handshakes_and_show_no_handshake_fields():
    p = parse('experiments = ["sha256", "ecdsa-*"]\n').plan
    assert p.suites is None and p.experiments.include == ["sha256", "ecdsa-*"]
    resolved = p.resolved()
    assert "suites" not in resolved and not {"groups", "credentials", "payload", "transport"} & set(resolved)
    assert resolved["experiments"] == {"include": ["sha256", "ecdsa-*"], "exclude": [], "source": []}
    both = parse('suites = "all"\nexperiments = "all"\n').plan
    assert both.suites is not None and "groups" in both.resolved()


def test_a_plan_without_experiments_hashes_as_before():
    """Absent sections add nothing to the resolved JSON: existing stores still resume."""
    for loaded in (plan.load(), plan.load("plans/tls13-libraries.toml"), parse('suites = "all"\n')):
        body = json.loads(loaded.plan.resolved_json())
        assert "experiments" not in body and "suites" in body


def test_selection_names_what_exists_and_suggests():
    loaded = parse('[experiments]\ninclude = ["sha265", "aes*-gcm"]\nexclude = ["rsa*"]\n')
    with pytest.raises(plan.PlanError) as info:
        experiments.resolve(loaded, {"mbedtls": HELLO})
    first, second = info.value.problems
    assert first.startswith("experiments.include: 'sha265' matches no experiment of mbedtls; close matches: sha256")
    assert "they have: aes128-gcm, ecdsa-p256, sensor-json, sha256" in first
    assert second.startswith("experiments.exclude: 'rsa*' matches no experiment")


def test_configurations_are_library_experiment_size_with_each_agents_id():
    loaded = parse('libraries = ["mbedtls", "wolfssl"]\n[experiments]\ninclude = "all"\nexclude = "sensor-*"\n')
    found = experiments.resolve(loaded, {"mbedtls": HELLO, "wolfssl": OTHER})
    keys = {c.row.key: c.experiment_id for c in found.configs}
    assert keys == {"mbedtls|experiment|sha256|16": 1, "mbedtls|experiment|sha256|64": 1,
                    "mbedtls|experiment|sha256|4096": 1, "mbedtls|experiment|aes128-gcm|16": 2,
                    "mbedtls|experiment|aes128-gcm|1024": 2, "mbedtls|experiment|ecdsa-p256|0": 3,
                    "wolfssl|experiment|sha256|16": 1, "wolfssl|experiment|sha256|64": 1,
                    "wolfssl|experiment|sha256|4096": 1, "wolfssl|experiment|ecdsa-p256|0": 2}
    row = next(c.row for c in found.configs if c.row.experiment == "aes128-gcm")
    assert json.loads(row.experiment_groups) == ["encrypt", "decrypt"] and row.experiment_source == "primitive"
    assert (row.suite_id, row.suite_name, row.transport, row.direction, row.record_size) == (0, "aes128-gcm", "memory",
                                                                                              "none", 1)
    assert row.repetitions == 4 and not found.not_applicable


def test_plan_sizes_replace_the_experiments_own_and_too_large_ones_are_counted():
    loaded = parse('[experiments]\ninclude = ["sha256", "aes128-gcm", "ecdsa-p256"]\nsizes = [32, 2048]\n')
    found = experiments.resolve(loaded, {"mbedtls": HELLO})
    assert sorted(c.row.key.split("|", 2)[2] for c in found.configs) == [
        "aes128-gcm|32", "ecdsa-p256|0", "sha256|2048", "sha256|32"]
    assert found.not_applicable == {"size 2048 is above the largest aes128-gcm takes (1024)": 1}


def test_source_filter_and_a_library_left_without_experiments():
    user = experiments.resolve(parse('[experiments]\nsource = "user"\n'), {"example": HELLO})
    assert {c.row.experiment for c in user.configs} == {"sensor-json"}
    loaded = parse('libraries = ["mbedtls", "wolfssl"]\n[experiments]\ninclude = "aes*"\n')
    with pytest.raises(plan.PlanError, match="the selection is empty for library wolfssl"):
        experiments.resolve(loaded, {"mbedtls": HELLO, "wolfssl": OTHER})


def test_an_agent_without_experiments_offers_none():
    with pytest.raises(plan.PlanError, match="matches no experiment of .*they have: none"):
        experiments.resolve(parse('[experiments]\n'), {"mbedtls": {"protocol": 2}})


def test_the_embedded_primitives_plan_and_its_overrides():
    default = experiments.primitives_plan()
    assert default.plan.name == "primitives" and default.plan.suites is None
    assert default.plan.libraries == ["mbedtls", "openssl", "wolfssl"] and default.plan.experiments.source == ["primitive"]
    small = experiments.primitives_plan(experiments.PrimitivesOverrides(("openssl",), 3, ("sha*",), (64,)))
    p = small.plan
    assert p.name.startswith("primitives-openssl-3reps-subset-") and (p.repetitions, p.rounds) == (3, 3)
    assert p.experiments.include == ["sha*"] and p.experiments.sizes == [64] and p.precision is None
    assert plan.parse(small.text, "again").plan == p  # the stored text is the plan that ran
