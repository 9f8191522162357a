# SPDX-License-Identifier: Apache-2.0
"""A board for the labgrid tests (tests/test_fleet_labgrid.py), run as a process of its own:
its power switch is an HTTP relay as labgrid's NetworkPowerPort `simplerest` model drives it
(GET /power/0/1 on, /power/0/0 off, /power/0 the state), its flash is the file FLASH/firmware.elf
(labgrid's FlashromDriver writes it: flashrom's dummy chip backed by that file), its CPU is
QEMU booting that file at power on, its UART a TCP port that QEMU serves and waits on (a board
held in reset until its port is opened: nothing it says is lost while ser2net connects).
Powering off kills QEMU. Each boot
is logged to FLASH/boots.log with the SHA-256 of the image it boots, QEMU's PID to FLASH/qemu.pid;
QEMU dies with this process (kill -9 included).

    python labgrid_board.py POWER_PORT UART_PORT FLASH"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from tlsbench.core.processes import dying_with_us

IMAGE = "firmware.elf"


class Board:
    def __init__(self, uart_port: int, flash: Path):
        self.uart_port, self.flash = uart_port, flash
        self.qemu: subprocess.Popen | None = None

    def power(self, on: bool) -> None:
        if self.qemu is not None:
            self.qemu.kill()
            self.qemu.wait()
            self.qemu = None
        if on:
            self._boot()

    def _boot(self) -> None:
        image = self.flash / IMAGE
        digest = hashlib.sha256(image.read_bytes()).hexdigest() if image.exists() else "-"
        with (self.flash / "qemu.log").open("a") as log:
            self.qemu = subprocess.Popen(
                ["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor", "none",
                 "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
                 "-serial", f"tcp:127.0.0.1:{self.uart_port},server=on,wait=on", "-kernel", str(image)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=dying_with_us())
        (self.flash / "qemu.pid").write_text(str(self.qemu.pid))
        with (self.flash / "boots.log").open("a") as log:
            log.write(f"{self.qemu.pid} {digest}\n")

    @property
    def on(self) -> bool:
        return self.qemu is not None


def serve(power_port: int, uart_port: int, flash: Path) -> None:
    board = Board(uart_port, flash)

    class Relay(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = self.path.strip("/").split("/")
            if parts[:2] != ["power", "0"] or len(parts) > 3 or (len(parts) == 3 and parts[2] not in "01"):
                self.send_error(404)
                return
            if len(parts) == 3:
                board.power(parts[2] == "1")
            body = b"1" if board.on else b"0"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            sys.stderr.write(f"relay {time.monotonic():.2f}: {format % args}\n")

    HTTPServer(("127.0.0.1", power_port), Relay).serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
