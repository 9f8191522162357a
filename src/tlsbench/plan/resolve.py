# SPDX-License-Identifier: Apache-2.0
"""A plan against the agents' offers: the handshake matrix (plan/suites.py) and the
experiment matrix (plan/experiments.py), one list of configurations."""
from __future__ import annotations

from typing import Mapping, Sequence

from tlsbench.plan import experiments, suites
from tlsbench.plan.configs import Resolution
from tlsbench.plan.experiments import Hello
from tlsbench.plan.model import LoadedPlan
from tlsbench.plan.suites import Suite


def resolve(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Suite]],
            hellos: Mapping[str, Hello]) -> Resolution:
    """Per library its SUITES list and its HELLO in, every configuration of the plan out."""
    out = suites.resolve(loaded, suites_by_library)
    found = experiments.resolve(loaded, hellos)
    out.configs += found.configs
    out.not_applicable.update(found.not_applicable)
    return out
