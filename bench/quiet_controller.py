#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the controller costs the handshakes it measures (issue 17), per library: its
fastest handshake and the ECDHE-ECDSA one, in memory, handshake only.

Every try runs five arms back to back, in an order that rotates from try to try, so drift on
this shared machine hits all of them alike:
  sweep        `tlsbench run` of a one-configuration plan (rounds of batches, every REP
               checked and stored), the agents on CPUs of their own (the default --pin);
  sweep, unpinned  the same with --no-pin;
  standalone   the same agent binary, `run --out FILE` (no controller at all);
  standalone, pinned  the same on the sweep's agent CPU, priority and scheduling group;
  raw loop     bench/raw/raw_<library>.c: the library alone, configured as the agent
               configures it, no tracer, no tlsbench code.
Figures: the median handshake (wall and thread CPU time, from the REP headers) under the
sweep ÷ standalone pinned alike, per try, median over tries (target ≤ 1.01); handshakes/s of the sweep ÷
the raw loop (≥ 0.95), each counted from its first handshake's start to its last one's end
(agent start-up and the greeting are not handshakes); descheduled repetitions (run-queue
wait over 2% of the repetition and 50 µs, analysis/derive/load.py) of the sweep against standalone.

    .venv/bin/python bench/quiet_controller.py [--tries K] [--scale X]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan
from tlsbench.core import spec  # noqa: E402
from tlsbench.analysis.derive.dataset import DESCHEDULED_FRACTION, DESCHEDULED_MIN_NS  # noqa: E402
from tlsbench.analysis.derive.slices import decode  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.run import protocol  # noqa: E402
from tlsbench.run.agents import find_agent  # noqa: E402
from tlsbench.run.placement import choose  # noqa: E402

RAW = REPO / "bench" / "raw"
CREDS = REPO / "agent" / "creds" / "fixed"  # the agents' own (committed) test credentials
RAW_LINK = {  # how each raw loop links its library: statically, as the agents do
    "openssl": ["-Wl,-Bstatic", "-lssl", "-lcrypto", "-Wl,-Bdynamic", "-ldl", "-lpthread"],
    "mbedtls": ["-Wl,-Bstatic", "-lmbedtls", "-lmbedx509", "-lmbedcrypto", "-Wl,-Bdynamic"],
    "wolfssl": ["-Wl,-Bstatic", "-lwolfssl", "-Wl,-Bdynamic", "-lm", "-lpthread"],
}
ARMS = ("sweep", "sweep, unpinned", "standalone", "standalone, pinned", "raw loop")


@dataclass(frozen=True)
class Case:
    library: str
    suite: str          # the agent's name
    group: str          # spec name
    credential: str
    reps: int
    raw_args: tuple[str, ...]  # the raw loop's own names for the same configuration
    fastest: bool       # the library's fastest handshake (else: the ECDHE-ECDSA one)


def cases() -> list[Case]:
    ecdsa = str(CREDS / "ecdsa-p256")
    tls13 = ("--tls13", "1", "--creds", ecdsa)
    tls12 = ("--tls13", "0", "--creds", ecdsa)
    return [
        Case("openssl", "TLS_AES_128_GCM_SHA256", "x25519", "ecdsa-p256", 1500,
             ("--suite", "TLS_AES_128_GCM_SHA256", "--group", "X25519", *tls13), True),
        Case("openssl", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "secp256r1", "ecdsa-p256", 1000,
             ("--suite", "ECDHE-ECDSA-AES128-GCM-SHA256", "--group", "P-256", *tls12), False),
        Case("wolfssl", "TLS_AES_128_GCM_SHA256", "x25519", "ecdsa-p256", 1500,
             ("--suite", "TLS13-AES128-GCM-SHA256", "--group", "x25519", *tls13), True),
        Case("wolfssl", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "secp256r1", "ecdsa-p256", 1000,
             ("--suite", "ECDHE-ECDSA-AES128-GCM-SHA256", "--group", "secp256r1", *tls12), False),
        Case("mbedtls", "TLS-PSK-WITH-AES-128-GCM-SHA256", "default", "psk", 6000,
             ("--suite", "0x00A8", "--creds", ""), True),
        Case("mbedtls", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "secp256r1", "ecdsa-p256", 150,
             ("--suite", "0xC02B", "--group", "secp256r1", "--creds", ecdsa), False),
    ]


@dataclass
class Arm:
    """One arm of one try: handshakes/s and per-repetition figures."""

    rate: float
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    descheduled: list[bool] = field(default_factory=list)


def raw_binary(library: str, workdir: Path) -> Path:
    out = workdir / f"raw_{library}"
    if not out.exists():
        subprocess.run(["cc", "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", f"-I{RAW}", str(RAW / f"raw_{library}.c"),
                        "-o", str(out), *RAW_LINK[library]], check=True)
    return out


