# SPDX-License-Identifier: Apache-2.0
"""Plan validation: a good plan, then one test per kind of mistake; suite selection."""
import pytest

from tlsbench import plan
from tlsbench.core import spec

GOOD = '''
name = "ecdhe-sweep"
library = "mbedtls"
groups = ["secp256r1", "x25519"]
credentials = ["auto"]
repetitions = 50
rounds = 5
warmup = 2
seed = 42
[suites]
include = ["TLS-ECDHE-*"]
exclude = ["*-CBC-*"]
key_exchange = ["ECDHE"]
[[payload]]
total_bytes = 10000
record_size = 1000
direction = "both"
[[payload]]
direction = "none"
'''

# A SUITES list in the agent's format (data, not a mock: selection is a pure function).
SUITES = [
    {"id": 0xC02B, "name": "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "key_exchange": "ECDHE",
     "authentication": "ECDSA", "cipher": "AES-128-GCM", "mac": "SHA256", "min_version": "TLS1.2",
     "max_version": "TLS1.2", "credentials": ["ecdsa-p256"]},
    {"id": 0xC023, "name": "TLS-ECDHE-ECDSA-WITH-AES-128-CBC-SHA256", "key_exchange": "ECDHE",
     "authentication": "ECDSA", "cipher": "AES-128-CBC", "mac": "SHA256", "min_version": "TLS1.2",
     "max_version": "TLS1.2", "credentials": ["ecdsa-p256"]},
    {"id": 0x009E, "name": "TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", "key_exchange": "DHE",
     "authentication": "RSA", "cipher": "AES-128-GCM", "mac": "SHA256", "min_version": "TLS1.2",
     "max_version": "TLS1.2", "credentials": ["rsa2048"]},
    {"id": 0x00A8, "name": "TLS-PSK-WITH-AES-128-GCM-SHA256", "key_exchange": "PSK",
     "authentication": "PSK", "cipher": "AES-128-GCM", "mac": "SHA256", "min_version": "TLS1.2",
     "max_version": "TLS1.2", "credentials": ["psk"]},
]


def problems(text: str) -> list[str]:
    with pytest.raises(plan.PlanError) as info:
        plan.parse(text, "t.toml")
    return info.value.problems


def test_good_plan_resolves_with_defaults():
    p = plan.parse(GOOD, "good.toml").plan
    assert p.groups == ["secp256r1", "x25519"]
    assert p.payload[1].record_size == 1024 and p.payload[1].total_bytes == 0
    assert p.transport == spec.load().transports.name(0)
    assert p.resolved()["suites"]["exclude"] == ["*-CBC-*"]


def test_default_plan_is_the_device_question_and_the_host_plan_is_embedded_too():
    loaded = plan.load()  # make run's: the current suites of mbed TLS 3.6 on the device, as an nRF52840
    device = loaded.plan.device
    assert loaded.plan.name == "device" and loaded.plan.suites.include == ["current"] and "embedded" in loaded.source
    assert device is not None and device.library == ["mbedtls@3.6"] and device.board == "nrf52840"
    host = plan.load("host")  # this host's times, by name
    assert host.plan.device is None and host.plan.suites.include == ["all"] and "embedded" in host.source
    assert host.note == "" and "`host`" in plan.load("default").note  # the old name: the same plan, with a note


def test_hash_ignores_output_and_formatting_but_not_content():
    a = plan.parse(GOOD, "a").plan
    b = plan.parse(GOOD.replace('seed = 42', 'seed = 42\noutput = "elsewhere"') + "\n# comment\n", "b").plan
    c = plan.parse(GOOD.replace("repetitions = 50", "repetitions = 60"), "c").plan
    assert a.hash() == b.hash() != c.hash()


def test_unknown_field_is_named_with_a_suggestion():
    (msg,) = problems('name = "x"\nrepetitons = 3\nrepetitions = 3')
    assert msg.startswith("repetitons: unknown field") and "did you mean repetitions" in msg


def test_unknown_nested_field_has_a_dotted_path():
    (msg,) = problems('name = "x"\nrepetitions = 3\n[payload]\nsize = 5')
    assert msg.startswith("payload.size: unknown field") and "record_size" in msg


def test_wrong_type_names_field_and_value():
    (msg,) = problems('name = "x"\nrepetitions = "100"')
    assert msg.startswith("repetitions: '100' is not valid") and "integer" in msg


def test_bad_enum_value_lists_allowed_values():
    (msg,) = problems('name = "x"\nrepetitions = 3\ngroups = ["x25519", "p256"]')
    assert msg.startswith("groups[1]: 'p256' is not valid")
    assert all(g in msg for g in spec.load().groups.names)


def test_bad_library_name():
    (msg,) = problems('name = "x"\nrepetitions = 3\nlibrary = "../bin/sh"')
    assert msg.startswith("libraries") and "'../bin/sh' is not valid" in msg  # agent lookup: test_libraries.py


