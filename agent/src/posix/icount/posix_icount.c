/* SPDX-License-Identifier: Apache-2.0 */
/* Instruction counting on the host (docs/metrics.md): under the tbcount valgrind tool
 * (tools/tbcount/) a client request returns the guest instructions executed so far, exact
 * and the same run after run. With TLSBENCH_COLLECT=instructions the posix clock returns
 * that count instead of ns (posix_clock.c), so every record carries instructions, as a
 * device's records carry its QEMU icount. Natively the request is a few no-op instructions
 * returning 0: the agent then refuses to count (a count of 0 is no measurement). */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/valgrind.h>

#include "../posix_icount.h"

/* tools/tbcount/tb_main.c answers this request; the two must agree. */
#define TB_VG_ICOUNT (VG_USERREQ_TOOL_BASE('T', 'B') + 1)

static char tb_icount_unit[160];

uint64_t tb_posix_icount(void) { return (uint64_t)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, TB_VG_ICOUNT, 0, 0, 0, 0, 0); }

/* The CPU model as the runner presents it (valgrind's CPUID, not the host's): glibc and the
 * TLS libraries pick their code paths by it, so it is part of what a count means. */
static void tb_icount_cpu_model(char *out, size_t len) {
    unsigned int regs[12];
    if (__get_cpuid(0x80000000u, &regs[0], &regs[1], &regs[2], &regs[3]) == 0 || regs[0] < 0x80000004u) {
        snprintf(out, len, "unknown CPU");
        return;
    }
    for (unsigned int leaf = 0; leaf < 3; leaf++)
        __get_cpuid(0x80000002u + leaf, &regs[leaf * 4], &regs[leaf * 4 + 1], &regs[leaf * 4 + 2], &regs[leaf * 4 + 3]);
    char brand[49];
    memcpy(brand, regs, 48);
    brand[48] = '\0';
    char *start = brand;
    while (*start == ' ')
        start++;
    snprintf(out, len, "%s", start);
}

int tb_posix_icount_start(void) {
    if (!RUNNING_ON_VALGRIND || tb_posix_icount() == 0)
        return -1;
    char cpu[64];
    tb_icount_cpu_model(cpu, sizeof cpu);
    snprintf(tb_icount_unit, sizeof tb_icount_unit, "instructions (%s, valgrind tbcount, %s)", TB_ISA_NAME, cpu);
    return 0;
}

const char *tb_posix_icount_unit(void) { return tb_icount_unit; }
