/* SPDX-License-Identifier: Apache-2.0 */
/* The posix clock's counter on AArch64: the generic timer's virtual count (posix_clock.c). */
#ifndef TLSBENCH_COUNTER_AARCH64_H
#define TLSBENCH_COUNTER_AARCH64_H
#include <stdint.h>

static const char tb_counter_name[] = "CNTVCT_EL0";

/* No ISB before the read, for the reason RDTSC goes without a fence on x86 (x86_64.h). */
static inline uint64_t tb_counter_read(void) {
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

/* The architecture fixes the generic timer's rate (CNTFRQ_EL0) in every CPU state; the rate
 * is still measured against CLOCK_MONOTONIC, since firmware may program CNTFRQ wrongly. */
static const char *tb_counter_unsteady(void) { return NULL; }

#endif
