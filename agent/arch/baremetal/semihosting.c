/* SPDX-License-Identifier: Apache-2.0 */
/* How the firmware ends and reports a fault under QEMU (-semihosting-config enable=on) or
 * with a debugger attached: semihosting, the same calls on Arm and RISC-V (only the trap
 * differs: the arch's tb_arch_semihost). On a board without a debugger the trap faults: such a
 * board links its own two functions instead (docs/porting.md: a reset). */
#include "baremetal.h"

enum { TB_SH_SYS_WRITE0 = 0x04, TB_SH_SYS_EXIT_EXTENDED = 0x20 };
#define TB_SH_ADP_STOPPED_APPLICATION_EXIT 0x20026u

/* The text lands on QEMU's stderr. */
void tb_bm_report(const char *text) { tb_arch_semihost(TB_SH_SYS_WRITE0, text); }

/* SYS_EXIT_EXTENDED carries the code (QEMU's exit status); plain SYS_EXIT could only say
 * whether it was 0. */
void tb_bm_exit(int code) {
    const uintptr_t block[2] = {TB_SH_ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)code};
    for (;;)
        tb_arch_semihost(TB_SH_SYS_EXIT_EXTENDED, block);
}
