# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures. Tests that need the real agent locate it like the CLI does
(--agent-dir / $TLSBENCH_AGENT_DIR, next to the interpreter, PATH) with the source tree's
build/agent as a fallback, and fail (not skip) when it is missing: `make test` builds it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tlsbench import plan
from tlsbench.run import agents
from tlsbench.run.endpoints.process import ProcessEndpoint


@pytest.fixture(scope="session")
def agent_path() -> Path:
    try:
        return agents.find_agent("mbedtls")
    except agents.AgentError as exc:
        pytest.fail(f"these tests need the mbed TLS agent: {exc} "
                    "(or: cmake -S agent -B build/agent && cmake --build build/agent -j2)")


@pytest.fixture(scope="session")
def agent_suites(agent_path: Path) -> list[dict]:
    process = ProcessEndpoint.start(agent_path)
    try:
        return process.suites
    finally:
        process.quit()
        process.close()


def small_plan(name: str = "small", repetitions: int = 4, rounds: int = 2, suites: str | None = None,
               extra: str = "") -> plan.LoadedPlan:
    """A quick plan over a few fast suites."""
    suites = suites or '["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS-PSK-WITH-AES-128-GCM-SHA256", ' \
                       '"TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"]'
    text = (f'name = "{name}"\nrepetitions = {repetitions}\nrounds = {rounds}\nwarmup = 0\n'
            f'suites = {suites}\n{extra}')
    return plan.parse(text, f"{name}.toml")
