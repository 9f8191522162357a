# SPDX-License-Identifier: Apache-2.0
"""The firmware on the emulated Cortex-M4 (QEMU mps2-an386, -icount shift=0): every suite of
the device's mbed TLS build once, over TLS and over DTLS, both peers on the device, 1 KiB each
way in 1 KiB records. Two independent sweeps of the counting image (one QEMU boot each) are
compared value by value (every record's label, kind, peer, sequence, counter values and value,
and every REP header field); one sweep of the memory image gives the footprint per suite
family. A target that hangs or crashes fails that configuration with the reason, QEMU is
restarted and the sweep goes on. Updates the "Device under QEMU" section of docs/benchmarks.md.

    .venv/bin/python bench/device_sweep.py [--firmware build/firmware/mbedtls-device-mps2]
                                           [--small-config configs/mbedtls/device-mps2-small.h] [--no-update]

With --small-config (the default), the same firmware built with that config (4 KiB records,
small ECP window: what a part with little RAM would run) is swept too, over TLS: its
footprint and what its handshakes cost against the default build.

Drives QEMU with the ctest driver (agent/tests/qemu_device.py); bench/device_host.py runs the
same firmware through the host tool (`tlsbench run`) and sets it beside the host."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, machine, today, update_section  # noqa: E402

sys.path.insert(0, str(REPO / "agent" / "tests"))
from qemu_device import LABELS, DeviceError, QemuDevice, Rep, run_request  # noqa: E402

DEFAULT_FIRMWARE = REPO / "build" / "firmware" / "mbedtls-device-mps2"
SMALL_CONFIG = REPO / "configs" / "mbedtls" / "device-mps2-small.h"
STEP_LABELS = {entry["id"] for entry in LABELS["label"] if entry["category"] == "step"}
PROTOCOLS = {0: "TLS", 1: "DTLS"}
DTLS_TIMER_MS = 60_000  # counts in instructions: 1 ms = 10^6; no turn of the other peer comes near
HANG_SECONDS = 120      # the longest repetition (DHE-RSA, ~0.5 G instructions) takes seconds


@dataclass
class Outcome:
    suite: dict
    protocol: int
    rep: Rep | None = None
    error: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return self.suite["name"], self.protocol


@dataclass
class Sweep:
    image: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    restarts: int = 0

    @property
    def reps(self) -> list[Rep]:
        return [o.rep for o in self.outcomes if o.rep]

    @property
    def instructions(self) -> int:
        """Instructions the repetitions counted (the counter is held while the UART moves bytes)."""
        return sum(r.header["repetition_wall_ns"] for r in self.reps)


def configurations(suites: list[dict], protocols: tuple[int, ...]) -> list[tuple[dict, int]]:
    runnable = [s for s in suites if s["credentials"]]
    return [(s, p) for p in protocols for s in runnable if p == 0 or s["dtls"]]


def sweep(elf: Path, label: str, protocols: tuple[int, ...] = tuple(PROTOCOLS)) -> Sweep:
    """Every configuration once, one boot (restarted after a failure)."""
    result = Sweep(label)
    t = time.monotonic()
    device = QemuDevice(elf, timeout=HANG_SECONDS).start()
    for i, (suite, protocol) in enumerate(configurations(device.suites, protocols)):
        outcome = Outcome(suite, protocol)
        try:
            reps, done = device.run(run_request(i + 1, suite["id"], protocol=protocol, reps=1, warmup=0,
                                                dtls_timeout_ms=DTLS_TIMER_MS))
            outcome.rep = reps[0]
            if outcome.rep.header["status"] != 0:
                outcome.error = outcome.rep.reason
        except DeviceError as exc:
            outcome.error = str(exc)
            device.close()
            device = QemuDevice(elf, timeout=HANG_SECONDS).start()
            result.restarts += 1
        result.outcomes.append(outcome)
        print(f"{label}: {i + 1} {suite['name']} {PROTOCOLS[protocol]} "
              f"{outcome.error or outcome.rep.header['handshake_wall_ns']}", file=sys.stderr)
    device.quit()
    device.close()
    result.seconds = time.monotonic() - t
    return result


def values(rep: Rep) -> list:
    """Everything a REP says, one value each: header fields, then every record's fields."""
    return list(rep.header.values()) + [v for r in rep.records for v in r]


