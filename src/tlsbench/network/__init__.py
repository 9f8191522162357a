# SPDX-License-Identifier: Apache-2.0
"""Two-process runs over real sockets, optionally through the link emulator (docs/networks.md)."""
