# SPDX-License-Identifier: Apache-2.0
"""Library builds on the device (spec/libraries.toml [device]): mbed TLS 3.6 with its p256-m
driver cross-built from the Debian 13 source, its firmware built on demand by the run, TLS 1.3
and TLS 1.2 handshakes and the crypto primitives on the emulated Cortex-M4, keyed by the build.
The first run cross-builds the library into the cache (about a minute); later runs take ~20 s."""
from __future__ import annotations

import shutil

import pytest

from tlsbench import plan
from tlsbench.app.run import run_experiment
from stores import reader

TLS13, TLS12 = "TLS1-3-AES-128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"
BUILD = "mbedtls@3.6+p256m"
UNIT = "instructions (QEMU icount)"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("these tests need qemu-system-arm: scripts/install-deps.sh installs it")
    text = (f'name = "p256m"\nsuites = ["{TLS13}", "{TLS12}"]\ngroups = ["secp256r1"]\nrepetitions = 2\n'
            '[experiments]\ninclude = ["ecdsa-p256", "ecdh-p256"]\n'
            f'[device]\ntarget = "qemu-mps2-an386"\nlibrary = "{BUILD}"\nmemory = true\n')
    out = tmp_path_factory.mktemp("devlib")
    summary = run_experiment(plan.parse(text, "p256m.toml"), out)
    assert summary.failed == 0 and summary.stored == (2 * 2 + 2) * 2  # handshakes on both images, primitives
    return out / "p256m" / "tlsbench.db"


def test_handshakes_and_primitives_run_on_the_device_keyed_by_the_build(stored):
    with reader(stored) as st:
        rows = st.config_rows("all")
        assert {c.library for c in rows} == {BUILD}
        assert all(c.target == "qemu-mps2-an386" and c.key.startswith("mbedtls-3.6+p256m|") for c in rows)
        handshakes = {c.suite_name: c for c in rows if c.experiment is None and c.image == "counting"}
        assert set(handshakes) == {TLS13, TLS12}
        assert handshakes[TLS13].max_version == "TLS1.3" and handshakes[TLS12].max_version == "TLS1.2"
        assert {c.experiment for c in rows if c.experiment} == {"ecdsa-p256", "ecdh-p256"}
        assert {d.counter_unit for d in st.devices()} == {UNIT}


def test_the_primitives_groups_are_counted(stored):
    """What the cycle model reads: ecdsa-p256 sign/verify and ecdh-p256 keygen/shared-secret,
    counted in instructions, a P-256 verification dearer than a signature (p256-m)."""
    from tlsbench.export import tidy

    with reader(stored) as st:
        table = tidy.read_table(st, "slice").to_pylist()
    groups: dict[tuple[str, str], list[float]] = {}
    for row in table:
        if row["slice_kind"] == "group":
            groups.setdefault((row["experiment"], row["label"]), []).append(row["duration"])
    assert set(groups) == {("ecdsa-p256", "sign"), ("ecdsa-p256", "verify"),
                           ("ecdh-p256", "keygen"), ("ecdh-p256", "shared-secret")}
    assert all(len(v) == 2 and min(v) > 1_000_000 for v in groups.values()), groups
    assert min(groups[("ecdsa-p256", "verify")]) > max(groups[("ecdsa-p256", "sign")])


def test_the_library_footprint_is_its_archives_share_of_the_link(stored):
    """The library's own flash and RAM (link map) are apart from the harness's buffers, and the
    three parts add up to the image's layout (the linker's fill bytes aside)."""
    with reader(stored) as st:
        image = next(d for d in st.devices() if d.variant == "counting")
    parts = image.parts
    assert set(parts) == {"library", "harness", "runtime"}
    assert 100_000 < parts["library"]["flash"] < parts["library"]["flash"] + parts["harness"]["flash"] < image.flash
    assert parts["harness"]["ram"] > 10 * parts["library"]["ram"]  # the trace and queue buffers are the harness's
    for size, key in ((image.flash, "flash"), (image.static_ram, "ram")):
        assert 0 <= size - sum(p[key] for p in parts.values()) < 512


MAP = """Linker script and memory map

.text           0x00000000     0x1000
 .text.main     0x00000000       0x40 CMakeFiles/fw.dir/main.c.obj
                0x00000000                main
 .text.mbedtls_sha256_update
                0x00000040      0x200 /cache/lib/libmbedcrypto.a(sha256.c.obj)
 .rodata        0x00000240       0x80 /usr/lib/arm-none-eabi/lib/libc.a(lib_a-memcpy.o)
 *fill*         0x000002c0        0x4 
.data           0x20000000       0x10 load address 0x00001000
 .data.x        0x20000000       0x10 /cache/lib/libmbedtls.a(ssl_tls.c.obj)
.bss            0x20000010     0x2000
 .bss.trace     0x20000010     0x2000 libtb_firmware_core.a(trace.c.obj)
"""


