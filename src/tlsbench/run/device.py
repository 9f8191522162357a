# SPDX-License-Identifier: Apache-2.0
"""The device of a plan's [device]: the agent's firmware on it, both peers on it, driven over
a serial line with the same frames as a host agent (docs/porting.md, docs/protocol.md).

A DeviceSetup says how it is reached and which images it runs; connect() boots one image
through its endpoint (QEMU: run/endpoints/qemu.py; a board's serial port:
run/endpoints/serial.py) and checks what greets; facts() is what the boot's `agent` row
records (migration 007), the counter's unit with it. The batches run on the single-agent
topology (run/topologies/single.py), one boot per image, the image not in use paused."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from tlsbench.core import libraries
from tlsbench.core import spec as specmod
from tlsbench.run.endpoints.firmware import DeviceError, FirmwareEndpoint, FirmwareImage
from tlsbench.core.targets import Target
from tlsbench.run.cycles import STEP_FLUSH, STEP_MARKS, StepCycles, StepReader, plugin_option
from tlsbench.run.endpoints.qemu import REBUILD_QEMU, QemuEndpoint
from tlsbench.run.endpoints.serial import REBUILD_BOARD, SerialEndpoint, run_board_command
from tlsbench.schema import DeviceFacts
from tlsbench.run.timeouts import Timeouts

COUNTING, MEMORY = "counting", "memory"  # the firmware's images (plan/device.py IMAGES)


@dataclass(frozen=True)
class DeviceSetup:
    """Everything the run needs to reach a plan's device (app/device.py builds it from [device]
    and the firmware build)."""

    images: Mapping[str, FirmwareImage]  # by variant; the counting image always
    target: Target | None = None  # an emulated board, or
    serial: str | None = None  # a board's serial device
    baud: int = 115200
    reset: tuple[str, ...] = ()  # the command that resets the board (serial)
    flash: tuple[str, ...] = ()  # the command that writes the image onto the board (serial), before its first reset
    place: str | None = None  # the labgrid place the serial port belongs to (acquired for the run)
    dtls_timeout_ms: int = 0  # a DTLS configuration's RUN timers (0: the library's)
    build: Mapping[str, Any] = field(default_factory=dict)  # the build's record (firmware.json), when known
    ram_bytes: int | None = None  # the part's RAM ([device] ram_kb): caps each peer's heap in the memory image
    cycles: StepCycles | None = None  # the cycle model's plugin on the counting image ([device] cycles; QEMU only)

    def heap_cap(self, variant: str) -> int | None:
        """What a part of `ram_bytes` leaves one peer's heap (a device runs one side): its RAM
        minus the library's and the C runtime's static RAM (the image's link map, in the
        build's record). Not charged: the harness's own buffers (trace, JSON, queues: the
        measurement's, not the deployment's), the stack (its high-water mark is measured, the
        report's fit check adds it) and the heap held by neither peer (credentials, DRBG: the
        fit check adds it too): a configuration refused here does not fit even so.
        None without ram_bytes; at least 1 (0 is no cap)."""
        if self.ram_bytes is None:
            return None
        image = next((i for i in self.build.get("images", ()) if i.get("variant") == variant), {})
        parts = image.get("footprint", {}).get("parts", {})
        static = sum(parts.get(p, {}).get("ram", 0) for p in ("library", "runtime"))
        return max(1, self.ram_bytes - static)

    @property
    def name(self) -> str:
        return self.target.name if self.target else (f"place {self.place}" if self.place else f"serial {self.serial}")

    @property
    def advice(self) -> str:
        return REBUILD_QEMU if self.target else REBUILD_BOARD

    def library(self, hello: Mapping[str, Any]) -> str:
        """What the configurations call the firmware's library: its device build's label
        (mbedtls, mbedtls@3.6, mbedtls@3.6+p256m: spec/libraries.toml [device]), so two builds
        of one library never share a key; HELLO's library for an image of unknown build."""
        build = libraries.load().device_build(str(self.build.get("library", "")))
        return build.label if build else str(hello.get("library", "?"))

    def image(self, variant: str) -> FirmwareImage | None:
        """The image of a variant; a board has the one flashed on it (its HELLO says which)."""
        if self.serial is not None:
            return next(iter(self.images.values()), None)
        return self.images.get(variant)


# A memory image's repetition that failed because the heap cap refused an allocation
# (agent/arch/baremetal/memory_probes.c writes this into its failure text).
HEAP_REFUSED = re.compile(r"heap cap: a peer needed at least (\d+) bytes, (\d+) available")


def does_not_fit(error_text: str | None) -> str | None:
    """The reason a configuration is stored with when its memory image ran out of the part's
    RAM, None for any other failure."""
    found = HEAP_REFUSED.search(error_text or "")
    return f"does not fit in RAM (heap needed > {found[2]} bytes available)" if found else None


def _semihosting_args(setup: DeviceSetup, variant: str) -> tuple[str, ...]:
    cap = setup.heap_cap(variant) if variant == MEMORY else None
    return (f"heap_cap={cap}",) if cap else ()


def connect(setup: DeviceSetup, variant: str, timeouts: Timeouts) -> FirmwareEndpoint:
    """Boots the firmware image `variant` (a board: resets it) and checks what greets: a
    firmware of this host's specs, of the image variant asked for, on the plan's device."""
    image = setup.image(variant)
    if image is None:
        raise DeviceError(f"no {variant} image for {setup.name}: tlsbench build firmware builds both")
    counted = setup.cycles if setup.target and variant == COUNTING else None
    reader = StepReader(counted) if counted else None
    try:
        link: QemuEndpoint | SerialEndpoint = (
            QemuEndpoint(setup.target, image, timeouts.greeting, semihosting_args=_semihosting_args(setup, variant),
                         extra=_plugin(setup.target, image, reader, counted))
            if setup.target
            else SerialEndpoint(str(setup.serial), setup.baud, setup.reset, image, timeouts.greeting))
    except specmod.SpecMismatch as exc:
        _discard(reader)
        raise DeviceError(f"firmware {image.path.name} on {setup.name}: {exc}") from None
    except BaseException:
        _discard(reader)
        raise
    link.step_counts = reader
    try:
        if reader is not None:
            reader.attached()
        _check_device(link, setup, variant)
    except BaseException:
        link.kill()
        link.close()
        raise
    link.device = facts(link, image, setup)
    return link


def _plugin(target: Target, image: FirmwareImage, reader: StepReader | None, cycles: StepCycles | None) -> list[str]:
    """QEMU's -plugin option of the cycle model: a snapshot at every trace record, a repetition's
    reset and its shipping, the file flushed there (run/cycles.py StepReader), none without it."""
    if reader is None or cycles is None:
        return []
    return plugin_option(cycles.plugin, reader.path, image.path, target, cycles.geometry, STEP_MARKS, STEP_FLUSH)


def _discard(reader: StepReader | None) -> None:
    if reader is not None:
        reader.close()


def flash(setup: DeviceSetup, timeouts: Timeouts) -> None:
    """Writes the image onto the board with the plan's flash command (none: the board runs what
    was flashed on it); the first connect() then resets it into that image."""
    if setup.flash:
        run_board_command("flash", setup.flash, timeouts.flash)


def _check_device(link: FirmwareEndpoint, setup: DeviceSetup, variant: str) -> None:
    device = link.hello.get("device")
    if not isinstance(device, dict):
        raise DeviceError(f"{link.executable} on {setup.name} greeted without a device object: it is a host "
                          "agent's build, not a firmware; build one with tlsbench build firmware")
    found = (device.get("image") or {}).get("variant")
    if found != variant:
        raise DeviceError(f"{link.executable} on {setup.name} is the {found} image where the {variant} image was "
                          "expected: name the right file in [device] firmware (and flash it)")
    if setup.target and device.get("target") != setup.target.name:
        raise DeviceError(f"{link.executable} was built for {device.get('target')}, not {setup.target.name}: "
                          "build it for this target (tlsbench build firmware --target ...)")


def counter_unit(hello: Mapping[str, Any]) -> str:
    """The unit of every count the agent sends (HELLO clock.unit; a host agent's is ns)."""
    return str((hello.get("clock") or {}).get("unit") or "ns")


def facts(link: FirmwareEndpoint, image: FirmwareImage, setup: DeviceSetup) -> DeviceFacts:
    """What the agent row records of a boot: device, unit, image and the build behind it."""
    device, hello = link.hello.get("device") or {}, link.hello
    config = (hello.get("build") or {}).get("config") or {}
    details = {**(device.get("image") or {}), "file": image.path.name, "cpu": device.get("cpu"),
               "board": device.get("board"), "counter": device.get("counter"), "options": device.get("options"),
               "entropy": device.get("entropy"),
               "library": f"{hello.get('library_name', hello.get('library', '?'))} {hello.get('library_version', '')}",
               "config": {"name": config.get("name"), "sha256": config.get("sha256")},
               "build": {k: setup.build[k] for k in ("name", "library", "toolchain", "config") if k in setup.build},
               "footprint": next((i.get("footprint") or {} for i in setup.build.get("images", ())
                                  if i.get("variant") == image.variant), {})}
    return DeviceFacts(str(device.get("target", setup.name)), counter_unit(hello), image.sha256,
                       json.dumps(details, sort_keys=True))


def first_variant(setup: DeviceSetup) -> str:
    """The image a device greets with first: the counting one, or what a board has flashed."""
    if setup.serial is not None:
        image = setup.image(COUNTING)
        return image.variant if image else COUNTING
    return COUNTING


def query_device(setup: DeviceSetup, timeouts: Timeouts = Timeouts()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """HELLO and SUITES of a device's first image (for `tlsbench suites --device`)."""
    link = connect(setup, first_variant(setup), timeouts)
    try:
        return link.hello, link.suites
    finally:
        link.end()
        link.close()
