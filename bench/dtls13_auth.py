#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DTLS 1.3 authentication, the shape of the published nRF52840 / 802.15.4 comparison: raw
public keys and certificates, server-only and mutual, with a connection ID (wolfSSL 5.7,
TLS_AES_128_CCM_SHA256, P-256).

- plans/dtls13-auth-device.toml: both peers on the emulated Cortex-M4: each peer's handshake
  instructions, the nRF52840's ms and mJ of processing through the one conversion (cycle model,
  its band), every flight's bytes beside draft-ietf-iotops-security-protocol-comparison-08;
- plans/dtls13-auth-link.toml: two agents on the host over the emulated 802.15.4 link at 0% and
  5% frame loss: duration, bytes and link frames per handshake (the host computes: its
  durations are link time plus host processing, and `tlsbench energy` refuses them an nRF52840
  profile);
- plans/dtls13-auth-paced.toml: the same over the same link with the device (client) agent
  paced at the nRF52840's modelled speed from the device run's counts: duration, bytes and
  frames with the device's timing, and which DTLS timers fired for computation;
- bench/dtls_wire.py: one handshake of each mode taken apart, the ClientHello's fields and
  extensions, for the differences with the draft.

    .venv/bin/python bench/dtls13_auth.py [--output DIR] [--reuse]     (root: the link plan)
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, load_path, machine, today, update_section  # noqa: E402
import dtls_wire  # noqa: E402

from tlsbench import plan as planmod  # noqa: E402
from tlsbench.analysis.derive.measures import measures  # noqa: E402
from tlsbench.analysis.models.pace import holds, timer_causes  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402
from tlsbench.analysis.questions.network import network_results  # noqa: E402
from tlsbench.analysis.questions.wire import authentication  # noqa: E402
from tlsbench.run import agents  # noqa: E402

DEVICE, LINK = REPO / "plans" / "dtls13-auth-device.toml", REPO / "plans" / "dtls13-auth-link.toml"
PACED = REPO / "plans" / "dtls13-auth-paced.toml"
TIMERS = {True: (": the server's wait for the client's second flight (the client's longest modelled turn and "
                 "its flights' airtime) stayed below wolfSSL's 1 s initial timer in every mode"),
          False: ": the part's computation outlasted wolfSSL's 1 s timer (the report's Paced peers section has them)"}
PACED_FROM = 'from = "results/dtls13-auth-device"'  # the plan's device run, replaced by this script's
MODES = ("rpk", "rpk-mutual", "certificate", "certificate-mutual")
NAMES = {"rpk": "RPK", "rpk-mutual": "RPK mutual", "certificate": "certificates", "certificate-mutual": "certificates mutual",
         "psk-ecdhe": "PSK + ECDHE", "psk": "PSK (psk_ke)"}
# The draft's PSK rows, on the same device and suite: the device plan with the psk credential.
PSK_PLAN = """name = "dtls13-psk-device"
suites = ["TLS_AES_128_CCM_SHA256"]
groups = ["secp256r1"]
credentials = ["psk"]
options = [["CONNECTION_ID"], ["CONNECTION_ID", "PSK_ONLY"]]
repetitions = 3
warmup = 1
seed = 1
[device]
target = "qemu-mps2-an386"
library = "wolfssl@5.7"
protocols = ["dtls"]
board = "nrf52840"
"""
WIRE_OPTIONS = {"rpk": ["--credential", "rpk-ecdsa"], "rpk-mutual": ["--credential", "rpk-ecdsa", "--option", "MUTUAL_AUTH"],
                "certificate": ["--credential", "ecdsa-p256"],
                "certificate-mutual": ["--credential", "ecdsa-p256", "--option", "MUTUAL_AUTH"]}


def run(plan: Path, output: Path) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "tlsbench.cli", "run", str(plan), "--output", str(output)], check=True)
    return time.monotonic() - started


def energy(folder: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "tlsbench.cli", "energy", "estimate", str(folder), "--format", "json"],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def wire_rows(results) -> list[str]:
    """Each configuration's flights beside the draft's (in parentheses)."""
    lines = []
    for w in results.wire.rows:
        ref = w.reference
        measured = w.draft_flights
        draft = (lambda i: f" ({ref.flights[i]})" if ref and ref.flights else "")
        lines.append(f"| {NAMES[w.authentication]} | " + " | ".join(
            f"{measured.get(i + 1, float('nan')):.0f}{draft(i)}" for i in range(3))
            + f" | {w.later:.0f} | {w.total:.0f}" + (f" ({ref.total})" if ref and ref.flights else "") + " |")
    return lines


