# SPDX-License-Identifier: Apache-2.0
"""The HTML report: content, self-containment, and rendering in real headless Chromium
with a network log proving the page makes no request."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
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
        self.refs += [v for k, v in attrs if k in ("src", "href", "srcset", "poster", "data", "action") and v]


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
    assert "@import" not in report_html and "url(" not in report_html


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
