# SPDX-License-Identifier: Apache-2.0
"""Capture formats, marker edges, the clock fit and the integration, on small hand-made data."""
from __future__ import annotations

import numpy as np
import pytest

from tlsbench.analysis.models.energy import EnergyError
from tlsbench.analysis.models.energy.align import Pulses, Windows, fit, pulses
from tlsbench.analysis.models.energy.capture import Units, detect, read, split_header
from tlsbench.analysis.models.energy.measure import integrals


def write(tmp_path, text: str, name: str = "c.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("column, expected", [
    ("time (ms)", ("time", "ms")), ("#time (s)", ("time", "s")), ("t[us]", ("t", "us")),
    ("current_mA", ("current", "mA")), ("Current(uA)", ("current", "uA")), ("voltage", ("voltage", None)),
    ("in0", ("in0", None)), ("power_W", ("power_w", None)),  # W is no unit of time, current or voltage
])
def test_header_names_and_units(column, expected):
    assert split_header(column) == expected


PPK2_ROWS = [("0", "100.000", "0"), ("0.01", "200.000", "1"), ("0.02", "300.000", "X"), ("0.03", "400.000", "-")]


def test_ppk2_string_columns_and_old_bits(tmp_path):
    path = write(tmp_path, "Timestamp(ms),Current(uA),D0-D7\n" + "".join(f"{t},{i},{d}1000000\n" for t, i, d in PPK2_ROWS))
    c = read(path)
    assert c.format == "ppk2" and c.voltage is None and c.channel == "D0"
    assert c.t == pytest.approx([0, 1e-5, 2e-5, 3e-5]) and c.current == pytest.approx([1e-4, 2e-4, 3e-4, 4e-4])
    np.testing.assert_array_equal(c.marker(), [0, 1, 0.5, np.nan])
    np.testing.assert_array_equal(read(path, marker="d1").marker(), [1, 1, 1, 1])  # case-insensitive
    cols = write(tmp_path, "Timestamp(ms),Current(uA),D0,D1,D2,D3,D4,D5,D6,D7\n" + "".join(
        f"{t},{i},{d},0,0,0,0,0,0,1\n" for t, i, d in PPK2_ROWS))
    np.testing.assert_array_equal(read(cols).marker(), [0, 1, 0.5, np.nan])
    np.testing.assert_array_equal(read(cols, marker="D7").marker(), [1, 1, 1, 1])
    bits = write(tmp_path, "Timestamp(ms),Current(uA),Bits\n0,1,1\n0.01,1,10000001\n")  # old app: first digit D7
    np.testing.assert_array_equal(read(bits).marker(), [1, 1])
    np.testing.assert_array_equal(read(bits, marker="D7").marker(), [0, 1])
    bare = read(write(tmp_path, "Timestamp(ms),Current(uA)\n0,1\n0.01,1\n"))
    with pytest.raises(EnergyError, match="no marker channel 'D0' \\(its digital channels: none\\); .*--marker"):
        bare.marker()


def test_joulescope_with_and_without_header(tmp_path):
    c = read(write(tmp_path, "#time (s),current (A),voltage (V),power (W),in0\n0,0.001,3.3,0.0033,0\n1e-6,0.002,3.2,0.0064,1\n"))
    assert c.format == "joulescope" and c.voltage == pytest.approx([3.3, 3.2]) and c.channels == ["in0"]
    np.testing.assert_array_equal(c.marker(), [0, 1])
    bare = read(write(tmp_path, "0.0000000,1.0000e-03,3.3000\n0.0000005,2.0000e-03,3.3000\n"), "joulescope")
    assert bare.t == pytest.approx([0, 5e-7]) and bare.current == pytest.approx([1e-3, 2e-3]) and bare.level is None
    with pytest.raises(EnergyError, match="no marker channel 'in0'.*its digital channels: none"):
        bare.marker()
    with pytest.raises(EnergyError, match="marker column 'in0' holds values outside 0..1"):
        read(write(tmp_path, "#time (s),current (A),in0\n0,1,0\n1,1,3.3\n"))


def test_generic_units_from_header_or_options(tmp_path):
    c = read(write(tmp_path, "time_us,current_mA,voltage_mV,marker\n0,1.5,3300,0\n10,2.5,3300,1\n"))
    assert c.format == "generic" and c.t == pytest.approx([0, 1e-5]) and c.current == pytest.approx([1.5e-3, 2.5e-3])
    np.testing.assert_array_equal(c.marker(), [0, 1])
    assert c.voltage == pytest.approx([3.3, 3.3])
    text = "time,current,marker\n0,1,0\n2,3,1\n"
    with pytest.raises(EnergyError, match="column 'time' has no unit: .*--time-unit"):
        read(write(tmp_path, text))
    c = read(write(tmp_path, text), units=Units(time="ms", current="uA"))
    assert c.t == pytest.approx([0, 2e-3]) and c.current == pytest.approx([1e-6, 3e-6])
    with pytest.raises(EnergyError, match="says mA, the option says uA"):
        read(write(tmp_path, "time_s,current_mA\n0,1\n1,2\n"), units=Units(current="uA"))
    with pytest.raises(EnergyError, match="unit 'furlong' is not valid for time; allowed: s, ms"):
        read(write(tmp_path, "time (furlong),current (A)\n0,1\n1,2\n"))
    with pytest.raises(EnergyError, match="no current column"):
        read(write(tmp_path, "time_s,volts\n0,1\n1,2\n"))


