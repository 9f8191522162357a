# SPDX-License-Identifier: Apache-2.0
"""TLS libraries cross-compiled for a device, cached next to the `tlsbench libs` builds
(docs/porting.md, docs/libraries.md "The cache").

    mbedtls@2.28 -> Debian 12's source of the installed libmbedtls-dev, fetched once
                                                     <cache>/src/debian12/<version>/
                 -> static libraries for the target  <cache>/libs/mbedtls-2.28.3-<toolchain>-<hash>/
                                                        include/ lib/ build.json

An entry is keyed by the library's Debian version, the config header's bytes and the
toolchain (its CMake file's bytes and the compiler's version line): another config or
compiler never reuses a build. As with `tlsbench libs`, build.json is written last and an
entry without it is invisible. Nothing built for the target can run here, so instead of a
probe program the archives' Arm attributes are checked: a library built for the wrong CPU or
float ABI (a toolchain file whose flags were overridden) is refused at build time, not at
the firmware's link.

mbed TLS's CMake takes the config through the CFLAGS environment variable: -DCMAKE_C_FLAGS
would replace the toolchain file's CPU flags (the pitfall of a cross build). The recipe is
the same for every mbed TLS version; mbedtls@3.6 needs only its source in CROSS_SOURCES."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tlsbench.builder.libraries import STAMP, _locked, default_cache
from tlsbench.builder.shell import BuildError, query, require_config, run
from tlsbench.core import libraries as declared

REPO = Path(__file__).resolve().parents[3]
REVISION = 1            # bump when the steps change in a way the key does not show
CONFIG_HEADER = "tlsbench_mbedtls_config.h"  # a fixed name: a user's "ssl.h" must not shadow mbedtls/ssl.h
ARCHIVES = ("libmbedtls.a", "libmbedx509.a", "libmbedcrypto.a")  # link order


@dataclass(frozen=True)
class Toolchain:
    """A cross compiler as a CMake toolchain file names it, and what its objects must say."""
    name: str                 # part of the cache entry's name: "cortex-m4"
    file: Path                # the CMake toolchain file
    compiler: str             # the C compiler it sets
    size_tool: str            # reads an image's text/data/bss
    readelf: str              # shows an object's Arm attributes
    attributes: tuple[str, ...]  # `Tag: value` every object must carry

    def identity(self) -> dict[str, str]:
        """What the cache key holds of the toolchain: its file's bytes and the compiler's version."""
        version = query([self.compiler, "--version"]).split("\n", 1)[0]
        if not version:
            raise BuildError(f"{self.compiler} is not installed: scripts/install-deps.sh installs it "
                             "(gcc-arm-none-eabi, libnewlib-arm-none-eabi)")
        return {"name": self.name, "file": self.file.name,
                "file_sha256": hashlib.sha256(self.file.read_bytes()).hexdigest(), "compiler": version}


CORTEX_M4 = Toolchain("cortex-m4", REPO / "cmake" / "arm-none-eabi-cortex-m4.cmake", "arm-none-eabi-gcc",
                      "arm-none-eabi-size", "arm-none-eabi-readelf",
                      ("Tag_CPU_arch: v7E-M", "Tag_ABI_VFP_args: VFP registers"))
TOOLCHAINS = {t.name: t for t in (CORTEX_M4,)}


# ---------------------------------------------------------------- sources

@dataclass(frozen=True)
class CrossSource:
    """Where one library version's source comes from: its Debian version without network
    (the cache key), and the unpacked tree (fetched once)."""
    spec: str
    library: str
    debian_version: Callable[[], str]
    fetch: Callable[[Path, Path], Path]       # (cache, log) -> source tree


def _debian12_mbedtls_version() -> str:
    from tlsbench.builder.custom import installed_version
    return installed_version()[1]


def _debian12_mbedtls_fetch(cache: Path, log: Path) -> Path:
    """The source of the installed libmbedtls-dev (the host agent's library), as
    `tlsbench build mbedtls` fetches it, kept in the cache."""
    from tlsbench.builder.custom import check_source, fetch_debian_source
    tree = fetch_debian_source(cache / "src" / "debian12", log=log)
    check_source(tree)
    return tree


# Where a device build's source comes from, by its spec/libraries.toml source (only mbed TLS
# runs on a device today: agent/firmware/backends/).
FETCHERS = {declared.DEBIAN12: (_debian12_mbedtls_version, _debian12_mbedtls_fetch)}
CROSS_SOURCES = {lib.spec: CrossSource(lib.spec, lib.name, *FETCHERS[lib.source])
                 for lib in declared.load().all if lib.device}


def cross_source(spec: str) -> CrossSource:
    found = CROSS_SOURCES.get(spec.strip().lower())
    if found is None:
        raise BuildError(f"no cross build of {spec!r}; known: {', '.join(CROSS_SOURCES)}")
    return found


# ---------------------------------------------------------------- entries

@dataclass(frozen=True)
class CrossLibrary:
    """A complete cross-build entry (its build.json)."""
    prefix: Path
    spec: str
    library: str
    version: str                  # what the source's version.h says: 2.28.3
    debian_version: str
    config_name: str
    config_sha256: str
    toolchain: dict[str, str]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def include(self) -> Path:
        return self.prefix / "include"

    def archive_paths(self) -> list[Path]:
        return [self.prefix / "lib" / a for a in ARCHIVES]

    def to_json(self) -> dict:
        return {"spec": self.spec, "library": self.library, "version": self.version,
                "debian_version": self.debian_version, "config": {"name": self.config_name,
                                                                  "sha256": self.config_sha256},
                "toolchain": self.toolchain, "archives": list(ARCHIVES), "seconds": self.seconds,
                "revision": REVISION}

    @classmethod
    def load(cls, prefix: Path) -> CrossLibrary | None:
        """The entry in `prefix`, or None when it is incomplete or unreadable."""
        try:
            data = json.loads((prefix / STAMP).read_text())
            entry = cls(prefix, data["spec"], data["library"], data["version"], data["debian_version"],
                        data["config"]["name"], data["config"]["sha256"], dict(data["toolchain"]),
                        dict(data.get("seconds", {})))
            revision = data.get("revision")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if revision != REVISION or not all(p.is_file() for p in entry.archive_paths()):
            return None
        return entry


def entry_name(src: CrossSource, debian_version: str, config: bytes, toolchain: dict[str, str]) -> str:
    """<lib>-<Debian version>-<toolchain>-<hash of version, config, toolchain, revision>."""
    key = json.dumps({"spec": src.spec, "debian_version": debian_version,
                      "config_sha256": hashlib.sha256(config).hexdigest(), "toolchain": toolchain,
                      "revision": REVISION}, sort_keys=True)
    version = re.sub(r"[^0-9A-Za-z.]+", "_", debian_version)
    return f"{src.library}-{version}-{toolchain['name']}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


# ---------------------------------------------------------------- building

def ensure(spec: str, config: Path, toolchain: Toolchain = CORTEX_M4, cache: Path | None = None,
           jobs: int = 2, progress: Callable[[str], None] = lambda message: None) -> CrossLibrary:
    """The library `spec` compiled by `toolchain` with `config`, built once: a warm cache
    answers without network or compiler. Any failure is one BuildError saying what to do."""
    src = cross_source(spec)
    cache = cache or default_cache()
    require_config(config)
    identity = toolchain.identity()
    debian_version = src.debian_version()
    prefix = cache / "libs" / entry_name(src, debian_version, config.read_bytes(), identity)
    found = CrossLibrary.load(prefix)
    if found:
        return found
    with _locked(cache / "libs" / f".{prefix.name}.lock"):
        found = CrossLibrary.load(prefix)  # built meanwhile by another process
        if found:
            return found
        log = cache / "logs" / f"{prefix.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        try:
            return _build(src, debian_version, config, toolchain, identity, prefix, cache, jobs, log, progress)
        except BuildError as exc:
            raise BuildError(f"{spec} for {toolchain.name} with {config.name}: {exc}") from None


def _build(src: CrossSource, debian_version: str, config: Path, toolchain: Toolchain, identity: dict[str, str],
           prefix: Path, cache: Path, jobs: int, log: Path, progress: Callable[[str], None]) -> CrossLibrary:
    t = time.monotonic()
    progress(f"fetching the {src.spec} source (Debian {debian_version}) if it is not cached")
    source = src.fetch(cache, log)
    fetched = time.monotonic() - t
    work = cache / "work" / prefix.name
    for stale in (prefix, work):
        shutil.rmtree(stale, ignore_errors=True)
    progress(f"cross-compiling {src.spec} for {toolchain.name} with {config.name}")
    t = time.monotonic()
    _compile(source, config, toolchain, work, prefix, jobs, log)
    compiled = time.monotonic() - t
    check_attributes(toolchain, [prefix / "lib" / a for a in ARCHIVES], log)
    entry = CrossLibrary(prefix, src.spec, src.library, source_version(source), debian_version, config.name,
                         hashlib.sha256(config.read_bytes()).hexdigest(), identity,
                         {"fetch": round(fetched, 1), "build": round(compiled, 1)})
    tmp = prefix / f".{STAMP}.tmp"
    tmp.write_text(json.dumps(entry.to_json(), indent=2) + "\n")
    tmp.rename(prefix / STAMP)  # last: from here on the entry exists
    shutil.rmtree(work, ignore_errors=True)
    return entry


def _compile(source: Path, config: Path, toolchain: Toolchain, work: Path, prefix: Path, jobs: int,
             log: Path) -> None:
    """mbed TLS's own CMake with the toolchain file; the config through CFLAGS (see above).
    The config is installed next to the headers, so whatever includes the prefix compiles
    against the configuration the library was built with."""
    config_dir = work / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(config, config_dir / CONFIG_HEADER)
    cflags = f"-I{config_dir} -DMBEDTLS_CONFIG_FILE='\"{CONFIG_HEADER}\"'"
    build = work / "build"
    run(["cmake", "-S", str(source), "-B", str(build), f"-DCMAKE_TOOLCHAIN_FILE={toolchain.file}",
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_INSTALL_LIBDIR=lib",
         "-DENABLE_PROGRAMS=OFF", "-DENABLE_TESTING=OFF", "-DGEN_FILES=OFF", "-DMBEDTLS_FATAL_WARNINGS=OFF",
         "-DUSE_STATIC_MBEDTLS_LIBRARY=ON", "-DUSE_SHARED_MBEDTLS_LIBRARY=OFF"],
        "configuring mbed TLS for the target", log=log, env={"CFLAGS": cflags})
    run(["cmake", "--build", str(build), f"-j{jobs}"],
        f"compiling mbed TLS with {config.name} (check_config.h names a missing dependency)", log=log)
    run(["cmake", "--install", str(build)], "installing mbed TLS into the cache", log=log)
    shutil.copyfile(config, prefix / "include" / CONFIG_HEADER)


def check_attributes(toolchain: Toolchain, archives: list[Path], log: Path | None = None) -> None:
    """Every object of every archive carries the toolchain's CPU and float ABI."""
    where = f" (log: {log})" if log else ""
    for archive in archives:
        if not archive.is_file():
            raise BuildError(f"the build installed no {archive.name}{where}")
        lines = [line.strip() for line in query([toolchain.readelf, "-A", str(archive)]).splitlines()]
        for attribute in toolchain.attributes:
            tag = attribute.split(":", 1)[0] + ":"
            found = {line for line in lines if line.startswith(tag)}
            if found != {attribute}:
                raise BuildError(f"{archive.name} was not built for {toolchain.name} (found "
                                 f"{', '.join(sorted(found)) or f'no {tag}'}; expected {attribute}): "
                                 f"were the toolchain file's flags overridden?{where}")


def source_version(source: Path) -> str:
    """MBEDTLS_VERSION_STRING of a source tree (include/mbedtls/version.h or build_info.h)."""
    for header in ("version.h", "build_info.h"):
        path = source / "include" / "mbedtls" / header
        m = re.search(r'#define\s+MBEDTLS_VERSION_STRING\s+"([^"]+)"', path.read_text()) if path.exists() else None
        if m:
            return m[1]
    raise BuildError(f"{source}: no MBEDTLS_VERSION_STRING in include/mbedtls/")
