# SPDX-License-Identifier: Apache-2.0
"""What a returning device saves over a constrained link (docs/benchmarks.md "Resumption and
PSK modes over a link"): plans/resumption-link.toml through `tlsbench run` (needs root: network
namespaces), then per group, transport, loss and mode (a full certificate handshake, a resumed
one, external PSK with psk_dhe_ke and with psk_ke) the handshake's stop–start time, the bytes,
IP packets and link frames it put on the link, and how many repetitions retransmitted or
failed, from `tlsbench export` (every stored repetition: a lossy link's retransmissions are
what is measured there).

    sudo .venv/bin/python bench/resumption_link.py [--reuse STORE_FOLDER] [--no-update]"""
from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, today, update_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "plans" / "resumption-link.toml"
MODES = {("ecdsa-p256", ""): "full (certificate)", ("ecdsa-p256", "RESUME"): "resumed (ticket)",
         ("psk", ""): "PSK, psk_dhe_ke", ("psk", "PSK_ONLY"): "PSK, psk_ke"}
METRICS = {"net_stop_start": ("stop–start ms", 1e-6), "net_wire_bytes": ("bytes", 1),
           "net_wire_packets": ("packets", 1), "net_wire_fragments": ("frames", 1)}


def tlsbench(*args: object) -> str:
    return subprocess.run([sys.executable, "-m", "tlsbench.cli", *map(str, args)], check=True, text=True,
                          capture_output=True).stdout


def mode_of(key: str, credential: str) -> str | None:
    option = next((o for o in ("RESUME", "PSK_ONLY") if f"|{o}|" in key), "")
    return MODES.get((credential, option))


def exported(store: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(tlsbench("export", store, "--format", "csv", "--include-flagged",
                                                    "--out", "-"))))


def first_flights(rows: list[dict[str, str]]) -> str:
    """The client's first flight and its certificate checks, full vs resumed (x25519, TCP, no loss):
    what a ticket adds and what it saves."""
    seen: dict[str, dict[str, float]] = {}
    for r in rows:
        mode = mode_of(r["config_key"], r["credential"])
        if (r["group"], r["transport"], r["peer"]) == ("x25519", "tcp", "client") and "0% loss" in r["link"] and mode:
            if (r["metric"], r["label"]) in (("flight_bytes", "flight 1"), ("crypto", "CHAIN_VERIFY"),
                                             ("crypto", "PK_VERIFY")):
                seen.setdefault(mode, {})[r["label"]] = float(r["median"])
    full, resumed = seen.get(MODES[("ecdsa-p256", "")], {}), seen.get(MODES[("ecdsa-p256", "RESUME")], {})
    if "flight 1" not in full or "flight 1" not in resumed:
        return ""
    checks = [label for label in ("CHAIN_VERIFY", "PK_VERIFY") if label in full and label not in resumed]
    return (f" A resumed handshake is real (x25519, TCP, no loss): the client's first flight grows from "
            f"{full['flight 1']:.0f} B to {resumed['flight 1']:.0f} B (the ticket and its binder) and "
            f"{' and '.join(checks) or 'no certificate check'} are gone from its steps; with wolfSSL's tickets and "
            "a P-256 chain, resumption saves the certificate's verification, not bytes on the link.")


def skipped(rows: list[dict[str, str]]) -> str:
    """The planned cells that produced no data, and why (the agent's reason, once each)."""
    why = {r["config_key"]: r["skip_reason"] for r in rows if r["skip_reason"]}
    reasons = sorted(set(why.values()))
    return f"{len(why)} planned configurations produced no data: " + "; ".join(reasons) if why else ""


def table(rows: list[dict[str, str]]) -> list[str]:
    cells: dict[tuple, dict[str, str]] = {}
    for r in rows:
        mode = mode_of(r["config_key"], r["credential"])
        if mode is None or r["metric"] not in METRICS or r["peer"] not in ("client", ""):
            continue
        cell = cells.setdefault((r["group"], r["transport"], r["link"], mode), {})
        name, scale = METRICS[r["metric"]]
        cell[name] = f"{float(r['median']) * scale:,.0f}"
        cell["n"] = r["n"]
    head = ["group", "transport", "link", "mode", "n"] + [name for name, _ in METRICS.values()]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (group, transport, link, mode), cell in sorted(cells.items()):
        out.append(f"| {group} | {transport} | {link} | {mode} | " + " | ".join(cell.get(h, "–") for h in head[4:])
                   + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reuse", type=Path, help="an existing store of the plan instead of a new run")
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, ran = args.reuse, "an earlier run of it"
        if store is None:
            started = time.monotonic()
            tlsbench("run", PLAN, "--output", tmp, "--no-report")
            store, ran = Path(tmp) / "resumption-link", f"{time.monotonic() - started:.0f} s"
        rows = exported(store)
        lines, flights = table(rows), first_flights(rows)
    body = (f"`bench/resumption_link.py` ({today()}; {machine()}): `plans/resumption-link.toml` ({ran}): wolfSSL "
            "5.7, TLS_AES_128_GCM_SHA256, TLS 1.3 over TCP and DTLS 1.3 over UDP (cookies on), the device as the "
            "client, an 802.15.4-like link (250 kbit/s, 127-byte frames) without loss and with 5% frame loss; "
            "per group, a full ECDSA P-256 certificate handshake, a resumed one (a session ticket, psk_dhe_ke), "
            "and an external PSK with psk_dhe_ke and with psk_ke (PSK_ONLY; the group then does not apply: "
            "wolfSSL's client still sends a key share). Medians over every stored repetition of the client's "
            "side, retransmitted ones included (n: repetitions; a failed handshake has no stop–start); bytes, "
            "IP packets and link frames the emulated link carried, both directions, headers included. Host "
            "processing, not a device's: the durations are link time plus this machine's computation "
            "(paced peers give the part's: \"Paced peers against the predictor\")." + flights + "\n\n"
            + "\n".join(lines) + f"\n\n{skipped(rows)}")
    print(body)
    if not args.no_update:
        update_section("Resumption and PSK modes over a link", body)


if __name__ == "__main__":
    main()
