# SPDX-License-Identifier: Apache-2.0
"""`[network] pace`: each configuration's modelled step times, from the device run the plan
names, before anything is stored (docs/networks.md "Paced peers"). A configuration whose device
twin is missing refuses the plan in one line: running the device first inside a network plan
would tie a QEMU emulation into a run that needs root and links, while one device run serves
any number of paced plans (and is resumable on its own)."""
from __future__ import annotations

from tlsbench.plan.configs import Resolution
from tlsbench.plan.network import PACED_LIBRARIES, Pace
from tlsbench.run.pace import Pacing
from tlsbench.store.locator import locate


def pacing(pace: Pace | None, resolution: Resolution) -> Pacing | None:
    """The paced agents' tables of `resolution`'s network configurations, or None unpaced."""
    if pace is None:
        return None
    from tlsbench.analysis.derive.load import load  # numpy loads here
    from tlsbench.analysis.models.pace import PaceError, match_key, match_text, modelled_steps

    where = locate(pace.source)
    if not where.exists():
        raise PaceError(f"[network] pace: no device run at {pace.source}: run the device plan of the same "
                        "configurations first (e.g. tlsbench run plans/pace-device.toml) and name its folder in `from`")
    with where.reader() as reader:
        model = modelled_steps(load(reader, reader), pace.board)
    steps = {}
    for config in resolution.configs:
        variant = config.variant
        if variant is None:
            continue
        libraries = [config.row.library] + ([variant.peer_library or config.row.library] if pace.side == "both" else [])
        unpaced = next((lib for lib in libraries if lib not in PACED_LIBRARIES), None)
        if unpaced:
            raise PaceError(f"[network] pace: the {unpaced} agent cannot pace its steps (only "
                            f"{', '.join(PACED_LIBRARIES)} agents do): pace a plan of those, or leave `pace` out")
        row = config.row
        key = match_key(row.library, variant.protocol, row.suite_name, row.grp, row.credential, config.options)
        found = model.steps.get(key)
        if found is None:
            missing = match_text(key)
            raise PaceError(f"[network] pace: {model.source} has no counts of {missing}: add it to that device plan "
                            f"and run it again (--resume), or leave it out of this plan")
        steps[config.key] = tuple((peer, label, round(ns)) for (peer, label), ns in sorted(found.items()))
    return Pacing(pace.side, steps, model.conversion.text)
