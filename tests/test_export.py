# SPDX-License-Identifier: Apache-2.0
"""Exporters: one interface; Perfetto trace-event JSON follows the format's rules."""
from __future__ import annotations

import csv
import io
import json
from collections import defaultdict

import pytest
from click.testing import CliRunner

from analysis_support import GOLDEN_DB, golden  # noqa: F401
from tlsbench.export import FORMATS, exporter
from tlsbench.export.csv import COLUMNS


def check_trace_events(doc: dict) -> None:
    """Chrome trace-event format: required fields, µs timestamps, B/E balanced and nested
    per (pid, tid), non-decreasing time on each thread."""
    assert isinstance(doc["traceEvents"], list) and doc["traceEvents"]
    stacks: dict = defaultdict(list)
    last: dict = {}
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= e.keys()
        if e["ph"] == "M":
            continue
        assert isinstance(e["ts"], (int, float))
        key = (e["pid"], e["tid"])
        assert e["ts"] >= last.get(key, float("-inf")), e
        last[key] = e["ts"]
        if e["ph"] == "B":
            stacks[key].append(e)
        elif e["ph"] == "E":
            assert stacks[key], f"E without B: {e}"
            b = stacks[key].pop()
            assert b["name"] == e["name"]
        else:
            assert e["ph"] in ("i", "X")
    assert all(not s for s in stacks.values()), "unclosed B events"


def test_perfetto_of_chosen_repetitions(golden):  # noqa: F811
    reps = [int(r) for r in golden.ds.reps.id[:2]]
    doc = json.loads(exporter("perfetto").export(golden, reps))
    check_trace_events(doc)
    assert {e["pid"] for e in doc["traceEvents"]} == set(reps)
    threads = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {"client", "server"} <= threads
    b = [e for e in doc["traceEvents"] if e["ph"] == "B"]
    assert {"step", "crypto", "io"} <= {e["cat"] for e in b}
    # µs: the HANDSHAKE B/E distance is its slice duration (ns) / 1000.
    from tlsbench.analysis.vocab import vocab

    sl = golden.ds.slices
    i = next(i for i in range(len(sl)) if sl.rep[i] == reps[0] and sl.label[i] == vocab().role_label("handshake"))
    hs = [e for e in doc["traceEvents"] if e["name"] == "HANDSHAKE" and e["pid"] == reps[0]]
    assert [e["ph"] for e in hs] == ["B", "E"]
    assert hs[1]["ts"] - hs[0]["ts"] == pytest.approx(sl.dur[i] / 1000, abs=1e-3)


def test_checker_rejects_bad_nesting():
    bad = {"traceEvents": [{"name": "A", "ph": "B", "pid": 1, "tid": 0, "ts": 0},
                           {"name": "B", "ph": "B", "pid": 1, "tid": 0, "ts": 1},
                           {"name": "A", "ph": "E", "pid": 1, "tid": 0, "ts": 2},
                           {"name": "B", "ph": "E", "pid": 1, "tid": 0, "ts": 3}]}
    with pytest.raises(AssertionError):
        check_trace_events(bad)


def test_perfetto_of_an_unbalanced_trace_is_still_balanced(tmp_path):
    from analysis_support import TraceBuilder, store_with_trace
    from stores import load_path
    from tlsbench.analysis.pipeline import analyze

    b = TraceBuilder()
    b.ev("HANDSHAKE", "START", "none", 0).ev("CLIENT_HELLO", "START", "client", 5)
    b.ev("SEND", "START", "client", 6).ev("SEND", "STOP", "client", 9, 100)
    b.ev("SERVER_KEY_EXCHANGE", "START", "client", 20).ev("PK_VERIFY", "START", "client", 25)
    a = analyze(load_path(store_with_trace(tmp_path / "u.db", b.blob())), include_flagged=True)
    check_trace_events(json.loads(exporter("perfetto").export(a, [1])))


def test_csv_json_markdown(golden):  # noqa: F811
    rows = list(csv.DictReader(io.StringIO(exporter("csv").export(golden))))
    assert list(rows[0].keys()) == list(COLUMNS) and len(rows) == len(golden.results.rows)
    doc = json.loads(exporter("json").export(golden))
    assert doc["winners"][0]["places"][0]["config_id"] == golden.results.winners[0].winner.config_id
    assert doc["context"]["seed"] == 7
    md = exporter("markdown").export(golden)
    assert md.count("| Record write |") == 1 and "## Per configuration" in md


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_export(fmt, tmp_path):
    from tlsbench.cli import main

    out = tmp_path / f"x.{fmt}"
    res = CliRunner().invoke(main, ["export", str(GOLDEN_DB), "--format", fmt, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 100
