# SPDX-License-Identifier: Apache-2.0
"""TLS libraries cross-compiled for a device target, in the library cache beside the `tlsbench
libs` builds, with the same layout and key (tlsbench.builder.libraries; docs/porting.md,
docs/libraries.md "The cache"):

    mbedtls@2.28 -> Debian 12's source of the installed libmbedtls-dev, fetched once
                                                     <cache>/src/debian12/<version>/
                 -> static libraries for the target  <cache>/libs/<toolchain>/mbedtls-2.28.3-<hash>/
                                                        include/ lib/ build.json

Which builds run on a device is spec/libraries.toml's (`device`); the target's core and its
toolchain are spec/targets.toml's. An entry is keyed by the library's Debian version, the
config header's bytes (its includes expanded) and the toolchain (its CMake file's bytes, the
core and the compiler's version line): another config or compiler never reuses a build. As for
every entry, build.json is written last and an entry without it is invisible. Nothing built for
the target can run here, so instead of a probe program the archives' Arm attributes are
checked: a library built for the wrong CPU or float ABI (a toolchain file whose flags were
overridden) is refused at build time, not at the firmware's link.

mbed TLS's CMake takes the config through the CFLAGS environment variable: -DCMAKE_C_FLAGS
would replace the toolchain file's CPU flags (the pitfall of a cross build). The recipe is
the same for every mbed TLS version; another device build needs only its source in FETCHERS."""
from __future__ import annotations

import functools
import hashlib
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder import libraries
from tlsbench.builder.debian import compare_versions, upstream_version
from tlsbench.builder.libraries import ARCHIVES, CachedLibrary, Layout, default_cache, entry_name, locked
from tlsbench.builder.shell import BuildError, query, require_config, run
from tlsbench.core import libraries as declared
from tlsbench.core import targets
from tlsbench.core.targets import Target

REPO = Path(__file__).resolve().parents[3]
REVISION = 1            # bump when the steps change in a way the key does not show
CONFIG_HEADER = "tlsbench_mbedtls_config.h"  # a fixed name: a user's "ssl.h" must not shadow mbedtls/ssl.h
LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*\n?', re.MULTILINE)


@dataclass(frozen=True)
class Toolchain:
    """A target's cross compiler: cmake/<triplet>.cmake set up for its core (spec/targets.toml),
    and what every object it makes must say."""
    name: str                 # the core: the cache folder libs/<name>/
    triplet: str              # arm-none-eabi, riscv64-unknown-elf
    cpu: str
    fpu: str
    float_abi: str
    attributes: tuple[str, ...]  # `Tag: value` every object must carry
    packages: str = ""        # the Debian packages that install it

    @property
    def file(self) -> Path:
        return REPO / "cmake" / f"{self.triplet}.cmake"

    @property
    def compiler(self) -> str:
        return f"{self.triplet}-gcc"

    @property
    def size_tool(self) -> str:
        return f"{self.triplet}-size"

    @property
    def readelf(self) -> str:
        return f"{self.triplet}-readelf"

    def cmake_options(self) -> list[str]:
        """What configures a CMake build (the library's, the firmware's) for the core."""
        return [f"-DCMAKE_TOOLCHAIN_FILE={self.file}", f"-DTB_CPU={self.cpu}", f"-DTB_FPU={self.fpu}",
                f"-DTB_FLOAT_ABI={self.float_abi}"]

    def identity(self) -> dict[str, str]:
        """What the cache key holds of the toolchain: its file's bytes, the core, the compiler's version."""
        version = query([self.compiler, "--version"]).split("\n", 1)[0]
        if not version:
            raise BuildError(f"{self.compiler} is not installed: scripts/install-deps.sh installs it "
                             f"({', '.join(self.packages.split())})")
        return {"name": self.name, "file": self.file.name,
                "file_sha256": hashlib.sha256(self.file.read_bytes()).hexdigest(),
                "cpu": self.cpu, "fpu": self.fpu, "float_abi": self.float_abi, "compiler": version}


def toolchain(target: Target) -> Toolchain:
    return Toolchain(target.cpu, target.arch.toolchain, target.cpu, target.fpu, target.float_abi, target.attributes,
                     target.arch.packages)


DEFAULT_TOOLCHAIN = toolchain(targets.load().default)


# ---------------------------------------------------------------- sources

