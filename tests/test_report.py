# SPDX-License-Identifier: Apache-2.0
"""The HTML report: content, self-containment, and rendering in real headless Chromium
with a network log proving the page makes no request."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analysis_support import GOLDEN_DB, golden, synth_analysis, synth_db  # noqa: F401
from tlsbench.report.html import build_html, write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="apt-get install -y chromium")


class _Refs(HTMLParser):
    """Every URL-bearing attribute of a document."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [v for k, v in attrs if k in ("src", "href", "xlink:href", "srcset", "poster", "data", "action") and v]


@pytest.fixture(scope="module")
def report_html(golden):  # noqa: F811
    return build_html(golden)


def test_winners_first_and_named(report_html, golden):  # noqa: F811
    i_win = report_html.index('id="winners"')
    assert i_win < report_html.index('id="suites"') < report_html.index('id="steps"') < report_html.index('id="figures"')
    for w in golden.results.winners:
        assert w.question.title in report_html
        assert golden.results.config_labels[w.winner.config_id] in report_html[i_win:report_html.index('id="suites"')]


def test_a_classical_only_run_has_no_post_quantum_section(report_html, golden):  # noqa: F811
    """The side-by-side section is for runs that measured a hybrid or post-quantum group or
    credential (tests/test_pq_e2e.py has one); the golden run is classical TLS 1.2."""
    assert golden.results.postquantum == [] and 'id="postquantum"' not in report_html


def test_context_is_reported(report_html):
    for needle in ("Tracer overhead", "empty span", "CLOCK_MONOTONIC", "seed 7", "mbed TLS 2.28.3", "Exclusions"):
        assert needle in report_html


def test_self_contained(report_html):
    assert not re.search(r"https?://", report_html)
    p = _Refs()
    p.feed(report_html)
    assert p.refs and all(r.startswith(("data:", "#")) for r in p.refs)
    assert "@import" not in report_html and not re.search(r"url\((?!#)", report_html)  # only the SVGs' own #ids


def test_flagged_repetitions_counted_in_report(synth_analysis):  # noqa: F811
    html = build_html(synth_analysis)
    ctx = synth_analysis.results.context
    assert f"{ctx.excluded} repetitions excluded" in html
    assert "--include-flagged" in html


def _chromium(url: str, tmp: Path) -> tuple[str, list[dict]]:
    netlog = tmp / "netlog.json"
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
         f"--log-net-log={netlog}", "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True)
    log = json.loads(netlog.read_text())
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    # Requests the page made (the browser's own service requests have no origin).
    page = [e["params"] for e in log["events"]
            if types.get(e["type"]) == "URL_REQUEST_START_JOB"
            and "url" in e.get("params", {}) and e["params"].get("initiator") != "not an origin"]
    return out.stdout, page


def _fetched(requests: list[dict]) -> list[str]:
    return [r["url"] for r in requests if not r["url"].startswith(("file:", "data:"))]


@needs_chromium
def test_renders_in_chromium_without_network(golden, tmp_path):  # noqa: F811
    path = write_report(golden, tmp_path / "report.html")
    dom, requests = _chromium(path.as_uri(), tmp_path)
    assert "Winners" in dom and dom.count("<figure") >= 5
    assert _fetched(requests) == []
    # The inline script ran under the page's CSP (allowed by its hash): sortable headers, a
    # filter box above the long tables.
    assert 'title="sort by this column"' in dom and 'class="filter"' in dom


@needs_chromium
def test_network_log_detects_a_fetching_page(tmp_path):
    # Control: the detector must see a request when a page makes one.
    page = tmp_path / "fetch.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    _, requests = _chromium(page.as_uri(), tmp_path)
    assert any("127.0.0.1" in u for u in _fetched(requests))


