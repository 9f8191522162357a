# SPDX-License-Identifier: Apache-2.0
"""The report's "Paced peers" section (docs/networks.md "Paced peers"): which agents ran at
which part's modelled speed, the holds whose host work overran the model, and the DTLS
retransmissions split by cause (computation: no packet lost; or a loss)."""
from __future__ import annotations

import json

from tlsbench.analysis.models.pace import holds, timer_causes
from tlsbench.analysis.results import Analysis


def pace_section(analysis: Analysis) -> dict | None:
    """What the template's paced section needs; None for a run that was not paced."""
    ds = analysis.ds
    pace = (json.loads(ds.experiment.get("plan_json") or "{}").get("network") or {}).get("pace")
    if not pace:
        return None
    labels = analysis.results.config_labels
    held = holds(ds)
    rows = [{"config": labels.get(cid, str(cid)), "link": c.link_label or "loopback", "holds": h.holds,
             "overruns": h.overruns, "worst_overrun_ms": h.worst_overrun_ns / 1e6}
            for cid, c in ds.configs.items() if (h := held.get(cid))]
    timers = [{"config": labels.get(t.config, str(t.config)), "link": ds.configs[t.config].link_label or "loopback",
               "n": t.repetitions, "retransmitted": t.retransmitted, "computation": t.lossless, "loss": t.for_loss}
              for t in timer_causes(ds)]
    return {"board": pace.get("board"), "side": pace.get("side", "device"), "source": pace.get("from") or
            pace.get("source"), "holds": sorted(rows, key=lambda r: (r["link"], r["config"])),
            "timers": sorted(timers, key=lambda r: (r["link"], r["config"]))}
