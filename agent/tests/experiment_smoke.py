#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end check of experiment RUNs over `serve` (stdlib only): HELLO's `experiments` list,
the ERRORs a bad experiment RUN gets (unknown id, size refused, connection fields set), and,
with --experiment NAME, a real run of that experiment: REPs shaped REPETITION > MEASURED_BLOCK
> USER_GROUPs, DONE, a setup refusal, then a handshake RUN on the same agent.
Usage: experiment_smoke.py AGENT [--experiment NAME]"""
import argparse
import json
import re
import struct
import subprocess
import sys

from serve_smoke import DONE, ERROR, HELLO, REP, RUN, SUITES, VERSION, frame, frames, run_req

START, STOP, INSTANT = 0, 1, 2
REPETITION, RUNQUEUE_WAIT, MEASURED_BLOCK, USER_GROUP = 1, 7, 500, 501  # spec/labels.toml
STATUS_OK = 0
PEER_NONE = 255


def exp_req(config_id, experiment, size, reps=3, warmup=1, suite=0, direction=0, record=1):
    """An experiment RUN: offset 66 names the experiment, total_bytes is its size."""
    head = struct.pack("<IHHBBBBIIIIII", config_id, suite, 0, 0, direction, 0, 0, reps, warmup,
                       size, record, 0, 0)
    return head + bytes(30) + struct.pack("<HI", experiment, 0)


def serve(agent, payloads):
    stream = b"".join(frame(RUN, p) for p in payloads)
    proc = subprocess.run([agent, "serve"], input=stream, capture_output=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    got = list(frames(proc.stdout))
    assert [t for t, _ in got[:2]] == [HELLO, SUITES]
    return json.loads(got[0][1]), got[2:]


def check_hello(experiments):
    assert isinstance(experiments, list)
    assert [e["id"] for e in experiments] == list(range(1, len(experiments) + 1))
    sources = [e["source"] for e in experiments]
    assert sources == sorted(sources, key=lambda s: s != "primitive"), "primitives first"
    for e in experiments:
        assert set(e) == {"id", "name", "description", "groups", "sizes", "source"}, e
        assert e["source"] in ("primitive", "user") and len(e["groups"]) <= 8, e
        assert all(isinstance(s, int) and s > 0 for s in e["sizes"]), e
    names = [e["name"] for e in experiments]
    assert len(set(names)) == len(names), "names are unique"
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*", n) for n in names), names


def records(rep):
    n = struct.unpack_from("<I", rep, 20)[0]
    return [struct.unpack_from("<HBBIQQQ", rep, 96 + 32 * i) for i in range(n)]


def check_rep_shape(rep, n_groups, tracing):
    config_id, index, status, peer = struct.unpack_from("<IIBB", rep)
    assert status == STATUS_OK and peer == PEER_NONE, (status, peer)
    wall, cpu = struct.unpack_from("<QQ", rep, 56)
    assert wall > 0, "the block's wall time is in the header, traced or not"
    recs = records(rep)
    if not tracing:
        assert recs == []
        return
    if (recs[-1][0], recs[-1][1]) == (RUNQUEUE_WAIT, INSTANT):  # after the span, where the port can tell
        recs = recs[:-1]
    assert (recs[0][0], recs[0][1]) == (REPETITION, START) and (recs[-1][0], recs[-1][1]) == (REPETITION, STOP)
    assert (recs[1][0], recs[1][1]) == (MEASURED_BLOCK, START)
    assert (recs[-2][0], recs[-2][1], recs[-2][6]) == (MEASURED_BLOCK, STOP, 0)
    groups = [r[6] for r in recs if r[0] == USER_GROUP and r[1] == START]
    assert groups and all(0 <= g < n_groups for g in groups), groups
    assert all(r[2] == PEER_NONE for r in recs)


def run_experiment(agent, hello, name):
    exp = next((e for e in hello["experiments"] if e["name"] == name), None)
    assert exp, f"{name} is not in HELLO's experiments"
    size = exp["sizes"][0] if exp["sizes"] else 0
    suites = [s for s in json.loads(subprocess.run([agent, "suites", "--json"], capture_output=True,
                                                   check=True).stdout)["suites"] if s["credentials"]]
    _, got = serve(agent, [exp_req(1, exp["id"], size), exp_req(2, exp["id"], 1 if exp["sizes"] else 0, reps=1),
                           run_req(3, suites[0]["id"], reps=1)])
    types = [t for t, _ in got]
    # sensor-json's setup refuses size 1 (its smallest message is larger): an ERROR, no REP.
    assert types[:4] == [REP, REP, REP, DONE], types
    for _, rep in got[:3]:
        check_rep_shape(rep, len(exp["groups"]), hello["tracer"]["enabled"])
    assert [struct.unpack_from("<I", rep, 4)[0] for _, rep in got[:3]] == [0, 1, 2]
    done = json.loads(got[3][1])
    assert {k: done[k] for k in ("config_id", "shipped", "failed")} == {"config_id": 1, "shipped": 3, "failed": 0}
    assert done["clock"]["source"] in ("TSC", "CNTVCT_EL0", "CLOCK_MONOTONIC")  # checked after the RUN
    rest = types[4:]
    if rest[0] == ERROR:
        err = json.loads(got[4][1])
        assert err["code"] == "unsupported" and "setup" in err["message"] and not err["fatal"], err
    else:
        assert rest[:2] == [REP, DONE], rest
    assert types[-2:] == [REP, DONE], "a handshake RUN still runs after experiment RUNs"
    print(f"experiment {name}: ok")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("agent")
    ap.add_argument("--experiment")
    args = ap.parse_args()
    hello, _ = serve(args.agent, [])
    assert hello["protocol"] == VERSION
    check_hello(hello["experiments"])
    n = len(hello["experiments"])

    bad = [exp_req(1, n + 1, 0),                     # unknown id
           exp_req(2, n + 1, 0, suite=0xC02B),       # a suite in an experiment RUN
           exp_req(3, n + 1, 0, direction=3)]        # data in an experiment RUN
    with_sizes = [e for e in hello["experiments"] if e["sizes"]]
    without = [e for e in hello["experiments"] if not e["sizes"]]
    if with_sizes:
        e = with_sizes[0]
        bad += [exp_req(4, e["id"], 0), exp_req(5, e["id"], max(e["sizes"]) + 1)]
    if without:
        bad += [exp_req(6, without[0]["id"], 1)]
    _, got = serve(args.agent, bad)
    errors = [json.loads(p) for t, p in got]
    assert all(t == ERROR for t, _ in got) and len(errors) == len(bad), got
    assert errors[0]["code"] == "unsupported" and f"1 .. {n}" in errors[0]["message"] or n == 0, errors[0]
    assert "no experiments" in errors[0]["message"] or n > 0, errors[0]
    assert errors[1]["code"] == "bad_request" and errors[1]["message"].startswith("suite"), errors[1]
    assert errors[2]["code"] == "bad_request" and errors[2]["message"].startswith("direction"), errors[2]
    for err in errors[3:]:
        assert err["code"] == "unsupported" and "size" in err["message"], err
        assert "experiments" in err["hint"], err
    if args.experiment:
        run_experiment(args.agent, hello, args.experiment)
    print(f"experiment smoke: ok; {n} experiments in {hello['agent']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
