#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How far one configuration's handshake processing moves between identical runs, and what
the regression gate says of them (docs/ci.md).

Runs the gate test's plan (tests/test_gate.py: two ECDHE and six PSK suites, 12 repetitions in
3 rounds) RUNS times back to back with one build, then gates every consecutive pair at 1% and
5% (`tlsbench compare A B --fail-above PCT`). Figures: for each row (configuration × peer) the
largest over the smallest of its medians across the runs; the largest ratio of one pair's row
over that pair's run-to-run shift; the verdicts (never "worse" is the target).

    .venv/bin/python bench/gate_identical.py [--runs N]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import TLSBENCH, load_path, machine, today, update_section  # noqa: E402

from tlsbench.analysis.questions.compare import side  # noqa: E402
from tlsbench.store.sqlite import DB_FILE  # noqa: E402

SUITES = ["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256",
          "TLS-PSK-WITH-AES-128-GCM-SHA256", "TLS-PSK-WITH-AES-256-GCM-SHA384", "TLS-PSK-WITH-CHACHA20-POLY1305-SHA256",
          "TLS-PSK-WITH-AES-128-CBC-SHA256", "TLS-PSK-WITH-AES-128-CCM", "TLS-PSK-WITH-CAMELLIA-128-GCM-SHA256"]
PLAN = f'name = "ci"\nrepetitions = 12\nrounds = 3\nwarmup = 0\nsuites = {json.dumps(SUITES)}\n'
THRESHOLDS = ("1%", "5%")


def medians(store: Path) -> dict[tuple[str, str], float]:
    """(suite, peer) -> the median of its handshake processing in ns."""
    ds = load_path(store / DB_FILE)
    s = side(ds, "counter", ("handshake_processing",))
    return {(c.suite_name, peer): float(np.median(values)) for cid, c in ds.configs.items()
            for (peer, _, _), (values, _) in s.read(cid).items()}


def verdict(a: Path, b: Path, pct: str) -> str:
    out = subprocess.run([str(TLSBENCH), "compare", str(a), str(b), "--fail-above", pct], capture_output=True,
                         text=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("verdict: "))
    return line.split(" (exit")[0].removeprefix("verdict: ") + (" (a row slower)" if " rows of B slower " in line
                                                                  else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tlsbench-gate-") as folder:
        root = Path(folder)
        (root / "ci.toml").write_text(PLAN)
        stores = []
        for i in range(args.runs):
            command = ["run", str(root / "ci.toml"), "--output", str(root / f"r{i}"), "--no-report"]
            subprocess.run([str(TLSBENCH), *command], check=True, capture_output=True)
            stores.append(root / f"r{i}" / "ci")
        runs = [medians(s) for s in stores]
        verdicts = Counter((pct, verdict(a, b, pct)) for a, b in zip(stores, stores[1:]) for pct in THRESHOLDS)
    rows = list(runs[0])
    table = np.array([[r[k] for k in rows] for r in runs])
    spread = table.max(0) / table.min(0)
    logs = np.log(table[1:] / table[:-1])
    beyond_shift = np.exp((logs - np.median(logs, axis=1, keepdims=True)).max())
    worst = rows[int(spread.argmax())]
    lines = [f"`bench/gate_identical.py --runs {args.runs}`, {today()}, {machine()}.", "",
             f"{args.runs} identical runs of the gate test's plan (8 suites × 2 peers, 12 repetitions in 3 rounds), "
             "one build, back to back; every consecutive pair gated.", "",
             "| figure | value |", "|---|---|",
             f"| a row's largest over smallest median across the runs, median over the 16 rows | "
             f"×{np.median(spread):.3f} |",
             f"| the same, the row that moved most ({worst[0]}, {worst[1]}) | ×{spread.max():.3f} |",
             "| one row over its pair's run-to-run shift (median of the pair's rows), largest | "
             f"×{beyond_shift:.3f} |"]
    lines += [f"| verdicts at {pct}, {len(stores) - 1} pairs | " + ", ".join(
        f"{v}: {n}" for (p, v), n in sorted(verdicts.items()) if p == pct) + " |" for pct in THRESHOLDS]
    update_section("Regression gate: identical runs", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
