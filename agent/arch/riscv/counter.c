/* SPDX-License-Identifier: Apache-2.0 */
/* The counter: minstret, the instructions the hart has retired (64 bits: minstreth:minstret),
 * in the unit of board.h. On a RISC-V part it counts exactly what its name says; under QEMU
 * 7.2 with -icount shift=0 it reads the virtual clock, which advances 1 ns per instruction, so
 * it counts the same instructions, exactly (SysTick on the Cortex-M targets gives 25-50). No
 * interrupt: a 64-bit counter does not wrap in a run.
 *
 * Held in software while the controller channel waits: the instructions between hold and
 * resume (the UART's polling, whose length depends on the host) are subtracted, so every count,
 * absolute ones included, is the same from one run to the next (arch/cortex-m/counter.c holds
 * SysTick itself). */
#include "board.h"
#include "riscv.h"
#include "tlsbench/port.h"

static uint64_t tb_held;       /* retired while held, and before the counter started */
static uint64_t tb_hold_start;

/* High, low, high again: a carry into the high half between the reads shows as a change. */
static uint64_t tb_minstret(void) {
    uint32_t high, low;
    do {
        high = TB_CSR_READ(minstreth);
        low = TB_CSR_READ(minstret);
    } while (high != TB_CSR_READ(minstreth));
    return (uint64_t)high << 32 | low;
}

void tb_bm_counter_start(void) { tb_held = tb_minstret(); }
void tb_bm_counter_hold(void) { tb_hold_start = tb_minstret(); }
void tb_bm_counter_resume(void) { tb_held += tb_minstret() - tb_hold_start; }

uint64_t tb_port_now_ns(void) {
    return (tb_minstret() - tb_held) * TB_BOARD_UNITS_PER_TICK_NUM / TB_BOARD_UNITS_PER_TICK_DEN;
}
