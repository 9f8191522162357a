# SPDX-License-Identifier: Apache-2.0
"""Every device library build (spec/libraries.toml [device]) on the emulated Cortex-M4 (QEMU
mps2-an386, -icount shift=0), through `tlsbench run` as a user runs it: a few handshakes (TLS 1.2
PSK and ECDHE, TLS 1.3 over X25519 and P-256) on the counting and the memory image, and the
crypto primitives; then, for mbed TLS 3.6, one firmware per feature switched off or shrunk.
Updates the "Device library builds" section of docs/benchmarks.md.

    .venv/bin/python bench/device_libraries.py [--builds mbedtls@3.6 wolfssl@5.7] [--no-features] [--no-update]

Counts are instructions (QEMU icount), never a time. Footprint: the library's own flash and RAM
from each image's link map (builder/footprint.py), the heap peak per peer and the stack from
the memory image. Feature deltas: the library's linked bytes and the client's heap peak of a
TLS 1.2 PSK handshake (the one suite every variant keeps) against the unchanged build."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, load_path, machine, reader, today, update_section  # noqa: E402

from tlsbench import plan  # noqa: E402
from tlsbench.analysis.pipeline import analyze  # noqa: E402
from tlsbench.app.run import run_experiment  # noqa: E402
from tlsbench.builder import firmware  # noqa: E402
from tlsbench.export import tidy  # noqa: E402

TARGET = "qemu-mps2-an386"
# Per library, the plan's suite names (each library spells them its own way).
SUITES = {
    "mbedtls": ["TLS-PSK-WITH-CHACHA20-POLY1305-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
                "TLS1-3-AES-128-GCM-SHA256"],
    "wolfssl": ["TLS_PSK_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"],
}
NO_TLS13 = ("mbedtls@2.28",)  # builds without TLS 1.3: its row stays empty
COMMON_PRIMITIVES = ["sha256", "aes128-gcm", "chacha20-poly1305", "ecdsa-p256", "ecdh-p256", "ecdh-x25519", "rsa2048"]
PRIMITIVES = {"mbedtls": COMMON_PRIMITIVES, "wolfssl": [*COMMON_PRIMITIVES, "ed25519", "mlkem768"]}  # what each has
RATIOS = (  # (what, numerator groups, denominator groups): sums of (experiment, size, group) counts
    ("X25519 / P-256 key agreement (keygen + shared secret)",
     [("ecdh-x25519", 0, "keygen"), ("ecdh-x25519", 0, "shared-secret")],
     [("ecdh-p256", 0, "keygen"), ("ecdh-p256", 0, "shared-secret")]),
    ("ChaCha20-Poly1305 / AES-128-GCM, 1 KiB encrypt",
     [("chacha20-poly1305", 1024, "encrypt")], [("aes128-gcm", 1024, "encrypt")]),
    ("ECDSA P-256 / RSA-2048 verify", [("ecdsa-p256", 0, "verify")], [("rsa2048", 0, "verify")]),
    ("ECDSA P-256 / RSA-2048 sign", [("ecdsa-p256", 0, "sign")], [("rsa2048", 0, "sign")]),
    ("ML-KEM-768 (keygen + encaps + decaps) / X25519 (2 keygen + 2 shared)",
     [("mlkem768", 0, "keygen"), ("mlkem768", 0, "encapsulate"), ("mlkem768", 0, "decapsulate")],
     [("ecdh-x25519", 0, "keygen")] * 2 + [("ecdh-x25519", 0, "shared-secret")] * 2),
)
# mbed TLS 3.6 features: lines appended to its device config (configs/mbedtls-3.6/device.h).
FEATURES = (
    ("TLS 1.3 off", ["#undef MBEDTLS_SSL_PROTO_TLS1_3"]),
    ("GCM off (CCM stays)", ["#undef MBEDTLS_GCM_C"]),
    ("ChaCha20-Poly1305 off", ["#undef MBEDTLS_CHACHAPOLY_C", "#undef MBEDTLS_CHACHA20_C", "#undef MBEDTLS_POLY1305_C"]),
    ("DTLS off", ["#undef MBEDTLS_SSL_PROTO_DTLS", "#undef MBEDTLS_SSL_DTLS_ANTI_REPLAY",
                  "#undef MBEDTLS_SSL_DTLS_HELLO_VERIFY", "#undef MBEDTLS_SSL_DTLS_CLIENT_PORT_REUSE",
                  "#undef MBEDTLS_SSL_DTLS_CONNECTION_ID", "#undef MBEDTLS_SSL_COOKIE_C"]),
    ("RSA off (no RSA suites or certificates)", ["#undef MBEDTLS_RSA_C", "#undef MBEDTLS_PKCS1_V15",
                                                 "#undef MBEDTLS_PKCS1_V21", "#undef MBEDTLS_KEY_EXCHANGE_RSA_ENABLED",
                                                 "#undef MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED",
                                                 "#undef MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED",
                                                 "#undef MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED",
                                                 "#undef MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED",
                                                 "#undef MBEDTLS_X509_RSASSA_PSS_SUPPORT", "#undef MBEDTLS_GENPRIME"]),
    ("ECP window 2, no fixed-point comb", ["#undef MBEDTLS_ECP_WINDOW_SIZE", "#define MBEDTLS_ECP_WINDOW_SIZE 2",
                                           "#undef MBEDTLS_ECP_FIXED_POINT_OPTIM",
                                           "#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0"]),
    ("records of 4 KiB (in and out)", ["#define MBEDTLS_SSL_IN_CONTENT_LEN 4096", "#define MBEDTLS_SSL_OUT_CONTENT_LEN 4096"]),
    ("AES tables in flash", ["#define MBEDTLS_AES_ROM_TABLES"]),
    # PSK only: no certificate parsing, no suite or TLS 1.3 mode that needs one (the agent then
    # offers no certificate credential: agent/src/backends/mbedtls_shared.c TB_MBED_X509).
    ("X.509 off (PSK only)", ["#undef MBEDTLS_X509_USE_C", "#undef MBEDTLS_X509_CRT_PARSE_C",
                              "#undef MBEDTLS_X509_CRL_PARSE_C", "#undef MBEDTLS_X509_RSASSA_PSS_SUPPORT",
                              "#undef MBEDTLS_PEM_PARSE_C", "#undef MBEDTLS_SSL_SERVER_NAME_INDICATION",
                              "#undef MBEDTLS_KEY_EXCHANGE_RSA_ENABLED", "#undef MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED",
                              "#undef MBEDTLS_KEY_EXCHANGE_ECJPAKE_ENABLED",
                              "#undef MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED"]),
)
FEATURE_BASE = REPO / "configs" / "mbedtls-3.6" / "device.h"
PSK_SUITE = "TLS-PSK-WITH-AES-128-CCM"  # every feature variant keeps it (not ChaCha20, not GCM)


@dataclass
class Measured:
    build: str
    seconds: float
    parts: dict  # library / harness / runtime: flash, ram
    heap: dict  # (suite, peer) -> heap peak during the handshake
    stack: dict  # (suite, peer) -> stack high-water
    handshakes: dict  # (suite, group, peer) -> median handshake processing count
    groups: dict  # (experiment, size, group) -> median count
    failed: int


def median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def run_build(build: str, out: Path, suites: list[str], experiments: list[str], config: Path | None = None,
              name: str = "") -> Measured:
    """One plan on the build's firmware: the suites (counting and memory image) and primitives."""
    family = build.split("@")[0]
    device = f'target = "{TARGET}"\nlibrary = "{build}"\nmemory = true\n'
    if config:
        image = firmware.ensure_firmware(firmware.FirmwareRequest(config=config, library=build, name=name))
        device += f'firmware = "{image.image("counting").path}"\n'
    text = (f'name = "{name or build.replace("@", "-").replace("+", "-")}"\nsuites = {suites!r}\ngroups = ["default", "x25519", "secp256r1"]\n'
            'repetitions = 2\n'.replace("'", '"')
            + (f'[experiments]\ninclude = {experiments!r}\nsizes = [1024]\n'.replace("'", '"') if experiments else "")
            + f'[device]\n{device}')
    started = time.monotonic()
    summary = run_experiment(plan.parse(text, f"{family}.toml"), out)
    seconds = time.monotonic() - started
    db = summary.folder / "tlsbench.db"
    with reader(db) as st:
        parts = next(d.parts for d in st.devices() if d.variant == "counting")
        reps = tidy.read_table(st, "repetition").to_pylist()
        slices = tidy.read_table(st, "slice").to_pylist() if experiments else []
    handshakes: dict = {}
    for r in reps:
        if r["kind"] == "handshake" and r["image"] == "counting" and r["status"] == "OK":
            for peer in ("client", "server"):
                handshakes.setdefault((r["suite_name"], r["group"], peer), []).append(r[f"handshake_processing_{peer}"])
    groups: dict = {}
    for s in slices:
        if s["slice_kind"] == "group" and s["status"] == "OK":
            groups.setdefault((s["experiment"], s["total_bytes"], s["label"]), []).append(s["duration"])
    device = analyze(load_path(db)).results.device
    heap, stack = {}, {}
    for f in device.footprint.rows if device and device.footprint else ():
        suite = f.label.split(" ")[0]
        if "HEAP_PEAK_HANDSHAKE" in f.values:
            heap[(suite, f.peer)] = f.values["HEAP_PEAK_HANDSHAKE"].most
        if "STACK_HIGH_WATER" in f.values:
            stack[(suite, f.peer)] = f.values["STACK_HIGH_WATER"].most
    return Measured(build, seconds, parts, heap, stack, {k: median(v) for k, v in handshakes.items()},
                    {k: median(v) for k, v in groups.items()}, summary.failed)


