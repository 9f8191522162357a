# SPDX-License-Identifier: Apache-2.0
"""Typed access to spec/libraries.toml: every TLS library build tlsbench knows, declared once
(which Debian package it comes from, its agent backend, whether it runs on a device). Plans,
the library cache, custom builds and the firmware read the versions from here."""
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


@dataclass(frozen=True)
class Library:
    """One library build ([library."<name>@<series>"])."""

    name: str  # mbedtls
    series: str  # 2.28: any 2.28.x the source has
    source: str  # DEBIAN12 or DEBIAN13
    package: str  # Debian 12: the installed -dev package; Debian 13: the source package
    backend: str  # agent/src/backends/<backend>.c
    device: bool = False  # the firmware can be built with it
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
class Libraries:
    """Every declared build, in the file's order."""

    all: tuple[Library, ...]

    def get(self, spec: str) -> Library | None:
        return next((lib for lib in self.all if lib.spec == spec.strip().lower()), None)

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


def parse(text: str) -> Libraries:
    libraries = tuple(_library(spec, raw) for spec, raw in tomllib.loads(text)["library"].items())
    names = [lib.name for lib in libraries if lib.bare]
    if len(set(names)) != len(names):
        raise ValueError(f"{LIBRARIES_FILE}: a bare name must mean one build: {', '.join(names)}")
    return Libraries(libraries)


@functools.cache
def load(directory: Path = SPEC_DIR) -> Libraries:
    """The declared builds, read once per process."""
    return parse((directory / LIBRARIES_FILE).read_text())