@dataclass(frozen=True)
class CrossSource:
    """A device build's source (spec/libraries.toml [device]): its Debian source package and
    version without network (the cache key), and the unpacked tree (fetched once)."""
    build: declared.DeviceBuild
    debian_source: Callable[[Path], tuple[str, str]]   # (cache) -> (source package, Debian version)
    fetch: Callable[[Path, Path], Path]                 # (cache, log) -> source tree

    @property
    def spec(self) -> str:
        return self.build.name

    @property
    def library(self) -> declared.Library:
        return self.build.library

    def layout(self, cache: Path, tc: Toolchain) -> Layout:
        return Layout(cache, self.library.name, self.library.series, tc.name)


def _debian12_mbedtls_source(cache: Path) -> tuple[str, str]:
    from tlsbench.builder.custom import installed_version
    return installed_version()


def _debian12_mbedtls_fetch(cache: Path, log: Path) -> Path:
    """The source of the installed libmbedtls-dev (the host agent's library), as
    `tlsbench build mbedtls` fetches it, kept in the cache."""
    from tlsbench.builder.custom import check_source, fetch_debian_source
    tree = fetch_debian_source(cache / "src" / "debian12", log=log)
    check_source(tree)
    return tree


def _debian13(lib: declared.Library) -> tuple[Callable[[Path], tuple[str, str]], Callable[[Path, Path], Path]]:
    """The Debian 13 source a host build of the library uses (tlsbench.builder.libraries): the
    cached host build's version, else the newest of the series already unpacked in the cache,
    else the newest the mirror serves (fetched then)."""
    def version(cache: Path) -> tuple[str, str]:
        entry = libraries.cached(lib.spec, cache)
        if entry:
            return lib.package, entry.debian_version
        unpacked = [folder.name.split("_", 1)[1] for folder in (cache / "src").glob(f"{lib.package}_*")
                    if upstream_version(folder.name.split("_", 1)[1]).startswith(lib.series + ".")]
        if unpacked:
            return lib.package, max(unpacked, key=functools.cmp_to_key(compare_versions))
        return lib.package, libraries.source_tree(lib.spec, cache)[0]

    def fetch(cache: Path, log: Path) -> Path:
        return libraries.source_tree(lib.spec, cache, log, debian_version=version(cache)[1])[1]

    return version, fetch


def _sources(build: declared.DeviceBuild) -> CrossSource:
    if build.library.source == declared.DEBIAN12:
        return CrossSource(build, _debian12_mbedtls_source, _debian12_mbedtls_fetch)
    return CrossSource(build, *_debian13(build.library))


CROSS_SOURCES = {build.name: _sources(build) for build in declared.load().device}


def cross_source(name: str) -> CrossSource:
    """A device build by its name or label (mbedtls@2.28, mbedtls, mbedtls@3.6+p256m)."""
    build = declared.load().device_build(name)
    if build is None:
        raise BuildError(f"no device build {name!r}; known: {', '.join(CROSS_SOURCES)} (spec/libraries.toml [device])")
    return CROSS_SOURCES[build.name]


# ---------------------------------------------------------------- the config header

def config_text(config: Path, seen: tuple[Path, ...] = ()) -> bytes:
    """The config header with its local includes (`#include "base.h"` beside it) expanded, so
    a small header that includes a base and overrides a few lines builds, is keyed and is
    recorded as the whole configuration it is. Library headers (`mbedtls/...`) stay includes."""
    path = config.resolve()
    if path in seen:
        raise BuildError(f"config header {config} includes itself (through {' -> '.join(p.name for p in seen)})")

    def expand(found: re.Match[bytes]) -> bytes:
        included = path.parent / found[1].decode()
        return config_text(included, (*seen, path)) if included.is_file() else found[0]

    return LOCAL_INCLUDE.sub(expand, path.read_bytes())


CONFIG_MACROS = {"mbedtls": "MBEDTLS_CONFIG_FILE", "wolfssl": "WOLFSSL_USER_SETTINGS"}  # how each takes its header


def config_options(text: bytes, library: str = "mbedtls") -> tuple[str, ...]:
    """What the cache key holds of a config header: its (expanded) bytes' digest."""
    return (f"{CONFIG_MACROS[library]} sha256:{hashlib.sha256(text).hexdigest()}",)


# ---------------------------------------------------------------- building

@dataclass(frozen=True)
class CrossJob:
    """One cross build: the source tree, the config header's text, where to work and install."""
    source: Path
    config: bytes
    tc: Toolchain
    work: Path
    prefix: Path
    jobs: int
    log: Path


