/* SPDX-License-Identifier: Apache-2.0 */
/* Architectures without a counter the posix clock knows: CLOCK_MONOTONIC is read directly. */
#ifndef TLSBENCH_COUNTER_NONE_H
#define TLSBENCH_COUNTER_NONE_H
#include <stdint.h>

static const char tb_counter_name[] = "";

static inline uint64_t tb_counter_read(void) { return 0; }

static const char *tb_counter_unsteady(void) { return "no cycle counter known on this architecture"; }

#endif
