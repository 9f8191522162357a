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

from ..analysis.results import Analysis
from ..analysis.slices import format_value
from ..analysis.vocab import vocab


def trace_events(a: Analysis, reps: list[int]) -> list[dict]:
    voc, sl, ds = vocab(), a.ds.slices, a.ds
    events: list[dict] = []
    proc = a.costs.processing
    for rep in reps:
        pos = ds.rep_index(np.array([rep]))[0]
        cfg = ds.configs.get(int(ds.reps.config_id[pos])) if pos < len(ds.reps) else None
        pname = f"rep {rep}" + (f" {a.results.config_labels[cfg.id]}" if cfg else "")
        events.append({"name": "process_name", "ph": "M", "pid": rep, "tid": 0, "args": {"name": pname}})
        idx = np.flatnonzero(sl.rep == rep)
        for peer in np.unique(sl.peer[idx]).tolist():
            events.append({"name": "thread_name", "ph": "M", "pid": rep, "tid": peer,
                           "args": {"name": voc.peer_name(peer)}})
            events.append({"name": "thread_sort_index", "ph": "M", "pid": rep, "tid": peer,
                           "args": {"sort_index": (peer + 1) % 256}})
            stack: list[int] = []
            for i in idx[sl.peer[idx] == peer].tolist():
                while stack and stack[-1] != sl.parent[i]:
                    events.append(_end(sl, stack.pop(), rep))
                cat = voc.categories[sl.category[i]] if sl.category[i] >= 0 else "unknown"
                args = {"value": format_value(int(sl.category[i]), int(sl.value[i])),
                        "processing_us": round(float(proc[i]) / 1e3, 3)}
                if sl.open[i]:
                    args["open"] = "no STOP recorded; closed at the last timestamp"
                ev = {"name": voc.name(sl.label[i]), "cat": cat, "pid": rep, "tid": peer,
                      "ts": sl.ts[i] / 1e3, "args": args}
                if sl.instant[i]:
                    events.append({**ev, "ph": "i", "s": "t"})
                    continue
                events.append({**ev, "ph": "B"})
                stack.append(i)
            while stack:
                events.append(_end(sl, stack.pop(), rep))
    return events


def _end(sl, i: int, rep: int) -> dict:
    return {"name": vocab().name(sl.label[i]), "ph": "E", "pid": rep, "tid": int(sl.peer[i]),
            "ts": (sl.ts[i] + sl.dur[i]) / 1e3}


class PerfettoExporter:
    suffix = ".json"

    def export(self, a: Analysis, reps: list[int] | None = None) -> str:
        if not reps:
            from ..report.figures import representative_rep

            r = representative_rep(a)
            reps = [r] if r is not None else []
        doc = {"traceEvents": trace_events(a, reps), "displayTimeUnit": "ns",
               "otherData": {"experiment": a.ds.name, "repetitions": reps}}
        return json.dumps(doc, separators=(",", ":"))
