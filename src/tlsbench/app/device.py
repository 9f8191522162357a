# SPDX-License-Identifier: Apache-2.0
"""Device setup: a plan's `[device]` (or `--device`) as the run needs it: the firmware images,
found in the firmware cache and built on demand by the same builder as `tlsbench build
firmware`, and how the device is reached (run/device.py DeviceSetup); and what a device's
firmware offers (`tlsbench suites --device`)."""
from __future__ import annotations

import contextlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from tlsbench.builder import firmware
from tlsbench.builder.shell import BuildError
from tlsbench.core import inputs
from tlsbench.core.errors import UserError
from tlsbench.plan.device import IMAGE_WORD, LABGRID_FLASH, DevicePlan
from tlsbench.run import labgrid
from tlsbench.run.device import COUNTING, MEMORY, DeviceSetup, flash
from tlsbench.run.device import query_device as greeting_of
from tlsbench.run.endpoints.firmware import FirmwareImage
from tlsbench.run.session import UnfitLane
from tlsbench.core import targets
from tlsbench.run.timeouts import Timeouts


class FirmwareUnavailable(UserError):
    """The device's firmware could not be found or built."""


@dataclass(frozen=True)
class Devices:
    """A plan's devices: how each lane whose firmware was found or built is reached, and the
    lanes without an image for their target (too large for it, or a build not made for its
    core: their configurations are stored with why, not run)."""

    setups: tuple[DeviceSetup, ...]
    unfit: tuple[UnfitLane, ...] = ()


def setups_for(device: DevicePlan, progress: Callable[[str], None] = lambda message: None,
               place: labgrid.Place | None = None) -> Devices:
    """How to reach each of the plan's devices (a board, or one or several emulated ones) and
    which images they run (`progress`: a build's lines); a labgrid place's board through the
    `place` acquired for it (reached())."""
    common: dict[str, Any] = dict(dtls_timeout_ms=device.dtls_timeout_ms)
    if device.place is not None and place is None:
        raise FirmwareUnavailable(f"place {device.place!r} is reached only while acquired")  # reached() acquires it
    if device.serial is not None or place is not None:
        images, build = _given(Path(device.firmware or ""), (COUNTING,), board=True)
        reset = _command(device.reset)
        image = str(next(iter(images.values())).path)
        common["flash"] = (place.flash(image) if place is not None and device.flash == LABGRID_FLASH
                           else _command(device.flash, {IMAGE_WORD: image}))
        if place is not None:
            return Devices((DeviceSetup(images, serial=place.serial_port, baud=place.speed or device.baud,
                                        reset=reset or place.power_cycle, build=build, place=place.name, **common),))
        return Devices((DeviceSetup(images, serial=device.serial, baud=device.baud, reset=reset, build=build,
                                    **common),))
    if device.firmware:
        if len(device.targets) > 1 or len(device.libraries) > 1:
            raise FirmwareUnavailable("[device] firmware names one image, for one target and library build: leave "
                                      f"it out to boot the one built for each of {device.name}"
                                      + (f" × {', '.join(map(str, device.libraries))}" if device.library else ""))
        images, build = _given(Path(device.firmware), device.images, board=False)
        return Devices((DeviceSetup(images, target=targets.load().emulated[device.targets[0]], build=build,
                                    **common),))
    config = Path(device.config) if device.config else None
    setups, unfit = [], []
    for target, library in ((t, lib) for t in device.targets for lib in device.libraries):
        try:
            images, build = _built(target, library, config, device.images, progress)
        except firmware.NoFirmware as exc:  # a result: the lane's configurations say so, the other lanes run
            progress(f"{exc}; its configurations are stored with that reason")
            unfit.append(UnfitLane(exc.target, exc.library, exc.config_sha256, exc.reason))
            continue
        setups.append(DeviceSetup(images, target=targets.load().emulated[target], build=build,
                                  ram_bytes=device.ram_kb * 1024 if device.ram_kb else None, **common))
    return Devices(tuple(setups), tuple(unfit))