def test_a_link_map_is_charged_to_its_archives():
    from tlsbench.builder.footprint import parse_map

    found = parse_map(MAP.splitlines(), ["libmbedcrypto.a", "libmbedtls.a"]).to_json()
    assert found["parts"] == {"library": {"flash": 0x210, "ram": 0x10}, "harness": {"flash": 0x40, "ram": 0x2000},
                              "runtime": {"flash": 0x80, "ram": 0}}
    assert set(found["library_objects"]) == {"sha256.c.obj", "ssl_tls.c.obj"}


def test_a_budget_says_which_configurations_fit(stored):
    """report --budget: one peer's RAM (library static RAM + heap peak + shared heap + stack)
    against the part's; a budget between the two suites' needs splits them."""
    from tlsbench.analysis.pipeline import analyze
    from tlsbench.analysis.questions.device import Budget, apply_budget
    from tlsbench.analysis.questions.recommend import parse_budget
    from stores import load_path

    device = analyze(load_path(stored)).results.device
    apply_budget(device, Budget(ram_kb=1024, flash_kb=1024))
    needs = {(f.label.split(" ")[0], f.peer): device.fits[(f.config_id, f.peer)] for f in device.footprint.rows}
    assert set(needs) == {(s, p) for s in (TLS13, TLS12) for p in ("client", "server")}
    assert all(f.verdict == "fits" and 30_000 < f.ram < 200_000 for f in needs.values())
    tight = min(f.ram for f in needs.values())
    apply_budget(device, parse_budget(f"ram_kb={tight / 1024 + 0.001:.3f},flash_kb=64"))
    verdicts = [device.fits[(f.config_id, f.peer)].verdict for f in device.footprint.rows]
    assert all("flash" in v and "> 64" in v for v in verdicts)
    assert sum("RAM" in v for v in verdicts) == len(verdicts) - 1  # the tightest peer fits its own RAM exactly


WOLF = "wolfssl@5.7+sp-asm"
WOLF13 = "TLS_AES_128_GCM_SHA256"


@pytest.fixture(scope="module")
def wolf_stored(tmp_path_factory):
    text = (f'name = "wolf"\nsuites = ["{WOLF13}"]\ngroups = ["x25519", "KYBER_LEVEL3"]\nrepetitions = 2\n'
            '[experiments]\ninclude = ["ecdsa-p256", "mlkem768"]\n'
            f'[device]\ntarget = "qemu-mps2-an386"\nlibrary = "{WOLF}"\nprotocols = ["tls", "dtls"]\n')
    out = tmp_path_factory.mktemp("wolf")
    summary = run_experiment(plan.parse(text, "wolf.toml"), out)
    assert summary.failed == 0 and summary.stored == (3 + 2) * 2  # 3 handshakes run, 1 refused; 2 primitives
    return out / "wolf" / "tlsbench.db"


def test_wolfssl_runs_tls13_dtls13_and_ml_kem_on_the_device(wolf_stored):
    """wolfSSL 5.7 with its Cortex-M assembly: TLS 1.3 over X25519 and ML-KEM-768, DTLS 1.3 over
    X25519; ML-KEM over DTLS 1.3 is reported as not measured, with the reason, never dropped."""
    with reader(wolf_stored) as st:
        rows = st.config_rows("all")
    assert {c.library for c in rows} == {WOLF}
    refused = [c for c in rows if c.skip_reason]  # refused by the firmware at run time, stored with why
    assert [(c.grp, c.protocol) for c in refused] == [("KYBER_LEVEL3", "dtls")]
    assert "DTLS_COOKIES" in refused[0].skip_reason
    assert {(c.grp, c.protocol) for c in rows if c.experiment is None and c not in refused} == \
        {("x25519", None), ("KYBER_LEVEL3", None), ("x25519", "dtls")}
    assert {c.experiment for c in rows if c.experiment} == {"ecdsa-p256", "mlkem768"}


def test_the_device_matrix_sets_library_builds_side_by_side(stored, wolf_stored):
    """tlsbench matrix: one column per core x library build, rows matched by IANA suite id,
    group, credential and protocol across libraries that name suites differently."""
    from tlsbench.app.matrix import device_matrix, markdown

    m = device_matrix([stored.parent, wolf_stored.parent])
    assert [(c.core, c.library) for c in m.columns] == [("cortex-m4", BUILD), ("cortex-m4", WOLF)]
    assert m.unit == UNIT
    tls13_p256 = f"{TLS13} [secp256r1, ecdsa-p256] TLS"
    first = m.cells[(tls13_p256, 0)]
    assert set(first.count) == set(first.heap) == {"client", "server"} and first.stack  # memory image ran
    wolf_x25519 = next(row for row in m.rows if row.startswith(f"{WOLF13} [x25519") and row.endswith("DTLS"))
    assert (wolf_x25519, 0) not in m.cells and not m.cells[(wolf_x25519, 1)].heap  # no memory image there
    assert m.ranks(tls13_p256, "client") == {0: 1}
    assert f"| {tls13_p256} | " in markdown(m)