def device_table(folder: Path) -> tuple[list[str], list[str], dict]:
    """The device run: per mode each peer's instructions, ms and mJ; the wire rows."""
    res = analyze(load_path(folder / "tlsbench.db"), seed=1).results
    est = energy(folder)
    s_per_unit = est["conversion"]["seconds_per_unit"]
    band = est["conversion"]["band_median_abs_error"], est["conversion"]["band_worst_abs_error"]
    joules = {(r["config_id"], r["peer"]): r["median"] for r in est["rows"] if r["kind"] == "handshake"}
    mode = {cid: authentication(c) for cid, c in res.configs.items()}
    proc = {(r.config_id, r.peer): r.summary.median for r in res.rows
            if r.metric == "handshake_processing" and r.label == ""}
    lines, client = [], {}
    for m in MODES:
        cid = next(k for k, v in mode.items() if v == m)
        cells = []
        for peer in ("client", "server"):
            n = proc[(cid, peer)]
            cells += [f"{n / 1e6:.2f}", f"{n * s_per_unit * 1e3:.0f}", f"{joules[(cid, peer)] * 1e3:.2f}"]
        lines.append(f"| {NAMES[m]} | " + " | ".join(cells) + " |")
        client[m] = (proc[(cid, "client")] * s_per_unit * 1e3, joules[(cid, "client")] * 1e3)
    return lines, wire_rows(res), {"band": band, "basis": est["conversion"]["basis"], "reps": res.context.n_reps,
                                   "client": client}


def link_rows(ds):
    """(mode, loss, network row) of a link run, in the tables' order."""
    rows = network_results(ds, measures(ds), seed=1)
    for loss in ("0%", "5%"):
        for m in MODES:
            yield m, loss, next(r for r in rows if authentication(ds.configs[r.config_id]) == m and loss in r.link)


def duration_cells(r) -> str:
    clean = f"{r.duration_no_retransmit.median / 1e6:.0f}" if r.duration_no_retransmit else "–"
    return (f"{r.n} / {r.retransmitted} / {r.failed} | {r.duration.median / 1e6:.0f} ({r.duration.q1 / 1e6:.0f}–"
            f"{r.duration.q3 / 1e6:.0f}) | {clean}")


def wire_cells(r) -> str:
    return f"{r.wire_bytes.median:.0f} | {r.wire_packets.median:.0f} | {r.wire_fragments.median:.0f}"


def link_table(folder: Path) -> tuple[list[str], int]:
    ds = load_path(folder / "tlsbench.db")
    lines = [f"| {NAMES[m]} | {loss} | {duration_cells(r)} | {wire_cells(r)} |" for m, loss, r in link_rows(ds)]
    return lines, len(ds.reps)


def paced_table(folder: Path, client: dict) -> tuple[list[str], list[str], int, dict]:
    """The paced run: per mode and loss, duration, timers by cause, bytes and frames; per mode the
    paced handshake beside the device's modelled CPU time and energy (the device run's)."""
    ds = load_path(folder / "tlsbench.db")
    causes, held = {t.config: t for t in timer_causes(ds)}, holds(ds)
    lines, medians = [], {}
    for m, loss, r in link_rows(ds):
        t, h = causes[r.config_id], held.get(r.config_id)
        overruns = f"{h.overruns} of {h.holds}" if h else "–"
        lines.append(f"| {NAMES[m]} | {loss} | {duration_cells(r)} | {t.lossless} / {t.for_loss} | {overruns} | "
                     f"{wire_cells(r)} |")
        medians[(m, loss)] = r.duration.median / 1e6
    energy = [f"| {NAMES[m]} | {medians[(m, '0%')]:.0f} | {medians[(m, '5%')]:.0f} | {client[m][0]:.0f} | "
              f"{client[m][1]:.2f} |" for m in MODES]
    lossless = [medians[(m, "0%")] for m in MODES]
    facts = {"lossless": (min(lossless), max(lossless)), "for_computation": sum(t.lossless for t in causes.values()),
             "retransmitted": sum(t.retransmitted for t in causes.values())}
    return lines, energy, len(ds.reps), facts


def paced_plan(output: Path, device: Path) -> Path:
    """The paced plan with its `from` naming this script's device run."""
    text = PACED.read_text()
    assert PACED_FROM in text, f"{PACED} no longer paces from {PACED_FROM}: update this script"
    plan = output / PACED.name
    plan.write_text(text.replace(PACED_FROM, f'from = "{device}"'))
    return plan


