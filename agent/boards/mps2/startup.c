/* SPDX-License-Identifier: Apache-2.0 */
/* The vector table of the MPS2/MPS3 boards: the Cortex-M system exceptions, served by the
 * Cortex-M arch (arch/cortex-m/system.c, counter.c). The agent uses no peripheral interrupt, so
 * the board's IRQ entries are left out. Placed first in flash by the linker script (.vectors),
 * where the core's reset reads it (VTOR, the secure one on an ARMv8-M core: the targets'
 * flash base). Entries a core does not have (MemManage to UsageFault on ARMv6-M, SecureFault
 * before ARMv8-M) are never taken. */
#include "cortex_m.h"

__attribute__((section(".vectors"), used)) static const void *const tb_vectors[16] = {
    __stack_top,           /* initial SP */
    tb_reset_handler,      /* Reset */
    tb_cm_default_handler, /* NMI */
    tb_cm_fault_handler,   /* HardFault */
    tb_cm_fault_handler,   /* MemManage */
    tb_cm_fault_handler,   /* BusFault */
    tb_cm_fault_handler,   /* UsageFault */
    tb_cm_fault_handler,   /* SecureFault (ARMv8-M mainline: the M33, M55) */
    0, 0, 0,               /* reserved */
    tb_cm_default_handler, /* SVCall */
    tb_cm_default_handler, /* DebugMon */
    0,                     /* reserved */
    tb_cm_default_handler, /* PendSV */
    tb_cm_systick_handler, /* SysTick */
};