def test_bad_captures_are_refused_with_where(tmp_path):
    with pytest.raises(EnergyError, match="time does not increase at sample 3"):
        read(write(tmp_path, "time_s,current_A\n0,1\n1,1\n1,1\n"))
    with pytest.raises(EnergyError, match="not a PPK2 export"):
        read(write(tmp_path, "time_s,current_A\n0,1\n"), "ppk2")
    with pytest.raises(EnergyError, match="digital sample 'Z' is not valid; allowed: 0, 1, X, -"):
        read(write(tmp_path, "Timestamp(ms),Current(uA),D0-D7\n0,1,Z0000000\n0.01,1,00000000\n"))
    assert detect("Timestamp(ms),Current(uA)") == "ppk2" and detect("#time,current,voltage") == "joulescope"
    with pytest.raises(EnergyError, match="first line is not a header"):
        read(write(tmp_path, "0,1\n1,2\n"), "generic")


def test_integrals_are_exact_for_piecewise_linear_power():
    t = np.array([0.0, 1.0, 2.0, 4.0])
    g = np.array([0.0, 2.0, 2.0, 6.0])
    a, b = np.array([0.0, 0.5, 1.5, 0.0]), np.array([4.0, 1.0, 3.0, 0.25])
    # by hand: whole = 1 + 2 + 8 = 11; [0.5, 1] = 0.75; [1.5, 3] = 1 + (2 + 4)/2 = 4; [0, 0.25] = 0.0625
    assert integrals(t, g, a, b) == pytest.approx([11.0, 0.75, 4.0, 0.0625])


def edges(levels: list[int], dt: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(len(levels)) * dt, np.array(levels, float)


def test_pulse_edges_interpolate_and_the_capture_must_start_and_end_low():
    t, lv = edges([0, 0, 1, 1, 0.5, 0, 1, 0])
    p = pulses(t, lv, "D0", "c.csv")
    assert p.rise == pytest.approx([1.5e-6, 5.5e-6]) and p.fall == pytest.approx([4e-6, 6.5e-6])
    with pytest.raises(EnergyError, match="starts with marker D0 high.*does not cover"):
        pulses(*edges([1, 0, 0]), "D0", "c.csv")
    with pytest.raises(EnergyError, match="ends with marker D0 high.*does not cover"):
        pulses(*edges([0, 1, 1]), "D0", "c.csv")


def _windows(n: int, slack=None) -> Windows:
    start = 10_000_000_000 + np.arange(n, dtype=np.int64) * 5_000_000  # 5 ms apart, 3 ms long
    return Windows(np.arange(1, n + 1), start, start + 3_000_000, np.zeros(n) if slack is None else np.asarray(slack))


def _pulses(w: Windows, offset: float, rate: float, jitter=None) -> Pulses:
    to = lambda ns: offset + rate * (ns - w.start[0]) * 1e-9  # noqa: E731
    j = np.zeros(2 * len(w.rep)) if jitter is None else np.asarray(jitter)
    return Pulses(to(w.start) + j[:len(w.rep)], to(w.stop) + j[len(w.rep):])


T = np.arange(0, 0.05, 1e-6)  # a 1 MS/s capture's sample times


def test_fit_recovers_offset_and_drift():
    w = _windows(6)
    f = fit(_pulses(w, 0.0123, 1 + 40e-6), w, T, "D0", "c.csv")
    assert f.offset_s == pytest.approx(0.0123, abs=1e-12) and f.drift_ppm == pytest.approx(40, abs=1e-6)
    assert f.residual_max_s < 1e-12 and (f.edges, f.edges_skipped) == (12, 0)
    assert f.to_capture(w.stop[-1:])[0] == pytest.approx(0.0123 + (1 + 40e-6) * 0.028)


def test_a_displaced_edge_is_left_out_only_if_its_repetition_lost_that_much():
    jitter = np.zeros(12)
    jitter[3] = 200e-6  # rising edge of the 4th repetition, 200 µs late
    w = _windows(6, slack=[0, 0, 0, 250_000, 0, 0])  # that repetition lost 250 µs (descheduled)
    f = fit(_pulses(w, 0.0123, 1.0, jitter), w, T, "D0", "c.csv")
    assert (f.edges, f.edges_skipped) == (11, 1) and f.residual_max_s < 1e-9
    w = _windows(6, slack=[0, 0, 0, 100_000, 0, 0])  # it lost less than the edge is off
    with pytest.raises(EnergyError, match="pulse 4 of 6 \\(rising edge .*200.0 µs away.*repetition 4"):
        fit(_pulses(w, 0.0123, 1.0, jitter), w, T, "D0", "c.csv")


def test_fit_refuses_counts_and_clock_rates_that_do_not_match():
    w = _windows(6)
    p = _pulses(w, 0.0, 1.0)
    with pytest.raises(EnergyError, match="5 marker pulses on D0, but the experiment has 6 stored repetitions"):
        fit(Pulses(p.rise[:5], p.fall[:5]), w, T, "D0", "c.csv")
    with pytest.raises(EnergyError, match="clock would run at 1000× the trace's.*--time-unit"):
        fit(_pulses(w, 0.0, 1000.0), w, T, "D0", "c.csv")
