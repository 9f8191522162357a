# SPDX-License-Identifier: Apache-2.0
"""The agent build's view of the library cache (docs/libraries.md): what `make agent` runs
before configuring agent/.

    python -m tlsbench.builder.prefixes [all | none | SPEC...]

builds every named library version that is not cached yet (all known ones by default; the
first time takes minutes, later a lookup) and prints the CMake options that point the agent
build at the cached builds, one per known version:

    -DTB_OPENSSL35_PREFIX=<cache>/libs/openssl-3.5.7-... -DTB_WOLFSSL57_PREFIX= ...

A version that cannot be fetched or built gets its one error on stderr (naming the version
and the command to retry) and an empty prefix: its agent is not built, every other agent is,
and the exit status stays 0. `none` leaves every prefix empty (the Debian 12 agents only)."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder import libraries
from tlsbench.builder.shell import BuildError
from tlsbench.core import libraries as declared

# The CMake cache variable of each known version (spec/libraries.toml `cmake`; read by
# agent/src/backends/cached_libraries.cmake).
CMAKE_VARIABLES = {lib.spec: lib.cmake_prefix for lib in declared.load().all if lib.cmake}


@dataclass(frozen=True)
class Prefixes:
    """Where each known version's cached build is (None: left out), and why some are missing."""
    found: dict[str, Path | None]
    errors: tuple[str, ...]

    def cmake_options(self) -> list[str]:
        return [f"-D{CMAKE_VARIABLES[spec]}={path or ''}" for spec, path in self.found.items()]


def wanted(args: Sequence[str]) -> list[str]:
    """The specs named on the command line: all known ones by default, none for `none`."""
    if not args or list(args) == ["all"]:
        return list(CMAKE_VARIABLES)
    if list(args) == ["none"]:
        return []
    return [libraries.recipe(arg).spec for arg in args]


def ensure_prefixes(specs: Sequence[str], cache: Path | None = None,
                    progress: Callable[[str], None] = lambda message: None) -> Prefixes:
    """Each spec's cached build, built first when there is none; a failure is recorded, not raised."""
    found: dict[str, Path | None] = dict.fromkeys(CMAKE_VARIABLES)
    errors = []
    for spec in specs:
        try:
            found[spec] = libraries.ensure(spec, cache=cache, progress=progress).prefix
        except BuildError as exc:
            errors.append(str(exc))
    return Prefixes(found, tuple(errors))


def main(argv: Sequence[str]) -> int:
    try:
        specs = wanted(argv)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = ensure_prefixes(specs, progress=lambda message: print(f"  {message}", file=sys.stderr))
    for error in result.errors:
        print(f"error: {error}\n(the other agents are built without it)", file=sys.stderr)
    print(" ".join(result.cmake_options()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
