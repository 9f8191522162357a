# SPDX-License-Identifier: Apache-2.0
"""Custom config builds of a library version the cache knows (docs/custom-builds.md):
`tlsbench build mbedtls@3.6 --config my_config.h` (the command line is wired to
build_custom; for testing: python -m tlsbench.builder.custom_version mbedtls@3.6 --config FILE).

    Debian 13 source of the version (the library cache's, fetched once)
      -> static library compiled with the user's config header   build/<lib>-<series>-<name>/prefix
      -> agent/ configured against it                            build/<lib>-<series>-<name>/agent
      -> tlsbench-agent-<lib>-<series>-<name> (+ -notrace)       next to the other agents

The agent embeds the config header (name, SHA-256, text) and sends it in HELLO's "build"
object, as the 2.28 custom builds do (tlsbench build mbedtls, custom_build.py). The bare
library name keeps meaning the Debian 12 package and its builder."""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder import libraries
from tlsbench.builder.debian import upstream_version
from tlsbench.builder.shell import BuildError, require_config, run
from tlsbench.core import libraries as declared

REPO = Path(__file__).resolve().parents[3]
AGENT_SOURCE = REPO / "agent"
BUILD_ROOT = REPO / "build"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.]*")  # no '-': agent names split on it


@dataclass(frozen=True)
class CustomRecipe:
    """How one library version is built with a user's config and its agent configured."""
    spec: str                                         # "mbedtls@3.6"
    library_steps: Callable[[Path, Path, Path, Path, int, Path], None]  # source, config, work, prefix, jobs, log
    cmake: str                                        # the agent build's variable stem (spec/libraries.toml)

    def agent_options(self, prefix: Path, config: Path, name: str) -> list[str]:
        """The agent build pointed at the custom library, named after the build, with its config."""
        return [f"-D{self.cmake}_PREFIX={prefix}", f"-D{self.cmake}_BUILD_NAME={name}",
                f"-D{self.cmake}_CONFIG_FILE={config}"]

    def plan_name(self, name: str) -> str:
        """How a plan names the build: mbedtls@3.6-<name> (docs/plan-format.md)."""
        return f"{self.spec}-{name}"

    def agent_name(self, name: str) -> str:
        """The agent's name: mbedtls-3.6-<name> (tlsbench-agent-<that>; a plan writes mbedtls@3.6-<name>)."""
        lib, _, series = self.spec.partition("@")
        return f"{lib}-{series}-{name}"


def _mbedtls3_library(source: Path, config: Path, work: Path, prefix: Path, jobs: int, log: Path) -> None:
    """The cache's CMake recipe with the user's header as MBEDTLS_CONFIG_FILE; the header then
    replaces the installed mbedtls_config.h, so the agent compiles with the same config."""
    build = work / "library"
    run(["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_INSTALL_LIBDIR=lib", f"-DMBEDTLS_CONFIG_FILE={config}",
         "-DENABLE_PROGRAMS=OFF", "-DENABLE_TESTING=OFF", "-DGEN_FILES=OFF", "-DMBEDTLS_FATAL_WARNINGS=OFF",
         "-DUSE_STATIC_MBEDTLS_LIBRARY=ON", "-DUSE_SHARED_MBEDTLS_LIBRARY=OFF"],
        "configuring mbed TLS 3.6 with your config", log=log)
    run(["cmake", "--build", str(build), f"-j{jobs}"],
        f"compiling mbed TLS 3.6 with {config.name} (a complete 3.6 config? check_config.h names what is missing)",
        log=log)
    run(["cmake", "--install", str(build)], "installing mbed TLS 3.6 into the build folder", log=log)
    shutil.copyfile(config, prefix / "include" / "mbedtls" / "mbedtls_config.h")


# The library's compile steps with a user's config, by backend; which versions have custom
# builds: spec/libraries.toml (`custom` on a `debian13` build).
LIBRARY_STEPS = {"mbedtls3": _mbedtls3_library}
CUSTOM_RECIPES: dict[str, CustomRecipe] = {
    lib.spec: CustomRecipe(lib.spec, LIBRARY_STEPS[lib.backend], lib.cmake)
    for lib in declared.load().from_source(declared.DEBIAN13) if lib.custom}


@dataclass(frozen=True)
class CustomBuild:
    """What build_custom made."""
    library: str                  # the name plans and `tlsbench suites --library` use: mbedtls@3.6-<name>
    agents: tuple[Path, ...]      # the traced agent, then -notrace
    source: Path                  # the Debian source tree it was compiled from
    prefix: Path                  # installed headers and static libraries (and build.json)
    seconds: dict[str, float]     # wall time per stage: source, library, agent


def custom_recipe(spec: str) -> CustomRecipe:
    found = CUSTOM_RECIPES.get(spec.strip().lower())
    if found is None:
        hint = " (the Debian 12 mbed TLS: tlsbench build mbedtls --config)" if "@" not in spec else ""
        raise BuildError(f"no custom builds of {spec!r}{hint}; versions with custom builds: {', '.join(CUSTOM_RECIPES)}")
    return found


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise BuildError(f"build name {name!r}: use letters, digits, '_' and '.' (it ends the agent's name); "
                         f"pass --name")
    return name


