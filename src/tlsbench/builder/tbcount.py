# SPDX-License-Identifier: Apache-2.0
"""The instruction-counting runner (docs/metrics.md): the tbcount valgrind tool and the
determinism shim (agent/tools/tbcount/), built against Debian's valgrind package into
<cache>/tbcount/<key>/ on first use (seconds), looked up after. <cache> is the library
cache's (tlsbench.builder.libraries.default_cache); <key> is a hash of the sources and the
valgrind version, so an upgrade rebuilds.

    <cache>/tbcount/<key>/lib/tbcount-amd64-linux   the tool, beside links to valgrind's own files
    <cache>/tbcount/<key>/tb_determinism.so         preloaded into the counted agent

A machine without valgrind (or not x86-64) cannot count: `runner()` raises Unavailable
with the fix, and the run goes on with the other metrics."""
from __future__ import annotations

import hashlib
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path

from tlsbench.builder.libraries import default_cache
from tlsbench.builder.shell import BuildError, query, run

SOURCE = Path(__file__).resolve().parents[3] / "agent" / "tools" / "tbcount"
TOOL = "tbcount"
PLATFORM = "amd64-linux"  # the tool replaces VEX's amd64 RDTSC helper
INSTALL = "install valgrind (apt-get install valgrind; scripts/install-deps.sh does it)"
# Where Debian's valgrind package keeps the tool headers, the archives a tool links with and
# the launcher's own files (VALGRIND_LIB).
VALGRIND_INCLUDE = Path("/usr/include/valgrind")
VALGRIND_ARCHIVES = (Path("/usr/lib/x86_64-linux-gnu/valgrind"), Path("/usr/lib/valgrind"))
VALGRIND_LIBEXEC = (Path("/usr/libexec/valgrind"), Path("/usr/lib/x86_64-linux-gnu/valgrind"))
TOOL_CFLAGS = ["-O2", "-m64", "-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1",
               "-fno-strict-aliasing", "-fno-builtin", "-fno-stack-protector", "-fno-pie", "-Wall"]
# A valgrind tool is a static executable at valgrind's fixed load address.
TOOL_LDFLAGS = ["-m64", "-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start", "-no-pie",
                "-Wl,--build-id=none", "-Wl,-Ttext-segment=0x58000000"]


ENV = shutil.which("env") or "/usr/bin/env"  # sets the agent's environment (coreutils)


class Unavailable(RuntimeError):
    """Instructions cannot be counted here; the message names the fix."""


@dataclass(frozen=True)
class Runner:
    """What starts an agent counting instructions."""

    valgrind: Path
    lib: Path  # VALGRIND_LIB
    shim: Path
    version: str  # "valgrind-3.19.0"

    def prefix(self, seed: int) -> list[str]:
        """The command before `AGENT serve`: valgrind with the tool, the shim preloaded and
        the agent told to count (its clock becomes the instruction count)."""
        return [ENV, f"VALGRIND_LIB={self.lib}", f"LD_PRELOAD={self.shim}", f"TLSBENCH_SEED={seed}",
                "TLSBENCH_COLLECT=instructions", str(self.valgrind), f"--tool={TOOL}", "-q"]

    @property
    def name(self) -> str:
        return f"{self.version} {TOOL}"


def _first_dir(candidates: tuple[Path, ...], member: str) -> Path | None:
    return next((d for d in candidates if (d / member).exists()), None)


def _key(version: str) -> str:
    h = hashlib.sha256(version.encode())
    for f in sorted(SOURCE.glob("*.c")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _build(out: Path, archives: Path, libexec: Path) -> None:
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    lib = tmp / "lib"
    lib.mkdir(parents=True)
    for f in libexec.iterdir():  # the launcher finds the tool next to its own files
        (lib / f.name).symlink_to(f)
    obj = tmp / "tb_main.o"
    run(["gcc", *TOOL_CFLAGS, f"-I{VALGRIND_INCLUDE}", "-c", str(SOURCE / "tb_main.c"), "-o", str(obj)], "tbcount tool")
    run(["gcc", *TOOL_LDFLAGS, "-o", str(lib / f"{TOOL}-{PLATFORM}"), str(obj), f"-L{archives}",
         f"-lcoregrind-{PLATFORM}", f"-lvex-{PLATFORM}", "-lgcc", f"-lgcc-sup-{PLATFORM}"], "tbcount tool link")
    run(["gcc", "-O2", "-shared", "-fPIC", "-Wall", "-o", str(tmp / "tb_determinism.so"),
         str(SOURCE / "tb_determinism.c"), "-ldl"], "determinism shim")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def runner(cache: Path | None = None) -> Runner:
    """The runner, built on first use; Unavailable when this machine cannot count."""
    if platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"instructions: the tbcount runner needs x86-64 (this machine is {platform.machine()}); "
                          "count on a device instead ([device], docs/porting.md)")
    valgrind = shutil.which("valgrind")
    archives = _first_dir(VALGRIND_ARCHIVES, f"libcoregrind-{PLATFORM}.a")
    libexec = _first_dir(VALGRIND_LIBEXEC, f"memcheck-{PLATFORM}")
    if not valgrind or not archives or not libexec or not (VALGRIND_INCLUDE / "pub_tool_basics.h").exists():
        raise Unavailable(f"instructions: valgrind is not available here: {INSTALL}")
    version = query([valgrind, "--version"]) or "valgrind"
    out = (cache or default_cache()) / TOOL / _key(version)
    if not (out / "lib" / f"{TOOL}-{PLATFORM}").exists() or not (out / "tb_determinism.so").exists():
        try:
            _build(out, archives, libexec)
        except BuildError as exc:
            raise Unavailable(f"instructions: building the tbcount runner failed: {exc}") from None
    return Runner(Path(valgrind), out / "lib", out / "tb_determinism.so", version)