def compare(a: Sweep, b: Sweep) -> tuple[int, int]:
    """(values compared, values that differ) between two sweeps, configuration by configuration."""
    theirs = {o.key: o.rep for o in b.outcomes}
    compared = differing = 0
    for o in a.outcomes:
        other = theirs.get(o.key)
        if not o.rep or not other:
            differing += 1
            continue
        mine, its = values(o.rep), values(other)
        compared += max(len(mine), len(its))
        differing += sum(x != y for x, y in zip(mine, its)) + abs(len(mine) - len(its))
    return compared, differing


def step_counts(rep: Rep) -> dict[int, int]:
    """Per peer: the sum of its handshake step spans (I/O and crypto inside them included)."""
    open_at: dict[tuple[int, int], int] = {}
    total = {0: 0, 1: 0}
    for label, kind, peer, _seq, t, _cpu, _value in rep.records:
        if label not in STEP_LABELS or peer not in total:
            continue
        if kind == 0:
            open_at[(peer, label)] = t
        elif kind == 1 and (peer, label) in open_at:
            total[peer] += t - open_at.pop((peer, label))
    return total


def family(suite: dict) -> str:
    kex, auth = suite["key_exchange"], suite["authentication"]
    return kex if kex == auth else f"{kex}-{auth}"


def m(count: float) -> str:
    return f"{count / 1e6:.2f}"


# ---------------------------------------------------------------- tables

def suite_table(s: Sweep) -> str:
    by = {o.key: o for o in s.outcomes}
    rows = []
    for o in sorted((o for o in s.outcomes if o.protocol == 0 and o.rep),
                    key=lambda o: o.rep.header["handshake_wall_ns"]):
        steps = step_counts(o.rep)
        dtls = by.get((o.suite["name"], 1))
        dtls_hs = m(dtls.rep.header["handshake_wall_ns"]) if dtls and dtls.rep else "–"
        rows.append(f"| {o.suite['name'].removeprefix('TLS-')} | {family(o.suite)} | "
                    f"{m(o.rep.header['handshake_wall_ns'])} | {m(steps[0])} | {m(steps[1])} | {dtls_hs} |")
    return ("| suite | family | TLS handshake | client steps | server steps | DTLS handshake |\n"
            "|---|---|---:|---:|---:|---:|\n" + "\n".join(rows))


def family_table(s: Sweep) -> str:
    fams: dict[str, list[Outcome]] = {}
    for o in s.outcomes:
        if o.protocol == 0 and o.rep:
            fams.setdefault(family(o.suite), []).append(o)
    rows = []
    for name, outs in sorted(fams.items(), key=lambda kv: min(o.rep.header["handshake_wall_ns"] for o in kv[1])):
        hs = [o.rep.header["handshake_wall_ns"] for o in outs]
        rows.append(f"| {name} | {len(outs)} | {m(min(hs))} – {m(max(hs))} | {m(statistics.median(hs))} |")
    return ("| family | suites | TLS handshake, M instructions (min – max) | median |\n"
            "|---|---:|---|---:|\n" + "\n".join(rows))


def footprint_table(s: Sweep) -> str:
    """Per family and protocol, the largest value over its suites (what a build must hold)."""
    fams: dict[tuple[str, int], list[Rep]] = {}
    for o in s.outcomes:
        if o.rep and o.rep.header["status"] == 0:
            fams.setdefault((family(o.suite), o.protocol), []).append(o.rep)

    def most(reps: list[Rep], label: str, peer: int) -> int:
        return max(r.values(label).get(peer, 0) for r in reps)

    rows = []
    for (name, protocol), reps in sorted(fams.items(), key=lambda kv: (kv[0][1], most(kv[1], "HEAP_PEAK_HANDSHAKE", 1))):
        rows.append(f"| {name} | {PROTOCOLS[protocol]} | {len(reps)} | "
                    f"{most(reps, 'HEAP_PEAK_HANDSHAKE', 0):,} / {most(reps, 'HEAP_PEAK_HANDSHAKE', 1):,} | "
                    f"{most(reps, 'HEAP_KEPT', 0):,} / {most(reps, 'HEAP_KEPT', 1):,} | "
                    f"{most(reps, 'HEAP_PEAK_CONNECTED', 0):,} / {most(reps, 'HEAP_PEAK_CONNECTED', 1):,} | "
                    f"{most(reps, 'STACK_HIGH_WATER', 0):,} / {most(reps, 'STACK_HIGH_WATER', 1):,} |")
    shared = max(r.values("HEAP_SHARED").get(255, 0) for r in s.reps)
    return ("| family | protocol | suites | heap peak, handshake (client / server) | heap kept after handshake | "
            "heap peak, connected | stack high-water |\n|---|---|---:|---:|---:|---:|---:|\n"
            + "\n".join(rows) + f"\n\nHeap shared by both peers (parsed credentials, DRBG): {shared:,} bytes.")


