# SPDX-License-Identifier: Apache-2.0
"""Markdown: the winners table and the per-configuration table, for a README or a paper draft."""
from __future__ import annotations

from tlsbench.analysis.questions.device import DeviceResults
from tlsbench.analysis.questions.primitives import Primitives
from tlsbench.analysis.results import Analysis
from tlsbench.analysis.tables import SUITE_COLUMNS, ci_text, table_rows
from tlsbench.analysis.units import identical, identity_text


def _cell(s, scale: float) -> str:
    if s is None:
        return "–"
    spread = identity_text(s) if identical(s) else ci_text(s)
    return f"{s.median / scale:,.{3 if scale == 1e6 else 2}f} {spread}"


def _interval(p, scale: float) -> str:
    """A winner's interval, or why there is none."""
    if p.median_ci[0] != p.median_ci[0]:  # NaN: too few values
        return f"n = {p.n}: no interval"
    return f"[{p.median_ci[0] / scale:,.3f}, {p.median_ci[1] / scale:,.3f}]"


class MarkdownExporter:
    suffix = ".md"

    def export(self, analysis: Analysis, reps: list[int] | None = None) -> str:
        res, lab, u = analysis.results, analysis.results.config_labels, analysis.ds.unit
        counted = [] if u.is_time else [f"Counts in {u.name} on {res.context.target}: a count, never a time.", ""]
        out = [f"# {res.context.experiment}", "", *counted, "## Winners", "",
               "| Question | Winner | Median | 95% CI | Lead | Runner-up (ratio [CI]) |",
               "|---|---|---:|---:|---|---|"]
        for w in res.winners:
            p = w.winner
            sc = 1e6 if w.question.metric.startswith("handshake") else 1e3
            unit = u.label(sc)
            ru = "; ".join(f"{lab[q.config_id]} ×{q.vs_winner.ratio:.3f} [{q.vs_winner.ci[0]:.3f}, "
                           f"{q.vs_winner.ci[1]:.3f}]" for q in w.places[1:2])
            lead = "significant" if w.significant else "not significant"
            ru += "".join(f"; not considered: {lab[c]} ({why})" for c, why in w.not_considered.items())
            out.append(f"| {w.question.title} | {lab[p.config_id]} | {p.median / sc:,.3f} {unit} | "
                       f"{_interval(p, sc)} | {lead} | {ru} |")
        out += ["", "## Per configuration (median ± 95% CI half-width, within this run: its rounds resampled)", "",
                "| Configuration | " + " | ".join(f"{c[0]} ({u.label(c[3])})" for c in SUITE_COLUMNS) + " |",
                "|---|" + "---:|" * len(SUITE_COLUMNS)]
        for cid in sorted(res.configs, key=lambda c: lab[c]):
            if cid in res.no_data:
                out.append(f"| {lab[cid]} | {res.no_data[cid]} |" + " |" * (len(SUITE_COLUMNS) - 1))
                continue
            cells = []
            for _, metric, peer, scale, _ in SUITE_COLUMNS:
                row = res.cell(cid, metric, peer)
                cells.append(_cell(row.summary if row else None, scale))
            out.append(f"| {lab[cid]} | " + " | ".join(cells) + " |")
        out += self._libraries(analysis)
        out += device_lines(res.device) if res.device else []
        out += markdown_lines(res.primitives) if res.primitives else []
        if res.warnings:
            out += ["", "## Warnings", ""] + [f"- {w}" for w in res.warnings]
        return "\n".join(out) + "\n"

    @staticmethod
    def _libraries(analysis: Analysis) -> list[str]:
        """Handshake processing per library and peer, one row per matrix cell (several libraries only)."""
        res, libs = analysis.results, analysis.results.libraries
        if libs is None or not libs.several:
            return []
        heads = [f"{lib} {peer} ({analysis.ds.unit.label(1e6)})" for lib in libs.order for peer in ("client", "server")]
        out = ["", "## Libraries side by side: handshake processing (median ± 95% CI half-width)", "",
               "| Configuration | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
        for cell in libs.cells:
            cells = []
            for lib in libs.order:
                for peer in ("client", "server"):
                    row = res.find(cell.configs[lib], "handshake_processing", peer) if lib in cell.configs else None
                    cells.append(_cell(row.summary if row else None, 1e6))
            out.append(f"| {cell.label} | " + " | ".join(cells) + " |")
        return out


def markdown_lines(p: Primitives) -> list[str]:
    """The time-per-operation table for `tlsbench export --format markdown`."""
    heads = [f"{lib} (µs)" for lib in p.libraries]
    out = ["", "## Crypto primitives and experiments: time per operation (median ± 95% CI half-width)", "",
           "| Experiment | Payload | Group | " + " | ".join(heads) + " |", "|---|---:|---|" + "---:|" * len(heads)]
    for row in table_rows(p):
        cells = [(v.note or f"{v.median} {v.pct}" + (f" ({v.vs_fastest})" if v.vs_fastest else "")) if v else "–"
                 for v in row.values.values()]
        out.append(f"| {row.experiment} | {row.size} | {row.group} | " + " | ".join(cells) + " |")
    return out


def device_lines(d: DeviceResults) -> list[str]:
    """The footprint table and, with host times, the two rankings side by side."""
    out = ["", f"## Firmware on {d.target} ({d.cpu}), counting in {d.unit.name}", "",
           "| image | file | config | flash (text + data) | static RAM (data + bss) | SHA-256 |", "|---|---|---|---:|---:|---|"]
    out += [f"| {i.variant} | {i.file} | {i.config} | {i.flash:,} | {i.static_ram:,} | {i.firmware_sha256[:16]}… |"
            for i in d.images]
    if d.footprint:
        out += ["", f"## Footprint on {d.target} (bytes, the most over the repetitions)", "",
                "| Configuration | peer | heap peak, handshake | heap kept | heap peak, connected | stack high-water |",
                "|---|---|---:|---:|---:|---:|"]
        for f in d.footprint.rows:
            cells = [f"{v.most:,}" if (v := f.values.get(k)) else "–" for k in
                     ("HEAP_PEAK_HANDSHAKE", "HEAP_KEPT", "HEAP_PEAK_CONNECTED", "STACK_HIGH_WATER")]
            out.append(f"| {f.label} | {f.peer} | " + " | ".join(cells) + " |")
    if d.vs_host and d.vs_host.ranks:
        out += ["", f"## {d.target} and the host ({d.vs_host.source}): handshake processing and rank", "",
                f"| peer | Configuration | device ({d.unit.label(1e6)}) | rank | host (ms) | rank | "
                f"{d.unit.noun} per host ns |", "|---|---|---:|---:|---:|---:|---:|"]
        out += [f"| {k.peer} | {k.config} | {k.device / 1e6:,.3f} | {k.device_rank} | {k.host / 1e6:,.3f} | "
                f"{k.host_rank} | {k.device / k.host:,.1f} |" for k in d.vs_host.ranks]
    return out
