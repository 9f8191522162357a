# SPDX-License-Identifier: Apache-2.0
"""Plans, pure: a TOML plan plus what the agents offer (their SUITES lists and HELLO
experiment lists) in, a list of configurations out (docs/plan-format.md). Nothing here
starts a process or touches a file other than the plan itself."""
from tlsbench.plan.model import LIBRARIES, LoadedPlan, Plan, PlanError, load, parse, validate
from tlsbench.plan.suites import select_per_library, select_suites

__all__ = ["LIBRARIES", "LoadedPlan", "Plan", "PlanError", "load", "parse", "validate", "select_per_library",
           "select_suites"]
