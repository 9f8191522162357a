/* SPDX-License-Identifier: Apache-2.0 */
/* What every bare-metal arch's counter shares (port.h): its names and unit (board.h, from
 * spec/targets.toml), a resolution of one tick, no conversion to check, one thread. The arch's
 * counter.c reads the counter itself (tb_port_now_ns). */
#include "board.h"
#include "baremetal.h"
#include "tlsbench/port.h"

uint64_t tb_port_cpu_ns(void) { return tb_port_now_ns(); } /* one thread, nothing preempts it */
const char *tb_port_clock_name(void) { return TB_BOARD_COUNTER_NAME; }
const char *tb_port_cpu_clock_name(void) { return "the counter (bare metal: one thread)"; }
const char *tb_port_clock_unit(void) { return TB_BOARD_COUNTER_UNIT; }

/* One tick in the unit, rounded up (31.25 instructions per SysTick tick on QEMU's AN547: 32). */
uint64_t tb_port_clock_resolution_ns(void) {
    return (TB_BOARD_UNITS_PER_TICK_NUM + TB_BOARD_UNITS_PER_TICK_DEN - 1) / TB_BOARD_UNITS_PER_TICK_DEN;
}

/* The count is read directly, not converted from another clock: nothing to calibrate or check. */
tb_port_clock_info tb_port_clock_calibration(void) {
    return (tb_port_clock_info){.counter = "", .reference = "", .fallback = ""};
}
double tb_port_clock_check(void) { return 0; }

/* Bare metal: one thread, no scheduler, so no run-queue wait to read. */
int tb_port_runqueue_wait_ns(uint64_t *ns) {
    (void)ns;
    return -1;
}
