# SPDX-License-Identifier: Apache-2.0
"""How a plan names a library: `name@version` (docs/plan-format.md, docs/libraries.md).

    openssl@3.5          the library cache's OpenSSL 3.5 build: agent tlsbench-agent-openssl-3.5
    mbedtls@3.6-tiny13   a custom config build of it (tlsbench build mbedtls@3.6 --config tiny13.h)
    openssl              Debian 12's OpenSSL (3.0): agent tlsbench-agent-openssl; `openssl@3.0` alike
    mbedtls-tiny         any other installed agent, by its name (a custom mbed TLS 2.28 build)

The agent binary's suffix (`openssl-3.5`, how plans named these before) is accepted and means
the same: a plan's names are made canonical when it is validated, and everything that
identifies a configuration across runs (the plan hash, configuration keys) is made of the
agent names, so a plan keeps resuming its store whichever spelling it uses."""
from __future__ import annotations

import re
from dataclasses import dataclass

from tlsbench.core import libraries

# The backends this repository builds against Debian 12's packages (`make agent`) and the
# version series those packages are (spec/libraries.toml): the bare name means that build.
# The first is the default.
DEBIAN12_SERIES = libraries.load().debian12_series
LIBRARIES = tuple(DEBIAN12_SERIES)
# What a plan may write: `name@version[-build]`, or an agent's name (`tlsbench-agent-<name>`).
LIBRARY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*(@[0-9]+\.[0-9]+(-[A-Za-z0-9_.]+)?)?$"
# library@series, then an optional -build (a custom config build's name)
VERSIONED = re.compile(r"^(?P<library>[A-Za-z0-9]+)@(?P<series>[0-9]+\.[0-9]+)(?P<build>-[A-Za-z0-9_.]+)?$")
# the same as an agent's suffix: openssl-3.5, mbedtls-3.6-tiny13 (only for the libraries above)
AGENT_SUFFIX = re.compile(rf"^(?P<library>{'|'.join(LIBRARIES)})-(?P<series>[0-9]+\.[0-9]+)(?P<build>-[A-Za-z0-9_.]+)?$")


@dataclass(frozen=True)
class LibraryName:
    """A plan's library name, taken apart."""

    library: str        # mbedtls, openssl, wolfssl, or an agent name that says no version
    series: str | None  # "3.6"; None: no version named
    build: str = ""     # "-tiny13": a custom config build of that version

    @property
    def canonical(self) -> str:
        if self.series is None:
            return self.library
        if not self.build and DEBIAN12_SERIES.get(self.library) == self.series:
            return self.library  # the bare name is Debian 12's build
        return f"{self.library}@{self.series}{self.build}"

    @property
    def agent(self) -> str:
        """The agent's name: tlsbench-agent-<this>."""
        return self.canonical.replace("@", "-", 1)


def parse(name: str) -> LibraryName:
    for pattern in (VERSIONED, AGENT_SUFFIX):
        found = pattern.match(name)
        if found:
            return LibraryName(found["library"].lower(), found["series"], found["build"] or "")
    return LibraryName(name, None)


def canonical(name: str) -> str:
    """The spelling plans, reports and exports show: openssl-3.5 -> openssl@3.5, mbedtls@2.28
    -> mbedtls; any other name as it is."""
    return parse(name).canonical


def agent_name(name: str) -> str:
    """The agent binary's suffix: openssl@3.5 -> openssl-3.5, mbedtls@2.28 -> mbedtls. What the
    plan hash and the configuration keys are made of (their form from before `@`)."""
    return parse(name).agent


def is_versioned(name: str) -> bool:
    """Whether the name says a version other than Debian 12's (openssl@3.5, openssl-3.5), not
    just an agent."""
    return parse(canonical(name)).series is not None