def fmt(v: float | None, scale: float = 1e6, digits: int = 2) -> str:
    return "–" if v is None else f"{v / scale:,.{digits}f}"


def footprint_table(results: list[Measured]) -> str:
    lines = ["| build | library flash | library RAM | harness flash / RAM | heap peak client / server, PSK "
             "| heap peak client / server, TLS 1.3 ECDHE | stack, deepest |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for m in results:
        family = m.build.split("@")[0]
        psk, tls13 = SUITES[family][0], SUITES[family][2]
        lib, harness = m.parts.get("library", {}), m.parts.get("harness", {})
        peak = lambda suite: " / ".join(f"{m.heap[(suite, p)]:,}" if (suite, p) in m.heap else "–"  # noqa: E731
                                        for p in ("client", "server"))
        lines.append(f"| `{m.build}` | {lib.get('flash', 0):,} | {lib.get('ram', 0):,} | "
                     f"{harness.get('flash', 0):,} / {harness.get('ram', 0):,} | {peak(psk)} | {peak(tls13)} | "
                     f"{max(m.stack.values(), default=0):,} |")
    return "\n".join(lines)


def handshake_table(results: list[Measured]) -> str:
    rows = ["PSK ChaCha20-Poly1305, TLS 1.2", "ECDHE-ECDSA P-256, TLS 1.2", "TLS 1.3, X25519 + ECDSA P-256", "TLS 1.3, P-256 + ECDSA P-256"]
    cells = {"PSK ChaCha20-Poly1305, TLS 1.2": (0, "default"), "ECDHE-ECDSA P-256, TLS 1.2": (1, "secp256r1"),
             "TLS 1.3, X25519 + ECDSA P-256": (2, "x25519"), "TLS 1.3, P-256 + ECDSA P-256": (2, "secp256r1")}
    lines = ["| handshake (client / server, M instructions) | " + " | ".join(f"`{m.build}`" for m in results) + " |",
             "|---|" + "---:|" * len(results)]
    for row in rows:
        index, group = cells[row]
        out = []
        for m in results:
            suite = SUITES[m.build.split("@")[0]][index]
            c, s = (m.handshakes.get((suite, group, p)) for p in ("client", "server"))
            out.append(f"{fmt(c)} / {fmt(s)}")
        lines.append(f"| {row} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def primitives_table(results: list[Measured]) -> str:
    wanted = [("sha256", 1024, "hash"), ("aes128-gcm", 1024, "encrypt"), ("chacha20-poly1305", 1024, "encrypt"),
              ("ecdsa-p256", 0, "sign"), ("ecdsa-p256", 0, "verify"), ("ecdh-p256", 0, "keygen"),
              ("ecdh-p256", 0, "shared-secret"), ("ecdh-x25519", 0, "keygen"), ("ecdh-x25519", 0, "shared-secret"),
              ("ed25519", 0, "sign"), ("ed25519", 0, "verify"), ("rsa2048", 0, "sign"), ("rsa2048", 0, "verify"),
              ("mlkem768", 0, "keygen"), ("mlkem768", 0, "encapsulate"), ("mlkem768", 0, "decapsulate")]
    lines = ["| primitive (k instructions) | " + " | ".join(f"`{m.build}`" for m in results) + " |",
             "|---|" + "---:|" * len(results)]
    for exp, size, group in wanted:
        label = f"{exp} {group}" + (f" ({size} B)" if size else "")
        lines.append(f"| {label} | " + " | ".join(fmt(m.groups.get((exp, size, group)), 1e3, 0) for m in results)
                     + " |")
    return "\n".join(lines)


def ratio_table(results: list[Measured]) -> str:
    lines = ["| ratio | " + " | ".join(f"`{m.build}`" for m in results) + " |", "|---|" + "---:|" * len(results)]
    for what, num, den in RATIOS:
        cells = []
        for m in results:
            a, b = (sum(m.groups[k] for k in keys) if all(k in m.groups for k in keys) else None for keys in (num, den))
            cells.append("–" if a is None or b is None else f"{a / b:.2f}")
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def feature_table(out: Path) -> str:
    """Each feature as a config of its own: the library's linked bytes and the PSK client's heap
    peak against the unchanged mbed TLS 3.6 build."""
    base = run_build("mbedtls@3.6", out, [PSK_SUITE], [], name="mbedtls-3.6-feature-base")
    lines = ["| mbed TLS 3.6 feature | Δ library flash | Δ library RAM | Δ heap peak, PSK client | note |",
             "|---|---:|---:|---:|---|"]
    headers = Path(tempfile.mkdtemp(prefix="tlsbench-features-"))
    for index, (what, changes) in enumerate(FEATURES):
        header = headers / f"feature-{index}.h"
        header.write_text(f'#include "{FEATURE_BASE}"\n' + "\n".join(changes) + "\n")
        try:
            m = run_build("mbedtls@3.6", out, [PSK_SUITE], [], config=header, name=f"mbedtls-3.6-feature-{index}")
        except Exception as exc:  # a feature the library or the agent cannot lose: say so in its row
            lines.append(f"| {what} | – | – | – | not built: {str(exc).splitlines()[0][:120]} |")
            continue
        d = {k: m.parts["library"][k] - base.parts["library"][k] for k in ("flash", "ram")}
        heap = [m.heap.get((PSK_SUITE, "client")), base.heap.get((PSK_SUITE, "client"))]
        dheap = "–" if None in heap else f"{heap[0] - heap[1]:+,}"
        lines.append(f"| {what} | {d['flash']:+,} | {d['ram']:+,} | {dheap} | {'; '.join(changes)[:90]} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", nargs="*", default=firmware.builds_for(firmware.DEFAULT_TARGET.name))
    ap.add_argument("--no-features", action="store_true")
    ap.add_argument("--no-update", action="store_true")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="tlsbench-devlibs-"))
    started = time.monotonic()
    results = []
    for build in args.builds:
        family = build.split("@")[0]
        suites = SUITES[family][:2] if build in NO_TLS13 else SUITES[family]
        results.append(run_build(build, out, suites, PRIMITIVES[family]))
        print(f"{build}: {results[-1].seconds:.0f} s, {results[-1].failed} failed", file=sys.stderr)
    features = "" if args.no_features else feature_table(out)
    body = (f"Written by `bench/device_libraries.py` on {today()} ({machine()}), {time.monotonic() - started:.0f} s. "
            f"Every device library build on the emulated Cortex-M4 (`{TARGET}`, QEMU 7.2, `-icount shift=0`) "
            "through `tlsbench run`; counts are instructions, never a time; medians of 2 repetitions (they differ "
            "only through random keys and nonces). Handshakes carry 0 bytes of data.\n\n"
            "**Footprint: does it fit.** The library's own bytes from each image's link map (the harness: the "
            "agent and its buffers, apart); heap peak of each peer during the handshake and the deepest stack from "
            "the memory image (both peers on the device; a product runs one).\n\n"
            + footprint_table(results) + "\n\n**Handshake processing per peer.**\n\n" + handshake_table(results)
            + "\n\n**Crypto primitives on the device** (`[device]` + `[experiments]`; – : not in that build).\n\n"
            + primitives_table(results) + "\n\n**Ratios on the Cortex-M4** (the same ratios on a host CPU differ: "
            "docs/primitives.md).\n\n" + ratio_table(results)
            + ("\n\n**Per-feature deltas** (one firmware per feature, each against the unchanged `mbedtls@3.6` "
               "build: the library's linked bytes; the client's heap peak during a TLS 1.2 PSK handshake).\n\n"
               + features if features else ""))
    print(body)
    if not args.no_update:
        update_section("Device library builds", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
