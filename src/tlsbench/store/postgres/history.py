# SPDX-License-Identifier: Apache-2.0
"""`tlsbench history`: a shared store's results across experiments, keyed by experiment x
device x library build x tlsbench commit (docs/fleet.md "History"). The device is the fleet
worker's (one per experiment), else the agent's target at its host, else its host; the build
is the agent's program and the library version its HELLO reports; the commit is the
tlsbench version that ran it (agent.tool_version, migration 017)."""
from __future__ import annotations

from dataclasses import dataclass

from tlsbench.store.postgres.connection import connect

_HISTORY = """
SELECT e.name,
       coalesce((SELECT k.device FROM worker k WHERE k.name = a.worker ORDER BY k.id DESC LIMIT 1),
                a.target || '@' || coalesce(a.host, '?'), a.host, e.host_json::json->>'host', '?') AS device,
       coalesce(a.executable || ' ' || (a.hello_json::json->>'library_version'), a.executable, c.library) AS build,
       coalesce(a.tool_version, '?') AS tool,
       count(DISTINCT c.id), count(*), count(*) FILTER (WHERE r.status <> 'OK'), max(r.stored_at)
FROM repetition r
JOIN experiment e ON e.id = r.experiment_id
JOIN config c ON c.experiment_id = r.experiment_id AND c.id = r.config_id
LEFT JOIN agent a ON a.experiment_id = r.experiment_id AND a.id = r.agent_id
WHERE c.suite_name LIKE %(suite)s AND c.library LIKE %(library)s
GROUP BY 1, 2, 3, 4
ORDER BY max(r.stored_at) DESC"""


@dataclass(frozen=True)
class HistoryRow:
    experiment: str
    device: str
    build: str
    tool_version: str
    configurations: int
    repetitions: int
    failed: int
    last_stored: str


def _like(pattern: str | None) -> str:
    """An fnmatch pattern as SQL LIKE (`*` any, `?` one); none: everything."""
    if not pattern:
        return "%"
    return pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_").replace("*", "%").replace("?", "_")


def history(url: str, suite: str | None = None, library: str | None = None,
            device: str | None = None) -> list[HistoryRow]:
    """The store's results grouped by experiment x device x build x commit, latest first."""
    with connect(url, read_only=True) as conn:
        rows = conn.execute(_HISTORY, {"suite": _like(suite), "library": _like(library)}).fetchall()
    return [HistoryRow(*r) for r in rows if device is None or r[1] == device]
