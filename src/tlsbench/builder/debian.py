# SPDX-License-Identifier: Apache-2.0
"""Debian source packages of another release, fetched without touching the system's apt.

apt reads a sources file and keeps its lists in a folder of tlsbench's cache, never in
/etc/apt or /var/lib/apt (`-o Dir::Etc::sourcelist=... -o Dir::Etc::sourceparts=/dev/null
-o Dir::State::Lists=... -o Dir::Cache=...`), so the system keeps installing Debian 12
packages. Only sources are fetched, never binaries. apt checks the suite's InRelease
signature against the Debian archive keyring, the Sources index against InRelease, and
every downloaded file against the Sources index: a tree it unpacks is the archive's."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder.shell import BuildError, query, run

DEFAULT_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
NO_MIRROR = ("apt's sources (/etc/apt/sources.list, /etc/apt/sources.list.d/) name no Debian mirror (a `deb` "
             "entry whose URI ends in /debian): add the one this machine installs from, then retry")


def system_mirror() -> tuple[str, Path]:
    """The Debian mirror (URI, keyring) the system's apt already uses, so a proxy or a
    local mirror keeps working: the only place sources are fetched from."""
    from tlsbench.builder.custom import apt_entries  # the system's sources, parsed once there

    for entry in apt_entries():
        uri = entry.get("URIs", "").split()[0] if entry.get("URIs") else ""
        if "deb" in entry.get("Types", "").split() and uri.rstrip("/").endswith("/debian"):
            return uri, Path(entry.get("Signed-By", DEFAULT_KEYRING))
    raise BuildError(NO_MIRROR)


def upstream_version(debian_version: str) -> str:
    """3.5.7 of 3.5.7-1~deb13u2; 5.7.2 of 1:5.7.2+dfsg-1 (no epoch, revision, repack tag)."""
    version = debian_version.split(":", 1)[-1].rsplit("-", 1)[0]
    return re.split(r"[+~]", version, maxsplit=1)[0]


def compare_versions(a: str, b: str) -> int:
    """dpkg's version order (1, 0, -1)."""
    for op, result in (("gt", 1), ("lt", -1)):
        if subprocess.run(["dpkg", "--compare-versions", a, op, b], check=False).returncode == 0:
            return result
    return 0


@dataclass(frozen=True)
class SourceArchive:
    """apt configured for one suite's `deb-src` entry alone, in `root`."""
    root: Path
    suite: str
    mirror: str  # the system's (system_mirror)
    keyring: Path = DEFAULT_KEYRING

    @property
    def sources_file(self) -> Path:
        return self.root / "sources.sources"

    def apt_options(self) -> list[str]:
        return ["-o", f"Dir::Etc::sourcelist={self.sources_file}", "-o", "Dir::Etc::sourceparts=/dev/null",
                "-o", f"Dir::State::Lists={self.root / 'lists'}", "-o", f"Dir::Cache={self.root / 'cache'}"]

    def update(self, log: Path | None = None) -> None:
        """Writes the sources file and downloads the suite's Sources index (signature checked)."""
        if not self.keyring.exists():
            raise BuildError(f"{self.keyring} is missing: apt-get install debian-archive-keyring")
        for folder in (self.root / "lists" / "partial", self.root / "cache" / "archives" / "partial"):
            folder.mkdir(parents=True, exist_ok=True)
        self.sources_file.write_text(
            f"# tlsbench: Debian {self.suite} sources only, read by apt with this folder's options\n"
            f"Types: deb-src\nURIs: {self.mirror}\nSuites: {self.suite}\nComponents: main\n"
            f"Signed-By: {self.keyring}\n")
        out = run(["apt-get", *self.apt_options(), "update", "-qq"],
                  f"apt-get update of the Debian {self.suite} sources ({self.mirror})", log=log)
        # apt-get update exits 0 when a download fails (it warns and keeps older lists): an
        # older index still serves; without any, say why instead of "no such version".
        if not any((self.root / "lists").glob("*_Sources*")):
            warnings = [line for line in out.splitlines() if line.startswith(("W:", "E:", "Err:"))]
            raise BuildError(f"could not download the Debian {self.suite} source index from {self.mirror} "
                             f"(network or proxy?): " + ("; ".join(warnings[:3]) or "apt-get update fetched nothing"))

    def versions(self, package: str) -> list[str]:
        """The package's versions in the suite, newest first (the index may hold several)."""
        out = query(["apt-cache", *self.apt_options(), "showsrc", "--only-source", package])
        found = {line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Version:")}
        return sorted(found, key=functools.cmp_to_key(compare_versions), reverse=True)

    def fetch(self, package: str, version: str, into: Path, log: Path | None = None) -> Path:
        """The unpacked source tree of package=version under `into`, fetched once. A fetch
        interrupted at any moment leaves only a `.partial` folder, removed by the next one."""
        folder = into / f"{package}_{version}"
        tree = _tree_in(folder, package)
        if tree:
            return tree
        if not shutil.which("dpkg-source"):
            raise BuildError("dpkg-source is missing (apt-get source unpacks with it): apt-get install dpkg-dev")
        staging = into / f".{package}_{version}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        run(["apt-get", *self.apt_options(), "source", "-qq", "--only-source", f"{package}={version}"],
            f"apt-get source {package}={version} (Debian {self.suite})", cwd=staging, log=log)
        for archive in staging.glob("*.tar.*"):  # unpacked: the tree is what builds use
            archive.unlink()
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
        tree = _tree_in(folder, package)
        if not tree:
            raise BuildError(f"apt-get source {package}={version} unpacked no {package}-* folder in {folder}")
        return tree


def _tree_in(folder: Path, package: str) -> Path | None:
    if not folder.is_dir():
        return None
    return next((d for d in sorted(folder.glob(f"{package}-*")) if d.is_dir()), None)
