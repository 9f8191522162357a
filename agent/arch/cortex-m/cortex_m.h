/* SPDX-License-Identifier: Apache-2.0 */
/* The Cortex-M arch's registers (the same on every Cortex-M0/M0+, M3, M4, M7, M33 and M55),
 * shared by the arch's files and a Cortex-M board's (vector table, UART). What every bare-metal
 * arch gives the firmware is baremetal.h's. */
#ifndef TB_CORTEX_M_H
#define TB_CORTEX_M_H
#include "baremetal.h"

/* System Control Space. */
#define TB_SYST_CSR TB_REG(0xE000E010u) /* bit 0 enable, bit 1 interrupt on wrap, bit 2 processor clock */
#define TB_SYST_RVR TB_REG(0xE000E014u)
#define TB_SYST_CVR TB_REG(0xE000E018u)
#define TB_SCB_ICSR TB_REG(0xE000ED04u)
#define TB_SCB_ICSR_PENDSTSET (1u << 26)
#define TB_SCB_CCR TB_REG(0xE000ED14u)
#define TB_SCB_CCR_UNALIGN_TRP (1u << 3)
#define TB_SCB_CPACR TB_REG(0xE000ED88u)
#define TB_SCB_CFSR TB_REG(0xE000ED28u)
#define TB_SCB_HFSR TB_REG(0xE000ED2Cu)
#define TB_SCB_BFAR TB_REG(0xE000ED38u)

/* ARMv6-M (Cortex-M0/M0+) is a subset of ARMv7-M: no fault status registers (CFSR, HFSR, BFAR
 * are reserved addresses there), and every unaligned word or halfword access faults. A v6-M
 * image that runs on a larger core's machine (QEMU has no M0 machine with enough RAM) turns
 * on that core's unaligned trap, so it faults where a real M0 would. */
#if defined(__ARM_ARCH_6M__)
#define TB_CM_V6M 1
#else
#define TB_CM_V6M 0
#endif

/* counter.c: SysTick's wrap interrupt (the board's vector table names it). */
void tb_cm_systick_handler(void);

/* system.c: the reset handler and the fault handlers (the board's vector table names them). */
void tb_reset_handler(void);
void tb_cm_fault_handler(void);
void tb_cm_default_handler(void);

#endif
