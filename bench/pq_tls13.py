#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Post-quantum TLS 1.3 figures: plans/pq-tls13.toml (classical, hybrid and pure post-quantum
groups × classical and ML-DSA certificates, OpenSSL 3.5 and wolfSSL 5.7) and mbed TLS 3.6's
classical cells, their handshake processing per peer (median and 95% CI, tracer overhead
subtracted) and the bytes of each handshake flight per configuration, and the cells a library
refused with its reason.

Target: every measured cell's median handshake processing of both peers known to ±1% (the
plan adds rounds up to its max_repetitions where it is not yet); ML-DSA's server side misses
it at 3000 repetitions (rejection sampling: the section says by how much).

    .venv/bin/python bench/pq_tls13.py [--output DIR] [--reuse] [--store PQ_TLS13_DB]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan as planmod  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402
from tlsbench.plan.libraries import canonical  # noqa: E402

PLAN = REPO / "plans" / "pq-tls13.toml"
TARGET_CI_PCT = 1.0
US = 1000.0  # ns per µs
# Rows in the plan's order of groups and credentials, libraries apart.
KIND = {"x25519": "classical", "secp256r1": "classical", "X25519MLKEM768": "hybrid",
        "SecP256r1MLKEM768": "hybrid", "P256_KYBER_LEVEL1": "hybrid (Kyber code point)",
        "MLKEM512": "ML-KEM", "MLKEM768": "ML-KEM", "MLKEM1024": "ML-KEM",
        "KYBER_LEVEL1": "Kyber code point", "KYBER_LEVEL3": "Kyber code point", "KYBER_LEVEL5": "Kyber code point"}


# mbed TLS 3.6 has no post-quantum group or credential: its classical cells, run alongside
# (same suite, precision and schedule), give the library's row of the same table.
MBEDTLS_PLAN = """name = "pq-tls13-mbedtls"
libraries = ["mbedtls@3.6"]
suites = ["0x1301"]  # TLS_AES_128_GCM_SHA256 (mbed TLS names it TLS1-3-AES-128-GCM-SHA256)
groups = ["x25519", "secp256r1"]
credentials = ["ecdsa-p256", "rsa2048"]
repetitions = 300
rounds = 10
warmup = 5
seed = 1
[precision]
target_ci_percent = 1.0
max_repetitions = 3000
"""
FLIGHTS = (1, 2, 3)  # TLS 1.3: ClientHello; ServerHello .. Finished; the client's Finished


def cell(summary) -> str:
    return f"{summary.median / US:.1f} ±{summary.median_ci_pct:.1f}%"


def run(plan: Path, output: Path) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(output), "--no-report"],
                   check=True)
    return time.monotonic() - started


def flights(a, cid: int) -> str:
    found = {r.label: r.summary.median for r in a.rows if r.config_id == cid and r.metric == "flight_bytes"}
    return " | ".join(f"{found[f'flight {n}']:.0f}" if f"flight {n}" in found else "–" for n in FLIGHTS)


