# SPDX-License-Identifier: Apache-2.0
"""Plans, pure: a TOML plan plus what the agents offer (their SUITES lists and HELLO
experiment lists) in, a list of configurations out (docs/plan-format.md). Nothing here
starts a process or touches a file other than the plan itself."""
import importlib

# The package's API and the module of each: loaded on first use, so a reader of stores
# (analysis, a report) never waits for the plan model's pydantic.
_API = {**dict.fromkeys(("LIBRARIES", "LoadedPlan", "Plan", "PlanError", "load", "parse", "validate"), "model"),
        **dict.fromkeys(("select_per_library", "select_suites"), "suites")}
__all__ = list(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