def _stamp(rec: libraries.Recipe, version: str, config: Path, prefix: Path) -> None:
    """build.json, as a cache entry has it: the agent build reads the archives and version
    from it, and the options say which config the library was compiled with."""
    digest = hashlib.sha256(config.read_bytes()).hexdigest()
    libraries.CachedLibrary(prefix, rec.spec, rec.name, upstream_version(version), version,
                            (f"MBEDTLS_CONFIG_FILE={config.name} sha256:{digest}",), rec.archives,
                            rec.system_libs).stamp()


def _build_agent(rec: CustomRecipe, prefix: Path, config: Path, name: str, folder: Path, install_dir: Path,
                 jobs: int, log: Path) -> tuple[Path, ...]:
    """agent/ configured against the custom library (no Debian 12 agent is built)."""
    work = folder / "agent"
    agent = f"tlsbench-agent-{rec.agent_name(name)}"
    run(["cmake", "-S", str(AGENT_SOURCE), "-B", str(work), "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
         *rec.agent_options(prefix, config, name)], "configuring the agent against your build", log=log)
    names = [agent, f"{agent}-notrace"]
    run(["cmake", "--build", str(work), f"-j{jobs}", "--target", *names], "building the agent against your build",
        log=log)
    install_dir.mkdir(parents=True, exist_ok=True)
    installed = []
    for program in names:
        shutil.copy2(work / program, install_dir / program)
        installed.append(install_dir / program)
    return tuple(installed)


def build_custom(spec: str, config: Path, name: str | None = None, install_dir: Path | None = None,
                 build_root: Path = BUILD_ROOT, cache: Path | None = None, jobs: int | None = None,
                 progress: Callable[[str], None] = lambda message: None) -> CustomBuild:
    """Builds `spec` (mbedtls@3.6) with the config header and its agent pair, installed into
    install_dir (default: next to the Python interpreter, where make installs the agents).
    name defaults to the header's stem. Any failure is one BuildError saying what to do."""
    rec = custom_recipe(spec)
    require_config(config)
    name = check_name(name or config.stem)
    try:
        return _build(rec, config, name, install_dir, build_root, cache, jobs, progress)
    except BuildError as exc:
        headline, _, details = str(exc).partition("\n")
        raise BuildError(f"{rec.spec} with {config.name} did not build: {headline.rstrip(':')}; fix it and retry with "
                         f"`{retry_command(rec.spec, config, name)}`" + (f"\n{details}" if details else "")) from None


def retry_command(spec: str, config: Path, name: str) -> str:
    """The command line that builds this again (the name only when it is not the default)."""
    return f"tlsbench build {spec} --config {config}" + (f" --name {name}" if name != config.stem else "")


def _build(rec: CustomRecipe, config: Path, name: str, install_dir: Path | None, build_root: Path,
           cache: Path | None, jobs: int | None, progress: Callable[[str], None]) -> CustomBuild:
    lib_recipe = libraries.recipe(rec.spec)
    install_dir = install_dir or Path(sys.executable).parent
    jobs = jobs or os.cpu_count() or 2
    folder = build_root / rec.agent_name(name)
    prefix, log = folder / "prefix", folder / "build.log"
    shutil.rmtree(prefix, ignore_errors=True)  # a stale header or archive must never survive
    folder.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    config = config.resolve()
    seconds: dict[str, float] = {}
    t = time.monotonic()
    progress(f"the Debian source of {rec.spec}")
    version, source = libraries.source_tree(rec.spec, cache, log, progress)
    seconds["source"] = time.monotonic() - t
    t = time.monotonic()
    progress(f"compiling {rec.spec} ({version}) with {config.name}")
    rec.library_steps(source, config, folder, prefix, jobs, log)
    _stamp(lib_recipe, version, config, prefix)
    seconds["library"] = time.monotonic() - t
    t = time.monotonic()
    progress(f"building tlsbench-agent-{rec.agent_name(name)}")
    agents = _build_agent(rec, prefix, config, name, folder, install_dir, jobs, log)
    seconds["agent"] = time.monotonic() - t
    return CustomBuild(rec.plan_name(name), agents, source, prefix, seconds)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tlsbench.builder.custom_version",
                                     description="Build a library version the cache knows with your config header.")
    parser.add_argument("spec", help=f"library@version: {', '.join(CUSTOM_RECIPES)}")
    parser.add_argument("--config", required=True, type=Path, help="a complete config header for that version")
    parser.add_argument("--name", help="the build's name (default: the header's stem)")
    parser.add_argument("--install-dir", type=Path, help="where the two agents go (default: next to this Python)")
    args = parser.parse_args(argv)
    try:
        result = build_custom(args.spec, args.config, args.name, args.install_dir,
                              progress=lambda message: print(f"  {message}", file=sys.stderr))
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    print(f"{result.library}: {' '.join(str(a) for a in result.agents)} ({stages})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
