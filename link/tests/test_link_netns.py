#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tlsbench-link against real namespaces and TUN devices (root only).

    test_link_netns.py --link path/to/tlsbench-link <case> [--report FILE]

Cases: loss, delay, rate, determinism, mtu, teardown. Not root (or no /dev/net/tun): prints
a SKIP line and passes, unless the CI environment variable is set (then it fails: CI must
run these). Every case uses its own link name, bounded traffic and deadlines; the link is
torn down on every exit path. --report writes the measured figures as JSON (bench/ uses it).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRAFFIC = Path(__file__).resolve().parent / "link_traffic.py"
DEV, PEER = 0, 1
PEER_ADDR = "10.77.0.2"
DEVICE_ADDR = "10.77.0.1"


class Link:
    """`up` on enter, a forwarder per `run()`, `down` on exit (also on errors)."""

    def __init__(self, binary: str, name: str, up_args: tuple[str, ...] = ()):
        self.binary, self.name, self.up_args = binary, name, up_args
        self.ns = (f"tbl-{name}-dev", f"tbl-{name}-peer")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Link":
        subprocess.run([self.binary, "up", "--name", self.name, *self.up_args], check=True)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        subprocess.run([self.binary, "down", "--name", self.name], check=False)

    def start(self, *args: str) -> None:
        self.proc = subprocess.Popen([self.binary, "run", "--name", self.name, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Attached before traffic starts (a TUN without its reader has no carrier).
        line = self.proc.stderr.readline()
        if not line.startswith("tlsbench-link: forwarding"):
            raise RuntimeError(f"forwarder did not start: {line}{self.proc.stderr.read()}")

    def stop(self) -> dict:
        """Stops the forwarder; returns its final counters."""
        assert self.proc
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=10)
        self.proc = None
        lines = [l for l in out.splitlines() if l.startswith("{")]
        if not lines:
            raise RuntimeError(f"no counters from the forwarder: {err}")
        return json.loads(lines[-1])

    def spawn(self, end: int, *args: str) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.ns[end], sys.executable, str(TRAFFIC), *args],
                                stdout=subprocess.PIPE, text=True)

    def server(self, end: int, *args: str) -> subprocess.Popen:
        p = self.spawn(end, *args)
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            raise RuntimeError(f"traffic server did not start: {line!r}")
        return p

    def client(self, end: int, *args: str, timeout: float = 30) -> dict:
        p = self.spawn(end, *args)
        out, _ = p.communicate(timeout=timeout)
        return json.loads(out.strip().splitlines()[-1])