@dataclass(frozen=True)
class CrossRecipe:
    """How a library is compiled for a device (every version and config alike)."""
    archives: tuple[str, ...]   # lib/<archive> every build installs, in link order
    extras: tuple[str, ...]     # lib/<archive> a config may add (mbed TLS 3.6's p256-m, Everest): linked after
    steps: Callable[[CrossJob], None]
    version: Callable[[Path], str]  # the source tree's upstream version


def ensure(spec: str, config: Path | None = None, tc: Toolchain = DEFAULT_TOOLCHAIN, cache: Path | None = None,
           jobs: int = 2, progress: Callable[[str], None] = lambda message: None) -> CachedLibrary:
    """The device build `spec` (spec/libraries.toml [device]) compiled by the toolchain with its
    config header (or `config` instead), built once: a warm cache answers without network or
    compiler. Any failure is one BuildError saying what to do."""
    src = cross_source(spec)
    config = config or src.build.config
    cache = cache or default_cache()
    require_config(config)
    text = config_text(config)
    identity = tc.identity()
    package, debian_version = src.debian_source(cache)
    layout = src.layout(cache, tc)
    prefix = layout.prefix(entry_name(src.library.name, package, debian_version,
                                      config_options(text, src.library.name), REVISION, identity))
    found = CachedLibrary.load(prefix, REVISION)
    if found:
        return found
    with locked(layout.lock):
        found = CachedLibrary.load(prefix, REVISION)  # built meanwhile by another process
        if found:
            return found
        log = layout.fresh_log()
        try:
            return _build(src, debian_version, config.name, text, tc, identity, layout, prefix, jobs, log, progress)
        except BuildError as exc:
            raise BuildError(f"{src.spec} for {tc.name} with {config.name}: {exc}") from None


def _build(src: CrossSource, debian_version: str, config_name: str, text: bytes, tc: Toolchain,
           identity: dict[str, str], layout: Layout, prefix: Path, jobs: int, log: Path,
           progress: Callable[[str], None]) -> CachedLibrary:
    t = time.monotonic()
    progress(f"fetching the {src.library.spec} source (Debian {debian_version}) if it is not cached")
    source = src.fetch(layout.cache, log)
    fetched = time.monotonic() - t
    work = layout.work(prefix.name)
    for stale in (prefix, work):
        shutil.rmtree(stale, ignore_errors=True)
    progress(f"cross-compiling {src.spec} for {tc.name} with {config_name}")
    t = time.monotonic()
    recipe = RECIPES[src.library.name]
    recipe.steps(CrossJob(source, text, tc, work, prefix, jobs, log))
    compiled = time.monotonic() - t
    lib = src.library
    archives = recipe.archives + tuple(a for a in recipe.extras if (prefix / "lib" / a).is_file())
    check_attributes(tc, [prefix / "lib" / a for a in archives], log)
    entry = CachedLibrary(prefix, src.spec, lib.name, recipe.version(source), debian_version,
                          config_options(text, lib.name), archives, (),
                          seconds={"fetch": round(fetched, 1), "build": round(compiled, 1)},
                          compiler=identity["compiler"], debian_suite=declared.SUITES[lib.source], toolchain=identity,
                          config={"name": config_name, "sha256": hashlib.sha256(text).hexdigest()},
                          revision=REVISION).stamp()
    shutil.rmtree(work, ignore_errors=True)
    return entry


MBEDTLS_3RDPARTY = REPO / "agent" / "firmware" / "libraries" / "mbedtls-3rdparty.cmake"


