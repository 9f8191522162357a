# SPDX-License-Identifier: Apache-2.0
"""The agent as firmware for a device target (docs/porting.md): `make firmware`, or
`python -m tlsbench.builder.firmware [--target qemu-cortex-m0] [--library mbedtls@3.6] [--config H]`.

    the library cross-built with the board config    (tlsbench.builder.cross: cached, once)
      -> agent/firmware configured against it        build/firmware/<name>/
      -> tlsbench-firmware-<name>.elf                the counting image (its counts are stored)
         tlsbench-firmware-<name>-memory.elf         the memory image (footprint records)
         firmware.json                               per image: text, data, bss, SHA-256; the
                                                     library, config and toolchain it was built from

One image pair per target x library build, as one agent pair per host library build; every
object of both images is checked to carry the target's architecture (an ARMv6-M image with an
ARMv7-M object is refused). Nothing here names a target or a library version: spec/targets.toml
declares the targets (a board, its core, its default library build and config),
spec/libraries.toml the library builds, and agent/firmware/backends/<backend>.cmake each backend."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tlsbench.builder import cross, footprint
from tlsbench.builder.libraries import CachedLibrary
from tlsbench.builder.shell import BuildError, query, run
from tlsbench.core import libraries as declared
from tlsbench.core import targets
from tlsbench.core.image import ImageSizes

REPO = cross.REPO
FIRMWARE_SOURCE = REPO / "agent" / "firmware"
DEFAULT_TARGET = targets.load().default
DEFAULT_LIBRARY = DEFAULT_TARGET.library
DEFAULT_CONFIG = DEFAULT_TARGET.config  # the default target's header for its default build
TARGETS = {t.name: t for t in targets.load().all}  # --target: what HELLO's device.target says
BUILD_ROOT = REPO / "build" / "firmware"
RECORD = "firmware.json"


VARIANTS = (("counting", ""), ("memory", "-memory"))  # image variant, file name suffix


class UnknownTarget(BuildError):
    """A target spec/targets.toml does not declare."""


# GNU ld's words (arm-none-eabi and riscv64-unknown-elf alike) when the sections placed in a
# memory region of the link script outgrow it; the boards' scripts (agent/boards/*/*.ld) name
# their regions FLASH and RAM, generated from spec/targets.toml [target.*.memory].
OVERFLOW = re.compile(r"region `(\w+)' overflowed by (\d+) bytes?")  # 'byte' when it is one
REGIONS = {"FLASH": "flash", "RAM": "ram"}  # link script region -> targets.toml memory key
REGION_WORDS = {"flash": "flash", "ram": "RAM"}


@dataclass(frozen=True)
class Overflow:
    """An image larger than a memory region of its target."""

    image: str   # the image variant that overflowed (counting first: it is linked first)
    region: str  # targets.toml's memory key: flash or ram
    over: int    # bytes beyond the region (the linker's count)
    size: int    # the region's size (spec/targets.toml)

    @property
    def reason(self) -> str:
        """What a configuration of the image is stored with (app/device.py)."""
        image = "the image" if self.image == VARIANTS[0][0] else f"the {self.image} image"
        return (f"does not fit in {REGION_WORDS[self.region]} ({image} needs {self.over:,} bytes more than the "
                f"part's {self.size:,})")


class NoFirmware(BuildError):
    """A target × library build that has no image to run by the nature of the build, not by a
    failure: a result about that lane (app/device.py stores its configurations with `reason`)."""

    def __init__(self, target: str, library: str, config_sha256: str, reason: str):
        super().__init__(f"the firmware of {library} for {target}: {reason}")
        self.target, self.library, self.reason = target, library, reason  # library: the build's label
        self.config_sha256 = config_sha256  # its config header's (expanded) bytes


class DoesNotFit(NoFirmware):
    """An image that outgrows its target's flash or RAM. Built again, it overflows again by the
    same bytes: the objects are kept, so finding that out again costs the links only."""

    def __init__(self, target: str, library: str, config_sha256: str, overflow: Overflow):
        super().__init__(target, library, config_sha256, overflow.reason)
        self.overflow = overflow


class NotForCore(NoFirmware):
    """A library build not made for the target's architecture (spec/libraries.toml [device] arch)."""


def target_named(name: str) -> targets.Target:
    """A declared target, or one line naming the declared ones."""
    found = TARGETS.get(name)
    if found is None:
        raise UnknownTarget(f"unknown target {name!r}; declared (spec/targets.toml): {', '.join(TARGETS)}")
    return found


