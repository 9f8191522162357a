# SPDX-License-Identifier: Apache-2.0
"""A plan against the agents' offers: the handshake matrix (plan/suites.py) and the
experiment matrix (plan/experiments.py), one list of configurations. A plan with `[device]`
resolves its handshakes against each device's firmware's SUITES (one or several targets; and,
with `host = true`, the host agents' too); each becomes one configuration per device, protocol
and firmware image."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

from tlsbench.core import spec as specmod
from tlsbench.plan import experiments, suites
from tlsbench.plan.configs import Configuration, Resolution
from tlsbench.plan.experiments import Hello
from tlsbench.plan.model import LoadedPlan
from tlsbench.plan.suites import Suite

TLS = "tls"


@dataclass(frozen=True)
class DeviceOffer:
    """What a device's firmware offers: its library and name (HELLO) and its SUITES list."""

    library: str  # HELLO library: the configurations' library
    target: str  # HELLO device.target: the configurations' target
    suites: Sequence[Suite]
    images: tuple[str, ...] = ("counting",)  # the firmware images each configuration runs on
    hello: Hello = dataclasses.field(default_factory=dict)  # its HELLO: the experiments it offers
    # Why its configurations are stored but not run: no image for its target (too large for
    # it, or a build not made for its core); its suites and HELLO are then those a lane of the
    # same build lists (run/session.py), or none.
    not_run: str | None = None

    @property
    def listed(self) -> bool:
        """Whether its suites and experiments are known (a lane without an image lists none of
        its own)."""
        return bool(self.suites or self.hello)


def resolve(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Suite]],
            hellos: Mapping[str, Hello], devices: Sequence[DeviceOffer] = ()) -> Resolution:
    """Per library its SUITES list and its HELLO in (and each device's offer, for a plan with
    [device]), every configuration of the plan out."""
    if loaded.plan.device is not None:
        if not devices:
            raise ValueError("a plan with [device] is resolved against the devices' offers")
        return _resolve_device(loaded, suites_by_library, hellos, devices)
    out = suites.resolve(loaded, suites_by_library)
    out.configs += metric_twins(loaded, out.configs, out)
    found = experiments.resolve(loaded, hellos)
    out.configs += found.configs
    out.merge(found)
    return out


def _resolve_device(loaded: LoadedPlan, suites_by_library: Mapping[str, Sequence[Suite]],
                    hellos: Mapping[str, Hello], devices: Sequence[DeviceOffer]) -> Resolution:
    """Each device's configurations (handshakes, experiments), then (host = true) the same
    matrix on the host agents."""
    plan = loaded.plan.device
    assert plan is not None
    out = Resolution()
    several_builds = len({device.library for device in devices}) > 1
    Place = tuple[str, str | None, Mapping[str, Sequence[Suite]], tuple, Mapping[str, Hello], DeviceOffer | None]
    places: list[Place] = [
        (f"{device.target} {device.library}" if several_builds else device.target, device.target,
         {device.library: device.suites}, device.images, {device.library: device.hello}, device) for device in devices]
    if plan.host:
        places.append(("host", None, suites_by_library, (None,), hellos, None))
    for name, target, offer, images, offered, device in places:
        prefix = f"{name}: " if len(places) > 1 else ""
        not_run = device.not_run if device else None
        if device and not_run and not device.listed:  # no lane lists what it would have run: the lane is the cell
            out.skip(name, f"{name}: {not_run}; no lane of the plan with the same library build has an image, so its "
                           "configurations are not known")
            continue
        first = len(out.configs)
        found = suites.resolve(loaded, offer)
        out.merge(found, prefix)
        by_id = {(library, s["id"]): s for library, listed in offer.items() for s in listed}
        for config in found.configs:
            for protocol in plan.protocols:
                if protocol != TLS and not by_id[(config.row.library, config.suite_id)].get("dtls", True):
                    out.skip(prefix + placed(config, protocol, target, None).key, f"{prefix}suite not usable over DTLS")
                    continue
                if protocol == TLS and config.options & specmod.load().options.value("CONNECTION_ID"):
                    out.skip(prefix + placed(config, protocol, target, None).key, f"{prefix}{suites.CID_NEEDS_DTLS}")
                    continue
                out.configs += [placed(config, protocol, target, image) for image in images]
        # Experiments run on the counting image: their counts are the measurement.
        found = experiments.resolve(loaded, offered)
        out.merge(found, prefix)
        out.configs += [placed(config, TLS, target, None) for config in found.configs]
        if not_run:
            out.not_run.update((config.key, not_run) for config in out.configs[first:])
    return out


def metric_twins(loaded: LoadedPlan, configs: Sequence[Configuration], out: Resolution) -> list[Configuration]:
    """For each metric beyond time the plan chooses, a twin of every handshake configuration
    whose agent collects it (docs/metrics.md); counting runs only in memory, where both peers
    share one process and nothing waits on a network."""
    spec = specmod.load()
    collects = [c for c in spec.collects_for(loaded.plan.metrics) if c != spec.collects.name(0)]
    twins = []
    for config in configs:
        if config.variant is not None:
            for collect in collects:
                out.skip(twin_key(config, collect), "metrics beyond time: memory transport only")
            continue
        twins += [collected(config, collect, loaded.plan.metric_repetitions) for collect in collects]
    return twins


def collected(config: Configuration, collect: str, repetitions: int) -> Configuration:
    """The twin of a handshake configuration whose agent collects `collect`."""
    row = dataclasses.replace(config.row, key=twin_key(config, collect), collect=collect, repetitions=repetitions)
    return dataclasses.replace(config, row=row)


def twin_key(config: Configuration, collect: str) -> str:
    return f"{config.key}|collect:{collect}"


def placed(config: Configuration, protocol: str, target: str | None, image: str | None) -> Configuration:
    """A handshake configuration over `protocol` on the device `target` (None: the host) and
    firmware `image`; the key of a host TLS configuration is left as it was."""
    key = (config.key + ("" if protocol == TLS else f"|{protocol}") + (f"|target:{target}" if target else "")
           + (f"|image:{image}" if image not in (None, "counting") else ""))
    row = dataclasses.replace(config.row, key=key, target=target, image=image,
                              protocol=None if protocol == TLS else protocol)
    return dataclasses.replace(config, row=row, protocol=specmod.load().protocol_kinds.value(protocol))
