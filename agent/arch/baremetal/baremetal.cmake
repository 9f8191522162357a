# SPDX-License-Identifier: Apache-2.0
# What every bare-metal arch's arch.cmake sets (agent/firmware/CMakeLists.txt includes that):
# the arch's counter (counter.c) and start-up and faults (system.c), and this folder's files,
# the same on every arch: the counter's names (clock.c), the heap (heap.c), the fault line
# (fault.c). A board picks the rest in its board.cmake: entropy_seeded.c (a board without a
# TRNG) and semihosting.c (the end and a fault's text under QEMU or a debugger). The images'
# memory probes: none in the counting image, memory_probes.c in the memory image.
set(TB_BAREMETAL_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TB_ARCH_INCLUDES ${TB_ARCH_DIR} ${TB_BAREMETAL_DIR})
set(TB_ARCH_SOURCES ${TB_ARCH_DIR}/counter.c ${TB_ARCH_DIR}/system.c ${TB_BAREMETAL_DIR}/clock.c
    ${TB_BAREMETAL_DIR}/heap.c ${TB_BAREMETAL_DIR}/fault.c)
set(TB_ARCH_COUNTING_PROBES ${TB_BAREMETAL_DIR}/no_memory_probes.c)
set(TB_ARCH_MEMORY_PROBES ${TB_BAREMETAL_DIR}/memory_probes.c)
