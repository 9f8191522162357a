# SPDX-License-Identifier: Apache-2.0
"""The library cache (docs/libraries.md "The cache"), and the current TLS libraries built into
it from Debian 13 source packages; the versions are spec/libraries.toml's `debian13` builds.
Libraries cross-compiled for a device (tlsbench.builder.cross) share the cache, its layout
and its key:

    mbedtls@3.6 | openssl@3.5 | wolfssl@5.7
      -> Debian 13 source package, fetched once       <cache>/src/<package>_<debian version>/
      -> static libraries (+ the openssl CLI), once   <cache>/libs/[<toolchain>/]<lib>-<version>-<hash>/
                                                         include/ lib/ bin/ build.json

<cache> is $TLSBENCH_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/tlsbench. An entry is keyed by
library × version × toolchain (entry_name): its Debian source package and version, what it is
built with (configure options, or a config header's digest), the recipe's revision and, for a
cross compiler, the toolchain's identity; a cross build's entries sit in a folder named after
its toolchain, the host's at the top (as they always did). build.json is written last: an
entry without it is a build that did not finish, invisible to lookups and removed by the next
build. Before build.json is written, a small program linked against the fresh static
libraries must report the expected version (a cross build's archives are checked for the
target's CPU and float ABI instead)."""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import platform
import resource
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tlsbench.builder.debian import SourceArchive, compare_versions, system_mirror, upstream_version
from tlsbench.builder.shell import BuildError, query, run
from tlsbench.core import libraries as declared

CACHE_ENV = "TLSBENCH_CACHE"
STAMP = "build.json"        # written last: its presence means the entry is complete
REVISION = 1                # bump when a recipe's steps change in a way the options do not show
SUITE = declared.SUITES[declared.DEBIAN13]  # trixie
RETRY = "tlsbench libs build {spec}"


def default_cache() -> Path:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tlsbench"


# ---------------------------------------------------------------- recipes

@dataclass(frozen=True)
class Job:
    """One build: where the source is, where to work, where to install."""
    recipe: Recipe
    source: Path
    work: Path
    prefix: Path
    jobs: int
    log: Path


@dataclass(frozen=True)
class Recipe:
    name: str                       # the library as plans name it: "openssl"
    series: str                     # "3.5": any 3.5.x Debian 13 has
    package: str                    # the Debian source package
    options: tuple[str, ...]        # what the build is configured with (part of the cache key)
    archives: tuple[str, ...]       # lib/<archive> in link order
    system_libs: tuple[str, ...]    # what the static archives need after them
    programs: tuple[str, ...]       # bin/<program> the entry must hold
    probe: str                      # C program printing "version X" and "feature NAME 0|1" lines
    steps: Callable[[Job], None]    # configure, compile, install into job.prefix

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.series}"

    def entry(self, debian_version: str) -> str:
        """The cache entry this recipe builds from that Debian version (entry_name)."""
        return entry_name(self.name, self.package, debian_version, self.options, REVISION)

    def layout(self, cache: Path) -> Layout:
        return Layout(cache, self.name, self.series)


# The probes print what the linked library says about itself (not what its headers say).
MBEDTLS_PROBE = r"""
#include <stdio.h>
#include <mbedtls/version.h>
static const char *const features[] = {
    "MBEDTLS_SSL_PROTO_TLS1_2", "MBEDTLS_SSL_PROTO_TLS1_3", "MBEDTLS_SSL_PROTO_DTLS",
    "MBEDTLS_SSL_SESSION_TICKETS", "MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED",
    "MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED", "MBEDTLS_USE_PSA_CRYPTO",
    "MBEDTLS_ECP_DP_SECP192R1_ENABLED", "MBEDTLS_ECP_DP_SECP224R1_ENABLED",
    "MBEDTLS_ECP_DP_BP256R1_ENABLED", "MBEDTLS_THREADING_PTHREAD", "MBEDTLS_PLATFORM_MEMORY",
};
int main(void) {
    char version[18];
    mbedtls_version_get_string(version);
    printf("version %s\n", version);
    for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++)
        printf("feature %s %d\n", features[i], mbedtls_version_check_feature(features[i]) == 0);
    return 0;
}
"""

