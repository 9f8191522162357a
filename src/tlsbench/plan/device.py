# SPDX-License-Identifier: Apache-2.0
"""The plan's `[device]` section: the agent's firmware on a device, both peers on it,
driven over a serial line (docs/plan-format.md, docs/porting.md).

    [device]
    target = "qemu-mps2-an386"           # an emulated board: the firmware built on demand
    # or a matrix over several, booted in parallel (one QEMU per host core)
    target = ["qemu-cortex-m0", "qemu-mps2-an505", "qemu-riscv32-virt"]
    library = "mbedtls@3.6+p256m"        # the library build on it (spec/libraries.toml [device]),
    library = ["mbedtls@2.28", "wolfssl@5.7"]  # or several: targets × builds, a lane each
    # or
    serial = "/dev/ttyACM0"              # a real board on a serial port
    baud = 115200
    firmware = "build/firmware/<name>/tlsbench-firmware-<name>.elf"   # the image flashed on it
    board = "nrf52840"                   # the part its counts are converted to (spec/boards.toml):
                                         # cycles (model), ms and mJ; without one, counts only
    cycles = true                        # target + board: each record's instruction classes through
                                         # the cycle model's QEMU plugin (default: on with a board)
    memory = true                        # the memory image too: each peer's heap peak and stack
    ram_kb = 36                          # the part's RAM: a peer's heap capped to what it leaves

A device configuration is a handshake configuration of the firmware's library with the
device's name on it (config.target); its counts are in the unit the firmware's HELLO names
(instructions under QEMU), never a time."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from tlsbench.core import boards, libraries, targets
from tlsbench.core.validation import Strict, UserPath, as_list, no_duplicates

# The emulated boards the host boots itself (spec/targets.toml: their QEMU command line, the
# board and toolchain their image is built for).
TARGETS = tuple(targets.load().emulated)
# The library builds a firmware can carry (spec/libraries.toml [device]).
DEVICE_BUILDS = tuple(b.name for b in libraries.load().device)
BOARDS = tuple(boards.boards())  # the parts a device's counts convert to (spec/boards.toml)
PROTOCOLS = ("tls", "dtls")  # both peers on the device over the memory transport
IMAGES = ("counting", "memory")  # the firmware's two images (docs/agent.md)
IMAGE_WORD = "{image}"  # in [device] flash: where the image's path goes
LABGRID_FLASH = "labgrid"  # [device] flash with a place: the place's labgrid flashing driver writes the image
# Counts are the same run after run; repetitions differ only through random keys, nonces and
# blinding (0.1-0.3% for public-key suites), so a few pin the median and each costs up to
# seconds of emulation (docs/porting.md "Reading the counts").
DEVICE_REPETITIONS = 5
DEVICE_WARMUP = 1  # absorbs the first RSA private operation after boot (blinding set-up: +32%)
# DTLS timers count in the device's unit (1 ms = 10^6 instructions under QEMU): both peers
# share one core, so one peer's long turn must not expire the other's timer.
DEVICE_DTLS_TIMEOUT_MS = 60_000


class DevicePlan(Strict):
    """Where the firmware runs and what it measures besides the counts."""

    # An emulated board, or several: each configuration runs on each (its key names the target).
    target: Annotated[list[Literal[TARGETS]], BeforeValidator(as_list), Field(min_length=1)] | None = None
    serial: UserPath | None = None  # a real board's serial device (or a network serial port, tcp://HOST:PORT)
    place: Annotated[str, Field(min_length=1)] | None = None  # a labgrid place: its board, acquired for the run
    baud: Annotated[int, Field(ge=50, le=4_000_000)] = 115200  # the board's UART rate (QEMU ignores it)
    # The image: for `serial`, the file flashed on the board (required: its SHA-256 is stored);
    # for `target`, an image to boot instead of the one built from `config`.
    firmware: UserPath | None = None
    # target: the device library build (default: the target's), or several: a matrix of
    # targets × builds, one lane each (each build's firmware lists its own suites)
    library: Annotated[list[str], BeforeValidator(as_list), Field(min_length=1)] | None = None
    config: UserPath | None = None  # target: the library config header to build with (default: the build's)
    memory: bool = False  # target: also run the memory image (footprint), in configurations of their own
    host: bool = False  # also run the plan's libraries on the host, same configurations (device vs host)
    protocols: Annotated[list[Literal[PROTOCOLS]], BeforeValidator(as_list), Field(min_length=1)] = ["tls"]
    dtls_timeout_ms: Annotated[int, Field(ge=1, le=65535)] = DEVICE_DTLS_TIMEOUT_MS
    reset: Annotated[str, Field(min_length=1)] | None = None  # serial: a command that resets the board
    # serial, place: a command that writes the firmware image onto the board, {image} its path
    # (run once per run, before the first reset); "labgrid" with place: the place's flashing driver
    flash: Annotated[str, Field(min_length=1)] | None = None
    board: Literal[BOARDS] | None = None  # the part whose time and energy the counts are converted to
    # The part's RAM (KiB): each peer's heap in the memory image is capped to what it leaves the
    # library (run/device.py DeviceSetup.heap_cap); a configuration that needs more is stored as
    # "does not fit in RAM (...)". The counting image keeps the emulated board's RAM.
    ram_kb: Annotated[int, Field(ge=1)] | None = None
    # The cycle model's QEMU plugin on the counting image: each trace record's instruction
    # classes, so each step's cycles (model) are its own (docs/cycles.md "Per-step cycles").
    # Default (None): on for an emulated target with a board, off otherwise.
    cycles: bool | None = None

    @model_validator(mode="after")
    def _one_place(self) -> "DevicePlan":
        if sum(where is not None for where in (self.target, self.serial, self.place)) != 1:
            raise ValueError("give exactly one of target (an emulated board: "
                             f"{', '.join(TARGETS)}), serial (a board's serial device, e.g. /dev/ttyACM0) or place "
                             "(a labgrid place)")
        if self.serial is not None or self.place is not None:
            wrong = [name for name in ("library", "config", "memory") if getattr(self, name)]
            if wrong:
                raise ValueError(f"{', '.join(wrong)}: only with target; for a board, flash the image you want "
                                 "(the memory image for the footprint) and name it in firmware")
            if self.firmware is None:
                raise ValueError(f"{'serial' if self.serial else 'place'} needs firmware: the image flashed on the "
                                 "board (its SHA-256 is stored with every result)")
            if self.flash == LABGRID_FLASH and self.place is None:
                raise ValueError(f'flash = "{LABGRID_FLASH}" flashes through a labgrid place: give place, or a '
                                 f"command with {IMAGE_WORD} where it takes the image's path")
        elif self.reset is not None or self.flash is not None:
            raise ValueError(f"{'reset' if self.reset else 'flash'}: only with serial or place (an emulated board is "
                             "started by the host with its image)")
        if self.config is not None and len(self.libraries) > 1:
            raise ValueError("config: one library config header for one library build; with several builds, each "
                             "is built with its own (spec/libraries.toml [device])")
        if self.cycles and self.target is None:
            raise ValueError("cycles: the cycle model's QEMU plugin attaches to an emulated target only; a board's "
                             "own counter counts its cycles (leave cycles out, or run on a target)")
        if self.cycles and self.board is None:
            raise ValueError("cycles = true needs board = \"...\": the plugin simulates that board's memory system "
                             f"(flash wait states, caches); one of {', '.join(BOARDS)}")
        if self.ram_kb is not None and not (self.target and self.memory):
            raise ValueError("ram_kb caps each peer's heap in the memory image of an emulated target: give target "
                             "and memory = true with it")
        return self

    @field_validator("library")
    @classmethod
    def _device_build(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        names = []
        for name in value:
            build = libraries.load().device_build(name)
            if build is None:
                raise ValueError(f"{name!r} is no device library build; known: {', '.join(DEVICE_BUILDS)} "
                                 "(spec/libraries.toml [device])")
            names.append(build.name)
        return no_duplicates(names)

    @field_validator("flash")
    @classmethod
    def _names_the_image(cls, value: str | None) -> str | None:
        if value is not None and value != LABGRID_FLASH and IMAGE_WORD not in value:
            raise ValueError(f"write {IMAGE_WORD} where the command takes the image's path, e.g. "
                             f"flash = \"nrfjprog --program {IMAGE_WORD} --chiperase\" (or flash = \"{LABGRID_FLASH}\" "
                             "with a place: its labgrid flashing driver)")
        return value

    @field_validator("protocols", "target")
    @classmethod
    def _distinct(cls, value: list[str] | None) -> list[str] | None:
        return no_duplicates(value) if value is not None else value

    @property
    def targets(self) -> tuple[str, ...]:
        """The emulated boards, one or several (none for a board on a serial line)."""
        return tuple(self.target or ())

    @property
    def libraries(self) -> tuple[str | None, ...]:
        """The device library builds, one or several (None: each target's own)."""
        return tuple(self.library or (None,))

    @property
    def step_cycles(self) -> bool:
        """Whether the counting image runs under the cycle model's plugin: as asked, else
        whenever an emulated target has a board."""
        return self.cycles if self.cycles is not None else (self.target is not None and self.board is not None)

    @property
    def images(self) -> tuple[str, ...]:
        """The images a configuration runs on: the counting one, and the memory one on request."""
        return IMAGES if self.memory else IMAGES[:1]

    @property
    def name(self) -> str:
        """What the configurations and reports call the device before its HELLO names it."""
        return ", ".join(self.targets) or (f"place {self.place}" if self.place else f"serial {self.serial}")
