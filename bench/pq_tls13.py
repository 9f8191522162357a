#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Post-quantum TLS 1.3 figures: plans/pq-tls13.toml (classical, hybrid and pure post-quantum
groups × classical and ML-DSA certificates, OpenSSL 3.5 and wolfSSL 5.7), its handshake
processing per peer (median and 95% CI, tracer overhead subtracted) and the bytes each peer
sent (REP counters: handshake and close_notify, no application data) per configuration, and
the cells a library refused with its reason.

Target: every measured cell's median handshake processing of both peers known to ±1% (the
plan adds rounds up to its max_repetitions where it is not yet); ML-DSA's server side misses
it at 3000 repetitions (rejection sampling: the section says by how much).

    .venv/bin/python bench/pq_tls13.py [--output DIR] [--reuse]
"""
from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, machine, today, update_section  # noqa: E402

from tlsbench import plan as planmod  # noqa: E402
from tlsbench.analysis.load import load  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402

PLAN = REPO / "plans" / "pq-tls13.toml"
TARGET_CI_PCT = 1.0
US = 1000.0  # ns per µs
# Rows in the plan's order of groups and credentials, libraries apart.
KIND = {"x25519": "classical", "secp256r1": "classical", "X25519MLKEM768": "hybrid",
        "SecP256r1MLKEM768": "hybrid", "P256_KYBER_LEVEL1": "hybrid (Kyber code point)",
        "MLKEM512": "ML-KEM", "MLKEM768": "ML-KEM", "MLKEM1024": "ML-KEM",
        "KYBER_LEVEL1": "Kyber code point", "KYBER_LEVEL3": "Kyber code point", "KYBER_LEVEL5": "Kyber code point"}


def cell(summary) -> str:
    return f"{summary.median / US:.1f} ±{summary.median_ci_pct:.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the run (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="analyse a finished run in --output, do not run")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-pq-"))
    plan = planmod.load(PLAN).plan
    wall = float("nan")
    if not args.reuse:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(PLAN), "--output", str(output)], check=True)
        wall = time.monotonic() - started
    db = output / plan.name / "tlsbench.db"
    a = analyze(load(db)).results
    with sqlite3.connect(db) as conn:
        skip = dict(conn.execute("SELECT id, skip_reason FROM config WHERE skip_reason IS NOT NULL"))
    order = {(lib, g, c): i for i, (lib, g, c) in enumerate(
        (lib, g, c) for lib in plan.libraries for g in plan.groups for c in plan.credentials)}
    rows, skipped, wide = [], defaultdict(list), []
    for cid, conf in sorted(a.configs.items(), key=lambda kv: order.get((kv[1].library, kv[1].grp, kv[1].credential), 0)):
        if cid in skip:
            skipped[conf.library].append((conf.grp, conf.credential, skip[cid]))
            continue
        client, server = (a.find(cid, "handshake_processing", peer) for peer in ("client", "server"))
        c2s, s2c = (a.find(cid, metric) for metric in ("bytes_c2s", "bytes_s2c"))
        if not (client and server and c2s and s2c):
            continue
        wide += [f"{conf.library} {conf.grp} {conf.credential} {p.peer}" for p in (client, server)
                 if p.summary.median_ci_pct > TARGET_CI_PCT]
        rows.append(f"| {conf.library} | {conf.grp} | {KIND.get(conf.grp, '')} | {conf.credential} | {cell(client.summary)} "
                    f"| {cell(server.summary)} | {c2s.summary.median:.0f} | {s2c.summary.median:.0f} | {client.summary.n} |")
    signing = [f"| {a.configs[r.config_id].grp} | {a.configs[r.config_id].credential} | {r.summary.median / US:.0f} "
               f"| {r.summary.q1 / US:.0f}–{r.summary.q3 / US:.0f} | {r.summary.p95 / US:.0f} | {r.summary.n} |"
               for r in a.rows if r.metric == "crypto" and r.label == "PK_SIGN" and r.peer == "server"
               and a.configs[r.config_id].credential.startswith("mldsa") and r.config_id not in skip]
    refused = "\n".join(
        f"- {lib}: {len(cells)} cells, e.g. {cells[0][0]} with {cells[0][1]}: \"{cells[0][2]}\""
        for lib, cells in skipped.items())
    stored = a.context.n_reps
    body = f"""
Script: `bench/pq_tls13.py` ({today()}; {machine()}).
`tlsbench run plans/pq-tls13.toml`: TLS_AES_128_GCM_SHA256, handshake only, both peers in one
agent over the memory transport; {plan.repetitions} repetitions in {plan.rounds} rounds per cell, then extra
rounds up to {plan.precision.max_repetitions} until the median handshake processing of both peers is known to
±{TARGET_CI_PCT:g}% (95% CI). {stored} repetitions stored{f' in {wall:.0f} s' if wall == wall else ''}; {a.context.excluded} excluded
(descheduled or flagged).

Processing: the sum of a peer's handshake steps, I/O and tracer overhead subtracted (µs, median ±
95% CI half-width). Bytes: what the client and the server sent over the whole repetition (REP
counters: the handshake and one close_notify each, 24 bytes in TLS 1.3), medians.
wolfSSL's post-quantum groups are its pre-standard Kyber code points (ML-KEM arithmetic, no
interoperability with ML-KEM peers); OpenSSL's are ML-KEM's (docs/backend-wolfssl.md).

| library | group | kind | credential | client processing µs | server processing µs | client bytes | server bytes | n |
|---|---|---|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

Refused by the agent (shown as skipped in the report; the host does not even plan a credential
a suite does not list, e.g. ML-DSA in wolfSSL):
{refused or '- none'}

Cells above ±{TARGET_CI_PCT:g}%: {len(wide)}{': ' + ', '.join(wide) if wide else ''}.
ML-DSA signs by rejection sampling: the number of attempts, so the server's CertificateVerify
signature (PK_SIGN, µs), varies from one handshake to the next far more than any other step, and
the median of the server's processing in ML-DSA cells stays above ±1% at the plan's
{plan.precision.max_repetitions} repetitions (its CI narrows as 1/√n: ±1% would take several times more):

| group | credential | PK_SIGN median | quartiles | p95 | n |
|---|---|---:|---|---:|---:|
{chr(10).join(signing)}

Rerun: `.venv/bin/python bench/pq_tls13.py`.
"""
    print(body)
    update_section("Post-quantum TLS 1.3", body)
    return 0 if not wide else 1


if __name__ == "__main__":
    sys.exit(main())