@dataclass(frozen=True)
class FirmwareRequest:
    config: Path | None = None  # None: the library build's on the target (default_config)
    library: str = DEFAULT_LIBRARY  # a device build (spec/libraries.toml [device]): its name or label
    target: str = DEFAULT_TARGET.name
    name: str = ""             # "" = <build label>-<config stem>[-<target>]: tlsbench-firmware-mbedtls-device-mps2
    build_root: Path = BUILD_ROOT
    jobs: int = os.cpu_count() or 2

    @classmethod
    def of_target(cls, target: str, config: Path | None = None, library: str | None = None,
                  **rest: object) -> FirmwareRequest:
        """A request for a target, with its own default library build (targets.toml) unless named."""
        return cls(config, library or target_named(target).library, target, **rest)  # type: ignore[arg-type]

    @property
    def header(self) -> Path:
        """The config header the library and the firmware are built with."""
        return self.config or default_config(self.library, self.target)

    @property
    def image_name(self) -> str:
        """<the build's label, @ as ->-<config stem>[-<target>]: mbedtls-device-mps2,
        mbedtls-3.6+p256m-device-p256m-qemu-cortex-m0 (the default target's without its name)."""
        suffix = "" if self.target == DEFAULT_TARGET.name else f"-{self.target}"
        label = cross.cross_source(self.library).build.label.replace("@", "-")
        return self.name or f"{label}-{self.header.stem}{suffix}"

    @property
    def folder(self) -> Path:
        return self.build_root / self.image_name

    @property
    def config_sha256(self) -> str:
        """What the build records of its config header: its expanded bytes' digest."""
        return hashlib.sha256(cross.config_text(self.header.resolve())).hexdigest()


def default_config(library: str, target: str = DEFAULT_TARGET.name) -> Path:
    """A device build's config header: spec/libraries.toml's, or the target's own `config` for
    the target's default build (spec/targets.toml: a board that needs its own sizes says so)."""
    build = cross.cross_source(library).build
    declared_target = target_named(target)
    default = cross.cross_source(declared_target.library).build
    return declared_target.config if build == default else build.config


@dataclass(frozen=True)
class FirmwareImage(ImageSizes):
    variant: str               # "counting" or "memory"
    path: Path
    text: int                  # flash: code and constants
    data: int                  # flash and RAM: initialised variables
    bss: int                   # RAM: zeroed variables (trace buffer, queues, JSON buffer)
    sha256: str
    footprint: dict = field(default_factory=dict)  # from the link map: library apart (builder/footprint.py)


@dataclass(frozen=True)
class FirmwareBuild:
    name: str
    board: str
    target: str
    library: str               # the spec: mbedtls@2.28
    library_version: str
    config: dict[str, str]     # name, sha256
    toolchain: dict[str, str]
    library_prefix: Path
    images: tuple[FirmwareImage, ...]
    seconds: dict[str, float] = field(default_factory=dict)

    def image(self, variant: str) -> FirmwareImage:
        return next(i for i in self.images if i.variant == variant)

    def to_json(self) -> dict:
        out = asdict(self)
        out["library_prefix"] = str(self.library_prefix)
        out["images"] = [{**asdict(i), "path": i.path.name} for i in self.images]
        return out


def image_sizes(size_tool: str, elf: Path) -> tuple[int, int, int]:
    """(text, data, bss) as the toolchain's `size` reports them (Berkeley format)."""
    out = query([size_tool, "-B", str(elf)]).splitlines()
    if len(out) < 2:
        raise BuildError(f"{size_tool} could not read {elf}")
    text, data, bss = (int(v) for v in out[1].split()[:3])
    return text, data, bss


def _image(size_tool: str, variant: str, elf: Path, archives: list[str]) -> FirmwareImage:
    """An image's sizes, and the library's own bytes from its link map (`archives`: the
    library's archive names)."""
    if not elf.is_file():
        raise BuildError(f"the firmware build produced no {elf.name}")
    text, data, bss = image_sizes(size_tool, elf)
    link_map = elf.with_suffix(".map")
    found = footprint.of_map(link_map, archives).to_json() if link_map.is_file() else {}
    return FirmwareImage(variant, elf, text, data, bss, file_sha256(elf), found)


