# SPDX-License-Identifier: Apache-2.0
"""`tlsbench plan show`: a plan resolved against the agents' and the device's offers without
running it (the configurations it means, the cells that fall out), and how long it will take."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tlsbench.app.device import reached
from tlsbench.app.run import BUILDABLE
from tlsbench.plan.configs import Resolution
from tlsbench.plan.estimate import Estimate, estimate
from tlsbench.plan.model import LoadedPlan
from tlsbench.plan.resolve import resolve
from tlsbench.run.agents import query_suites
from tlsbench.run.device import query_device
from tlsbench.run.session import device_offers
from tlsbench.run.timeouts import Timeouts


@dataclass(frozen=True)
class Resolved:
    resolution: Resolution
    estimate: Estimate | None  # None: not estimated (a plan over emulated links)


def resolve_offline(loaded: LoadedPlan, agent_dir: str | Path | None, timeouts: Timeouts,
                    progress: Callable[[str], None] = lambda message: None) -> Resolved:
    """The plan against what its agents offer (each started for its HELLO and SUITES, the
    device's firmware booted, built first if it is not yet), nothing stored."""
    plan = loaded.plan
    host = plan.device is None or plan.device.host
    greetings = {lib: query_suites(lib, agent_dir, timeouts, BUILDABLE) for lib in plan.libraries} if host else {}
    offers = []
    if plan.device is not None:
        with reached(plan.device, progress) as devices:
            offers = device_offers(loaded, [(setup, *query_device(setup, timeouts)) for setup in devices.setups],
                                   devices.unfit)
    resolution = resolve(loaded, {lib: s for lib, (_, s) in greetings.items()},
                         {lib: h for lib, (h, _) in greetings.items()}, offers)
    return Resolved(resolution, estimate(plan, [c for c in resolution.configs if c.key not in resolution.not_run]))
