# SPDX-License-Identifier: Apache-2.0
"""Decode the frame stream the real agent writes (`run --out FILE`) with the host codec."""
import subprocess

from tlsbench.core import spec
from tlsbench.run import protocol

S = spec.load()
SUITE = "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"


def test_agent_frame_file_decodes(tmp_path, agent_path):
    out = tmp_path / "frames.bin"
    subprocess.run([str(agent_path), "run", "--suite", SUITE, "--reps", "2", "--out", str(out)],
                   check=True, capture_output=True, timeout=60)
    frames = protocol.decode_frames(out.read_bytes())
    names = [f.type_name for f in frames]
    assert names[:2] == ["HELLO", "SUITES"] and names[-1] == "DONE" and names.count("REP") == 2
    hello = frames[0].json()
    S.check_agent(hello)  # built from the same spec files
    suites = {s["name"]: s for s in frames[1].json()["suites"]}
    reps = [protocol.decode_rep(f) for f in frames if f.type == S.frames.REP]
    assert [r.header.index for r in reps] == [0, 1]
    for rep in reps:
        h = rep.header
        assert h.status == S.status.OK and h.n_records * 32 == len(rep.records) > 0
        labels = {int.from_bytes(rep.records[i:i + 2], "little") for i in range(0, len(rep.records), 32)}
        assert labels <= set(S.label_by_id)  # every label id is declared
        assert labels & S.label_ids("step") and labels & S.label_ids("phase")
    assert frames[-1].json()["shipped"] == 2
    assert suites[SUITE]["credentials"]
