# SPDX-License-Identifier: Apache-2.0
# The MPS2 and MPS3 boards' part of the firmware (agent/firmware/CMakeLists.txt includes it):
# AN385 (Cortex-M3, and the ARMv6-M target), AN386 (M4), AN500 (M7), AN505 (M33), AN547 (M55)
# differ only in numbers (memory, UART and marker addresses, clock), which are spec/targets.toml's.
# Their files: the vector table, the CMSDK UART (and the marker register), and the bare-metal
# files that fit them: the seeded entropy (no TRNG), semihosting for QEMU's exit status. A new
# board lists its own (docs/porting.md).
set(TB_BOARD_SOURCES
  ${TB_BOARD_DIR}/startup.c
  ${TB_BOARD_DIR}/uart_cmsdk.c
  ${TB_BAREMETAL_DIR}/entropy_seeded.c
  ${TB_BAREMETAL_DIR}/semihosting.c)
