# SPDX-License-Identifier: Apache-2.0
"""Custom mbed TLS builds: `tlsbench build mbedtls --config my_config.h`.

    source (--source DIR, or Debian's source package of the installed libmbedtls-dev)
      -> static mbed TLS with the user's config header   build/mbedtls-<name>/prefix
      -> agent/ built against it                         build/mbedtls-<name>/agent
      -> tlsbench-agent-mbedtls-<name> (+ -notrace)      next to the other agents

The agent embeds the config header (name, SHA-256, text) and sends it in HELLO's "build"
object, so every stored experiment says which configuration it measured."""
from __future__ import annotations

import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder.shell import BuildError, require_config
from tlsbench.builder.shell import query as _query
from tlsbench.builder.shell import run as _run
from tlsbench.core import libraries as declared

REPO = Path(__file__).resolve().parents[3]
AGENT_SOURCE = REPO / "agent"
BUILD_ROOT = REPO / "build"
SOURCE_CACHE = BUILD_ROOT / "mbedtls-src"  # one folder per Debian version, fetched once
APT_SOURCES = Path("/etc/apt/sources.list.d")
APT_LIST = Path("/etc/apt/sources.list")
DEB_SRC_FILE = APT_SOURCES / "tlsbench-deb-src.sources"
DEBIAN12_MBEDTLS = declared.load().bare_build("mbedtls")  # spec/libraries.toml: mbedtls@2.28
DEV_PACKAGE = DEBIAN12_MBEDTLS.package
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.]*")  # no '-': agent names split on it
SUPPORTED_SERIES = DEBIAN12_MBEDTLS.series + "."


@dataclass(frozen=True)
class BuildRequest:
    config: Path            # the user's mbed TLS config header (a full config, MBEDTLS_CONFIG_FILE)
    name: str               # the build's name: agent tlsbench-agent-mbedtls-<name>
    source: Path | None     # an mbed TLS 2.28 source tree; None = Debian's source package
    install_dir: Path       # where the two agent binaries go
    build_root: Path = BUILD_ROOT
    jobs: int = os.cpu_count() or 2

    @property
    def folder(self) -> Path:
        return self.build_root / f"mbedtls-{self.name}"


@dataclass(frozen=True)
class BuildResult:
    library: str            # the name plans and `tlsbench suites --library` use
    agents: tuple[Path, ...]
    source: Path
    prefix: Path            # installed headers and static libraries
    seconds: dict[str, float]


def default_name(config: Path) -> str:
    return config.stem


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise BuildError(f"build name {name!r}: use letters, digits, '_' and '.' (it becomes "
                         f"tlsbench-agent-mbedtls-<name>); pass --name")
    return name


# ---------------------------------------------------------------- Debian's source package

