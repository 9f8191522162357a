# SPDX-License-Identifier: Apache-2.0
"""The agents a run talks to: a process over a pipe, QEMU booting a firmware, a board's serial port."""
