# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/libraries.toml: every TLS library build tlsbench knows, declared once
(which Debian package it comes from, its agent backend), and every build of one for a device
(the library × a config header). Plans, the library cache, custom builds and the firmware read
the versions from here."""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tlsbench.core.spec import SPEC_DIR

LIBRARIES_FILE = "libraries.toml"
DEBIAN12, DEBIAN13 = "debian12", "debian13"  # Debian 12's installed package; Debian 13's source
SUITES = {DEBIAN12: "bookworm", DEBIAN13: "trixie"}  # a source's Debian suite
SOURCES = tuple(SUITES)
SPEC_NAME = re.compile(r"^(?P<name>[a-z0-9]+)@(?P<series>[0-9]+\.[0-9]+)$")
DEVICE_NAME = re.compile(r"^(?P<library>[a-z0-9]+@[0-9]+\.[0-9]+)(?P<variant>\+[a-z0-9-]+)?$")


@dataclass(frozen=True)
class Library:
    """One library build ([library."<name>@<series>"])."""

    name: str  # mbedtls
    series: str  # 2.28: any 2.28.x the source has
    source: str  # DEBIAN12 or DEBIAN13
    package: str  # Debian 12: the installed -dev package; Debian 13: the source package
    backend: str  # agent/src/backends/<backend>.c
    custom: bool = False  # custom config builds (tlsbench build <name>)
    cmake: str = ""  # the agent build's variable stem of a cached build: <cmake>_PREFIX

    @property
    def spec(self) -> str:
        """How the builders name it: mbedtls@2.28."""
        return f"{self.name}@{self.series}"

    @property
    def bare(self) -> bool:
        """Whether a plan's bare name (`mbedtls`) means this build: Debian 12's."""
        return self.source == DEBIAN12

    @property
    def cmake_prefix(self) -> str:
        """The CMake cache variable that points the agent build at a cached build."""
        return f"{self.cmake}_PREFIX" if self.cmake else ""


@dataclass(frozen=True)
class DeviceBuild:
    """A library build for a device ([device."<library>@<series>[+<variant>]"]): the library
    compiled with a config header for a target's core (one cache entry per core)."""

    name: str  # mbedtls@3.6+p256m: what a plan's [device] libraries names
    library: Library  # its source and backend
    config: Path  # mbed TLS's MBEDTLS_CONFIG_FILE, wolfSSL's user_settings.h
    arch: tuple[str, ...] = ()  # the architectures it builds for; (): every one
    meaning: str = ""

    @property
    def variant(self) -> str:
        """What sets it apart from the library's plain build: "+p256m", or ""."""
        return self.name[len(self.library.spec):]

    @property
    def label(self) -> str:
        """How configurations, reports and exports name it: a plan's canonical spelling (the bare
        name for Debian 12's series, as on the host: mbedtls), the variant after it."""
        return (self.library.name if self.library.bare else self.library.spec) + self.variant

    def builds_for(self, arch: str) -> bool:
        return not self.arch or arch in self.arch


@dataclass(frozen=True)
class Libraries:
    """Every declared build, in the file's order."""

    all: tuple[Library, ...]
    device: tuple[DeviceBuild, ...] = ()

    def get(self, spec: str) -> Library | None:
        return next((lib for lib in self.all if lib.spec == spec.strip().lower()), None)

    def device_build(self, name: str) -> DeviceBuild | None:
        """A device build by its name or its label (mbedtls@2.28 or mbedtls, mbedtls@3.6+p256m)."""
        wanted = name.strip().lower()
        return next((b for b in self.device if wanted in (b.name, b.label)), None)

    def from_source(self, source: str) -> tuple[Library, ...]:
        return tuple(lib for lib in self.all if lib.source == source)

    @property
    def debian12_series(self) -> dict[str, str]:
        """name -> series of the builds a bare name means, the default library first."""
        return {lib.name: lib.series for lib in self.all if lib.bare}

    def bare_build(self, name: str) -> Library:
        """The build a bare name means (mbedtls -> mbedtls@2.28)."""
        return next(lib for lib in self.all if lib.bare and lib.name == name)


def _library(spec: str, raw: Mapping[str, Any]) -> Library:
    found = SPEC_NAME.match(spec)
    if not found:
        raise ValueError(f"{LIBRARIES_FILE}: [library.{spec!r}]: name it <library>@<major>.<minor>")
    if raw.get("source") not in SOURCES:
        raise ValueError(f"{LIBRARIES_FILE}: [library.{spec!r}] source: one of {', '.join(SOURCES)}")
    return Library(found["name"], found["series"], **raw)


def _device(name: str, raw: Mapping[str, Any], libraries: Mapping[str, Library], repo: Path) -> DeviceBuild:
    found = DEVICE_NAME.match(name)
    if not found:
        raise ValueError(f"{LIBRARIES_FILE}: [device.{name!r}]: name it <library>@<major>.<minor>[+<variant>]")
    if found["library"] not in libraries:
        raise ValueError(f"{LIBRARIES_FILE}: [device.{name!r}]: {found['library']} is not a declared [library]")
    return DeviceBuild(name, libraries[found["library"]], repo / raw["config"], tuple(raw.get("arch", ())),
                       raw.get("meaning", ""))


def parse(text: str, repo: Path = SPEC_DIR.resolve().parent) -> Libraries:
    """The builds of a libraries.toml; `repo`: where its config paths start."""
    raw = tomllib.loads(text)
    libraries = tuple(_library(spec, entry) for spec, entry in raw["library"].items())
    names = [lib.name for lib in libraries if lib.bare]
    if len(set(names)) != len(names):
        raise ValueError(f"{LIBRARIES_FILE}: a bare name must mean one build: {', '.join(names)}")
    by_spec = {lib.spec: lib for lib in libraries}
    return Libraries(libraries, tuple(_device(name, entry, by_spec, repo) for name, entry in raw.get("device", {}).items()))


@functools.cache
def load(directory: Path = SPEC_DIR) -> Libraries:
    """The declared builds, read once per process (config paths from the repository root)."""
    return parse((directory / LIBRARIES_FILE).read_text(), directory.resolve().parent)
