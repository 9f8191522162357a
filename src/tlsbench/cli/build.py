# SPDX-License-Identifier: Apache-2.0
"""`tlsbench build mbedtls` and `tlsbench build mbedtls@3.6`: an agent against your own mbed
TLS configuration (docs/custom-builds.md); `tlsbench build firmware`: the agent as firmware for a device
(docs/porting.md); `tlsbench libs`: the current library versions built from Debian 13
sources (docs/libraries.md).

    tlsbench libs build [SPEC...]    build what is not cached yet (all known versions by default)
    tlsbench libs list               every known version, cached or not, with its features
    tlsbench libs path SPEC          the install prefix of a cached build (for CMake)"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console

from tlsbench.builder import custom, custom_version, firmware, libraries
from tlsbench.builder.shell import BuildError

console = Console()
err_console = Console(stderr=True)


def _fail(message: str) -> None:
    err_console.print(f"[red]error:[/] {message}", highlight=False, soft_wrap=True)


@click.group(name="libs")
def libs() -> None:
    """Current TLS library versions (mbedtls@3.6, openssl@3.5, wolfssl@5.7) built from Debian 13 sources."""


@libs.command(name="build")
@click.argument("specs", nargs=-1)
@click.option("--rebuild", is_flag=True, help="Build again even when a cached build exists.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel compile jobs (default: all cores).")
def build_command(specs: tuple[str, ...], rebuild: bool, jobs: int | None) -> None:
    """Builds each SPEC (default: every known version) once into the cache; a failure does not
    stop the others."""
    failed = 0
    for spec in specs or tuple(libraries.RECIPES):
        started = time.monotonic()
        try:
            entry = libraries.ensure(spec, jobs=jobs, rebuild=rebuild,
                                     progress=lambda message: console.print(f"  {message}", highlight=False))
        except BuildError as exc:
            _fail(str(exc))
            failed += 1
            continue
        console.print(f"{entry.spec} {entry.version} (Debian {entry.debian_version}) ready in "
                      f"{time.monotonic() - started:.1f} s: {entry.prefix}", highlight=False, soft_wrap=True)
    if failed:
        sys.exit(1)


@libs.command(name="list")
def list_command() -> None:
    """Every known library version, with its cached build when there is one."""
    for spec in libraries.RECIPES:
        entry = libraries.cached(spec)
        if entry:
            console.print(libraries.describe(entry), highlight=False, soft_wrap=True)
        else:
            console.print(f"{spec:12} not built (tlsbench libs build {spec})", highlight=False, soft_wrap=True)


@libs.command(name="path")
@click.argument("spec")
def path_command(spec: str) -> None:
    """Prints the install prefix of SPEC's cached build (include/, lib/, bin/)."""
    try:
        entry = libraries.cached(spec)
    except BuildError as exc:
        _fail(str(exc))
        sys.exit(1)
    if entry is None:
        _fail(f"{spec} is not built yet: tlsbench libs build {spec}")
        sys.exit(1)
    click.echo(entry.prefix)


@click.group(name="build")
def build_group() -> None:
    """Build agents against your own TLS library configuration."""


@build_group.command(name="mbedtls")
@click.option("--config", "config", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Your mbed TLS 2.28 config header (a complete config, used as MBEDTLS_CONFIG_FILE).")
@click.option("--source", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An mbed TLS 2.28 source tree (default: Debian's source of the installed libmbedtls-dev, "
                   "fetched once; needs root).")
@click.option("--name", help="Build name: agent tlsbench-agent-mbedtls-<name> (default: the config file's stem).")
@click.option("--install-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the agents go (default: next to the Python interpreter, with the other agents).")
def build_mbedtls(config: Path, source: Path | None, name: str | None, install_dir: Path | None) -> None:
    """Static mbed TLS with your config, and an agent linked against it."""
    request = custom.BuildRequest(config=config, name=name or custom.default_name(config),
                                  source=source, install_dir=install_dir or custom.default_install_dir())
    result = custom.build(request)  # a BuildError is one line (the Group's boundary)
    times = ", ".join(f"{stage} {s:.1f} s" for stage, s in result.seconds.items())
    console.print(f"built {result.library} ({times})\n" + "\n".join(f"  {p}" for p in result.agents)
                  + f"\nlist its suites: tlsbench suites --library {result.library}", highlight=False, markup=False)


def _custom_version_command(spec: str) -> click.Command:
    """`tlsbench build mbedtls@3.6 --config FILE`: one command per version with custom builds."""

    @click.option("--config", "config", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
                  help=f"Your complete {spec} config header (docs/custom-builds.md).")
    @click.option("--name", help=f"Build name: a plan names it {spec}-<name> (default: the config file's stem).")
    @click.option("--install-dir", type=click.Path(file_okay=False, path_type=Path),
                  help="Where the agents go (default: next to the Python interpreter, with the other agents).")
    @click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel compile jobs (default: all cores).")
    def command(config: Path, name: str | None, install_dir: Path | None, jobs: int | None) -> None:
        result = custom_version.build_custom(  # a BuildError is one line (the Group's boundary)
            spec, config, name, install_dir, build_root=custom_version.BUILD_ROOT, jobs=jobs,
            progress=lambda message: console.print(f"  {message}", style="dim", highlight=False))
        times = ", ".join(f"{stage} {s:.1f} s" for stage, s in result.seconds.items())
        console.print(f"built {result.library} ({times})\n" + "\n".join(f"  {p}" for p in result.agents)
                      + f"\nlist its suites: tlsbench suites --library {result.library}", highlight=False, markup=False)

    command.__doc__ = (f"Static {spec} (the library cache's Debian 13 source) with your config, and an agent "
                       "linked against it.")
    return click.command(name=spec)(command)


for _spec in custom_version.CUSTOM_RECIPES:
    build_group.add_command(_custom_version_command(_spec))


@build_group.command(name="firmware")
@click.option("--target", type=click.Choice(list(firmware.TARGETS)), default=firmware.DEFAULT_TARGET.name,
              show_default=True, help="The device target (spec/targets.toml): its core, board and memory map.")
@click.option("--library", type=click.Choice(sorted(firmware.cross.CROSS_SOURCES)),
              help="The device library build to cross-compile (spec/libraries.toml [device]; default: the target's).")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The library's config header (version-specific: configs/<library>/; default: the library "
                   "build's, spec/libraries.toml [device]).")
@click.option("--name", default="", help="Image name (default: <library>-<config stem>[-<target>]).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel compile jobs (default: all cores).")
def build_firmware(target: str, library: str | None, config: Path | None, name: str, jobs: int | None) -> None:
    """Both firmware images (counting, memory) for a target and library build: the library cross-built once into
    the cache, then the images into build/firmware/<name>/; prints their sizes and SHA-256."""
    try:
        request = firmware.FirmwareRequest.of_target(target, config, library, name=name,
                                                     jobs=jobs or firmware.FirmwareRequest().jobs)
        result = firmware.build_firmware(request, progress=lambda message: console.print(f"  {message}", style="dim",
                                                                                       highlight=False))
    except BuildError as exc:
        _fail(str(exc))
        sys.exit(1)
    console.print(firmware.report(result), highlight=False, markup=False, soft_wrap=True)