def installed_version() -> tuple[str, str]:
    """(source package, source version) of the installed libmbedtls-dev."""
    out = _query(["dpkg-query", "-W", "-f=${source:Package} ${source:Version}", DEV_PACKAGE])
    if not out:
        raise BuildError(f"{DEV_PACKAGE} is not installed (scripts/install-deps.sh), or pass --source DIR")
    package, version = out.split()
    return package, version


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas, current = [], {}
    key = None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
        elif line[0].isspace() and key:
            current[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            current[key.strip()] = value.strip()
    return stanzas


def _one_line_entries(text: str) -> list[dict[str, str]]:
    """`deb [opts] URI suite components...` lines of sources.list as deb822 fields."""
    entries = []
    for line in text.splitlines():
        m = re.match(r"^\s*(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
        if m:
            entry = {"Types": m[1], "URIs": m[3], "Suites": m[4], "Components": m[5]}
            signed = re.search(r"signed-by=(\S+)", m[2] or "")
            if signed:
                entry["Signed-By"] = signed[1]
            entries.append(entry)
    return entries


def apt_entries() -> list[dict[str, str]]:
    """Every entry apt reads (deb822 .sources and one-line .list files), as deb822 fields."""
    entries = _one_line_entries(APT_LIST.read_text()) if APT_LIST.exists() else []
    for path in sorted(APT_SOURCES.glob("*")):
        if path.suffix == ".sources":
            entries += [s for s in _deb822_stanzas(path.read_text()) if s.get("Enabled", "yes") != "no"]
        elif path.suffix == ".list":
            entries += _one_line_entries(path.read_text())
    return entries


def deb_src_stanzas(entries: list[dict[str, str]]) -> str:
    """deb-src twins of the Debian `deb` entries (same mirror, suites, components, key)."""
    out = []
    for e in entries:
        if "deb" not in e.get("Types", "").split() or "debian" not in e.get("URIs", ""):
            continue
        fields = {"Types": "deb-src", **{k: e[k] for k in ("URIs", "Suites", "Components", "Signed-By") if k in e}}
        out.append("\n".join(f"{k}: {v}" for k, v in fields.items()))
    return "\n\n".join(out) + "\n" if out else ""


def ensure_deb_src() -> bool:
    """Adds tlsbench's deb-src file unless some deb-src entry already covers a Debian mirror;
    True when apt's lists must be updated."""
    entries = apt_entries()
    others = [e for e in entries if "deb-src" in e.get("Types", "").split() and "debian" in e.get("URIs", "")]
    if others:
        return False
    text = deb_src_stanzas(entries)
    if not text:
        raise BuildError("no Debian `deb` entry found in apt's sources to mirror as deb-src; "
                         "pass --source DIR (an mbed TLS 2.28 source tree)")
    header = "# Added by `tlsbench build mbedtls`: Debian's sources for the installed mbed TLS.\n"
    DEB_SRC_FILE.write_text(header + text)
    return True


def _require_root() -> None:
    if os.geteuid() != 0:
        raise BuildError("needs root to fetch Debian's source (apt sources, apt-get update, dpkg-dev): "
                         "rerun as root or pass --source DIR")


def fetch_debian_source(cache: Path = SOURCE_CACHE, log: Path | None = None) -> Path:
    """The extracted source tree of the installed libmbedtls-dev's version, fetched once."""
    package, version = installed_version()
    folder = cache / version
    found = _source_tree_in(folder)
    if found:
        return found
    _require_root()
    updated = ensure_deb_src()
    if not shutil.which("dpkg-source"):
        _run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "dpkg-dev"],
             "installing dpkg-dev (apt-get source unpacks with dpkg-source)", log=log)
    if updated or not _query(["apt-cache", "showsrc", f"{package}={version}"]):
        _run(["apt-get", "update", "-qq"], "apt-get update", log=log)
    staging = cache / f".{version}.partial"  # an interrupted fetch never looks complete
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _run(["apt-get", "source", "-qq", f"{package}={version}"], f"apt-get source {package}={version}",
         cwd=staging, log=log)
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    found = _source_tree_in(folder)
    if not found:
        raise BuildError(f"apt-get source {package}={version} gave no source tree in {folder}")
    return found


def _source_tree_in(folder: Path) -> Path | None:
    if not folder.is_dir():
        return None
    return next((d for d in sorted(folder.iterdir()) if (d / "include" / "mbedtls" / "ssl.h").exists()), None)


def check_source(source: Path) -> str:
    """The version of an mbed TLS source tree; only 2.28 is supported by the backend."""
    version_h = source / "include" / "mbedtls" / "version.h"
    if not (source / "CMakeLists.txt").exists() or not version_h.exists():
        raise BuildError(f"{source} is not an mbed TLS source tree (no CMakeLists.txt, include/mbedtls/version.h)")
    m = re.search(r'#define\s+MBEDTLS_VERSION_STRING\s+"([^"]+)"', version_h.read_text())
    version = m[1] if m else "?"
    if not version.startswith(SUPPORTED_SERIES):
        raise BuildError(f"{source} is mbed TLS {version}; the backend supports {SUPPORTED_SERIES}x only")
    return version


# ---------------------------------------------------------------- the two builds

CONFIG_HEADER = "tlsbench_mbedtls_config.h"  # a fixed name: a user's "ssl.h" must not shadow mbedtls/ssl.h


