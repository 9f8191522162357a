# SPDX-License-Identifier: Apache-2.0
"""Power profiles: the built-ins, references (NAME, NAME-<F>mhz, a file), and validation
errors that name the field and what is allowed."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from tlsbench.cli import main
from tlsbench.analysis.models.energy import profiles as P

VALID = '''
name = "board"
description = "a test board"
supply_voltage_v = 3.0
default_frequency_mhz = 64
[[sources]]
id = "ds"
document = "Board datasheet, rev 1"
section = "Table 7"
[[cpu]]
frequency_mhz = 64
current_ma = 10
source = "ds"
[[cpu]]
frequency_mhz = 32
power_mw = 15
source = "ds"
[radio_tx]
current_ma = 20
source = "ds"
[radio_rx]
current_ma = 15
source = "assumption"
[idle]
current_ma = 0.5
source = "ds"
'''


def problems(text: str) -> list[str]:
    with pytest.raises(P.ProfileError) as exc:
        P.parse(text, "board.toml")
    return exc.value.problems


def test_builtins_are_valid_cite_sources_and_name_their_files():
    files = P.builtin_files()
    assert {"esp32", "host"} <= set(files)  # boards (spec/boards.toml) are profiles too: nrf52840
    for profile in P.builtins():
        assert profile.name in files  # the file name is the profile's name
        assert all(s.document and s.section for s in profile.sources)
        for _, draw in profile.draws():
            assert draw.source in [s.id for s in profile.sources] + [P.ASSUMPTION]
    assert P.resolve("esp32").name == "esp32-240mhz"
    assert [P.resolve(f"esp32-{f}mhz").cpu_w for f in (80, 160, 240)] == sorted(
        P.resolve(f"esp32-{f}mhz").cpu_w for f in (80, 160, 240))
    host = P.resolve("host")
    assert not host.has_radio and host.tx_w == host.cpu_w  # no radio: I/O at CPU power
    assert host.scale_measured and not P.resolve("esp32").scale_measured


def test_a_file_with_a_frequency_suffix_and_its_watts(tmp_path):
    path = tmp_path / "board.toml"
    path.write_text(VALID)
    op = P.resolve(str(path))
    assert (op.name, op.label) == ("board-64mhz", "estimate (profile board-64mhz)")
    assert (op.cpu_w, op.tx_w, op.rx_w, op.idle_w) == pytest.approx((0.030, 0.060, 0.045, 0.0015))
    assert P.resolve(f"{path}-32mhz").cpu_w == pytest.approx(0.015)
    assert op.time_scale == 1.0 and not op.scale_measured


def test_the_time_scale_follows_the_clock(tmp_path):
    path = tmp_path / "board.toml"
    path.write_text(VALID + "[time_scale]\nfactor = 20.0\nfrequency_mhz = 64\nbasis = 'timed'\n")
    assert P.resolve(str(path)).time_scale == pytest.approx(20.0)
    assert P.resolve(f"{path}-32mhz").time_scale == pytest.approx(40.0)  # half the clock, twice the time


@pytest.mark.parametrize("edit, needle", [
    (("current_ma = 10\n", "current_ma = 10\nvolts = 3\n"), "cpu[0].volts: unknown field (allowed: "),
    (("name = \"board\"\n", ""), "name: required field is missing"),
    (("current_ma = 10\n", "current_ma = 10\npower_mw = 30\n"), "cpu[0]: give exactly one of current_ma"),
    (("[radio_rx]\ncurrent_ma = 15\nsource = \"assumption\"", "[radio_rx]\ncurrent_ma = 15\nsource = \"dss\""),
     "radio_rx.source: 'dss' is not declared; allowed: ds, assumption"),
    (("supply_voltage_v = 3.0\n", ""), "cpu[0].current_ma: needs supply_voltage_v"),
    (("default_frequency_mhz = 64", "default_frequency_mhz = 100"), "allowed: the cpu frequencies 64, 32"),
    (("current_ma = 10\n", "current_ma = -1\n"), "cpu[0].current_ma: -1 is not valid: Input should be greater than 0"),
    (("current_ma = 10\n", 'current_ma = "10"\n'), "cpu[0].current_ma: '10' is not valid"),
    (("[idle]\ncurrent_ma = 0.5", "[idle]\ncurrent_ma = 12"), "cpu[1]: 15 mW is below idle (36 mW)"),
    (("[radio_tx]\ncurrent_ma = 20\nsource = \"ds\"\n", ""), "radio_tx, radio_rx: give both or neither"),
    (('name = "board"', 'name = "Board 1"'), "name: 'Board 1' is not valid: String should match pattern"),
])
def test_errors_name_the_field_and_what_is_allowed(edit, needle):
    old, new = edit
    assert old in VALID
    found = problems(VALID.replace(old, new, 1))
    assert any(needle in p for p in found), found


def test_bad_toml_and_unknown_references():
    assert problems("name = ")[0].startswith("not valid TOML")
    with pytest.raises(P.ProfileError, match="no power profile 'esp33'; did you mean esp32"):
        P.resolve("esp33")
    with pytest.raises(P.ProfileError, match="no CPU figure at 100 MHz; choose one of: esp32-80mhz"):
        P.resolve("esp32-100mhz")


def test_cli_lists_profiles_and_reports_a_bad_profile_in_one_line(tmp_path):
    out = CliRunner().invoke(main, ["energy", "profiles"], terminal_width=250)
    assert out.exit_code == 0
    assert all(name in out.output for name in ("esp32-80mhz", "esp32-240mhz", "nrf52840-64mhz", "host-2450mhz"))
    bad = tmp_path / "bad.toml"
    bad.write_text(VALID.replace("current_ma = 10\n", "current_ma = 10\npower_mw = 30\n"))
    out = CliRunner().invoke(main, ["energy", "estimate", "unused", "--profile", str(bad)])
    assert out.exit_code == 1 and "cpu[0]: give exactly one of current_ma" in out.output
    assert "Traceback" not in out.output