def build_firmware(req: FirmwareRequest, progress: Callable[[str], None] = lambda message: None) -> FirmwareBuild:
    """The library (cached), then both images; firmware.json records what was built."""
    target = target_named(req.target)
    build = cross.cross_source(req.library).build
    if not build.builds_for(target.arch.name):
        raise NotForCore(target.name, build.label, req.config_sha256,
                         f"not built for {target.arch.name} cores (spec/libraries.toml [device] arch)")
    toolchain = cross.toolchain(target)
    config = req.header.resolve()
    seconds: dict[str, float] = {}
    t = time.monotonic()
    lib = cross.ensure(req.library, config, toolchain, jobs=req.jobs, progress=progress)
    seconds["library"] = round(time.monotonic() - t, 2)
    folder = req.folder
    log = folder / "build.log"
    folder.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    progress(f"building tlsbench-firmware-{req.image_name} for {target.name}")
    t = time.monotonic()
    _forget_other_toolchain(folder, toolchain)
    backend = cross.cross_source(lib.spec).library.backend  # agent/firmware/backends/<backend>.cmake
    run(["cmake", "-S", str(FIRMWARE_SOURCE), "-B", str(folder), *toolchain.cmake_options(),
         "-DCMAKE_BUILD_TYPE=Release", f"-DTB_TARGET={target.name}", *library_options(lib, backend),
         f"-DTB_FW_LIBRARY_CONFIG={_config_file(folder, config)}", f"-DTB_FW_NAME={req.image_name}"],
        "configuring the firmware", log=log)
    try:
        run(["cmake", "--build", str(folder), f"-j{req.jobs}"], "building the firmware", log=log)
    except BuildError as failed:
        overflow = _overflow(failed, req, target, log)
        if overflow is None:
            raise
        raise DoesNotFit(target.name, build.label, lib.config["sha256"], overflow) from None
    seconds["firmware"] = round(time.monotonic() - t, 2)
    images = tuple(_image(toolchain.size_tool, variant, folder / f"tlsbench-firmware-{req.image_name}{suffix}.elf",
                          [p.name for p in lib.archive_paths()])
                   for variant, suffix in VARIANTS)
    cross.check_attributes(toolchain, [i.path for i in images], log)  # every object linked in, for the core
    result = FirmwareBuild(req.image_name, target.board, target.name, lib.spec, lib.version,
                           {"name": config.name, "sha256": lib.config["sha256"]}, lib.toolchain, lib.prefix, images,
                           seconds)
    (folder / RECORD).write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return result


def _overflow(failed: BuildError, req: FirmwareRequest, target: targets.Target, log: Path) -> Overflow | None:
    """The overflow a failed build's linker reported, None for any other failure. Each image is
    linked alone, in VARIANTS order, so the overflow named is the same build after build (a
    parallel build stops at whichever link fails first)."""
    if not OVERFLOW.search(failed.output):
        return None
    for variant, suffix in VARIANTS:
        try:
            run(["cmake", "--build", str(req.folder), "--target", f"tlsbench-firmware-{req.image_name}{suffix}"],
                f"linking the {variant} image alone", log=log)
        except BuildError as alone:
            found = OVERFLOW.search(alone.output)
            if found is None or found[1] not in REGIONS:
                raise
            region = REGIONS[found[1]]
            return Overflow(variant, region, int(found[2]), getattr(target.memory, region).size)
    return None


def library_options(lib: CachedLibrary, backend: str) -> list[str]:
    """What the firmware's CMake is told of the library build: its backend
    (agent/firmware/backends/<backend>.cmake), its prefix, its archives in link order and where
    its source came from (HELLO)."""
    archives = ";".join(str(p) for p in lib.archive_paths())
    return [f"-DTB_FW_LIBRARY={backend}", f"-DTB_FW_LIBRARY_PREFIX={lib.prefix}",
            f"-DTB_FW_LIBRARY_ARCHIVES={archives}",
            f"-DTB_FW_LIBRARY_ORIGIN=Debian {lib.debian_suite} {lib.library} {lib.debian_version}"]


def _config_file(folder: Path, config: Path) -> Path:
    """The config header as the library was built with it (its includes expanded), under its
    own name: the firmware compiles against it and embeds it for HELLO."""
    path = folder / "config" / config.name
    path.parent.mkdir(exist_ok=True)
    text = cross.config_text(config)
    if not path.is_file() or path.read_bytes() != text:
        path.write_bytes(text)
    return path


def _forget_other_toolchain(folder: Path, toolchain: cross.Toolchain) -> None:
    """A folder configured with another toolchain file (an older layout's), or another text of
    it, is configured afresh: CMake reads the toolchain file's flags only the first time. (The
    cache types the entry FILEPATH after the first configure and UNINITIALIZED after the next,
    as given on the command line: either is this file.)"""
    cache, stamp = folder / "CMakeCache.txt", folder / "toolchain.sha256"
    seen = f"{toolchain.file}\n{file_sha256(toolchain.file)}\n"
    same_file = re.compile(rf"^CMAKE_TOOLCHAIN_FILE:\w+={re.escape(str(toolchain.file))}$", re.M)
    if cache.is_file() and (not same_file.search(cache.read_text())
                            or not stamp.is_file() or stamp.read_text() != seen):
        cache.unlink()
        shutil.rmtree(folder / "CMakeFiles", ignore_errors=True)
    stamp.write_text(seen)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_record(folder: Path) -> FirmwareBuild | None:
    """The build recorded in a folder's firmware.json, None unless every image it names is
    there with the SHA-256 it recorded (a half-finished or since-rebuilt folder)."""
    try:
        d = json.loads((folder / RECORD).read_text())
        images = tuple(FirmwareImage(i["variant"], folder / i["path"], i["text"], i["data"], i["bss"], i["sha256"],
                                     dict(i.get("footprint", {}))) for i in d["images"])
        build = FirmwareBuild(d["name"], d["board"], d["target"], d["library"], d["library_version"],
                              dict(d["config"]), dict(d["toolchain"]), Path(d["library_prefix"]), images,
                              dict(d.get("seconds", {})))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(i.path.is_file() and file_sha256(i.path) == i.sha256 for i in images):
        return None
    return build