def descheduled(records: bytes) -> bool:
    """The report's rule (analysis/derive/load.py) on one REP's records: the run-queue wait over
    the REPETITION span."""
    rec = decode(records)
    labels = spec.load().label_by_name
    span = rec[rec["label"] == labels["REPETITION"].id]
    wait = rec[rec["label"] == labels["RUNQUEUE_WAIT"].id]
    if len(span) < 2 or not len(wait):
        return False
    dur = int(span["t_ns"][-1]) - int(span["t_ns"][0])
    return int(wait["value"][0]) > max(DESCHEDULED_FRACTION * dur, DESCHEDULED_MIN_NS)


def span_rate(starts: list[int], walls: list[int]) -> float:
    """Handshakes per second from the first repetition's start to the last one's end."""
    return len(starts) / ((max(s + w for s, w in zip(starts, walls)) - min(starts)) / 1e9)


def sweep(case: Case, workdir: Path, pin: bool) -> Arm:
    text = (f'name = "quiet"\nlibraries = ["{case.library}"]\nrepetitions = {case.reps}\nrounds = 10\nwarmup = 0\n'
            f'suites = ["{case.suite}"]\ngroups = ["{case.group}"]\ncredentials = ["{case.credential}"]\n')
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        summary = run_experiment(plan.parse(text, "quiet.toml"), tmp, pin=pin)
        assert summary.stored == case.reps and summary.failed == 0, summary
        db = summary.folder / "tlsbench.db"
        with reader(db) as st:
            rows = [r for _, r in st.repetition_rows()]
        ds = load_path(db)
        arm = Arm(span_rate([r.start_ns for r in rows], [r.repetition_wall_ns for r in rows]),
                  [r.handshake_wall_ns for r in rows], [r.handshake_cpu_ns for r in rows])
        arm.descheduled = ds.descheduled_mask().tolist()
    return arm


def standalone(case: Case, workdir: Path, pinned: bool = False) -> Arm:
    """The agent alone; `pinned`: where and how a sweep runs it (its CPU, its priority, its
    own scheduling group: run/placement.py), so the controller is the only difference."""
    out = workdir / "standalone.tb"
    placement = choose(True)
    subprocess.run([str(find_agent(case.library)), "run", "--suite", case.suite, "--group", case.group,
                    "--credential", case.credential, "--reps", str(case.reps), "--warmup", "0", "--direction", "none",
                    "--bytes", "0", "--out", str(out)], check=True, capture_output=True,
                   start_new_session=pinned, preexec_fn=placement.in_child if pinned else None)
    reps = [protocol.decode_rep(f) for f in protocol.decode_frames(out.read_bytes())
            if f.type == spec.load().frames.REP]
    h = [r.header for r in reps]
    return Arm(span_rate([x.start_ns for x in h], [x.repetition_wall_ns for x in h]), [x.handshake_wall_ns for x in h],
               [x.handshake_cpu_ns for x in h], [descheduled(r.records) for r in reps])


def raw(case: Case, workdir: Path) -> Arm:
    got = subprocess.run([str(raw_binary(case.library, workdir)), *case.raw_args, "--reps", str(case.reps),
                          "--warmup", "0"], check=True, capture_output=True, text=True)
    return Arm(json.loads(got.stdout)["per_s"])


def measure(case: Case, tries: int, workdir: Path) -> dict[str, list[Arm]]:
    runs: dict[str, list[Arm]] = {arm: [] for arm in ARMS}
    do = {"sweep": lambda: sweep(case, workdir, True), "sweep, unpinned": lambda: sweep(case, workdir, False),
          "standalone": lambda: standalone(case, workdir), "standalone, pinned": lambda: standalone(case, workdir, True),
          "raw loop": lambda: raw(case, workdir)}
    for t in range(tries):
        for arm in ARMS[t % len(ARMS):] + ARMS[:t % len(ARMS)]:  # the order rotates: drift hits every arm
            runs[arm].append(do[arm]())
    return runs


def paired(runs: dict[str, list[Arm]], a: str, b: str, what: str) -> float:
    """Median over tries of median(a) / median(b) for a per-repetition figure."""
    return statistics.median(statistics.median(getattr(x, what)) / statistics.median(getattr(y, what))
                             for x, y in zip(runs[a], runs[b]))


def share(arms: list[Arm]) -> float:
    flags = [d for arm in arms for d in arm.descheduled]
    return 100.0 * sum(flags) / len(flags) if flags else float("nan")