def test_bad_record_size():
    (msg,) = problems('name = "x"\nrepetitions = 3\n[payload]\nrecord_size = 20000\ntotal_bytes = 5\ndirection = "c2s"')
    assert msg.startswith("payload.record_size: 20000") and "16384" in msg


def test_payload_without_direction_is_inconsistent():
    (msg,) = problems('name = "x"\nrepetitions = 3\n[payload]\ntotal_bytes = 10000')
    assert msg.startswith("payload:") and "direction" in msg


def test_more_rounds_than_repetitions():
    (msg,) = problems('name = "x"\nrepetitions = 3\nrounds = 4')
    assert msg.startswith("rounds: 4 is not valid: more rounds than repetitions (3)")
    assert plan.parse('name = "x"\nrepetitions = 3', "t").plan.rounds == 3  # default shrinks to fit


def test_precision_needs_room_to_grow():
    (msg,) = problems('name = "x"\nrepetitions = 30\n[precision]\nmax_repetitions = 20')
    assert msg.startswith("precision:") and "below repetitions (30)" in msg
    ok = plan.parse('name = "x"\nrepetitions = 30\n[precision]\nmax_repetitions = 90', "t").plan
    assert ok.precision.target_ci_percent == 1.0 and ok.precision.max_repetitions == 90


def test_missing_required_fields_and_all_mistakes_at_once():
    msgs = problems('warmup = -1')
    assert "name: required field is missing" in msgs
    assert "repetitions: required field is missing" in msgs
    assert any(m.startswith("warmup: -1") for m in msgs)


def test_bad_suite_reference_type():
    (msg,) = problems('name = "x"\nrepetitions = 3\nsuites = [1.5]')
    assert "suite name, an fnmatch pattern or an IANA id" in msg


def test_bad_toml_and_missing_file(tmp_path):
    assert "not valid TOML" in problems('name = ')[0]
    with pytest.raises(plan.PlanError, match="cannot read it"):
        plan.load(tmp_path / "nope.toml")


def selected(text: str) -> list[str]:
    loaded = plan.parse('name = "x"\nrepetitions = 3\n' + text, "t.toml")
    return [s["name"] for s in plan.select_suites(loaded, SUITES)]


def test_suite_selection_names_ids_patterns_filters_exclude():
    assert len(selected('suites = "all"')) == 4
    assert selected('suites = [0x00A8]') == ["TLS-PSK-WITH-AES-128-GCM-SHA256"]
    assert selected('suites = ["0x009e"]') == ["TLS-DHE-RSA-WITH-AES-128-GCM-SHA256"]
    assert selected('suites = ["tls-psk-with-aes-128-gcm-sha256"]') == ["TLS-PSK-WITH-AES-128-GCM-SHA256"]
    assert selected('[suites]\ninclude = "*GCM*"\nkey_exchange = ["ECDHE", "PSK"]') == [
        "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-PSK-WITH-AES-128-GCM-SHA256"]
    assert selected('[suites]\nexclude = ["*CBC*"]\ncipher = "AES-128-*"') == [
        s["name"] for s in SUITES if "CBC" not in s["name"]]


def test_unknown_suite_suggests_close_matches_and_tlsbench_suites():
    with pytest.raises(plan.PlanError) as info:
        selected('suites = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA384"]')
    (msg,) = info.value.problems
    assert "matches no suite" in msg and "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256" in msg
    assert "tlsbench suites" in msg


def test_filter_value_matching_nothing_lists_known_values():
    with pytest.raises(plan.PlanError, match="suites.key_exchange: 'ECDH' matches no suite.*DHE, ECDHE, PSK"):
        selected('[suites]\nkey_exchange = ["ECDH"]')


def test_empty_selection_is_an_error():
    with pytest.raises(plan.PlanError, match="selection is empty"):
        selected('[suites]\ninclude = ["*PSK*"]\nkey_exchange = ["DHE"]')


def test_run_options_come_from_the_spec():
    names = spec.load().options.names
    (msg,) = problems('name = "x"\nrepetitions = 3\noptions = ["TURBO"]')
    assert msg.startswith("options[0]: 'TURBO' is not valid: allowed: ")
    if names:
        assert plan.parse(f'name = "x"\nrepetitions = 3\noptions = {names!r}', "t").plan.options == [names]


TLS13 = {"id": 0x1301, "name": "TLS_AES_128_GCM_SHA256", "key_exchange": "ECDHE", "authentication": "ANY",
         "cipher": "AES-128-GCM", "mac": "SHA256", "min_version": "TLS1.3", "max_version": "TLS1.3",
         "credentials": ["ecdsa-p256", "psk"]}