OPENSSL_PROBE = r"""
#include <stdio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
static const char *const algorithms[] = {
    "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519MLKEM768", "SecP256r1MLKEM768",
    "ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "X25519", "ED25519",
};
int main(void) {
    printf("version %s\n", OpenSSL_version(OPENSSL_FULL_VERSION_STRING));
    for (unsigned i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++) {
        EVP_KEYMGMT *k = EVP_KEYMGMT_fetch(NULL, algorithms[i], NULL);
        printf("feature %s %d\n", algorithms[i], k != NULL);
        EVP_KEYMGMT_free(k);
    }
    return 0;
}
"""

# wolfSSL's features are compile-time macros of its options.h: each becomes a 0/1 constant.
WOLFSSL_MACROS = ("WOLFSSL_TLS13", "WOLFSSL_DTLS", "WOLFSSL_DTLS13", "WOLFSSL_HAVE_KYBER", "WOLFSSL_ML_KEM",
                  "HAVE_DILITHIUM", "HAVE_SESSION_TICKET", "HAVE_ECC_BRAINPOOL", "HAVE_CURVE25519",
                  "HAVE_ED25519", "OPENSSL_EXTRA", "HAVE_ECH")
WOLFSSL_PROBE = r"""
#include <stdio.h>
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/ecc.h>
""" + "".join(f"#ifdef {m}\n#define ON_{m} 1\n#else\n#define ON_{m} 0\n#endif\n" for m in WOLFSSL_MACROS) + r"""
static const struct { const char *name; int on; } features[] = {
""" + "".join(f'    {{"{m}", ON_{m}}},\n' for m in WOLFSSL_MACROS) + r"""
    {"ECC_MIN_KEY_SZ<=192", ECC_MIN_KEY_SZ <= 192}, /* TLS offers secp192r1 */
};
int main(void) {
    printf("version %s\n", wolfSSL_lib_version());
    for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++)
        printf("feature %s %d\n", features[i].name, features[i].on);
    return 0;
}
"""


