# SPDX-License-Identifier: Apache-2.0
"""The report's section of the crypto primitives on the device: per operation the count of
each target × library build, and on the plan's board (an STM32G071, a Cortex-M0+) the part's
ms by the one conversion with its band, beside the count; a target whose core runs another
instruction stream (the Cortex-M33) gets its counts and one line saying why it has no time.
The real firmware under real QEMU on two cores; about 15 s with the images built (the first
time about 40 s per target)."""
from __future__ import annotations

import html
import re
import shutil

import pytest

from tlsbench import plan
from tlsbench.analysis.models.conversion import conversion, point_for
from tlsbench.analysis.pipeline import analyze
from tlsbench.app.run import run_experiment
from tlsbench.report.device_primitives import _ms
from tlsbench.report.html import build_html
from stores import load_path

M0, M33 = "qemu-cortex-m0", "qemu-mps2-an505"
BOARD = "stm32f091"  # a Cortex-M0 the cycle model is calibrated for: its estimate has a band


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    text = ('name = "devprim"\nrepetitions = 2\n[experiments]\ninclude = ["ecdsa-p256", "aes128-gcm"]\n'
            f'[device]\ntarget = ["{M0}", "{M33}"]\nboard = "{BOARD}"\n')
    out = tmp_path_factory.mktemp("devprim")
    summary = run_experiment(plan.parse(text, "devprim.toml"), out)
    assert summary.failed == 0
    return analyze(load_path(out / "devprim" / "tlsbench.db"))


def _section_text(page: str) -> str:
    start = page.index('id="device-primitives"')
    end = page.index("<h2", start)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page[start:end])))


def test_every_operation_is_counted_on_every_target(analysis):
    dp = analysis.results.device_primitives
    assert [t for t, _ in dp.places] == [M0, M33]
    assert dp.cores == {M0: "cortex-m0", M33: "cortex-m33"}
    ops = {(o.experiment, o.size, o.group): o.counts for o in dp.operations}
    assert {("ecdsa-p256", 0, "sign"), ("ecdsa-p256", 0, "verify"), ("aes128-gcm", 16384, "decrypt")} <= set(ops)
    for counts in ops.values():
        assert set(counts) == set(dp.places) and all(c.n == 2 and c.low <= c.median <= c.high for c in counts.values())
    sign, verify = ops[("ecdsa-p256", 0, "sign")], ops[("ecdsa-p256", 0, "verify")]
    assert all(verify[p].median > sign[p].median > 1_000_000 for p in dp.places)
    big, small = ops[("aes128-gcm", 16384, "encrypt")], ops[("aes128-gcm", 1024, "encrypt")]
    assert all(big[p].median > 10 * small[p].median for p in dp.places)
    assert sign[dp.places[0]].median != sign[dp.places[1]].median  # two cores, two instruction streams


def test_the_report_shows_counts_and_the_boards_estimate_beside_them(analysis):
    page = build_html(analysis, figures=[])
    assert len(page.encode()) < 1_000_000
    text = _section_text(page)
    dp = analysis.results.device_primitives
    sign = next(o for o in dp.operations if (o.experiment, o.group) == ("ecdsa-p256", "sign"))
    m0 = next(p for p in dp.places if p[0] == M0)
    conv = conversion(analysis.ds.device_experiments.unit, point_for(analysis.ds.device_experiments, None),
                      cpu="cortex-m0")
    assert conv.estimate and conv.band is not None  # the cycle model: an estimate with its band
    assert f"{sign.counts[m0].median:,.0f}" in text and _ms(conv, sign.counts[m0]) in text
    assert f"{M0} (cortex-m0): {conv.basis}; {conv.band_text()}" in text
    assert "A count, not a time" in text and "µs" not in text
    # The M33 runs ARMv7-M code, the board's M0+ ARMv6-M: its counts, no time, one line why.
    m33 = next(p for p in dp.places if p[0] == M33)
    assert f"{sign.counts[m33].median:,.0f}" in text
    assert re.search(rf"{M33}: no time on {BOARD}\S*: the counts are of cortex-m33 code", text)
    assert len(re.findall(r"≈ \d", text)) == len(dp.operations)  # one estimate per row: the M0's


def test_without_a_board_the_counts_stand_alone(analysis, monkeypatch):
    import tlsbench.report.device_primitives as view
    monkeypatch.setattr(view, "point_for", lambda ds, ref: None)
    text = _section_text(build_html(analysis, figures=[]))
    assert "≈" not in text and "name a board" in text
