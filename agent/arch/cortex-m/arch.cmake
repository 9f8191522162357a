# SPDX-License-Identifier: Apache-2.0
# The Cortex-M arch's part of the firmware (agent/firmware/CMakeLists.txt includes it), the same
# on every Cortex-M3/M4/M7 board: SysTick as the counter (counter.c), start-up and faults
# (system.c: the FPU enabled only where the target has one, board.h TB_BOARD_FPU), the heap
# (heap.c). A board picks the rest in its board.cmake: entropy_seeded.c (a board without a TRNG)
# and semihosting.c (the end and a fault's text under QEMU or a debugger). The images' memory
# probes: none in the counting image, memory_probes.c in the memory image.
set(TB_ARCH_SOURCES ${TB_ARCH_DIR}/counter.c ${TB_ARCH_DIR}/system.c ${TB_ARCH_DIR}/heap.c)
set(TB_ARCH_COUNTING_PROBES ${TB_ARCH_DIR}/no_memory_probes.c)
set(TB_ARCH_MEMORY_PROBES ${TB_ARCH_DIR}/memory_probes.c)
