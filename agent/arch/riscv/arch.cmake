# SPDX-License-Identifier: Apache-2.0
# The RISC-V arch's part of the firmware (agent/firmware/CMakeLists.txt includes it): an RV32
# hart in machine mode, bare metal. minstret as the counter (counter.c), start-up and traps
# (system.c: picolibc's thread-local block, the trap vector), and what every bare-metal arch
# shares.
include(${TB_AGENT_DIR}/arch/baremetal/baremetal.cmake)