def row(case: Case, runs: dict[str, list[Arm]]) -> dict:
    rate = {arm: statistics.median(x.rate for x in runs[arm]) for arm in ARMS}
    return {"case": case, "wall": paired(runs, "sweep", "standalone, pinned", "wall"),
            "cpu": paired(runs, "sweep", "standalone, pinned", "cpu"),
            "wall_plain": paired(runs, "sweep", "standalone", "wall"),
            "wall_unpinned": paired(runs, "sweep, unpinned", "standalone", "wall"),
            "median_us": statistics.median(statistics.median(x.wall) for x in runs["standalone"]) / 1e3,
            "rate": rate, "vs_raw": statistics.median(s.rate / r.rate for s, r in zip(runs["sweep"], runs["raw loop"])),
            "unpinned_vs_raw": statistics.median(s.rate / r.rate for s, r in zip(runs["sweep, unpinned"],
                                                                              runs["raw loop"])),
            "standalone_vs_raw": statistics.median(s.rate / r.rate for s, r in zip(runs["standalone"], runs["raw loop"])),
            "desched": {arm: share(runs[arm]) for arm in ARMS[:4]}}


def render(rows: list[dict], tries: int) -> str:
    lines = []
    for r in rows:
        c = r["case"]
        d = r["desched"]
        lines.append(f"| {c.library} | {c.suite} ({'fastest' if c.fastest else 'ECDHE-ECDSA'}) | {c.reps} | "
                     f"{r['median_us']:.1f} | {r['wall']:.4f} / {r['cpu']:.4f} | {r['wall_plain']:.4f} | "
                     f"{r['wall_unpinned']:.4f} | {r['rate']['sweep']:.0f} / {r['rate']['raw loop']:.0f} | "
                     f"{r['vs_raw']:.3f} | {r['unpinned_vs_raw']:.3f} | {r['standalone_vs_raw']:.3f} | "
                     f"{d['sweep']:.1f}% / {d['standalone, pinned']:.1f}% / {d['sweep, unpinned']:.1f}% / "
                     f"{d['standalone']:.1f}% |")
    met = lambda ok: "met" if ok else "not met"  # noqa: E731
    hs_ok = sum(r["wall"] <= 1.01 for r in rows)
    rate_ok = sum(r["vs_raw"] >= 0.95 for r in rows)
    ds_ok = sum(r["desched"]["sweep"] <= r["desched"]["standalone, pinned"] for r in rows)
    return f"""Script: `bench/quiet_controller.py` ({today()}; {machine()}).
Per library its fastest handshake and the ECDHE-ECDSA one (P-256), in memory, handshake only,
{tries} tries; each try runs the five arms back to back in an order that rotates. *Sweep*:
`tlsbench run` of a one-configuration plan in 10 rounds (default --pin: agent on CPU 1 at
nice −20 in a scheduling group of its own, controller on CPU 0; *unpinned*: --no-pin).
*Standalone*: the same agent binary's `run --out`, as a user starts it; *pinned*: on the
sweep's agent CPU with its priority and group, so that the controller is the only
difference. *Raw loop*: `bench/raw/raw_<library>.c`, the library alone configured as the
agent configures it. Handshake ratios: median of the per-try ratios of median handshake wall
(and thread CPU) time. Rates: handshakes/s from the first handshake's start to the last one's
end. Descheduled: repetitions whose run-queue wait exceeded 2% of the repetition and 50 µs.

| library | suite | reps | standalone median handshake (µs) | sweep ÷ standalone pinned: wall / CPU (≤ 1.01) | sweep ÷ standalone (wall) | unpinned sweep ÷ standalone (wall) | handshakes/s: sweep / raw | sweep ÷ raw (≥ 0.95) | unpinned ÷ raw | standalone ÷ raw | descheduled: sweep / standalone pinned / unpinned sweep / standalone |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(lines)}

Targets: handshake under the controller ÷ standalone ≤ 1.01: {met(hs_ok == len(rows))} ({hs_ok} of {len(rows)});
sweep ÷ raw loop ≥ 0.95: {met(rate_ok == len(rows))} ({rate_ok} of {len(rows)}); descheduled share under the
controller no higher than standalone on the same CPU: {met(ds_ok == len(rows))} ({ds_ok} of {len(rows)}).
Rerun: `.venv/bin/python bench/quiet_controller.py`.
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every case's repetitions")
    ap.add_argument("--only", help="library name: run its cases only (the section is not written)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            if args.only and case.library != args.only:
                continue
            case = Case(**{**case.__dict__, "reps": max(10, int(case.reps * args.scale))})
            rows.append(row(case, measure(case, args.tries, Path(tmp))))
            r = rows[-1]
            print(f"{case.library} {case.suite}: sweep/standalone wall {r['wall']:.4f} cpu {r['cpu']:.4f}, "
                  f"sweep/raw {r['vs_raw']:.3f}, descheduled {r['desched']}", flush=True)
    body = render(rows, args.tries)
    if not args.only:
        update_section("Quiet controller", body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