def _mbedtls_steps(job: CrossJob) -> None:
    """mbed TLS's own CMake with the toolchain file; the config through CFLAGS (see above); its
    3rdparty drivers (p256-m) built too where the source has them (mbedtls-3rdparty.cmake).
    The config is installed next to the headers, so whatever includes the prefix compiles
    against the configuration the library was built with."""
    config_dir = job.work / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / CONFIG_HEADER).write_bytes(job.config)
    cflags = f"-I{config_dir} -DMBEDTLS_CONFIG_FILE='\"{CONFIG_HEADER}\"'"
    build = job.work / "build"
    drivers = ([f"-DCMAKE_PROJECT_INCLUDE={MBEDTLS_3RDPARTY}"] if (job.source / "3rdparty" / "p256-m").is_dir()
               else [])
    run(["cmake", "-S", str(job.source), "-B", str(build), *job.tc.cmake_options(), *drivers,
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={job.prefix}", "-DCMAKE_INSTALL_LIBDIR=lib",
         "-DENABLE_PROGRAMS=OFF", "-DENABLE_TESTING=OFF", "-DGEN_FILES=OFF", "-DMBEDTLS_FATAL_WARNINGS=OFF",
         "-DUSE_STATIC_MBEDTLS_LIBRARY=ON", "-DUSE_SHARED_MBEDTLS_LIBRARY=OFF"],
        "configuring mbed TLS for the target", log=job.log, env={"CFLAGS": cflags})
    run(["cmake", "--build", str(build), f"-j{job.jobs}"],
        "compiling mbed TLS with the config (check_config.h names a missing dependency)", log=job.log)
    run(["cmake", "--install", str(build)], "installing mbed TLS into the cache", log=job.log)
    (job.prefix / "include" / CONFIG_HEADER).write_bytes(job.config)


WOLFSSL_PROJECT = REPO / "agent" / "firmware" / "libraries" / "wolfssl"


def _wolfssl_steps(job: CrossJob) -> None:
    """wolfSSL the way its embedded ports build it: every source file compiled with the config
    header as user_settings.h (WOLFSSL_USER_SETTINGS; each file compiles to nothing unless the
    settings want it), by a small CMake project of ours (agent/firmware/libraries/wolfssl/)
    with the target's toolchain file. Its options.h (the file configure would write) includes
    the settings, so the backend compiled against the prefix sees the library's configuration."""
    config = job.work / "config" / "user_settings.h"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_bytes(job.config)
    build = job.work / "build"
    run(["cmake", "-S", str(WOLFSSL_PROJECT), "-B", str(build), *job.tc.cmake_options(),
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={job.prefix}", f"-DTB_WOLFSSL_SOURCE={job.source}",
         f"-DTB_WOLFSSL_SETTINGS={config}"], "configuring wolfSSL for the target", log=job.log)
    run(["cmake", "--build", str(build), f"-j{job.jobs}"],
        "compiling wolfSSL with the settings (settings.h names a contradiction)", log=job.log)
    run(["cmake", "--install", str(build)], "installing wolfSSL into the cache", log=job.log)


def _header_version(header: str, macro: str) -> Callable[[Path], str]:
    def version(source: Path) -> str:
        path = source / header
        m = re.search(rf'#define\s+{macro}\s+"([^"]+)"', path.read_text()) if path.exists() else None
        if not m:
            raise BuildError(f"{source}: no {macro} in {header}")
        return m[1]
    return version


def source_version(source: Path) -> str:
    """MBEDTLS_VERSION_STRING of a source tree (include/mbedtls/version.h or build_info.h)."""
    for header in ("version.h", "build_info.h"):
        try:
            return _header_version(f"include/mbedtls/{header}", "MBEDTLS_VERSION_STRING")(source)
        except BuildError:
            continue
    raise BuildError(f"{source}: no MBEDTLS_VERSION_STRING in include/mbedtls/")


RECIPES = {
    "mbedtls": CrossRecipe(ARCHIVES["mbedtls"], ("libp256m.a", "libeverest.a"), _mbedtls_steps, source_version),
    "wolfssl": CrossRecipe(ARCHIVES["wolfssl"], (), _wolfssl_steps,
                           _header_version("wolfssl/version.h", "LIBWOLFSSL_VERSION_STRING")),
}


def check_attributes(tc: Toolchain, files: list[Path], log: Path | None = None) -> None:
    """Every object of every archive (or a linked image: its merged attributes) carries the
    toolchain's architecture and float ABI: an ARMv7-M object in an ARMv6-M build is refused."""
    where = f" (log: {log})" if log else ""
    for file in files:
        if not file.is_file():
            raise BuildError(f"the build installed no {file.name}{where}")
        lines = [line.strip() for line in query([tc.readelf, "-A", str(file)]).splitlines()]
        for attribute in tc.attributes:
            tag = attribute.split(":", 1)[0] + ":"
            found = {f"{tag} {targets.isa_name(line[len(tag):])}" for line in lines if line.startswith(tag)}
            if found != {attribute}:
                raise BuildError(f"{file.name} was not built for {tc.name} (found "
                                 f"{', '.join(sorted(found)) or f'no {tag}'}; expected {attribute}): "
                                 f"were the toolchain file's flags overridden?{where}")
