/* SPDX-License-Identifier: Apache-2.0 */
/* The posix clock's counter on x86-64: the time-stamp counter (posix_clock.c). */
#ifndef TLSBENCH_COUNTER_X86_64_H
#define TLSBENCH_COUNTER_X86_64_H
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

static const char tb_counter_name[] = "TSC";

/* RDTSC without a fence: about 9 ns per trace event here, against 16 ns with LFENCE and
 * 18 ns with RDTSCP. The read may execute a few dozen instructions early or late, a few ns
 * at each end of a span: below the tracer's own calibrated cost, which analysis subtracts. */
static inline uint64_t tb_counter_read(void) { return __rdtsc(); }

/* The kernel's verdict, when there is a kernel to ask: /proc/cpuinfo lists constant_tsc
 * (one rate whatever the CPU frequency) and nonstop_tsc (it keeps counting in deep sleep
 * states). Without /proc the CPU's own word: CPUID 0x80000007 EDX bit 8, "invariant TSC". */
static int tb_counter_cpuinfo_flags(int *constant, int *nonstop) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[4096];
    *constant = *nonstop = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            *constant = strstr(line, " constant_tsc") != NULL;
            *nonstop = strstr(line, " nonstop_tsc") != NULL;
            break;
        }
    fclose(f);
    return 0;
}

static int tb_counter_cpuid_invariant(void) {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8));
}

/* NULL when the counter ticks at one rate in every CPU state, else why it may not. */
static const char *tb_counter_unsteady(void) {
    int constant, nonstop;
    if (tb_counter_cpuinfo_flags(&constant, &nonstop) != 0)
        return tb_counter_cpuid_invariant() ? NULL : "CPUID does not report an invariant TSC";
    if (!constant)
        return "/proc/cpuinfo lacks constant_tsc: the TSC rate follows the CPU frequency";
    if (!nonstop)
        return "/proc/cpuinfo lacks nonstop_tsc: the TSC may stop in deep sleep states";
    return NULL;
}

#endif