def test_cli_report_writes_the_file(tmp_path):
    from click.testing import CliRunner

    from tlsbench.cli import main

    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["report", str(GOLDEN_DB), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("<!DOCTYPE html>")


@pytest.fixture(scope="module")
def missed_target(golden):  # noqa: F811
    """The golden experiment as if its plan asked for ±0.5%: every configuration misses it."""
    from stores import load_path
    from tlsbench.analysis.pipeline import analyze

    ds = load_path(GOLDEN_DB)
    ds.experiment["plan_json"] = json.dumps({"rounds": 3, "precision": {"target_ci_percent": 0.5,
                                                                         "max_repetitions": 100}})
    analysis = analyze(ds, seed=7)
    return analysis, build_html(analysis)


def test_the_first_screen_answers_and_no_configuration_gets_a_warning_box(missed_target):
    analysis, html = missed_target
    res = analysis.results
    summary, precision = html.index('id="summary"'), html.index('<details id="precision">')  # collapsed
    assert summary < html.index('id="winners"') < precision < html.index("<figure") and precision < html.index('id="suites"')
    head = html[summary:html.index("</section>", summary)]
    assert "Measured" in head and "Where" in head and "AMD EPYC" in head
    assert f"{res.precision.configs_above} of {len(res.configs)} configurations are above the plan" in head
    assert res.precision.configs_above == len(res.configs) == 3
    table = head[precision - summary:]
    for m in res.precision.misses:
        assert res.config_labels[m.config_id] in table and f"{m.half_width_pct:,.2f}" in table
    boxes = [unescape(b) for b in re.findall(r'<div class="warn">(.*?)</div>', html, re.S)]
    assert boxes == res.notes  # the run as a whole only
    assert not any(label in box for box in boxes for label in res.config_labels.values())
    assert any("above the plan's ±0.5%" in w for w in res.warnings)  # exports keep them in words
    for w in res.winners:
        assert ("not significant" if not w.significant and len(w.places) > 1 else "significant") in head


def test_figures_are_inline_svg_with_ids_of_their_own(report_html, golden):  # noqa: F811
    from collections import Counter

    assert "<img" not in report_html and "data:image/svg" not in report_html
    shared = report_html.count('<svg width="0" height="0"')  # the page's one set of hatch patterns
    assert shared <= 1 and report_html.count("<svg") == report_html.count("<figure") + shared >= 5
    assert report_html.count("<pattern ") == len(set(re.findall(r'<pattern id="([^"]+)"', report_html)))
    geometry = " ".join(re.findall(r' d="([^"]*)"', report_html))
    assert geometry and not re.search(r"\d\.\d{2}", geometry) and "\n" not in geometry  # 1/10 point, one line
    assert '<svg aria-label="' in report_html and "<?xml" not in report_html and "<metadata>" not in report_html
    ids = Counter(re.findall(r' id="([^"]+)"', report_html))
    assert [i for i, n in ids.items() if n > 1] == []
    for ref in set(re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', report_html)):
        assert ids[next(r for r in ref if r)] == 1  # every reference finds its own figure's element


def test_figures_are_readable_in_grayscale(golden):  # noqa: F811
    """Series differ by more than colour: hatched bars, lines with dash patterns and markers."""
    from tlsbench.report import figures

    figs = {f.name: f.figure for f in figures.all_figures(golden, 7)}
    ax = figs["steps_client"].axes[0]  # bars drawn as patches or as one collection per series
    hatches = {p.get_hatch() for p in [*ax.patches, *ax.collections]}
    assert len(hatches - {None, ""}) >= 3
    lines = [l for l in figs["density_write_processing_post"].axes[0].get_lines()]
    assert len({(l.get_linestyle(), l.get_marker()) for l in lines}) == len(lines) >= 2
    for f in figs.values():
        figures.plt.close(f)


def test_a_figure_drawn_once_is_cropped_as_savefig_crops_it(golden):  # noqa: F811
    """One drawing, cropped by its view box, keeps what bbox_inches="tight" keeps: the same size."""
    import io

    from tlsbench.report import figures

    def size(svg: bytes) -> tuple[float, ...]:
        return tuple(float(v) for v in re.search(rb'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())

    for spec in figures.all_figures(golden, 7):
        buf = io.BytesIO()
        with figures.plt.rc_context(figures.STYLE):
            spec.figure.savefig(buf, format="svg", bbox_inches="tight")
        assert size(figures.render(spec.figure, "svg")) == pytest.approx(size(buf.getvalue()), abs=0.01), spec.name
        figures.plt.close(spec.figure)


@pytest.mark.parametrize("fmt, magic, option", [("svg", b"<svg", "--figure-format"), ("pdf", b"%PDF", "--format")])
def test_report_writes_each_figure_as_a_file_for_papers(tmp_path, fmt, magic, option):
    """--figure-format; --format still works for a while, and says it is deprecated (it names
    a data format in the other commands)."""
    from click.testing import CliRunner

    from tlsbench.cli import main

    out = CliRunner().invoke(main, ["report", str(GOLDEN_DB), "--out", str(tmp_path / "r.html"),
                                    "--figures", str(tmp_path / "figs"), option, fmt])
    assert out.exit_code == 0, out.output
    assert ("deprecated" in out.output) == (option == "--format")
    files = sorted((tmp_path / "figs").iterdir())
    assert len(files) >= 5 and all(f.suffix == f".{fmt}" for f in files)
    assert all(magic in f.read_bytes()[:400] for f in files)
    html = (tmp_path / "r.html").read_text()
    assert {f.stem for f in files} <= set(re.findall(r'<figure id="fig-([^"]+)"', html))


@pytest.mark.parametrize("shape", ["normal", "two modes", "skewed", "few", "outliers far beyond the grid"])
def test_binned_density_is_the_kernel_sum(shape):
    """The binned KDE is the direct sum of a Gaussian per value, to 0.01% of its peak."""
    import numpy as np

    from tlsbench.report.figures import _kde_direct, kde

    rng = np.random.default_rng(3)
    sample = {"normal": rng.normal(10, 1, 4000), "two modes": np.r_[rng.normal(5, .1, 2000), rng.normal(9, 2, 2000)],
              "skewed": rng.lognormal(2, 0.8, 4000), "few": rng.normal(0, 1, 12),
              "outliers far beyond the grid": np.r_[rng.normal(1, 1e-3, 3990), np.full(10, 1e9)]}[shape]
    grid = np.linspace(*np.percentile(sample, [0.5, 99.5]), 400)
    h = 1.06 * sample.std(ddof=1) * len(sample) ** -0.2
    direct = _kde_direct(sample, grid, h)
    assert np.abs(kde(sample, grid) - direct).max() <= 1e-4 * direct.max()