def table(a, db: Path, order: dict, wide: list, skipped: dict) -> list[str]:
    """The rows of one analysed store, in the plans' order; refused cells into `skipped`,
    cells above the precision target into `wide`."""
    with reader(db) as st:
        skip = {c.id: c.skip_reason for c in st.config_rows() if c.skip_reason is not None}
    rows = []
    for cid, conf in sorted(a.configs.items(), key=lambda kv: order.get((canonical(kv[1].library), kv[1].grp,
                                                                         kv[1].credential), 0)):
        lib = canonical(conf.library)  # stores made before name@version say openssl-3.5
        if cid in skip:
            skipped[lib].append((conf.grp, conf.credential, skip[cid]))
            continue
        client, server = (a.find(cid, "handshake_processing", peer) for peer in ("client", "server"))
        if not (client and server):
            continue
        wide += [f"{lib} {conf.grp} {conf.credential} {p.peer}" for p in (client, server)
                 if p.summary.median_ci_pct > TARGET_CI_PCT]
        rows.append(f"| {lib} | {conf.grp} | {KIND.get(conf.grp, '')} | {conf.credential} | {cell(client.summary)} "
                    f"| {cell(server.summary)} | {flights(a, cid)} | {client.summary.n} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the runs (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="analyse finished runs in --output, do not run")
    ap.add_argument("--store", type=Path, help="analyse this finished pq-tls13 store (tlsbench.db) instead of "
                                               "running plans/pq-tls13.toml; the mbed TLS plan still runs")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-pq-"))
    output.mkdir(parents=True, exist_ok=True)
    plan = planmod.load(PLAN).plan
    mbedtls_plan = output / "pq-tls13-mbedtls.toml"
    mbedtls_plan.write_text(MBEDTLS_PLAN)
    wall = {"pq": float("nan"), "mbedtls": float("nan")}
    if not args.reuse:
        wall["mbedtls"] = run(mbedtls_plan, output)
        if not args.store:
            wall["pq"] = run(PLAN, output)
    db = args.store or output / plan.name / "tlsbench.db"
    mbedtls_db = output / "pq-tls13-mbedtls" / "tlsbench.db"
    a, m = analyze(load_path(db)).results, analyze(load_path(mbedtls_db)).results
    libraries = [*plan.libraries, "mbedtls@3.6"]
    order = {(lib, g, c): i for i, (lib, g, c) in enumerate(
        (lib, g, c) for lib in libraries for g in plan.groups for c in plan.credentials)}
    skipped, wide = defaultdict(list), []
    rows = table(a, db, order, wide, skipped) + table(m, mbedtls_db, order, wide, skipped)
    signing = [f"| {a.configs[r.config_id].grp} | {a.configs[r.config_id].credential} | {r.summary.median / US:.0f} "
               f"| {r.summary.q1 / US:.0f}–{r.summary.q3 / US:.0f} | {r.summary.p95 / US:.0f} | {r.summary.n} |"
               for r in a.rows if r.metric == "crypto" and r.label == "PK_SIGN" and r.peer == "server"
               and a.configs[r.config_id].credential.startswith("mldsa") and not a.configs[r.config_id].skip_reason]
    refused = "\n".join(
        f"- {lib}: {len(cells)} cells, e.g. {cells[0][0]} with {cells[0][1]}: \"{cells[0][2]}\""
        for lib, cells in skipped.items())
    stored = a.context.n_reps
    created = str(a.context.created_at)[:16].replace("T", " ")
    ran = (f"run {created} UTC, {stored} repetitions" + (f" in {wall['pq']:.0f} s" if wall["pq"] == wall["pq"] else "")
           + ("; analysed again from that store for the flight columns" if args.store else ""))
    body = f"""
Script: `bench/pq_tls13.py` ({today()}; {machine()}).
`tlsbench run plans/pq-tls13.toml` ({ran}; {a.context.excluded} excluded: descheduled or
flagged) and an mbed TLS 3.6 companion plan with its classical cells (x25519, secp256r1 ×
ecdsa-p256, rsa2048; {m.context.n_reps} repetitions, {m.context.excluded} excluded): TLS_AES_128_GCM_SHA256,
handshake only, both peers in one agent over the memory transport; {plan.repetitions} repetitions in {plan.rounds} rounds
per cell, then extra rounds up to {plan.precision.max_repetitions} until the median handshake processing of both peers is
known to ±{TARGET_CI_PCT:g}% (95% CI).

Processing: the sum of a peer's handshake steps, I/O and tracer overhead subtracted (µs, median ±
95% CI half-width). Flights: bytes each flight handed to the transport (medians; 1: the client's
ClientHello, 2: the server's ServerHello … Finished, 3: the client's Finished; methodology.md
"Flight bytes"), the handshake only (no close_notify). The report's "Post-quantum and classical
side by side" section shows the same per run, with key-exchange and signature crypto.
wolfSSL's post-quantum groups are its pre-standard Kyber code points (ML-KEM arithmetic, no
interoperability with ML-KEM peers); OpenSSL's are ML-KEM's (docs/backend-wolfssl.md).

| library | group | kind | credential | client processing µs | server processing µs | flight 1 B | flight 2 B | flight 3 B | n |
|---|---|---|---|---:|---:|---:|---:|---:|---:|
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