def _mbedtls_steps(job: Job) -> None:
    """The default mbedtls_config.h edited with scripts/config.py as Debian 13's rules do,
    compiled out of tree; the edited header replaces the installed one, so whatever
    includes the prefix sees the configuration the library was compiled with."""
    config = job.work / "mbedtls_config.h"
    job.work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(job.source / "include" / "mbedtls" / "mbedtls_config.h", config)
    for option in job.recipe.options:
        run(["python3", str(job.source / "scripts" / "config.py"), "-f", str(config), *option.split()],
            f"scripts/config.py {option}", log=job.log)
    build = job.work / "build"
    run(["cmake", "-S", str(job.source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_INSTALL_PREFIX={job.prefix}", "-DCMAKE_INSTALL_LIBDIR=lib", f"-DMBEDTLS_CONFIG_FILE={config}",
         "-DENABLE_PROGRAMS=OFF", "-DENABLE_TESTING=OFF", "-DGEN_FILES=OFF", "-DMBEDTLS_FATAL_WARNINGS=OFF",
         "-DUSE_STATIC_MBEDTLS_LIBRARY=ON", "-DUSE_SHARED_MBEDTLS_LIBRARY=OFF"], "configuring mbed TLS", log=job.log)
    run(["cmake", "--build", str(build), f"-j{job.jobs}"], "compiling mbed TLS", log=job.log)
    run(["cmake", "--install", str(build)], "installing mbed TLS", log=job.log)
    shutil.copyfile(config, job.prefix / "include" / "mbedtls" / "mbedtls_config.h")


def _openssl_steps(job: Job) -> None:
    """Configure out of tree; libraries, providers built in (no-module) and the CLI."""
    job.work.mkdir(parents=True, exist_ok=True)
    run(["perl", str(job.source / "Configure"), f"--prefix={job.prefix}", f"--openssldir={job.prefix / 'ssl'}",
         "--libdir=lib", *job.recipe.options], "configuring OpenSSL", cwd=job.work, log=job.log)
    run(["make", f"-j{job.jobs}", "build_sw"], "compiling OpenSSL", cwd=job.work, log=job.log)
    run(["make", "install_sw", "install_ssldirs"], "installing OpenSSL", cwd=job.work, log=job.log)


def _wolfssl_steps(job: Job) -> None:
    """autogen.sh writes into the tree (configure, empty placeholder headers), so it runs in
    a copy: the cached source stays pristine for builds with other options."""
    tree = job.work / "src"
    shutil.copytree(job.source, tree, symlinks=True)
    run(["./autogen.sh"], "generating wolfSSL's configure (autoconf, automake, libtool)", cwd=tree, log=job.log)
    run(["./configure", f"--prefix={job.prefix}", *job.recipe.options], "configuring wolfSSL", cwd=tree,
        log=job.log)
    run(["make", f"-j{job.jobs}"], "compiling wolfSSL", cwd=tree, log=job.log)
    run(["make", "install"], "installing wolfSSL", cwd=tree, log=job.log)


# Why each option is there: docs/libraries.md. Lean builds everywhere: static only, no
# programs except the openssl CLI (the ML-DSA test certificates: `make creds`), no tests, no docs.
MBEDTLS_OPTIONS = (
    # Debian 13's debian/rules, so mbedtls@3.6 is the library Debian ships; the defaults of
    # 3.6 already enable TLS 1.2, TLS 1.3 (all three key exchange modes), DTLS, tickets.
    "set MBEDTLS_DEPRECATED_WARNING", "set MBEDTLS_THREADING_C", "set MBEDTLS_THREADING_PTHREAD",
    "set MBEDTLS_CMAC_C", "set MBEDTLS_SSL_DTLS_SRTP",
    # Not in Debian's: mbedtls_platform_set_calloc_free(), so the agent can count heap bytes
    # per handshake step (the default allocator stays calloc/free).
    "set MBEDTLS_PLATFORM_MEMORY",
)
# Debian 13's Configure features, minus those needing other libraries or builds (zlib, zstd,
# the FIPS module, unit tests); ec_nistp_64_gcc_128 where Debian enables it (64-bit ABIs
# with __int128): it is the fast constant-time P-256/P-384/P-521 code.
OPENSSL_OPTIONS = (
    "no-shared", "no-module", "no-tests", "no-docs",
    "no-idea", "no-mdc2", "no-rc5", "no-ssl3", "no-ssl3-method", "enable-rfc3779", "enable-cms",
    "no-capieng", "no-rdrand", "enable-tfo",
) + (("enable-ec_nistp_64_gcc_128",) if platform.machine() in ("x86_64", "aarch64", "ppc64le", "riscv64")
     else ())
WOLFSSL_OPTIONS = (
    "--enable-static", "--disable-shared", "--disable-examples", "--disable-crypttests",
    # Debian's --enable-distro feature set (= --enable-all without early data) plus its
    # --enable-oldtls --enable-pkcs11, spelled out: --enable-distro refuses --enable-experimental.
    "--enable-all", "--disable-earlydata", "--enable-oldtls", "--enable-pkcs11",
    # What Debian lacks: DTLS 1.3 (with ClientHello fragmentation: a post-quantum key share
    # exceeds one datagram), and Kyber 512/768/1024 computed as FIPS 203 ML-KEM (ml-kem),
    # experimental in 5.7.2. No --enable-dilithium: Debian's CVE-2026-5194 backport names
    # ML_DSA_* constants 5.7.2 lacks, so that build does not compile.
    "--enable-dtls13", "--enable-dtls-frag-ch", "--enable-experimental", "--enable-kyber=all,ml-kem",
    # Connection IDs (RFC 9146 for DTLS 1.2, RFC 9147 for DTLS 1.3): off in --enable-all.
    # Raw public keys (RFC 7250, --enable-rpk) are already in --enable-all.
    "--enable-dtlscid",
    # secp192r1 too: TLS offers it only when the minimum ECC size (default 224) allows it, and
    # constrained devices still use it.
    "--with-eccminsz=192",
    # No ECH: --enable-all turns it on, and 5.7.2 then puts a GREASE ECH extension (~200 bytes
    # and an X25519 key generation) into every TLS 1.3 ClientHello, with no runtime switch.
    "--disable-ech",
)

# How each library is built from its Debian 13 source: options, archives (link order), the
# system libraries after them, programs, probe, steps. Which versions: spec/libraries.toml.
ARCHIVES = {"mbedtls": ("libmbedtls.a", "libmbedx509.a", "libmbedcrypto.a"),  # every version's, link order
            "openssl": ("libssl.a", "libcrypto.a"), "wolfssl": ("libwolfssl.a",)}
BUILDS = {
    "mbedtls": (MBEDTLS_OPTIONS, ARCHIVES["mbedtls"], ("-pthread",), (), MBEDTLS_PROBE, _mbedtls_steps),
    "openssl": (OPENSSL_OPTIONS, ARCHIVES["openssl"], ("-ldl", "-pthread"), ("openssl",), OPENSSL_PROBE,
                _openssl_steps),
    "wolfssl": (WOLFSSL_OPTIONS, ARCHIVES["wolfssl"], ("-lm", "-ldl", "-pthread"), (), WOLFSSL_PROBE, _wolfssl_steps),
}
RECIPES: dict[str, Recipe] = {lib.spec: Recipe(lib.name, lib.series, lib.package, *BUILDS[lib.name])
                              for lib in declared.load().from_source(declared.DEBIAN13)}


def recipe(spec: str | Recipe) -> Recipe:
    """The recipe of `lib@series`; an unknown one gets the list of known ones."""
    if isinstance(spec, Recipe):
        return spec
    found = RECIPES.get(spec.strip().lower())
    if found is None:
        raise BuildError(f"unknown library version {spec!r}; known: {', '.join(RECIPES)}")
    return found


# ---------------------------------------------------------------- cache entries

def entry_name(library: str, package: str, debian_version: str, options: Sequence[str], revision: int,
               toolchain: Mapping[str, str] | None = None) -> str:
    """The one key of the cache: <lib>-<upstream version>-<hash of the Debian package and
    version, what the build is made with (configure options, a config header's digest), the
    recipe's revision and a cross toolchain's identity>. Two builds share an entry only when all
    of these agree. A host build's key has no toolchain, as before cross builds joined the
    cache, so its entries keep their names."""
    key: dict[str, object] = {"package": package, "debian_version": debian_version, "options": list(options),
                              "revision": revision}
    if toolchain:
        key["toolchain"] = dict(toolchain)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    return f"{library}-{upstream_version(debian_version)}-{digest}"


@dataclass(frozen=True)
class Layout:
    """Where one library series' builds for one toolchain live in the cache ("": the host's
    compiler, at the top; a cross toolchain: a folder of its name in libs/, work/ and logs/)."""
    cache: Path
    library: str
    series: str
    toolchain: str = ""

    @property
    def libs(self) -> Path:
        return self.cache / "libs" / self.toolchain

    def prefix(self, entry: str) -> Path:
        return self.libs / entry

    def work(self, entry: str) -> Path:
        return self.cache / "work" / self.toolchain / entry

    @property
    def lock(self) -> Path:
        """One build of a series at a time across processes (a second waits, then finds it)."""
        return self.libs / f".{self.library}-{self.series}.lock"

    @property
    def log(self) -> Path:
        """Every command's output of the series' last build."""
        return self.cache / "logs" / self.toolchain / f"{self.library}-{self.series}.log"

    def stale_work(self) -> list[Path]:
        """The trees of the series' failed builds, kept for inspection until the next build."""
        return sorted((self.cache / "work" / self.toolchain).glob(f"{self.library}-{self.series}.*"))

    def fresh_log(self) -> Path:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        return self.log


@dataclass(frozen=True)
class CachedLibrary:
    """A complete cache entry: what build.json says about the folder it sits in."""
    prefix: Path
    spec: str
    library: str
    version: str                  # upstream version: 3.5.7
    debian_version: str           # 3.5.7-1~deb13u2
    options: tuple[str, ...]      # what the key holds of the build's inputs
    archives: tuple[str, ...]
    system_libs: tuple[str, ...]
    features: dict[str, bool] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    compiler: str = ""
    debian_suite: str = SUITE
    toolchain: dict[str, str] = field(default_factory=dict)  # a cross build's toolchain identity; {}: the host's
    config: dict[str, str] = field(default_factory=dict)     # a config header's name and sha256, when built with one
    revision: int = REVISION

    @property
    def include(self) -> Path:
        return self.prefix / "include"

    @property
    def lib(self) -> Path:
        return self.prefix / "lib"

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"

    def archive_paths(self) -> list[Path]:
        return [self.lib / a for a in self.archives]

    def to_json(self) -> dict:
        return {"spec": self.spec, "library": self.library, "version": self.version,
                "debian_version": self.debian_version, "debian_suite": self.debian_suite,
                "options": list(self.options), "archives": list(self.archives), "system_libs": list(self.system_libs),
                "features": self.features, "seconds": self.seconds, "compiler": self.compiler,
                "toolchain": self.toolchain, "config": self.config, "revision": self.revision}

    @classmethod
    def load(cls, prefix: Path, revision: int = REVISION) -> CachedLibrary | None:
        """The entry in `prefix`, or None when it is incomplete, unreadable or of another revision."""
        try:
            data = json.loads((prefix / STAMP).read_text())
            entry = cls(prefix, data["spec"], data["library"], data["version"], data["debian_version"],
                        tuple(data["options"]), tuple(data["archives"]), tuple(data["system_libs"]),
                        dict(data.get("features", {})), dict(data.get("seconds", {})), data.get("compiler", ""),
                        data.get("debian_suite", SUITE), dict(data.get("toolchain", {})),
                        dict(data.get("config", {})), data.get("revision"))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if entry.revision != revision or not all(p.is_file() for p in entry.archive_paths()):
            return None
        return entry

    def stamp(self) -> CachedLibrary:
        """Writes build.json, last: from here on the entry exists."""
        tmp = self.prefix / f".{STAMP}.tmp"
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        tmp.rename(self.prefix / STAMP)
        return self


def cached(spec: str | Recipe, cache: Path | None = None) -> CachedLibrary | None:
    """The newest complete entry built by this recipe (same options), without any network."""
    rec = recipe(spec)
    layout = rec.layout(cache or default_cache())
    entries = [e for e in map(CachedLibrary.load, sorted(layout.libs.glob(f"{rec.name}-{rec.series}.*")))
               if e and e.spec == rec.spec and e.options == rec.options
               and e.prefix.name == rec.entry(e.debian_version)]
    entries.sort(key=functools.cmp_to_key(lambda a, b: compare_versions(a.debian_version, b.debian_version)))
    return entries[-1] if entries else None


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on `path` across processes while the block runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# ---------------------------------------------------------------- building

def ensure(spec: str | Recipe, cache: Path | None = None, jobs: int | None = None, rebuild: bool = False,
           progress: Callable[[str], None] = lambda message: None) -> CachedLibrary:
    """The cached build of `spec`, built first when there is none (or `rebuild`). Any failure
    is one BuildError naming the version and the command to retry."""
    rec = recipe(spec)
    cache = cache or default_cache()
    found = None if rebuild else cached(rec, cache)
    if found:
        return found
    layout = rec.layout(cache)
    with locked(layout.lock):
        found = None if rebuild else cached(rec, cache)  # built meanwhile by another process
        if found:
            return found
        log = layout.fresh_log()
        version = "(version not resolved yet)"
        try:
            t = time.monotonic()
            version, source = _fetch(rec, cache, log, progress)
            fetched = time.monotonic() - t
            progress(f"building {rec.spec} from Debian {SUITE} {rec.package} {version}")
            return _build(rec, version, source, cache, jobs or os.cpu_count() or 2, log, fetched)
        except BuildError as exc:
            raise BuildError(f"{rec.spec}: Debian {SUITE} {rec.package} {version}: {exc}\n"
                             f"retry with: {RETRY.format(spec=rec.spec)}") from None


def source_tree(spec: str | Recipe, cache: Path | None = None, log: Path | None = None,
                progress: Callable[[str], None] = lambda message: None,
                debian_version: str | None = None) -> tuple[str, Path]:
    """The unpacked Debian source a recipe builds from: (Debian version, tree). That version
    when given, else the cached build's own source when there is one (no network once
    unpacked), else the newest the mirror serves."""
    rec = recipe(spec)
    cache = cache or default_cache()
    entry = cached(rec, cache)
    version = debian_version or (entry.debian_version if entry else None)
    try:
        if version:
            mirror, keyring = system_mirror()
            archive = SourceArchive(cache / "apt" / SUITE, SUITE, mirror, keyring)
            return version, archive.fetch(rec.package, version, cache / "src", log)
        with locked(rec.layout(cache).lock):
            return _fetch(rec, cache, log, progress)
    except BuildError as exc:
        raise BuildError(f"{rec.spec}: the Debian {SUITE} source: {exc}\n"
                         f"retry with: {RETRY.format(spec=rec.spec)}") from None


def _fetch(rec: Recipe, cache: Path, log: Path | None, progress: Callable[[str], None]) -> tuple[str, Path]:
    """The newest Debian 13 version of the series whose source the mirror serves (a mirror
    may list a version before it carries its files): (Debian version, unpacked tree)."""
    mirror, keyring = system_mirror()
    archive = SourceArchive(cache / "apt" / SUITE, SUITE, mirror, keyring)
    progress(f"updating the Debian {SUITE} source index ({mirror})")
    archive.update(log)
    versions = [v for v in archive.versions(rec.package) if upstream_version(v).startswith(rec.series + ".")]
    if not versions:
        raise BuildError(f"Debian {SUITE} has no {rec.package} {rec.series}.x source "
                         f"(found: {', '.join(archive.versions(rec.package)) or 'none'})")
    problems = []
    for version in versions:
        progress(f"fetching {rec.package} {version}")
        try:
            return version, archive.fetch(rec.package, version, cache / "src", log)
        except BuildError as exc:
            problems.append(str(exc).splitlines()[0])
    raise BuildError("no version could be fetched: " + "; ".join(problems))


def _build(rec: Recipe, version: str, source: Path, cache: Path, jobs: int, log: Path,
           fetched: float) -> CachedLibrary:
    layout = rec.layout(cache)
    prefix, work = layout.prefix(rec.entry(version)), layout.work(rec.entry(version))
    # An earlier attempt's leftovers never mix with this build; failed builds of the series
    # (their trees kept for inspection until now) go too: the series lock is ours.
    for stale in [prefix, *layout.stale_work()]:
        shutil.rmtree(stale, ignore_errors=True)
    t, cpu = time.monotonic(), _children_cpu()
    rec.steps(Job(rec, source, work, prefix, jobs, log))
    compiled, compiled_cpu = time.monotonic() - t, _children_cpu() - cpu
    missing = [str(p) for p in [prefix / "lib" / a for a in rec.archives] + [prefix / "bin" / b for b in rec.programs]
               if not p.is_file()]
    if missing:
        raise BuildError(f"the build installed no {', '.join(missing)} (log: {log})")
    entry = CachedLibrary(prefix, rec.spec, rec.name, upstream_version(version), version, rec.options,
                          rec.archives, rec.system_libs)
    t = time.monotonic()
    reported, features = probe(entry, rec, work, log)
    if reported != entry.version:
        raise BuildError(f"the built library reports version {reported!r}, expected {entry.version} (log: {log})")
    entry = CachedLibrary(prefix, rec.spec, rec.name, entry.version, version, rec.options, rec.archives,
                          rec.system_libs, features,
                          {"fetch": round(fetched, 1), "build": round(compiled, 1),
                           "build_cpu": round(compiled_cpu, 1), "probe": round(time.monotonic() - t, 2)},
                          query(["cc", "--version"]).split("\n", 1)[0]).stamp()
    shutil.rmtree(work, ignore_errors=True)
    return entry


def _children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes: the compilers' work,
    which a busy machine does not inflate the way it inflates wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def probe(entry: CachedLibrary, rec: Recipe, work: Path, log: Path | None = None) -> tuple[str, dict[str, bool]]:
    """Compiles the recipe's probe against the entry's headers and static archives, runs it:
    (the version the linked library reports, its features)."""
    work.mkdir(parents=True, exist_ok=True)
    source, program = work / f"probe_{rec.name}.c", work / f"probe_{rec.name}"
    source.write_text(rec.probe)
    run(["cc", "-o", str(program), str(source), f"-I{entry.include}", *map(str, entry.archive_paths()),
         *entry.system_libs], f"linking a probe against the static {rec.spec}", log=log)
    out = run([str(program)], f"running the {rec.spec} probe", log=log)
    version, features = "", {}
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "version":
            version = rest.strip()
        elif kind == "feature":
            name, _, on = rest.rpartition(" ")
            features[name] = on == "1"
    return version, features


def describe(entry: CachedLibrary) -> str:
    """One line per entry for `tlsbench libs list`."""
    on = [name for name, enabled in entry.features.items() if enabled]
    return (f"{entry.spec:12} {entry.version:8} (Debian {entry.debian_version})  {entry.prefix}\n"
            f"{'':12} built in {entry.seconds.get('build', 0):.0f} s; features: {', '.join(on) or '-'}")

