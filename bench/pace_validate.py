# SPDX-License-Identifier: Apache-2.0
"""Predictions against paced runs (docs/predict.md "Validation at device speeds", docs/networks.md
"Paced peers"): plans/pace-validate.toml runs the device (client) agent at an nRF52840's modelled
speed through the link emulator; each emulated configuration is predicted from its paced
reference (`none`) and compared with what was measured, as bench/predict_validate.py does at host
speed. Also: the wall time of a paced handshake beside the model's ms, and where DTLS timers
fired for computation rather than loss. Updates the "Paced peers against the predictor" section
of docs/benchmarks.md.

    tlsbench run plans/pace-device.toml
    sudo .venv/bin/tlsbench run plans/pace-validate.toml     # a 4 s DTLS timer: the error table
    sudo .venv/bin/tlsbench run plans/pace-timers.toml       # the library's 1 s: timers fire for computation
    .venv/bin/python bench/pace_validate.py --store results/pace-validate --store results/pace-timers [--no-update]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_path, machine, today, update_section  # noqa: E402
from predict_validate import pct  # noqa: E402

SECTION = "Paced peers against the predictor"


def short(suite: str, transport: str) -> str:
    auth = "ECDSA" if "ECDSA" in suite else "PSK"
    return f"{auth} {'DTLS' if transport == 'udp' else 'TLS'}"


def validation(ds) -> list[str]:
    from tlsbench.analysis.models.predict import PredictError
    from tlsbench.analysis.models.predict.model import Options
    from tlsbench.analysis.models.predict.results import collect, sources_of

    labels = {cid: short(c.suite_name, c.transport) for cid, c in ds.configs.items()}
    try:
        res = collect(sources_of(ds), labels, [], Options(seed=int(ds.experiment.get("seed") or 1)), check=True)
    except PredictError as e:
        return [f"No validation: {e}"]
    lines = ["| protocol | loss | configurations | duration: median \\|error\\| | worst | bytes: median \\|error\\| | "
             "worst | measured median within the predicted range of medians | worst case |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for e in res.errors:
        lines.append(f"| {e.protocol} | {e.loss_pct:g}% | {e.n} | {100 * e.duration_median:.1f}% | "
                     f"{100 * e.duration_worst:.1f}% | {100 * e.bytes_median:.1f}% | {100 * e.bytes_worst:.1f}% | "
                     f"{e.consistent} of {e.n} | {e.worst_label} |")
    lines += ["", "| link | configuration | predicted ms | measured ms (±CI) | error | retransmitting pred. / meas. |",
              "|---|---|---:|---:|---:|---:|"]
    for c in sorted(res.checks, key=lambda c: (c.loss_pct, c.link.label, c.label)):
        lines.append(f"| {c.link.label} | {c.label} | {c.predicted.duration.median / 1e6:,.1f} | "
                     f"{c.measured.median / 1e6:,.1f} (±{c.measured.median_ci_pct:.1f}%) | {pct(c.duration_error)} | "
                     f"{100 * c.predicted.retransmitted:.0f}% / {100 * c.measured_retransmitted_share:.0f}% |")
    predicted = {c.config_id for c in res.checks}
    left = sorted({labels[cid] + " over " + (c.link_label or "") for cid, c in ds.configs.items()
                   if cid not in predicted and (c.link_label or "none") != "none"})
    if left:
        lines += ["", f"Not predicted ({len(left)}: their reference over `none` has no usable repetition, every one "
                  f"retransmitted): {', '.join(left)}."]
    return lines


def wall_vs_model(ds, store: Path) -> list[str]:
    """Over the unshaped link: the paced handshake's wall time beside the device's modelled ms."""
    import numpy as np

    import tlsbench
    from tlsbench.analysis.derive.load import load
    from tlsbench.analysis.models.pace import match_key, modelled_steps
    from tlsbench.store.locator import locate

    pace = json.loads(ds.experiment["plan_json"])["network"]["pace"]
    source = pace.get("from") or pace.get("source")
    with locate(source).reader() as reader:
        model = modelled_steps(load(reader, reader), pace["board"])
    reps = tlsbench.open(store, include_flagged=True).repetitions
    reps = reps[(reps.status == "OK") & reps.link.astype(str).isin(["none", "loopback"])]
    lines = [f"Over the unshaped `none` link (the link emulator, nothing shaped), per configuration: the device's "
             f"modelled handshake ({model.conversion.basis}; the model's own error band: "
             f"{model.conversion.band_text()}), client steps summed, and the paced handshake's measured "
             "stop–start (the server at the host's speed, the kernel's stacks, the timers):", "",
             "| configuration | device model, client steps (ms) | paced handshake, measured median (ms) | "
             "measured / model | repetitions retransmitted |", "|---|---:|---:|---:|---:|"]
    for (suite, transport, group, credential), g in reps.groupby(
            ["suite_name", "transport", "group", "credential"], observed=True):
        proto = "dtls" if transport == "udp" else "tls"
        steps = model.steps.get(match_key("mbedtls", proto, suite, group, credential, 0), {})
        ms = sum(ns for (peer, _), ns in steps.items() if peer == "client") / 1e6
        wall = float(np.median(g.handshake_time)) / 1e6
        lines.append(f"| {short(suite, transport)} | {ms:,.1f} | {wall:,.1f} | {wall / ms:.2f} | "
                     f"{int(g.flag_retransmitted.sum())} of {len(g)} |")
    return lines


def timers(ds) -> list[str]:
    from tlsbench.analysis.models.pace import timer_causes

    lines = ["DTLS retransmissions (flag RETRANSMITTED) split by cause: a repetition that retransmitted while the "
             "link lost none of its packets fired its timer because a peer was still computing.", "",
             "| link | configuration | repetitions | retransmitted | for computation (no packet lost) | "
             "with a loss |", "|---|---|---:|---:|---:|---:|"]
    for t in sorted(timer_causes(ds), key=lambda t: (ds.configs[t.config].link_label or "", t.config)):
        c = ds.configs[t.config]
        lines.append(f"| {c.link_label} | {short(c.suite_name, c.transport)} | {t.repetitions} | {t.retransmitted} | "
                     f"{t.lossless} | {t.for_loss} |")
    return lines


def header(ds) -> str:
    plan = json.loads(ds.experiment["plan_json"])
    timer = (plan["network"].get("dtls") or {}).get("timeout_min_ms") or 0
    return (f"### {ds.name}\n\n`bench/pace_validate.py`, {today()}, {machine()}: plans/{ds.name}.toml "
            f"({len(ds.reps)} repetitions: PSK and ECDHE-ECDSA (P-256), mbed TLS 2.28 on both sides, the client paced "
            "at an nRF52840's modelled speed from plans/pace-device.toml's counts, the server at the host's; TLS/TCP "
            f"with Nagle and DTLS/UDP with {f'a {timer / 1000:g} s' if timer else 'the library’s 1 s'} initial timer; "
            "interface MTU 1280). Each emulated configuration predicted from its paced reference over `none`. "
            "Error = (predicted − measured) / measured, of the medians.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, action="append", required=True,
                    help="a run of plans/pace-validate.toml or plans/pace-timers.toml (repeat for both)")
    ap.add_argument("--no-update", action="store_true", help="print, do not touch docs/benchmarks.md")
    args = ap.parse_args()
    parts = []
    for given in args.store:
        store = given / "tlsbench.db" if given.is_dir() else given
        ds = load_path(store)
        parts += [header(ds), "", *validation(ds), "", *wall_vs_model(ds, store), "", *timers(ds), ""]
    text = "\n".join(parts)
    print(text)
    if not args.no_update:
        update_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