def build_library(req: BuildRequest, source: Path, log: Path) -> Path:
    """A static mbed TLS compiled with the user's config; returns its install prefix."""
    prefix, work = req.folder / "prefix", req.folder / "library"
    shutil.rmtree(prefix, ignore_errors=True)  # a stale header or archive must never survive
    config_dir = req.folder / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(req.config, config_dir / CONFIG_HEADER)
    cflags = f"-I{config_dir} -DMBEDTLS_CONFIG_FILE='\"{CONFIG_HEADER}\"'"
    _run(["cmake", "-S", str(source), "-B", str(work), "-DCMAKE_BUILD_TYPE=Release",
          f"-DCMAKE_C_FLAGS={cflags}", f"-DCMAKE_INSTALL_PREFIX={prefix}",
          "-DENABLE_PROGRAMS=OFF", "-DENABLE_TESTING=OFF", "-DMBEDTLS_FATAL_WARNINGS=OFF",
          "-DUSE_STATIC_MBEDTLS_LIBRARY=ON", "-DUSE_SHARED_MBEDTLS_LIBRARY=OFF", "-DGEN_FILES=OFF"],
         "configuring mbed TLS with your config", log=log)
    _run(["cmake", "--build", str(work), f"-j{req.jobs}"],
         f"building mbed TLS with {req.config.name} (is it a complete 2.28 config? check_config.h "
         "reports missing dependencies)", log=log)
    _run(["cmake", "--install", str(work)], "installing mbed TLS into the build folder", log=log)
    shutil.copyfile(req.config, prefix / "include" / CONFIG_HEADER)
    return prefix


def build_agent(req: BuildRequest, prefix: Path, log: Path) -> tuple[Path, ...]:
    """agent/ configured against the custom headers/libraries; only the two mbed TLS agents built."""
    work = req.folder / "agent"
    lib = prefix / "lib"
    _run(["cmake", "-S", str(AGENT_SOURCE), "-B", str(work), "-DCMAKE_BUILD_TYPE=Release",
          "-DBUILD_TESTING=OFF",
          f"-DTB_MBEDTLS_INCLUDE={prefix / 'include'}",
          f"-DTB_MBEDTLS_LIB={lib / 'libmbedtls.a'}",
          f"-DTB_MBEDX509_LIB={lib / 'libmbedx509.a'}",
          f"-DTB_MBEDCRYPTO_LIB={lib / 'libmbedcrypto.a'}",
          f"-DTB_MBEDTLS_CONFIG_FILE={req.config.resolve()}",
          f"-DTB_MBEDTLS_BUILD_NAME={req.name}",
          "-DTB_MBEDTLS_EXPECTED_SUITES=0"],
         "configuring the agent against the custom mbed TLS", log=log)
    names = [f"tlsbench-agent-mbedtls-{req.name}", f"tlsbench-agent-mbedtls-{req.name}-notrace"]
    _run(["cmake", "--build", str(work), f"-j{req.jobs}", "--target", *names],
         "building the agent against the custom mbed TLS", log=log)
    req.install_dir.mkdir(parents=True, exist_ok=True)
    installed = []
    for name in names:
        target = req.install_dir / name
        shutil.copy2(work / name, target)
        installed.append(target)
    return tuple(installed)


def build(req: BuildRequest) -> BuildResult:
    """The whole pipeline; each stage's wall time is reported."""
    require_config(req.config)
    check_name(req.name)
    log = req.folder / "build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    seconds: dict[str, float] = {}
    t = time.monotonic()
    source = req.source.resolve() if req.source else fetch_debian_source(log=log)
    check_source(source)
    seconds["source"] = time.monotonic() - t
    t = time.monotonic()
    prefix = build_library(req, source, log)
    seconds["library"] = time.monotonic() - t
    t = time.monotonic()
    agents = build_agent(req, prefix, log)
    seconds["agent"] = time.monotonic() - t
    return BuildResult(f"mbedtls-{req.name}", agents, source, prefix, seconds)


def default_install_dir() -> Path:
    """Where `make` installs the agents: next to the interpreter (.venv/bin)."""
    return Path(sys.executable).parent