def client_hello(agent: Path) -> str:
    """The ClientHello of an RPK mutual handshake with a connection ID, field by field."""
    log = dtls_wire.capture(str(agent), "--suite", "TLS_AES_128_CCM_SHA256", "--group", "secp256r1",
                            *WIRE_OPTIONS["rpk-mutual"], "--option", "CONNECTION_ID")
    flight = dtls_wire.flights(log, 2)
    hello = flight[0][0].messages[0]
    second = flight[1]
    return (f"{hello[1]} bytes of message ({hello[0]}, 12-byte DTLS handshake header included) in a "
            f"{flight[0][0].header}-byte record header: " + ", ".join(f"{e} {n}" for e, n in hello[2])
            + f". The server's flight: {len(second)} records (" + ", ".join(
                f"{r.kind.split()[0]} {r.header}+{r.body}" for r in second) + ")")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, help="parent folder of the runs (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="analyse finished runs in --output, do not run")
    args = ap.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="tlsbench-dtls13-"))
    wall = {}
    psk_plan = output / "dtls13-psk-device.toml"
    psk_plan.write_text(PSK_PLAN)
    device_run = output / planmod.load(DEVICE).plan.name
    if not args.reuse:
        wall = {"device": run(DEVICE, output), "link": run(LINK, output), "psk": run(psk_plan, output)}
        wall["paced"] = run(paced_plan(output, device_run), output)
    device, wire, facts = device_table(device_run)
    wire += wire_rows(analyze(load_path(output / "dtls13-psk-device" / "tlsbench.db"), seed=1).results)
    link, link_reps = link_table(output / planmod.load(LINK).plan.name)
    paced, paced_energy, paced_reps, paced_facts = paced_table(output / planmod.load(PACED).plan.name, facts["client"])
    hello = client_hello(agents.find_agent("wolfssl@5.7"))
    took = (f" in {wall['device']:.0f} s and {wall['link']:.0f} s" if wall else "")
    paced_took = f" in {wall['paced']:.0f} s" if wall else ""
    body = f"""
Script: `bench/dtls13_auth.py` ({today()}; {machine()}). `tlsbench run plans/dtls13-auth-device.toml`
({facts['reps']} repetitions) and `plans/dtls13-auth-link.toml` ({link_reps} repetitions){took}: DTLS 1.3,
wolfSSL 5.7.2, TLS_AES_128_CCM_SHA256, secp256r1, a 2-byte connection ID, four authentication
modes: raw public keys (RFC 7250, `rpk-ecdsa`) or ECDSA P-256 certificate chains, the server
authenticated alone or both peers (MUTUAL_AUTH). The shape of the published nRF52840 / 802.15.4
comparison (DTLS 1.3 handshakes of 259–509 ms and 7.9–15.0 mJ depending on authentication,
radio included); CCM rather than CCM_8 because wolfSSL 5.7.2 cannot send a DTLS 1.3 alert with
an 8-byte tag (docs/backend-wolfssl.md).

**On the part** (both peers on the emulated Cortex-M4, counted; the nRF52840 at 64 MHz through
the one conversion: {facts['basis']}, model error ±{facts['band'][0] * 100:.0f}% median, {facts['band'][1] * 100:.0f}%
worst against published silicon figures; mJ: the CPU's run power above sleep over that time,
the radio not included: in memory the I/O is a copy, not airtime). Estimates, not measurements:

| mode | client M instructions | client ms | client mJ | server M instructions | server ms | server mJ |
|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(device)}

**Over the link** (802.15.4-like: 250 kbit/s, 127-byte frames; the device is the client; DTLS
timer from the plan's 500 ms, which wolfSSL rounds up to whole seconds: 1 s; both peers compute at this host's speed, so durations are link time plus
host processing, not the part's, and `tlsbench energy estimate --profile nrf52840` refuses this
run: "its times are this machine's, not nrf52840's"). Medians; stop–start with its quartiles,
"clean" over the repetitions that did not retransmit; bytes, IP packets and link frames the
emulated link carried per handshake, both directions, IPv4/UDP headers included:

| mode | frame loss | ok / retransmitted / failed | stop–start ms (IQR) | clean ms | bytes on the link | packets | frames |
|---|---|---|---:|---:|---:|---:|---:|
{chr(10).join(link)}

**Over the link with the device's timing** (`plans/dtls13-auth-paced.toml`, {paced_reps} repetitions{paced_took}:
the link plan's matrix with the device agent, the client, paced at the nRF52840's modelled
speed: each of its handshake turns held until the cycle model's time of that turn has passed,
from the device run's counts through the same conversion (docs/networks.md "Paced peers"); the
server computes at the host's speed, as a gateway would, far faster than the part; DTLS timer
from 1 s as above). Measured stop–start on the emulated link, the client's holds included: link time
plus the device's modelled computation, not a measurement of an nRF52840. "Timers": repetitions
whose DTLS retransmission timer fired while the link lost none of their packets (for
computation) / with a loss; "overruns": holds that found the host's own work already past the
model (the host's, counted), of all holds:

| mode | frame loss | ok / retransmitted / failed | stop–start ms (IQR) | clean ms | timers: computation / loss | overruns | bytes on the link | packets | frames |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|
{chr(10).join(paced)}

Beside the published nRF52840 / 802.15.4 figures (Fedrecheski, Vučinić, Watteyne, "Performance
Comparison of EDHOC and DTLS 1.3 in Internet-of-Things Environments", January 2024,
hal-04382397, the measurements draft-ietf-iotops-security-protocol-comparison-08 cites for
DTLS and EDHOC over IEEE 802.15.4 and 6LoWPAN: DTLS 1.3 handshakes of 259–509 ms and 7.9–15.0 mJ depending on authentication,
on silicon, radio included; the ranges as the issue quotes them, not checked against the
paper's tables here). Here: the paced handshake's median duration, and the client's CPU time
and energy from the device run through the one conversion (run power above sleep over the
modelled time; the radio's transmit and listen energy is not included, nor the CPU work of
retransmissions, which the device's count did not have), with the model's error band above:

| mode | paced handshake, 0% loss (ms) | paced handshake, 5% loss (ms) | client CPU, model (ms) | client CPU, model (mJ, radio not included) |
|---|---:|---:|---:|---:|
{chr(10).join(paced_energy)}

Without loss the paced handshakes take {paced_facts['lossless'][0]:.0f}–{paced_facts['lossless'][1]:.0f} ms against the
published 259–509 ms, but the setups differ: the emulated link carries uncompressed IPv4/UDP
headers (no 6LoWPAN compression), reduces CSMA/CA and acknowledgements to a 5 ms delay and
has no link-layer retries (a lost frame loses its IP packet: DTLS retransmits, hence the long
tails at 5%), wolfSSL's records carry 16-byte tags, and the model has its error band. Of
{paced_facts['retransmitted']} retransmitting repetitions, {paced_facts['for_computation']} fired a timer while the link lost
nothing{TIMERS[paced_facts['for_computation'] == 0]}. The CPU energy is a fraction of the published per-handshake
energy, which includes the radio's.

**Bytes per flight beside draft-ietf-iotops-security-protocol-comparison-08** (its figure in
parentheses: fig-compare1, with a connection ID; it counts raw public keys both ways and PSK,
no X.509 chains). Medians of what the peers handed to the transport (both traced, device run;
the PSK rows: the same device plan with the psk credential, psk_dhe_ke and PSK_ONLY's psk_ke);
"later": the server's DTLS 1.3 ACK:

| mode | #1 (B) | #2 (B) | #3 (B) | later (B) | total (B) |
|---|---:|---:|---:|---:|---:|
{chr(10).join(wire)}

Why RPK mutual is larger than the draft's 894 bytes, message by message (`bench/dtls_wire.py`, one
handshake on loopback with the host's build): the ClientHello is {hello}. The draft assumes
CCM_8 (8-byte tags: wolfSSL's 16-byte CCM tags add 8 bytes per protected record, 5 records in
flight #2 and 3 in #3), a 1-byte connection ID (2 here), only the mandatory extensions (wolfSSL
adds encrypt_then_mac, psk_key_exchange_modes, a 40-byte signature_algorithms list), one
protected record for the whole of flight #2 with a 3-byte unified header (wolfSSL writes one
record per message, each with a 7-byte header: flags, CID, 16-bit sequence number, length)
and no acknowledgements (the server's ACK: the "later" column). The host's ClientHello offers
one suite, as the device's does (before this run's agent it offered every suite of the build:
docs/backend-wolfssl.md). Certificates instead of raw
public keys add each chain's leaf less its 91-byte SubjectPublicKeyInfo to flights #2 and #3
(about 375 bytes each).

PSK: wolfSSL's client still sends its key share with PSK_ONLY (psk_ke offered, the server
answers without one), so its flight #1 stays near the psk_dhe_ke one where the draft's drops
the key share (219 -> 136 bytes); the server's flight #2 loses its share (73 bytes).

Per-record overhead (measure `record_overhead`, one 64-byte record, tests/test_dtls13_options.py):
22 bytes for DTLS 1.3 with AES-128-CCM (5-byte unified header, content type, 16-byte tag) and 24
with the 2-byte connection ID, against the draft's 11 and 12 (CCM_8, 8-bit sequence number, no
length field); TLS 1.2 GCM records: 29 bytes (8-byte explicit nonce and 16-byte tag; the golden
statistics), ChaCha20-Poly1305: 21.
"""
    update_section("DTLS 1.3 authentication: raw public keys, certificates, connection IDs", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
