# SPDX-License-Identifier: Apache-2.0
"""A firmware image's sizes as the linker laid them out: what a build reports (build/) and
what a stored boot reports (store/) both read as flash and static RAM the same way."""
from __future__ import annotations


class ImageSizes:
    """For a dataclass with `text` (code and constants), `data` (initialised variables) and
    `bss` (zeroed variables), in bytes."""

    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def static_ram(self) -> int:
        return self.data + self.bss