def result(p: subprocess.Popen, timeout: float = 30) -> dict:
    out, _ = p.communicate(timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


class Checks:
    def __init__(self) -> None:
        self.failed = 0
        self.figures: dict[str, object] = {}

    def check(self, ok: bool, what: str) -> None:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        self.failed += not ok

    def within(self, got: float, want: float, rel: float, what: str) -> None:
        self.check(abs(got - want) <= rel * want, f"{what}: {got:.4g} vs {want:.4g} (±{rel:.0%})")


def udp_burst(link: Link, count: int, size: int = 64, interval_us: float = 200, **big) -> list[int]:
    """`count` datagrams device -> peer; returns the sequence numbers that arrived."""
    rx = link.server(PEER, "recv", "--port", "7701", "--count", str(count), "--deadline",
                     str(count * interval_us / 1e6 + 3))
    extra = [f"--{k.replace('_', '-')}={v}" for k, v in big.items()]
    link.client(DEV, "send", "--to", PEER_ADDR, "--port", "7701", "--count", str(count), "--size", str(size),
                "--interval-us", str(interval_us), *extra)
    return result(rx, timeout=count * interval_us / 1e6 + 5)["seqs"]


# ---------------------------------------------------------------- cases
def case_loss(link_bin: str, c: Checks) -> None:
    n, loss = 2000, 5.0
    with Link(link_bin, f"tbt-loss-{os.getpid()}") as link:
        link.start("--d2p-loss", str(loss), "--seed", "1")
        got = udp_burst(link, n, interval_us=150)
        stats = link.stop()
    d2p = stats["d2p"]
    measured = 1 - len(got) / n
    c.figures.update(loss_set=loss / 100, loss_measured=measured, loss_packets=n)
    c.check(d2p["sent"]["packets"] == n, f"emulator saw {d2p['sent']['packets']} of {n} packets")
    c.within(measured, loss / 100, 0.3, "packet loss rate (5% ± 1.5%)")
    c.check(d2p["dropped"]["loss"]["packets"] == n - len(got), "loss drops counted = datagrams missing")
    c.check(d2p["delivered"]["packets"] == len(got), "delivered counter = datagrams received")


def case_delay(link_bin: str, c: Checks) -> None:
    with Link(link_bin, f"tbt-delay-{os.getpid()}") as link:
        link.start("--delay", "20", "--realtime")
        rx = link.server(PEER, "recv", "--port", "7702", "--count", "50", "--deadline", "5")
        link.client(DEV, "send", "--to", PEER_ADDR, "--port", "7702", "--count", "50", "--interval-us", "10000")
        one_way = statistics.median(result(rx)["delays_ns"]) / 1e6
        # ICMP echo: the peer's kernel answers, no process wakes up on the way.
        rtts = link.client(DEV, "ping", "--to", PEER_ADDR, "--count", "30", "--interval-ms", "5")["rtts_ns"]
        link.stop()
        link.start("--d2p-delay", "20", "--d2p-jitter", "5", "--seed", "3", "--realtime")
        rx = link.server(PEER, "recv", "--port", "7704", "--count", "100", "--deadline", "5")
        link.client(DEV, "send", "--to", PEER_ADDR, "--port", "7704", "--count", "100", "--interval-us", "15000")
        jit = [d / 1e6 for d in result(rx)["delays_ns"]]
        late = link.stop()["d2p"]["late_us"]
    rtt = statistics.median(rtts) / 1e6
    p95 = sorted(jit)[int(0.95 * len(jit))]
    c.figures.update(delay_set_ms=20, one_way_median_ms=one_way, rtt_median_ms=rtt, rtt_count=len(rtts),
                     jitter_set_ms=5, jitter_min_ms=min(jit), jitter_max_ms=max(jit),
                     jitter_median_ms=statistics.median(jit), jitter_stdev_ms=statistics.stdev(jit),
                     late_mean_us=late["mean"], late_max_us=late["max"])
    c.within(one_way, 20.0, 0.10, "median one-way delay, ms")
    c.within(rtt, 40.0, 0.10, f"median RTT of {len(rtts)} ICMP echoes, ms")
    c.check(len(rtts) == 30, "every echo came back")
    c.within(statistics.median(jit), 20.0, 0.10, "median one-way delay with ±5 ms jitter, ms")
    # Kernel receive timestamps: what remains beyond the model is the emulator's lateness
    # and the sender's stamp-to-send time; the 95th percentile is checked.
    c.check(min(jit) >= 15.0 - 0.1 and p95 <= 25.0 + 1.0,
            f"jittered delays in [15, 25] ms: min {min(jit):.2f}, p95 {p95:.2f}, max {max(jit):.2f}")
    c.check(late["mean"] < 1000, f"the emulator delivers on time: late by {late['mean']:.0f} us on average, "
            f"{late['max']:.0f} us at most")
    # Uniform on [-5, 5]: standard deviation 5/sqrt(3) = 2.89 ms.
    c.within(statistics.stdev(jit), 5 / 3 ** 0.5, 0.25, "standard deviation of the jittered delay, ms")


def case_rate(link_bin: str, c: Checks) -> None:
    rate, size = 2_000_000, 500_000
    with Link(link_bin, f"tbt-rate-{os.getpid()}") as link:
        link.start("--rate", "2M", "--realtime")
        sink = link.server(PEER, "tcp-sink", "--port", "7705", "--bytes", str(size), "--deadline", "20")
        link.client(DEV, "tcp-source", "--to", PEER_ADDR, "--port", "7705", "--bytes", str(size))
        r = result(sink)
        stats = link.stop()
    secs = (r["last_ns"] - r["first_ns"]) / 1e9
    goodput = r["bytes"] * 8 / secs
    d2p = stats["d2p"]
    # IP-level throughput: what crossed the link per payload byte (headers included).
    ip_level = goodput * d2p["delivered"]["bytes"] / r["bytes"]
    c.figures.update(rate_set_bps=rate, rate_goodput_bps=goodput, rate_ip_bps=ip_level, rate_bytes=size,
                     rate_queue_drops=d2p["dropped"]["queue"]["packets"])
    c.check(r["bytes"] == size, f"{r['bytes']} of {size} bytes arrived")
    c.within(ip_level, rate, 0.10, "IP-level throughput of a 500 KB TCP transfer, bit/s")
    c.within(goodput, rate, 0.10, "TCP goodput, bit/s")


def drops_of(link: Link, seed: str, n: int, log: Path) -> tuple[list[int], list[int]]:
    link.start("--loss", "10", "--seed", seed, "--drop-log", str(log))
    got = udp_burst(link, n, interval_us=300)
    link.stop()
    missing = sorted(set(range(n)) - set(got))
    logged = [int(l.split()[1]) for l in log.read_text().splitlines() if l.startswith("d2p ")]
    return missing, logged


def case_determinism(link_bin: str, c: Checks) -> None:
    n = 500
    with tempfile.TemporaryDirectory() as tmp, Link(link_bin, f"tbt-det-{os.getpid()}") as link:
        log = Path(tmp) / "drops.txt"
        a, a_log = drops_of(link, "42", n, log)
        b, _ = drops_of(link, "42", n, log)
        d, _ = drops_of(link, "43", n, log)
    c.figures.update(determinism_packets=n, determinism_dropped=len(a))
    c.check(len(a) > 0, f"seed 42 dropped {len(a)} of {n}")
    c.check(a == b, "same seed: exactly the same sequence numbers dropped")
    c.check(a == a_log, "the drop log names the missing datagrams")
    c.check(a != d, f"another seed drops others ({len(set(a) ^ set(d))} differ)")


def case_mtu(link_bin: str, c: Checks) -> None:
    with Link(link_bin, f"tbt-mtu-{os.getpid()}") as link:
        link.start("--mtu", "576")
        # Every 2nd datagram has 1000 bytes of UDP payload: 1028-byte IP packets.
        got = udp_burst(link, 20, size=100, interval_us=1000, big_every=2, big_size=1000)
        stats = link.stop()
    mtu = stats["d2p"]["dropped"]["mtu"]
    c.check(sorted(got) == list(range(0, 20, 2)), f"the small datagrams arrived ({len(got)})")
    c.check(mtu["packets"] == 10 and mtu["bytes"] == 10 * 1028, f"MTU drops counted: {mtu}")


def leftovers(name: str) -> list[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    left = [l.split()[0] for l in ns.splitlines() if l.startswith(f"tbl-{name}-")]
    if subprocess.run(["ip", "link", "show", "tblink0"], capture_output=True).returncode == 0:
        left.append("tblink0 in the root namespace")
    return left


def case_teardown(link_bin: str, c: Checks) -> None:
    name = f"tbt-down-{os.getpid()}"
    up = lambda: subprocess.run([link_bin, "up", "--name", name, "--sysctl", "net.ipv4.tcp_sack=0"]).returncode
    down = lambda: subprocess.run([link_bin, "down", "--name", name]).returncode
    try:
        c.check(up() == 0 and up() == 0, "up twice (the second replaces the first)")
        sack = subprocess.run(["ip", "netns", "exec", f"tbl-{name}-peer", "cat", "/proc/sys/net/ipv4/tcp_sack"],
                              capture_output=True, text=True).stdout.strip()
        c.check(sack == "0", f"--sysctl applied inside the namespace (tcp_sack={sack})")
        # A crashed forwarder (SIGKILL, no cleanup of its own), then down.
        fwd = subprocess.Popen([link_bin, "run", "--name", name], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.2)
        fwd.kill()
        fwd.wait()
        c.check(down() == 0, "down after a crashed forwarder")
        c.check(leftovers(name) == [], f"nothing left behind: {leftovers(name)}")
        c.check(down() == 0, "down again (idempotent)")
        # A running forwarder stops by itself when the link is taken down under it.
        up()
        fwd = subprocess.Popen([link_bin, "run", "--name", name], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        time.sleep(0.2)
        down()
        try:
            out, _ = fwd.communicate(timeout=5)
            c.check(fwd.returncode == 0 and '"d2p"' in out, "a running forwarder exits with counters on down")
        except subprocess.TimeoutExpired:
            fwd.kill()
            c.check(False, "a running forwarder exits on down")
        c.check(leftovers(name) == [], "nothing left behind after down under a running forwarder")
        # Without privileges: the documented message and exit code (77).
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", link_bin, "run", "--name", name]
        try:
            p = subprocess.run(nobody, capture_output=True, text=True)
            c.check(p.returncode == 77 and "needs root and /dev/net/tun: memory mode keeps working" in p.stderr,
                    f"unprivileged: exit {p.returncode}, {p.stderr.strip()}")
        except FileNotFoundError:
            print("  (setpriv not installed: the unprivileged message is not checked)")
    finally:
        down()


CASES = {"loss": case_loss, "delay": case_delay, "rate": case_rate, "determinism": case_determinism,
         "mtu": case_mtu, "teardown": case_teardown}


def privileged() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        os.close(os.open("/dev/net/tun", os.O_RDWR))
        return True
    except OSError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--link", required=True, help="the tlsbench-link binary")
    ap.add_argument("--report", help="write the measured figures here (JSON)")
    ap.add_argument("case", choices=CASES)
    a = ap.parse_args()
    if not privileged():
        why = "needs root and /dev/net/tun"
        if os.environ.get("CI"):
            print(f"FAIL: link_netns_{a.case}: {why}, and CI is set: these tests must run in CI")
            return 1
        print(f"SKIP: link_netns_{a.case}: {why}")
        return 0
    c = Checks()
    t0 = time.monotonic()
    print(f"link_netns_{a.case}:", flush=True)
    CASES[a.case](a.link, c)
    print(f"  {time.monotonic() - t0:.1f} s, {c.failed} failed")
    if a.report:
        Path(a.report).write_text(json.dumps(c.figures, indent=1))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
