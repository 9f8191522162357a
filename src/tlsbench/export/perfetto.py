# SPDX-License-Identifier: Apache-2.0
"""Chrome/Perfetto trace-event JSON of chosen repetitions (opens in ui.perfetto.dev or
chrome://tracing): one process per repetition, the peers as threads, steps as B/E pairs
with crypto operations and I/O nested inside, timestamps in µs.

B/E events are emitted by walking each thread's slice tree (B in pre-order, E when the
walk leaves a slice), so they nest properly even when timestamps are equal.
"""
from __future__ import annotations

import json

import numpy as np

from tlsbench.analysis.pipeline import representative_rep
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.derive.measures import slice_costs
from tlsbench.analysis.derive.slices import format_value
from tlsbench.analysis.vocab import vocab


def trace_events(analysis: Analysis, reps: list[int]) -> list[dict]:
    ds = analysis.ds.traced(reps)  # only these repetitions' records are decoded
    voc, slices = vocab(), ds.slices
    events: list[dict] = []
    proc = slice_costs(ds).processing
    for rep in reps:
        pos = ds.rep_index(np.array([rep]))[0]
        cfg = ds.configs.get(int(ds.reps.config_id[pos])) if pos < len(ds.reps) else None
        pname = f"rep {rep}" + (f" {analysis.results.config_labels[cfg.id]}" if cfg else "")
        events.append({"name": "process_name", "ph": "M", "pid": rep, "tid": 0, "args": {"name": pname}})
        idx = np.flatnonzero(slices.rep == rep)
        for peer in np.unique(slices.peer[idx]).tolist():
            events.append({"name": "thread_name", "ph": "M", "pid": rep, "tid": peer,
                           "args": {"name": voc.peer_name(peer)}})
            events.append({"name": "thread_sort_index", "ph": "M", "pid": rep, "tid": peer,
                           "args": {"sort_index": (peer + 1) % 256}})
            stack: list[int] = []
            for i in idx[slices.peer[idx] == peer].tolist():
                while stack and stack[-1] != slices.parent[i]:
                    events.append(_end(slices, stack.pop(), rep))
                cat = voc.categories[slices.category[i]] if slices.category[i] >= 0 else "unknown"
                args = {"value": format_value(int(slices.category[i]), int(slices.value[i])),
                        "processing_us": round(float(proc[i]) / 1e3, 3)}
                if slices.open[i]:
                    args["open"] = "no STOP recorded; closed at the last timestamp"
                ev = {"name": voc.name(slices.label[i]), "cat": cat, "pid": rep, "tid": peer,
                      "ts": slices.ts[i] / 1e3, "args": args}
                if slices.instant[i]:
                    events.append({**ev, "ph": "i", "s": "t"})
                    continue
                events.append({**ev, "ph": "B"})
                stack.append(i)
            while stack:
                events.append(_end(slices, stack.pop(), rep))
    return events


def _end(slices, i: int, rep: int) -> dict:
    return {"name": vocab().name(slices.label[i]), "ph": "E", "pid": rep, "tid": int(slices.peer[i]),
            "ts": (slices.ts[i] + slices.dur[i]) / 1e3}


class PerfettoExporter:
    suffix = ".json"

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str:
        if not reps:
            r = representative_rep(analysis)
            reps = [r] if r is not None else []
        unit = analysis.ds.unit
        note = {} if unit.is_time else {"counter_unit": unit.name, "note": f"ts is the count of {unit.name} / 1000, "
                                        "shown as µs by the viewer: a count, not a time"}
        doc = {"traceEvents": trace_events(analysis, reps), "displayTimeUnit": "ns",
               "otherData": {"experiment": analysis.ds.name, "repetitions": reps, **note}}
        return json.dumps(doc, separators=(",", ":"))