def resolved(text: str, suites=(*SUITES, TLS13)):
    loaded = plan.parse('name = "x"\nrepetitions = 3\n' + text, "t.toml")
    return plan.suites.resolve(loaded, {"mbedtls": list(suites)})


def test_an_option_sweep_is_one_configuration_per_set_and_misfits_are_counted():
    out = resolved('suites = [0x1301, 0xC02B]\ngroups = ["x25519"]\ncredentials = ["ecdsa-p256", "psk"]\n'
                   'options = [[], ["RESUME"], ["PSK_ONLY"], ["RESUME", "RESUME_ID"]]')
    keys = sorted(c.key.split("|", 1)[1] for c in out.configs)
    assert keys == ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256|x25519|ecdsa-p256|memory|none|0|1024",
                    "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256|x25519|ecdsa-p256|memory|none|0|1024|RESUME",
                    "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256|x25519|ecdsa-p256|memory|none|0|1024|RESUME|RESUME_ID",
                    "TLS_AES_128_GCM_SHA256|x25519|ecdsa-p256|memory|none|0|1024",
                    "TLS_AES_128_GCM_SHA256|x25519|ecdsa-p256|memory|none|0|1024|RESUME",
                    "TLS_AES_128_GCM_SHA256|x25519|psk|memory|none|0|1024",
                    "TLS_AES_128_GCM_SHA256|x25519|psk|memory|none|0|1024|PSK_ONLY",
                    "TLS_AES_128_GCM_SHA256|x25519|psk|memory|none|0|1024|RESUME"]
    assert out.not_applicable["PSK_ONLY needs the psk credential and a TLS 1.3 suite"] == 2
    assert out.not_applicable["RESUME_ID needs RESUME and a TLS 1.2 suite"] == 2  # TLS 1.3: ecdsa and psk


def test_one_option_set_hashes_as_before_sweeps():
    one = plan.parse('name = "x"\nrepetitions = 3\noptions = ["RESUME"]', "t").plan
    assert one.options == [["RESUME"]] and one.resolved()["options"] == ["RESUME"]
    assert one.hash() == plan.parse('name = "x"\nrepetitions = 3\noptions = [["RESUME"]]', "t").plan.hash()
    assert plan.parse('name = "x"\nrepetitions = 3', "t").plan.resolved()["options"] == []


def test_a_bad_option_sweep_says_what_to_write():
    (msg,) = problems('name = "x"\nrepetitions = 3\noptions = ["RESUME", ["MUTUAL_AUTH"]]')
    assert msg.startswith("options:") and "mixes names and lists" in msg
    (msg,) = problems('name = "x"\nrepetitions = 3\noptions = [["RESUME", "MUTUAL_AUTH"], ["MUTUAL_AUTH", "RESUME"]]')
    assert "listed twice" in msg and "order of names does not matter" in msg


def test_the_shipped_plans_are_valid():
    """Every plans/*.toml parses (agents aside: those are checked when a plan runs)."""
    from pathlib import Path

    shipped = sorted((Path(__file__).resolve().parents[1] / "plans").glob("*.toml"))
    assert any(p.name == "pq-link.toml" for p in shipped)
    for path in shipped:
        loaded = plan.load(path)
        assert loaded.plan.name == path.stem
    link = plan.load(shipped[[p.name for p in shipped].index("pq-link.toml")]).plan
    assert link.libraries == ["openssl@3.5", "wolfssl@5.7"] and link.network.dtls.cookies
    assert [(lk.preset, lk.loss) for lk in link.network.links] == [("ieee802154", 0), ("ieee802154", 5)]


def test_the_cycle_models_plugin_is_on_with_a_board_on_an_emulated_target_and_refused_where_it_cannot_be():
    """[device] cycles: on by default for a target with a board, off without one or when asked;
    without a board, or on a board reached over a serial line, `cycles = true` is one line."""
    base = 'name = "c"\nsuites = ["TLS-PSK-WITH-AES-128-CCM-8"]\n[device]\n'
    emulated = base + 'target = "qemu-mps2-an386"\n'

    def device(text: str):
        return plan.parse(text, "c.toml").plan.device

    assert device(emulated + 'board = "nrf52840"\n').step_cycles
    assert not device(emulated).step_cycles
    assert not device(emulated + 'board = "nrf52840"\ncycles = false\n').step_cycles
    assert not device(base + 'serial = "/dev/ttyACM0"\nfirmware = "fw.elf"\nboard = "nrf52840"\n').step_cycles
    with pytest.raises(plan.PlanError, match='cycles = true needs board = "..."'):
        device(emulated + "cycles = true\n")
    with pytest.raises(plan.PlanError, match="attaches to an emulated target only"):
        device(base + 'serial = "/dev/ttyACM0"\nfirmware = "fw.elf"\nboard = "nrf52840"\ncycles = true\n')