def ensure_firmware(req: FirmwareRequest, progress: Callable[[str], None] = lambda message: None) -> FirmwareBuild:
    """The images of a request from the firmware cache (build/firmware/<name>/), built on
    demand and brought up to date with the agent's sources (an image of older sources would be
    measured as if it were the current code)."""
    found = load_record(req.folder)
    if (found is not None and found.target == req.target and req.header.resolve().is_file()
            and found.config.get("sha256") == req.config_sha256
            and all(i.footprint for i in found.images) and _up_to_date(found, req)):
        return found
    return build_firmware(req, progress)


def _up_to_date(found: FirmwareBuild, req: FirmwareRequest) -> bool:
    """CMake's own dependency check (a second when nothing changed): True when it rebuilt
    nothing, so the recorded images are still the ones on disk."""
    try:
        run(["cmake", "--build", str(req.folder), f"-j{req.jobs}"], "bringing the firmware up to date",
            log=req.folder / "build.log")
    except BuildError:  # not a build folder any more, or it no longer builds: build_firmware says why
        return False
    return all(i.path.is_file() and file_sha256(i.path) == i.sha256 for i in found.images)


def report(b: FirmwareBuild) -> str:
    lines = [f"tlsbench-firmware-{b.name}: {b.library} {b.library_version} with {b.config['name']} for "
             f"{b.target} ({b.toolchain['compiler']})"]
    for i in b.images:
        lines.append(f"  {i.variant:8} {i.path}\n"
                     f"           text {i.text:,}  data {i.data:,}  bss {i.bss:,}  "
                     f"(flash {i.flash:,}, static RAM {i.static_ram:,} bytes)\n"
                     f"           sha256 {i.sha256}")
        parts = i.footprint.get("parts", {})
        if parts:
            lines.append("           " + ", ".join(f"{part} flash {b['flash']:,} RAM {b['ram']:,}"
                                                   for part, b in parts.items()) + " (link map)")
    lines.append(f"  built in {b.seconds.get('library', 0):.1f} s (library, cached after the first build) + "
                 f"{b.seconds.get('firmware', 0):.1f} s (firmware)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tlsbench.builder.firmware",
                                 description="Build the agent's firmware images (docs/porting.md).")
    ap.add_argument("--target", action="append", help=f"device target ({', '.join(TARGETS)}; default: "
                    f"{DEFAULT_TARGET.name}), repeatable; `all`: every one")
    ap.add_argument("--library", help=f"device library build ({', '.join(cross.CROSS_SOURCES)}; default: the "
                    "target's), or `all`: every one the target's core builds (each cached once built)")
    ap.add_argument("--config", type=Path, default=None,
                    help="the library's config header (default: the library build's, spec/libraries.toml)")
    ap.add_argument("--name", default="", help="image name (default: <library>-<config stem>[-<target>])")
    ap.add_argument("--out", type=Path, default=BUILD_ROOT, help="build folder (one subfolder per image name)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    every = args.library == "all"
    if every and (args.config or args.name):
        print("error: --library all builds each library build with its own config and name: drop --config "
              "and --name", file=sys.stderr)
        return 1
    chosen = args.target or [DEFAULT_TARGET.name]
    try:
        requests = [FirmwareRequest.of_target(target, args.config, library, name=args.name, build_root=args.out,
                                              jobs=args.jobs)
                    for target in (list(TARGETS) if "all" in chosen else chosen)
                    for library in (builds_for(target) if every else [args.library])]
        unfit = 0
        for req in requests:  # each afresh (an incremental build: seconds when nothing changed; the library is cached)
            try:
                print(report(build_firmware(req, progress=lambda message: print(message, file=sys.stderr))))
            except NoFirmware as exc:  # a result about the lane: the other builds go on
                print(str(exc))
                unfit += 1
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 1 if unfit and not every else 0  # `all` asked for every build, those that fit too


def builds_for(target: str) -> list[str]:
    """Every device library build the target's core builds (spec/libraries.toml [device] arch)."""
    arch = target_named(target).arch.name
    return [b.name for b in declared.load().device if b.builds_for(arch)]


if __name__ == "__main__":
    sys.exit(main())
