/* SPDX-License-Identifier: Apache-2.0 */
/* How the firmware ends and reports a fault under QEMU (-semihosting-config enable=on) or
 * with a debugger attached: Arm semihosting. On a board without a debugger the bkpt below
 * faults: such a board links its own two functions instead (docs/porting.md: a reset). */
#include "cortex_m.h"

enum { TB_SH_SYS_WRITE0 = 0x04, TB_SH_SYS_EXIT_EXTENDED = 0x20 };
#define TB_SH_ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uint32_t tb_semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* The text lands on QEMU's stderr. */
void tb_cm_report(const char *text) { tb_semihost(TB_SH_SYS_WRITE0, text); }

/* SYS_EXIT_EXTENDED carries the code (QEMU's exit status); plain SYS_EXIT could only say
 * whether it was 0. */
void tb_cm_exit(int code) {
    const uint32_t block[2] = {TB_SH_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    for (;;)
        tb_semihost(TB_SH_SYS_EXIT_EXTENDED, block);
}
