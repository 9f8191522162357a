# SPDX-License-Identifier: Apache-2.0
"""Predictions against the emulator (docs/predict.md "Validation"): runs plans/predict-validate.toml
(root: namespaces and TUN; about 25 minutes), predicts every emulated configuration from its
reference link's repetitions and compares with what tlsbench-link measured. Updates the
"Prediction against the emulator" section of docs/benchmarks.md; exits 1 when the target
(0% loss: median duration error <= 5%, none worse than 15%) is missed.

    sudo .venv/bin/python bench/predict_validate.py [--store results/predict-validate] [--no-update]
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, machine, today, update_section  # noqa: E402

PLAN = REPO / "plans" / "predict-validate.toml"
TARGET_MEDIAN, TARGET_WORST = 0.05, 0.15


def run_plan(out: Path) -> Path:
    tlsbench = REPO / ".venv" / "bin" / "tlsbench"
    subprocess.run([str(tlsbench), "run", str(PLAN), "--output", str(out)], check=True)
    return out / "predict-validate" / "tlsbench.db"


def checks(store: Path):
    from _common import load_path
    from tlsbench.analysis.models.predict.model import Options
    from tlsbench.analysis.models.predict.results import collect, sources_of
    from tlsbench.analysis.derive.samples import config_labels

    ds = load_path(store)
    labels = {cid: f"{'RSA' if 'RSA' in c.suite_name else 'ECDSA'} {'DTLS' if c.transport == 'udp' else 'TLS'}"
              for cid, c in ds.configs.items()}
    res = collect(sources_of(ds), labels or config_labels(ds.configs), [],
                  Options(seed=int(ds.experiment.get("seed") or 1)), check=True)
    return ds, res


def pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{100 * x:+.1f}%"


def body(ds, res) -> tuple[str, bool]:
    reps = len(ds.reps)
    lines = [f"`bench/predict_validate.py`, {today()}, {machine()}: plans/predict-validate.toml ({reps} repetitions: "
             "ECDSA P-256 and RSA-2048 certificates, ECDHE, AES-128-GCM, mbed TLS on both sides, TLS/TCP with Nagle "
             "and DTLS/UDP with a 4 s initial timer, interface MTU 1280), each emulated configuration predicted from "
             "the same configuration's repetitions over the unshaped `none` link. Error = (predicted − measured) / "
             "measured, of the medians; target at 0% loss: median |error| ≤ 5%, none worse than 15%.", "",
             "| protocol | loss | configurations | duration: median \\|error\\| | worst | bytes: median \\|error\\| | worst | "
             "measured median within the predicted range of medians | worst case |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    ok = True
    for e in res.errors:
        lines.append(f"| {e.protocol} | {e.loss_pct:g}% | {e.n} | {100 * e.duration_median:.1f}% | "
                     f"{100 * e.duration_worst:.1f}% | {100 * e.bytes_median:.1f}% | {100 * e.bytes_worst:.1f}% | "
                     f"{e.consistent} of {e.n} | {e.worst_label} |")
        if e.loss_pct == 0:
            ok &= e.duration_median <= TARGET_MEDIAN and e.duration_worst <= TARGET_WORST
    lines += ["", "| link | configuration | predicted ms | measured ms (±CI) | error | predicted range of medians (ms) "
              "| retransmitting pred. / meas. | bytes pred. / meas. | error |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in sorted(res.checks, key=lambda c: (c.loss_pct, c.link.label, c.label)):
        mb = c.measured_bytes.median if c.measured_bytes else math.nan
        lines.append(f"| {c.link.label} | {c.label} | {c.predicted.duration.median / 1e6:,.1f} | "
                     f"{c.measured.median / 1e6:,.1f} (±{c.measured.median_ci_pct:.1f}%) | {pct(c.duration_error)} | "
                     f"{c.medians_range[0] / 1e6:,.0f}–{c.medians_range[1] / 1e6:,.0f}{' ✓' if c.consistent else ''} | "
                     f"{100 * c.predicted.retransmitted:.0f}% / "
                     f"{100 * c.measured_retransmitted_share:.0f}% | {c.predicted.bytes.median:,.0f} / {mb:,.0f} | "
                     f"{pct(c.bytes_error)} |")
    return "\n".join(lines), ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="an existing run of plans/predict-validate.toml (else it is run)")
    ap.add_argument("--no-update", action="store_true", help="print, do not touch docs/benchmarks.md")
    args = ap.parse_args()
    store = args.store
    if store is None:
        if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
            print("predict_validate: needs root and /dev/net/tun (emulated links); nothing changed")
            return 0
        store = run_plan(Path(tempfile.mkdtemp(prefix="tlsbench-predict-")))
    elif store.is_dir():
        store = store / "tlsbench.db"
    ds, res = checks(store)
    text, ok = body(ds, res)
    print(text)
    if not args.no_update:
        update_section("Prediction against the emulator", text)
    if not ok:
        print(f"predict_validate: at 0% loss the target (median <= {TARGET_MEDIAN:.0%}, worst <= {TARGET_WORST:.0%}) "
              "is missed: see docs/predict.md for the cases that miss")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
