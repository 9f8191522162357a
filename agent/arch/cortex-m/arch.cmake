# SPDX-License-Identifier: Apache-2.0
# The Cortex-M arch's part of the firmware (agent/firmware/CMakeLists.txt includes it), the same
# on every Cortex-M0/M0+, M3, M4, M7, M33 and M55 board: SysTick as the counter (counter.c),
# start-up and faults (system.c: the FPU enabled only where the target has one, board.h
# TB_BOARD_FPU; an ARMv6-M image's alignment rule), and what every bare-metal arch shares.
include(${TB_AGENT_DIR}/arch/baremetal/baremetal.cmake)
