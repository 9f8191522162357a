/* SPDX-License-Identifier: Apache-2.0 */
/* How the firmware ends and reports a fault under QEMU (-semihosting-config enable=on) or
 * with a debugger attached: semihosting, the same calls on Arm and RISC-V (only the trap
 * differs: the arch's tb_arch_semihost). On a board without a debugger the trap faults: such a
 * board links its own two functions instead (docs/porting.md: a reset). */
#include "baremetal.h"

enum { TB_SH_SYS_WRITE0 = 0x04, TB_SH_SYS_GET_CMDLINE = 0x15, TB_SH_SYS_EXIT_EXTENDED = 0x20 };
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

/* The memory image's per-peer heap cap (memory_probes.c): `heap_cap=N` on the command line the
 * host gives QEMU (-semihosting-config ...,arg=heap_cap=N); 0 (no cap) without one. */
uint32_t tb_bm_heap_cap(void) {
    char line[96] = {0};
    uintptr_t block[2] = {(uintptr_t)line, sizeof line - 1};
    if (tb_arch_semihost(TB_SH_SYS_GET_CMDLINE, block) != 0)
        return 0;
    static const char key[] = "heap_cap=";
    for (const char *p = line; *p; p++) {
        const char *k = key, *q = p;
        while (*k && *q == *k)
            k++, q++;
        if (*k)
            continue;
        uint32_t n = 0;
        while (*q >= '0' && *q <= '9')
            n = n * 10u + (uint32_t)(*q++ - '0');
        return n;
    }
    return 0;
}