def _command(text: str | None, words: dict[str, str] | None = None) -> tuple[str, ...]:
    """A plan's board command as argv: `~` expanded, each of `words` replaced by its value."""
    argv = [os.path.expanduser(word) for word in shlex.split(text or "")]
    for word, value in (words or {}).items():
        argv = [arg.replace(word, value) for arg in argv]
    return tuple(argv)


@contextlib.contextmanager
def reached(device: DevicePlan, progress: Callable[[str], None] = lambda message: None,
            timeouts: Timeouts = Timeouts()) -> Iterator[Devices]:
    """setups_for() for the `with` block, a board's image flashed (its flash command); a labgrid
    place is acquired for it and released after, however the block ends (run/labgrid.py):
    acquire, flash, then the first connect() power-cycles it into the image."""
    with contextlib.ExitStack() as held:
        place = held.enter_context(labgrid.acquired(device.place)) if device.place is not None else None
        devices = setups_for(device, progress, place)
        for setup in devices.setups:
            flash(setup, timeouts)
        yield devices


def query_device(device: DevicePlan, progress: Callable[[str], None] = lambda message: None,
                 timeouts: Timeouts = Timeouts()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """HELLO and SUITES of a device's firmware (built first if it is not yet; the first target's
    whose image fits)."""
    with reached(device, progress, timeouts) as devices:
        if not devices.setups:
            raise FirmwareUnavailable("; ".join(f"{lane.target} {lane.library}: {lane.reason}"
                                                for lane in devices.unfit))
        return greeting_of(devices.setups[0], timeouts)


def _built(target: str, library: str | None, config: Path | None, variants: tuple[str, ...],
           progress: Callable[[str], None]) -> tuple[dict[str, FirmwareImage], dict]:
    """The images of a library build for the target (the cache, else a build); the target's own
    library build by default (spec/targets.toml), with the build's config header unless named."""
    try:
        request = firmware.FirmwareRequest.of_target(target, config, library)
        header = request.header
    except BuildError as exc:
        raise FirmwareUnavailable(str(exc)) from None
    problem = inputs.not_a_regular_file(header)
    if problem:
        raise FirmwareUnavailable(f"device config {header} {problem}: name a library config header "
                                  "for the board (default: the library build's, spec/libraries.toml [device])")
    try:
        build = firmware.ensure_firmware(request, progress)
    except firmware.NoFirmware:
        raise
    except BuildError as exc:
        raise FirmwareUnavailable(f"the firmware for {target} could not be built: {exc}") from None
    images = {i.variant: FirmwareImage(i.variant, i.path, i.sha256) for i in build.images if i.variant in variants}
    return images, build.to_json()


def _given(path: Path, variants: tuple[str, ...], board: bool) -> tuple[dict[str, FirmwareImage], dict]:
    """A named image file (and, for the footprint, the memory image built beside it)."""
    problem = inputs.not_a_regular_file(path)
    if problem:
        what = "the image flashed on the board" if board else "a firmware image (an .elf)"
        raise FirmwareUnavailable(f"device firmware {path} {problem}: name {what}; tlsbench build firmware "
                                  "builds them into build/firmware/<name>/")
    record = firmware.load_record(path.parent)
    recorded = {i.path.name: i.variant for i in record.images} if record else {}
    variant = recorded.get(path.name, COUNTING)
    if variant != COUNTING and not board:  # an emulated board boots the counting image first
        raise FirmwareUnavailable(f"device firmware {path} is the {variant} image ({firmware.RECORD} beside it says "
                                  f"so): name the counting image in [device] firmware (--firmware); memory = true "
                                  "runs the memory image beside it")
    images = {variant: FirmwareImage(variant, path, firmware.file_sha256(path))}
    if MEMORY in variants and MEMORY not in images:
        beside = path.with_name(f"{path.stem}-memory{path.suffix}")
        if not beside.is_file():
            raise FirmwareUnavailable(f"memory = true needs the memory image next to {path.name} ({beside.name}): "
                                      "tlsbench build firmware builds both")
        images[MEMORY] = FirmwareImage(MEMORY, beside, firmware.file_sha256(beside))
    return images, record.to_json() if record else {}
