/* SPDX-License-Identifier: Apache-2.0 */
/* The counter: SysTick as a 64-bit count in the board's unit (board.h). SysTick counts the
 * processor clock down from RELOAD; each wrap's interrupt adds one to tb_wraps, so
 * wraps * (RELOAD + 1) + elapsed ticks is the count in ticks, times units per tick (a fraction:
 * QEMU's 32 MHz SysTick of the MPS3 AN547 is 31.25 instructions per tick) in the unit. Every
 * Cortex-M has it (optional on an M0/M0+, present on every part the targets name); a board with
 * DWT CYCCNT may count cycles there instead (docs/porting.md). */
#include "board.h"
#include "cortex_m.h"
#include "tlsbench/port.h"

#define TB_SYST_RELOAD 0x00FFFFFFu
#define TB_SYST_ON 0x7u   /* processor clock, interrupt on wrap, enabled */
#define TB_SYST_HELD 0x6u /* the same, stopped */

static volatile uint32_t tb_wraps;

void tb_cm_systick_handler(void) { tb_wraps++; }

void tb_bm_counter_start(void) {
    TB_SYST_CSR = 0;
    TB_SYST_RVR = TB_SYST_RELOAD;
    TB_SYST_CVR = 0;
    TB_SYST_CSR = TB_SYST_ON;
}

/* The only part of the firmware whose instruction count is not fixed is waiting for the
 * host. The counter is held for the whole of every channel call, waiting or not, and
 * restarts on a fresh tick boundary (as QEMU models it): every count, absolute ones
 * included, is then the same from one run to the next. On a board this also keeps the
 * host's pace out of the counts. */
void tb_bm_counter_hold(void) { TB_SYST_CSR = TB_SYST_HELD; }
void tb_bm_counter_resume(void) { TB_SYST_CSR = TB_SYST_ON; }

/* Interrupts are masked while reading: a wrap between reading tb_wraps and the current
 * value then shows as a pending SysTick interrupt, counted here, and the value is read
 * again. About 15 instructions. */
static uint64_t tb_ticks(void) {
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    uint32_t wraps = tb_wraps;
    uint32_t value = TB_SYST_CVR;
    if (TB_SCB_ICSR & TB_SCB_ICSR_PENDSTSET) {
        wraps++;
        value = TB_SYST_CVR;
    }
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
    return (uint64_t)wraps * (TB_SYST_RELOAD + 1u) + (TB_SYST_RELOAD - value);
}

uint64_t tb_port_now_ns(void) { return tb_ticks() * TB_BOARD_UNITS_PER_TICK_NUM / TB_BOARD_UNITS_PER_TICK_DEN; }
