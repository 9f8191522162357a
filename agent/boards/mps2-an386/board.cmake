# SPDX-License-Identifier: Apache-2.0
# The MPS2 AN386 board's part of the firmware (agent/firmware/CMakeLists.txt includes it): its
# vector table and the Cortex-M port files that fit it: the CMSDK UART, the seeded entropy (no
# TRNG), semihosting for QEMU's exit status. A new board lists its own (docs/porting.md).
set(TB_BOARD_SOURCES
  ${TB_BOARD_DIR}/startup.c
  ${TB_PORT_DIR}/uart_cmsdk.c
  ${TB_PORT_DIR}/entropy_seeded.c
  ${TB_PORT_DIR}/semihosting.c)