def small_table(default: Sweep, small_counting: Sweep, small_memory: Sweep, default_memory: Sweep) -> str:
    """Per family (TLS): the small config's heap peak per peer and its handshake against the
    default build's (medians over the family's suites)."""
    def per_family(s: Sweep, value) -> dict[str, float]:
        fams: dict[str, list[float]] = {}
        for o in s.outcomes:
            if o.protocol == 0 and o.rep and o.rep.header["status"] == 0:
                fams.setdefault(family(o.suite), []).append(value(o.rep))
        return {k: statistics.median(v) for k, v in fams.items()}

    def peak(r: Rep) -> float:
        return max(r.values("HEAP_PEAK_HANDSHAKE").values())

    def handshake(r: Rep) -> float:
        return r.header["handshake_wall_ns"]

    hs, hs_small = per_family(default, handshake), per_family(small_counting, handshake)
    heap, heap_small = per_family(default_memory, peak), per_family(small_memory, peak)
    rows = [f"| {f} | {heap[f]:,.0f} | {heap_small[f]:,.0f} | {m(hs[f])} | {m(hs_small[f])} | "
            f"{hs_small[f] / hs[f]:.2f} |" for f in sorted(hs, key=hs.get) if f in hs_small and f in heap_small]
    return ("| family | heap peak per peer, default | small | handshake M insn, default | small | ratio |\n"
            "|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows))


def failures(s: Sweep) -> list[str]:
    return [f"{o.suite['name']} {PROTOCOLS[o.protocol]}: {o.error}" for o in s.outcomes if o.error]


def small_section(small: tuple[dict, Sweep, Sweep] | None, a: Sweep, mem: Sweep) -> str:
    if not small:
        return ""
    fw, counting, memory = small
    image = {i["variant"]: i for i in fw["images"]}["counting"]
    return f"""
The same firmware with `{fw['config']['name']}` (4 KiB records, ECP window 2, no fixed-point
comb, AES tables in flash; for parts with little RAM), over TLS: flash {image['text'] + image['data']:,},
bss {image['bss']:,} bytes; medians per family (heap peak = the larger peer's, bytes):

{small_table(a, counting, memory, mem)}
"""


def body(fw: dict, a: Sweep, b: Sweep, mem: Sweep, compared: int, differing: int,
         small: tuple[dict, Sweep, Sweep] | None = None) -> str:
    counting, memory = ({i["variant"]: i for i in fw["images"]}[v] for v in ("counting", "memory"))
    n = len(a.outcomes)
    ok = sum(1 for o in a.outcomes if not o.error)
    fails = failures(a) + failures(b) + failures(mem)
    fail_text = ("None failed." if not fails else "Failed:\n\n" + "\n".join(f"- {f}" for f in fails))
    rate = [s.instructions / s.seconds for s in (a, b)]
    return f"""Script: `bench/device_sweep.py` ({today()}; {machine()}).
The firmware `tlsbench-firmware-{fw['name']}` ({fw['library']} {fw['library_version']}, `{fw['config']['name']}`,
{fw['toolchain']['compiler']}) on QEMU's `{fw['board']}` (Cortex-M4, `-icount shift=0`, serial over
QEMU's stdio), driven over the emulated UART with the framed protocol. Every suite of the build
that can run ({len({o.suite['name'] for o in a.outcomes})} suites), over TLS and over DTLS where
the suite allows it: **{n} configurations**, one repetition each, both peers on the device, 1 KiB
each way in 1 KiB records. Counts are instructions (QEMU icount), never times: on a part,
time = count × CPI / f. The machine is shared, so wall times are noisy; the counts are not.

| | sweep 1 | sweep 2 |
|---|---:|---:|
| configurations completed (status OK) | {ok} of {n} | {sum(1 for o in b.outcomes if not o.error)} of {len(b.outcomes)} |
| wall time of the sweep (one QEMU boot, HELLO to QUIT) | {a.seconds:.1f} s | {b.seconds:.1f} s |
| instructions counted in the repetitions | {a.instructions / 1e9:.2f} G | {b.instructions / 1e9:.2f} G |
| instructions emulated per wall second (UART shipping included in the wall time) | {rate[0] / 1e6:.0f} M/s | {rate[1] / 1e6:.0f} M/s |
| QEMU restarts (a hung or crashed target) | {a.restarts} | {b.restarts} |

**Determinism: {compared:,} values compared between the two sweeps (every REP header field and
every record field of every configuration), {differing} differ.** {fail_text}

Image sizes (bytes; `arm-none-eabi-size`): counting image text {counting['text']:,}, data
{counting['data']:,}, bss {counting['bss']:,} (flash {counting['text'] + counting['data']:,}); memory
image text {memory['text']:,}, data {memory['data']:,}, bss {memory['bss']:,}. The bss is mostly
the agent's static buffers at their QEMU sizes (trace 4096 records = 128 KiB, JSON 64 KiB, memory
transport 2 × 20 KiB, record buffers 32 KiB); `agent/firmware/CMakeLists.txt` sizes them.

Per family, TLS (M instructions; a handshake is the HANDSHAKE phase, both peers):

{family_table(a)}

Footprint per family (memory image, sweep of {mem.seconds:.0f} s; bytes, the largest over the
family's suites; heap = what the library, backend and agent asked for, charged to the peer whose
call allocated it; stack from the stack's top, the agent's frames included):

{footprint_table(mem)}
{small_section(small, a, mem)}
<details><summary>Every suite (M instructions; client / server steps = the sum of that peer's
handshake step spans, I/O and crypto inside them included)</summary>

{suite_table(a)}

</details>

Rerun: `make firmware && .venv/bin/python bench/device_sweep.py`."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--firmware", type=Path, default=DEFAULT_FIRMWARE, help="a firmware build folder (firmware.json)")
    ap.add_argument("--small-config", type=Path, default=SMALL_CONFIG,
                    help="also sweep the firmware built with this config (TLS); 'none' to skip")
    ap.add_argument("--no-update", action="store_true", help="print the section instead of writing it")
    args = ap.parse_args()
    record = args.firmware / "firmware.json"
    if not record.is_file():
        print(f"no firmware in {args.firmware}: build it with `make firmware`", file=sys.stderr)
        return 1
    fw = json.loads(record.read_text())
    images = {i["variant"]: args.firmware / i["path"] for i in fw["images"]}
    a = sweep(images["counting"], "sweep 1")
    b = sweep(images["counting"], "sweep 2")
    mem = sweep(images["memory"], "memory")
    compared, differing = compare(a, b)
    small = None
    if args.small_config.name != "none":
        small_fw = build_small(args.small_config)
        small_images = {i["variant"]: Path(small_fw["folder"]) / i["path"] for i in small_fw["images"]}
        small = (small_fw, sweep(small_images["counting"], "small", (0,)),
                 sweep(small_images["memory"], "small memory", (0,)))
    text = body(fw, a, b, mem, compared, differing, small)
    if args.no_update:
        print(text)
    else:
        update_section("Device under QEMU", text)
        print(f"docs/benchmarks.md updated: {compared:,} values compared, {differing} differ")
    failed = failures(a) + failures(b) + failures(mem) + (failures(small[1]) + failures(small[2]) if small else [])
    return 0 if differing == 0 and not failed else 1


def build_small(config: Path) -> dict:
    """The firmware with the small config (the library cross-built once, then ~10 s)."""
    from tlsbench.builder import firmware
    result = firmware.build_firmware(firmware.FirmwareRequest(config=config))
    return {**result.to_json(), "folder": str(result.image("counting").path.parent)}


if __name__ == "__main__":
    sys.exit(main())
