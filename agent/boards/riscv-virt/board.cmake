# SPDX-License-Identifier: Apache-2.0
# QEMU's RISC-V `virt` board's part of the firmware (agent/firmware/CMakeLists.txt includes it):
# its NS16550A UART (no marker: virt has no GPIO), and the bare-metal files that fit it: the
# seeded entropy (no TRNG), semihosting for QEMU's exit status. Its numbers (memory, UART, clock)
# are spec/targets.toml's.
set(TB_BOARD_SOURCES
  ${TB_BOARD_DIR}/uart_ns16550.c
  ${TB_BAREMETAL_DIR}/entropy_seeded.c
  ${TB_BAREMETAL_DIR}/semihosting.c)
