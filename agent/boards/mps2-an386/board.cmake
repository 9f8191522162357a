# SPDX-License-Identifier: Apache-2.0
# The MPS2 AN386 board's part of the firmware (agent/firmware/CMakeLists.txt includes it): its
# vector table, its CMSDK UART (and the marker register), and the Cortex-M arch's files that fit
# it: the seeded entropy (no TRNG), semihosting for QEMU's exit status. A new board lists its own
# (docs/porting.md); its numbers (memory, UART, clock) are spec/targets.toml's.
set(TB_BOARD_SOURCES
  ${TB_BOARD_DIR}/startup.c
  ${TB_BOARD_DIR}/uart_cmsdk.c
  ${TB_ARCH_DIR}/entropy_seeded.c
  ${TB_ARCH_DIR}/semihosting.c)
